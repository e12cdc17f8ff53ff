"""Read one package release's public API statically (``ast``, never import).

Input: the release's source files as ``{path inside the archive: text}``.
Output: for each requested module, its namespace ``{name: Sym}``: functions
and classes with their call signatures (overloads unioned, ``.pyi`` stubs
winning over ``.py``), submodules, other attributes, and the deprecation
message a function announces unconditionally (``@deprecated(...)`` or a
``warnings.warn(..., FutureWarning)`` at the top of its body).

A namespace that Python code fills at import time in ways this reader cannot
follow (``globals()[name] = ...``, ``sys.modules[__name__] = ...``, a module
``__getattr__`` that does not end in ``raise AttributeError``) is marked
*open*: its names are still recorded, but a missing name proves nothing.
"""

from __future__ import annotations

import ast
import re
import sys
from dataclasses import dataclass, field, replace

from ..matrix.api_tables import Namespace, Sym

# Decorator names that mark a function deprecated and take the message first.
_DEPRECATED_DECORATORS = {"deprecated", "_deprecated", "deprecate"}
_WARNING_CATEGORIES = {"FutureWarning", "DeprecationWarning", "PendingDeprecationWarning"}
# Class decorators and bases whose generated __init__ we do not model.
# Decorators that write a class's __init__ from its annotated fields (PEP 557; pydantic's takes the
# same parameters: pydantic/dataclasses.py builds on the standard library's).
_DATACLASS_DECORATORS = {"dataclasses.dataclass", "pydantic.dataclasses.dataclass"}
_ENUM_BASES = {"enum.Enum", "enum.IntEnum", "enum.StrEnum", "enum.Flag", "enum.IntFlag"}
_OPAQUE_CLASS_MARKERS = {"dataclass", "dataclasses.dataclass", "NamedTuple", "TypedDict", "Enum", "IntEnum",
                         "Protocol", "attr.s", "attrs.define", "total_ordering"}


@dataclass
class Feeder:
    """Names a module gets from a loop over another module at import time.

    ``torch/__init__.py`` runs ``for name in dir(_C._VariableFunctions):
    globals()[name] = ...``; a Feeder says so, and the namespace stays closed.
    """

    source: str  # module whose names are copied in
    public_only: bool = False
    exclude_suffix: str | None = None
    # A module-level tuple of names the loop skips (torch/__init__.py: ``PRIVATE_OPS = ("unique_dim",)``
    # and ``if __name.startswith("__") or __name in PRIVATE_OPS: continue``), read from each release.
    exclude_listed_in: str | None = None


def module_name(path: str) -> tuple[str, bool] | None:
    """``torch/nn/__init__.pyi`` -> ("torch.nn", True); non-Python -> None."""
    for suffix, stub in ((".pyi", True), (".py", False)):
        if path.endswith(suffix):
            parts = path[: -len(suffix)].split("/")
            if parts[-1] == "__init__":
                parts = parts[:-1]
            if not parts or not all(p.isidentifier() for p in parts):
                return None
            return ".".join(parts), stub
    return None


def signature(args: ast.arguments, drop_first: bool = False, stub: bool = False) -> str:
    """A call signature without annotations or default values.

    ``a, b=, /, c, *args, d=, **kw``: ``=`` marks a default, ``/`` ends the
    positional-only parameters, a bare ``*`` starts keyword-only ones.
    """
    positional = [*args.posonlyargs, *args.args]
    n_posonly = len(args.posonlyargs)
    first_default = len(positional) - len(args.defaults)
    if stub and n_posonly == 0:
        # Stub convention (PEP 484): parameters named __x are positional-only.
        while n_posonly < len(positional) and _dunder_private(positional[n_posonly].arg):
            n_posonly += 1
    items = []
    for i, a in enumerate(positional):
        if drop_first and i == 0:
            continue
        name = a.arg.lstrip("_") if stub and i < n_posonly and _dunder_private(a.arg) else a.arg
        items.append(name + ("=" if i >= first_default else ""))
        if i == n_posonly - 1:
            items.append("/")
    if items == ["/"]:
        items = []
    if args.vararg is not None:
        items.append("*" + args.vararg.arg)
    elif args.kwonlyargs:
        items.append("*")
    for a, d in zip(args.kwonlyargs, args.kw_defaults):
        items.append(a.arg + ("=" if d is not None else ""))
    if args.kwarg is not None:
        items.append("**" + args.kwarg.arg)
    return ", ".join(items)


def _dunder_private(name: str) -> bool:
    return name.startswith("__") and not name.endswith("__")


def _dotted(node: ast.AST) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        base = _dotted(node.value)
        return f"{base}.{node.attr}" if base else None
    return None


def _literal_text(node: ast.AST) -> str | None:
    """A warning message: string literals, implicit concatenation, ``+``, f-strings."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        out = []
        for v in node.values:
            if isinstance(v, ast.Constant):
                out.append(str(v.value))
            else:
                out.append("{...}")
        return "".join(out)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left, right = _literal_text(node.left), _literal_text(node.right)
        if left is not None and right is not None:
            return left + right
    return None


def _decorator_deprecation(decorators: list[ast.expr]) -> str | None:
    for d in decorators:
        if isinstance(d, ast.Call):
            name = (_dotted(d.func) or "").rsplit(".", 1)[-1]
            if name in _DEPRECATED_DECORATORS and d.args:
                text = _literal_text(d.args[0])
                if text:
                    return _squash(text)
    return None


def _body_deprecation(body: list[ast.stmt]) -> str | None:
    """``warnings.warn("... deprecated ...", FutureWarning)`` among the first statements."""
    for stmt in body[:4]:
        if not (isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call)):
            continue
        call = stmt.value
        if (_dotted(call.func) or "").rsplit(".", 1)[-1] != "warn" or not call.args:
            continue
        text = _literal_text(call.args[0])
        category = None
        if len(call.args) > 1:
            category = _dotted(call.args[1])
        for kw in call.keywords:
            if kw.arg == "category":
                category = _dotted(kw.value)
        cat = (category or "").rsplit(".", 1)[-1]
        if text and "deprecat" in text.lower() and (cat in _WARNING_CATEGORIES or category is None):
            return _squash(text)
    return None


_USE = re.compile(r"(?:replaced with:?\s*[^\n`]*?|\b(?:use|in favou?r of)\s+(?:the\s+)?`)([A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+)")


def stub_raise(exc: str, message: str) -> tuple[str, str, tuple[str, ...]]:
    """What the table keeps of a stub that only raises: the exception class, the first line of
    its message (squashed), and the names the message says to use instead, in its order (the
    code after "should be replaced with:", a name after "use the `...`" or "in favor of `...`"):
    torch 2.1's symeig -> ("RuntimeError", "This function was deprecated since version 1.9 and
    is now removed. ...", ("torch.linalg.eigvalsh", "torch.linalg.eigh"))."""
    use = tuple(dict.fromkeys(m.group(1) for m in _USE.finditer(message)))
    return exc, _squash(message.split("\n", 1)[0]), use


def _body_raise(body: list[ast.stmt]) -> tuple[str, str, tuple[str, ...]] | None:
    """A body (its docstring aside) that is one ``raise Exc("literal message")``."""
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
        body = body[1:]
    if len(body) != 1 or not isinstance(body[0], ast.Raise) or not isinstance(body[0].exc, ast.Call):
        return None
    call = body[0].exc
    exc = (_dotted(call.func) or "").rsplit(".", 1)[-1]
    text = _literal_text(call.args[0]) if call.args and not call.keywords else None
    if not exc or text is None or "{...}" in text:
        return None
    return stub_raise(exc, text)


_OVERLOAD = {"overload", "typing.overload", "typing_extensions.overload"}


def _overload_deprecation(defs) -> str | None:
    """``@overload @deprecated(msg)`` on one overload of several: deprecated only for
    calls that match it, written ``[param=value ...] msg`` with the parameters that
    overload pins with ``Literal[...]`` (torch's ``flex_attention(return_lse=True)``).
    A call matches only when it passes every one of them with a listed value; an
    omitted one matches the first overload that accepts the omission, so the first
    overload's deprecation is unconditional. Where the condition cannot be written
    (no Literal parameter, a value that is not a plain constant) nothing is recorded:
    a conditional warning is not claimed for every call."""
    overloads = [d for d in defs if _decorator_names(d.decorator_list) & _OVERLOAD]
    for i, d in enumerate(overloads):
        msg = _decorator_deprecation(d.decorator_list)
        if not msg:
            continue
        if i == 0 or all(_decorator_deprecation(o.decorator_list) for o in overloads):
            return msg
        conds = []
        args = d.args.posonlyargs + d.args.args + d.args.kwonlyargs
        for a in args:
            values = _literal_values(a.annotation)
            if values is None:
                continue
            if not values or not all(_plain(v) for v in values):
                return None
            conds.append(f"{a.arg}={'|'.join(repr(v) for v in values)}")
        return f"[{' '.join(conds)}] {msg}" if conds else None
    return None


def _plain(v) -> bool:
    """A constant the ``[param=value]`` condition can spell in one word."""
    if isinstance(v, str):
        return bool(v) and not any(c.isspace() or c in "|]'\"" for c in v)
    return isinstance(v, (bool, int)) or v is None


def _literal_values(node) -> list | None:
    """The values of a ``Literal[...]`` annotation, [] for a non-constant one, None for no Literal."""
    if not (isinstance(node, ast.Subscript) and (_dotted(node.value) or "").rsplit(".", 1)[-1] == "Literal"):
        return None
    items = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
    if not all(isinstance(x, ast.Constant) for x in items):
        return []
    return [x.value for x in items]


def _squash(text: str) -> str:
    return " ".join(text.split())


def _decorator_names(decorators: list[ast.expr]) -> set[str]:
    out = set()
    for d in decorators:
        target = d.func if isinstance(d, ast.Call) else d
        name = _dotted(target)
        if name:
            out.add(name)
            out.add(name.rsplit(".", 1)[-1])
    return out


@dataclass
class _Raw:
    """What one module's source binds, before names are followed across modules."""

    defs: dict[str, list[ast.FunctionDef | ast.AsyncFunctionDef]] = field(default_factory=dict)
    classes: dict[str, ast.ClassDef] = field(default_factory=dict)
    order: list[tuple[str, str, object]] = field(default_factory=list)  # (name, how, what) in source order
    stars: list[str] = field(default_factory=list)
    all: list[str] | None = None
    dynamic: bool = False
    getattr_keys: set[str] | None = None  # names a closed module __getattr__ serves
    getattr_warns: dict[str, str] = field(default_factory=dict)  # ... and the deprecation it warns of
    literals: dict[str, list[str]] = field(default_factory=dict)  # NAME = ("a", "b") at module level


class ApiReader:
    """Namespaces of one release's modules, computed on demand and memoized."""

    def __init__(self, files: dict[str, str], feeders: dict[str, list[Feeder]] | None = None) -> None:
        self.sources: dict[str, tuple[str, bool]] = {}
        self.stub_text: dict[str, str] = {}
        self._stub_raw: dict[str, _Raw | None] = {}
        self.py_text: dict[str, str] = {}  # the .py source, also where a stub wins (deprecations live there)
        self._py_defs: dict[str, dict[str, ast.AST]] = {}
        self.packages: set[str] = set()
        has_py: set[str] = set()
        for path, text in files.items():
            m = module_name(path)
            if m is None:
                continue
            mod, stub = m
            if not stub:
                has_py.add(mod)
                self.py_text[mod] = text
            if path.endswith(("/__init__.py", "/__init__.pyi")):
                self.packages.add(mod)
            if stub:
                self.stub_text[mod] = text
            if stub or mod not in self.sources:  # .pyi first; _prefer_py below hands names back to a .py
                self.sources[mod] = (text, stub)
        # A stub with no .py beside it describes an extension module (torch._C):
        # its functions are C-bound and parse arguments in C.
        self.extension = {mod for mod, (_, stub) in self.sources.items() if stub and mod not in has_py}
        # A stub beside a .py can be stale (torch 2.13's nn/functional.pyi lacks the losses' weight=):
        # what runs is the .py, so it decides the names and the signatures of what it defines itself;
        # the stub gives those it binds otherwise (`conv1d = _add_docstr(torch.conv1d, ...)`).
        self.dual = {mod for mod in self.stub_text if mod in has_py}
        for mod in self.dual:
            self.sources[mod] = (self.py_text[mod], False)
        self.children: dict[str, set[str]] = {}
        for mod in self.sources:
            parent, _, leaf = mod.rpartition(".")
            while parent:
                self.children.setdefault(parent, set()).add(leaf)
                parent, _, leaf = parent.rpartition(".")
        self.feeders = feeders or {}
        self._raw: dict[str, _Raw | None] = {}
        self._ns: dict[str, Namespace] = {}
        self._names: dict[str, set[str]] = {}
        self._sym: dict[tuple[str, str], Sym | None] = {}
        self._looking: set[tuple[str, str]] = set()
        self._open: set[str] = set()
        self._busy: set[str] = set()
        self.errors: list[str] = []
        self.why_open: dict[str, str] = {}
        self._top: list[ast.stmt] = []  # the module being collected's top-level statements

    # -- modules ---------------------------------------------------------------
    def has_module(self, mod: str) -> bool:
        return mod in self.sources

    def submodules(self, mod: str) -> list[str]:
        return sorted(self.children.get(mod, ()))

    def _parse(self, mod: str) -> _Raw | None:
        if mod in self._raw:
            return self._raw[mod]
        raw = None
        if mod in self.sources:
            text, stub = self.sources[mod]
            try:
                tree = ast.parse(text)
            except (SyntaxError, ValueError) as exc:
                self.errors.append(f"{mod}: {type(exc).__name__}: {exc}")
            else:
                raw = _Raw()
                self._top = tree.body
                self._collect(tree.body, raw, mod, stub)
        self._raw[mod] = raw
        return raw

    def _collect(self, body: list[ast.stmt], raw: _Raw, mod: str, stub: bool) -> None:
        for stmt in body:
            if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
                if stmt.name == "__getattr__":
                    top = [*body, *self._top]  # a __getattr__ nested in an `if`: module-level dicts
                    raw.getattr_keys = self._getattr_keys(stmt, top)
                    raw.getattr_warns = _getattr_warnings(stmt, top)
                    if raw.getattr_keys is None:
                        raw.dynamic = True
                    continue
                raw.defs.setdefault(stmt.name, []).append(stmt)
                raw.order.append((stmt.name, "def", stub))
            elif isinstance(stmt, ast.ClassDef):
                raw.classes[stmt.name] = stmt
                raw.order.append((stmt.name, "class", stub))
            elif isinstance(stmt, ast.ImportFrom):
                base = self._from_module(mod, stmt)
                for alias in stmt.names:
                    if alias.name == "*":
                        if base:
                            raw.stars.append(base)
                            raw.order.append(("*", "star", base))
                    else:
                        # PEP 484: a stub's `from m import X` binds X for the stub only; `X as X` re-exports.
                        how = "from" if not stub or alias.asname == alias.name else "stubfrom"
                        raw.order.append((alias.asname or alias.name, how, (base, alias.name)))
            elif isinstance(stmt, ast.Import):
                for alias in stmt.names:
                    how = "import" if not stub or alias.asname == alias.name else "stubimport"
                    if alias.asname:
                        raw.order.append((alias.asname, how, alias.name))
                    else:
                        raw.order.append((alias.name.split(".")[0], how, alias.name.split(".")[0]))
            elif isinstance(stmt, ast.Delete):
                for t in stmt.targets:
                    if isinstance(t, ast.Name):
                        raw.order.append((t.id, "del", None))
            elif isinstance(stmt, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
                if not (stub and _typing_only(stmt)):
                    self._assign(stmt, raw)
            elif isinstance(stmt, ast.If):
                checking = _type_checking(stmt.test)
                if not checking or stub:  # `if TYPE_CHECKING:` never runs: its imports bind nothing
                    self._collect(stmt.body, raw, mod, stub)
                self._collect(stmt.orelse, raw, mod, stub)
            elif isinstance(stmt, ast.Try) or type(stmt).__name__ == "TryStar":
                self._collect(stmt.body, raw, mod, stub)
                for h in stmt.handlers:
                    self._collect(h.body, raw, mod, stub)
                self._collect(stmt.orelse, raw, mod, stub)
                self._collect(stmt.finalbody, raw, mod, stub)
            elif isinstance(stmt, (ast.With, ast.For, ast.While)):
                if isinstance(stmt, ast.For):
                    for t in ast.walk(stmt.target):
                        if isinstance(t, ast.Name):
                            raw.order.append((t.id, "attr", None))
                self._collect(stmt.body, raw, mod, stub)
                self._collect(getattr(stmt, "orelse", []), raw, mod, stub)
            elif isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
                self._all_call(stmt.value, raw)
            if _writes_namespace(stmt):
                raw.dynamic = True

    def _assign(self, stmt, raw: _Raw) -> None:
        targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
        value = stmt.value
        for t in targets:
            names = [n.id for n in ast.walk(t) if isinstance(n, ast.Name)] if isinstance(t, (ast.Tuple, ast.List)) else (
                [t.id] if isinstance(t, ast.Name) else [])
            for name in names:
                if name == "__all__":
                    items = _str_list(value)
                    if isinstance(stmt, ast.AugAssign):
                        if raw.all is not None and items is not None:
                            raw.all = raw.all + items
                    else:
                        raw.all = items
                    continue
                alias = _dotted(value) if value is not None and isinstance(t, ast.Name) else None
                raw.order.append((name, "alias" if alias else "attr", alias))
                if isinstance(t, ast.Name) and value is not None and _str_list(value) is not None:
                    raw.literals[name] = _str_list(value)

    def _all_call(self, call: ast.Call, raw: _Raw) -> None:
        """``__all__.extend([...])`` / ``__all__.append("x")``; anything else there is dynamic."""
        f = call.func
        if isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) and f.value.id == "__all__":
            items = None
            if f.attr == "extend" and call.args:
                items = _str_list(call.args[0])
            elif f.attr == "append" and call.args:
                v = call.args[0]
                items = [v.value] if isinstance(v, ast.Constant) and isinstance(v.value, str) else None
            if raw.all is not None:
                raw.all = raw.all + items if items is not None else None

    def _getattr_keys(self, fn: ast.FunctionDef, body: list[ast.stmt]) -> set[str] | None:
        """Names a module ``__getattr__`` serves, when it is closed.

        Closed: it ends in ``raise AttributeError`` and tests the name only
        against module-level literal containers (``if name in _lazy_modules``,
        ``_deprecated_attrs.get(name)``), whose keys are the names it serves.
        """
        last = fn.body[-1] if fn.body else None
        if not (isinstance(last, ast.Raise) and last.exc is not None
                and "AttributeError" in (_dotted(last.exc.func if isinstance(last.exc, ast.Call) else last.exc) or "")):
            return None
        literals: dict[str, list[str]] = {}
        for stmt in body:
            if isinstance(stmt, (ast.Assign, ast.AnnAssign)) and stmt.value is not None:
                targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
                keys = _str_keys(stmt.value)
                for t in targets:
                    if isinstance(t, ast.Name) and keys is not None:
                        literals[t.id] = keys
            elif isinstance(stmt, ast.If):  # `else:` branch of `if TYPE_CHECKING`
                for s in stmt.orelse + stmt.body:
                    if isinstance(s, ast.Assign) and _str_keys(s.value) is not None:
                        for t in s.targets:
                            if isinstance(t, ast.Name):
                                literals[t.id] = _str_keys(s.value)
        param = fn.args.args[0].arg if fn.args.args else "name"
        keys: set[str] = set()
        for node in ast.walk(fn):
            if isinstance(node, ast.Compare) and isinstance(node.left, ast.Name) and node.left.id == param:
                for op, right in zip(node.ops, node.comparators):
                    if isinstance(op, (ast.In, ast.NotIn)):
                        if isinstance(right, ast.Name) and right.id in literals:
                            keys |= set(literals[right.id])
                        elif _str_keys(right) is not None:
                            keys |= set(_str_keys(right))
                        else:
                            return None
                    elif isinstance(op, ast.Eq) and isinstance(right, ast.Constant) and isinstance(right.value, str):
                        keys.add(right.value)
            elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "get":
                if any(isinstance(a, ast.Name) and a.id == param for a in node.args):
                    holder = node.func.value
                    if isinstance(holder, ast.Name) and holder.id in literals:
                        keys |= set(literals[holder.id])
                    else:
                        return None
        return keys

    def _from_module(self, mod: str, stmt: ast.ImportFrom) -> str | None:
        if stmt.level:
            parts = mod.split(".")
            # Level 1 is the package itself in its __init__, the parent package in a plain module.
            drop = stmt.level - 1 + (0 if mod in self.packages else 1)
            return None if drop > len(parts) else ".".join(parts[: len(parts) - drop] + ([stmt.module] if stmt.module else []))
        return stmt.module

    # -- namespaces --------------------------------------------------------------
    def namespace(self, mod: str) -> Namespace:
        """Every name ``mod`` binds, each followed to its definition."""
        if mod not in self._ns:
            ns = Namespace()
            names = self.names(mod)
            if names is None:
                ns.open = True
            else:
                for n in sorted(names):
                    ns.names[n] = self.lookup(mod, n) or Sym("a")
                ns.open = mod in self._open
                raw = self._parse(mod)
                ns.all = raw.all if raw else None
            self._ns[mod] = ns
        return self._ns[mod]

    def class_namespace(self, qualname: str) -> Namespace | None:
        """The names a class's body binds (``pkg.mod.Format``: an enum's members), found where
        ``pkg.mod`` gets the class; None where the module or the class is missing. Closed only
        for an enum, whose members are all in its own body; another class inherits names."""
        mod, _, cls = qualname.rpartition(".")
        found = self._find_class(mod, cls) if self.has_module(mod) else None
        if found is None:
            return None
        cmod, node = found
        ns = Namespace(is_class=True)
        for stmt in node.body:
            targets: list = []
            if isinstance(stmt, ast.Assign):
                targets = stmt.targets
            elif isinstance(stmt, ast.AnnAssign) and stmt.value is not None:
                targets = [stmt.target]  # an annotation alone binds nothing on the class
            for t in targets:
                for n in ast.walk(t):
                    if isinstance(n, ast.Name):
                        ns.names[n.id] = Sym("a")
            if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
                ns.names[stmt.name] = self._function([stmt], stub=False, drop_first=True) \
                    if _decorator_names(stmt.decorator_list) & {"classmethod", "staticmethod"} else Sym("f")
            elif isinstance(stmt, ast.ClassDef):
                ns.names[stmt.name] = Sym("c")
        bases = [self._qualify(cmod, _dotted(b) or "?") for b in node.bases]
        enum = any(b in _ENUM_BASES for b in bases)
        ns.open = not enum or any(b not in _ENUM_BASES | {"str", "int", "object"} for b in bases)
        return ns

    def names(self, mod: str) -> set[str] | None:
        """The names ``mod`` binds (not yet followed); None if it cannot be read."""
        if mod in self._names:
            return self._names[mod]
        raw = self._parse(mod)
        if raw is None:
            return None
        if mod in self._busy:  # a star-import cycle: what is known so far
            self._mark_open(mod, "star-import cycle")
            return set()
        self._busy.add(mod)
        try:
            out = set(self.submodules(mod))
            for name, how, what in raw.order:
                if how == "star":
                    out |= self._star_names(mod, what)
                elif how == "del":
                    out.discard(name)
                elif how not in ("stubfrom", "stubimport") or name in self.children.get(mod, ()):
                    out.add(name)
            if raw.all:
                out |= {n for n, how, _ in raw.order if how in ("stubfrom", "stubimport") and n in raw.all}
            for feeder in self.feeders.get(mod, []):
                skip = set(raw.literals.get(feeder.exclude_listed_in, ())) if feeder.exclude_listed_in else set()
                out |= {n for n in self.names(feeder.source) or () if _fed(feeder, n) and n not in skip}
            out |= raw.getattr_keys or set()
            if raw.dynamic and mod not in self.feeders:
                self._mark_open(mod, "writes its namespace dynamically")
        finally:
            self._busy.discard(mod)
        self._names[mod] = out
        return out

    def _star_names(self, mod: str, src: str) -> set[str]:
        names = self.names(src)
        if names is None and src not in self.sources and src.split(".")[0] in _STDLIB:
            # ``from typing import *`` (torch.utils.checkpoint): the standard library module's
            # ``__all__`` in the Python this runs on (the wheels read are for the same Pythons)
            return _stdlib_all(src)
        if names is None:
            self._mark_open(mod, f"star import of unreadable {src}")
            return set()
        if src in self._open:
            self._mark_open(mod, f"star import of open {src}")
        raw = self._parse(src)
        if raw is not None and raw.all is not None:
            return {n for n in raw.all if n in names}
        return {n for n in names if not n.startswith("_")}

    def _mark_open(self, mod: str, why: str) -> None:
        self._open.add(mod)
        self.why_open.setdefault(mod, why)

    def lookup(self, mod: str, name: str, _depth: int = 0) -> Sym | None:
        """The symbol ``mod.name`` is, followed through imports; None if unbound."""
        key = (mod, name)
        if key in self._sym:
            return self._sym[key]
        if _depth > 30 or key in self._looking:
            return Sym("a")
        raw = self._parse(mod)
        if raw is None:
            return None
        self._looking.add(key)
        try:
            sym = self._lookup(mod, name, raw, _depth)
        finally:
            self._looking.discard(key)
        self._sym[key] = sym
        return sym

    def _lookup(self, mod: str, name: str, raw: _Raw, depth: int) -> Sym | None:
        sym = self._lookup_here(mod, name, raw, depth)
        if mod in self.dual and sym is not None and (sym.kind not in ("f", "c") or sym.sigs is None):
            found = self._stub_symbol(mod, name, depth)
            if found is not None and found.kind in ("f", "b", "c") and found.sigs is not None:
                return replace(found, deprecated=sym.deprecated or found.deprecated)
        return sym

    def _stub_symbol(self, mod: str, name: str, depth: int) -> Sym | None:
        """What the stub beside a .py says ``name`` is: its def or class, or what it imports."""
        stub = self._stub(mod)
        for bound, how, what in reversed(stub.order if stub is not None else ()):
            if bound != name:
                continue
            if how == "def":
                return self._function(stub.defs[name], stub=True)
            if how == "class":
                return self._class(mod, stub.classes[name], stub=True)
            if how in ("from", "stubfrom"):
                return self._lookup_from(*what, depth=depth)
            return None
        return None

    def _stub(self, mod: str) -> _Raw | None:
        if mod not in self._stub_raw:
            raw = None
            try:
                tree = ast.parse(self.stub_text[mod])
            except (SyntaxError, ValueError):
                tree = None
            if tree is not None:
                raw = _Raw()
                self._top = tree.body
                self._collect(tree.body, raw, mod, True)
            self._stub_raw[mod] = raw
        return self._stub_raw[mod]

    def _lookup_here(self, mod: str, name: str, raw: _Raw, depth: int) -> Sym | None:
        # The last binding in source order wins, as at run time (mostly).
        for bound, how, what in reversed(raw.order):
            if how == "star":
                if name in self._star_names(mod, what):
                    return self.lookup(what, name, depth + 1) or Sym("a")
                continue
            if bound != name:
                continue
            if how == "del":
                return None
            if how == "def":
                sym = self._function(raw.defs[name], stub=bool(what))
                if what and sym.deprecated is None:
                    sym = replace(sym, deprecated=self._py_deprecation(mod, name))
                return Sym("b", sym.sigs, sym.deprecated) if mod in self.extension and sym.kind == "f" else sym
            if how == "class":
                sym = self._class(mod, raw.classes[name], stub=bool(what))
                if what and sym.deprecated is None:
                    sym = replace(sym, deprecated=self._py_deprecation(mod, name))
                return sym
            if how in ("from", "stubfrom"):
                return self._lookup_from(*what, depth=depth)
            if how in ("import", "stubimport"):
                return Sym("m")
            if how == "alias":
                return self._resolve_dotted(mod, what, depth) or Sym("a")
            return Sym("a")
        if name in self.children.get(mod, ()):
            return Sym("m")
        for feeder in self.feeders.get(mod, []):
            if feeder.exclude_listed_in and name in raw.literals.get(feeder.exclude_listed_in, ()):
                continue
            if _fed(feeder, name) and name in (self.names(feeder.source) or ()):
                return self.lookup(feeder.source, name, depth + 1)
        if raw.getattr_keys and name in raw.getattr_keys:
            return Sym("a", deprecated=raw.getattr_warns.get(name))
        return None

    def _py_deprecation(self, mod: str, name: str) -> str | None:
        """A stub shows the signature; the warning is in the .py beside it."""
        if mod not in self.py_text:
            return None
        if mod not in self._py_defs:
            try:
                tree = ast.parse(self.py_text[mod])
            except (SyntaxError, ValueError):
                tree = ast.Module(body=[], type_ignores=[])
            self._py_defs[mod] = {n.name: n for n in tree.body
                                  if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))}
        node = self._py_defs[mod].get(name)
        if isinstance(node, ast.ClassDef):
            found = _decorator_deprecation(node.decorator_list)
            for d in node.body:
                if isinstance(d, ast.FunctionDef) and d.name in ("__init__", "__new__"):
                    found = found or _decorator_deprecation(d.decorator_list) or _body_deprecation(d.body)
            return found
        if node is not None:
            return _decorator_deprecation(node.decorator_list) or _body_deprecation(node.body)
        return None

    def _lookup_from(self, base: str | None, attr: str, depth: int = 0) -> Sym:
        if base is None or base not in self.sources:
            return Sym("a")  # outside this package: exists, shape unknown
        sym = self.lookup(base, attr, depth + 1)
        if attr in self.children.get(base, ()) and (sym is None or sym.kind == "a"):
            return Sym("m")  # ``from torch import cuda``: the submodule
        return sym or Sym("a")

    def _resolve_dotted(self, mod: str, dotted: str, depth: int) -> Sym | None:
        """``name = other`` / ``name = pkg.mod.func``: the symbol it aliases."""
        head, _, rest = dotted.partition(".")
        if not rest:
            return self.lookup(mod, head, depth + 1)
        target = self._module_bound(mod, head)
        if target is None:
            return None
        parts = rest.split(".")
        module = ".".join([target, *parts[:-1]])
        return self.lookup(module, parts[-1], depth + 1) if module in self.sources else None

    def _module_bound(self, mod: str, head: str) -> str | None:
        """The module a name in ``mod`` is bound to by an import, if any."""
        raw = self._parse(mod)
        for name, how, what in reversed(raw.order if raw else ()):
            if name == head:
                if how in ("import", "stubimport"):
                    return what
                if how in ("from", "stubfrom") and what[0]:
                    full = f"{what[0]}.{what[1]}"
                    return full if full in self.sources else None
                return None
        return f"{mod}.{head}" if head in self.children.get(mod, ()) else None

    # -- functions and classes ---------------------------------------------------
    def _function(self, defs, stub: bool, drop_first: bool = False) -> Sym:
        sigs: list[str] = []
        deprecated = None
        for d in defs:
            names = _decorator_names(d.decorator_list)
            if names & {"property", "cached_property", "functools.cached_property"}:
                return Sym("a")
            first = drop_first and "staticmethod" not in names
            s = signature(d.args, drop_first=first, stub=stub)
            if s not in sigs:
                sigs.append(s)
            if names & _OVERLOAD:
                continue  # an overload's @deprecated holds only for the calls it matches: below
            deprecated = deprecated or _decorator_deprecation(d.decorator_list) or _body_deprecation(d.body)
        raises = _body_raise(defs[-1].body) if len(defs) == 1 and not stub else None
        return Sym("f", tuple(sigs), deprecated or _overload_deprecation(defs), raises=raises)

    def _class(self, mod: str, node: ast.ClassDef, stub: bool, depth: int = 0) -> Sym:
        deprecated = _decorator_deprecation(node.decorator_list)
        sigs, generator = self._init(mod, node, stub, depth)
        init = [s for s in node.body if isinstance(s, ast.FunctionDef) and s.name in ("__init__", "__new__")]
        for d in init:
            deprecated = deprecated or _decorator_deprecation(d.decorator_list) or _body_deprecation(d.body)
        return Sym("c", sigs, deprecated, generator if sigs is not None else None)

    def _init_sigs(self, mod: str, node: ast.ClassDef, stub: bool, depth: int) -> tuple[str, ...] | None:
        return self._init(mod, node, stub, depth)[0]

    def _init(self, mod: str, node: ast.ClassDef, stub: bool, depth: int) -> tuple[tuple[str, ...] | None, str | None]:
        """The call signatures of a class, and the decorator that generated its ``__init__`` (a dataclass's)."""
        if depth > 6:
            return None, None
        inits = [s for s in node.body if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef))
                 and s.name == "__init__"]
        news = [s for s in node.body if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef))
                and s.name == "__new__"]
        found = self._dataclass_decorator(mod, node)
        if found is not None and not inits and not news and not stub:
            # PEP 557: the decorator writes __init__ from the fields (a class that defines its
            # own keeps it: read below if nothing else decorates it)
            return self._dataclass_sigs(mod, node, found[1], depth), found[0]
        if _decorator_names(node.decorator_list) & _OPAQUE_CLASS_MARKERS:
            return None, None
        if node.decorator_list or any(k.arg == "metaclass" for k in node.keywords):
            return None, None
        if inits or news:
            if inits and news:
                return None, None  # both shape the call; do not guess
            sym = self._function(inits or news, stub=stub, drop_first=True)
            return (sym.sigs if sym.kind == "f" else None), None
        if not node.bases:
            return ("",), None
        if len(node.bases) != 1:
            return None, None
        base = _dotted(node.bases[0])
        if base in ("object",):
            return ("",), None
        if base is None or (base.rsplit(".", 1)[-1] in _OPAQUE_CLASS_MARKERS):
            return None, None
        found_base = self._find_class(mod, base)
        if found_base is None:
            return None, None
        bmod, bnode = found_base
        return self._init(bmod, bnode, self.sources[bmod][1], depth + 1)

    # -- dataclasses ------------------------------------------------------------------
    def _qualify(self, mod: str, dotted: str) -> str:
        """What a dotted name in ``mod`` stands for when its head is imported
        (``dataclass`` after ``from pydantic.dataclasses import dataclass``)."""
        head, _, rest = dotted.partition(".")
        raw = self._parse(mod)
        for name, how, what in reversed(raw.order if raw else ()):
            if name != head:
                continue
            if how in ("from", "stubfrom") and what[0]:
                full = f"{what[0]}.{what[1]}"
            elif how in ("import", "stubimport"):
                full = what
            else:
                return dotted  # defined here: not the library's decorator
            return f"{full}.{rest}" if rest else full
        return dotted

    def _dataclass_decorator(self, mod: str, node: ast.ClassDef) -> tuple[str, ast.expr] | None:
        """(the decorator's qualified name, its node) for a dataclass, else None."""
        for d in node.decorator_list:
            name = _dotted(d.func if isinstance(d, ast.Call) else d)
            if name is not None and self._qualify(mod, name) in _DATACLASS_DECORATORS:
                return self._qualify(mod, name), d
        return None

    def _dataclass_sigs(self, mod: str, node: ast.ClassDef, deco: ast.expr, depth: int) -> tuple[str, ...] | None:
        opts = {k.arg: k.value for k in deco.keywords} if isinstance(deco, ast.Call) else {}
        if isinstance(deco, ast.Call) and (deco.args or None in opts):
            return None
        if "config" in opts or _constant(opts.get("init"), True) is not True:
            return None  # pydantic's config decides what an unknown keyword does; init=False writes none
        class_kw_only = _constant(opts.get("kw_only"), False)
        if not isinstance(class_kw_only, bool):
            return None
        fields = self._fields(mod, node, class_kw_only, depth)
        if fields is None:
            return None
        positional = [n + ("=" if d else "") for n, (d, kw) in fields.items() if not kw]
        keyword = [n + ("=" if d else "") for n, (d, kw) in fields.items() if kw]
        return (", ".join(positional + (["*"] + keyword if keyword else [])),)

    def _fields(self, mod: str, node: ast.ClassDef, kw_only: bool, depth: int) -> dict[str, tuple[bool, bool]] | None:
        """``{field: (has a default, keyword-only)}`` of a dataclass in ``__init__`` order: the
        fields of its dataclass ancestors first (a field redefined keeps its place), then its own.
        None where a base cannot be read (outside the package: a dataclass or not)."""
        out: dict[str, tuple[bool, bool]] = {}
        for b in reversed(node.bases):
            got = self._ancestor_fields(mod, b, depth + 1)
            if got is None:
                return None
            out.update(got)
        for stmt in node.body:
            if not (isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name)):
                continue
            ann = _annotation_name(stmt.annotation)
            if ann == "ClassVar":
                continue
            if ann == "KW_ONLY":  # `_: KW_ONLY`: the fields after it are keyword-only
                kw_only = True
                continue
            default, kw, init = stmt.value is not None, kw_only, True
            if isinstance(stmt.value, ast.Call) and \
                    (_dotted(stmt.value.func) or "").rsplit(".", 1)[-1] in ("field", "Field"):
                call = stmt.value
                kws = {k.arg: k.value for k in call.keywords}
                if None in kws:
                    return None
                default = "default" in kws or "default_factory" in kws or bool(
                    call.args and not (isinstance(call.args[0], ast.Constant) and call.args[0].value is Ellipsis))
                init = _constant(kws.get("init"), True)
                got_kw = _constant(kws.get("kw_only"), kw_only)
                if not isinstance(init, bool) or not isinstance(got_kw, bool):
                    return None
                kw = got_kw
            if not init:
                out.pop(stmt.target.id, None)
                continue
            out[stmt.target.id] = (default, kw)  # a redefined field keeps its place
        return out

    def _ancestor_fields(self, mod: str, base: ast.expr, depth: int) -> dict[str, tuple[bool, bool]] | None:
        """The dataclass fields a base class brings: its own if it is a dataclass, else its bases'."""
        name = _dotted(base)
        if name in ("object", "abc.ABC", "ABC"):
            return {}
        found = self._find_class(mod, name) if name is not None and depth < 8 else None
        if found is None:
            return None
        bmod, bnode = found
        deco = self._dataclass_decorator(bmod, bnode)
        if deco is not None:
            opts = {k.arg: k.value for k in deco[1].keywords} if isinstance(deco[1], ast.Call) else {}
            kw_only = _constant(opts.get("kw_only"), False)
            return self._fields(bmod, bnode, kw_only, depth) if isinstance(kw_only, bool) else None
        out: dict[str, tuple[bool, bool]] = {}
        for b in reversed(bnode.bases):
            got = self._ancestor_fields(bmod, b, depth + 1)
            if got is None:
                return None
            out.update(got)
        return out

    def _find_class(self, mod: str, dotted: str) -> tuple[str, ast.ClassDef] | None:
        """The ClassDef a base-class expression names, followed through imports."""
        raw = self._parse(mod)
        if raw is None:
            return None
        head, _, rest = dotted.partition(".")
        if not rest and head in raw.classes:
            return mod, raw.classes[head]
        for name, how, what in reversed(raw.order):
            if name != head:
                continue
            if how in ("from", "stubfrom") and what[0]:
                base, attr = what
                if not rest:
                    return self._find_class(base, attr) if base in self.sources else None
                target = f"{base}.{attr}"
            elif how in ("import", "stubimport"):
                target = what
            else:
                return None
            parts = rest.split(".")
            module = ".".join([target, *parts[:-1]])
            return self._find_class(module, parts[-1]) if module in self.sources else None
        return None


def _constant(node, default):
    """A keyword's literal value (``kw_only=True``), ``default`` when it is not passed, and the
    node itself when it is not a literal (the caller then knows nothing)."""
    if node is None:
        return default
    return node.value if isinstance(node, ast.Constant) else node


def _annotation_name(node) -> str:
    """``ClassVar`` for ``ClassVar[int]``, ``typing.ClassVar``, ``"ClassVar[int]"``; the last dotted part."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value.split("[", 1)[0].rsplit(".", 1)[-1].strip()
    if isinstance(node, ast.Subscript):
        node = node.value
    return (_dotted(node) or "").rsplit(".", 1)[-1]


_TYPE_FACTORIES = {"TypeVar", "ParamSpec", "TypeVarTuple", "NewType", "TypeAliasType"}


def _getattr_warnings(fn: ast.FunctionDef, body: list[ast.stmt]) -> dict[str, str]:
    """The deprecation a module ``__getattr__`` warns of, per name it serves (torch 2.1's
    ``replacement = _deprecated_attrs.get(name)`` / ``if replacement is not None:`` /
    ``warnings.warn(f"'{name}' is deprecated, please use '{replacement.__module__}.{replacement.__name__}()'")``,
    with ``_deprecated_attrs = {"has_cuda": torch.backends.cuda.is_built, ...}``; and
    ``if name == "set_vital": warnings.warn(...)``): the f-string filled in with the name and,
    for the dict's value, the module and name of the dotted expression it holds. A message
    with anything else in it is not read."""
    param = fn.args.args[0].arg if fn.args.args else "name"
    dicts = {t.id: stmt.value for stmt in body if isinstance(stmt, ast.Assign) and isinstance(stmt.value, ast.Dict)
             for t in stmt.targets if isinstance(t, ast.Name)}
    looked_up: dict[str, str] = {}  # var = DICT.get(name)
    out: dict[str, str] = {}
    for node in ast.walk(fn):
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name) \
                and isinstance(node.value, ast.Call) and isinstance(node.value.func, ast.Attribute) \
                and node.value.func.attr == "get" and isinstance(node.value.func.value, ast.Name) \
                and node.value.func.value.id in dicts:
            looked_up[node.targets[0].id] = node.value.func.value.id
        if not isinstance(node, ast.If):
            continue
        warn = next((c.value for c in node.body if isinstance(c, ast.Expr) and isinstance(c.value, ast.Call)
                     and (_dotted(c.value.func) or "").rsplit(".", 1)[-1] == "warn" and c.value.args), None)
        if warn is None:
            continue
        test, entries = node.test, {}
        if isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.left, ast.Name):
            right = test.comparators[0]
            if isinstance(test.ops[0], ast.IsNot) and test.left.id in looked_up:
                d = dicts[looked_up[test.left.id]]
                entries = {k.value: (test.left.id, v) for k, v in zip(d.keys, d.values)
                           if isinstance(k, ast.Constant) and isinstance(k.value, str)}
            elif isinstance(test.ops[0], ast.Eq) and test.left.id == param and isinstance(right, ast.Constant) \
                    and isinstance(right.value, str):
                entries = {right.value: (None, None)}
        for key, (var, value) in entries.items():
            text = _fill(warn.args[0], param, key, var, value)
            if text and "deprecat" in text.lower():
                out[key] = _squash(text)
    return out


def _fill(msg: ast.expr, param: str, key: str, var: str | None, value: ast.expr | None) -> str | None:
    if isinstance(msg, ast.Constant) and isinstance(msg.value, str):
        return msg.value
    if not isinstance(msg, ast.JoinedStr):
        return None
    dotted = _dotted(value) if value is not None else None
    parts = []
    for v in msg.values:
        if isinstance(v, ast.Constant):
            parts.append(str(v.value))
            continue
        e = v.value if isinstance(v, ast.FormattedValue) and v.conversion == -1 and v.format_spec is None else None
        if isinstance(e, ast.Name) and e.id == param:
            parts.append(key)
        elif isinstance(e, ast.Attribute) and isinstance(e.value, ast.Name) and e.value.id == var and dotted \
                and "." in dotted and e.attr in ("__module__", "__name__"):
            parts.append(dotted.rpartition(".")[0 if e.attr == "__module__" else 2])
        else:
            return None
    return "".join(parts)


_STDLIB: frozenset[str] = getattr(sys, "stdlib_module_names", frozenset())


def _stdlib_all(mod: str) -> set[str]:
    import importlib

    try:
        names = getattr(importlib.import_module(mod), "__all__", None)
    except ImportError:
        return set()
    return {n for n in names or () if isinstance(n, str)}


def _typing_only(stmt: ast.stmt) -> bool:
    """A stub's type variable or alias (``T = TypeVar("T")``, ``Stack: TypeAlias = list[IValue]``,
    ``JitTypeT = Union[...]``): it exists for the type checker, not in the module at run time."""
    value = stmt.value
    if isinstance(stmt, ast.AnnAssign) and (_dotted(stmt.annotation) or "").rsplit(".", 1)[-1] == "TypeAlias":
        return True
    if isinstance(value, ast.Call):
        return (_dotted(value.func) or "").rsplit(".", 1)[-1] in _TYPE_FACTORIES
    if isinstance(value, ast.Subscript):
        return True  # Union[...], Callable[...], dict[str, int]: an alias
    if isinstance(value, ast.BinOp) and isinstance(value.op, ast.BitOr):
        return True  # int | None
    return False


def _type_checking(test: ast.expr) -> bool:
    """``if TYPE_CHECKING:`` / ``if typing.TYPE_CHECKING:``."""
    return (_dotted(test) or "").rsplit(".", 1)[-1] == "TYPE_CHECKING"


def _fed(feeder: Feeder, name: str) -> bool:
    if name.startswith("__") or (feeder.public_only and name.startswith("_")):
        return False
    return not (feeder.exclude_suffix and name.endswith(feeder.exclude_suffix))


def _str_list(node) -> list[str] | None:
    if isinstance(node, (ast.List, ast.Tuple)):
        out = []
        for e in node.elts:
            if isinstance(e, ast.Constant) and isinstance(e.value, str):
                out.append(e.value)
            else:
                return None
        return out
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left, right = _str_list(node.left), _str_list(node.right)
        return left + right if left is not None and right is not None else None
    return None


def _str_keys(node) -> list[str] | None:
    """String keys of a dict/set/list/tuple literal (``frozenset({...})`` too)."""
    if isinstance(node, ast.Call) and _dotted(node.func) in ("frozenset", "set", "tuple") and len(node.args) == 1:
        node = node.args[0]
    if isinstance(node, ast.Dict):
        elts = node.keys
    elif isinstance(node, (ast.Set, ast.List, ast.Tuple)):
        elts = node.elts
    else:
        return None
    out = []
    for e in elts:
        if isinstance(e, ast.Constant) and isinstance(e.value, str):
            out.append(e.value)
        else:
            return None
    return out


_COMPOUND = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.If, ast.Try, ast.With, ast.For, ast.While)


def _writes_namespace(stmt: ast.stmt) -> bool:
    """``globals()[n] = v``, ``sys.modules[__name__] = m``, ``setattr(sys.modules[...], ...)``.

    Only simple statements: compound ones are collected statement by statement,
    and what a function body does happens only when it is called."""
    if isinstance(stmt, _COMPOUND):
        return False
    for node in ast.walk(stmt):
        if isinstance(node, ast.Assign):
            for t in node.targets:
                if isinstance(t, ast.Subscript):
                    holder = t.value
                    if isinstance(holder, ast.Call) and _dotted(holder.func) in ("globals", "vars", "locals"):
                        return True
                    if _dotted(holder) == "sys.modules":
                        return True
        if isinstance(node, ast.Call):
            name = _dotted(node.func)
            if name == "setattr" and node.args and "sys.modules" in ast.unparse(node.args[0]):
                return True
            if name in ("globals().update", "vars().update"):
                return True
            if isinstance(node.func, ast.Attribute) and node.func.attr == "update" and isinstance(
                    node.func.value, ast.Call) and _dotted(node.func.value.func) == "globals":
                return True
    return False
