"""``getattr(obj, name)`` / ``setattr(obj, name, value)`` with a name the value model knows: a
literal, a constant, the items of a loop around the call. AIC201 judges ``getattr(torch.nn.functional,
"rms_norm")`` as it judges ``torch.nn.functional.rms_norm``, AIC102 ``getattr(torch, "float8_e8m0fnu")``
as ``torch.float8_e8m0fnu``; a ``getattr`` with a default never raises (it is a probe, read by the
guards: model/evaluate.py), and a name the model cannot tell is not judged."""

from __future__ import annotations

from functools import cached_property

import libcst as cst

from ...core.ruleapi import options


class ByName:
    """The call's parts; ``names`` is worked out when first read (it asks where the call runs,
    in every world and way the function runs): a caller that needs no names (the object is
    unknown) never pays for them."""

    def __init__(self, builtin: str, obj: cst.BaseExpression, owner: str | None,
                 name_node: cst.BaseExpression, fc) -> None:
        self.builtin = builtin  # "getattr" or "setattr"
        self.obj = obj
        self.owner = owner  # the qualified name of ``obj`` (a module or library object), or None
        self.name_node = name_node
        self._fc = fc

    @cached_property
    def names(self) -> dict[str, frozenset] | None:
        """Each name the call may use, with the worlds it reaches the call in (None: one unknown)."""
        return names_where(self.name_node, self._fc)


def by_name(site, fc) -> ByName | None:
    """The call as a ``getattr(obj, name)`` (two arguments: a default never raises) or
    ``setattr(obj, name, value)`` of the builtins, else None."""
    func = site.node.func
    if not isinstance(func, cst.Name) or func.value not in ("getattr", "setattr") or fc.lookup(func.value) is not None:
        return None
    if any(a.star or a.keyword is not None for a in site.node.args):
        return None
    args = [a.value for a in site.node.args]
    if len(args) != (2 if func.value == "getattr" else 3):
        return None
    return ByName(func.value, args[0], fc.resolve(args[0]), args[1], fc)


def names_of(expr: cst.BaseExpression, fc) -> list[str] | None:
    """The strings ``expr`` may be, in every world and way the enclosing function runs (a literal,
    a constant, each item of a loop around it); None when one of them is unknown."""
    got = names_where(expr, fc)
    return list(got) if got is not None else None


def names_where(expr: cst.BaseExpression, fc) -> dict[str, frozenset] | None:
    """Each string ``expr`` may be, with the worlds in which the statement runs with it: a loop
    item under ``if hasattr(config, name):`` reaches the call only in the releases that have it.
    None when one of the strings is unknown."""
    worlds = fc.ctx.worlds
    if isinstance(expr, cst.SimpleString):
        v = expr.evaluated_value
        return {v: frozenset(worlds)} if isinstance(v, str) else None
    out: dict[str, set] = {}
    for _call, bindings in fc.scenarios():
        for w in worlds:
            vals = options(fc.value_of(expr, w, bindings))
            if any(not isinstance(v, str) for v in vals):
                return None
            if not fc.reachable(w, bindings):
                continue
            for v in vals:
                out.setdefault(v, set()).add(w)
    return {k: frozenset(v) for k, v in out.items()} or None
