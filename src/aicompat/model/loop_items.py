"""``for`` loops as scenarios: a loop body runs once per item of its iterable, so
where the items are known (``for head_dim in (128, 512):``, a list filled by
``.append``), a rule judges the body once per item, as it judges a
parametrized test once per row. Without this the loop variable is the join of
the items, and a rule that needs an exact head dim stays silent although one
item fails on every run."""

from __future__ import annotations

import re
from dataclasses import replace
from itertools import chain

import libcst as cst

from .containers import as_items
from .evaluate import Binding
from .structure import _suites

MAX_ITEMS = 16  # a longer iterable stays joined
MAX_LOOPS = 2  # the innermost loops around the statement that are expanded


def loops_around(owner, stmt) -> list[cst.For]:
    """The ``for`` statements of ``owner``'s own body (not of nested defs) that hold
    ``stmt``, outermost first."""
    body = owner.body.body if isinstance(owner, cst.FunctionDef) and isinstance(owner.body, cst.IndentedBlock) \
        else owner.body if isinstance(owner, cst.Module) else ()
    path: list = []
    return [s for s in path if isinstance(s, cst.For)] if _find(body, stmt, path) else []


def _find(stmts, stmt, path: list) -> bool:
    # An explicit stack (an ``elif`` chain nests one If per branch): each frame is a
    # compound statement of ``path`` and the statements of its suites still to look at.
    frames: list = [(None, iter(stmts))]
    while frames:
        owner, todo = frames[-1]
        s = next(todo, None)
        if s is None:
            frames.pop()
            if owner is not None:
                path.pop()
            continue
        if s is stmt or isinstance(s, cst.SimpleStatementLine) and any(small is stmt for small in s.body):
            return True
        if isinstance(s, cst.BaseCompoundStatement) and not isinstance(s, (cst.FunctionDef, cst.ClassDef)):
            path.append(s)
            frames.append((s, chain.from_iterable(_suites(s))))
    return False


def expand(fc, owner, loops: list[cst.For], base: list, world, limit: int) -> list:
    """``base`` scenarios (call, bindings) times the known items of each loop in
    ``loops``; a loop whose items are unknown, or too many, is left joined. The
    items ride on the owner scope's Binding (``Binding.items``: id(loop) -> item)."""
    scope = fc.model.scope(owner)
    out = base
    for loop in loops[-MAX_LOOPS:]:
        if not isinstance(loop.target, (cst.Name, cst.Tuple, cst.List)):
            continue  # ``for k, v in d.items():`` unpacks each item (the evaluator's "iter" binding)
        grown = []
        for call, bindings in out:
            ev = fc.evaluator(world, loc=(owner, loop), bindings=bindings)
            items = as_items(ev.eval(loop.iter))
            if items is None or not items or len(items) > MAX_ITEMS:
                grown.append((call, bindings))
                continue
            b = (bindings or {}).get(id(scope)) or Binding(None, None, {})
            for item in items:
                nb = replace(b, items={**(b.items or {}), id(loop): item})
                grown.append((call, {**(bindings or {}), id(scope): nb}))
        if len(grown) > limit:
            break
        out = grown
    return out


def only_called(fn: cst.FunctionDef, text: str) -> bool:
    """Is every mention of ``fn``'s name in the file a call or its ``def``? (A function
    kept in a dict, passed to ``map`` or named in a string may run in other ways.)"""
    name = re.escape(fn.name.value)
    mentions = len(re.findall(r"(?<!\w)" + name + r"(?!\w)", text))
    calls = len(re.findall(r"(?<!\w)" + name + r"\s*\(", text))
    return mentions == calls
