"""The CUDA extensions a setup.py declares, read with Python's parser through pyeval (never run).

For each ``CUDAExtension(name, sources=[...], extra_compile_args={"nvcc": FLAGS},
include_dirs=[...])``: its sources and its nvcc flags, with FLAGS followed where
it is a list the module builds: ``NVCC = [...]``, ``NVCC += [...]``,
``NVCC.extend(...)``/``.append(...)``, ``[...] + helper()`` with the helper's
``return`` (its own list built the same way). Flags built at run time
(f-strings, values from the environment) are *dynamic*: what they add is
known only as "the arch list the user builds with".
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field
from pathlib import Path

from .pyeval import UNKNOWN_VALUE, Grown, Module, arg, dotted, parse, returns, shallow_walk

MAX_DEPTH = 6


@dataclass
class Flags:
    strings: list[str] = field(default_factory=list)
    dynamic: list[str] = field(default_factory=list)  # source text of what is built at run time

    def __add__(self, other: "Flags") -> "Flags":
        return Flags(self.strings + other.strings, self.dynamic + other.dynamic)


@dataclass
class Extension:
    name: str
    line: int
    sources: list[Path]
    flags: Flags | None  # nvcc flags; None when they cannot be read
    include_dirs: list[Path]
    arch_env: bool  # the file reads TORCH_CUDA_ARCH_LIST or the build machine's GPUs
    env_arch_list: str | None  # a literal os.environ["TORCH_CUDA_ARCH_LIST"] = "..." it sets
    defines: dict[str, str] = field(default_factory=dict)  # -D macros nvcc gets (value "" for a bare -DX: 1)
    defines_known: bool = False  # every -D nvcc gets is in ``defines`` (besides torch's own)
    limited_api: bool = False  # py_limited_api= is given (torch then adds -DPy_LIMITED_API=...)


class _Reader:
    """Flag lists of one setup.py, read through its bindings (pyeval.Module): scope ``fn`` is the
    function whose names are read first (None: the module)."""

    def __init__(self, tree: ast.Module, text: str, path: Path) -> None:
        self.text = text
        self.here = path.parent
        self.m = Module(path, tree)

    def code(self, node) -> str:
        return ast.get_source_segment(self.text, node) or ""

    def flags(self, expr, fn, depth: int = 0) -> Flags | None:
        if depth > MAX_DEPTH:
            return None
        if isinstance(expr, (ast.List, ast.Tuple)):
            out = Flags()
            for el in expr.elts:
                if isinstance(el, ast.Starred):
                    sub = self.flags(el.value, fn, depth + 1)
                else:
                    sub = self.one(el, fn)
                if sub is None:
                    return None
                out = out + sub
            return out
        if isinstance(expr, ast.BinOp) and isinstance(expr.op, ast.Add):
            a, b = self.flags(expr.left, fn, depth + 1), self.flags(expr.right, fn, depth + 1)
            return a + b if a is not None and b is not None else None
        if isinstance(expr, ast.Name):
            return self.name(expr.id, fn, depth)
        if isinstance(expr, ast.Call) and isinstance(expr.func, ast.Name) and expr.func.id in self.m.defs:
            helper = self.m.defs[expr.func.id]
            rets = [r.value for r in returns(helper) if r.value is not None]
            if len(rets) != 1:
                return None
            return self.flags(rets[0], helper, depth + 1)
        if isinstance(expr, ast.Call) and isinstance(expr.func, ast.Attribute) and expr.func.attr == "split":
            return Flags(dynamic=[self.code(expr)])  # e.g. os.getenv("NVCC_APPEND").split()
        return None

    def one(self, expr, fn) -> Flags | None:
        if isinstance(expr, ast.Constant) and isinstance(expr.value, (str, bytes)):
            return Flags([expr.value]) if isinstance(expr.value, str) else None
        if isinstance(expr, ast.Name):
            got = self.name(expr.id, fn, 0)
            if got is not None and len(got.strings) + len(got.dynamic) == 1:
                return got
            return Flags(dynamic=[expr.id])
        return Flags(dynamic=[self.code(expr)])  # an f-string, a call, a constant that is not text

    def name(self, name: str, fn, depth: int) -> Flags | None:
        """A name set once, then grown (``+=``, ``.extend``, ``.append``): what it holds at the end."""
        entries, where = self.m.lookup(name, fn)
        if not entries:
            return None
        sets = [e for e in entries if not isinstance(e, Grown)]
        if len(sets) != 1:
            return None  # rebound: which value reaches the call is not known here
        out = self.flags(sets[0], where, depth + 1)
        for e in entries:
            if out is None:
                return None
            if isinstance(e, Grown):
                more = self.flags(e.right, where, depth + 1)
                out = out + more if more is not None else None
        return out

    def strings(self, expr, fn) -> list[str] | None:
        f = self.flags(expr, fn)
        if f is None or f.dynamic:
            return None
        return f.strings

    def path_of(self, expr) -> Path | None:
        """``Path(this_dir) / "csrc"``, ``os.path.join(this_dir, "csrc")`` or a literal:
        a directory below setup.py's (a bare name as the base stands for that directory,
        the ``this_dir = os.path.dirname(__file__)`` idiom)."""
        parts: list[str] = []
        while isinstance(expr, ast.BinOp) and isinstance(expr.op, ast.Div):
            if not _text(expr.right):
                return None
            parts.insert(0, expr.right.value)
            expr = expr.left
        if isinstance(expr, ast.Call) and dotted(expr.func) in ("os.path.join", "path.join") and expr.args:
            rest = expr.args[1:]
            if not all(_text(a) for a in rest):
                return None
            parts = [a.value for a in rest] + parts
            expr = expr.args[0]
        if _text(expr):
            parts.insert(0, expr.value)
        elif not isinstance(expr, (ast.Name, ast.Call)):
            return None
        return self.here.joinpath(*parts) if parts else self.here


def _text(expr) -> bool:
    return isinstance(expr, ast.Constant) and isinstance(expr.value, str)


def extensions(path: Path, text: str) -> list[Extension]:
    """Every CUDAExtension the setup.py at ``path`` declares at module level, outside its
    functions (nothing on a parse error)."""
    tree = parse(text)
    if tree is None:
        return []  # a setup.py that does not parse declares nothing we can read
    try:
        r = _Reader(tree, text, path)
    except RecursionError:
        return []
    arch_env = "TORCH_CUDA_ARCH_LIST" in text or "get_device_capability" in text
    env_list = None
    out = []
    for node in shallow_walk(r.m.tree):
        if isinstance(node, ast.Assign) and _text(node.value):
            t = node.targets[0]
            if isinstance(t, ast.Subscript) and "environ" in r.code(t.value) \
                    and "TORCH_CUDA_ARCH_LIST" in r.code(t.slice):
                env_list = node.value.value
        if not isinstance(node, ast.Call) or not (dotted(node.func) or "").endswith("CUDAExtension"):
            continue
        name_expr = arg(node, 0, "name")
        name = name_expr.value if _text(name_expr) else "?"
        src_expr = arg(node, 1, "sources")
        sources = []
        for s in (r.strings(src_expr, None) or []) if src_expr is not None else []:
            sources.append(Path(s) if Path(s).is_absolute() else path.parent / s)
        flags: Flags | None = Flags()
        args = arg(node, None, "extra_compile_args")
        if isinstance(args, ast.Name):
            args = flags = None  # a name is not followed here
        if isinstance(args, ast.Dict):
            nv = [v for k, v in zip(args.keys, args.values) if _text(k) and k.value == "nvcc"]
            flags = r.flags(nv[0], None) if nv else Flags()
        elif isinstance(args, (ast.List, ast.Tuple, ast.BinOp)):
            flags = r.flags(args, None)  # a plain list goes to every compiler, nvcc included
        elif args is not None:
            flags = None
        inc = []
        inc_expr = arg(node, None, "include_dirs")
        if isinstance(inc_expr, (ast.List, ast.Tuple)):
            for el in inc_expr.elts:
                p = r.path_of(el)
                if p is not None:
                    inc.append(p)
        defines, known = _defines(r, node, flags)
        lim = arg(node, None, "py_limited_api")
        limited = lim is not None and not (isinstance(lim, ast.Constant) and lim.value is False)
        out.append(Extension(name, node.lineno, sources, flags, inc, arch_env, env_list, defines, known, limited))
    return out


_DEFINE_TEXT = re.compile(r"""^[rRbBuUfF]*["']-D\s*([A-Za-z_]\w*)""")
_ARCH_TEXT = re.compile(r"arch|gencode|sm_|compute_")


def _defines(r: _Reader, call: ast.Call, flags: Flags | None) -> tuple[dict[str, str], bool]:
    """The -D macros of the device compile: ``define_macros`` (torch passes them to nvcc
    too, as ``pp_opts``) then the nvcc flags, in that order; and whether that is all of
    them (no flag built at run time that may be a -D)."""
    out: dict[str, str] = {}
    known = flags is not None
    macros = arg(call, None, "define_macros")
    if macros is not None:
        pairs = _macro_pairs(macros)
        if pairs is None:
            known = False
        else:
            out.update(pairs)
    undef = arg(call, None, "undef_macros")
    for u in (r.strings(undef, None) or []) if undef is not None else []:
        out.pop(u, None)
    if flags is None:
        return out, False
    out.update(nvcc_defines(flags.strings))
    for d in flags.dynamic:
        m = _DEFINE_TEXT.match(d)
        if m:
            out[m.group(1)] = UNKNOWN_VALUE  # f"-D_GLIBCXX_USE_CXX11_ABI={ABI}"
        elif not _ARCH_TEXT.search(d):
            known = False  # os.getenv("NVCC_APPEND_FLAGS").split(): may hold any -D
    return out, known


def nvcc_defines(flags: list[str]) -> dict[str, str]:
    """``-DX``, ``-DX=v``, ``-D X``, ``--define-macro=X`` and ``-UX`` of an nvcc command, in
    order, also inside ``-Xcompiler``/``--compiler-options``: nvcc 13.0 passes those to the
    ``gcc -E`` that preprocesses the device pass too (``nvcc --dryrun -Xcompiler -DX``)."""
    out: dict[str, str] = {}
    toks = []
    for t in (t for f in flags for t in f.split()):
        host = next((o for o in ("-Xcompiler=", "--compiler-options=") if t.startswith(o)), None)
        if toks and toks[-1] in ("-Xcompiler", "--compiler-options"):
            toks[-1:] = t.strip("'\"").split(",")
        elif host is not None:
            toks.extend(t[len(host):].strip("'\"").split(","))
        else:
            toks.append(t)
    i = 0
    while i < len(toks):
        t = toks[i]
        val = None
        for opt in ("--define-macro", "-D", "--undefine-macro", "-U"):
            if t == opt and i + 1 < len(toks):
                val, i = (opt, toks[i + 1]), i + 1
            elif t.startswith(opt + "=") or (opt in ("-D", "-U") and t.startswith(opt)):
                val = (opt, t[len(opt):].lstrip("="))
            if val is not None:
                break
        i += 1
        if val is None or not val[1]:
            continue
        opt, body = val
        mname, _, mval = body.partition("=")
        if not re.fullmatch(r"[A-Za-z_]\w*", mname):
            continue
        if opt in ("-U", "--undefine-macro"):
            out.pop(mname, None)
        else:
            out[mname] = mval if "=" in body else "1"
    return out


def _macro_pairs(expr, depth: int = 0) -> dict[str, str] | None:
    """``[("FOO", None), ("BAR", "1")]`` (setuptools' define_macros); None when not literal
    (a name is not followed here)."""
    if depth > MAX_DEPTH or isinstance(expr, ast.Name):
        return None
    if isinstance(expr, ast.BinOp) and isinstance(expr.op, ast.Add):
        a, b = _macro_pairs(expr.left, depth + 1), _macro_pairs(expr.right, depth + 1)
        return {**a, **b} if a is not None and b is not None else None
    if not isinstance(expr, (ast.List, ast.Tuple)):
        return None
    out: dict[str, str] = {}
    for t in expr.elts:
        if not isinstance(t, ast.Tuple) or len(t.elts) != 2:
            return None
        k, v = t.elts
        if not _text(k):
            return None
        if isinstance(v, ast.Constant) and v.value is None:
            out[k.value] = "1"
        elif _text(v):
            out[k.value] = v.value
        else:
            out[k.value] = UNKNOWN_VALUE
    return out
