"""The project's own modules, for the value model to follow across files.

``from .utils import torch_version`` and ``from mypkg.config import V_DIM``
name modules of the linted tree. When a rule's question reaches such a name,
the module is read, parsed once per process and given its own FileModel; the
evaluator then follows values into it as into the file being checked.

What is followed, and what never is:
- relative imports inside the importer's package, and absolute imports whose
  first part is a package or module beside the importer's top package (or
  beside the importer itself, for scripts importing their neighbours);
- only regular files (no symlink, no device or FIFO) inside that root, at most
  ``MAX_BYTES`` each and ``MAX_MODULES`` per checked file;
- never a library the rules know (``torch``, ``flash_attn``...): a vendored
  copy of torch is still torch to the rules.
Nothing is imported or executed. Each module read is recorded in ``reads`` so
the per-file cache is invalidated when it changes.

Cost: guards are split at every ``if``, so when a guard is being split only
modules whose text names something that differs between worlds (a probe, the
device capability, ``__version__``; probes.world_tokens) or a package's
``__init__`` are read, and no callers are searched; a flag kept in a plain
config module then stays unknown to the guard (as before modules were followed).
Callers of a function are searched only in its own top-level package, within a
per-file budget.
"""

from __future__ import annotations

import os
import re
import stat
from collections import OrderedDict
from pathlib import Path
from typing import Any

import libcst as cst

from ..fs import deps
from ..fs.confine import read_regular, tree_of, within
from ..syntax.index import ModuleIndex, Qual, build_index, resolve_chain
from .guards import is_exit_call
from .structure import FileModel

MAX_BYTES = 256_000  # a module bigger than this is not followed (parse cost: a 300 KB module takes ~0.5 s)
MAX_MODULES = 10  # modules one checked file may parse to follow a value
MAX_WORLD_MODULES = 14  # and, beyond those, modules whose text can tell GPUs or releases apart (guards)
_PROCESS_CACHE = 64  # parsed modules kept per process (LRU)
MAX_SCAN_FILES = 400  # files of a package searched for callers of a function
MAX_CALLER_MODULES = 4  # modules parsed to bind one function's parameters
CALLER_BUDGET = 8  # modules one checked file may parse only to find callers (parse cost)
_SKIP_DIRS = frozenset({".git", ".hg", ".tox", ".venv", "venv", "node_modules", "build", "dist", "__pycache__",
                        ".aicompat_cache", "site-packages"})


class HomeEnv:
    """The checked file, as a module another project module imports."""

    def __init__(self, path: str, module: cst.Module, model: FileModel, lookup, resolve) -> None:
        self.path, self.module, self.model, self.lookup, self.resolve = path, module, model, lookup, resolve
        self.index = None


class ModuleEnv:
    """One parsed module of the project: what the evaluator needs to read it."""

    def __init__(self, path: str, module: cst.Module, libs) -> None:
        self.path = path
        self.module = module
        self.index: ModuleIndex = build_index(module)
        self.model = FileModel(module, path, lambda call: is_exit_call(call.func, self.resolve, libs), libs.mutators)
        self._positions = None

    def lookup(self, name: str):
        return self.index.bindings.get(name)

    def resolve(self, node: cst.BaseExpression) -> str | None:
        return resolve_chain(node, self.lookup)

    def positions(self):
        if self._positions is None:
            from libcst.metadata import MetadataWrapper, PositionProvider

            self._positions = MetadataWrapper(self.module, unsafe_skip_copy=True).resolve(PositionProvider)
        return self._positions


# Per process, by real path: (stat key, the module's env, the digest of its bytes).
_cache: "OrderedDict[str, tuple[tuple, ModuleEnv | None, str]]" = OrderedDict()


def _stat_key(st: os.stat_result) -> tuple:
    return (st.st_mtime_ns, st.st_size, st.st_ino)


def linted_tree(path: str, data: bytes) -> cst.Module | None:
    """The tree of a file the run lints, where this process already parsed those very
    bytes to follow the file from another one (a worker lints the largest files first,
    and they import the smaller ones): parsed once, not twice. (Keeping every linted
    tree for the files that follow it later cost 45 MB more per worker on
    torch/_inductor and no CPU: the other way round is left out.)"""
    hit = _cache.get(os.path.realpath(path)) if path and not path.startswith("<") else None
    if hit is None or hit[1] is None or hit[2] != deps.digest(data):
        return None
    return hit[1].module


def _load(path: Path, libs) -> ModuleEnv | None:
    """Parse ``path`` (a checked regular file), memoised per process by (mtime, size)."""
    try:
        st = os.stat(path, follow_symlinks=False)
    except OSError:
        return None
    if not stat.S_ISREG(st.st_mode) or st.st_size > MAX_BYTES:
        deps.note_read(path, None, MAX_BYTES)  # not followed: a file that shrinks changes the result
        return None
    key = _stat_key(st)
    hit = _cache.get(str(path))
    if hit is not None and hit[0] == key:
        _cache.move_to_end(str(path))
        deps.note_digest(path, hit[2])  # each checked file that follows it depends on it
        return hit[1]
    env = None
    data = None
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
        with os.fdopen(fd, "rb") as f:
            data = f.read(MAX_BYTES + 1)
        if len(data) <= MAX_BYTES:
            env = ModuleEnv(str(path), cst.parse_module(data), libs)
    except (OSError, cst.ParserSyntaxError, UnicodeDecodeError, LookupError, SyntaxError, ValueError,
            RecursionError):
        env = None
    got = deps.digest(data) if data is not None and len(data) <= MAX_BYTES else \
        deps.over(MAX_BYTES) if data is not None else deps.ABSENT
    deps.note_digest(path, got)
    _cache[str(path)] = (key, env, got)
    while len(_cache) > _PROCESS_CACHE:
        _cache.popitem(last=False)
    return env


_files: dict[str, list] = {}


def _package_files(root: Path) -> list:
    """(path, bytes) of the package's .py files (bounded), read once per process."""
    hit = _files.get(str(root))
    if hit is not None:
        return hit
    out: list = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d not in _SKIP_DIRS and not d.startswith("."))
        for fn in sorted(filenames):
            if not fn.endswith(".py"):
                continue
            p = Path(dirpath) / fn
            try:
                st = os.stat(p, follow_symlinks=False)
                if not stat.S_ISREG(st.st_mode) or st.st_size > MAX_BYTES:
                    continue
                out.append((p, p.read_bytes()))
            except OSError:
                continue
            if len(out) >= MAX_SCAN_FILES:
                _files[str(root)] = out
                return out
    if len(_files) > 8:
        _files.clear()
    _files[str(root)] = out
    return out


_CALLED = re.compile(rb"([A-Za-z_][A-Za-z0-9_]*)\(")
_callees: dict[str, tuple[list, dict[bytes, list[int]]]] = {}


def _callee_index(root: Path) -> dict[bytes, list[int]]:
    """name -> indices into ``_package_files(root)`` of the files that contain ``name(``:
    each file is scanned once per process, not once per function whose callers are asked
    for (issue 15: a file with 800 functions scanned its package 800 times)."""
    files = _package_files(root)
    hit = _callees.get(str(root))
    if hit is not None and hit[0] is files:  # built from this very listing
        return hit[1]
    index: dict[bytes, list[int]] = {}
    for i, (_p, data) in enumerate(files):
        for name in set(_CALLED.findall(data)):
            index.setdefault(name, []).append(i)
    if len(_callees) > 8:
        _callees.clear()
    _callees[str(root)] = (files, index)
    return index


def _files_calling(root: Path, name: str, exclude: Path) -> list:
    files = _package_files(root)
    if name.isascii():
        picked = [files[i] for i in _callee_index(root).get(name.encode(), ())]
    else:  # a non-ASCII name: the index holds ASCII identifiers only
        needle = name.encode() + b"("
        picked = [cd for cd in files if needle in cd[1]]
    return [(c, d) for c, d in picked if c != exclude]


_REFUSED = object()
_world_dep: dict[str, tuple[bool, str]] = {}


def _world_dependent(path: Path, tokens: tuple[bytes, ...]) -> bool:
    """Can the module at ``path`` tell worlds apart: does its text hold one of ``tokens``
    (the library table's ``world_tokens``: probes, the device capability, ``__version__``)?"""
    hit = _world_dep.get(str(path))
    if hit is None:
        data = read_regular(path, MAX_BYTES)
        seen = deps.digest(data) if data is not None else deps.over(MAX_BYTES) \
            if deps.longer_than(path, MAX_BYTES) else deps.ABSENT
        hit = _world_dep[str(path)] = (any(t in (data or b"") for t in tokens), seen)
        if len(_world_dep) > 4096:
            _world_dep.clear()
    else:
        deps.note_digest(path, hit[1])  # the answer depends on the text, for every file that asks
    return hit[0]


def _package_root(here: Path) -> Path:
    """The folder holding the importer's top-level package (its own folder for a script)."""
    root = here
    while (root / "__init__.py").is_file() and root.parent != root:
        root = root.parent
    return root


_PROJECT_MARKERS = ("setup.py", "pyproject.toml", "setup.cfg")
_OWNED: dict[tuple[str, str], Path | None] = {}


def owns_package(home: Path | None, name: str) -> bool:
    """Is ``name`` (an import root such as ``flash_attn``) the source of the project the
    file sits in? Its tests then run against that source at HEAD, not against a release
    the API tables know: flash-attention's tests call keywords no release has yet."""
    return owning_root(home, name) is not None


def owning_root(home: Path | None, name: str) -> Path | None:
    """The folder ``name``'s package sits in when the file's project is that package's
    own source: a folder above the file (at most 6 up, not past a ``.git``) holds setup.py,
    pyproject.toml or setup.cfg and ``name/__init__.py``, ``src/name/__init__.py`` or
    ``name.py``, as regular files. The folder returned is the one to import ``name`` from
    (``src/`` for a src layout)."""
    if home is None:
        return None
    root = home.parent
    for _ in range(6):
        key = (str(root), name)
        if key not in _OWNED:
            _OWNED[key] = _own_layout(root, name)
        if _OWNED[key] is not None:
            return _OWNED[key]
        if (root / ".git").exists() or root.parent == root:
            return None
        root = root.parent
    return None


def _own_layout(root: Path, name: str) -> Path | None:
    if not any(_regular(root / m) for m in _PROJECT_MARKERS):
        return None
    for base, marker in ((root, root / name / "__init__.py"), (root / "src", root / "src" / name / "__init__.py"),
                         (root, root / f"{name}.py")):
        if _regular(marker):
            return base
    return None


def _regular(path: Path) -> bool:
    try:
        return stat.S_ISREG(os.lstat(path).st_mode)
    except OSError:
        return False


class Project:
    """The modules one checked file may follow into (one instance per checked file)."""

    def __init__(self, path: str, libraries: frozenset[str], libs, reads: list | None = None,
                 home_env=None, root: str | None = None, modelled: frozenset[str] = frozenset()) -> None:
        self.home = Path(path).resolve() if path and not path.startswith("<") else None
        self.tree = tree_of(path, root)  # nothing outside it is read (fs/confine.py)
        self.home_env = home_env  # the checked file, when another module imports it back
        self.libraries = libraries  # top-level names that are libraries, never project modules
        self.modelled = modelled  # names the rules model, and the modules above them (kept as the library)
        self.libs = libs  # the library table (libmodels/table.py): exits, mutators, world tokens
        self.reads = reads if reads is not None else []
        self._envs: dict[str, ModuleEnv | None] = {}  # also the paths tried that held no module
        self._loaded = 0  # modules parsed: what MAX_MODULES bounds
        self._by_node: dict[int, ModuleEnv] = {}
        self._found: dict[tuple, Any] = {}  # find's answers, and callers' lists ("callers" keys)
        self._caller_budget = CALLER_BUDGET
        self._world_only = False

    def callers(self, fn_path: str | None, name: str) -> list[ModuleEnv]:
        """Other modules of the package that may call the function ``name`` of the
        module at ``fn_path`` (None: the checked file): those whose text names both
        the function and its module, parsed (bounded). The evaluator checks each
        call really reaches the function."""
        path = Path(fn_path).resolve() if fn_path else self.home
        if path is None:
            return []
        key = ("callers", str(path), name)
        if key in self._found:
            return self._found[key]
        stem = (path.parent.name if path.name == "__init__.py" else path.stem).encode()
        out: list[ModuleEnv] = []
        limit = _package_root(path.parent)
        # Modules naming the function's module first; a re-export (``from ..ops import f``) names only f.
        top = path.parent  # the top-level package (a script's folder): not the tests and examples beside it
        while (top / "__init__.py").is_file() and (top.parent / "__init__.py").is_file():
            top = top.parent
        if self.tree is None or within(top, self.tree) is None:
            return []  # a package above the project (an __init__.py outside it): not searched
        files = _files_calling(top, name, path)
        files.sort(key=lambda cd: stem not in cd[1])
        for cand, _data in files:
            if str(cand) not in self._envs:
                if self._caller_budget <= 0:
                    break
                self._caller_budget -= 1
            env = self._env(cand, limit)
            if isinstance(env, ModuleEnv):
                out.append(env)
            if len(out) >= MAX_CALLER_MODULES:
                break
        self._found[key] = out
        return out

    def locate(self, node) -> str | None:
        """``"12 of pkg/streams.py"`` for a node of a project module (a finding's
        reference, e.g. the call that makes a helper fail); positions are computed
        only here, for modules a finding points into."""
        for env in self._envs.values():
            if not isinstance(env, ModuleEnv):
                continue
            pos = env.positions().get(node)
            if pos is not None:
                where = os.path.relpath(env.path, self.home.parent) if self.home is not None else env.path
                return f"{pos.start.line} of {where}"
        return None

    def env_of(self, node) -> ModuleEnv | None:
        """The project module a definition or module node belongs to; None for the checked file."""
        return self._by_node.get(id(node))

    def find(self, importer: str | None, qualname: str, world_only: bool = False, signature: bool = False):
        """The module a (possibly relative, ``..pkg.mod.name``) dotted name starts
        with, and the attribute chain after it; None when it is not the project's.
        ``world_only`` (a guard being split): only a module whose text could make a
        guard differ between worlds (probes.world_tokens) is read. ``signature``: the
        caller reads a def's parameters only, never follows its body, so a library name
        the rules model is found too where the linted tree is that library's source."""
        key = (importer, qualname, world_only, signature)
        if key in self._found:
            return self._found[key]
        self._world_only = world_only
        try:
            out = self._find(importer, qualname, signature)
        finally:
            self._world_only = False
        self._found[key] = out
        return out

    def library_name(self, importer: str | None, qualname: str, depth: int = 0) -> str | None:
        """The library name a project module re-exports: ``from .ops import
        flash_attn_func`` where ops.py has ``from flash_attn import flash_attn_func``."""
        found = self.find(importer, qualname) if depth < 4 else None
        if found is None or len(found[1]) != 1:
            return None
        env, (name,) = found
        b = env.lookup(name)
        if isinstance(b, Qual):
            return b.name
        rel = env.index.relative.get(name) if b is None and env.index is not None else None
        return self.library_name(env.path, rel, depth + 1) if rel else None

    def _find(self, importer: str | None, qualname: str, signature: bool = False):
        if self.home is None:
            return None
        here = Path(importer).resolve().parent if importer else self.home.parent
        level = len(qualname) - len(qualname.lstrip("."))
        parts = [p for p in qualname[level:].split(".") if p]
        if level:
            base = here
            for _ in range(level - 1):
                base = base.parent
            roots = [base]
            limit = _package_root(here)
            if base != limit and limit not in base.parents:  # a namespace package (no __init__.py) on the way
                limit = _package_root(base)
        else:
            if not parts:
                return None
            roots = [_package_root(here), here]
            if parts[0] in self.libraries:
                # A library is followed only where the linted tree is its own source, and then
                # only into its functions (vLLM's tests call skip helpers from vllm.*), never into
                # what the rules model of it: its classes and values (TE's recipes) stay the library's.
                own = None if self._modelled(parts) and not signature else owning_root(self.home, parts[0])
                if own is None:
                    return None
                found = self._in_root(own, parts, own, False)
                if found is None or found[0] is _REFUSED or len(found[1]) != 1 \
                        or not isinstance(found[0].lookup(found[1][0]), cst.FunctionDef):
                    return None
                return found
            roots = list(dict.fromkeys(roots))
            limit = None
        for root in roots:
            found = self._in_root(root, parts, limit or root, bool(level))
            if found is not None:
                return found
        return None

    def _modelled(self, parts: list[str]) -> bool:
        """Is ``a.b.c`` a name the rules model, a module above one, or a name of such a
        module below the package's top (``transformer_engine.pytorch.Linear``)?"""
        return ".".join(parts) in self.modelled or len(parts) >= 3 and ".".join(parts[:-1]) in self.modelled

    def _in_root(self, root: Path, parts: list[str], limit: Path, relative: bool):
        for i in range(len(parts), -1, -1):
            if i == 0:
                cands = [root / "__init__.py"] if relative else []  # ``from . import name``
            else:
                base = root.joinpath(*parts[:i])
                cands = [base.with_name(base.name + ".py"), base / "__init__.py"]
            for cand in cands:
                env = self._env(cand, limit)
                if env is _REFUSED:
                    return None  # the module exists but is not read for a guard
                if env is not None:
                    return env, tuple(parts[i:])
        return None

    def _env(self, cand: Path, limit: Path) -> ModuleEnv | object | None:  # object: _REFUSED
        name = str(cand)
        if name in self._envs:
            return self._envs[name]
        env = None
        try:
            real = cand.resolve()
            inside = real == cand.absolute() and (real == limit or limit in real.parents) and \
                self.tree is not None and within(real, self.tree) is not None
        except (OSError, RuntimeError, ValueError):
            inside = False
        if self._world_only and cand.name != "__init__.py" and cand.is_file() and \
                not (inside and _world_dependent(real, self.libs.world_tokens)):
            # (a package's __init__ is read: it mostly re-exports what its modules define)
            return _REFUSED  # not cached: a rule's question may still read it
        if inside and real == self.home:
            return self.home_env  # not registered: its nodes are read as the checked file's
        if inside and not real.is_file():
            deps.note_read(real, None)  # a module created later changes what this file's names are
        if inside and real.is_file() and (self._loaded < MAX_MODULES or (
                self._loaded < MAX_MODULES + MAX_WORLD_MODULES and _world_dependent(real, self.libs.world_tokens))):
            # Guard helpers (torch_version(), is_fp8_available wrappers) keep a budget of their
            # own: a file that follows many plain values must still see its guards.
            env = _load(real, self.libs)
            if env is not None:
                self._loaded += 1
                self.reads.append(str(cand))
                self._register(env)
        self._envs[name] = env
        return env

    def _register(self, env: ModuleEnv) -> None:
        self._by_node[id(env.module)] = env
        env.model.parent_of(env.module)  # builds the map of every definition
        for key in env.model.def_ids():
            self._by_node[key] = env

