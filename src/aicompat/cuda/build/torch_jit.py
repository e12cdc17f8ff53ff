"""The .cu files a project's Python compiles with torch's JIT (``cpp_extension.load``).

``load(name="ext", sources=[os.path.join(os.path.dirname(__file__), "csrc", "k.cu")],
extra_cuda_cflags=FLAGS)`` compiles k.cu with FLAGS (its -D flags and any arch flags)
when the module runs. Read with Python's own parser, never run: each call's name, its
sources that are files of the tree (paths built from the module's own folder), and its
flag list as jit_specs.Reader reads lists (literals, constants, ``+``, ``.append``).
A source given relative to the working directory is not followed (where the program
runs from is not known).
"""

from __future__ import annotations

import ast
import os
import time
from dataclasses import dataclass
from pathlib import Path

from ..cpp import includes, runcache
from . import jit_specs
from .pyeval import Module, arg, dotted, parse

MAX_FILES = 3000
MAX_BYTES = 1_000_000
SKIP = frozenset({".git", ".hg", ".tox", ".venv", "venv", "node_modules", "build", "dist", "__pycache__"})
_LOADERS = ("torch.utils.cpp_extension.load", "cpp_extension.load")


@dataclass
class Load:
    where: str  # "ops/quant.py line 12"
    path: Path  # the module making the call
    name: str | None
    sources: list[Path]
    alts: list | None  # jit_specs.Alt per way the flags come out; None: not known


def _python_files(root: Path) -> list[Path]:
    out: list[Path] = []
    for d, dirs, files in os.walk(root):
        dirs[:] = sorted(x for x in dirs if x not in SKIP and not x.startswith("."))
        for f in sorted(files):
            if f.endswith(".py"):
                out.append(Path(d) / f)
                if len(out) >= MAX_FILES:
                    return out
    return out


STAMP_TTL = 5.0  # seconds: one walk serves the CUDA files of a run, an edit is seen soon after


def stamps(root: Path) -> tuple:
    """What the answer of ``loads`` depends on: the tree's Python files, their sizes and times."""
    walks: dict[str, tuple[float, tuple]] = runcache.table("torch_jit_walks")  # one run's (cuda/cpp/runcache.py)
    hit = walks.get(str(root))
    now = time.monotonic()
    if hit is None or now - hit[0] >= STAMP_TTL:
        if len(walks) > 64:
            walks.clear()
        hit = walks[str(root)] = (now, _stamps(root))
    # The files that held a load() when last read are checked every time: an edit there is seen at once.
    return hit[1], tuple(_stamp(Path(p)) for p in _seen().get(str(root), ()))


def _seen() -> dict[str, list[str]]:
    """root -> the Python files that held a load() when the tree was last read, this run."""
    return runcache.table("torch_jit_seen")


def _stamp(p: Path):
    try:
        st = p.stat()
        return (str(p), st.st_size, st.st_mtime_ns)
    except OSError:
        return (str(p), None, None)


def _stamps(root: Path) -> tuple:
    out = []
    for p in _python_files(root):
        try:
            st = p.stat()
            out.append((str(p), st.st_size, st.st_mtime_ns))
        except OSError:
            continue
    return tuple(out)


def loads(root: Path) -> tuple[list[Load], list[str]]:
    """(every load() of the tree's Python with in-tree .cu sources, the files read)."""
    out: list[Load] = []
    reads: list[str] = []
    for p in _python_files(root):
        try:
            if p.is_symlink() or p.stat().st_size > MAX_BYTES:
                continue
            raw = p.read_bytes()
        except OSError:
            continue
        if b"cpp_extension" not in raw or b"load(" not in raw:
            continue
        reads.append(str(p))  # a candidate: watched for edits (stamps)
        out.extend(_file_loads(p, raw, root))
    _seen()[str(root)] = reads
    return out, reads


def _file_loads(path: Path, raw: bytes, root: Path) -> list[Load]:
    tree = parse(raw)
    if tree is None:
        return []
    names = _loader_names(tree)
    if not names:
        return []
    m = Module(path, tree)
    reader = jit_specs.Reader(root, {"specs": {"call": "", "running_call": "", "dirs": {}}})
    reader.mods[path] = m
    parents = {id(c): p for p in ast.walk(tree) for c in ast.iter_child_nodes(p)}
    out = []
    for call in ast.walk(tree):
        if not (isinstance(call, ast.Call) and dotted(call.func) in names):
            continue
        fn = _enclosing(call, parents)
        srcs = arg(call, 1, "sources")
        paths = [p for p in _paths(srcs, path, m, fn) if p.suffix in (".cu", ".cuh") and p.is_file()
                 and includes.inside(p, root)]
        if not paths:
            continue
        flags = arg(call, 3, "extra_cuda_cflags")
        alts = [jit_specs.Alt()] if flags is None else reader.alts(flags, m, fn, 0)
        name = arg(call, 0, "name")
        name = name.value if isinstance(name, ast.Constant) and isinstance(name.value, str) else None
        out.append(Load(f"{jit_specs.py_rel(path, root)} line {call.lineno}", path, name, paths, alts))
    return out


def _loader_names(tree: ast.Module) -> set[str]:
    """How the module spells torch.utils.cpp_extension.load."""
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module in ("torch.utils.cpp_extension", "torch.utils"):
            for a in node.names:
                if node.module == "torch.utils.cpp_extension" and a.name == "load":
                    out.add(a.asname or "load")
                elif node.module == "torch.utils" and a.name == "cpp_extension":
                    out.add(f"{a.asname or 'cpp_extension'}.load")
        elif isinstance(node, ast.Import):
            for a in node.names:
                if a.name == "torch.utils.cpp_extension":
                    out.add(f"{a.asname}.load" if a.asname else "torch.utils.cpp_extension.load")
                elif a.name == "torch":
                    out.add(f"{a.asname or 'torch'}.utils.cpp_extension.load")
    return out




def _enclosing(node, parents):
    p = parents.get(id(node))
    while p is not None and not isinstance(p, (ast.FunctionDef, ast.AsyncFunctionDef)):
        p = parents.get(id(p))
    return p


def _paths(expr, here: Path, m, fn, depth: int = 0) -> list[Path]:
    """The files a sources list names, where each is built from the module's own folder."""
    if expr is None or depth > 6:
        return []
    if isinstance(expr, (ast.List, ast.Tuple)):
        return [p for el in expr.elts for p in _paths(el, here, m, fn, depth + 1)]
    if isinstance(expr, ast.Name):
        vals = m.lookup(expr.id, fn)[0]
        return _paths(vals[0], here, m, fn, depth + 1) if vals and len(vals) == 1 else []
    if isinstance(expr, ast.Call) and dotted(expr.func) in ("str", "os.fspath") and len(expr.args) == 1:
        return _paths(expr.args[0], here, m, fn, depth + 1)
    d = _folder(expr, here, m, fn, depth)
    if d is not None:
        return [d]
    return []


def _folder(expr, here: Path, m, fn, depth: int) -> Path | None:
    """A path expression rooted at the module's own folder: ``os.path.dirname(__file__)``,
    ``Path(__file__).parent`` (``.resolve()``/``.absolute()`` too), joined with literals."""
    if depth > 8:
        return None
    if isinstance(expr, ast.Name):
        vals = m.lookup(expr.id, fn)[0]
        return _folder(vals[0], here, m, fn, depth + 1) if vals and len(vals) == 1 else None
    if isinstance(expr, ast.Call):
        f = dotted(expr.func)
        if f in ("os.path.dirname",) and len(expr.args) == 1:
            inner = expr.args[0]
            if _is_file(inner):
                return here.parent
            base = _folder(inner, here, m, fn, depth + 1)
            return base.parent if base is not None else None
        if f in ("os.path.abspath", "os.path.realpath", "os.path.normpath") and len(expr.args) == 1:
            if _is_file(expr.args[0]):
                return here
            return _folder(expr.args[0], here, m, fn, depth + 1)
        if f == "os.path.join" and expr.args:
            base = _folder(expr.args[0], here, m, fn, depth + 1)
            rest = [a.value for a in expr.args[1:] if isinstance(a, ast.Constant) and isinstance(a.value, str)]
            if base is None or len(rest) != len(expr.args) - 1:
                return None
            return base.joinpath(*rest)
        if f in ("Path", "pathlib.Path") and len(expr.args) == 1 and _is_file(expr.args[0]):
            return here
        if isinstance(expr.func, ast.Attribute) and expr.func.attr in ("resolve", "absolute") and not expr.args:
            return _folder(expr.func.value, here, m, fn, depth + 1)
    if isinstance(expr, ast.Attribute) and expr.attr == "parent":
        base = _folder(expr.value, here, m, fn, depth + 1)
        return base.parent if base is not None else None
    if isinstance(expr, ast.BinOp) and isinstance(expr.op, ast.Div) and isinstance(expr.right, ast.Constant) \
            and isinstance(expr.right.value, str):
        base = _folder(expr.left, here, m, fn, depth + 1)
        return base / expr.right.value if base is not None else None
    if isinstance(expr, ast.JoinedStr) and len(expr.values) == 2 and isinstance(expr.values[0], ast.FormattedValue) \
            and isinstance(expr.values[1], ast.Constant) and str(expr.values[1].value).startswith("/"):
        base = _folder(expr.values[0].value, here, m, fn, depth + 1)
        return base / expr.values[1].value.lstrip("/") if base is not None else None
    return None


def _is_file(expr) -> bool:
    return isinstance(expr, ast.Name) and expr.id == "__file__"
