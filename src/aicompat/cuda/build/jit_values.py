"""The strings and records a JIT front-end's Python names its sources with.

FlashInfer's newer modules name a source through a table: ``META = {"v": Meta(body="x.cu"), ...}``
(a NamedTuple/dataclass per variant, or a dict/tuple), then ``csrc_dir / META[variant].body`` or
``csrc_dir / f"x_{variant}.cu"`` with ``variant`` checked against a module tuple
(``if variant not in VARIANTS: raise``) or typed by a ``Literal[...]`` alias. Some compile a
generated translation unit, ``write_if_different(binding, _get_binding_cu(meta))``, whose f-string
text ``#include``s an in-tree header and ``#define``s the body file that header includes. This
mixin reads those shapes with ``ast`` (never runs them): every value a name can take, or None
when one is not known.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from pathlib import Path

from ..cpp import includes
from .pyeval import UNKNOWN_VALUE, returns

MAX_VALUES = 64
_INCLUDE = re.compile(r'^\s*#\s*include\s*"([^"]+)"', re.M)
_DEFINE = re.compile(r"^\s*#\s*define\s+([A-Za-z_]\w*)(?:[ \t]+(.*))?$", re.M)


@dataclass(frozen=True)
class Record:
    """One table entry: a ``Meta(body=..., ...)`` call (class fields and defaults from its
    definition) or a dict literal with string keys. ``m`` is the module it sits in."""

    fields: tuple  # ((name, ast node), ...)
    m: object

    def get(self, name: str):
        for k, v in self.fields:
            if k == name:
                return v
        return None


class Values:
    """Mixin for jit_specs.Reader: needs ``self.module`` and pyeval.Module's ``classes``/``functions`` and its bindings."""

    def values(self, expr, m, fn, depth: int = 0, env: dict | None = None) -> list | None:
        """The constants (str/int/bool/None) and Records ``expr`` can be; None when not known."""
        if depth > 8 or expr is None:
            return None
        env = env or {}
        if isinstance(expr, ast.Constant):
            return [expr.value]
        if isinstance(expr, ast.JoinedStr):
            out = [""]
            for v in expr.values:
                if isinstance(v, ast.Constant):
                    got = [str(v.value)]
                elif isinstance(v, ast.FormattedValue) and v.format_spec is None and v.conversion in (-1, 115):
                    vals = self.values(v.value, m, fn, depth + 1, env)
                    if vals is None or any(isinstance(x, Record) for x in vals):
                        return None
                    got = [str(x) for x in vals]
                else:
                    return None
                out = [a + b for a in out for b in got][:MAX_VALUES]
            return out
        if isinstance(expr, ast.Name):
            return self._name_values(expr.id, m, fn, depth, env)
        if isinstance(expr, ast.Subscript):
            table = self._dict_node(expr.value, m, fn)
            if table is None:
                return None
            keys = self.values(expr.slice, m, fn, depth + 1, env)
            picked = [v for k, v in zip(table.keys, table.values)
                      if keys is None or (isinstance(k, ast.Constant) and k.value in keys)]
            return self._union([self.values(v, m, None, depth + 1) for v in picked or table.values])
        if isinstance(expr, ast.Attribute):
            objs = self.values(expr.value, m, fn, depth + 1, env)
            if not objs or not all(isinstance(o, Record) for o in objs):
                return None
            out = []
            for o in objs:
                node = o.get(expr.attr)
                got = self.values(node, o.m, None, depth + 1) if node is not None else None
                if got is None:
                    return None
                out.extend(got)
            return list(dict.fromkeys(out))[:MAX_VALUES]
        if isinstance(expr, ast.Call):
            rec = self._record(expr, m)
            return [rec] if rec is not None else None
        if isinstance(expr, ast.Dict) and all(isinstance(k, ast.Constant) and isinstance(k.value, str) for k in expr.keys):
            return [Record(tuple((k.value, v) for k, v in zip(expr.keys, expr.values)), m)]
        return None

    @staticmethod
    def _union(parts: list) -> list | None:
        if any(p is None for p in parts):
            return None
        out = []
        for p in parts:
            out.extend(x for x in p if x not in out)
        return out[:MAX_VALUES]

    def _name_values(self, name: str, m, fn, depth: int, env: dict):
        if name in env:
            return env[name]
        if fn is not None:
            local = m.local(name, fn)
            if local:
                return self.values(local[0], m, fn, depth + 1, env) if len(local) == 1 else \
                    self._union([self.values(v, m, fn, depth + 1, env) for v in local])
            if name in [a.arg for a in fn.args.posonlyargs + fn.args.args + fn.args.kwonlyargs]:
                return self._param_values(fn, name, m)
        glob = m.lookup(name)[0]
        if glob is not None and len(glob) == 1:
            return self.values(glob[0], m, None, depth + 1)
        return None

    def _param_values(self, fn, name: str, m) -> list | None:
        """A parameter the function checks (``if name not in TABLE: raise``) or types with a
        ``Literal[...]`` alias: the values it accepts."""
        for st in fn.body:
            if isinstance(st, ast.If) and isinstance(st.test, ast.Compare) and isinstance(st.test.left, ast.Name) \
                    and st.test.left.id == name and len(st.test.ops) == 1 and isinstance(st.test.ops[0], ast.NotIn) \
                    and st.body and isinstance(st.body[0], ast.Raise):
                got = self._members(st.test.comparators[0], m)
                if got is not None:
                    return got
        for a in fn.args.posonlyargs + fn.args.args + fn.args.kwonlyargs:
            if a.arg == name and a.annotation is not None:
                return self._literal(a.annotation, m, 0)
        return None

    def _members(self, expr, m) -> list | None:
        """The constant elements (or keys) of a module-level tuple/list/set/dict."""
        node = expr
        if isinstance(expr, ast.Name):
            vals = m.lookup(expr.id)[0]
            node = vals[0] if len(vals) == 1 else None
        if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
            elts = node.elts
        elif isinstance(node, ast.Dict):
            elts = node.keys
        else:
            return None
        if all(isinstance(e, ast.Constant) for e in elts):
            return [e.value for e in elts]
        return None

    def _literal(self, ann, m, depth: int) -> list | None:
        if depth > 3:
            return None
        if isinstance(ann, ast.Name):
            vals = m.lookup(ann.id)[0]
            return self._literal(vals[0], m, depth + 1) if len(vals) == 1 else None
        if isinstance(ann, ast.Subscript) and isinstance(ann.value, (ast.Name, ast.Attribute)) \
                and (ann.value.id if isinstance(ann.value, ast.Name) else ann.value.attr) == "Literal":
            elts = ann.slice.elts if isinstance(ann.slice, ast.Tuple) else [ann.slice]
            if all(isinstance(e, ast.Constant) for e in elts):
                return [e.value for e in elts]
        return None

    def _dict_node(self, expr, m, fn) -> ast.Dict | None:
        """A module-level dict literal named by ``expr`` (its keys need not be strings)."""
        if isinstance(expr, ast.Name):
            vals = m.lookup(expr.id)[0]
            if len(vals) == 1 and isinstance(vals[0], ast.Dict) and None not in vals[0].keys:
                return vals[0]
        return None

    def _record(self, call: ast.Call, m) -> Record | None:
        """``Meta(body="x.cu", ...)`` with Meta a class of the module (NamedTuple, dataclass):
        its fields by keyword, by position in the class's annotated fields, or their defaults."""
        name = call.func.id if isinstance(call.func, ast.Name) else None
        cls = m.classes.get(name) if name else None
        if cls is None:
            return None
        order, defaults = [], {}
        for st in cls.body:
            if isinstance(st, ast.AnnAssign) and isinstance(st.target, ast.Name):
                order.append(st.target.id)
                if st.value is not None:
                    defaults[st.target.id] = st.value
        fields = dict(defaults)
        if any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords):
            return None
        for i, a in enumerate(call.args):
            if i >= len(order):
                return None
            fields[order[i]] = a
        for k in call.keywords:
            fields[k.arg] = k.value
        return Record(tuple(fields.items()), m)

    # -- a generated translation unit ------------------------------------------------------
    def generated(self, call: ast.Call, srcs, m, fn, writers: list[str], include_dirs: list[Path]):
        """``sources=[binding]`` where the function writes ``binding`` from f-string text: the
        in-tree files that text ``#include``s, the files it names in a ``#define`` that one of
        those ``#include``s by name, and its ``#define``s ({name: value or None})."""
        names = [e.id for e in (srcs.elts if isinstance(srcs, (ast.List, ast.Tuple)) else [srcs])
                 if isinstance(e, ast.Name)]
        texts: list[str] = []
        for c in ast.walk(fn):
            if not isinstance(c, ast.Call):
                continue
            f = c.func
            target = text = None
            if isinstance(f, (ast.Name, ast.Attribute)) and (f.id if isinstance(f, ast.Name) else f.attr) in writers \
                    and len(c.args) == 2:
                target, text = c.args
            elif isinstance(f, ast.Attribute) and f.attr == "write_text" and len(c.args) == 1:
                target, text = f.value, c.args[0]
            if isinstance(target, ast.Name) and target.id in names:
                got = self._render(text, m, fn, 0)
                if got:
                    texts.extend(got)
        files: list[Path] = []
        defines: dict[str, str | None] = {}
        for t in texts:
            path_macros = {}
            for name, value in _DEFINE.findall(t):
                value = value.strip()
                known = value if UNKNOWN_VALUE not in value else None
                if name in defines and defines[name] != known:
                    known = None
                defines[name] = known
                q = re.fullmatch(r'"([^"]+)"', value)
                if q and UNKNOWN_VALUE not in value:
                    path_macros[name] = q.group(1)
            for inc in _INCLUDE.findall(t):
                header = _find(inc, include_dirs) if UNKNOWN_VALUE not in inc else None
                if header is None:
                    continue
                files.append(header)
                text = includes.read(header) or ""
                for macro, rel in path_macros.items():
                    if re.search(rf"^\s*#\s*include\s+{macro}\b", text, re.M):
                        body = _find(rel, [header.parent] + include_dirs)
                        if body is not None:
                            files.append(body)
        return list(dict.fromkeys(files)), defines

    def _render(self, expr, m, fn, depth: int, env: dict | None = None) -> list[str] | None:
        """The texts an f-string (or a function returning one) renders to; a field not known
        stays UNKNOWN_VALUE, so only the lines that hold it are lost."""
        if depth > 4 or expr is None:
            return None
        env = env or {}
        if isinstance(expr, ast.Constant) and isinstance(expr.value, str):
            return [expr.value]
        if isinstance(expr, ast.Name) and fn is not None:
            local = m.local(expr.id, fn)
            return self._render(local[0], m, fn, depth + 1, env) if len(local) == 1 else None
        if isinstance(expr, ast.Call) and isinstance(expr.func, ast.Name) and expr.func.id in m.functions:
            helper = m.functions[expr.func.id]
            params = [a.arg for a in helper.args.posonlyargs + helper.args.args]
            inner = {}
            for i, a in enumerate(expr.args):
                if i < len(params) and not isinstance(a, ast.Starred):
                    inner[params[i]] = self.values(a, m, fn, 0, env)
            for k in expr.keywords:
                if k.arg is not None:
                    inner[k.arg] = self.values(k.value, m, fn, 0, env)
            envs = [{}]  # one rendering per table entry: its fields go together
            for k, v in inner.items():
                if v is None:
                    continue
                if all(isinstance(x, Record) for x in v):
                    envs = [{**e, k: [r]} for e in envs for r in v][:MAX_VALUES]
                else:
                    envs = [{**e, k: v} for e in envs]
            rets = [r.value for r in returns(helper) if r.value is not None]
            out = []
            for inner in envs:
                for r in rets:
                    out.extend(self._render(r, m, helper, depth + 1, inner) or [])
            return out[:MAX_VALUES] or None
        if isinstance(expr, ast.JoinedStr):
            out = [""]
            for v in expr.values:
                if isinstance(v, ast.Constant):
                    got = [str(v.value)]
                else:
                    vals = self.values(v.value, m, fn, 0, env) if isinstance(v, ast.FormattedValue) else None
                    got = [str(x) for x in vals] if vals and not any(isinstance(x, Record) for x in vals) \
                        else [UNKNOWN_VALUE]
                out = [a + b for a in out for b in got][:MAX_VALUES]
            return out
        return None


def _find(rel: str, dirs: list[Path]) -> Path | None:
    for d in dirs:
        p = d / rel
        if p.is_file():
            return p
    return None
