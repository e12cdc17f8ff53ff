"""``with helper():`` where ``helper`` is a module-level function of the file that only
hands back another context manager: ``return sdpa_kernel(...)``, or a
``@contextlib.contextmanager`` generator whose body is ``with sdpa_kernel(...): yield``.
The engine asks the rules about that inner call as if it were written at the ``with``.
Only these two shapes are followed (one level, no arguments passed through)."""

from __future__ import annotations

import libcst as cst

_CONTEXTMANAGER = ("contextlib.contextmanager", "contextmanager")


def inner_context_call(fn: cst.FunctionDef, resolve) -> cst.Call | None:
    """The context-manager call ``fn`` stands for, or None. ``resolve`` names a decorator."""
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
