"""How a JIT spec's flag list comes out: ``Alt``, one way per branch a flag list can take.

``gen_jit_spec(..., extra_cuda_cflags=FLAGS)`` (FlashInfer) and torch's ``load(...,
extra_cuda_cflags=FLAGS)`` pass a list built from literals, module constants, ``+``,
``.append``, table entries' fields, a helper's returns and, for a parameter, what the module's
own callers pass; the running GPU's own target (``get_nvcc_flags_list``) is ``Alt.running``.
A mixin for jit_specs.Reader, read through pyeval; what it cannot read is None (not known).
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass

from .jit_values import Record
from .pyeval import UNKNOWN_VALUE, Module, arg, returns, tail

MAX_ALTS = 16
MAX_DEPTH = 8
EVERY = frozenset(range(100))  # the running GPU's target on every major


@dataclass(frozen=True)
class Alt:
    """One way a spec's flags come out: literal flags, plus the running GPU's own target
    when ``running`` is set (the compute-capability majors it is built for)."""

    flags: tuple = ()
    running: frozenset | None = None


class FlagLists:
    """Mixin for jit_specs.Reader: needs ``self.e`` (its specs entry), ``self._held``, ``self.module``
    and the Reader's ``_dict_values``/``_table``."""

    def alts(self, expr, m: Module, fn, depth: int) -> list[Alt] | None:
        """The ways ``expr`` (a flag list) comes out; None when any is not known."""
        if depth > MAX_DEPTH:
            return None
        if isinstance(expr, (ast.List, ast.Tuple)):
            out = [Alt()]
            for el in expr.elts:
                if isinstance(el, ast.Starred):
                    sub = self.alts(el.value, m, fn, depth + 1)
                elif isinstance(el, ast.Constant) and isinstance(el.value, str):
                    sub = [Alt((el.value,))]
                elif isinstance(el, ast.IfExp):
                    sub = self._one_of(el, m, fn, depth)
                elif self._dict_values(el, m):
                    sub = [Alt((v,)) for v in self._dict_values(el, m)]
                elif isinstance(el, ast.JoinedStr) and _include_flag(el):
                    sub = [Alt()]  # f"-I{dir}": names no target and no macro
                elif isinstance(el, ast.JoinedStr) and _define_prefix(el):
                    sub = [Alt((_define_prefix(el) + UNKNOWN_VALUE,))]  # f"-DBLOCK={n}": a value not known here
                else:
                    return None
                if sub is None:
                    return None
                out = _product(out, sub)
            return out
        if isinstance(expr, ast.BinOp) and isinstance(expr.op, ast.Add):
            terms = []  # a + b + c + ...: one level, however long the chain
            while isinstance(expr, ast.BinOp) and isinstance(expr.op, ast.Add):
                terms.append(expr.right)
                expr = expr.left
            out = self.alts(expr, m, fn, depth + 1)
            for t in reversed(terms):
                sub = self.alts(t, m, fn, depth + 1) if out is not None else None
                if sub is None:
                    return None
                out = _product(out, sub)
            return out
        if isinstance(expr, ast.Constant) and expr.value is None:
            return [Alt()]  # gen_jit_spec(extra_cuda_cflags=None): no flags (core.py L575-576)
        if isinstance(expr, ast.BoolOp) and isinstance(expr.op, ast.Or):
            out = []  # ``flags or []``: one side or the other
            for v in expr.values:
                sub = self.alts(v, m, fn, depth + 1)
                if sub is None:
                    return None
                out = (out + [a for a in sub if a not in out])[:MAX_ALTS]
            return out
        if isinstance(expr, ast.Attribute):
            got = self._field_alts(expr, m, fn, depth)
            if got is not None:
                return got
        if isinstance(expr, ast.IfExp):
            a, b = self.alts(expr.body, m, fn, depth + 1), self.alts(expr.orelse, m, fn, depth + 1)
            return (a + b)[:MAX_ALTS] if a is not None and b is not None else None
        if isinstance(expr, ast.Call):
            name = tail(expr.func)
            if name == "list" and len(expr.args) == 1:
                return self.alts(expr.args[0], m, fn, depth + 1)
            if name == self.e["running_call"]:
                majors = arg(expr, 0, "supported_major_versions")
                if majors is None or (isinstance(majors, ast.Constant) and majors.value is None):
                    return [Alt(running=EVERY)]
                if isinstance(majors, ast.Name):  # supported_major_versions=_SUPPORTED_MAJORS
                    majors = self._constant(majors.id, m, fn)
                if isinstance(majors, (ast.List, ast.Tuple)) and all(
                        isinstance(x, ast.Constant) and isinstance(x.value, int) for x in majors.elts):
                    return [Alt(running=frozenset(x.value for x in majors.elts))]
                return None
            if isinstance(expr.func, ast.Name) and expr.func.id in m.functions and expr.func.id != fn_name(fn):
                return self._returned(m.functions[expr.func.id], m, depth)
            return None
        if isinstance(expr, ast.Name):
            return self._name_alts(expr.id, m, fn, depth)
        table = self._table(expr, m)
        if table is not None:  # FLAGS_BY_TARGET[target]: any of its values
            out: list[Alt] = []
            for v in table.values:
                sub = self.alts(v, m, fn, depth + 1)
                if sub is None:
                    return None
                out = (out + sub)[:MAX_ALTS]
            return out
        return None

    def _returned(self, helper, m: Module, depth: int):
        """A module function's flag list: any of what its returns give (``return None``: no flags)."""
        rets = [r.value if r.value is not None else ast.Constant(None) for r in returns(helper)]
        if not rets:
            return None
        out: list[Alt] = []
        for r in rets:
            sub = self.alts(r, m, helper, depth + 1)
            if sub is None:
                return None
            out = (out + [a for a in sub if a not in out])[:MAX_ALTS]
        return out

    def _field_alts(self, expr: ast.Attribute, m: Module, fn, depth: int):
        """``*meta.extra_cuda_flags`` with ``meta`` an entry of a module table: any entry's field."""
        objs = self.values(expr.value, m, fn)
        if not objs or not all(isinstance(o, Record) for o in objs):
            return None
        out: list[Alt] = []
        for o in objs:
            node = o.get(expr.attr)
            sub = self.alts(node, o.m, None, depth + 1) if node is not None else None
            if sub is None:
                return None
            out = (out + [a for a in sub if a not in out])[:MAX_ALTS]
        return out

    @staticmethod
    def _constant(name: str, m: Module, fn):
        vals = m.lookup(name, fn)[0]
        return vals[0] if len(vals) == 1 else None

    def _one_of(self, expr: ast.IfExp, m, fn, depth):
        """``"-DX" if cond else ""``: one flag or the other."""
        out = []
        for side in (expr.body, expr.orelse):
            if isinstance(side, ast.Constant) and isinstance(side.value, str):
                out.append(Alt((side.value,) if side.value else ()))
            else:
                sub = self.alts(side, m, fn, depth + 1)
                if sub is None:
                    return None
                out.extend(sub)
        return out

    def _name_alts(self, name: str, m: Module, fn, depth: int):
        held = self._held.get((id(fn), name))
        if held is not None:
            return held
        if fn is not None:
            local = m.local(name, fn)
            if local:
                return self._assigned(local, m, fn, depth, name)
            params = [a.arg for a in fn.args.posonlyargs + fn.args.args]
            if name in params or name in [a.arg for a in fn.args.kwonlyargs]:
                return self._from_callers(fn, name, params.index(name) if name in params else None, m, depth)
        glob = m.lookup(name)[0]
        if glob:
            return self._assigned(glob, m, None, depth, name)
        src = m.imports.get(name)
        if src is not None and src.startswith("."):
            target = m.path.parent
            for _ in range(len(src) - len(src.lstrip(".")) - 1):
                target = target.parent
            other = self.module(target / (src.lstrip(".").replace(".", "/") + ".py"))
            if other is not None and other is not m:
                return self._name_alts(name, other, None, depth + 1)
        return None

    def _assigned(self, values: list, m, fn, depth: int, name: str = ""):
        """A name set once (``+=`` after it adds to each way it comes out); set several times: any of them.
        A value that reads the name itself (``flags = (flags or []) + common``, in a branch) is read
        with the name's ways so far, and adds its own."""
        out: list[Alt] = []
        for v in values:
            if isinstance(v, ast.BinOp) and isinstance(v.left, ast.Name) and v.left.id == name and out:
                right = self.alts(v.right, m, fn, depth + 1)
                if right is None:
                    return None
                out = _product(out, right)
                continue
            if out and any(isinstance(n, ast.Name) and n.id == name for n in ast.walk(v)):
                self._held[(id(fn), name)] = out
                try:
                    sub = self.alts(v, m, fn, depth + 1)
                finally:
                    del self._held[(id(fn), name)]
            else:
                sub = self.alts(v, m, fn, depth + 1)
            if sub is None:
                return None
            out = (out + [a for a in sub if a not in out])[:MAX_ALTS]
        return out or None

    def _from_callers(self, fn, name: str, index: int | None, m: Module, depth: int):
        """A parameter: what the module's own calls of the function pass for it; its default
        where a call passes nothing, or where the module never calls it (the package's own use)."""
        out: list[Alt] = []
        default = _default(fn, name)
        called = False
        for caller in m.functions.values():
            for c in ast.walk(caller):
                if isinstance(c, ast.Call) and tail(c.func) == fn.name and c.func.__class__ is ast.Name:
                    called = True
                    v = arg(c, index, name)
                    if v is None and not any(k.arg is None for k in c.keywords) \
                            and not any(isinstance(a, ast.Starred) for a in c.args):
                        v, at = default, None
                    else:
                        at = caller
                    sub = self.alts(v, m, at, depth + 1) if v is not None else None
                    if sub is None:
                        return None
                    out = (out + sub)[:MAX_ALTS]
        if not called and default is not None:
            return self.alts(default, m, None, depth + 1)
        return out or None


def _default(fn, name: str):
    """The default of parameter ``name`` (an ast node), or None when it has none."""
    pos = fn.args.posonlyargs + fn.args.args
    for a, d in zip(pos[len(pos) - len(fn.args.defaults):], fn.args.defaults):
        if a.arg == name:
            return d
    for a, d in zip(fn.args.kwonlyargs, fn.args.kw_defaults):
        if a.arg == name:
            return d
    return None


def _product(a: list[Alt], b: list[Alt]) -> list[Alt]:
    out = []
    for x in a:
        for y in b:
            run = None if x.running is None and y.running is None else \
                (x.running or frozenset()) | (y.running or frozenset())  # EVERY absorbs the others
            out.append(Alt(x.flags + y.flags, run))
    return out[:MAX_ALTS]


def _include_flag(expr: ast.JoinedStr) -> bool:
    first = expr.values[0] if expr.values else None
    return isinstance(first, ast.Constant) and isinstance(first.value, str) and first.value.startswith(("-I", "-isystem"))


def _define_prefix(expr: ast.JoinedStr) -> str:
    """``-DNAME=`` when an f-string is a -D flag with a known name and a computed value."""
    first = expr.values[0] if expr.values else None
    if isinstance(first, ast.Constant) and isinstance(first.value, str) and len(expr.values) > 1:
        m = re.match(r"-D[A-Za-z_]\w*=", first.value)  # also -DPATH=\\"{dir}\\" (a quoted value)
        if m:
            return m.group(0)
    return ""


def fn_name(fn) -> str | None:
    return fn.name if fn is not None else None
