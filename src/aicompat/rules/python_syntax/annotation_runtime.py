"""Annotations that run at definition time, for AIC401 python-syntax (facts:
version_matrix/syntax.toml [runtime.*] and [annotations.deferred]).

A def's parameter and return annotations, and a module's or class body's
``x: T``, are evaluated when the definition runs (a local variable's never,
PEP 526), unless the module starts with ``from __future__ import annotations``
(PEP 563) or the target defers them itself (PEP 649, 3.14). There,
``list[int]`` fails on 3.8 and ``int | None`` on 3.9: a runtime error at
import, so guards count (a ``def`` under ``if sys.version_info >= (3, 10):``
or ``TYPE_CHECKING`` never runs on the older Python), unlike syntax.
"""

from __future__ import annotations

import re
from collections.abc import Callable

import libcst as cst

Version = tuple[int, int]

# ``from __future__ import annotations`` as the prefilter sees it: at a line's start.
_FUTURE_RX = re.compile(rb"(?m)^from[ \t]+__future__[ \t]+import[^\n]*\bannotations\b")


def evaluated(node: cst.Annotation, fc) -> bool:
    """Does this annotation run when its definition does (no postponing, not a local's)?"""
    if fc.postponed_annotations:
        return False
    stmt = fc.stmt_stack[-1] if fc.stmt_stack else None
    if isinstance(stmt, cst.AnnAssign) and stmt.annotation is node:
        owner = fc.def_stack[-1] if fc.def_stack else None
        return not isinstance(owner, cst.FunctionDef)  # module and class bodies run theirs
    return isinstance(stmt, cst.FunctionDef)  # parameters and return


def first_failure(expr: cst.BaseExpression, generic: dict[str, str] | None, union: bool,
                  qualname: Callable[[cst.BaseExpression], str | None]):
    """The first sub-expression (outermost first) that fails on the target:
    ("generic_alias", node, qualified name) or ("union_operator", node, None). String
    annotations never run; neither does what sits inside ``Literal[...]``."""
    stack = [expr]
    while stack:
        e = stack.pop()
        if isinstance(e, cst.BinaryOperation) and isinstance(e.operator, cst.BitOr) and union:
            return "union_operator", e, None
        if isinstance(e, cst.Subscript):
            q = qualname(e.value) if generic is not None else None
            if q is not None and generic is not None and q in generic:
                return "generic_alias", e, q
            if q is not None and q.rsplit(".", 1)[-1] == "Literal":
                continue
            for el in reversed(e.slice):
                if isinstance(el.slice, cst.Index):
                    stack.append(el.slice.value)
            stack.append(e.value)
        elif isinstance(e, cst.BinaryOperation):
            stack.extend((e.right, e.left))
        elif isinstance(e, (cst.Tuple, cst.List)):
            stack.extend(el.value for el in reversed(e.elements))
    return None


def scan(generic_tails: list[str], union: bool) -> Callable[[bytes], bool]:
    """The prefilter's test (a superset): no ``from __future__ import annotations``
    and a PEP 585 name before ``[`` (or imported under another name), or a ``|``."""
    rxs = []
    if generic_tails:
        alt = b"|".join(re.escape(t.encode()) for t in sorted(set(generic_tails), key=lambda t: (-len(t), t)))
        rxs.append(re.compile(rb"(?<![\w\x80-\xff])(?:" + alt + rb")(?:[ \t]*\[|[ \t]+as[ \t])"))

    def check(data: bytes) -> bool:
        hit = (union and b"|" in data) or any(rx.search(data) for rx in rxs)
        return hit and _FUTURE_RX.search(data) is None

    return check
