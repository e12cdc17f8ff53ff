"""JIT front-ends that list their CUDA sources in Python (FlashInfer's ``gen_jit_spec``).

FlashInfer builds each module at run time, on the GPU it runs on, from a call such as
``gen_jit_spec(name, [jit_env.FLASHINFER_CSRC_DIR / "x.cu"], extra_cuda_cflags=FLAGS)``
where FLAGS is a fixed per-arch list (``sm90a_nvcc_flags``: one ``-gencode``) or the
running GPU's own target (``current_compilation_context.get_nvcc_flags_list(
supported_major_versions=[10, 11])``), possibly with ``-D`` flags added. This module reads
those calls with Python's own parser (never runs them) and says, per in-tree source, how
each spec that lists it is compiled: ``Spec``. What it cannot read is unknown, never a guess.
The names it looks for are data (version_matrix/cuda_jit.toml ``specs``).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from pathlib import Path

from ..cpp import includes
from .jit_flags import EVERY, MAX_DEPTH, Alt, FlagLists
from .jit_values import Values
from .pyeval import Module, arg, parse, returns, tail

__all__ = ["EVERY", "MAX_FILES", "Alt", "Reader", "Spec", "py_rel"]

MAX_FILES = 400


@dataclass
class Spec:
    where: str  # "flashinfer/jit/gemm/core.py line 903 (gen_gemm_sm90_module)"
    sources: list[Path] = field(default_factory=list)
    alts: list[Alt] | None = None  # None: the flags are not known here
    defines: dict = field(default_factory=dict)  # from a generated translation unit: name -> value (None: not known)
    only: dict = field(default_factory=dict)  # source -> the running majors it is added on (a target check around it)
    function: str = ""  # the function that makes the spec


class Reader(Values, FlagLists):
    """The specs of one front-end: ``e`` is its cuda_jit.toml entry, ``base`` its root."""

    def __init__(self, base: Path, e: dict) -> None:
        self.base = base
        self.e = e["specs"]
        self.mods: dict[Path, Module | None] = {}
        self._held: dict[tuple, list] = {}  # (scope, name) -> its ways so far, while a self-reading value is read
        self.reads: list[str] = []

    def module(self, path: Path) -> Module | None:
        if path not in self.mods:
            self.mods[path] = None
            text = includes.read(path)
            tree = parse(text) if text is not None else None
            if tree is not None:
                try:
                    self.mods[path] = Module(path, tree)
                    self.reads.append(str(path))
                except RecursionError:
                    pass
        return self.mods[path]

    def specs(self) -> list[Spec]:
        folder = self.base / self.e["dir"]
        out: list[Spec] = []
        if not folder.is_dir():
            return out
        for n, py in enumerate(sorted(folder.rglob("*.py"))):
            if n >= MAX_FILES:
                break
            m = self.module(py)
            if m is not None:
                out.extend(self._module_specs(m))
        return out

    def _module_specs(self, m: Module) -> list[Spec]:
        out = []
        for fn in m.functions.values():
            calls = [c for c in ast.walk(fn) if isinstance(c, ast.Call) and tail(c.func) == self.e["call"]]
            for c in calls:
                srcs = arg(c, 1, "sources")
                paths = self._paths(srcs, m, fn) if srcs is not None else []
                only: dict[Path, frozenset] = {}
                if isinstance(srcs, ast.Name) and len(calls) == 1:
                    paths, only = self._function_paths(fn, m)  # a list filled in the function (generated files too)
                defines: dict = {}
                if srcs is not None and not any(p.is_file() for p in paths):
                    # a generated translation unit: the in-tree files its text includes
                    paths, defines = self.generated(c, srcs, m, fn, self.e.get("writers", []), self._include_dirs(c, m, fn))
                flags = arg(c, 3, "extra_cuda_cflags")
                alts = [Alt()] if flags is None else self.alts(flags, m, fn, 0)
                rel = py_rel(m.path, self.base)
                out.append(Spec(f"{rel} line {c.lineno} ({fn.name})", [p for p in paths if p.is_file()], alts,
                                defines, only, fn.name))
        return out

    def _include_dirs(self, call: ast.Call, m: Module, fn) -> list[Path]:
        """The in-tree folders of ``extra_include_paths`` (where a generated file's includes are found)."""
        got = arg(call, 5, "extra_include_paths")
        out = []
        for el in got.elts if isinstance(got, (ast.List, ast.Tuple)) else []:
            out.extend(p for p in self._path(el, m, fn) if p.is_dir())
        return list(dict.fromkeys(out))

    # -- sources ------------------------------------------------------------------------
    def _paths(self, expr, m: Module, fn) -> list[Path]:
        if isinstance(expr, (ast.List, ast.Tuple)):
            return [p for el in expr.elts for p in self._paths(el, m, fn)]
        return self._path(expr, m, fn)

    def _path(self, expr, m: Module, fn, loop: dict | None = None, depth: int = 0) -> list[Path]:
        """``jit_env.FLASHINFER_CSRC_DIR / "a" / f"{STEMS[v]}.cu"`` as the paths in the tree it can be
        (a name set once to such a path, or a module function returning one, also counts)."""
        if depth > MAX_DEPTH:
            return []
        parts: list[list[str]] = []
        while isinstance(expr, ast.BinOp) and isinstance(expr.op, ast.Div):
            r = expr.right
            if loop is not None and isinstance(r, ast.Name) and r.id in loop:
                parts.append([loop[r.id]])
            else:
                got = self._strs(r, m, fn)
                if not got:
                    return []
                parts.append(got)
            expr = expr.left
        d = self.e["dirs"].get(tail(expr) or "")
        if isinstance(expr, ast.Attribute) and expr.attr == "parent" and not parts:
            return [b.parent for b in self._path(expr.value, m, fn, None, depth + 1)]  # csrc_dir.parent
        if d is not None:
            bases = [self.base / d]
        elif isinstance(expr, ast.Name) and fn is not None and len(m.local(expr.id, fn)) == 1:
            bases = self._path(m.local(expr.id, fn)[0], m, fn, None, depth + 1)
        elif isinstance(expr, ast.Call) and isinstance(expr.func, ast.Name) and expr.func.id in m.functions:
            helper = m.functions[expr.func.id]
            rets = [r.value for r in returns(helper) if r.value is not None]
            bases = [p for r in rets for p in self._path(r, m, helper, None, depth + 1)][:1]
        else:
            return []
        if not parts and d is not None:
            return []
        out = bases
        for alts in reversed(parts):
            out = [b / a for b in out for a in alts][:64]
        return out

    def _strs(self, expr, m: Module, fn=None) -> list[str]:
        """The strings a path part can be: a literal, an f-string whose fields index a
        module-level dict of strings (any of its values), or a table entry's field
        (``META[variant].body``, ``f"x_{variant}.cu"`` with ``variant`` checked against a tuple)."""
        if isinstance(expr, ast.Constant) and isinstance(expr.value, str):
            return [expr.value]
        got = self.values(expr, m, fn)
        if got and all(isinstance(v, str) for v in got):
            return got
        if isinstance(expr, ast.JoinedStr):
            out = [""]
            for v in expr.values:
                if isinstance(v, ast.Constant) and isinstance(v.value, str):
                    got = [v.value]
                elif isinstance(v, ast.FormattedValue) and v.format_spec is None:
                    got = self._dict_values(v.value, m)
                else:
                    got = []
                if not got:
                    return []
                out = [a + b for a in out for b in got][:64]
            return out
        return []

    def _dict_values(self, expr, m: Module) -> list:
        """``TABLE[key]`` with TABLE a module-level dict literal: all of its values' nodes as strings."""
        table = self._table(expr, m)
        if table is None:
            return []
        vals = [v.value for v in table.values if isinstance(v, ast.Constant) and isinstance(v.value, str)]
        return vals if len(vals) == len(table.values) else []

    @staticmethod
    def _table(expr, m: Module) -> ast.Dict | None:
        if isinstance(expr, ast.Subscript) and isinstance(expr.value, ast.Name):
            vals = m.lookup(expr.value.id)[0]
            if len(vals) == 1 and isinstance(vals[0], ast.Dict) and None not in vals[0].keys:
                return vals[0]
        return None

    def _function_paths(self, fn, m: Module) -> tuple[list[Path], dict]:
        """Every in-tree source path the function names, also through ``for f in ["a.cu", ...]``;
        and the running majors of those it names only under a target check
        (``if _has_sm90_target(): sources.append(...)``, cuda_jit.toml specs.target_checks)."""
        loops: list[tuple[str, list[str]]] = []
        for node in ast.walk(fn):
            if isinstance(node, ast.For) and isinstance(node.target, ast.Name) and isinstance(node.iter, (ast.List, ast.Tuple)):
                vals = [el.value for el in node.iter.elts if isinstance(el, ast.Constant) and isinstance(el.value, str)]
                loops.append((node.target.id, vals))
        checked: dict[int, frozenset] = {}
        for node in ast.walk(fn):
            majors = self._target_check(node.test) if isinstance(node, ast.If) else None
            if majors is not None:
                for st in node.body:
                    for sub in ast.walk(st):
                        checked[id(sub)] = majors
        out: list[Path] = []
        only: dict[Path, frozenset] = {}
        plain: set[Path] = set()  # named outside any check too: not restricted
        for node in ast.walk(fn):
            if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div):
                got = self._path(node, m, fn)
                for var, vals in loops:
                    for v in vals:
                        got.extend(self._path(node, m, fn, {var: v}))
                for p in got:
                    if id(node) in checked:
                        only[p] = only.get(p, frozenset()) | checked[id(node)]
                    else:
                        plain.add(p)
                out.extend(got)
        return list(dict.fromkeys(out)), {p: v for p, v in only.items() if p not in plain}

    def _target_check(self, test) -> frozenset | None:
        """The running majors a condition requires: a call named in specs.target_checks, alone
        or in an ``and``."""
        checks = self.e.get("target_checks", {})
        parts = test.values if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And) else [test]
        for t in parts:
            if isinstance(t, ast.Call) and tail(t.func) in checks:
                return frozenset(checks[tail(t.func)])
        return None


def py_rel(p: Path, base: Path) -> str:
    try:
        return p.relative_to(base).as_posix()
    except ValueError:
        return p.name
