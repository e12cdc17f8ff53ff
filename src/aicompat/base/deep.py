"""Legal code nested deeper than Python's default recursion limit allows.

An ``elif`` chain of a few thousand branches is legal, but it is one ``If``
inside the ``orelse`` of the one before: CPython's AST constructor and LibCST's
code generation recurse once per branch, and both stop at the recursion limit
(1,000 frames by default; the AST constructor gives up near 1,000 branches on
3.11). The analysis's own walks follow such chains with explicit stacks; these
two are not ours, so they run under a higher limit, and only where the depth
is the source's:

- ``deep_recursion()``: the recursion limit raised to DEEP_LIMIT for one call.
  The depth it allows is bounded by the parser's: CPython's refuses code nested
  past about 6,000 levels (SyntaxError "too many nested ...", MemoryError), and
  every tree judged here has passed it.
- ``grow_stack()``: Python frames cost no C stack (3.11+), but native code
  does: LibCST's parser took 5 MB of stack on a 5,000-branch chain, CPython's
  AST constructor about 80 bytes a level, a frame entered from C (a generator)
  about 500. Once per run the soft RLIMIT_STACK is raised to STACK_BYTES where
  the hard limit allows, so the main thread's stack, which Linux grows on demand
  up to the soft limit, has room for the deepest tree the parser accepts
  instead of a crash at the usual 8 MB.
"""

from __future__ import annotations

import sys
from contextlib import contextmanager

DEEP_LIMIT = 10_000
STACK_BYTES = 64 << 20  # LibCST's native parser took 5 MB of stack on a 5,000-branch chain


@contextmanager
def deep_recursion():
    before = sys.getrecursionlimit()
    if before < DEEP_LIMIT:
        sys.setrecursionlimit(DEEP_LIMIT)
    try:
        yield
    finally:
        sys.setrecursionlimit(before)


def grow_stack() -> None:
    """Raise this process's soft stack limit to STACK_BYTES (never lower it, never past
    the hard limit); POSIX only, elsewhere nothing."""
    try:
        import resource

        soft, hard = resource.getrlimit(resource.RLIMIT_STACK)
        if soft == resource.RLIM_INFINITY or soft >= STACK_BYTES:
            return
        want = STACK_BYTES if hard == resource.RLIM_INFINITY else min(STACK_BYTES, hard)
        if want > soft:
            resource.setrlimit(resource.RLIMIT_STACK, (want, hard))
    except (ImportError, OSError, ValueError):
        pass


# Expressions nested deeper than this stay refused after the retry: CPython's parser
# does not bound left-nested chains (``a[0][0]...``, ``f()()...``), and LibCST took
# gigabytes and minutes, or crashed, on them. Below it is what CPython's default
# limit accepted before (its AST constructor counts about three per level).
MAX_EXPR_DEPTH = 2_000


def cpython_ast(source, filename: str = "<unknown>", flags: int = 0):
    """``compile(source, filename, "exec", PyCF_ONLY_AST | flags)``. A RecursionError from
    the AST constructor is retried once under deep_recursion(); the tree it then gives
    is kept only where its expressions nest at most MAX_EXPR_DEPTH levels (the depth
    was in its statements: an ``elif`` chain), else the RecursionError stands."""
    import ast

    def go():
        return compile(source, filename, "exec", ast.PyCF_ONLY_AST | flags, dont_inherit=True)

    try:
        return go()
    except RecursionError as exc:
        if sys.getrecursionlimit() >= DEEP_LIMIT:
            raise
        first = exc
    with deep_recursion():
        tree = go()
    if _expr_depth(tree) > MAX_EXPR_DEPTH:
        raise first
    return tree


def _expr_depth(tree) -> int:
    """How deep expressions nest in ``tree`` (a loop: the tree is deep)."""
    import ast

    deepest = 0
    todo = [(tree, 0)]
    while todo:
        node, depth = todo.pop()
        if isinstance(node, ast.expr):
            depth += 1
            deepest = max(deepest, depth)
        todo.extend((child, depth) for child in ast.iter_child_nodes(node))
    return deepest
