"""The module index: what one cheap pass over a module's top level knows.

Imports and aliases (``import numpy.linalg as la``), module-level bindings
(constants, ``norm = la.norm``) and helper functions (``def is_hopper():
...``). This replaces LibCST's ScopeProvider and
QualifiedNameProvider, which cost several parses per file.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Union, cast

import libcst as cst


@dataclass(frozen=True)
class Qual:
    """A name bound by an import to a dotted module path."""

    name: str


@dataclass(frozen=True)
class Unpack:
    """``a, b = expr``: the binding of ``b`` is ``expr[1]``."""

    expr: cst.BaseExpression
    index: int


class Opaque:
    """A binding whose value the engine does not track (parameters, loops)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "OPAQUE"


OPAQUE = Opaque()

Binding = Union[Qual, Unpack, Opaque, cst.BaseExpression, cst.FunctionDef, cst.ClassDef]


def dotted(node: cst.BaseExpression) -> str | None:
    """``a.b.c`` as a string, for Name/Attribute chains only."""
    parts = []
    while isinstance(node, cst.Attribute):
        parts.append(node.attr.value)
        node = node.value
    if isinstance(node, cst.Name):
        parts.append(node.value)
        return ".".join(reversed(parts))
    return None


def resolve_chain(node: cst.BaseExpression, lookup, unbound=None, depth: int = 0) -> str | None:
    """Qualified name of a Name/Attribute chain through import bindings and aliases
    (``lookup(name)`` gives a name's binding); ``unbound(name)`` answers for a name
    nothing binds (star imports, re-exports)."""
    if depth > 6:
        return None
    tp = type(node)  # exact types: LibCST's ABC isinstance is slow, and these have no subclasses
    if tp is cst.Attribute:
        attr = cast(cst.Attribute, node)  # mypy does not narrow through ``tp``
        base = resolve_chain(attr.value, lookup, unbound, depth + 1)
        return f"{base}.{attr.attr.value}" if base else None
    if tp is cst.Name:
        name = cast(cst.Name, node)
        b = lookup(name.value)
        if isinstance(b, Qual):
            return b.name
        if isinstance(b, (cst.Name, cst.Attribute)):
            return resolve_chain(b, lookup, unbound, depth + 1)
        if b is None and unbound is not None:
            return unbound(name.value)
    return None


def import_bindings(node: cst.Import | cst.ImportFrom, relative: bool = False) -> list[tuple[str, Qual]]:
    """The names an import statement binds, or ``("*", Qual(module))``. With
    ``relative``, ``from .utils import f`` binds ``f`` to ``Qual(".utils.f")``
    (the value model follows it into the project); otherwise it binds nothing."""
    out: list[tuple[str, Qual]] = []
    if isinstance(node, cst.Import):
        for alias in node.names:
            full = dotted(alias.name)
            if full is None:
                continue
            if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
                out.append((alias.asname.name.value, Qual(full)))
            else:
                head = full.split(".", 1)[0]
                out.append((head, Qual(head)))
        return out
    if node.relative:
        if not relative or isinstance(node.names, cst.ImportStar):
            return out  # for the index, relative imports name the user's own package: not tracked
        mod = dotted(node.module) if node.module is not None else ""
        if mod is None:
            return out
        head = "." * len(node.relative) + mod + ("." if mod else "")
        for alias in node.names:
            name = dotted(alias.name)
            if name is not None:
                bound = alias.asname.name.value if alias.asname and isinstance(alias.asname.name, cst.Name) else name
                out.append((bound, Qual(head + name)))
        return out
    if node.module is None:
        return out
    module = dotted(node.module)
    if module is None:
        return out
    if isinstance(node.names, cst.ImportStar):
        return [("*", Qual(module))]
    for alias in node.names:
        name = dotted(alias.name)
        if name is None:
            continue
        bound = alias.asname.name.value if alias.asname and isinstance(alias.asname.name, cst.Name) else name
        out.append((bound, Qual(f"{module}.{name}")))
    return out


def assign_bindings(targets: list[cst.BaseAssignTargetExpression], value: cst.BaseExpression) -> list[tuple[str, Binding]]:
    out: list[tuple[str, Binding]] = []
    for t in targets:
        if isinstance(t, cst.Name):
            out.append((t.value, value))
        elif isinstance(t, (cst.Tuple, cst.List)):
            for i, el in enumerate(t.elements):
                if isinstance(el, cst.StarredElement):
                    break
                if isinstance(el.value, cst.Name):
                    out.append((el.value.value, Unpack(value, i)))
    return out


@dataclass
class ModuleIndex:
    bindings: dict[str, Binding] = field(default_factory=dict)
    star_modules: list[str] = field(default_factory=list)
    imported_roots: set[str] = field(default_factory=set)
    # ``from .ops import flash_attn_func``: name -> ".ops.flash_attn_func" (the
    # project's own modules; a re-exported library name is resolved on demand).
    relative: dict[str, str] = field(default_factory=dict)

    def bind(self, name: str, value: Binding, fallback: bool = False) -> None:
        # An import in an ``except`` handler is a fallback: the try body's binding
        # is the one the author meant to use.
        if fallback and name in self.bindings:
            return
        self.bindings[name] = value


def _walk_top(stmts, index: ModuleIndex, fallback: bool = False) -> None:
    for stmt in stmts:
        if isinstance(stmt, cst.SimpleStatementLine):
            for small in stmt.body:
                if isinstance(small, cst.ImportFrom) and small.relative:
                    for name, q in import_bindings(small, relative=True):
                        if not fallback or name not in index.relative:
                            index.relative[name] = q.name
                elif isinstance(small, (cst.Import, cst.ImportFrom)):
                    for name, q in import_bindings(small):
                        index.imported_roots.add(q.name.split(".", 1)[0])
                        if name == "*":
                            if q.name not in index.star_modules:
                                index.star_modules.append(q.name)
                        else:
                            index.bind(name, q, fallback)
                elif isinstance(small, cst.Assign):
                    for name, b in assign_bindings([t.target for t in small.targets], small.value):
                        index.bind(name, b, fallback)
                elif isinstance(small, cst.AnnAssign) and small.value is not None and isinstance(small.target, cst.Name):
                    index.bind(small.target.value, small.value, fallback)
        elif isinstance(stmt, cst.FunctionDef):
            index.bind(stmt.name.value, stmt)
        elif isinstance(stmt, cst.ClassDef):
            index.bind(stmt.name.value, stmt)
        elif isinstance(stmt, cst.If):
            _walk_top(stmt.body.body, index, fallback)
            orelse = stmt.orelse
            while orelse is not None:
                if isinstance(orelse, cst.If):
                    _walk_top(orelse.body.body, index, fallback)
                    orelse = orelse.orelse
                else:
                    _walk_top(orelse.body.body, index, fallback)
                    orelse = None
        elif isinstance(stmt, cst.Try):
            _walk_top(stmt.body.body, index, fallback)
            for h in stmt.handlers:
                _walk_top(h.body.body, index, True)
            if stmt.orelse:
                _walk_top(stmt.orelse.body.body, index, fallback)
        elif isinstance(stmt, cst.With):
            _walk_top(stmt.body.body, index, fallback)


def build_index(module: cst.Module) -> ModuleIndex:
    index = ModuleIndex()
    _walk_top(module.body, index)
    return index
