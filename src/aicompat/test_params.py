"""``@pytest.mark.parametrize`` as scenarios: a test function runs once per row
of its parameter table, so the value model binds its parameters to each row in
turn (as it binds a helper's parameters to each call site). A rule that relates
several values (the recipe and the ``pytest.skip`` above it) then judges each
row on its own instead of mixing them."""

from __future__ import annotations

import libcst as cst

from .values import UNKNOWN, Seq

PARAMETRIZE = frozenset({"pytest.mark.parametrize"})
PARAM = frozenset({"pytest.param"})
MAX_ROWS = 64  # past this many combinations the parameters stay unknown


def rows(fn: cst.FunctionDef, fc, world) -> list[dict] | None:
    """The parameter values of each run of ``fn``, or None when it is not
    parametrized (or the table is unknown or too large)."""
    combos: list[dict] = [{}]
    found = False
    loc = (fc.model.parent_of(fn), fn)
    for dec in fn.decorators:
        d = dec.decorator
        if not isinstance(d, cst.Call) or fc.resolve(d.func) not in PARAMETRIZE:
            continue
        found = True
        table = _table(d, fc, world, loc)
        if table is None:
            return None
        combos = [{**c, **row} for c in combos for row in table]
        if len(combos) > MAX_ROWS:
            return None
    return combos if found else None


def _arg(call: cst.Call, i: int, name: str):
    for a in call.args:
        if a.keyword is not None and a.keyword.value == name:
            return a.value
    pos = [a.value for a in call.args if a.keyword is None and not a.star]
    return pos[i] if i < len(pos) else None


def _table(call: cst.Call, fc, world, loc) -> list[dict] | None:
    names_node, values_node = _arg(call, 0, "argnames"), _arg(call, 1, "argvalues")
    if names_node is None or values_node is None:
        return None
    ev = fc.evaluator(world, loc=loc)
    names = ev.eval(names_node)
    if isinstance(names, str):
        names = [n.strip() for n in names.split(",") if n.strip()]
    elif isinstance(names, (tuple, Seq)):
        names = list(names.items if isinstance(names, Seq) else names)
    if not names or not all(isinstance(n, str) for n in names):
        return None
    if isinstance(values_node, (cst.List, cst.Tuple)):
        items = [el.value for el in values_node.elements if not isinstance(el, cst.StarredElement)]
        if len(items) != len(values_node.elements):
            return None
        raw = [_row_nodes(it, fc) for it in items]
        rows = [[ev.eval(x) for x in r] if isinstance(r, list) else ev.eval(r) for r in raw]
    else:
        v = ev.eval(values_node)
        rows = list(v.items) if isinstance(v, Seq) and v.exact else list(v) if isinstance(v, tuple) else None
        if rows is None:
            return None
    out = []
    for r in rows:
        if len(names) == 1:
            vals = r if isinstance(r, list) and len(r) == 1 else [r]
        else:
            vals = r if isinstance(r, list) else list(r.items) if isinstance(r, Seq) and r.exact else \
                list(r) if isinstance(r, tuple) else None
            if vals is None or len(vals) != len(names):
                vals = [UNKNOWN] * len(names)
        out.append(dict(zip(names, vals)))
    return out


def _row_nodes(node, fc):
    """``pytest.param(a, b, marks=...)`` -> [a, b]; a tuple literal -> its items; else the node."""
    if isinstance(node, cst.Call) and fc.resolve(node.func) in PARAM:
        return [a.value for a in node.args if a.keyword is None and not a.star]
    if isinstance(node, cst.Tuple):
        return [el.value for el in node.elements]
    return node
