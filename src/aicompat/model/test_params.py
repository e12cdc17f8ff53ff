"""``@pytest.mark.parametrize`` as scenarios: a test function runs once per row
of its parameter table, so the value model binds its parameters to each row in
turn (as it binds a helper's parameters to each call site). A rule that relates
several values (the recipe and the ``pytest.skip`` above it) then judges each
row on its own instead of mixing them. Which decorator holds a table and which call
is one row with marks of its own are the library table's (``fc.libs.parametrize``,
``fc.libs.param``: libmodels/testing.py)."""

from __future__ import annotations

import libcst as cst

from ..values import UNKNOWN, Seq
from .evaluate import Deferred

ROW_WORLDS = "\0worlds"  # a row's key (no parameter name) for the worlds its own skip marks leave
MAX_ROWS = 64  # past this many combinations the parameters stay unknown


def rows(fn: cst.FunctionDef, fc, world) -> list[dict] | None:
    """The parameter values of each run of ``fn``, or None when it is not
    parametrized (or no table is known). When the tables' product is over
    MAX_ROWS, the tables with per-row skip marks are kept first, then the
    smallest; the parameters of the tables left out stay unknown."""
    tables = []
    found = False
    loc = (fc.model.parent_of(fn), fn)
    parametrize = fc.libs.parametrize
    for dec in fn.decorators:
        d = dec.decorator
        if not isinstance(d, cst.Call) or fc.resolve(d.func) not in parametrize:
            continue
        found = True
        table = _table(d, fc, world, loc)
        if table:
            tables.append(table)
    if not found or not tables:
        return None
    tables.sort(key=lambda t: (not any(ROW_WORLDS in row for row in t), len(t)))
    combos: list[dict] = [{}]
    for table in tables:
        if len(combos) * len(table) > MAX_ROWS:
            continue
        combos = [_merge(c, row) for c in combos for row in table]
    return combos


def _merge(a: dict, b: dict) -> dict:
    out = {**a, **b}
    if ROW_WORLDS in a and ROW_WORLDS in b:
        out[ROW_WORLDS] = a[ROW_WORLDS] & b[ROW_WORLDS]
    return out


def _arg(call: cst.Call, i: int, name: str):
    for a in call.args:
        if a.keyword is not None and a.keyword.value == name:
            return a.value
    pos = [a.value for a in call.args if a.keyword is None and not a.star]
    return pos[i] if i < len(pos) else None


def _table(call: cst.Call, fc, world, loc) -> list[dict] | None:
    """The table's rows as {name: Deferred}: each value is read in the world asking
    (an availability flag in a row differs between GPUs)."""
    names_node, values_node = _arg(call, 0, "argnames"), _arg(call, 1, "argvalues")
    if names_node is None or values_node is None:
        return None
    ev = fc.evaluator(world, loc=loc)
    names = ev.eval(names_node)
    if isinstance(names, str):
        names = [n.strip() for n in names.split(",") if n.strip()]
    elif isinstance(names, (tuple, Seq)):
        names = list(names.items if isinstance(names, Seq) else names)
    else:
        return None  # unknown, or a string with unknown parts (``", ".join(f.name for f in fields(Case))``)
    if not names or not all(isinstance(n, str) for n in names):
        return None
    out = []
    if isinstance(values_node, cst.Name):  # a module-level table: ``_RECIPES = [pytest.param(...), ...]``
        bound = fc.index.bindings.get(values_node.value)
        if isinstance(bound, (cst.List, cst.Tuple)):
            values_node = bound
    if isinstance(values_node, (cst.List, cst.Tuple)):
        items = [el.value for el in values_node.elements if not isinstance(el, cst.StarredElement)]
        if len(items) != len(values_node.elements):
            return None
        for it in items:
            row = _row_nodes(it, fc)
            live = _row_worlds(it, fc)
            if len(names) == 1:
                cells: list[Deferred] | None = \
                    [Deferred(row[0] if isinstance(row, list) and len(row) == 1 else it, loc)]
            elif isinstance(row, list):
                cells = [Deferred(x, loc) for x in row] if len(row) == len(names) else None
            else:
                cells = [Deferred(row, loc, (i,)) for i in range(len(names))]
            out.append(dict(zip(names, cells)) if cells else {n: UNKNOWN for n in names})
            if live is not None:
                out[-1][ROW_WORLDS] = live
        return out
    # A table kept in a variable or built by an expression: its cells are read per world,
    # and so is its length (``[None] + (["mxfp8"] if mxfp8_available else [])`` has the
    # MXFP8 row only on the GPUs that have it): row r runs where the table has r+1 rows.
    n = _length(ev.eval(values_node))
    if n is None:
        return None
    lengths = {}
    for w in fc.ctx.worlds:
        if w != world:
            lengths[w] = _length(fc.evaluator(w, loc=loc).eval(values_node))
    lengths[world] = n
    longest = max(m for m in lengths.values() if m is not None)
    for r in range(longest):
        if len(names) == 1:
            out.append({names[0]: Deferred(values_node, loc, (r,))})
        else:
            out.append({name: Deferred(values_node, loc, (r, i)) for i, name in enumerate(names)})
        live = frozenset(w for w, m in lengths.items() if m is None or r < m)
        if len(live) != len(lengths):
            out[-1][ROW_WORLDS] = live
    return out


def _length(v) -> int | None:
    return len(v.items) if isinstance(v, Seq) and v.exact else len(v) if isinstance(v, tuple) else None


def _row_worlds(node, fc) -> frozenset | None:
    """``pytest.param(..., marks=pytest.mark.skipif(not mxfp8_available, ...))``: the
    worlds that row runs in (None: no skip mark of its own)."""
    if not (isinstance(node, cst.Call) and fc.resolve(node.func) in fc.libs.param):
        return None
    marks = next((a.value for a in node.args if a.keyword is not None and a.keyword.value == "marks"), None)
    if marks is None:
        return None
    from .guard_forms import narrow_by_marks

    worlds = narrow_by_marks([marks], fc, fc.ctx.worlds)
    return worlds if worlds != fc.ctx.worlds else None


def _row_nodes(node, fc):
    """``pytest.param(a, b, marks=...)`` -> [a, b]; a tuple literal -> its items; else the node."""
    if isinstance(node, cst.Call) and fc.resolve(node.func) in fc.libs.param:
        return [a.value for a in node.args if a.keyword is None and not a.star]
    if isinstance(node, cst.Tuple):
        return [el.value for el in node.elements]
    return node
