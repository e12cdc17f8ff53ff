"""What serialising a value serialises (AIC104), asked of the value model.

A container serialises its items; an instance of a class of the file its
attributes -- every ``self.x = ...`` of every method, and what other methods
put into them (``self.records.append(ev)``, ``self.graphs[bs] = g``) -- unless
the class decides itself with a pickling hook (pickle.toml ``[hook]``): then
what ``__reduce__`` returns, or what ``__getstate__`` returns (often
``self.__dict__`` less some keys) is serialised instead. Each leaf comes with
the path it is reached by (``runner.graphs[...]``).

An instance serialised right after it is made (``fresh``: ``m = M().cuda()``
then ``AveragedModel(m)``, nothing in between) holds only what its
constructor stores: attributes that other methods set lazily are not there yet.
"""

from __future__ import annotations

from typing import Any, Iterator

import libcst as cst

from ...core.ruleapi import DictValue, Function, Instance, LibObject, Seq, options, walk

_MAX_DEPTH = 8


class Pickled:
    def __init__(self, ev, hooks: dict[str, dict], sink: str) -> None:
        self.ev = ev
        self.model = ev.model
        # The hooks this serialiser looks for, in the order it looks.
        self.hooks = [(name, e["follow"]) for name, e in hooks.items() if sink in e.get("sinks", (sink,))]

    def leaves(self, value, path: str = "", fresh=None) -> Iterator[tuple[Any, str]]:
        """Library objects and lambdas ``value`` may hold, each with its path. ``fresh``:
        (constructor call, names of the methods chained on it) of an instance made just
        before being serialised."""
        yield from self._walk(value, path, 0, frozenset(), fresh)

    def _walk(self, v, path: str, depth: int, seen: frozenset, fresh=None):
        if depth > _MAX_DEPTH:
            return
        for o in options(v):
            if isinstance(o, LibObject) or (isinstance(o, Function) and isinstance(o.node, cst.Lambda)):
                yield o, path
            elif isinstance(o, (tuple, Seq)):
                items = o if isinstance(o, tuple) else o.items
                for i, x in enumerate(items):
                    yield from self._walk(x, f"{path}[{i}]", depth + 1, seen)
                if isinstance(o, Seq) and o.more is not None:
                    yield from self._walk(o.more, f"{path}[...]", depth + 1, seen)
            elif isinstance(o, DictValue):
                for k, x in o.items:
                    yield from self._walk(x, f"{path}[{k!r}]", depth + 1, seen)
                if o.more is not None:
                    yield from self._walk(o.more, f"{path}[...]", depth + 1, seen)
            elif isinstance(o, Instance) and self.model is not None:
                key = (o.cls.key, o.ctor_key)
                if key not in seen:
                    yield from self._instance(o, path or o.cls.name, depth + 1, seen | {key}, fresh)

    def attribute(self, inst: Instance, name: str, path: str) -> Iterator[tuple[Any, str]]:
        """What ``inst.<name>`` holds where other methods fill it (``self.timings.append(...)``),
        which its one value in the model (``[]`` from ``__init__``) does not show: each store."""
        chain = self.ev.classes(inst.cls)
        ds = [d for c in chain for d in self.ev.model_of(c.node).attr_defs(c.node).get(name, [])]
        if not any(d.kind == "mutate" for d in ds):
            return
        for d in ds:
            stores = _stored(d.node) if d.kind == "mutate" else [(d.node, "")] if d.kind == "expr" else []
            for expr, suffix in stores:
                v = self.ev.in_method(inst, d.scope.node, d.stmt, expr, d.conds)
                if v is not NotImplemented:
                    yield from self._walk(v, path + suffix, 1, frozenset())

    # -- instances -------------------------------------------------------------
    def _instance(self, inst: Instance, path: str, depth: int, seen: frozenset, fresh=None):
        chain = self.ev.classes(inst.cls)
        only = self._ctor_methods(chain) if fresh is not None and inst.ctor is fresh[0] \
            and not any(name in self.ev.model_of(c.node).methods(c.node) for c in chain for name in fresh[1]) else None
        for name, follow in self.hooks:
            fn = next((self.ev.model_of(c.node).methods(c.node)[name] for c in chain
                       if name in self.ev.model_of(c.node).methods(c.node)), None)
            if fn is None:
                continue
            if follow == "return":
                yield from self._walk(self.ev.method_result(inst, fn), f"{path}.{name}()", depth, seen)
            elif follow == "state":
                yield from self._state(inst, chain, fn, path, depth, seen)
            return  # "opaque": the class copies itself
        yield from self._attrs(inst, chain, path, depth, seen, frozenset(), only)

    def _ctor_methods(self, chain) -> frozenset:
        """The ids of the methods that run while the instance is made: each ``__init__``
        (and ``__post_init__``) of the classes and, transitively, the methods and
        properties they reach through ``self.<name>``."""
        methods: dict[str, cst.FunctionDef] = {}
        for c in reversed(chain):  # the class's own definitions win over its bases'
            methods.update(self.ev.model_of(c.node).methods(c.node))
        todo = [fn for c in chain for name, fn in self.ev.model_of(c.node).methods(c.node).items()
                if name in ("__init__", "__post_init__")]
        done: set[int] = set()
        while todo:
            fn = todo.pop()
            if id(fn) in done:
                continue
            done.add(id(fn))
            self_name = self.ev.model_of(fn).scope(fn).self_name
            names = _SelfAttrs(self_name)
            walk(fn.body, names)
            todo.extend(methods[n] for n in names.found if n in methods)
        return frozenset(done)

    def _attrs(self, inst: Instance, chain, path: str, depth: int, seen: frozenset, skip: frozenset,
               only: frozenset | None = None):
        defs: dict[str, list] = {}
        for c in chain:
            for name, ds in self.ev.model_of(c.node).attr_defs(c.node).items():
                defs.setdefault(name, []).extend(ds)
            for name in _fields(c.node):
                defs.setdefault(name, [])
        for name, ds in defs.items():
            if name in skip:
                continue
            p = f"{path}.{name}"
            if only is not None and any(id(d.scope.node) not in only for d in ds):
                ds = [d for d in ds if id(d.scope.node) in only]  # set later, by a method not run yet
                if not ds:
                    continue
            elif not any(d.kind == "mutate" for d in ds):
                yield from self._walk(self.ev.attribute(inst, name), p, depth, seen)
                continue
            # Filled by other methods: the model has no one value, but each store is known.
            for d in ds:
                fn = d.scope.node
                stores = _stored(d.node) if d.kind == "mutate" else [(d.node, "")] if d.kind == "expr" else []
                for expr, suffix in stores:
                    v = self.ev.in_method(inst, fn, d.stmt, expr, d.conds)
                    if v is not NotImplemented:
                        yield from self._walk(v, p + suffix, depth, seen)

    def _state(self, inst: Instance, chain, fn: cst.FunctionDef, path: str, depth: int, seen: frozenset):
        """What ``__getstate__`` returns: ``self.__dict__`` less what it drops, or its value."""
        scope = self.ev.model_of(fn).scope(fn)
        self_name = scope.self_name
        for expr, stmt, conds in scope.returns:
            if expr is None:
                continue
            derived = _dict_state(fn, expr, self_name)
            if derived is None:
                v = self.ev.in_method(inst, fn, stmt, expr, conds)
                if v is not NotImplemented:
                    yield from self._walk(v, f"{path}.{fn.name.value}()", depth, seen)
                continue
            dropped, stores = derived
            yield from self._attrs(inst, chain, path, depth, seen, dropped)
            for key, value, at in stores:
                v = self.ev.in_method(inst, fn, at, value)
                if v is not NotImplemented:
                    yield from self._walk(v, f"{path}.{fn.name.value}()[{key!r}]", depth, seen)


class _SelfAttrs(cst.CSTVisitor):
    """The names ``n`` of ``self.n`` in a method body (calls, reads, properties)."""

    def __init__(self, self_name) -> None:
        self.found: set[str]
        self.self_name, self.found = self_name, set()

    def visit_Attribute(self, node: cst.Attribute) -> None:
        if _is_name(node.value, self.self_name):
            self.found.add(node.attr.value)


def _fields(cls: cst.ClassDef) -> list[str]:
    """Names annotated in the class body (dataclass fields, set by the constructor)."""
    body = cls.body.body if isinstance(cls.body, cst.IndentedBlock) else ()
    return [small.target.value for stmt in body if isinstance(stmt, cst.SimpleStatementLine)
            for small in stmt.body if isinstance(small, cst.AnnAssign) and isinstance(small.target, cst.Name)]


def _stored(node) -> list[tuple[cst.BaseExpression, str]]:
    """The values a container mutation stores: ``x[k] = v``, ``x.append(v)``, ``x.update(...)``."""
    if isinstance(node, cst.Assign):
        out = []
        for t in node.targets:
            if isinstance(t.target, cst.Subscript):
                out.append((node.value, f"[{_key(t.target)}]"))
        return out
    if not isinstance(node, cst.Call) or not isinstance(node.func, cst.Attribute):
        return []
    method, args = node.func.attr.value, node.args
    if method in ("insert", "setdefault"):
        return [(args[1].value, "[...]")] if len(args) > 1 else []
    return [(a.value, f"[{a.keyword.value!r}]" if a.keyword else "[...]") for a in args]


def _key(sub: cst.Subscript) -> str:
    if len(sub.slice) == 1 and isinstance(sub.slice[0].slice, cst.Index):
        k = sub.slice[0].slice.value
        if isinstance(k, (cst.SimpleString, cst.Integer)):
            return k.value
    return "..."


# -- __getstate__ built from the instance dict ------------------------------------
def _dict_state(fn: cst.FunctionDef, expr, self_name) -> tuple[frozenset, list] | None:
    """When ``expr`` (a return of ``fn``) is the instance dict or a copy of it: the keys
    the function drops from it, and the (key, value, statement) it stores in it.
    None when it is something else."""
    facts = _Edits()
    walk(fn.body, facts)
    name = expr.value if isinstance(expr, cst.Name) else None
    source = facts.assigned.get(name, expr) if name else expr
    excluded = _instance_dict(source, self_name, 0)
    if excluded is None:
        return None
    if name is None:
        return excluded, []
    return excluded | facts.dropped.get(name, frozenset()) | {k for k, _, _ in facts.stored.get(name, ())}, \
        facts.stored.get(name, [])


def _instance_dict(expr, self_name, depth) -> frozenset | None:
    """``self.__dict__``, ``vars(self)``, ``dict(...)``/``.copy()``/``copy.copy(...)`` of
    one, or ``{k: v for k, v in <one>.items() if k != "x"}``: the keys it leaves out."""
    if depth > 4:
        return None
    if isinstance(expr, cst.Attribute) and expr.attr.value == "__dict__":
        return frozenset() if _is_name(expr.value, self_name) else None
    if isinstance(expr, cst.Call):
        f = expr.func
        if isinstance(f, cst.Name) and f.value == "vars" and len(expr.args) == 1:
            return frozenset() if _is_name(expr.args[0].value, self_name) else None
        if isinstance(f, cst.Attribute) and f.attr.value == "copy" and not expr.args:
            return _instance_dict(f.value, self_name, depth + 1)
        if (_is_name(f, "dict") or (isinstance(f, cst.Attribute) and f.attr.value == "copy"
                                    and _is_name(f.value, "copy"))) and len(expr.args) == 1:
            return _instance_dict(expr.args[0].value, self_name, depth + 1)
        return None
    if isinstance(expr, cst.DictComp) and isinstance(expr.for_in.iter, cst.Call) and expr.for_in.inner_for_in is None:
        it = expr.for_in.iter
        if not (isinstance(it.func, cst.Attribute) and it.func.attr.value == "items"):
            return None
        base = _instance_dict(it.func.value, self_name, depth + 1)
        target = expr.for_in.target
        key = target.elements[0].value if isinstance(target, cst.Tuple) and target.elements else None
        if base is None or not isinstance(key, cst.Name):
            return None
        out = set(base)
        for cond in expr.for_in.ifs:
            got = _excluded_keys(cond.test, key.value)
            if got is None:
                return None
            out |= got
        return frozenset(out)
    return None


def _excluded_keys(test, key: str) -> set | None:
    """``k != "x"`` / ``k not in ("x", "y")``: the keys the filter leaves out."""
    if not isinstance(test, cst.Comparison) or len(test.comparisons) != 1 or not _is_name(test.left, key):
        return None
    op, right = test.comparisons[0].operator, test.comparisons[0].comparator
    if isinstance(op, cst.NotEqual) and isinstance(right, cst.SimpleString):
        return {right.evaluated_value}
    if isinstance(op, cst.NotIn) and isinstance(right, (cst.Tuple, cst.List, cst.Set)):
        keys = [el.value.evaluated_value for el in right.elements if isinstance(el.value, cst.SimpleString)]
        return set(keys) if len(keys) == len(right.elements) else None
    return None


def _is_name(node, name) -> bool:
    return isinstance(node, cst.Name) and node.value == name


class _Edits(cst.CSTVisitor):
    """Per local name in one function: its assigned value, the literal keys it drops
    (``del s["k"]``, ``s.pop("k")``) and stores (``s["k"] = v``)."""

    def __init__(self) -> None:
        self.assigned: dict[str, cst.BaseExpression] = {}
        self.dropped: dict[str, frozenset] = {}
        self.stored: dict[str, list] = {}

    def visit_FunctionDef(self, node) -> bool:
        return False  # nested functions have their own names

    def visit_Assign(self, node: cst.Assign) -> None:
        for t in node.targets:
            tgt = t.target
            if isinstance(tgt, cst.Name):
                self.assigned[tgt.value] = node.value
            elif isinstance(tgt, cst.Subscript) and isinstance(tgt.value, cst.Name):
                k = _literal_key(tgt)
                if k is not None:
                    self.stored.setdefault(tgt.value.value, []).append((k, node.value, node))

    def visit_Del(self, node: cst.Del) -> None:
        targets = [el.value for el in node.target.elements] if isinstance(node.target, cst.Tuple) else [node.target]
        for tgt in targets:
            if isinstance(tgt, cst.Subscript) and isinstance(tgt.value, cst.Name):
                self._drop(tgt.value.value, _literal_key(tgt))

    def visit_Call(self, node: cst.Call) -> None:
        f = node.func
        if isinstance(f, cst.Attribute) and f.attr.value == "pop" and isinstance(f.value, cst.Name) and node.args:
            k = node.args[0].value
            self._drop(f.value.value, k.evaluated_value if isinstance(k, cst.SimpleString) else None)

    def _drop(self, name: str, key) -> None:
        if isinstance(key, str):
            self.dropped[name] = self.dropped.get(name, frozenset()) | {key}


def _literal_key(sub: cst.Subscript):
    if len(sub.slice) == 1 and isinstance(sub.slice[0].slice, cst.Index):
        k = sub.slice[0].slice.value
        if isinstance(k, cst.SimpleString):
            return k.evaluated_value
    return None
