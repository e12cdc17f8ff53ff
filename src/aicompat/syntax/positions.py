"""Positions of the nodes a file's findings sit on, without a second pass over the tree.

LibCST computes positions by generating the code of the whole module. The
statements holding findings are few, so only they are generated here, each
from the state the whole-module generation would reach at its start: its first
line (from CPython's ``ast``, which the C parser builds far faster than LibCST
parses) and the indentation of the blocks around it. Each generated statement
is checked against the source text at that line; anything that does not match
or cannot be located is left to ``PositionProvider`` on the whole module, so
the positions are always LibCST's own.
"""

from __future__ import annotations

import ast
import re
from typing import TYPE_CHECKING, Literal, cast

import libcst as cst
from libcst.metadata import MetadataWrapper, PositionProvider
from libcst.metadata.position_provider import PositionProvidingCodegenState

from ..base.deep import cpython_ast, deep_recursion

if TYPE_CHECKING:
    from libcst.metadata import BaseMetadataProvider, CodeRange

_NEWLINE = re.compile(r"\r\n?|\n")


class _Sink:
    """Stands in for the provider: codegen records each node's range in ``_computed``."""

    def __init__(self) -> None:
        self._computed: dict = {}


class Positions:
    """``get(node)``: the node's CodeRange; statements are generated on demand, the
    whole module only when a node lies outside every located statement."""

    def __init__(self, module: cst.Module, text: str, paths: dict[int, tuple]) -> None:
        self.module = module
        self.text = text
        self.paths = paths  # id(node) -> enclosing statements, outermost first
        self._computed: dict = {}
        self._done: set[int] = set()
        self._full = None
        self._tree: ast.Module | Literal[False] | None = None  # False: ``ast`` could not parse it
        self._starts: list[int] | None = None

    def get(self, node):
        try:
            return self._get(node)
        except (RecursionError, KeyError):
            # LibCST's code generation recurses per level of nesting; past the recursion limit
            # its position recorder raises a KeyError whose message is the repr of the whole
            # subtree (gigabytes for a 2,000-branch elif chain): report the depth instead.
            raise RecursionError("nesting too deep to place the finding") from None

    def _get(self, node):
        pos = self._computed.get(node)
        if pos is not None:
            return pos
        if self._full is None:
            path = self.paths.get(id(node))
            if path and self._generate(path):
                pos = self._computed.get(node)
                if pos is not None:
                    return pos
        return self._whole().get(node)

    def _whole(self):
        if self._full is None:
            with deep_recursion():  # LibCST's generation recurses once per level of nesting
                self._full = MetadataWrapper(self.module, unsafe_skip_copy=True).resolve(PositionProvider)
        return self._full

    # -- one statement -----------------------------------------------------------
    def _generate(self, path: tuple) -> bool:
        found = self._locate(path)
        if found is None:
            return False
        stmt, line, indents, elif_ = found
        if id(stmt) in self._done:
            return True
        sink = _Sink()
        state = PositionProvidingCodegenState(default_indent=self.module.default_indent,
                                              default_newline=self.module.default_newline,
                                              provider=cast("BaseMetadataProvider[CodeRange]", sink))
        state.line, state.column, state.indent_tokens = line, 0, list(indents)
        gen = stmt
        if isinstance(stmt, cst.If) and isinstance(stmt.orelse, cst.If):
            # Its ``elif``s are statements of their own (located on their own lines);
            # generating them here would recurse once per branch of the chain. The copy
            # shares every child, so their positions are the original's; the copy's own
            # range (it lacks the chain) is dropped below.
            gen = stmt.with_changes(orelse=None)
        if elif_:
            gen._codegen(state, is_elif=True)
        else:
            gen._codegen(state)
        code = "".join(state.tokens)
        starts = self._line_starts()
        if line - 1 >= len(starts) or not self.text.startswith(code, starts[line - 1]):
            return False  # not where the module's generation would put it: leave it to the provider
        if gen is not stmt:
            sink._computed.pop(gen, None)
        self._computed.update(sink._computed)
        self._done.add(id(stmt))
        return True

    def _line_starts(self) -> list[int]:
        if self._starts is None:
            self._starts = [0] + [m.end() for m in _NEWLINE.finditer(self.text)]
        return self._starts

    def _locate(self, path: tuple):
        """The innermost statement of ``path`` reachable through indented blocks, its first
        line (leading blank and comment lines included) and the indentation around it."""
        if self._tree is None:
            try:
                self._tree = cast(ast.Module, cpython_ast(self.text))
            except (SyntaxError, ValueError, RecursionError, MemoryError):
                self._tree = False
        if self._tree is False:
            return None
        suites = [(self.module.body, self._tree.body, ())]
        best = None
        chain: tuple | None = None  # (If, its ast If, indents): the statement whose ``elif`` may come next
        for want in path:
            nxt = None
            if chain is not None and chain[0].orelse is want and len(chain[1].orelse) == 1 \
                    and isinstance(chain[1].orelse[0], ast.If):
                nxt = (want, chain[1].orelse[0], chain[2], True)  # an ``elif``: same indentation
            for body, abody, indents in suites if nxt is None else ():
                got = _pair(body, abody, want)
                if got is not None:
                    nxt = (*got, indents, False)
                    break
            if nxt is None:
                break
            stmt, a, indents, elif_ = nxt
            first = min([a.lineno] + [d.lineno for d in getattr(a, "decorator_list", ())])
            best = (stmt, first - len(stmt.leading_lines), indents, elif_)
            if stmt is not want:  # a small statement: its line is as deep as it goes
                break
            chain = (stmt, a, indents) if isinstance(stmt, cst.If) else None
            suites = list(_suites(stmt, a, indents, self.module.default_indent))
        return best


def _pair(body, abody, want):
    """The statement of ``body`` that is or holds ``want`` (a small statement sits in
    a line), and the ``ast`` statement its first line starts with."""
    i = 0
    for s in body:
        line = isinstance(s, cst.SimpleStatementLine)
        if s is want or (line and any(small is want for small in s.body)):
            return (s, abody[i]) if i < len(abody) else None
        i += len(s.body) if line else 1
    return None


def _suites(stmt, a, indents, default_indent):
    """(LibCST statements, ast statements, indentation) of each indented block of a
    compound statement; ``elif`` and one-line suites are not entered."""
    def block(suite, astmts):
        if isinstance(suite, cst.IndentedBlock):
            ind = suite.indent if suite.indent is not None else default_indent
            yield suite.body, astmts, indents + (ind,)

    if isinstance(stmt, (cst.FunctionDef, cst.ClassDef, cst.With)):
        yield from block(stmt.body, a.body)
    elif isinstance(stmt, (cst.If, cst.For, cst.While)):
        yield from block(stmt.body, a.body)
        if isinstance(stmt.orelse, cst.Else):
            yield from block(stmt.orelse.body, a.orelse)
    elif isinstance(stmt, cst.Try) or type(stmt).__name__ == "TryStar":
        yield from block(stmt.body, a.body)
        if len(stmt.handlers) == len(a.handlers):
            for h, ah in zip(stmt.handlers, a.handlers):
                yield from block(h.body, ah.body)
        if stmt.orelse is not None:
            yield from block(stmt.orelse.body, a.orelse)
        if stmt.finalbody is not None:
            yield from block(stmt.finalbody.body, a.finalbody)
    elif isinstance(stmt, cst.Match) and len(stmt.cases) == len(a.cases):
        for c, ac in zip(stmt.cases, a.cases):
            yield from block(c.body, ac.body)
