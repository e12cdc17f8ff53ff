"""``with helper():`` where ``helper`` is a module-level function of the file that only
hands back another context manager: ``return sdpa_kernel(...)``, or a
``@contextlib.contextmanager`` generator whose body is ``with sdpa_kernel(...): yield``.
The engine asks the rules about that inner call as if it were written at the ``with``.
Only these two shapes are followed (one level; a call that reads the helper's parameters is not)."""

from __future__ import annotations

import libcst as cst

from ..syntax.walk import walk

_CONTEXTMANAGER = ("contextlib.contextmanager", "contextmanager")


def inner_context_call(fn: cst.FunctionDef, resolve) -> cst.Call | None:
    """The context-manager call ``fn`` stands for, or None. ``resolve`` names a decorator.
    A call that reads one of ``fn``'s parameters is not followed (its value is the caller's)."""
    call = _inner(fn, resolve)
    params = {p.name.value for p in (*fn.params.posonly_params, *fn.params.params, *fn.params.kwonly_params)}
    if call is None or (params and _names(call) & params):
        return None
    return call


def _names(node) -> set[str]:
    found: set[str] = set()

    class V(cst.CSTVisitor):
        def visit_Name(self, n: cst.Name) -> None:
            found.add(n.value)
    walk(node, V())
    return found


def _inner(fn: cst.FunctionDef, resolve) -> cst.Call | None:
    body = [s for s in fn.body.body if not _docstring(s)] if isinstance(fn.body, cst.IndentedBlock) else []
    if len(body) != 1:
        return None
    stmt = body[0]
    decorated = any((resolve(d.decorator) or "") in _CONTEXTMANAGER or _named(d.decorator, "contextmanager")
                    for d in fn.decorators)
    if decorated:
        # @contextmanager def f(): with cm(...): yield
        if isinstance(stmt, cst.With) and len(stmt.items) == 1 and isinstance(stmt.items[0].item, cst.Call) \
                and _only_yield(stmt.body):
            return stmt.items[0].item
        return None
    if not fn.decorators and isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1:
        ret = stmt.body[0]
        if isinstance(ret, cst.Return) and isinstance(ret.value, cst.Call):
            return ret.value
    return None


def _named(node, name: str) -> bool:
    return (isinstance(node, cst.Name) and node.value == name) or \
        (isinstance(node, cst.Attribute) and node.attr.value == name)


def _docstring(stmt) -> bool:
    return isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1 and \
        isinstance(stmt.body[0], cst.Expr) and isinstance(stmt.body[0].value, cst.SimpleString)


def _only_yield(block) -> bool:
    stmts = block.body if isinstance(block, cst.IndentedBlock) else [block]
    return len(stmts) == 1 and isinstance(stmts[0], cst.SimpleStatementLine) and len(stmts[0].body) == 1 and \
        isinstance(stmts[0].body[0], cst.Expr) and isinstance(stmts[0].body[0].value, cst.Yield)
