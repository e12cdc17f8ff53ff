"""What the value model knows about one file's structure, built on demand.

Scopes (reaching definitions, model/flow.py) per module, class body and function;
which class or function each definition sits in; the calls of the file (for
parameters: the arguments at the call sites); the attributes each class sets
on ``self``. Each part is built the first time a rule's question needs it, and
kept for the rest of the file.
"""

from __future__ import annotations

from typing import Any, Callable, cast

import libcst as cst

from ..syntax.walk import children, inner_children
from .flow import MUTATORS, Def, Scope, build_scope

_DEF_TYPES = (cst.FunctionDef, cst.ClassDef)


class FileModel:
    def __init__(self, module: cst.Module, path: str, is_exit: Callable[[cst.Call], bool],
                 mutators: frozenset = frozenset()) -> None:
        self.module = module
        self.path = path
        self.is_exit = is_exit
        self.mutators = MUTATORS | mutators  # a library's (the library table's) with the containers'
        self._scopes: dict[int, Scope] = {}
        self._parent: dict[int, Any] | None = None  # id(def) -> enclosing def or the module
        self._calls: list | None = None  # (Call, enclosing def or module, statement)
        self._by_name: dict[str, list] | None = None  # callee name or attribute -> entries of _calls
        self._class_attrs: dict[int, dict[str, list[Def]]] = {}
        self._exits: dict[int, bool] = {}  # id(FunctionDef) -> does its body hold an exit call?
        self._funcs: dict[str, Any] | None = None  # names bound once, by a module-level def

    def may_exit(self, call: cst.Call) -> bool:
        """Is ``call`` a call of a module-level function of this file whose body may end the
        run (``pytest.skip`` under a condition: ``maybe_skip_quantization("mxfp8")``)?"""
        if not isinstance(call.func, cst.Name):
            return False
        if self._funcs is None:
            self._funcs = _module_functions(self.module)
        fn = self._funcs.get(call.func.value)
        if fn is None:
            return False
        hit = self._exits.get(id(fn))
        if hit is None:
            hit = self._exits[id(fn)] = _holds_exit(fn.body, self.is_exit)
        return hit

    # -- structure -----------------------------------------------------------
    def parent_of(self, node) -> Any:
        if self._parent is None:
            self._parent = {}
            self._index_defs(self.module.body, self.module)
        return self._parent.get(id(node), self.module)

    def def_ids(self):
        """The ids of every function and class definition of the file."""
        self.parent_of(self.module)
        return self._parent.keys()

    def _index_defs(self, stmts, owner) -> None:
        assert self._parent is not None  # set by parent_of before it indexes
        # An explicit stack: an ``elif`` chain nests one If per branch (legal code has thousands).
        todo = [(stmts, owner)]
        while todo:
            stmts, owner = todo.pop()
            for stmt in stmts:
                if isinstance(stmt, _DEF_TYPES):
                    self._parent[id(stmt)] = owner
                    body = stmt.body.body if isinstance(stmt.body, cst.IndentedBlock) else ()
                    todo.append((body, stmt))
                else:
                    todo.extend((suite, owner) for suite in _suites(stmt))

    def scope(self, node) -> Scope:
        """The scope of a module, class or function node."""
        s = self._scopes.get(id(node))
        if s is None:
            if isinstance(node, cst.Module):
                s = build_scope(node, None, self.is_exit, may_exit=self.may_exit, mutators=self.mutators)
            else:
                owner = self.parent_of(node)
                parent = self.scope(owner)
                # A function's free names are looked up in the enclosing function or
                # the module, never in a class body.
                while isinstance(parent.node, cst.ClassDef):
                    parent = cast(Scope, parent.parent)  # a class body always has an enclosing scope
                s = build_scope(node, parent, self.is_exit,
                                method=isinstance(owner, cst.ClassDef) and isinstance(node, cst.FunctionDef),
                                may_exit=self.may_exit, mutators=self.mutators)
                s.owner_class = owner if isinstance(owner, cst.ClassDef) else None
            self._scopes[id(node)] = s
        return s

    # -- classes -------------------------------------------------------------
    def methods(self, cls: cst.ClassDef) -> dict[str, cst.FunctionDef]:
        out = {}
        body = cls.body.body if isinstance(cls.body, cst.IndentedBlock) else ()
        for stmt in body:
            if isinstance(stmt, cst.FunctionDef):
                out[stmt.name.value] = stmt
        return out

    def attr_defs(self, cls: cst.ClassDef) -> dict[str, list[Def]]:
        """``self.<attr> = ...`` (and mutations) in every method of the class."""
        got = self._class_attrs.get(id(cls))
        if got is None:
            got = {}
            for fn in self.methods(cls).values():
                for name, defs in self.scope(fn).attr_defs.items():
                    got.setdefault(name, []).extend(defs)
            self._class_attrs[id(cls)] = got
        return got

    # -- calls ---------------------------------------------------------------
    def calls(self) -> list:
        """Every call in the file with the def and statement it sits in (one walk, on demand)."""
        if self._calls is None:
            self._calls = []
            _collect_calls(self.module, self.module, None, self._calls)
        return self._calls

    def calls_named(self, name: str) -> list:
        """Calls whose callee is the name ``name`` or an attribute ``x.name``."""
        if self._by_name is None:
            self._by_name = {}
            for entry in self.calls():
                f = entry[0].func
                if isinstance(f, cst.Subscript) and isinstance(f.value, cst.Name):
                    f = f.value  # a kernel launch, ``kernel[grid](...)``: a call of ``kernel``
                key = f.value if isinstance(f, cst.Name) else f.attr.value if isinstance(f, cst.Attribute) else None
                if key is not None:
                    self._by_name.setdefault(key, []).append(entry)
        return list(self._by_name.get(name, ()))


def _suites(stmt):
    """The statement lists nested in a compound statement (not in defs)."""
    if isinstance(stmt, cst.If):
        yield stmt.body.body if isinstance(stmt.body, cst.IndentedBlock) else ()
        if stmt.orelse is not None:
            if isinstance(stmt.orelse, cst.If):
                yield [stmt.orelse]
            else:
                yield stmt.orelse.body.body if isinstance(stmt.orelse.body, cst.IndentedBlock) else ()
    elif isinstance(stmt, (cst.For, cst.While, cst.With)):
        yield stmt.body.body if isinstance(stmt.body, cst.IndentedBlock) else ()
        orelse = getattr(stmt, "orelse", None)
        if orelse is not None:
            yield orelse.body.body if isinstance(orelse.body, cst.IndentedBlock) else ()
    elif isinstance(stmt, cst.Try) or type(stmt).__name__ == "TryStar":
        yield stmt.body.body if isinstance(stmt.body, cst.IndentedBlock) else ()
        for h in stmt.handlers:
            yield h.body.body if isinstance(h.body, cst.IndentedBlock) else ()
        for part in (stmt.orelse, stmt.finalbody):
            if part is not None:
                yield part.body.body if isinstance(part.body, cst.IndentedBlock) else ()
    elif isinstance(stmt, cst.Match):
        for case in stmt.cases:
            yield case.body.body if isinstance(case.body, cst.IndentedBlock) else ()


_STMT = (cst.BaseSmallStatement, cst.BaseCompoundStatement)
_LEAVES = (cst.Name, cst.Integer, cst.Float, cst.Imaginary, cst.SimpleString, cst.Ellipsis)
_ROLE: dict[type, int] = {}  # per node type: 1 a call, 2 a def, 4 a statement, 8 no child can hold a call


def _role(tp: type) -> int:
    r = _ROLE.get(tp)
    if r is None:  # isinstance against LibCST's ABCs is slow: decide once per type
        r = ((1 if issubclass(tp, cst.Call) else 0) | (2 if issubclass(tp, _DEF_TYPES) else 0)
             | (4 if issubclass(tp, _STMT) else 0) | (8 if issubclass(tp, _LEAVES) else 0))
        _ROLE[tp] = r
    return r


def _collect_calls(node, owner, stmt, out: list) -> None:
    """Calls with their enclosing def and innermost statement; iterative to bound recursion."""
    stack = [(node, owner, stmt)]
    while stack:
        n, own, st = stack.pop()
        r = _ROLE.get(type(n)) or _role(type(n))
        if r:
            if r & 8:
                continue
            if r & 1:
                out.append((n, own, st))
            if r & 2 and n is not node:
                own = n
            if r & 4:
                st = n
        kids = inner_children(n)  # leaves hold no call: never pushed
        kids.reverse()
        stack.extend([(child, own, st) for child in kids])


def _module_functions(module: cst.Module) -> dict[str, Any]:
    """Module-level ``def`` names bound by nothing else at the top level."""
    defs: dict[str, Any] = {}
    other: set[str] = set()
    for stmt in module.body:
        if isinstance(stmt, cst.FunctionDef):
            if stmt.name.value in defs:
                other.add(stmt.name.value)
            defs[stmt.name.value] = stmt
        elif isinstance(stmt, cst.SimpleStatementLine):
            for small in stmt.body:
                targets = [t.target for t in small.targets] if isinstance(small, cst.Assign) else \
                    [small.target] if isinstance(small, (cst.AnnAssign, cst.AugAssign)) else []
                other.update(t.value for t in targets if isinstance(t, cst.Name))
    return {k: v for k, v in defs.items() if k not in other}


def _holds_exit(node, is_exit) -> bool:
    """A call ``is_exit`` accepts inside ``node``, nested definitions and lambdas aside."""
    stack = [node]
    while stack:
        n = stack.pop()
        if isinstance(n, cst.Call) and is_exit(n):
            return True
        for c in children(n):
            if not isinstance(c, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
                stack.append(c)
    return False
