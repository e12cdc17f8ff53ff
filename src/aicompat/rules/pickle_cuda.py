"""AIC104 pickle-cuda-object: serialising objects that hold CUDA runtime state
(streams, events, graphs) or other unpicklables (locks, open files, generators,
lambdas) with torch.save, pickle, copy.deepcopy or multiprocessing queues
(facts: version_matrix/pickle.toml).

The object is followed through simple data flow inside the module: names,
dict/list/tuple literals, ``d["k"] = s``, ``d.update(...)``, attributes set in a
class's ``__init__`` (so ``torch.save(model)`` of a module holding a stream is
caught), ``vars(obj)`` and ``obj.__dict__``.
"""

from __future__ import annotations

from dataclasses import dataclass

import libcst as cst
from packaging.version import Version

from ..apiquery import span
from ..index import assign_bindings
from ..ruleapi import Example, Finding, Rule


@dataclass
class Source:
    key: str  # the pickle.toml entry
    node: cst.CSTNode  # where the object is created
    path: str  # how it reaches the saved object, e.g. "state['stream']"


class PickleCudaObject(Rule):
    code = "AIC104"
    name = "pickle-cuda-object"
    tokens = (b"save", b"pickle", b"deepcopy", b"dump", b"put(")

    VALID = [
        Example("import torch\nmodel = torch.nn.Linear(2, 2)\ntorch.save(model.state_dict(), 'ckpt.pt')\n"),
        Example("import torch\ns = torch.cuda.Stream()\nwith torch.cuda.stream(s):\n    y = x * 2\n"
                "torch.save({'step': 3, 'model': model.state_dict()}, 'ckpt.pt')\n"),
        Example("import torch, copy\nf = lambda x: x\ng = copy.deepcopy(f)\n"),
        Example("import torch\ng = torch.Generator()\ntorch.save({'rng': g}, 'rng.pt')\n", pins={"torch": "2.4.0"}),
        Example("import torch\nclass M(torch.nn.Module):\n    def __init__(self):\n        super().__init__()\n"
                "        self.stream = torch.cuda.Stream()\n\nm = M()\ntorch.save(m.state_dict(), 'm.pt')\n"),
    ]
    INVALID = [
        Example("import torch\ns = torch.cuda.Stream()\nstate = {'model': model.state_dict(), 'stream': s}\n"
                "torch.save(state, 'ckpt.pt')\n",
                findings=[
                    (4, 1, "torch.save: the saved object holds a CUDA stream (via state['stream']) created at line "
                           "2: \"TypeError: cannot pickle 'Stream' object\"; save state_dict()s and plain values "
                           "instead"),
                ]),
        Example("import torch\nckpt = {}\nckpt['event'] = torch.cuda.Event(enable_timing=True)\n"
                "torch.save(ckpt, 'c.pt')\n",
                findings=[
                    (4, 1, "torch.save: the saved object holds a CUDA event (via ckpt['event']) created at line 3: "
                           "\"TypeError: cannot pickle 'Event' object\"; save state_dict()s and plain values "
                           "instead"),
                ]),
        Example("import torch\nclass Runner(torch.nn.Module):\n    def __init__(self):\n        super().__init__()\n"
                "        self.graph = torch.cuda.CUDAGraph()\n\n    def save(self):\n        torch.save(self, 'r.pt')\n",
                findings=[
                    (8, 9, "torch.save: the saved object holds a CUDA graph (via Runner.graph) created at line 5: "
                           "\"TypeError: cannot pickle 'CUDAGraph' object\"; save state_dict()s and plain values "
                           "instead"),
                ]),
        Example("import torch, pickle, threading\nclass Trainer:\n    def __init__(self):\n"
                "        self.lock = threading.Lock()\n\nt = Trainer()\nblob = pickle.dumps(vars(t))\n",
                findings=[
                    (7, 8, "pickle.dumps: the saved object holds a lock (via t.lock) created at line 4: "
                           "\"TypeError: cannot pickle '_thread.lock' object\"; save state_dict()s and plain "
                           "values instead"),
                ]),
        Example("import torch\ng = torch.Generator()\ntorch.save([g], 'rng.pt')\n", pins={"torch": "2.3.0"},
                findings=[
                    (3, 1, "torch.save: the saved object holds an RNG generator (via obj[0]) created at line 2: "
                           "\"TypeError: cannot pickle 'torch._C.Generator' object\" in torch 2.3.0 (picklable "
                           "from 2.4.0); save state_dict()s and plain values instead"),
                ]),
        Example("import torch.multiprocessing as mp\nimport torch\nq = mp.Queue()\nq.put(torch.cuda.current_stream())\n",
                findings=[
                    (4, 1, "multiprocessing queue put: the saved object holds a CUDA stream created at line 4: "
                           "\"TypeError: cannot pickle 'Stream' object\"; save state_dict()s and plain values "
                           "instead"),
                ]),
    ]

    def __init__(self, matrix) -> None:
        super().__init__(matrix)
        self.sources = matrix.section("pickle.toml", "unpicklable")
        # Serialisers and queues: qualified name -> (positional index, keyword) of the object.
        self.sinks = {q: tuple(e["arg"]) for q, e in matrix.section("pickle.toml", "sink").items()}
        self.queues = matrix.section("pickle.toml", "queue")
        self.put_methods = frozenset(m for e in self.queues.values() for m in e["methods"])
        self.call_tails = frozenset({q.rsplit(".", 1)[-1] for q in self.sinks} | self.put_methods
                                    | {"update", "append", "extend", "add"})

    def known_names(self) -> set[str]:
        return set(self.sinks)

    # -- recording d["k"] = v and d.update(...) ------------------------------------
    def check_assign(self, node: cst.Assign, fc) -> list[Finding]:
        for t in node.targets:
            tgt = t.target
            if isinstance(tgt, cst.Subscript) and isinstance(tgt.value, cst.Name):
                key = _key_text(tgt)
                self._muts(fc).setdefault(tgt.value.value, []).append((f"[{key}]", node.value))
        return []

    def _muts(self, fc) -> dict:
        return fc.state.setdefault("pickle_mutations", {})

    # -- sinks ----------------------------------------------------------------------
    def check_call(self, site, qualname, fc):
        func = site.node.func
        if isinstance(func, cst.Attribute) and func.attr.value in ("update", "append", "extend", "add") \
                and isinstance(func.value, cst.Name) and site.pos:
            self._muts(fc).setdefault(func.value.value, []).append((f".{func.attr.value}(...)", site.pos[0]))
            return []
        queue = self._queue(func.value, fc) if isinstance(func, cst.Attribute) \
            and func.attr.value in self.put_methods else None
        if qualname in self.sinks:
            obj = site.arg(*self.sinks[qualname])
            label = qualname
        elif queue is not None and func.attr.value in queue["methods"]:
            obj = site.arg(*queue["arg"])
            label = "multiprocessing queue put"
        else:
            return []
        if obj is None:
            return []
        src = self._taint(obj, fc, set(), 0)
        if src is None:
            return []
        entry = self.sources[src.key]
        if src.key == "<lambda>" and qualname == "copy.deepcopy":
            return []  # deepcopy treats functions as atomic
        if fc.ctx.caught(entry["error"].split(":", 1)[0]):
            return []
        failing_versions = []
        if "picklable_from" in entry:
            fixed = Version(entry["picklable_from"])
            torches = {w.torch for w in fc.ctx.worlds}
            if None in torches or all(t >= fixed for t in torches):
                return []  # unpinned: the newest torch pickles it
            failing_versions = sorted(t for t in torches if t < fixed)
        what = entry["kind"]
        path = f"obj{src.path}" if src.path.startswith("[") else src.path
        via = f" (via {path})" if path else ""
        article = "an" if what[:1].lower() in "aeio" or what.startswith("RNG") else "a"
        # A release-dependent failure names the releases it fails in (as AIC201 does).
        where = f" in torch {span(failing_versions)} (picklable from {fixed})" if failing_versions else ""
        msg = (f"{label}: the saved object holds {article} {what}{via} created at line {{line:created}}: "
               f"\"{entry['error']}\"{where}; save state_dict()s and plain values instead")
        return [Finding(site.node, msg, frozenset(w.arch for w in fc.ctx.worlds),
                        extra_targets=tuple(f"torch=={v}" for v in failing_versions), refs={"created": src.node})]

    def _queue(self, expr, fc) -> dict | None:
        """The pickle.toml queue entry of the queue ``expr`` names: made by a known
        constructor, or by one of its class name under the same package
        (``multiprocessing.queues.Queue()``)."""
        if not isinstance(expr, cst.Name):
            return None
        b = fc.lookup(expr.value)
        if not isinstance(b, cst.Call):
            return None
        q = fc.resolve(b.func) or ""
        if q in self.queues:
            return self.queues[q]
        if isinstance(b.func, cst.Attribute):
            base = fc.resolve(b.func.value) or ""
            for name, e in self.queues.items():
                module, cls = name.rsplit(".", 1)
                if cls == b.func.attr.value and base.startswith(module):
                    return e
        return None

    # -- following the object -----------------------------------------------------------
    def _taint(self, expr, fc, seen: set, depth: int, path: str = "") -> Source | None:
        if expr is None or depth > 8:
            return None
        if isinstance(expr, cst.Lambda):
            return Source("<lambda>", expr, path)
        if isinstance(expr, cst.GeneratorExp):
            return Source("<generator>", expr, path)
        if isinstance(expr, cst.Call):
            q = fc.resolve(expr.func)
            if isinstance(expr.func, cst.Name) and expr.func.value == "open" and fc.lookup("open") is None:
                q = "open"
            if q in self.sources:
                return Source(q, expr, path)
            if isinstance(expr.func, cst.Name) and expr.func.value == "vars" and expr.args:
                return self._taint(expr.args[0].value, fc, seen, depth + 1, path)
            if q == "dict" or (isinstance(expr.func, cst.Name) and expr.func.value == "dict"):
                for a in expr.args:
                    s = self._taint(a.value, fc, seen, depth + 1, _join(path, a.keyword.value if a.keyword else ""))
                    if s:
                        return s
                return None
            cls = self._class_of(expr.func, fc)
            if cls is not None:
                return self._class_taint(cls, fc, seen, depth + 1, path)
            return None  # any other call (state_dict(), .item(), ...) returns something else
        if isinstance(expr, cst.Attribute) and expr.attr.value == "__dict__":
            return self._taint(expr.value, fc, seen, depth + 1, path)
        if isinstance(expr, (cst.Dict,)):
            for el in expr.elements:
                if isinstance(el, cst.DictElement):
                    s = self._taint(el.value, fc, seen, depth + 1, _join(path, f"[{_key_text_expr(el.key)}]"))
                    if s:
                        return s
            return None
        if isinstance(expr, (cst.List, cst.Tuple, cst.Set)):
            for i, el in enumerate(expr.elements):
                s = self._taint(el.value, fc, seen, depth + 1, _join(path, f"[{i}]"))
                if s:
                    return s
            return None
        if isinstance(expr, cst.Name):
            name = expr.value
            if name == "self":
                cls = fc.current_class
                return self._class_taint(cls, fc, seen, depth + 1, path) if cls is not None else None
            if name in seen:
                return None
            seen = seen | {name}
            b = fc.lookup(name)
            s = self._taint(b, fc, seen, depth + 1, path or name) if isinstance(b, cst.BaseExpression) else None
            if s:
                return s
            for suffix, value in self._muts(fc).get(name, []):
                s = self._taint(value, fc, seen, depth + 1, _join(path or name, suffix))
                if s:
                    return s
        return None

    def _class_of(self, func, fc) -> cst.ClassDef | None:
        if isinstance(func, cst.Name):
            b = fc.index.bindings.get(func.value)
            if isinstance(b, cst.ClassDef):
                return b
        return None

    def _class_taint(self, cls: cst.ClassDef, fc, seen: set, depth: int, path: str) -> Source | None:
        """An attribute set in ``__init__`` to something unpicklable."""
        key = f"class:{cls.name.value}"
        if key in seen:
            return None
        seen = seen | {key}
        init = next((s for s in cls.body.body if isinstance(s, cst.FunctionDef) and s.name.value == "__init__"), None)
        if init is None:
            return None
        local: dict[str, cst.BaseExpression] = {}
        for stmt in _flat(init.body.body):
            if isinstance(stmt, cst.Assign):
                for t in stmt.targets:
                    tgt = t.target
                    if isinstance(tgt, cst.Attribute) and isinstance(tgt.value, cst.Name) and tgt.value.value == "self":
                        value = stmt.value
                        if isinstance(value, cst.Name) and value.value in local:
                            value = local[value.value]
                        s = self._taint(value, fc, seen, depth + 1, _join(path or cls.name.value, f".{tgt.attr.value}"))
                        if s:
                            return s
                for name, b in assign_bindings([t.target for t in stmt.targets], stmt.value):
                    if isinstance(b, cst.BaseExpression):
                        local[name] = b
        return None


def _flat(stmts):
    for s in stmts:
        if isinstance(s, cst.SimpleStatementLine):
            yield from s.body
        elif isinstance(s, (cst.If, cst.With, cst.Try)):
            yield from _flat(s.body.body)


def _join(path: str, suffix: str) -> str:
    return f"{path}{suffix}" if suffix.startswith(("[", ".")) else (f"{path}.{suffix}" if path and suffix else path or suffix)


def _key_text(sub: cst.Subscript) -> str:
    if len(sub.slice) == 1 and isinstance(sub.slice[0].slice, cst.Index):
        return _key_text_expr(sub.slice[0].slice.value)
    return "..."


def _key_text_expr(expr) -> str:
    if isinstance(expr, cst.SimpleString):
        return expr.value
    if isinstance(expr, cst.Integer):
        return expr.value
    return "..."
