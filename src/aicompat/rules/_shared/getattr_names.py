"""``getattr(obj, name)`` / ``setattr(obj, name, value)`` with a name the value model knows: a
literal, a constant, the items of a loop around the call. AIC201 judges ``getattr(torch.nn.functional,
"rms_norm")`` as it judges ``torch.nn.functional.rms_norm``, AIC102 ``getattr(torch, "float8_e8m0fnu")``
as ``torch.float8_e8m0fnu``; a ``getattr`` with a default never raises (it is a probe, read by the
guards: model/evaluate.py), and a name the model cannot tell is not judged."""

from __future__ import annotations

from dataclasses import dataclass

import libcst as cst

from ...core.ruleapi import options


@dataclass(frozen=True)
class ByName:
    builtin: str  # "getattr" or "setattr"
    obj: cst.BaseExpression
    owner: str | None  # the qualified name of ``obj`` (a module or library object), or None
    names: list[str] | None  # every name the call may use; None when one is unknown
    name_node: cst.BaseExpression


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
    return ByName(func.value, args[0], fc.resolve(args[0]), names_of(args[1], fc), args[1])


def names_of(expr: cst.BaseExpression, fc) -> list[str] | None:
    """The strings ``expr`` may be, in every world and way the enclosing function runs (a literal,
    a constant, each item of a loop around it); None when one of them is unknown."""
    if isinstance(expr, cst.SimpleString):
        v = expr.evaluated_value
        return [v] if isinstance(v, str) else None
    out: list[str] = []
    for w in fc.ctx.worlds:
        for _call, bindings in fc.scenarios():
            for v in options(fc.value_of(expr, w, bindings)):
                if not isinstance(v, str):
                    return None
                if v not in out:
                    out.append(v)
    return out or None
