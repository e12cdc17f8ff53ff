"""The CUDA extensions a setup.py declares, read through a LibCST parse (never run).

For each ``CUDAExtension(name, sources=[...], extra_compile_args={"nvcc": FLAGS},
include_dirs=[...])``: its sources and its nvcc flags, with FLAGS followed where
it is a list the module builds: ``NVCC = [...]``, ``NVCC += [...]``,
``NVCC.extend(...)``/``.append(...)``, ``[...] + helper()`` with the helper's
``return`` (its own list built the same way). Flags built at run time
(f-strings, values from the environment) are *dynamic*: what they add is
known only as "the arch list the user builds with".
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

import libcst as cst

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
    def __init__(self, module: cst.Module, text: str, here: Path) -> None:
        self.module = module
        self.text = text
        self.here = here
        self.pos = cst.metadata.MetadataWrapper(module, unsafe_skip_copy=True)
        self.lines = self.pos.resolve(cst.metadata.PositionProvider)
        self.functions: dict[str, cst.FunctionDef] = {}
        self.bindings: dict[int, dict[str, list]] = {}  # scope id -> name -> [assigned/extended exprs]
        self._collect(self.pos.module, 0)

    def _collect(self, node, scope: int) -> None:
        """Assignments, ``+=``, ``.extend``/``.append`` per name, per function scope."""
        for child in _walk(node):
            if isinstance(child, cst.FunctionDef):
                self.functions[child.name.value] = child
                self._collect(child.body, id(child))
                continue
            b = self.bindings.setdefault(scope, {})
            if isinstance(child, cst.Assign):
                for t in child.targets:
                    if isinstance(t.target, cst.Name):
                        b.setdefault(t.target.value, []).append(("set", child.value))
            elif isinstance(child, cst.AnnAssign) and isinstance(child.target, cst.Name) and child.value is not None:
                b.setdefault(child.target.value, []).append(("set", child.value))
            elif isinstance(child, cst.AugAssign) and isinstance(child.target, cst.Name) \
                    and isinstance(child.operator, cst.AddAssign):
                b.setdefault(child.target.value, []).append(("add", child.value))
            elif isinstance(child, cst.Call) and isinstance(child.func, cst.Attribute) \
                    and isinstance(child.func.value, cst.Name) and child.func.attr.value in ("extend", "append") \
                    and child.args:
                kind = "add" if child.func.attr.value == "extend" else "one"
                b.setdefault(child.func.value.value, []).append((kind, child.args[0].value))

    def flags(self, expr, scope: int, depth: int = 0) -> Flags | None:
        if depth > MAX_DEPTH:
            return None
        if isinstance(expr, (cst.List, cst.Tuple)):
            out = Flags()
            for el in expr.elements:
                if isinstance(el, cst.StarredElement):
                    sub = self.flags(el.value, scope, depth + 1)
                else:
                    sub = self.one(el.value, scope)
                if sub is None:
                    return None
                out = out + sub
            return out
        if isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, cst.Add):
            a, b = self.flags(expr.left, scope, depth + 1), self.flags(expr.right, scope, depth + 1)
            return a + b if a is not None and b is not None else None
        if isinstance(expr, cst.Name):
            return self.name(expr.value, scope, depth)
        if isinstance(expr, cst.Call) and isinstance(expr.func, cst.Name) and expr.func.value in self.functions:
            fn = self.functions[expr.func.value]
            rets = [r.value for r in _walk_all(fn.body) if isinstance(r, cst.Return) and r.value is not None]
            if len(rets) != 1:
                return None
            return self.flags(rets[0], id(fn), depth + 1)
        if isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute) and expr.func.attr.value == "split":
            return Flags(dynamic=[self.module.code_for_node(expr)])  # e.g. os.getenv("NVCC_APPEND").split()
        return None

    def one(self, expr, scope: int) -> Flags | None:
        if isinstance(expr, (cst.SimpleString, cst.ConcatenatedString)):
            v = expr.evaluated_value
            return Flags([v]) if isinstance(v, str) else None
        if isinstance(expr, cst.FormattedString):
            return Flags(dynamic=[self.module.code_for_node(expr)])
        if isinstance(expr, cst.Name):
            got = self.name(expr.value, scope, 0)
            if got is not None and len(got.strings) + len(got.dynamic) == 1:
                return got
            return Flags(dynamic=[expr.value])
        return Flags(dynamic=[self.module.code_for_node(expr)])

    def name(self, name: str, scope: int, depth: int) -> Flags | None:
        for sc in (scope, 0) if scope else (0,):
            entries = self.bindings.get(sc, {}).get(name)
            if not entries:
                continue
            sets = [e for k, e in entries if k == "set"]
            if len(sets) != 1:
                return None  # rebound: which value reaches the call is not known here
            out = self.flags(sets[0], sc, depth + 1)
            if out is None:
                return None
            for kind, e in entries:
                if kind == "add":
                    more = self.flags(e, sc, depth + 1)
                elif kind == "one":
                    more = self.one(e, sc)
                else:
                    continue
                if more is None:
                    return None
                out = out + more
            return out
        return None

    def strings(self, expr, scope: int) -> list[str] | None:
        f = self.flags(expr, scope)
        if f is None or f.dynamic:
            return None
        return f.strings

    def path_of(self, expr) -> Path | None:
        """``Path(this_dir) / "csrc"``, ``os.path.join(this_dir, "csrc")`` or a literal:
        a directory below setup.py's (a bare name as the base stands for that directory,
        the ``this_dir = os.path.dirname(__file__)`` idiom)."""
        parts: list[str] = []
        while isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, cst.Divide):
            if not isinstance(expr.right, cst.SimpleString):
                return None
            parts.insert(0, expr.right.evaluated_value)
            expr = expr.left
        if isinstance(expr, cst.Call) and _dotted(expr.func) in ("os.path.join", "path.join") and expr.args:
            rest = expr.args[1:]
            if not all(isinstance(a.value, cst.SimpleString) for a in rest):
                return None
            parts = [a.value.evaluated_value for a in rest] + parts
            expr = expr.args[0].value
        if isinstance(expr, cst.SimpleString):
            parts.insert(0, expr.evaluated_value)
        elif not isinstance(expr, (cst.Name, cst.Call)):
            return None
        return self.here.joinpath(*parts) if parts else self.here


def _dotted(node) -> str:
    if isinstance(node, cst.Name):
        return node.value
    if isinstance(node, cst.Attribute):
        return _dotted(node.value) + "." + node.attr.value
    return ""


def _walk(node):
    """Descendants of ``node``, not entering nested function bodies (yielded, not walked)."""
    stack = [node]
    while stack:
        n = stack.pop()
        for c in reversed(list(n.children)):
            yield c
            if not isinstance(c, cst.FunctionDef):
                stack.append(c)


def _walk_all(node):
    stack = [node]
    while stack:
        n = stack.pop()
        for c in n.children:
            yield c
            if not isinstance(c, (cst.FunctionDef, cst.Lambda)):
                stack.append(c)


def _arg(call: cst.Call, index: int, keyword: str):
    for k, a in enumerate(call.args):
        if a.keyword is not None and a.keyword.value == keyword:
            return a.value
    pos = [a for a in call.args if a.keyword is None and not a.star]
    return pos[index].value if index < len(pos) else None


def extensions(path: Path, text: str) -> list[Extension]:
    """Every CUDAExtension the setup.py at ``path`` declares (nothing on a parse error)."""
    try:
        module = cst.parse_module(text)
    except Exception:  # a setup.py that does not parse declares nothing we can read
        return []
    try:
        r = _Reader(module, text, path.parent)
    except RecursionError:
        return []
    arch_env = "TORCH_CUDA_ARCH_LIST" in text or "get_device_capability" in text
    env_list = None
    out = []
    for node in _walk_all(r.pos.module):
        if isinstance(node, cst.Assign) and isinstance(node.value, cst.SimpleString):
            t = node.targets[0].target
            if isinstance(t, cst.Subscript) and "environ" in module.code_for_node(t.value) \
                    and "TORCH_CUDA_ARCH_LIST" in module.code_for_node(t.slice[0]):
                env_list = node.value.evaluated_value
        if not isinstance(node, cst.Call) or not _dotted(node.func).endswith("CUDAExtension"):
            continue
        scope = _scope_of(r, node)
        name_expr = _arg(node, 0, "name")
        name = name_expr.evaluated_value if isinstance(name_expr, cst.SimpleString) else "?"
        src_expr = _arg(node, 1, "sources")
        sources = []
        for s in (r.strings(src_expr, scope) or []) if src_expr is not None else []:
            sources.append(Path(s) if Path(s).is_absolute() else path.parent / s)
        flags = Flags()
        args = _arg(node, 99, "extra_compile_args")
        if isinstance(args, cst.Name):
            sets = [e for k, e in r.bindings.get(scope, {}).get(args.value, []) + r.bindings.get(0, {}).get(args.value, [])
                    if k == "set"]
            args = sets[0] if len(sets) == 1 else None
            flags = flags if args is not None else None
        if isinstance(args, cst.Dict):
            nv = [el.value for el in args.elements if isinstance(el, cst.DictElement)
                  and isinstance(el.key, cst.SimpleString) and el.key.evaluated_value == "nvcc"]
            flags = r.flags(nv[0], scope) if nv else Flags()
        elif isinstance(args, (cst.List, cst.Tuple, cst.BinaryOperation)):
            flags = r.flags(args, scope)  # a plain list goes to every compiler, nvcc included
        elif args is not None:
            flags = None
        inc = []
        inc_expr = _arg(node, 99, "include_dirs")
        if isinstance(inc_expr, (cst.List, cst.Tuple)):
            for el in inc_expr.elements:
                p = r.path_of(el.value)
                if p is not None:
                    inc.append(p)
        line = r.lines[node].start.line
        defines, known = _defines(r, node, scope, flags)
        lim = _arg(node, 99, "py_limited_api")
        limited = lim is not None and not (isinstance(lim, cst.Name) and lim.value == "False")
        out.append(Extension(name, line, sources, flags, inc, arch_env, env_list, defines, known, limited))
    return out


_DEFINE_TEXT = re.compile(r"""^[rRbBuUfF]*["']-D\s*([A-Za-z_]\w*)""")
_ARCH_TEXT = re.compile(r"arch|gencode|sm_|compute_")
UNKNOWN_VALUE = "__aicompat_unknown__"  # the preprocessor reads it as a value not known here


def _defines(r: _Reader, call: cst.Call, scope: int, flags: Flags | None) -> tuple[dict[str, str], bool]:
    """The -D macros of the device compile: ``define_macros`` (torch passes them to nvcc
    too, as ``pp_opts``) then the nvcc flags, in that order; and whether that is all of
    them (no flag built at run time that may be a -D)."""
    out: dict[str, str] = {}
    known = flags is not None
    macros = _arg(call, 99, "define_macros")
    if macros is not None:
        pairs = _macro_pairs(r, macros, scope)
        if pairs is None:
            known = False
        else:
            out.update(pairs)
    undef = _arg(call, 99, "undef_macros")
    for u in (r.strings(undef, scope) or []) if undef is not None else []:
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


def _macro_pairs(r: _Reader, expr, scope: int, depth: int = 0) -> dict[str, str] | None:
    """``[("FOO", None), ("BAR", "1")]`` (setuptools' define_macros); None when not literal."""
    if depth > MAX_DEPTH:
        return None
    if isinstance(expr, cst.Name):
        entries = r.bindings.get(scope, {}).get(expr.value, []) + r.bindings.get(0, {}).get(expr.value, [])
        if [k for k, _e in entries] != ["set"]:
            return None  # rebound or extended: not read
        return _macro_pairs(r, entries[0][1], scope, depth + 1)
    if isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, cst.Add):
        a, b = _macro_pairs(r, expr.left, scope, depth + 1), _macro_pairs(r, expr.right, scope, depth + 1)
        return {**a, **b} if a is not None and b is not None else None
    if not isinstance(expr, (cst.List, cst.Tuple)):
        return None
    out: dict[str, str] = {}
    for el in expr.elements:
        t = el.value
        if not isinstance(t, cst.Tuple) or len(t.elements) != 2:
            return None
        k, v = t.elements[0].value, t.elements[1].value
        if not isinstance(k, cst.SimpleString) or not isinstance(k.evaluated_value, str):
            return None
        if isinstance(v, cst.Name) and v.value == "None":
            out[k.evaluated_value] = "1"
        elif isinstance(v, cst.SimpleString) and isinstance(v.evaluated_value, str):
            out[k.evaluated_value] = v.evaluated_value
        else:
            out[k.evaluated_value] = UNKNOWN_VALUE
    return out


def _scope_of(r: _Reader, node) -> int:
    """The function whose body holds ``node`` (0: module level)."""
    for fn in r.functions.values():
        pos, fpos = r.lines.get(node), r.lines.get(fn)
        if pos and fpos and fpos.start.line <= pos.start.line <= fpos.end.line:
            return id(fn)
    return 0
