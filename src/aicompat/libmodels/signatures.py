"""``inspect.signature(f).parameters`` in one world, for guards such as
``if "set_priority" in inspect.signature(sdpa_kernel).parameters:``.

``inspect.signature(f)`` of a library function is a ``Signature`` value that
remembers ``f``'s qualified name; ``.parameters`` keeps it; ``"p" in ...`` asks
``attr_exists("<f>(p)", world)``, which the linter answers from the release's
API table (linter.api_param: True iff that release's one signature of ``f``
names ``p``). Anything else -- a function the table does not know, several
overloads, a name it cannot resolve -- stays unknown.
"""

from __future__ import annotations

from typing import Any, Callable

from ..values import UNKNOWN, LibObject

_SIGNATURE_CALLS = frozenset({"inspect.signature"})
_SIGNATURE = "inspect.Signature"
_PARAMETERS = "inspect.Signature.parameters"


def call_value(q: str, pos: list, kw: dict, resolve: Callable) -> Any:
    """``inspect.signature(f)``: a Signature of ``f``'s qualified name; NotImplemented
    when ``q`` is not ``inspect.signature`` or ``f`` does not resolve."""
    if q not in _SIGNATURE_CALLS or len(pos) != 1 or kw:
        return NotImplemented
    of = resolve(pos[0])
    return LibObject(_SIGNATURE, (("of", of),)) if of else NotImplemented


def attribute_value(base, attr: str) -> Any:
    """``<Signature>.parameters``: the mapping of ``f``'s parameters; NotImplemented otherwise."""
    if isinstance(base, LibObject) and base.qualname == _SIGNATURE and attr == "parameters":
        return LibObject(_PARAMETERS, base.kwargs)
    return NotImplemented


def contains(left, right, world, attr_exists: Callable[[str, Any], Any]) -> Any:
    """``"p" in <parameters of f>`` in ``world``: True, False or UNKNOWN; NotImplemented
    when ``right`` is no parameters mapping."""
    if not (isinstance(right, LibObject) and right.qualname == _PARAMETERS):
        return NotImplemented
    if not isinstance(left, str) or not left.isidentifier():
        return UNKNOWN
    got = attr_exists(f"{right.kw('of')}({left})", world)
    return got if isinstance(got, bool) else UNKNOWN
