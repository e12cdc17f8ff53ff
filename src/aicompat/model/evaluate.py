"""A small symbolic evaluator: the value of an expression in one *world*.

A world fixes the GPU arch and the torch release, so
``torch.cuda.get_device_capability()`` is ``(9, 0)`` on sm_90 and
``torch.__version__`` is the pinned release. Anything the engine cannot know
(user data, runtime flags) is ``UNKNOWN`` and comparisons with it are
unknown too, so guards never prove more than they say. The same evaluator
infers tensor shapes (``torch.randn(b, s, h, 128)``) for the attention rule.
Nothing is imported or executed: this walks the syntax tree.

What a library does (shapes, dtypes, the environment, argparse, methods that return self)
is the library table's (libmodels/table.py), which the engine hands in as ``libs``: this
module names no library.
"""

from __future__ import annotations

import operator
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Callable, cast

import libcst as cst
from packaging.version import Version

from ..syntax.index import OPAQUE, Opaque, Qual, Unpack
from ..values import (  # noqa: F401
    UNKNOWN,
    ClassValue,
    DictValue,
    Function,
    Instance,
    LibObject,
    Module,
    PartialStr,
    PathValue,
    Seq,
    SourceModule,
    Tensor,
    Union,
    bounds,
    join,
    join_may,
    options,
)
from ..values.paths import os_join, os_path_fn, path_attr, path_join, path_method, path_new
from ..values.strings import concat, flatten_parts, format_value, mkstr, str_format
from ..values.symbolic import Sym
from . import dims
from .containers import (
    CONVERTERS,
    as_items,
    convert,
    dict_merge,
    element,
    hashable,
    item_at,
    mutate,
    plain,
    seq_as_tuple,
    set_item,
    widen,
)
from .flow import ATTR_FALLBACK, Alternatives, ImportsOK, LoopRuns, Returns, Tagged, is_classmethod, loop_steps
from .flow import step_name as _step_name


def truth(v) -> bool | Any:
    """Three-valued truth: True, False or UNKNOWN."""
    if v is UNKNOWN or isinstance(v, (Tensor, Module, Opaque, LibObject, PartialStr, Instance)):
        return UNKNOWN
    if isinstance(v, Union):
        ts = {truth(o) for o in v.options}
        return ts.pop() if len(ts) == 1 else UNKNOWN
    if isinstance(v, (Seq, DictValue)):
        return bool(v.items) if v.exact or v.items else UNKNOWN
    if isinstance(v, (Function, ClassValue, PathValue)):
        return True
    try:
        return bool(v)
    except Exception:
        return UNKNOWN


_CMP = {
    cst.GreaterThan: operator.gt,
    cst.GreaterThanEqual: operator.ge,
    cst.LessThan: operator.lt,
    cst.LessThanEqual: operator.le,
    cst.Equal: operator.eq,
    cst.NotEqual: operator.ne,
}
_CONST_NAMES = {"True": True, "False": False, "None": None}


@dataclass(frozen=True)
class Given:
    """An argument whose value is already known (an item of a ``*``/``**`` splat),
    standing where an argument expression would."""

    value: Any


@dataclass(frozen=True, eq=False)
class Deferred:
    """A parameter value given as an expression read at ``loc`` (a row of a
    ``pytest.mark.parametrize`` table), evaluated in each world where it is
    asked: ``mxfp8_available`` is True on one GPU and False on another. ``path``
    indexes into the value (the row of a table named by a variable, its column)."""

    node: Any
    loc: Any
    path: tuple = ()


@dataclass(frozen=True, eq=False)
class _Expr:
    """A call's argument not evaluated yet (``Evaluator._call_args``)."""

    node: Any


_NO = object()

# What an answer depended on (``Evaluator.touched``, bits): the world's GPU arch (ARCH), its
# releases (RELEASE: ``hasattr``, import probes and the API tables, which providers answer by
# release alone: core/ruleapi.py ``attr_exists``), or only whether the world is an open twin,
# where an uncalled function's parameters are unknown rather than their defaults (OPENS). An
# answer holds in every world that agrees with the one that gave it on what it depended on.
ARCH = 1
OPENS = 2
RELEASE = 4
WORLD = ARCH | RELEASE


def world_part(world, bits: int) -> tuple:
    """What of ``world`` an answer that depended on ``bits`` depended on: two worlds with the
    same part have the same answer."""
    return (world.arch if bits & ARCH else None,
            (world.torch, world.releases) if bits & RELEASE else None,
            world.open if bits & OPENS else None)


@dataclass(eq=False)
class Binding:
    """How one call binds a function's parameters: the call, where it is made
    (its scope node and statement) and the bindings in force there; ``receiver``
    is the instance a method is called on."""

    call: Any  # cst.Call or None (only the receiver is known)
    loc: Any
    outer: dict
    receiver: Any = None
    given: dict | None = None  # parameter values given directly (no call): name -> value
    items: dict | None = None  # the item a ``for`` loop of the scope is on: id(For) -> value (model/loop_items.py)


_MAX_SITES = 16


# Methods that run through calls of their class or its instances, not calls by their own name
# (``Block(dim)``, ``block(x)``); the engine asks the same when it decides a function is uncalled.
CALLED_THROUGH_CLASS = ("__init__", "forward", "__call__")

# Reads of one environment variable that name a default for when it is unset.
_ENV_READS = frozenset({"os.getenv", "os.environ.get", "os.environ.setdefault"})


class Evaluator:
    """Evaluates expressions of one module in one world.

    The value of a name is found by walking back through its definitions at
    the location being asked about (model/flow.py): a value that differs by branch
    is a Union; parameters take the arguments of the calls in the file (or
    their defaults); calls of the file's functions return what their
    ``return`` statements give; ``self.x`` is what the class's methods assign.
    ``lookup(name)``/``resolve(node)`` give import bindings and qualified
    names; ``attr_exists`` answers what the matrix knows for the world.
    """

    MAX_DEPTH = 48
    # Work one question may cost (expressions evaluated); past it the answer is
    # UNKNOWN. What was learnt stays in the per-file memo for later questions.
    FUEL = 6000

    def __init__(
        self,
        lookup: Callable[[str], Any],
        resolve: Callable[[cst.BaseExpression], str | None],
        world,
        capability: Callable[[str], tuple[int, int]],
        python: tuple[int, int],
        cuda: str | None,
        attr_exists: Callable[[str, Any], Any],
        model=None,
        loc=None,
        path: str = "",
        shadow: frozenset = frozenset(),
        memo: dict | None = None,
        bindings: dict | None = None,
        shared: dict | None = None,
        by_release: dict | None = None,
        project=None,
        handlers: Mapping[str, Any] | None = None,
        guard: bool = False,
        libs=None,
        may: bool = False,
    ) -> None:
        self.libs = libs  # the library table (libmodels/table.py): every library fact read here
        # ``may``: where paths merge, the values known on some path (values.join_may), for a rule
        # whose finding holds on any path with the value; its conditions are decided by ``conds_by``.
        self.may = may
        self._join = join_may if may else join
        self.lookup = lookup
        self.resolve = resolve
        self.project = project  # the project's own modules (model/project.py), followed on demand
        self.handlers = handlers  # exception name -> the handler names that catch it (exceptions.toml)
        # Splitting a guard: follow only project modules that can differ between worlds, and
        # no callers in other modules (guards are asked at every ``if``; rules far less often).
        self.guard = guard
        self.world = world
        self.capability = capability
        self.python = python
        self.cuda = cuda
        self.attr_exists = attr_exists
        self.model = model
        self.loc = loc  # (module/class/function node, statement) the expression is read at
        self.path = path
        self.shadow = shadow  # names bound by enclosing lambdas/comprehensions: not tracked
        self.memo = memo if memo is not None else {}
        # Answers that did not depend on the world's arch or releases (no WORLD bit in
        # ``touched``) are the same in every world as open as this one: kept here, one dict for
        # those worlds, so the next world asked reuses them instead of following the same calls
        # again (None: each world keeps its own).
        self.shared = shared
        self.by_release = by_release  # likewise, answers that depended on the releases but not the arch
        self.bindings: dict = dict(bindings or {})  # id(Scope) -> Binding
        self.depth = 0
        self.fuel = self.FUEL
        self._frames: list[dict[str, Any]] = []
        self._active: set = set()
        self.touched = 0  # what the value depended on: WORLD | OPENS bits (0: the same in every world)
        # Where set (core/engine.py FileContext.evaluator), the evaluator that decides the
        # conditions definitions were made under: values here, conditions there.
        self.conds_by: Callable[[], Any] | None = None
        self._conds_ev: Any = None
        self._home = (model, lookup, resolve, path)
        self._env = None  # the project module being read (None: the checked file)
        # Where set (core/engine.py value_if_env_unset): environment variables read with a default
        # are read as unset, and their names gathered here; else None (such a read is not known).
        self.env_unset: set[str] | None = None

    # -- locations -----------------------------------------------------------
    def _scope(self):
        if self.model is None or self.loc is None:
            return None, None
        node, stmt = self.loc
        return self._m(node).scope(node), stmt

    def _m(self, node):
        """The FileModel a definition node belongs to (the checked file's or a project module's)."""
        if self.project is not None:
            env = self.project.env_of(node)
            if env is not None:
                return env.model
        return self._home[0]

    def at(self, loc, bindings, fn):
        """Evaluate ``fn()`` as if at ``loc`` with ``bindings`` (frames are lexical: none there)."""
        saved = (self.loc, self.bindings, self._frames, self.shadow)
        env = self.project.env_of(loc[0]) if self.project is not None and loc is not None else None
        switch = env is not self._env
        if switch:
            saved_env = self._env
            self._enter(env)
        self.loc, self.bindings, self._frames, self.shadow = loc, bindings, [], frozenset()
        try:
            return fn()
        finally:
            self.loc, self.bindings, self._frames, self.shadow = saved
            if switch:
                self._enter(saved_env)

    def _enter(self, env) -> None:
        """Read names, imports and ``__file__`` as the module ``env`` (None: the checked file) does."""
        self._env = env
        if env is None:
            self.model, self.lookup, self.resolve, self.path = self._home
        else:
            self.model, self.lookup, self.resolve, self.path = env.model, env.lookup, env.resolve, env.path

    # -- names ---------------------------------------------------------------
    def _name(self, name: str):
        for frame in reversed(self._frames):
            if name in frame:
                return frame[name]
        if name in _CONST_NAMES:
            return _CONST_NAMES[name]
        if name in self.shadow:
            return UNKNOWN
        scope, stmt = self._scope()
        while scope is not None:
            defs = scope.defs_at(name, stmt)
            if defs is not None:
                v = self._defs_value(defs)
                if v is UNKNOWN and len(defs) == 1:  # ``b, s, _ = x.shape`` next: a tensor of rank 3
                    return dims.shaped(self, name, defs[0]) or v
                return v
            scope, stmt = scope.parent, None
        if name == "__file__" and self.path:
            return self.path
        return self._binding(self.lookup(name))

    def _binding(self, b):
        """An import binding or index entry (names the flow does not see: star imports)."""
        if b is None or b is OPAQUE or isinstance(b, Opaque):
            return UNKNOWN
        if isinstance(b, Qual):
            return self._qual_value(b.name)
        if isinstance(b, Unpack):
            return item_at(self.eval(b.expr), b.index)
        if isinstance(b, (cst.FunctionDef, cst.ClassDef)):
            return UNKNOWN
        if isinstance(b, cst.BaseExpression):
            # The traversal's binding of a name the flow does not see: ``x = x if x is not
            # None else d`` read from a nested def finds itself again; without this it
            # recursed to MAX_DEPTH on every branch and burnt the question's fuel.
            key = ("bind", id(b))
            if key in self._active:
                return UNKNOWN
            self._active.add(key)
            try:
                return self.eval(b)
            finally:
                self._active.discard(key)
        return UNKNOWN

    def _defs_value(self, defs):
        vals = []
        for d in defs:
            if not self._feasible(d.conds, d.scope):
                continue
            vals.append(self._def_value(d))
        return self._join(vals) if vals else UNKNOWN

    def feasible(self, conds, scope) -> bool:
        """Can code under ``conds`` (flow conditions of ``scope``) run in this world?"""
        return self._feasible(conds, scope)

    def _feasible(self, conds, scope) -> bool:
        """False when this world rules out a branch a definition was made in. Memoised per
        conditions object (shared by every use of a definition, and kept alive by the file's
        flow model): a definition deep in a long if/elif chain carries one condition per
        branch, and re-walking them at every use made lint time grow with the chain squared.
        A ``Tagged`` chain is decided link by link, each link once: its parent's answer
        and its own condition."""
        if not conds:
            return True
        b = self.bindings.get(id(scope))
        if isinstance(conds, Tagged):
            return self._feasible_chain(conds, scope, b)
        hit = self._feasible_hit(conds, scope, b)
        if hit is not None:
            self.touched |= hit[1]
            return hit[0]
        touched, self.touched = self.touched, False
        fuel = self.fuel
        ok = self._conds_ok(conds, scope, b)
        self._feasible_keep(conds, scope, b, ok, fuel)
        self.touched |= touched
        return ok

    def _hit(self, key):
        """A kept ``(value, touched, ...)`` answer: this world's, else one that holds in it too."""
        hit = self.memo.get(key)
        if hit is None and self.shared is not None and self.by_release is not None:
            hit = self.by_release.get(key)
            if hit is None:
                hit = self.shared.get(key)
        return hit

    def _put(self, key, entry) -> None:
        """Keep ``entry`` (``(value, touched, ...)``) for every world it holds in."""
        bits = entry[1]
        if bits & ARCH or self.shared is None or self.by_release is None:
            self.memo[key] = entry
        elif bits & RELEASE:
            self.by_release[key] = entry
        else:
            self.shared[key] = entry

    def _feasible_hit(self, conds, scope, b):
        hit = self._hit(("feasible", id(conds), id(scope), id(b)))
        return hit if hit is not None and hit[2] is conds else None

    def _feasible_keep(self, conds, scope, b, ok, fuel) -> None:
        if self.fuel > 0 and fuel > 0:
            self._put(("feasible", id(conds), id(scope), id(b)), (ok, self.touched, conds))

    def _feasible_chain(self, conds, scope, b) -> bool:
        links = []  # the links not yet decided, innermost first
        node = conds
        hit = None
        while isinstance(node, Tagged):
            hit = self._feasible_hit(node, scope, b)
            if hit is not None:
                break
            links.append(node)
            node = node.parent
        if hit is None:  # the chain's base: the tuple the definition was made under
            touched, self.touched = self.touched, False
            ok = self._feasible(node, scope)
            hit = (ok, self.touched)
            self.touched = touched
        ok, seen = hit[0], hit[1]
        for link in reversed(links):
            touched, self.touched = self.touched, seen
            fuel = self.fuel
            if ok:
                ok = self._conds_ok((link.cond,), scope, b)
            self._feasible_keep(link, scope, b, ok, fuel)
            seen = self.touched
            self.touched = touched
        self.touched |= seen
        return ok

    def _conds_ok(self, conds, scope, b) -> bool:
        for test, polarity, stmt in conds:
            if isinstance(test, Alternatives):
                if not any(self._feasible(alt, scope) for alt in test.options):
                    return False
                continue
            key = ("cond", id(test), id(b))
            hit = self._hit(key)
            if hit is None:
                touched, self.touched = self.touched, False
                if self.conds_by is not None:
                    if self._conds_ev is None:
                        self._conds_ev = self.conds_by()
                    ev = self._conds_ev
                    t = truth(ev.at((scope.node, stmt), self.bindings, lambda: ev.eval(test)))
                    self.touched |= WORLD | OPENS  # decided in another world, its open twin
                else:
                    t = truth(self.at((scope.node, stmt), self.bindings, lambda: self.eval(test)))
                hit = (t, self.touched)
                if self.fuel > 0:
                    self._put(key, hit)
                self.touched |= touched
            else:
                self.touched |= hit[1]
            t = hit[0]
            if t is not UNKNOWN and t != polarity:
                return False
        return True

    def _def_value(self, d):
        b = self.bindings.get(id(d.scope))
        # A copy of a definition tagged with a branch condition (flow._on_path) has its value.
        part = d.extra if d.kind in ("iter", "unpack") else d.extra[0] if d.kind == "loop" else None
        key = (id(d.node), id(d.stmt), d.kind, part, id(b))
        hit = self._hit(key)
        if hit is not None:
            self.touched |= hit[1]
            return hit[0]
        if key in self._active:
            return UNKNOWN  # a definition that depends on itself (recursion)
        self._active.add(key)
        touched, self.touched = self.touched, False
        try:
            v = self._def_value_uncached(d)
        finally:
            self._active.discard(key)
        if self.fuel > 0:  # an answer cut short is not the value: do not keep it
            self._put(key, (v, self.touched))
        self.touched |= touched
        return v

    def _def_value_uncached(self, d):
        kind = d.kind
        loc = (d.scope.node, d.stmt)
        if kind == "expr":
            return self.at(loc, self.bindings, lambda: self.eval(d.node))
        if kind == "unpack":
            v = self.at(loc, self.bindings, lambda: self.eval(d.node))
            for i in d.extra:
                v = item_at(v, i)
            return v
        if kind == "import":  # read relative to the module that imports
            return self.at(loc, self.bindings, lambda: self._qual_value(d.node.name))
        if kind == "func":
            return Function(d.node, key=id(d.node))
        if kind == "class":
            return ClassValue(d.node, key=id(d.node))
        if kind == "param":
            return self._param(d)
        if kind == "iter":
            b = self.bindings.get(id(d.scope))
            if b is not None and b.items and id(d.stmt) in b.items:
                v = b.items[id(d.stmt)]  # one run of the loop's body (model/loop_items.py)
            else:
                v = element(self.at(loc, self.bindings, lambda: self.eval(d.node)))
            for i in d.extra or ():
                v = item_at(v, i)
            return v
        if kind == "mutate":
            return self._mutated(d, loc)
        if kind == "loop":
            return self._loop_value(d, loc)
        if kind == "aug":
            prev = self._defs_value(d.extra) if d.extra else UNKNOWN
            node = d.node
            rhs = self.at(loc, self.bindings, lambda: self.eval(node.value))
            return _binop(type(node.operator).__name__.replace("Assign", ""), prev, rhs, self.libs)
        return UNKNOWN

    def _mutated(self, d, loc):
        """``lst.append(x)``, ``d[k] = v``, ``d.update(...)``: the container after the change."""
        prev = self._defs_value(d.extra) if d.extra else UNKNOWN
        node = d.node
        if isinstance(node, cst.Assign) and isinstance(prev, Tensor):
            return prev  # ``t[..., :n] = x`` writes in place: shape and dtype stay
        if isinstance(node, cst.Assign):  # d[k] = v
            tgt = next((t.target for t in node.targets if isinstance(t.target, cst.Subscript)), None)
            if tgt is None or len(tgt.slice) != 1 or not isinstance(tgt.slice[0].slice, cst.Index):
                return UNKNOWN
            key = self.at(loc, self.bindings, lambda: self.eval(tgt.slice[0].slice.value))
            val = self.at(loc, self.bindings, lambda: self.eval(node.value))
            return set_item(prev, key, val)
        method = node.func.attr.value
        pos, kw = self._args(node)
        if pos is None:
            return widen(prev)
        vals = self.at(loc, self.bindings, lambda: [self.eval(a) for a in pos])
        kwv = self.at(loc, self.bindings, lambda: {k: self.eval(a) for k, a in kw.items()})
        return mutate(prev, method, vals, kwv, self.libs)

    _MAX_UNROLL = 32

    def _loop_value(self, d, loc):
        """A name a ``for`` loop builds up, replaying the body once per item when the
        items are known (``for sm in ("80", "90a"): flags += [f"-gencode=...{sm}"]``);
        else what the loop's definitions give joined (model/flow.py's two passes)."""
        name, before, joined = d.extra
        loop = d.node
        steps = loop_steps(loop, d.scope.mutators)
        items = as_items(self.at(loc, self.bindings, lambda: self.eval(loop.iter))) if steps else None
        if items is None or len(items) > self._MAX_UNROLL:
            return self._defs_value(joined)
        frame = {}
        for small in steps:  # every name the body sets starts from its value before the loop
            n = _step_name(small)
            if n is not None and n not in frame:
                defs = before if n == name else d.scope.defs_at(n, loop)
                frame[n] = self._defs_value(defs) if defs else UNKNOWN

        def replay():
            self._frames.append(frame)
            try:
                for item in items:
                    frame[loop.target.value] = item
                    for small in steps:
                        self._step(small, frame)
            finally:
                self._frames.pop()

        self.at(loc, self.bindings, replay)
        return frame.get(name, UNKNOWN)

    def _step(self, small, frame: dict) -> None:
        """One replayed statement of a loop body, on the loop's frame."""
        if isinstance(small, cst.AugAssign):
            op = type(small.operator).__name__.replace("Assign", "")
            # loop_steps keeps only a name's
            frame[cast(cst.Name, small.target).value] = _binop(
                op, frame.get(cast(cst.Name, small.target).value, UNKNOWN), self.eval(small.value), self.libs)
        elif isinstance(small, cst.Assign):
            t = cast("cst.Name | cst.Subscript", small.targets[0].target)  # what loop_steps keeps
            if isinstance(t, cst.Name):
                frame[t.value] = self.eval(small.value)
            elif isinstance(t.value, cst.Name) and len(t.slice) == 1 and isinstance(t.slice[0].slice, cst.Index):
                n = t.value.value
                frame[n] = set_item(frame.get(n, UNKNOWN), self.eval(t.slice[0].slice.value), self.eval(small.value))
        else:
            call = small.value
            n = call.func.value.value
            pos, kw = self._args(call)
            if pos is None:
                frame[n] = widen(frame.get(n, UNKNOWN))
            else:
                frame[n] = mutate(frame.get(n, UNKNOWN), call.func.attr.value, [self.eval(a) for a in pos],
                                  {k: self.eval(a) for k, a in kw.items()}, self.libs)

    # -- parameters ----------------------------------------------------------
    def _param(self, d):
        scope, p = d.scope, d.node
        name = p.name.value
        b = self.bindings.get(id(scope))
        if b is not None:
            v = self._bound(b, scope, p)
            if v is not NotImplemented:
                return v
        if scope.self_name == name and scope.owner_class is not None:
            return Instance(ClassValue(scope.owner_class, key=id(scope.owner_class)))
        if scope.cls_name == name and scope.owner_class is not None:
            return ClassValue(scope.owner_class, key=id(scope.owner_class))
        sites = self._sites_value(scope, p)
        if sites is not NotImplemented:
            return sites
        if p.default is not None:
            self.touched |= OPENS  # the default holds in a closed world only: not the same in an open twin
            if getattr(self.world, "open", False):
                return UNKNOWN  # an open world: no call of the file shows what a caller passes
        return self._param_default(scope, p)

    def _param_default(self, scope, p):
        fn = scope.node
        owner = self._m(fn).parent_of(fn)
        if p.default is not None:
            return self.at((owner, fn), {}, lambda: self.eval(p.default))
        if p.star == "*":
            return UNKNOWN
        if p.star == "**":
            return UNKNOWN
        ann = p.annotation.annotation if p.annotation is not None else None
        if ann is not None:
            cls = self.at((owner, fn), {}, lambda: self.eval(ann))
            if isinstance(cls, ClassValue):
                return Instance(cls)
        return UNKNOWN

    def _bound(self, b: Binding, scope, p):
        """The value a call gives parameter ``p``."""
        fn = scope.node
        ps = fn.params
        positional = [*ps.posonly_params, *ps.params]
        name = p.name.value
        if b.receiver is not None and positional and scope.self_name is not None:
            if name == positional[0].name.value:
                return b.receiver
            positional = positional[1:]
        elif scope.cls_name is not None and positional:  # a classmethod: ``cls`` is the class
            if name == scope.cls_name:
                r = b.receiver
                return r.cls if isinstance(r, Instance) else r if isinstance(r, ClassValue) else \
                    ClassValue(scope.owner_class, key=id(scope.owner_class))
            positional = positional[1:]
        if b.given is not None:
            v = b.given.get(name, UNKNOWN)
            if isinstance(v, Deferred):
                return self._deferred(v)
            return UNKNOWN if isinstance(v, Opaque) else v
        if b.call is None:
            return NotImplemented
        args = self._call_args(b)
        if args is None:
            return UNKNOWN
        pos, kw, complete = args
        names = [q.name.value for q in positional]
        if p.star == "*":
            return tuple(self._arg(b, v) for v in pos[len(names):]) if complete else UNKNOWN
        if p.star == "**":
            named = set(names) | {q.name.value for q in ps.kwonly_params}
            return DictValue(tuple((k, self._arg(b, v)) for k, v in kw.items() if k not in named),
                             None if complete else UNKNOWN)
        if name in names:
            i = names.index(name)
            if i < len(pos):
                return self._arg(b, pos[i])
        if name in kw:
            return self._arg(b, kw[name])
        if not complete:
            return UNKNOWN
        if isinstance(b.call.func, cst.Subscript) and len(fn.decorators) > 1:
            return UNKNOWN  # a launch of an autotuned kernel: @triton.autotune/heuristics may set what is not passed
        if p.default is not None:
            return self._param_default(scope, p)
        return UNKNOWN

    def _deferred(self, d: Deferred):
        v = self.at(d.loc, {}, lambda: self.eval(d.node))
        for i in d.path:
            v = item_at(v, i)
        return v

    def _call_args(self, b: Binding):
        """Positional values, keyword values, and whether splats were all known. A plain
        argument stays its expression (``_Expr``) until a parameter asks for it (``_arg``):
        a guard on one parameter needs no other argument of the call evaluated."""
        key = ("args", id(b))
        hit = self.memo.get(key)
        if hit is not None:
            self.touched |= hit[1]
            return hit[0]
        call = b.call

        def ev():
            pos, kw, complete = [], {}, True
            for a in call.args:
                if a.star == "*":
                    v = self.eval(a.value)
                    items = as_items(v)
                    if items is None:
                        complete = False
                        continue
                    pos.extend(items)
                elif a.star == "**":
                    v = self.eval(a.value)
                    if isinstance(v, DictValue):
                        kw.update({k: x for k, x in v.items if isinstance(k, str)})
                        if not v.exact:
                            complete = False
                    else:
                        complete = False
                elif a.keyword is not None:
                    kw[a.keyword.value] = _Expr(a.value)
                else:
                    pos.append(_Expr(a.value))
            return pos, kw, complete

        touched, self.touched = self.touched, 0
        out = self.at(b.loc, b.outer, ev)
        self.memo[key] = (out, self.touched)  # kept with what it depended on, as every answer
        self.touched |= touched
        return out

    def _arg(self, b: Binding, v):
        """A value ``_call_args`` gave: an argument expression is evaluated at the call, once."""
        if type(v) is not _Expr:
            return v
        key = ("arg", id(b), id(v.node))
        hit = self.memo.get(key)
        if hit is None:
            touched, self.touched = self.touched, 0
            hit = self.memo[key] = (self.at(b.loc, b.outer, lambda: self.eval(v.node)), self.touched)
            self.touched |= touched
        self.touched |= hit[1]
        return hit[0]

    def call_bindings(self, fn_node) -> list:
        """Bindings for each call of the file's function ``fn_node`` (its call sites),
        empty when there are none or too many. Each is a ``Binding``."""
        key = ("sites", id(fn_node))
        hit = self.memo.get(key)
        if hit is not None:
            self.touched |= hit[1][0]  # (while still being found, a call from inside: the outer search adds it)
            return hit[0]
        out: list = []
        seen = [0]  # what finding the sites depended on (the callee of each call)
        self.memo[key] = (out, seen)  # recursion: a function calling itself has no new sites
        touched, self.touched = self.touched, 0
        try:
            self._find_sites(fn_node, out)
        finally:
            seen[0] = self.touched
            self.touched |= touched
        return out

    def _find_sites(self, fn_node, out: list) -> None:
        model = self._m(fn_node)
        scope = model.scope(fn_node)
        name = fn_node.name.value
        cls = scope.owner_class
        targets = model.calls_named(name)
        if cls is not None and name in CALLED_THROUGH_CLASS:
            targets = model.calls_named(cls.name.value) + (model.calls() if name != "__init__" else [])
        found = []
        for call, owner, stmt in targets:
            loc = (owner, stmt)
            callee = self._callee(call, loc)
            for opt in options(callee):
                if isinstance(opt, Function) and opt.node is fn_node:
                    found.append(self._keep(Binding(call, loc, {}, opt.owner)))
                elif cls is not None and name == "__init__" and isinstance(opt, ClassValue) and opt.node is cls:
                    inst = Instance(opt, call, id(call))
                    b = self._keep(Binding(call, loc, {}, inst))
                    self._ctors().setdefault(("ctor", id(call)), b)
                    found.append(b)
                elif cls is not None and name in ("forward", "__call__") and isinstance(opt, Instance) \
                        and opt.cls.node is cls and call.func is not None:
                    found.append(self._keep(Binding(call, loc, {}, opt)))
            if len(found) > _MAX_SITES:
                break
        if not found and cls is None and self.project is not None and not self.guard \
                and isinstance(model.parent_of(fn_node), cst.Module):
            found = self._project_sites(fn_node, name)
        if len(found) <= _MAX_SITES:
            out.extend(found)

    def _project_sites(self, fn_node, name: str) -> list:
        """Calls of a module-level function from the package's other modules
        (``save_checkpoint(prefetcher)`` in train.py for checkpoint.py's function)."""
        env = self.project.env_of(fn_node)
        found = []
        for other in self.project.callers(env.path if env is not None else None, name):
            for call, owner, stmt in other.model.calls_named(name):
                loc = (owner, stmt)
                callee = self._callee(call, loc)
                if any(isinstance(o, Function) and o.node is fn_node for o in options(callee)):
                    found.append(self._keep(Binding(call, loc, {}, None)))
                if len(found) > _MAX_SITES:
                    return found
        return found

    def _callee(self, call, loc):
        """What a call of the file calls, as seen where it is made; memoised per world:
        every function's call sites are searched among the same calls (a ``forward``'s
        among all of them)."""
        key = ("callee", id(call))
        hit = self._hit(key)
        if hit is not None:
            self.touched |= hit[1]
            return hit[0]
        touched, self.touched = self.touched, False
        v = self.at(loc, {}, lambda: self.eval(call.func))
        func = call.func
        if isinstance(func, cst.Subscript) and isinstance(func.value, cst.Name) \
                and not any(isinstance(o, Function) for o in options(v)):
            # ``kernel[grid](...)`` launches ``kernel`` (Triton, Numba); ``table[key](...)`` stays what it was
            launched = self.at(loc, {}, lambda: self.eval(func.value))
            if any(isinstance(o, Function) for o in options(launched)):
                v = launched
        if self.fuel > 0:
            self._put(key, (v, self.touched))
        self.touched |= touched
        return v

    def _sites_value(self, scope, p):
        fn = scope.node
        if not isinstance(fn, cst.FunctionDef) or self.model is None:
            return NotImplemented
        sites = self.call_bindings(fn)
        if not sites:
            return NotImplemented
        vals = []
        for b in sites:
            key = ("site", id(b), id(p))
            if key in self._active:
                return UNKNOWN
            self._active.add(key)
            try:
                saved = self.bindings
                self.bindings = {**saved, id(scope): b}
                try:
                    v = self._bound(b, scope, p)
                    if v is NotImplemented:
                        v = UNKNOWN
                finally:
                    self.bindings = saved
            finally:
                self._active.discard(key)
            vals.append(v)
        return self._join(vals)

    def _qual_value(self, q: str):
        if self.project is not None:
            v = self._project_value(q)
            if v is not NotImplemented:
                return v
        elif q.startswith("."):
            return UNKNOWN
        v, world_dependent = self.libs.name_value(q, self._environment())
        if v is not NotImplemented:
            self.touched |= WORLD if world_dependent else 0
            return v
        return Module(q)

    def _environment(self):
        env = self.memo.get("_env")
        if env is None:
            env = self.memo["_env"] = self.libs.environment(self.world.torch, self.capability(self.world.arch),
                                                            self.python, self.cuda)
        return env

    def _imports_ok(self, probe: ImportsOK):
        """Do a ``try`` body's imports (and, for a handler that is a version probe's fallback,
        the library attributes it reads) all exist in this world (flow.ImportsOK)?"""
        names = list(probe.names)
        if probe.handler is not None:
            if names and self.handlers is not None:
                catching = self.handlers.get("ImportError", {"ImportError", "Exception", "BaseException"})
                if not catching & set(probe.handler):
                    names = []  # this handler never sees an ImportError
            if probe.attrs and probe.handler and set(probe.handler) <= ATTR_FALLBACK \
                    and "AttributeError" in probe.handler:
                names += [q for q in (self._chain_name(c) for c in probe.attrs) if q]
            if not names:
                return UNKNOWN
        self.touched |= RELEASE  # attr_exists answers by release
        result = True
        for q in names:
            v = self.attr_exists(q, self.world)
            if v is False:
                return False
            if v is not True:
                result = UNKNOWN
        return result

    def _chain_name(self, chain: str) -> str | None:
        """``torch.get_autocast_dtype`` as written -> its qualified name where its head is an
        imported module (``import torch as T``: ``T.x`` -> ``torch.x``), else None."""
        head, _, rest = chain.partition(".")
        v = self._name(head)
        return f"{v.name}.{rest}" if isinstance(v, Module) and rest else None

    def _project_value(self, q: str):
        """A name of the project's own modules (``.utils.torch_version``,
        ``mypkg.config.V_DIM``): its value there; NotImplemented when ``q`` is no
        project name (a library), UNKNOWN for a relative name not found."""
        found = self.project.find(self.path, q, self.guard)
        if found is None:
            return UNKNOWN if q.startswith(".") else NotImplemented
        env, attrs = found
        v = SourceModule(env.path, env)
        for a in attrs:
            v = self._value_attr(v, a)
        return v

    def _module_attr(self, m: SourceModule, attr: str):
        """A module-level name of a project module, else its submodule."""
        env = m.env
        if env.model.scope(env.module).final.get(attr) is not None:
            return self.at((env.module, None), {}, lambda: self._name(attr))
        found = self.project.find(env.path, "." + attr) if env.path.endswith("__init__.py") else None
        return SourceModule(found[0].path, found[0]) if found is not None and not found[1] else UNKNOWN

    # -- expressions ---------------------------------------------------------
    def eval(self, node: cst.BaseExpression):
        if self.depth > self.MAX_DEPTH or self.fuel <= 0:
            return UNKNOWN
        self.fuel -= 1
        self.depth += 1
        try:
            v = self._eval(node)
            return UNKNOWN if bounds.too_big(v) else v
        except (TypeError, ValueError, ZeroDivisionError, IndexError, AttributeError, KeyError, RecursionError,
                OverflowError, MemoryError):
            return UNKNOWN
        finally:
            self.depth -= 1

    def _eval(self, node):
        # The commonest nodes first, by exact type: isinstance against LibCST's ABCs is
        # slow, and these types have no subclasses, so the chain below picks the same branch.
        tp = type(node)
        if tp is cst.Name:
            return self._name(node.value)
        if tp is cst.Attribute:
            return self._attribute(node)
        if tp is cst.Call:
            return self._call(node)
        if isinstance(node, Given):
            return node.value
        if isinstance(node, ImportsOK):
            return self._imports_ok(node)
        if isinstance(node, Returns):
            return self._returns(node.call)
        if isinstance(node, LoopRuns):
            v = self.eval(node.iter)
            items = as_items(v)
            if items is not None:
                return bool(items)
            return True if isinstance(v, Seq) and v.items else UNKNOWN
        if isinstance(node, cst.Integer):
            return int(node.value.replace("_", ""), 0)
        if isinstance(node, cst.Float):
            return float(node.value.replace("_", ""))
        if isinstance(node, cst.SimpleString):
            v = node.evaluated_value
            return v if isinstance(v, str) else UNKNOWN
        if isinstance(node, cst.ConcatenatedString):
            return concat(self.eval(node.left), self.eval(node.right))
        if isinstance(node, cst.FormattedString):
            return self._fstring(node)
        if isinstance(node, cst.Name):
            return self._name(node.value)
        if isinstance(node, cst.Attribute):
            return self._attribute(node)
        if isinstance(node, cst.Tuple):
            items = self._elements(node.elements)
            return tuple(items) if items is not None else UNKNOWN
        if isinstance(node, (cst.List, cst.Set)):
            items = self._elements(node.elements)
            kind = "list" if isinstance(node, cst.List) else "set"
            return Seq(tuple(items), None, kind) if items is not None else Seq((), UNKNOWN, kind)
        if isinstance(node, cst.Dict):
            return self._dict(node)
        if isinstance(node, (cst.ListComp, cst.SetComp, cst.GeneratorExp, cst.DictComp)):
            return self._comprehension(node)
        if isinstance(node, cst.UnaryOperation):
            v = self.eval(node.expression)
            if isinstance(node.operator, cst.Not):
                t = truth(v)
                return UNKNOWN if t is UNKNOWN else (not t)
            if not plain(v):
                return UNKNOWN
            if isinstance(node.operator, cst.Minus):
                return -v
            if isinstance(node.operator, cst.Plus):
                return +v
            return UNKNOWN
        if isinstance(node, cst.BinaryOperation):
            a, b = self.eval(node.left), self.eval(node.right)
            return _binop(type(node.operator).__name__, a, b, self.libs)
        if isinstance(node, cst.BooleanOperation):
            return self._boolop(node)
        if isinstance(node, cst.Comparison):
            return self._compare(node)
        if isinstance(node, cst.Subscript):
            return self._subscript(node)
        if isinstance(node, cst.IfExp):
            t = truth(self.eval(node.test))
            if t is UNKNOWN:
                return self._join([self.eval(node.body), self.eval(node.orelse)])
            return self.eval(node.body if t else node.orelse)
        if isinstance(node, cst.Call):
            return self._call(node)
        if isinstance(node, cst.Lambda):
            return Function(node, key=id(node))
        if isinstance(node, cst.NamedExpr):
            return self.eval(node.value)
        if isinstance(node, cst.Await):
            return UNKNOWN
        return UNKNOWN

    def _elements(self, elements):
        items = []
        for el in elements:
            if isinstance(el, cst.StarredElement):
                more = as_items(self.eval(el.value))
                if more is None:
                    return None
                items.extend(more)
            else:
                items.append(self.eval(el.value))
        return items

    def _dict(self, node: cst.Dict):
        items: dict = {}
        more = None
        for el in cast("Sequence[cst.DictElement | cst.StarredDictElement]", node.elements):  # libcst's two kinds
            if isinstance(el, cst.StarredDictElement):
                v = self.eval(el.value)
                if isinstance(v, DictValue):
                    items.update(v.items)
                    if v.more is not None:
                        more = join([more, v.more]) if more is not None else v.more
                else:
                    more = UNKNOWN
                continue
            k = self.eval(el.key)
            v = self.eval(el.value)
            if k is UNKNOWN or not hashable(k):
                more = join([more, v]) if more is not None else v
                continue
            items[k] = v
        return DictValue(tuple(items.items()), more)

    def _comprehension(self, node):
        """``[f(x) for x in known]``: evaluated per item when the iterable is known."""
        if len(_comp_fors(node.for_in)) != 1:
            return UNKNOWN if isinstance(node, cst.GeneratorExp) else _unknown_container(node)
        forin = node.for_in
        seq = as_items(self.eval(forin.iter))
        if seq is None or len(seq) > 64 or forin.ifs:
            return UNKNOWN if isinstance(node, cst.GeneratorExp) else _unknown_container(node)
        out = []
        for item in seq:
            frame: dict = {}
            _bind_frame(forin.target, item, frame)
            self._frames.append(frame)
            try:
                if isinstance(node, cst.DictComp):
                    out.append((self.eval(node.key), self.eval(node.value)))
                else:
                    out.append(self.eval(node.elt))
            finally:
                self._frames.pop()
        if isinstance(node, cst.DictComp):
            if any(k is UNKNOWN or not hashable(k) for k, _ in out):
                return DictValue((), UNKNOWN)
            return DictValue(tuple(dict(out).items()))
        if isinstance(node, cst.GeneratorExp):
            return tuple(out)
        return Seq(tuple(out), None, "set" if isinstance(node, cst.SetComp) else "list")

    def _fstring(self, node: cst.FormattedString):
        parts: list = []
        for part in cast("Sequence[cst.FormattedStringText | cst.FormattedStringExpression]", node.parts):
            if isinstance(part, cst.FormattedStringText):
                parts.append(part.value.replace("{{", "{").replace("}}", "}"))
                continue
            v = self.eval(part.expression)
            spec = None
            if part.format_spec:
                if all(isinstance(s, cst.FormattedStringText) for s in part.format_spec):
                    spec = "".join(s.value for s in cast("Sequence[cst.FormattedStringText]", part.format_spec))
                else:
                    parts.append(UNKNOWN)
                    continue
            parts.append(format_value(v, spec, part.conversion))
        return mkstr(parts)

    def _boolop(self, node: cst.BooleanOperation):
        left = self.eval(node.left)
        lt = truth(left)
        is_and = isinstance(node.operator, cst.And)
        if lt is not UNKNOWN:
            if is_and and not lt:
                return left
            if not is_and and lt:
                return left
            return self.eval(node.right)
        rt = truth(self.eval(node.right))
        if is_and and rt is False:
            return False
        if not is_and and rt is True:
            return True
        return UNKNOWN

    def _compare(self, node: cst.Comparison):
        left = self.eval(node.left)
        result = True
        for target in node.comparisons:
            right = self.eval(target.comparator)
            op = type(target.operator)
            r: Any = NotImplemented  # then a truth value, or UNKNOWN
            if op in (cst.In, cst.NotIn):  # "p" in inspect.signature(f).parameters: the release's API table
                r = self.libs.signature_contains(left, right, self.world, self.attr_exists)
                if r is not NotImplemented:
                    self.touched |= RELEASE
                    r = (not r) if op is cst.NotIn and r is not UNKNOWN else r
            if r is NotImplemented:
                r = _compare_one(op, left, right, self.libs)
            if r is UNKNOWN:
                result = UNKNOWN
            elif not r:
                return False
            left = right
        return result

    def _subscript(self, node: cst.Subscript):
        base = self.eval(node.value)
        if isinstance(base, Tensor):
            idx = tuple(self._index_part(el.slice) for el in node.slice)
            v = self.libs.tensor_index(base, idx[0] if len(idx) == 1 else idx)
            return UNKNOWN if v is NotImplemented else v
        if len(node.slice) != 1:
            return UNKNOWN
        sl = node.slice[0].slice
        if isinstance(sl, cst.Index):
            i = self.eval(sl.value)
            return item_at(base, i)
        if isinstance(sl, cst.Slice):
            if isinstance(base, Union):
                return UNKNOWN
            items: tuple | str | None = \
                base if isinstance(base, tuple) else (base.items if isinstance(base, Seq) and base.exact else None)
            if isinstance(base, str):
                items = base
            if items is None:
                return UNKNOWN
            parts = [None if p is None else self.eval(p) for p in (sl.lower, sl.upper, sl.step)]
            if any(p is not None and not isinstance(p, int) for p in parts):
                return UNKNOWN
            got = items[slice(*parts)]
            if isinstance(base, tuple) and type(base) is not tuple:
                return type(base)(got)  # a library's tuple (``sys.version_info[:2]``) keeps its type
            if isinstance(base, Seq):
                return Seq(tuple(got), None, base.kind)
            return got
        return UNKNOWN

    def _index_part(self, sl):
        if isinstance(sl, cst.Slice):
            parts = (None if p is None else self.eval(p) for p in (sl.lower, sl.upper, sl.step))
            return self.libs.index_slice(*parts)
        v = sl.value
        if isinstance(v, cst.Ellipsis):
            return ...
        return seq_as_tuple(self.eval(v))

    def _attribute(self, node: cst.Attribute):
        q = self.resolve(node)
        if q is not None:
            v = self._qual_value(q)
            if not isinstance(v, Module):
                return v
            base = self.eval(node.value)
            if not isinstance(base, Module) and base is not UNKNOWN:
                return self._value_attr(base, node.attr.value)
            return v
        return self._value_attr(self.eval(node.value), node.attr.value)

    def _value_attr(self, base, attr: str):
        if isinstance(base, Union):
            return self._join([self._value_attr(o, attr) for o in base.options])
        if isinstance(base, Tensor):
            v = self.libs.tensor_attribute(base, attr)
            return UNKNOWN if v is NotImplemented else v
        if isinstance(base, Version) and attr in ("major", "minor", "micro", "release", "base_version"):
            return getattr(base, attr)
        if isinstance(base, Instance):
            return self._instance_attr(base, attr)
        if isinstance(base, ClassValue):
            return self._class_attr(base, attr, None)
        if isinstance(base, PathValue):
            return path_attr(base, attr)
        if isinstance(base, Module):
            return Module(f"{base.name}.{attr}")
        if isinstance(base, SourceModule):
            return self._module_attr(base, attr)
        v = self.libs.value_attribute(base, attr)  # device properties, sys.version_info, a namespace...
        return UNKNOWN if v is NotImplemented else v

    # -- classes and instances -----------------------------------------------
    def _classes(self, cls: ClassValue) -> list:
        """The class and its bases defined in this file, in lookup order."""
        out: list[ClassValue]
        out, todo = [], [cls]
        while todo and len(out) < 8:
            c = todo.pop(0)
            if any(x.node is c.node for x in out):
                continue
            out.append(c)
            for base in c.node.bases:
                owner = self._m(c.node).parent_of(c.node)
                v = self.at((owner, c.node), {}, lambda: self.eval(base.value))
                if isinstance(v, ClassValue):
                    todo.append(v)
        return out

    def _instance_attr(self, inst: Instance, attr: str):
        if self.model is None:
            return UNKNOWN
        key = ("attr", inst.cls.key, inst.ctor_key, attr)
        hit = self._hit(key)
        if hit is not None:
            self.touched |= hit[1]
            return hit[0]
        if key in self._active:
            return UNKNOWN
        self._active.add(key)
        touched, self.touched = self.touched, False
        try:
            v = self._instance_attr_uncached(inst, attr)
        finally:
            self._active.discard(key)
        if self.fuel > 0:
            self._put(key, (v, self.touched))
        self.touched |= touched
        return v

    def _instance_attr_uncached(self, inst: Instance, attr: str):
        for c in self._classes(inst.cls):
            model = self._m(c.node)
            methods = model.methods(c.node)
            defs = model.attr_defs(c.node).get(attr)
            if defs:
                vals = []
                for d in defs:
                    fn = d.scope.node
                    if fn.name.value == "__init__" and inst.ctor is not None:
                        b = self._ctor_binding(inst)
                    else:
                        b = self._receiver(inst)
                    saved = self.bindings
                    self.bindings = {**saved, id(d.scope): b}
                    try:
                        if not self._feasible(d.conds, d.scope):
                            continue
                        vals.append(self._def_value(d))
                    finally:
                        self.bindings = saved
                if vals:
                    return self._join(vals)
            if attr in methods:
                fn = methods[attr]
                if any(isinstance(dd.decorator, cst.Name) and dd.decorator.value == "property" for dd in fn.decorators):
                    return self._invoke(Function(fn, inst, id(fn)), None)
                return Function(fn, inst, id(fn))
            v = self._class_attr(c, attr, inst)
            if v is not NotImplemented:
                return v
        return UNKNOWN

    def _ctors(self) -> dict:
        """Where the constructor call of an instance is recorded (``("ctor", id(call))`` -> its
        binding) when the call is evaluated: for every world when worlds share answers, since a
        world that takes the instance from another's answer never evaluates the call itself.
        A binding is where a call is made, not a value: each world reads its arguments itself."""
        return self.memo if self.shared is None else self.shared

    def _ctor_binding(self, inst: Instance):
        ctor = self._ctors().get(("ctor", inst.ctor_key))
        if ctor is None:
            return self._receiver(inst)
        return ctor

    def _receiver(self, inst: Instance) -> Binding:
        """The binding of a method called on ``inst`` with unknown arguments (one per instance)."""
        key = ("recv", inst.cls.key, inst.ctor_key)
        b = self.memo.get(key)
        if b is None:
            b = self.memo[key] = Binding(None, None, {}, inst)
        return b

    def _keep(self, b: Binding) -> Binding:
        """Memo keys use the binding's id: keep it alive so the id is never reused."""
        self.memo.setdefault("_keep", []).append(b)
        return b

    def _class_attr(self, cls: ClassValue, attr: str, inst):
        scope = self._m(cls.node).scope(cls.node)
        if inst is not None and inst.ctor is not None and _is_dataclass(cls.node):
            v = self._dataclass_field(cls, inst, attr)  # a field without a default has no def
            if v is not NotImplemented:
                return v
        defs = scope.final.get(attr)
        if defs is None:
            return NotImplemented if inst is not None else UNKNOWN
        v = self._defs_value(defs)
        if isinstance(v, Function) and inst is not None:
            return Function(v.node, inst, v.key)
        if isinstance(v, Function) and isinstance(v.node, cst.FunctionDef) and is_classmethod(v.node):
            return Function(v.node, cls, v.key)  # bound to the class it is read from
        if isinstance(v, LibObject) and v.qualname in ("dataclasses.field",):
            default = v.kw("default", NotImplemented)
            return UNKNOWN if default is NotImplemented else default
        return v

    def _dataclass_field(self, cls: ClassValue, inst: Instance, attr: str):
        fields = []
        body = cls.node.body.body if isinstance(cls.node.body, cst.IndentedBlock) else ()
        for stmt in body:
            if isinstance(stmt, cst.SimpleStatementLine):
                for small in stmt.body:
                    if isinstance(small, cst.AnnAssign) and isinstance(small.target, cst.Name):
                        fields.append(small.target.value)
        if attr not in fields:
            return NotImplemented
        binding = self._ctor_binding(inst)
        if binding.call is None:
            return NotImplemented
        args = self._call_args(binding)
        if args is None:
            return UNKNOWN
        pos, kw, complete = args
        if attr in kw:
            return self._arg(binding, kw[attr])
        if attr in fields and fields.index(attr) < len(pos):
            return self._arg(binding, pos[fields.index(attr)])
        return NotImplemented if complete else UNKNOWN

    # -- what an instance holds (asked by AIC104) ------------------------------
    def model_of(self, node):
        """The FileModel a class or function node belongs to (this file's or a project module's)."""
        return self._m(node)

    def classes(self, cls: ClassValue) -> list:
        """The class and its bases defined in this file, in lookup order."""
        return self._classes(cls)

    def attribute(self, base, attr: str):
        """The value of ``base.<attr>`` for an abstract value ``base``."""
        return self._value_attr(base, attr)

    def in_method(self, inst: Instance, fn: cst.FunctionDef, stmt, expr, conds=()):
        """The value of ``expr`` at ``stmt`` of ``inst``'s method ``fn`` (``self`` is
        ``inst``); NotImplemented when this world rules out the branch it sits in."""
        scope = self._m(fn).scope(fn)
        b = self._ctor_binding(inst) if fn.name.value == "__init__" and inst.ctor is not None \
            else self._receiver(inst)
        saved = self.bindings
        self.bindings = {**saved, id(scope): b}
        try:
            if not self._feasible(conds, scope):
                return NotImplemented
            return self.at((fn, stmt), self.bindings, lambda: self.eval(expr))
        finally:
            self.bindings = saved

    def method_result(self, inst: Instance, fn: cst.FunctionDef):
        """What ``inst.<fn>()`` returns."""
        return self._invoke(Function(fn, inst, id(fn)), None)

    # -- calls ---------------------------------------------------------------
    def _args(self, node: cst.Call):
        """The call's argument expressions; ``*seq``/``**dict`` splats whose
        contents the model knows become their items (as Given), else (None, None)."""
        pos: list[cst.BaseExpression | Given]
        kw: dict[str, cst.BaseExpression | Given]
        pos, kw = [], {}
        for a in node.args:
            if a.star == "*":
                items = as_items(self.eval(a.value))
                if items is None:
                    return None, None
                pos.extend(Given(v) for v in items)
            elif a.star == "**":
                d = self.eval(a.value)
                if not isinstance(d, DictValue) or not d.exact or not all(isinstance(k, str) for k, _ in d.items):
                    return None, None
                kw.update((k, Given(v)) for k, v in d.items)
            elif a.keyword is not None:
                kw[a.keyword.value] = a.value
            else:
                pos.append(a.value)
        return pos, kw

    def _call(self, node: cst.Call):
        func = node.func
        q = self.resolve(func)
        pos, kw = self._args(node)
        if q is not None and pos is not None:
            v = self._known_call(q, pos, kw)
            if v is not NotImplemented:
                return v
            t = self.libs.call_results.get(q)
            if t is not None:  # a library call whose result is an object of a known type
                return LibObject(t, (), node)
        if isinstance(func, cst.Name) and pos is not None and func.value not in self.shadow:
            v = self._builtin(func.value, pos, kw)
            if v is not NotImplemented:
                return v
        if q is None:
            callee = self.eval(func)
        else:  # a library call, unless the name is one of the project's own modules
            callee = self._project_value(q) if self.project is not None else UNKNOWN
            if callee is NotImplemented or isinstance(callee, SourceModule):
                callee = UNKNOWN
        if isinstance(callee, Union):
            return self._join([self._call_option(o, node, func) for o in callee.options])
        v = self._call_value(callee, node, func)
        if v is not NotImplemented:
            return v
        if q is not None and not q.startswith("builtins."):
            return LibObject(q, self._lib_kwargs(node), node)
        return self._call_option(callee, node, func)

    def _call_option(self, callee, node, func):
        v = self._call_value(callee, node, func)
        if v is not NotImplemented:
            return v
        if isinstance(callee, Module) and callee.name.rsplit(".", 1)[-1][:1].isupper():
            # a library class reached through a value (``RECIPES[name]()``): an object of it
            return LibObject(callee.name, self._lib_kwargs(node), node)
        return UNKNOWN

    def _call_value(self, callee, node, func):
        if isinstance(callee, self.libs.layer_type):
            pos, kw = self._args(node)
            if pos is None or len(pos) != 1:
                return UNKNOWN
            v = self.libs.apply_layer(callee, self.eval(pos[0]))
            return UNKNOWN if v is NotImplemented else v
        if isinstance(callee, Function):
            return self._invoke(callee, node)
        if isinstance(callee, ClassValue):
            inst = Instance(callee, node, id(node))
            ctors = self._ctors()
            if ("ctor", id(node)) not in ctors:
                ctors[("ctor", id(node))] = self._keep(Binding(node, self.loc, self.bindings, inst))
            return inst
        if isinstance(callee, Instance):
            for c in self._classes(callee.cls):
                m = self._m(c.node).methods(c.node)
                for name in ("forward", "__call__"):
                    if name in m:
                        return self._invoke(Function(m[name], callee, id(m[name])), node)
            return UNKNOWN
        if isinstance(func, cst.Attribute):
            base = self.eval(func.value)
            if isinstance(base, Module) and func.attr.value[:1].isupper():
                return NotImplemented  # a library class by its dotted name (torch.cuda.Stream()): an object
            return self._method(base, func.attr.value, node)
        return NotImplemented

    def _lib_kwargs(self, node: cst.Call) -> tuple:
        out = []
        for a in node.args:
            if a.keyword is not None and not a.star:
                out.append((a.keyword.value, self.eval(a.value)))
        return tuple(out)

    def _invoke(self, fn: Function, call):
        """The value a call of one of the file's functions returns."""
        if self.model is None:
            return UNKNOWN
        node = fn.node
        if isinstance(node, cst.Lambda):
            if call is None:
                return UNKNOWN
            pos, kw = self._args(call)
            if pos is None:
                return UNKNOWN
            frame = {}
            params = node.params.params
            for i, p in enumerate(params):
                if i < len(pos):
                    frame[p.name.value] = self.eval(pos[i])
                elif p.name.value in kw:
                    frame[p.name.value] = self.eval(kw[p.name.value])
                else:
                    frame[p.name.value] = UNKNOWN
            self._frames.append(frame)
            try:
                return self.eval(node.body)
            finally:
                self._frames.pop()
        key = ("invoke", id(node))
        if key in self._active or len(self._active) > 24:
            return UNKNOWN
        caller = self._scope()[0]
        owner = (fn.owner.cls.key, fn.owner.ctor_key) if isinstance(fn.owner, Instance) else None
        mkey = ("ret", id(node), id(call), owner, id(self.bindings.get(id(caller))) if caller else 0)
        hit = self._hit(mkey)
        if hit is not None:
            self.touched |= hit[1]
            return hit[0]
        touched, self.touched = self.touched, False
        v = self._invoke_uncached(fn, call, key)
        if self.fuel > 0:
            self._put(mkey, (v, self.touched))
        self.touched |= touched
        return v

    def _returns(self, call: cst.Call):
        """Does this call of one of the file's functions return here (False: every path
        through it ends the run in this world, ``pytest.skip`` for a feature the GPU lacks)?"""
        fn = self.eval(call.func)
        if not isinstance(fn, Function) or not isinstance(fn.node, cst.FunctionDef) or self.model is None:
            return UNKNOWN
        key = ("invoke", id(fn.node))
        if key in self._active or len(self._active) > 24:
            return UNKNOWN

        def ends(scope):
            if any(self._feasible(conds, scope) for _expr, _stmt, conds in scope.returns):
                return True
            return bool(scope.falls_through and self._feasible(scope.final_conds, scope))
        return self._in_body(fn, call, key, None, ends)

    def call_with(self, fn_node: cst.FunctionDef, given: dict):
        """What the file's function returns when its parameters have the ``given``
        values (the others unknown): a support check run for one GPU."""
        b = self._keep(Binding(None, self.loc, self.bindings, None, dict(given)))
        return self._invoke_uncached(Function(fn_node, key=id(fn_node)), None, ("invoke", id(fn_node)), b)

    def _invoke_uncached(self, fn: Function, call, key, b: Binding | None = None):
        node = fn.node
        if any(isinstance(d.decorator, cst.Name) and d.decorator.value == "contextmanager" for d in node.decorators):
            return UNKNOWN

        def value(scope):
            if scope.is_generator:
                return UNKNOWN
            vals = []
            for expr, stmt, conds in scope.returns:
                if not self._feasible(conds, scope):
                    continue
                if expr is None:
                    vals.append(None)
                else:
                    vals.append(self.at((node, stmt), self.bindings, lambda e=expr: self.eval(e)))
            if scope.falls_through and self._feasible(scope.final_conds, scope):
                vals.append(None)
            return self._join(vals) if vals else UNKNOWN
        return self._in_body(fn, call, key, b, value)

    def _in_body(self, fn: Function, call, key, b: Binding | None, read):
        """``read(scope)`` with ``fn``'s parameters bound by ``call`` (or by ``b``)."""
        scope = self._m(fn.node).scope(fn.node)
        if b is None:
            b = self._keep(Binding(call, self.loc, self.bindings, fn.owner))
        self._active.add(key)
        saved = self.bindings
        self.bindings = {**saved, id(scope): b}
        try:
            return read(scope)
        finally:
            self.bindings = saved
            self._active.discard(key)

    def _method(self, base, method: str, call):
        if isinstance(base, Union):
            return self._join([self._method(o, method, call) for o in base.options])
        pos, kw = self._args(call)
        if pos is None:
            return UNKNOWN
        if isinstance(base, Module):
            # a library object reached through a value (a function-local import, an alias):
            # its method by dotted name, as if written out (probes such as current_platform's)
            v = self._known_call(f"{base.name}.{method}", pos, kw)
            if v is not NotImplemented:
                return v
        libs = self.libs
        if base is UNKNOWN and method in libs.shaping_methods:
            base = Tensor(None)  # ``x.view(b, s, h, d)`` makes that shape whatever x was
        if isinstance(base, Tensor):
            args, kwargs = dims.sized_args(self, libs.method_size_args(method), pos, kw)
            args = [seq_as_tuple(a) for a in args]
            kwargs = {k: seq_as_tuple(v) for k, v in kwargs.items()}
            v = libs.tensor_method(base, method, args, kwargs)
            return UNKNOWN if v is NotImplemented else v
        if isinstance(base, libs.version_type):  # before str: it is one
            return libs.version_method(base, method, [self.eval(a) for a in pos])
        if isinstance(base, Instance):
            if method in libs.instance_returns_self:
                return base  # not defined by the class (it would have resolved to a Function)
            return UNKNOWN
        if isinstance(base, str):
            return self._str_method(base, method, pos, kw)
        if method in libs.parse_methods:
            v = libs.parsed(base, method)
            if v is not NotImplemented:
                return v
        if isinstance(base, PathValue):
            return path_method(base, method, [self.eval(a) for a in pos])
        if isinstance(base, DictValue):
            if method == "get" and pos:
                k = self.eval(pos[0])
                default = self.eval(pos[1]) if len(pos) > 1 else None
                got = base.get(k, NotImplemented) if hashable(k) and k is not UNKNOWN else NotImplemented
                if got is not NotImplemented:
                    return got
                return default if base.exact and k is not UNKNOWN else UNKNOWN
            if method in ("copy",):
                return base
            if method == "keys":
                return Seq(tuple(k for k, _ in base.items), None if base.exact else UNKNOWN)
            if method == "values":
                return Seq(tuple(v for _, v in base.items), base.more)
            if method == "items":
                return Seq(tuple((k, v) for k, v in base.items), None if base.exact else UNKNOWN)
            if method == "pop" and pos:
                k = self.eval(pos[0])
                got = base.get(k, NotImplemented) if hashable(k) and k is not UNKNOWN else NotImplemented
                return got if got is not NotImplemented else (self.eval(pos[1]) if len(pos) > 1 else UNKNOWN)
        if isinstance(base, Seq) and method == "copy":
            return base
        return UNKNOWN

    def _str_method(self, s: str, method: str, pos, kw):
        if method == "join" and len(pos) == 1:
            items = as_items(self.eval(pos[0]))
            if items is None:
                return PartialStr((UNKNOWN,))
            out: list = []
            for i, x in enumerate(items):
                if i:
                    out.append(s)
                out.append(x if isinstance(x, (str, PartialStr)) else UNKNOWN)
            return mkstr(flatten_parts(out))
        if method == "format":
            return str_format(s, [self.eval(a) for a in pos], {k: self.eval(v) for k, v in kw.items()})
        if method in ("upper", "lower", "strip", "lstrip", "rstrip") and not pos:
            return getattr(s, method)()
        if method == "replace" and len(pos) == 2:
            a, b = self.eval(pos[0]), self.eval(pos[1])
            if isinstance(a, str) and isinstance(b, str):
                grows = (s.count(a) if a else len(s) + 1) * max(len(b) - len(a), 0)
                return s.replace(a, b) if len(s) + grows <= bounds.MAX_STR else UNKNOWN
        if method == "split":
            sep = self.eval(pos[0]) if pos else None
            if sep is None or isinstance(sep, str):
                return Seq(tuple(s.split(sep)))
        if method in ("startswith", "endswith") and len(pos) == 1:
            a = self.eval(pos[0])
            if isinstance(a, (str, tuple)):
                return getattr(s, method)(a)
        return UNKNOWN

    def _known_call(self, q: str, pos, kw):
        if self.env_unset is not None and q in _ENV_READS:
            return self._unset_env_read(pos, kw)
        libs = self.libs
        v, world_dependent = libs.call_value(q, self._environment(), pos, kw, self.eval)
        if v is not NotImplemented:
            self.touched |= WORLD if world_dependent else 0
            return v
        v = libs.signature_call(q, pos, kw, self.resolve)  # inspect.signature(f) of a library function
        if v is not NotImplemented:
            return v
        model = libs.shape_model(q)
        if model is not None:
            v = self._shape_call(model, q, pos, kw)
            if v is not NotImplemented:
                return v
        if q in ("pathlib.Path", "pathlib.PurePath", "pathlib.PosixPath"):
            return path_new([self.eval(a) for a in pos])
        if q in ("os.path.join", "posixpath.join"):
            return os_join([self.eval(a) for a in pos])
        if q in ("os.path.dirname", "os.path.basename", "os.path.abspath", "os.path.realpath", "os.fspath"):
            v = self.eval(pos[0]) if len(pos) == 1 else UNKNOWN
            return os_path_fn(q.rsplit(".", 1)[1], v)
        if q == "os.environ.copy":
            return DictValue((), UNKNOWN)
        return NotImplemented

    def _unset_env_read(self, pos, kw):
        """``os.getenv(name, default)`` (``os.environ.get``, ``.setdefault``) where the environment
        lacks ``name``: the default, None without one."""
        name = self.eval(pos[0]) if pos else UNKNOWN
        if not isinstance(name, str) or self.env_unset is None:
            return UNKNOWN
        default = pos[1] if len(pos) > 1 else kw.get("default")
        self.env_unset.add(name)
        return self.eval(default) if default is not None else None

    def _shape_call(self, model, q: str, pos, kw):
        """A library call through the shape model's entry point ``model`` for it (libs.shape_model);
        the arguments that are sizes read as dims (model/dims.py)."""
        args, kwargs = dims.sized_args(self, self.libs.size_args(q), pos, kw)
        args = [seq_as_tuple(a) for a in args]
        kwargs = {k: seq_as_tuple(v) for k, v in kwargs.items()}
        return model(q, args, kwargs)

    def _builtin(self, name: str, pos, kw):
        """Builtins, when the name is not bound in the file."""
        if self._name_bound(name):
            return NotImplemented
        if name == "hasattr" and len(pos) == 2:
            attr = self.eval(pos[1])
            obj = self.resolve(pos[0])
            if isinstance(attr, str) and obj:
                self.touched |= RELEASE
                return self.attr_exists(f"{obj}.{attr}", self.world)
            return UNKNOWN
        if name == "getattr" and len(pos) >= 2:
            attr = self.eval(pos[1])
            if isinstance(attr, str):
                base = self.eval(pos[0])
                if len(pos) == 3 and isinstance(base, Module):
                    # getattr(torch, "float8_e8m0fnu", None): the default where the release lacks
                    # the name, so `is not None` guards as hasattr does
                    self.touched |= RELEASE
                    if self.attr_exists(f"{base.name}.{attr}", self.world) is False:
                        return self.eval(pos[2])
                v = self._value_attr(base, attr)
                if v is UNKNOWN and len(pos) == 3 and not isinstance(base, (Instance, Module)):
                    return UNKNOWN
                return v
            return UNKNOWN
        if name == "len" and len(pos) == 1:
            v = self.eval(pos[0])
            items = as_items(v)
            if isinstance(v, (str, DictValue)):
                return len(v) if isinstance(v, str) else (len(v.items) if v.exact else UNKNOWN)
            return len(items) if items is not None else UNKNOWN
        if name in ("int", "bool", "float", "str") and len(pos) == 1:
            v = self.eval(pos[0])
            if name == "bool":
                return truth(v)
            if name == "str" and isinstance(v, PathValue):  # str(Path(__file__).with_suffix(".cu"))
                return v.path
            if not plain(v) or isinstance(v, tuple):
                return PartialStr((UNKNOWN,)) if name == "str" and v is UNKNOWN else UNKNOWN
            return {"int": int, "float": float, "str": str}[name](v)
        if name in ("tuple", "list", "set") and len(pos) <= 1:
            v = self.eval(pos[0]) if pos else ()
            items = as_items(v)
            if name == "tuple":
                return tuple(items) if items is not None else UNKNOWN
            kind = "list" if name == "list" else "set"
            if items is not None:
                return Seq(tuple(items), None, kind)
            return Seq((), element(v), kind)
        if name == "dict":
            base = self.eval(pos[0]) if pos else DictValue(())
            if isinstance(base, Module) and base.name == "os.environ":
                base = DictValue((), UNKNOWN)
            if not isinstance(base, DictValue):
                base = DictValue((), UNKNOWN)
            extra = tuple((k, self.eval(v)) for k, v in kw.items())
            return dict_merge(base, DictValue(extra))
        if name in ("min", "max") and pos:
            vals = [self.eval(a) for a in pos] if len(pos) > 1 else as_items(self.eval(pos[0]))
            if vals and all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in vals):
                return (min if name == "min" else max)(vals)
            return UNKNOWN
        if name == "isinstance":
            return UNKNOWN
        if name == "map" and len(pos) == 2 and isinstance(pos[0], cst.Name) and pos[0].value in CONVERTERS \
                and not self._name_bound(pos[0].value):
            items = as_items(self.eval(pos[1]))
            if items is None:
                return UNKNOWN
            return Seq(tuple(convert(pos[0].value, x) for x in items))
        return NotImplemented

    def _name_bound(self, name: str) -> bool:
        if name in self.shadow or any(name in f for f in self._frames):
            return True
        scope, stmt = self._scope()
        while scope is not None:
            if scope.defs_at(name, stmt) is not None:
                return True
            scope, stmt = scope.parent, None
        return self.lookup(name) is not None


def _binop(op: str, a, b, libs):
    if isinstance(a, Tensor) or isinstance(b, Tensor):
        if a is UNKNOWN or b is UNKNOWN:
            # still a tensor, of unknown shape and dtype (x / torch.finfo(dt).max); .to(dt) then names its dtype
            return Tensor(None, None)
        v = libs.matmul(a, b) if op == "MatrixMultiply" else libs.binary(a, b)
        return UNKNOWN if v is NotImplemented else v
    if a is UNKNOWN or b is UNKNOWN:
        if op == "Add" and (isinstance(a, (str, PartialStr)) or isinstance(b, (str, PartialStr))):
            return concat(a, b)
        return UNKNOWN
    if isinstance(a, Union) or isinstance(b, Union):
        return join([_binop(op, x, y, libs) for x in options(a) for y in options(b)])
    if op == "Add" and (isinstance(a, PartialStr) or isinstance(b, PartialStr)):
        return concat(a, b)
    if op == "Divide" and isinstance(a, PathValue):
        return path_join(a, b)
    if op == "BitOr" and isinstance(a, DictValue) and isinstance(b, DictValue):
        return dict_merge(a, b)
    if op == "Add" and isinstance(a, Seq) and isinstance(b, Seq):
        if a.exact:
            return Seq(a.items + b.items, b.more, a.kind)
        return Seq(a.items, join([a.more, element(b)]), a.kind)
    fn = _BINOPS.get(op)
    if fn is None or not (plain(a) and plain(b)):
        return UNKNOWN
    if op == "Multiply" and (isinstance(a, (str, tuple)) or isinstance(b, (str, tuple))):
        seq, n = (a, b) if isinstance(a, (str, tuple)) else (b, a)
        if not isinstance(n, int) or n > 4096 or not bounds.repeat_fits(seq, n):
            return UNKNOWN  # bounded: a huge repeat is not worth folding
    if op == "Power" and (not isinstance(b, int) or abs(b) > 64 or not bounds.power_fits(a, b)):
        return UNKNOWN
    if op == "Modulo" and isinstance(a, str) and not bounds.printf_fits(a):
        return UNKNOWN  # "%999999999d" % 1
    if op in ("LeftShift",) and (not isinstance(b, int) or b > 64):
        return UNKNOWN
    return fn(a, b)


_BINOPS = {
    "Add": operator.add, "Subtract": operator.sub, "Multiply": operator.mul, "FloorDivide": operator.floordiv,
    "Modulo": operator.mod, "Divide": operator.truediv, "Power": operator.pow, "LeftShift": operator.lshift,
    "RightShift": operator.rshift, "BitAnd": operator.and_, "BitOr": operator.or_, "BitXor": operator.xor,
}


def _compare_one(op, left, right, libs):
    if left is UNKNOWN or right is UNKNOWN:
        return UNKNOWN
    if op in _EQUALITY and (_holds_unknown(left) or _holds_unknown(right)):
        return UNKNOWN  # ``(9, minor) == (9, 0)``, ``x.shape[-1] in (64, 128)``: Python's answer would be a guess
    if isinstance(left, Union) or isinstance(right, Union):
        results = {(_compare_one(op, a, b, libs)) for a in options(left) for b in options(right)}
        return results.pop() if len(results) == 1 else UNKNOWN
    dts = _dtypes_compared(op, left, right, libs.dtype_of)
    if dts is not None:
        return dts
    if op in (cst.Is, cst.IsNot):
        if left is None or right is None:
            other = right if left is None else left
            if other is None:
                r = True
            elif isinstance(other, (Instance, LibObject, Function, ClassValue, Tensor, Seq, DictValue, PathValue)) \
                    or plain(other) or isinstance(other, bool):
                r = False
            else:
                return UNKNOWN
            return r if op is cst.Is else not r
        return UNKNOWN
    if op in (cst.In, cst.NotIn):
        r = UNKNOWN
        if isinstance(right, libs.version_type):
            return UNKNOWN  # "cu12" in a release string: its local part (+cu124) is not modelled
        if isinstance(right, (tuple, str)) and not isinstance(left, PartialStr):
            r = left in right
        elif isinstance(right, Seq) and right.exact and plain(left):
            vals = right.items
            r = True if left in vals else (False if all(plain(x) for x in vals) else UNKNOWN)
        elif isinstance(right, DictValue) and hashable(left) and plain(left):
            if right.get(left, NotImplemented) is not NotImplemented:
                r = True
            elif right.exact:
                r = False
        if r is UNKNOWN:
            return UNKNOWN
        return r if op is cst.In else not r
    fn = _CMP.get(op)
    if fn is None:
        return UNKNOWN
    if not (_comparable(left, libs) and _comparable(right, libs)):
        return UNKNOWN
    return fn(left, right)


_EQUALITY = (cst.Equal, cst.NotEqual, cst.In, cst.NotIn)


def _holds_unknown(v, depth: int = 0) -> bool:
    """A named dim (a Sym, which == says differs from every int), or a tuple holding one or
    UNKNOWN: Python's == would answer for the unknown part (ordering raises instead)."""
    if isinstance(v, Sym):
        return True
    if isinstance(v, tuple) and depth < 4:
        return any(x is UNKNOWN or _holds_unknown(x, depth + 1) for x in v)
    return False


def _dtypes_compared(op, left, right, dtype_of):
    """``dtype == torch.float8_e4m3fn``, ``dtype in (torch.half, torch.bfloat16)``: torch dtypes
    are singletons, equal exactly when their canonical names (``dtype_of``) are (``torch.half``
    is ``torch.float16``). None when the operands are not all known dtypes."""
    a = dtype_of(left)
    if a is None:
        return None
    if op in (cst.In, cst.NotIn):
        items = right if isinstance(right, tuple) else right.items if isinstance(right, Seq) and right.exact else None
        names = [dtype_of(x) for x in items] if items is not None else [None]
        if None in names:
            return None
        return (a in names) if op is cst.In else (a not in names)
    b = dtype_of(right)
    if b is None or op not in (cst.Equal, cst.NotEqual, cst.Is, cst.IsNot):
        return None
    return (a == b) if op in (cst.Equal, cst.Is) else (a != b)


_ORDERED = (int, float, str, tuple, bool, Version)


def _comparable(v, libs) -> bool:
    return v is None or (isinstance(v, _ORDERED) or isinstance(v, libs.ordered_types)) \
        and not isinstance(v, PartialStr)


def _unknown_container(node):
    if isinstance(node, cst.DictComp):
        return DictValue((), UNKNOWN)
    return Seq((), UNKNOWN, "set" if isinstance(node, cst.SetComp) else "list")


def _comp_fors(forin) -> list:
    out = []
    while forin is not None:
        out.append(forin)
        forin = forin.inner_for_in
    return out


def _bind_frame(target, value, frame: dict) -> None:
    if isinstance(target, cst.Name):
        frame[target.value] = value
    elif isinstance(target, (cst.Tuple, cst.List)):
        for i, el in enumerate(target.elements):
            if isinstance(el, cst.StarredElement):
                return
            _bind_frame(el.value, item_at(value, i), frame)


def _is_dataclass(cls: cst.ClassDef) -> bool:
    for d in cls.decorators:
        dec = d.decorator.func if isinstance(d.decorator, cst.Call) else d.decorator
        name = dec.attr.value if isinstance(dec, cst.Attribute) else dec.value if isinstance(dec, cst.Name) else ""
        if name == "dataclass":
            return True
    return False


