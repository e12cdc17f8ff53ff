"""The one reader of a build's Python: setup.py's ``CUDAExtension`` calls (setup_py.py), a JIT
front-end's specs (jit_specs.py, jit_values.py) and torch's JIT calls (torch_jit.py) all follow
names through it, with Python's own parser (never run).

It holds a module's bindings (``Module``: per scope, every value a name is set to, in source
order; ``+=``/``.extend``/``.append`` as ``Grown`` values, other changes to a list as
``Unmodelled``), the name a call or attribute spells (``dotted``, ``tail``), a call's argument
(``arg``), a function's returns (``returns``), the nodes of a scope without the functions in it
(``shallow_walk``) and the one parse (``parse``).

"Not known" has exactly two spellings, one for a value and one for text:

- ``None``: what every reader of the build's Python returns for an expression whose value it
  cannot tell, never an empty list and never a guess. A known Python ``None`` is a constant in
  a result (``[None]``, ``Alt()``), so the two never meet.
- ``UNKNOWN_VALUE``: a part not known once a value has become text: the value of an
  ``f"-DX={n}"`` flag, a field of a ``#define`` line rendered from an f-string, a macro value in
  the define table the preprocessor gets. Text carries no object, so it needs a token; it is a
  C identifier so that ``-DX=<token>`` stays a well-formed flag and the preprocessor reads X as
  defined with a value not known. Its reader, the preprocessor (cuda/cpp/ppexpr.py, a layer
  below), defines it.
"""

from __future__ import annotations

import ast
import warnings
from pathlib import Path

from ..cpp.ppexpr import UNKNOWN_VALUE

__all__ = ["UNKNOWN_VALUE", "Grown", "Module", "Unmodelled", "arg", "dotted", "parse", "returns", "shallow_walk", "tail"]

_DEFS = (ast.FunctionDef, ast.AsyncFunctionDef)


def parse(source: str | bytes) -> ast.Module | None:
    """The module's tree; None when it does not parse. Quietly: a checked file's invalid escape
    (``"\\d"``) is its own business, not a warning on aicompat's stderr."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


class Grown(ast.BinOp):
    """``name += x``, ``name.extend(x)``, ``name.append(x)`` (x as ``[x]``): the name's value so
    far plus x. A BinOp (``Name + x``), so readers that add lists read it as one; its own class
    tells it from an assignment ``name = name + x`` written in the source."""


class Unmodelled(ast.expr):
    """What ``name.insert(...)``/``.remove(...)``/``.clear()`` leaves: a change no reader models,
    so every reader reads the name as not known (a node none of them knows)."""

    _fields = ()


class Module:
    """The bindings of one module: its functions and classes, per scope (0: the module, else
    ``id`` of the function) every value each name is set to, and its ``from`` imports."""

    def __init__(self, path: Path, tree: ast.Module) -> None:
        self.path = path
        self.tree = tree
        self.functions: dict[str, ast.FunctionDef] = {}  # module level
        self.defs: dict[str, ast.FunctionDef] = {}  # every function, nested ones too (the last of a name)
        self.classes: dict[str, ast.ClassDef] = {}
        self.assigns: dict[int, dict[str, list[ast.AST]]] = {}  # scope id -> name -> values
        self.imports: dict[str, str] = {}  # local name -> module it is imported from (".core")
        self._collect(tree, 0)

    def local(self, name: str, fn) -> list[ast.AST]:
        """The values ``name`` is set to in ``fn``'s own scope (None: the module's)."""
        return self.assigns.get(id(fn) if fn is not None else 0, {}).get(name) or []

    def lookup(self, name: str, fn=None) -> tuple[list[ast.AST], object]:
        """The values ``name`` is set to where ``fn`` (None: module level) reads it: its own
        scope's, else the module's; and the function whose scope that is (None: the module)."""
        local = self.local(name, fn) if fn is not None else []
        return (local, fn) if local else (self.local(name, None), None)

    def _add(self, scope: int, name: str, value: ast.AST) -> None:
        self.assigns.setdefault(scope, {}).setdefault(name, []).append(value)

    def _collect(self, node, scope: int) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, _DEFS):
                if scope == 0:
                    self.functions[child.name] = child
                self.defs[child.name] = child
                self._collect(child, id(child))
                continue
            if isinstance(child, ast.ClassDef):
                if scope == 0:
                    self.classes[child.name] = child
                continue  # a class body's names are not the module's; its methods are not called bare
            if isinstance(child, ast.Assign):
                for t in child.targets:
                    if isinstance(t, ast.Name):
                        self._add(scope, t.id, child.value)
            elif isinstance(child, ast.AnnAssign) and isinstance(child.target, ast.Name):
                if child.value is not None:
                    self._add(scope, child.target.id, child.value)
            elif isinstance(child, ast.AugAssign) and isinstance(child.target, ast.Name):
                op = Grown if isinstance(child.op, ast.Add) else ast.BinOp
                self._add(scope, child.target.id, op(ast.Name(child.target.id), child.op, child.value))
            elif isinstance(child, ast.Call) and isinstance(child.func, ast.Attribute) \
                    and isinstance(child.func.value, ast.Name) \
                    and child.func.attr in ("append", "extend", "insert", "remove", "clear"):
                # FLAGS.append("-DX"): one more flag; anything else it does is not modelled.
                name = child.func.value.id
                if child.func.attr in ("append", "extend") and len(child.args) == 1:
                    added = ast.List([child.args[0]]) if child.func.attr == "append" else child.args[0]
                    value: ast.AST = Grown(ast.Name(name), ast.Add(), added)
                else:
                    value = Unmodelled()
                self._add(scope, name, value)
            elif isinstance(child, ast.ImportFrom) and scope == 0:
                for a in child.names:
                    self.imports[a.asname or a.name] = "." * child.level + (child.module or "")
            self._collect(child, scope)


def shallow_walk(node):
    """The nodes below ``node`` in source order, not entering the functions (or lambdas) in it.
    A stack, not recursion: ``a + b + ...`` nests as deep as it is long."""
    stack = [ast.iter_child_nodes(node)]
    while stack:
        child = next(stack[-1], None)
        if child is None:
            stack.pop()
            continue
        yield child
        if not isinstance(child, (*_DEFS, ast.Lambda)):
            stack.append(ast.iter_child_nodes(child))


def returns(fn) -> list[ast.Return]:
    """The ``return`` statements of ``fn`` itself (not of the functions defined in it)."""
    return [r for r in shallow_walk(fn) if isinstance(r, ast.Return)]


def dotted(expr) -> str | None:
    """``torch.utils.cpp_extension.load`` for that attribute chain on a name; None otherwise."""
    parts = []
    while isinstance(expr, ast.Attribute):
        parts.append(expr.attr)
        expr = expr.value
    if isinstance(expr, ast.Name):
        parts.append(expr.id)
        return ".".join(reversed(parts))
    return None


def tail(expr) -> str | None:
    """The last name of a name or attribute (``jit_env.FLASHINFER_CSRC_DIR``: the latter)."""
    if isinstance(expr, ast.Name):
        return expr.id
    if isinstance(expr, ast.Attribute):
        return expr.attr
    return None


def arg(call: ast.Call, index: int | None, kw: str):
    """The argument a call passes for parameter ``kw`` (positional ``index``, None: keyword
    only); None when it passes none or a ``*args`` before it hides where it is."""
    for k in call.keywords:
        if k.arg == kw:
            return k.value
    if index is not None and index < len(call.args) and not any(isinstance(a, ast.Starred) for a in call.args[:index + 1]):
        return call.args[index]
    return None
