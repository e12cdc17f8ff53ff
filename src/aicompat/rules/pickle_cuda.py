"""AIC104 pickle-cuda-object: serialising objects that hold CUDA runtime state
(streams, events, graphs) or other unpicklables (locks, open files, generators,
lambdas) with torch.save, pickle, copy.deepcopy or multiprocessing queues
(facts: version_matrix/pickle.toml).

The object is followed through the value model (rules/pickled.py): names,
containers and their mutations, parameters bound at call sites, methods that
return self (``Model().cuda()``), instances of the file's classes with the
attributes any method sets or fills, and the pickling hooks a class defines
(``__getstate__``, ``__reduce__``). Generators and open files, which have no
value in the model, are followed by syntax.
"""

from __future__ import annotations

from dataclasses import dataclass

import libcst as cst
from packaging.version import Version

from ..apiquery import span
from ..ruleapi import Example, Finding, Rule
from ..values import Function, LibObject
from .pickled import Pickled

# The builtin container mutations (list.append, dict.update, set.add, list.extend).
_MUTATORS = frozenset({"update", "append", "extend", "add"})


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
        # torch registers an IPC-handle reducer for Event on multiprocessing's pickler
        Example("import torch\nimport torch.multiprocessing as mp\nq = mp.Queue()\n"
                "q.put(torch.cuda.Event(interprocess=True))\n"),
        Example("import torch\nclass Feeder:\n    def __init__(self):\n        self.stream = torch.cuda.Stream()\n\n"
                "    def __getstate__(self):\n        state = self.__dict__.copy()\n        del state['stream']\n"
                "        return state\n\ntorch.save(Feeder(), 'f.pt')\n"),
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
        Example("import torch\nclass Block(torch.nn.Module):\n    def __init__(self):\n        super().__init__()\n"
                "        self.side = torch.cuda.Stream()\n\nblock = Block().cuda().eval()\n"
                "torch.save(block, 'block.pt')\n",
                findings=[
                    (8, 1, "torch.save: the saved object holds a CUDA stream (via block.side) created at line 5: "
                           "\"TypeError: cannot pickle 'Stream' object\"; save state_dict()s and plain values "
                           "instead"),
                ]),
        Example("import torch, pickle\nclass Timer:\n    def __init__(self):\n        self.events = []\n\n"
                "    def start(self):\n        self.events.append(torch.cuda.Event(enable_timing=True))\n\n"
                "timer = Timer()\ntimer.start()\nblob = pickle.dumps(timer)\n",
                findings=[
                    (11, 8, "pickle.dumps: the saved object holds a CUDA event (via timer.events[...]) created at "
                            "line 7: \"TypeError: cannot pickle 'Event' object\"; save state_dict()s and plain "
                            "values instead"),
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
        self.atomic = {q: frozenset(e.get("atomic", ())) for q, e in matrix.section("pickle.toml", "sink").items()}
        self.queues = matrix.section("pickle.toml", "queue")
        self.hooks = matrix.section("pickle.toml", "hook")
        self.put_methods = frozenset(m for e in self.queues.values() for m in e["methods"])
        self.call_tails = frozenset({q.rsplit(".", 1)[-1] for q in self.sinks} | self.put_methods | _MUTATORS)

    def known_names(self) -> set[str]:
        return set(self.sinks)

    # -- recording d["k"] = v and d.update(...) for the syntactic follower -----------
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
        if isinstance(func, cst.Attribute) and func.attr.value in _MUTATORS \
                and isinstance(func.value, cst.Name) and site.pos:
            self._muts(fc).setdefault(func.value.value, []).append((f".{func.attr.value}(...)", site.pos[0]))
            return []
        queue = self._queue(func.value, fc) if isinstance(func, cst.Attribute) \
            and func.attr.value in self.put_methods else None
        if qualname in self.sinks:
            obj = site.arg(*self.sinks[qualname])
            label = sink = qualname
        elif queue is not None and func.attr.value in queue["methods"]:
            obj = site.arg(*queue["arg"])
            label, sink = "multiprocessing queue put", "queue"
        else:
            return []
        if obj is None:
            return []
        for src in self._sources(obj, fc, sink):
            found = self._finding(site, src, label, sink, fc)
            if found is not None:
                return [found]
        return []

    def _sources(self, obj, fc, sink: str):
        """What the serialised object may hold that cannot be pickled: first as the value
        model sees it, then by syntax (generators, open files and library factories such
        as ``torch.cuda.current_stream()`` have no value in the model)."""
        worlds = sorted(fc.ctx.worlds, key=lambda w: (w.arch, str(w.torch)))
        if worlds and fc.model is not None:
            root, expr = _root(obj, fc)
            ev = fc.evaluator(worlds[0])
            for leaf, path in Pickled(ev, self.hooks, sink).leaves(ev.eval(expr), root):
                key = "<lambda>" if isinstance(leaf, Function) else leaf.qualname
                if key in self.sources:
                    yield Source(key, leaf.node if isinstance(leaf, Function) else leaf.origin, path)
        skip = self.atomic.get(sink, frozenset())
        if sink == "queue":
            skip |= {k for k, e in self.sources.items() if e.get("queue_picklable")}
        src = self._taint(obj, fc, set(), 0, skip=skip)
        if src is not None:
            yield src

    def _finding(self, site, src: Source, label: str, sink: str, fc) -> Finding | None:
        entry = self.sources[src.key]
        if src.node is None or src.key in self.atomic.get(sink, ()):
            return None
        if sink == "queue" and entry.get("queue_picklable"):
            return None  # torch's ForkingPickler reducer (pickle.toml)
        if fc.ctx.caught(entry["error"].split(":", 1)[0]):
            return None
        failing_versions = []
        if "picklable_from" in entry:
            fixed = Version(entry["picklable_from"])
            torches = {w.torch for w in fc.ctx.worlds}
            if None in torches or all(t >= fixed for t in torches):
                return None  # unpinned: the newest torch pickles it
            failing_versions = sorted(t for t in torches if t < fixed)
        what = entry["kind"]
        path = f"obj{src.path}" if src.path.startswith("[") else src.path
        via = f" (via {path})" if path else ""
        article = "an" if what[:1].lower() in "aeio" or what.startswith("RNG") else "a"
        # A release-dependent failure names the releases it fails in (as AIC201 does).
        where = f" in torch {span(failing_versions)} (picklable from {fixed})" if failing_versions else ""
        msg = (f"{label}: the saved object holds {article} {what}{via} created at line {{line:created}}: "
               f"\"{entry['error']}\"{where}; save state_dict()s and plain values instead")
        return Finding(site.node, msg, frozenset(w.arch for w in fc.ctx.worlds),
                       extra_targets=tuple(f"torch=={v}" for v in failing_versions), refs={"created": src.node})

    def _queue(self, expr, fc) -> dict | None:
        """The pickle.toml queue entry of the queue ``expr`` is (a value the model knows:
        ``q = mp.Queue()``, a parameter given one): made by a known constructor, or by
        one of its class name under the same package (``multiprocessing.queues.Queue()``)."""
        worlds = sorted(fc.ctx.worlds, key=lambda w: (w.arch, str(w.torch)))
        v = fc.evaluator(worlds[0]).eval(expr) if worlds else None
        if not isinstance(v, LibObject):
            return None
        if v.qualname in self.queues:
            return self.queues[v.qualname]
        for name, e in self.queues.items():
            module, cls = name.rsplit(".", 1)
            if v.qualname.rsplit(".", 1)[-1] == cls and v.qualname.startswith(module + "."):
                return e
        return None

    # -- following by syntax what has no value in the model ----------------------------
    def _taint(self, expr, fc, seen: set, depth: int, path: str = "", skip=frozenset()) -> Source | None:
        """The first unpicklable not in ``skip`` that ``expr`` holds."""
        if expr is None or depth > 8:
            return None
        if isinstance(expr, cst.Lambda):
            return Source("<lambda>", expr, path) if "<lambda>" not in skip else None
        if isinstance(expr, cst.GeneratorExp):
            return Source("<generator>", expr, path) if "<generator>" not in skip else None
        if isinstance(expr, cst.Call):
            q = fc.resolve(expr.func)
            if isinstance(expr.func, cst.Name) and expr.func.value == "open" and fc.lookup("open") is None:
                q = "open"
            if q in self.sources:
                return Source(q, expr, path) if q not in skip else None
            if isinstance(expr.func, cst.Name) and expr.func.value == "vars" and expr.args:
                return self._taint(expr.args[0].value, fc, seen, depth + 1, path, skip=skip)
            if q == "dict" or (isinstance(expr.func, cst.Name) and expr.func.value == "dict"):
                for a in expr.args:
                    s = self._taint(a.value, fc, seen, depth + 1, _join(path, a.keyword.value if a.keyword else ""),
                                    skip=skip)
                    if s:
                        return s
                return None
            return None  # any other call (state_dict(), .item(), ...) returns something else
        if isinstance(expr, cst.Attribute) and expr.attr.value == "__dict__":
            return self._taint(expr.value, fc, seen, depth + 1, path, skip=skip)
        if isinstance(expr, (cst.Dict,)):
            for el in expr.elements:
                if isinstance(el, cst.DictElement):
                    s = self._taint(el.value, fc, seen, depth + 1, _join(path, f"[{_key_text_expr(el.key)}]"),
                                    skip=skip)
                    if s:
                        return s
            return None
        if isinstance(expr, (cst.List, cst.Tuple, cst.Set)):
            for i, el in enumerate(expr.elements):
                s = self._taint(el.value, fc, seen, depth + 1, _join(path, f"[{i}]"), skip=skip)
                if s:
                    return s
            return None
        if isinstance(expr, cst.Name):
            name = expr.value
            if name in seen:
                return None
            seen = seen | {name}
            b = fc.lookup(name)
            s = self._taint(b, fc, seen, depth + 1, path or name, skip=skip) \
                if isinstance(b, cst.BaseExpression) else None
            if s:
                return s
            for suffix, value in self._muts(fc).get(name, []):
                s = self._taint(value, fc, seen, depth + 1, _join(path or name, suffix), skip=skip)
                if s:
                    return s
        return None

def _root(obj, fc) -> tuple[str, cst.BaseExpression]:
    """How the finding names the serialised object, and the expression whose value is
    serialised (``vars(t)`` and ``t.__dict__`` serialise ``t``'s attributes)."""
    if isinstance(obj, cst.Call) and isinstance(obj.func, cst.Name) and obj.func.value == "vars" \
            and len(obj.args) == 1 and not obj.args[0].star:
        obj = obj.args[0].value
    elif isinstance(obj, cst.Attribute) and obj.attr.value == "__dict__":
        obj = obj.value
    text = fc.module.code_for_node(obj) if isinstance(obj, (cst.Name, cst.Attribute)) else ""
    return ("" if text == "self" or not text.replace(".", "").replace("_", "").isalnum() else text), obj


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
