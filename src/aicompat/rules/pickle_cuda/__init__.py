"""AIC104 pickle-cuda-object: serialising objects that hold CUDA runtime state
(streams, events, graphs) or other unpicklables (locks, open files, generators,
lambdas) with torch.save, pickle, copy.deepcopy or multiprocessing queues
(facts: version_matrix/pickle.toml).

The object is followed through the value model (rules/pickle_cuda/pickled.py): names,
containers and their mutations, parameters bound at call sites, methods that
return self (``Model().cuda()``), instances of the file's classes with the
attributes any method sets or fills, and the pickling hooks a class defines
(``__getstate__``, ``__reduce__``). Generators and open files, which have no
value in the model, are followed by syntax.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Sequence, cast

import libcst as cst
from packaging.version import Version

from ...core.ruleapi import Example, Finding, Function, Instance, LibObject, Rule, options, span, walk
from .pickled import Pickled

# The builtin container mutations (list.append, dict.update, set.add, list.extend).
_MUTATORS = frozenset({"update", "append", "extend", "add"})
# How queues, spawned workers and started processes pickle (multiprocessing's ForkingPickler).
_MP = "multiprocessing"
_SAVED = "the saved object"
_ADVICE = "save state_dict()s and plain values instead"


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
        self.sink_entries = matrix.section("pickle.toml", "sink")
        self.sinks = {q: [tuple(a) for a in e["args"]] if "args" in e else [tuple(e["arg"])]
                      for q, e in self.sink_entries.items()}
        # What a sink never fails on: deepcopy's atomic kinds, and what cloudpickle/dill pickle by value.
        self.atomic = {q: frozenset(e.get("atomic", ())) | frozenset(e.get("handles", ()))
                       for q, e in self.sink_entries.items()}
        self.start_methods: dict = next(iter(matrix.section("pickle.toml", "start_methods").values()), {})
        # Sinks reached as a context's attribute (mp.get_context("spawn").Process): tail -> module.
        self.context_tails = {q.rsplit(".", 1)[-1] for q, e in self.sink_entries.items() if e.get("context")}
        self.queues = matrix.section("pickle.toml", "queue")
        self.hooks = matrix.section("pickle.toml", "hook")
        self.put_methods = frozenset(m for e in self.queues.values() for m in e["methods"])
        self.binders = {q: e["shift"] for q, e in matrix.section("pickle.toml", "binder").items()}
        self.call_tails = frozenset({q.rsplit(".", 1)[-1] for q in (*self.sinks, *self.binders)} | self.put_methods
                                    | _MUTATORS)

    @classmethod
    def prefilter_patterns(cls, target, matrix) -> tuple[bytes, ...]:
        # Also the last names of the sinks in the data (spawn, Process, AveragedModel).
        tails = {q.rsplit(".", 1)[-1].encode() for q in matrix.section("pickle.toml", "sink")}
        return tuple(re.escape(t) for t in sorted(set(cls.tokens) | tails))

    def known_names(self) -> set[str]:
        return set(self.sinks)

    # -- recording d["k"] = v and d.update(...) for the syntactic follower -----------
    # The recorders run in dead code too (``reach_own``): each record keeps the context it
    # was made in, and a record is used only where that context runs (``_taint``), so the
    # guards around every ``d[k] = v`` and ``.append`` need no answer unless a sink asks.
    reach_own = frozenset({"check_assign", "check_call"})

    def check_assign(self, node: cst.Assign, fc) -> list[Finding]:
        for t in node.targets:
            tgt = t.target
            if isinstance(tgt, cst.Subscript) and isinstance(tgt.value, cst.Name):
                key = _key_text(tgt)
                self._muts(fc).setdefault(tgt.value.value, []).append((f"[{key}]", node.value, fc.ctx))
        return []

    def _muts(self, fc) -> dict:
        return fc.state.setdefault("pickle_mutations", {})

    # -- sinks ----------------------------------------------------------------------
    def check_call(self, site, qualname, fc):
        func = site.node.func
        if isinstance(func, cst.Attribute) and func.attr.value in _MUTATORS \
                and isinstance(func.value, cst.Name) and site.pos:
            self._muts(fc).setdefault(func.value.value, []).append((f".{func.attr.value}(...)", site.pos[0], fc.ctx))
            return []
        # A queue is known only where some world runs the call (its value is read in one).
        queue = self._queue(func.value, fc) if isinstance(func, cst.Attribute) \
            and func.attr.value in self.put_methods else None
        if qualname not in self.sinks and isinstance(func, cst.Attribute) and func.attr.value in self.context_tails:
            qualname = self._context_sink(func, fc) or qualname
        shift = 0
        if qualname in self.binders and site.pos:  # functools.partial(torch.save, state): pickled when it runs
            shift, qualname = self.binders[qualname], fc.resolve(site.pos[0]) or ""
            if qualname not in self.sinks or {"start_method", "context"} & set(self.sink_entries[qualname]):
                return []
        if qualname in self.sinks:
            if not fc.ctx.worlds:  # a sink no world reaches
                return []
            entry = self.sink_entries[qualname]
            if not self._pickles(entry, site, func, fc):
                return []
            objs = [(site.arg(i + shift, k), k) for i, k in self.sinks[qualname]]
            label, sink = qualname, entry.get("via", qualname)
            what, advice = entry.get("object", _SAVED), entry.get("advice", _ADVICE)
        elif queue is not None and func.attr.value in queue["methods"]:
            objs = [(site.arg(*queue["arg"]), "obj")]
            label, sink, what, advice = "multiprocessing queue put", _MP, _SAVED, _ADVICE
        else:
            return []
        for obj, name in objs:
            if obj is None:
                continue
            for src in self._sources(obj, fc, sink):
                found = self._finding(site, src, label, sink, fc, what, advice, name if len(objs) > 1 else "obj")
                if found is not None:
                    return [found]
        return []

    # -- multiprocessing start methods ----------------------------------------------
    def _context_sink(self, func: cst.Attribute, fc) -> str | None:
        """``ctx.Process`` where ``ctx`` is ``multiprocessing.get_context(...)``: the sink
        of the context's module (``multiprocessing.Process``)."""
        ctx = self._context(func.value, fc)
        return f"{fc.resolve(ctx.func).rsplit('.', 1)[0]}.{func.attr.value}" if ctx is not None else None

    def _context(self, expr, fc, depth: int = 0) -> cst.Call | None:
        """The ``get_context(...)`` call ``expr`` is, directly or through a name (the
        model gives library calls no value: followed by syntax)."""
        if isinstance(expr, cst.Name) and depth < 4:
            b = fc.lookup(expr.value)
            return self._context(b, fc, depth + 1) if isinstance(b, cst.BaseExpression) else None
        if isinstance(expr, cst.Call) and fc.resolve(expr.func) in self.start_methods.get("contexts", ()):
            return expr
        return None

    def _pickles(self, entry, site, func, fc) -> bool:
        """Whether the sink pickles: always, or only under a start method that pickles
        (spawn, forkserver); an unknown start method stays silent."""
        if "start_method" in entry:
            index, keyword, default = entry["start_method"]
            arg = site.arg(index, keyword)
            method = default if arg is None else self._value(arg, fc)
        elif entry.get("context"):
            ctx = self._context(func.value, fc) if isinstance(func, cst.Attribute) else None
            if ctx is not None:
                method = self._first_arg(ctx, "method", fc)
            elif isinstance(func, cst.Attribute) and fc.resolve(func) is None:
                return False  # some other object's Process attribute
            else:
                method = self._default_start_method(fc)
        else:
            return True
        return isinstance(method, str) and method in self.start_methods["pickling"]

    def _default_start_method(self, fc):
        """The method every ``set_start_method(...)`` call of the file sets, when they agree."""
        if "default_start_method" not in fc.state:
            setters = _Calls(fc, frozenset(self.start_methods["setters"]))
            walk(fc.module, setters)
            methods = {self._first_arg(c, "method", fc) for c in setters.found}
            fc.state["default_start_method"] = methods.pop() if len(methods) == 1 else None
        return fc.state["default_start_method"]

    def _first_arg(self, call, keyword: str, fc):
        if not isinstance(call, cst.Call):
            return None
        for i, a in enumerate(call.args):
            if (a.keyword is not None and a.keyword.value == keyword) or (i == 0 and a.keyword is None and not a.star):
                return a.value.evaluated_value if isinstance(a.value, cst.SimpleString) else self._value(a.value, fc)
        return None

    def _value(self, expr, fc):
        worlds = sorted(fc.ctx.worlds, key=lambda w: (w.arch, str(w.torch)))
        return fc.evaluator(worlds[0]).eval(expr) if worlds and fc.model is not None else None

    def _sources(self, obj, fc, sink: str):
        """What the serialised object may hold that cannot be pickled: first as the value
        model sees it, then by syntax (generators, open files and library factories such
        as ``torch.cuda.current_stream()`` have no value in the model)."""
        worlds = sorted(fc.ctx.worlds, key=lambda w: (w.arch, str(w.torch)))
        if worlds and fc.model is not None:
            root, expr = _root(obj, fc)
            # What the object may hold on any path: pickling fails on the path that holds it
            # (``timer = Timer()`` kept unless a resumed checkpoint replaces it).
            ev = fc.evaluator(worlds[0], may=True)
            fresh = _fresh(expr, fc)
            pickled = Pickled(ev, self.hooks, sink)
            leaves = list(pickled.leaves(ev.eval(expr), root, fresh))
            for attr, path in _attributes(expr, root):  # instance attributes other methods fill
                for o in options(ev.eval(attr.value)):
                    if isinstance(o, Instance):
                        leaves.extend(pickled.attribute(o, attr.attr.value, path))
            for leaf, path in leaves:
                key = "<lambda>" if isinstance(leaf, Function) else leaf.qualname
                if key in self.sources:
                    yield Source(key, leaf.node if isinstance(leaf, Function) else leaf.origin, path)
        skip = self.atomic.get(sink, frozenset())
        if sink == _MP:
            skip |= {k for k, e in self.sources.items() if e.get("queue_picklable")}
        src = self._taint(obj, fc, set(), 0, skip=skip)
        if src is not None:
            yield src

    def _finding(self, site, src: Source, label: str, sink: str, fc, what_obj: str = _SAVED,
                 advice: str = _ADVICE, name: str = "obj") -> Finding | None:
        entry = self.sources[src.key]
        if src.node is None or src.key in self.atomic.get(sink, ()):
            return None
        if sink == _MP and entry.get("queue_picklable"):
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
        path = f"{name}{src.path}" if src.path.startswith("[") else src.path
        via = f" (via {path})" if path else ""
        article = "an" if what[:1].lower() in "aeio" or what.startswith("RNG") else "a"
        # A release-dependent failure names the releases it fails in (as AIC201 does).
        where = f" in torch {span(failing_versions)} (picklable from {fixed})" if failing_versions else ""
        msg = (f"{label}: {what_obj} holds {article} {what}{via} created at line {{line:created}}: "
               f"\"{entry['error']}\"{where}; {advice}")
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
        if isinstance(expr, (cst.ListComp, cst.SetComp)):  # each item is what ``elt`` makes
            return self._taint(expr.elt, fc, seen, depth + 1, _join(path, "[...]"), skip=skip)
        if isinstance(expr, cst.DictComp):
            return self._taint(expr.value, fc, seen, depth + 1, _join(path, "[...]"), skip=skip)
        if isinstance(expr, (cst.List, cst.Tuple, cst.Set)):
            for i, item in enumerate(expr.elements):  # not ``el``: that one is a DictElement above
                s = self._taint(item.value, fc, seen, depth + 1, _join(path, f"[{i}]"), skip=skip)
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
            for suffix, value, ctx in self._muts(fc).get(name, []):
                if not ctx.worlds:  # recorded where no world runs
                    continue
                s = self._taint(value, fc, seen, depth + 1, _join(path or name, suffix), skip=skip)
                if s:
                    return s
        return None

def _fresh(expr, fc) -> tuple[cst.Call, list[str]] | None:
    """When ``expr`` is a name bound, by an earlier statement of the same block, to a
    constructor call (with methods chained on it: ``M().cuda()``) and not used in
    between: that call and the chained method names (Pickled: only what the
    constructor stores is there yet)."""
    owner, here = fc.loc
    if not isinstance(expr, cst.Name) or fc.model is None or here is None:
        return None
    defs = fc.model.scope(owner).defs_at(expr.value, here)
    if not defs or len(defs) != 1 or defs[0].kind != "expr" or defs[0].scope.node is not owner:
        return None
    block = _block_of(owner, defs[0].stmt)
    made, used = _line_index(block, defs[0].stmt), _line_index(block, here)
    if made is None or used is None or used <= made or any(_mentions(s, expr.value) for s in cast(list, block)[made + 1:used]):  # made: a list
        return None
    call, chained = defs[0].node, []
    while isinstance(call, cst.Call) and isinstance(call.func, cst.Attribute) and isinstance(call.func.value, cst.Call):
        chained.append(call.func.attr.value)
        call = call.func.value
    return (call, chained) if isinstance(call, cst.Call) else None


def _line_index(block, small) -> int | None:
    """The index in ``block`` of the simple statement line holding ``small``."""
    for i, s in enumerate(block or ()):
        if isinstance(s, cst.SimpleStatementLine) and any(x is small for x in s.body):
            return i
    return None


def _block_of(owner, small) -> list | None:
    """The statement list of ``owner`` (a def or the module) whose lines hold ``small``."""
    todo: list[Sequence] = [owner.body.body if isinstance(owner, cst.FunctionDef) and isinstance(owner.body, cst.IndentedBlock)
            else owner.body if isinstance(owner, cst.Module) else ()]
    while todo:
        stmts = list(todo.pop())
        if _line_index(stmts, small) is not None:
            return stmts
        for s in stmts:
            if isinstance(s, (cst.FunctionDef, cst.ClassDef)):
                continue
            for suite in (getattr(s, "body", None), getattr(s, "orelse", None), getattr(s, "finalbody", None)):
                if isinstance(suite, cst.IndentedBlock):
                    todo.append(suite.body)
                elif isinstance(suite, (cst.If, cst.Else, cst.Finally)):
                    todo.append([suite])
            todo.extend([h] for h in getattr(s, "handlers", ()))
    return None


def _mentions(node, name: str) -> bool:
    found = []

    class _Find(cst.CSTVisitor):
        def visit_Name(self, n: cst.Name) -> None:
            if n.value == name:
                found.append(n)

    walk(node, _Find())
    return bool(found)


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


def _attributes(expr, path: str, depth: int = 0) -> list[tuple[cst.Attribute, str]]:
    """The ``x.name`` attributes a serialised expression holds as itself or in a dict, list or
    tuple literal, each with its path in the object (``self.timings``, ``['timings']``)."""
    if depth > 4:
        return []
    if isinstance(expr, cst.Attribute) and expr.attr.value != "__dict__":
        return [(expr, path)]
    out: list[tuple[cst.Attribute, str]] = []
    if isinstance(expr, cst.Dict):
        for el in expr.elements:
            if isinstance(el, cst.DictElement):
                out += _attributes(el.value, _join(path, f"[{_key_text_expr(el.key)}]"), depth + 1)
    elif isinstance(expr, (cst.List, cst.Tuple)):
        for i, item in enumerate(expr.elements):  # not ``el``: that one is a DictElement above
            out += _attributes(item.value, _join(path, f"[{i}]"), depth + 1)
    return out


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


class _Calls(cst.CSTVisitor):
    """The calls of a module to one of ``names`` (``mp.set_start_method("spawn")``)."""

    def __init__(self, fc, names: frozenset) -> None:
        self.found: list[cst.Call]
        self.fc, self.names, self.found = fc, names, []

    def visit_Call(self, node: cst.Call) -> None:
        if self.fc.resolve(node.func) in self.names:
            self.found.append(node)
