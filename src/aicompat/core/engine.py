"""One traversal per file: guard context, name resolution, rule dispatch.

Data flows one way: source -> one LibCST parse -> module index -> this
walker, which asks each interested rule about each call and attribute with
the guard context at that point -> findings -> diagnostics (positions are
computed only when a file has findings).
"""

from __future__ import annotations

import gc
import re
from dataclasses import replace
from typing import Any, cast

import libcst as cst

from ..base.diagnostics import Diagnostic
from ..libmodels.table import Libraries, libraries
from ..matrix import Matrix
from ..matrix.target import ResolvedTarget, World
from ..model import guard_forms, loop_items, test_params
from ..model.evaluate import CALLED_THROUGH_CLASS, OPENS, RELEASE, Binding, Evaluator, world_part
from ..model.flow import Returns
from ..model.guards import Ctx, Lazy, is_exit_call, orelse_terminates, split_worlds, terminates
from ..model.project import HomeEnv, Project
from ..model.structure import FileModel
from ..model.with_helpers import inner_context_call
from ..syntax.index import (
    OPAQUE,
    ModuleIndex,
    Qual,
    assign_bindings,
    build_index,
    dotted,
    import_bindings,
    resolve_chain,
)
from ..syntax.positions import Positions
from ..syntax.walk import LEAF_TYPES, walk
from ..values import UNKNOWN, ClassValue, DictValue, Instance, Seq
from .ruleapi import CallSite, Finding, Rule

__all__ = ["CallSite", "FileContext", "Walker", "analyse", "check_module", "diagnostics", "internal_error"]


class FileContext:
    """What rules may ask about the file being checked."""

    def __init__(self, path: str, module: cst.Module, index: ModuleIndex, target: ResolvedTarget,
                 matrix: Matrix, known: set[str], attr_exists, text: str = "") -> None:
        self.path = path
        self.text = text
        self.reads: list = []  # other files a rule read (a .cu loaded by name): the cache checks them too
        self.root: str | None = None  # the project root: other files are read only inside it (fs/confine.py)
        self.module = module
        self.index = index
        self.target = target
        self.matrix = matrix
        self.known = known
        self.attr_exists = attr_exists
        self.scopes: list[dict[str, Any]] = []
        self.all_worlds = target.worlds()
        self.trial = False  # a worlds_monotone rule is being tried in every world (Walker._checked)
        # A rule that judges all reachable code is running where some worlds are open twins
        # (guards.Ctx.has_open): ``reachable`` asks the flow conditions with parameters unknown.
        self.open_mode = False
        self.ctx = Ctx(world_set=self.all_worlds, handlers=matrix.handlers)
        self.current_class: cst.ClassDef | None = None
        # Annotations that never run: all of them under ``from __future__ import
        # annotations`` (PEP 563), a local variable's always (PEP 526).
        self.postponed_annotations = _postpones_annotations(module)
        self.unevaluated = 0  # depth of such annotations around the current node
        self.state: dict[Any, Any] = {}  # per-file memo a rule keeps between calls (keys: tuples, names)
        self._defer: Any = None  # the Walker's sink for ``later`` (set by the Walker)
        self._caps = {a: m.capability for a, m in matrix.archs.items()}
        # Every library fact the value model reads (libmodels/table.py), one table per matrix.
        self.libs: Libraries = libraries(matrix)
        # The value model: built on demand, memoised per world for the whole file.
        self.model = FileModel(module, path, self._is_exit, self.libs.mutators)
        self._memos: dict[tuple[World | tuple, bool, bool, bool], dict] = {}  # (world, guard, half, may) -> memo
        # (in place of the world, the part of it an answer kept there depended on: what the
        # worlds that agree on that part share)
        self.origins: dict[int, cst.CSTNode] = {}  # id(synthesised node) -> the source node it stands for
        self.synthesised: list[cst.CSTNode] = []
        self.def_stack: list[cst.CSTNode] = []  # enclosing function/class definitions
        self._project: Project | None = None
        self.stmt_stack: list[cst.CSTNode] = []  # enclosing statements, innermost last
        self.terminates_memo: dict[int, bool] = {}  # id(If) -> does its chain always leave

    def _is_exit(self, call: cst.Call) -> bool:
        return is_exit_call(call.func, self.resolve, self.libs)

    @property
    def loc(self):
        """Where the traversal is: the innermost definition (or module) and statement."""
        return (self.def_stack[-1] if self.def_stack else self.module,
                self.stmt_stack[-1] if self.stmt_stack else None)

    def shadow(self) -> frozenset:
        names: set[str] = set()
        for scope in self.scopes:
            if isinstance(scope, ShadowScope):
                names.update(scope)
        return frozenset(names)

    # -- names ---------------------------------------------------------------
    def lookup(self, name: str):
        for scope in reversed(self.scopes):
            if name in scope:
                return scope[name]
        return self.index.bindings.get(name)

    def resolve(self, node: cst.BaseExpression, _depth: int = 0) -> str | None:
        """Qualified name of a Name/Attribute chain through imports and aliases."""
        return resolve_chain(node, self.lookup, self._unbound, _depth)

    def _unbound(self, name: str) -> str | None:
        """A name no import or assignment binds: a library name a project module
        re-exports (``from .ops import x``), or one a star import brings."""
        if name in self.index.relative and name in _known_tails(self.known):
            return self.project.library_name(self.path, self.index.relative[name])
        for mod in self.index.star_modules:
            cand = f"{mod}.{name}"
            if cand in self.known or self.matrix.api_exports(mod, name):
                return cand
        return None

    # -- values and guards ---------------------------------------------------
    @property
    def project(self) -> Project:
        """The project's own modules, which the value model follows into (model/project.py)."""
        if self._project is None:
            home = HomeEnv(self.path, self.module, self.model, self.lookup, self.resolve)
            self._project = Project(self.path, _libraries(self.known, self.matrix), self.libs, self.reads, home,
                                    self.root, _modelled(self.known, self.matrix, self.libs))
        return self._project

    def evaluator(self, world: World, loc=None, bindings=None, guard: bool = False, may: bool = False) -> Evaluator:
        # A rule that judges every branch (``open_mode``) reads values at the parameters'
        # defaults but asks the conditions a definition was made under with them unknown (the
        # open twin's evaluator): ``x = Timer()`` under ``if flag is not None:`` has its value.
        half = self.open_mode and not guard and not world.open
        may = may and not guard
        ev = Evaluator(
            lookup=self.lookup,
            resolve=self.resolve,
            world=world,
            capability=self._caps.__getitem__,
            python=self.target.python,
            cuda=self.target.cuda,
            attr_exists=self.attr_exists,
            model=self.model,
            loc=loc if loc is not None else self.loc,
            path=self.path,
            shadow=self.shadow() if loc is None else frozenset(),
            memo=self._memos.setdefault((world, guard, half, may), {}),  # a guard's answers may know less
            # answers no arch or release changed, and those no arch changed (evaluate.world_part)
            shared=self._memos.setdefault((world_part(world, OPENS), guard, half, may), {}),
            by_release=self._memos.setdefault((world_part(world, RELEASE | OPENS), guard, half, may), {}),
            bindings=bindings,
            project=self.project,
            handlers=self.ctx.handlers,
            guard=guard,
            libs=self.libs,
            may=may,
        )
        if may:  # values that may be, conditions as they are: what decides them for the plain evaluator
            def decider():
                plain = self.evaluator(world, loc, bindings)
                return plain.conds_by() if plain.conds_by is not None else plain
            ev.conds_by = decider
        elif half:
            ev.conds_by = lambda: self.evaluator(replace(world, open=True), loc, bindings)
        return ev

    def guard_evaluator(self, world: World) -> Evaluator:
        return self.evaluator(world, guard=True)

    MAX_SCENARIOS = 256

    def scenarios(self):
        """The ways the current function runs: ``(call node, bindings)`` per call
        site in this file (and, a level up, per way its caller runs), per row of
        its ``@pytest.mark.parametrize`` table, or ``[(None, None)]`` when nothing
        calls it (its parameters then take their defaults or stay unknown). Rules
        that relate several values (q and v of one attention call, a recipe and
        the skip above it) judge each scenario on its own, so values of different
        callers or rows are never mixed."""
        fn = self.def_stack[-1] if self.def_stack else None
        w = min(self.ctx.worlds, key=_world_key) if self.ctx.worlds else None
        if w is None:
            return [(None, None)]
        if isinstance(fn, cst.FunctionDef):
            base, owner = self._scenarios_of(fn, w, 0), fn
        elif fn is None:
            base, owner = [(None, None)], self.module
        else:
            return [(None, None)]
        return self._loop_scenarios(owner, self.loc[1], base, w)

    def scenarios_complete(self) -> bool:
        """Do the scenarios show every way the current function runs? True when it, and
        each function that calls it (up the call chain), is used only by calls in this
        file: a function also stored in a dict or passed on may run anywhere."""
        fn = self.def_stack[-1] if self.def_stack else None
        return fn is None or self._complete(fn, 0)

    def _complete(self, fn, depth: int) -> bool:
        if isinstance(fn, cst.Module):
            return True
        if not isinstance(fn, cst.FunctionDef) or depth > 3:
            return False
        key = ("complete", id(fn))
        hit = self.state.get(key)
        if hit is None:
            self.state[key] = True  # recursion: a cycle adds no other way in
            hit = loop_items.only_called(fn, self.text)
            w = min(self.ctx.worlds, key=_world_key) if self.ctx.worlds else None
            if hit and w is not None:
                callers = {id(b.loc[0]): b.loc[0] for b in self._sites_anywhere(fn, w) if b.loc}
                hit = all(self._complete(c, depth + 1) for c in callers.values())
            self.state[key] = hit
        return hit

    def _loop_scenarios(self, owner, stmt, base: list, w: World) -> list:
        """``base`` once per item of the ``for`` loops around ``stmt`` in ``owner`` (model/loop_items.py)."""
        key = ("loops", id(owner), id(stmt))
        loops = self.state.get(key)
        if loops is None:
            loops = self.state[key] = loop_items.loops_around(owner, stmt)
        return loop_items.expand(self, owner, loops, base, w, self.MAX_SCENARIOS) if loops else base

    def _scenarios_of(self, fn: cst.FunctionDef, w: World, depth: int):
        key = ("scenarios", id(fn))
        hit = self.state.get(key)
        if hit is not None:
            return hit
        self.state[key] = [(None, None)]  # recursion: a function reached again has no new scenarios
        scope = self.model.scope(fn)
        table = test_params.rows(fn, self, w)  # @pytest.mark.parametrize: one run per row
        if table is not None:
            recv = Instance(ClassValue(scope.owner_class, key=id(scope.owner_class))) \
                if scope.owner_class is not None and scope.self_name else None
            out: list[tuple[Any, dict[int, Binding] | None]] = \
                [(None, {id(scope): Binding(None, None, {}, recv, row)}) for row in table]
        else:
            sites = self._sites_anywhere(fn, w)
            out = [(b.call, {id(scope): b}) for b in sites] if sites else [(None, None)]
            if sites and depth < 2:
                nested: list[tuple[Any, dict[int, Binding] | None]] = []
                for b in sites:  # each call under each way its caller runs
                    caller = b.loc[0] if b.loc else None
                    outer = self._scenarios_of(caller, w, depth + 1) if isinstance(caller, cst.FunctionDef) \
                        else [(None, None)]
                    if b.loc and isinstance(caller, (cst.FunctionDef, cst.Module)):
                        outer = self._loop_scenarios(caller, b.loc[1], outer, w)  # a call made once per item
                    for _c, ob in outer:
                        if not ob:
                            nested.append((b.call, {id(scope): b}))
                        else:
                            nb = Binding(b.call, b.loc, ob, b.receiver, b.given)
                            nested.append((b.call, {**ob, id(scope): nb}))
                if len(nested) <= self.MAX_SCENARIOS:
                    out = nested
        self.state[key] = out
        return out

    def _sites_anywhere(self, fn: cst.FunctionDef, first: World) -> list:
        """The calls of ``fn`` found in any world of the target, ``first``'s bindings first.
        A function defined after a skip (``def run_case(): ...`` nested in a test below
        ``if not fp8_available: pytest.skip()``) is bound, and so called, only in the worlds
        that pass the skip; looked for in one world alone, it would seem called by nothing."""
        found = {id(b.call): b for b in self.evaluator(first).call_bindings(fn)}
        if len(found) >= len(self.model.calls_named(fn.name.value)):
            return list(found.values())  # every call of the name is one of fn's: none to look for
        for w in sorted(self.target.worlds(), key=_world_key):
            if w != first:
                for b in self.evaluator(w).call_bindings(fn):
                    found.setdefault(id(b.call), b)
        return list(found.values())

    def reachable(self, world: World, bindings=None) -> bool:
        """Can the current statement run in ``world`` under ``bindings`` (one scenario)?
        False when a branch it sits in, or an early exit before it (``pytest.skip``,
        ``return``), rules it out there, or rules out the call that made the scenario."""
        if self.trial:  # a monotone rule's first try: "may run" only adds findings, checked again for real
            return True
        node = self.def_stack[-1] if self.def_stack else self.module
        stmt = self.loc[1]
        open_ = self.open_mode
        if not bindings:  # asked by every API call of the statement: its answer once per world
            key = ("reachable", id(node), id(stmt), world, open_)
            hit = self.state.get(key)
            if hit is None:
                hit = self.state[key] = self._reachable(node, stmt, world, None, open_)
            return hit
        return self._reachable(node, stmt, world, bindings, open_)

    def _reachable(self, node, stmt, world: World, bindings, open_: bool = False) -> bool:
        ev = self.evaluator(replace(world, open=True) if open_ else world, bindings=bindings)
        for _ in range(4):
            scope = self.model.scope(node)
            conds = scope.conds_at.get(id(stmt), ())
            if conds and not ev.feasible(conds, scope):
                return False
            b = (bindings or {}).get(id(scope))
            if b is not None and b.given and world not in b.given.get(test_params.ROW_WORLDS, (world,)):
                return False  # a parametrize row skipped on this GPU by its own marks
            if b is None or b.call is None or not b.loc or b.loc[0] is None:
                return True
            node, stmt = b.loc
            if isinstance(node, cst.FunctionDef) and world not in self._test_worlds(node):
                return False  # the caller is a test its skip marks turn off on this GPU
        return True

    def _test_worlds(self, fn: cst.FunctionDef) -> frozenset:
        """The worlds a function runs in by its own skip marks, its class's and the module's ``pytestmark``."""
        key = ("test_worlds", id(fn))
        hit = self.state.get(key)
        if hit is None:
            hit = self.state[key] = guard_forms.marked_worlds(fn, self)
        return hit

    def value_of(self, expr: cst.BaseExpression, world: World, bindings=None):
        """The abstract value of ``expr`` at the current node in ``world``."""
        return self.evaluator(world, bindings=bindings).eval(expr)

    def value_everywhere(self, expr: cst.BaseExpression):
        """The value of ``expr`` when it is the same in every world that reaches here,
        else UNKNOWN (``f"{major}.{minor}"`` of the running GPU is no one constant)."""
        worlds = sorted(self.ctx.worlds, key=_world_key)
        if not worlds:
            return UNKNOWN
        ev = self.evaluator(worlds[0])
        v = ev.eval(expr)
        if ev.touched:
            for w in worlds[1:]:
                if self.value_of(expr, w) != v:
                    return UNKNOWN
        return v

    def value_if_env_unset(self, expr: cst.BaseExpression) -> tuple[Any, frozenset[str]]:
        """``value_everywhere`` of ``expr`` where every environment variable it reads with a default
        (``os.getenv("X", "9.0")``) is unset, and the names of those variables; (UNKNOWN, empty)
        when it reads none. Its own memo: these values are not the file's values."""
        worlds = sorted(self.ctx.worlds, key=_world_key)
        first: Any = UNKNOWN
        names: frozenset[str] = frozenset()
        for i, w in enumerate(worlds):
            ev = self.evaluator(w)
            ev.memo, ev.shared, ev.by_release, ev.env_unset = {}, None, None, set()
            v = ev.eval(expr)
            if i == 0:
                first, names = v, frozenset(ev.env_unset)
                if not names:
                    return UNKNOWN, frozenset()
                if not ev.touched:
                    break
            elif v != first:
                return UNKNOWN, frozenset()
        return first, names

    def eval_in(self, expr: cst.BaseExpression, worlds=None, may: bool = False) -> dict[World, Any]:
        worlds = self.ctx.worlds if worlds is None else worlds
        return {w: self.evaluator(w, may=may).eval(expr) for w in sorted(worlds, key=_world_key)}

    def split(self, test: cst.BaseExpression) -> tuple[frozenset[World], frozenset[World]]:
        return split_worlds(test, self.ctx.worlds, self.guard_evaluator)

    def split_later(self, test: cst.BaseExpression) -> Lazy:
        """``split(test)`` decided when first asked, as it would be here: the traversal's
        names, definitions and statements are kept as of now (the scopes copied: later
        assignments bind into them)."""
        snap = (self.ctx, [type(s)(s) for s in self.scopes], list(self.def_stack), list(self.stmt_stack))

        def run():
            saved = (self.ctx, self.scopes, self.def_stack, self.stmt_stack)
            self.ctx, self.scopes, self.def_stack, self.stmt_stack = snap
            try:
                return self.split(test)
            finally:
                self.ctx, self.scopes, self.def_stack, self.stmt_stack = saved
        return Lazy(run, self.ctx.world_set)  # the test is split in the worlds that reach it

    def describe(self, archs) -> str:
        return self.target.describe(archs)

    def later(self, check) -> None:
        """Run ``check()`` once the whole module is walked (ruleapi.FileContextProtocol.later)."""
        self._defer(check)


# Derived from the linter's set of known names; each holds that set itself, so its id
# cannot be reused by another linter's set while cached.
_LIBS: dict[int, tuple] = {}
_TAILS: dict[int, tuple] = {}


def _libraries(known: set[str], matrix: Matrix) -> frozenset[str]:
    """Top-level names the rules and the matrix know as libraries: never project modules."""
    hit = _LIBS.get(id(known))
    if hit is None or hit[0] is not known:
        libs = frozenset({q.split(".", 1)[0] for q in known} | set(matrix.api_roots)
                         | {q.split(".", 1)[0] for q in matrix.symbols})
        _LIBS.clear()
        hit = _LIBS[id(known)] = (known, libs)
    return hit[1]


_MODELLED: dict[int, tuple] = {}


def _modelled(known: set[str], matrix: Matrix, libs: Libraries) -> frozenset[str]:
    """The names the rules, the matrix and the probes know, with every module above them
    (a library's recipe module): a library's own repository keeps these as the
    library the rules model, and follows only the functions of its other modules (model/project.py)."""
    hit = _MODELLED.get(id(known))
    if hit is None or hit[0] is not known:
        names = set(known) | set(matrix.symbols) | libs.probe_names
        out = set(names)
        for q in names:
            parts = q.split(".")
            out.update(".".join(parts[:i]) for i in range(1, len(parts)))
        _MODELLED.clear()
        hit = _MODELLED[id(known)] = (known, frozenset(out))
    return hit[1]


def _known_tails(known: set[str]) -> frozenset[str]:
    """Last parts of the names rules know: only such a name is worth reading a
    project module for (``from .ops import fused_attention`` re-exporting a library function)."""
    hit = _TAILS.get(id(known))
    if hit is None or hit[0] is not known:
        _TAILS.clear()
        hit = _TAILS[id(known)] = (known, frozenset(q.rsplit(".", 1)[-1] for q in known))
    return hit[1]


def _postpones_annotations(module: cst.Module) -> bool:
    for stmt in module.body:
        if isinstance(stmt, cst.SimpleStatementLine):
            for small in stmt.body:
                if isinstance(small, cst.ImportFrom) and not small.relative and small.module is not None \
                        and dotted(small.module) == "__future__" and not isinstance(small.names, cst.ImportStar) \
                        and any(a.name.value == "annotations" for a in small.names if isinstance(a.name, cst.Name)):
                    return True
    return False


def _narrow_later(ctx: Ctx, split: Lazy, arm: int) -> Ctx:
    """``ctx`` where arm ``arm`` (0: the test may hold, 1: it may fail) of ``split`` runs, decided when asked."""
    return ctx.narrowed(Lazy(lambda: ctx.worlds & split()[arm], ctx.world_set, split))


def _world_key(w: World):
    # A total order: a world and its open twin share arch and release, and a key that tied them
    # left the pick (``min`` in ``_splat``, the first of ``sorted``) to the set's hash order, so
    # a run's findings changed with PYTHONHASHSEED. The closed world comes first.
    return (w.arch, str(w.torch), w.open, w.releases)


class Walker(cst.CSTVisitor):
    def __init__(self, fc: FileContext, rules: list[Rule], providers: list[Rule] | None = None) -> None:
        super().__init__()
        self.fc = fc
        self.rules = rules
        # Rules asked for context (with_context, function_marks): every registered rule,
        # selected or not, so deselecting one never changes what another sees.
        providers = rules if providers is None else providers
        self._with_rules = [r for r in providers if hasattr(r, "with_context")]
        self._marks: dict[str, set[str]] = {}  # callable -> marks it gives a function
        for r in providers:
            for q, mark in r.function_marks().items():
                self._marks.setdefault(q, set()).add(mark)
        self._mark_keys = frozenset().union(*self._marks.values())
        self.marked: dict[int, set[str]] = {}  # id(FunctionDef) -> its marks
        self.mark_worlds: dict[tuple[int, str], frozenset] = {}  # (id(FunctionDef), mark) -> worlds of mark(fn) calls
        self._visited_plain: dict[int, tuple[cst.FunctionDef, frozenset]] = {}  # walked before a mark: re-walk
        # Findings and calls to module-level functions, by the module-level
        # function they sit in (None: module top level).
        self.findings_by_owner: dict[int | None, list[tuple[Rule, Finding]]] = {}
        # Checks a rule handed to ``fc.later``, by owner as findings are: (rule, node, check,
        # the guard context and statements where it was handed).
        self.deferred: dict[int | None, list[tuple]] = {}
        self._running: tuple[Rule, cst.CSTNode] | None = None
        fc._defer = self._later
        # Where each module function is called: its contexts, by caller (decided only if _narrow_helpers asks).
        self.calls: dict[str, dict[int | None, dict[int, Ctx]]] = {}
        self.handed: dict[str, int] = {}  # module function -> times handed to a module function's call
        self._runners = frozenset(c for e in fc.matrix.section("dispatch.toml", "runner").values() for c in e["calls"])
        self._runner_tails = frozenset(c.rsplit(".", 1)[-1] for c in self._runners)
        # only in a file whose text names one (the hook is asked at every call)
        self._fake_keywords = frozenset(k for e in fc.matrix.section("dispatch.toml", "fake_impl").values()
                                        for k in e["keywords"] if k in fc.text)
        self.launched: dict[str, set[int]] = {}  # module function -> its ``kernel[grid](...)`` launches (ids)
        self._owner: int | None = None
        self.errors: list[tuple[Rule, cst.CSTNode, Exception]] = []
        self.stmt_paths: dict[int, tuple] = {}  # id(finding node) -> enclosing statements, outermost first
        self._classes: list[cst.ClassDef] = []
        self._unevaluated: list[cst.Annotation] = []
        self._pending: dict[int, Ctx] = {}
        self._stack: list[tuple[int, Ctx]] = []
        self._if_split: dict[int, Lazy] = {}  # id(If) -> split_later of its test
        self._call_rules: dict[str, list[Rule]] = {}
        self._attr_rules: dict[str, list[Rule]] = {}
        for r in rules:
            for t in r.call_tails:
                self._call_rules.setdefault(t, []).append(r)
            for t in r.attr_tails:
                self._attr_rules.setdefault(t, []).append(r)
        for name, b in fc.index.bindings.items():
            self._alias(name, b)
        self._hooks = {m: [r for r in rules if hasattr(r, m)]
                       for m in ("check_assign", "check_dict", "check_decorator", "check_import")}
        self._any_attr = self._attr_rules.pop("*", [])
        # Rules that read node types directly (syntax), per target; empty for most targets' files.
        self._node_rules: dict[type, list[Rule]] = {}
        for r in rules:
            if hasattr(r, "node_types"):
                for tp in r.node_types(fc.target):
                    self._node_rules.setdefault(tp, []).append(r)
        self._plans: dict[type, tuple] = {}  # node type -> _plan_of
        # Names and literals no handler and no syntax rule reads: the walk passes them by.
        self.ignored = frozenset(tp for tp in LEAF_TYPES if tp not in self._node_rules
                                 and _handler(type(self), "visit_", tp) is None
                                 and _handler(type(self), "leave_", tp) is None)

    def _alias(self, name: str, binding) -> None:
        """``from pkg import fn as f``: calls to ``f`` reach the rules that watch ``fn`` too."""
        tail: str | None
        if isinstance(binding, Qual):
            tail = binding.name.rsplit(".", 1)[-1]
        elif isinstance(binding, (cst.Name, cst.Attribute)):
            q = self.fc.resolve(binding)
            tail = q.rsplit(".", 1)[-1] if q else None
        else:
            return
        if tail and tail != name and tail in self._call_rules:
            self._call_rules.setdefault(name, [])
            for r in self._call_rules[tail]:
                if r not in self._call_rules[name]:
                    self._call_rules[name].append(r)

    # -- context push/pop for nodes whose context a parent decided ------------
    def _plan_of(self, tp: type) -> tuple:
        """Per node type, once: its location kind, the syntax rules reading it, and the
        visit_/leave_ handlers (None where there is none)."""
        kind = _LOC_KIND.get(tp)
        if kind is None:
            kind = _loc_kind(tp)
        plan = self._plans[tp] = (kind, tuple(self._node_rules.get(tp, ())), _handler(type(self), "visit_", tp),
                                  _handler(type(self), "leave_", tp))
        return plan

    def on_visit(self, node: cst.CSTNode) -> bool:
        kind, node_rules, fn, _ = self._plans.get(type(node)) or self._plan_of(type(node))
        ctx = self._pending.pop(id(node), None)
        if ctx is not None:
            self._stack.append((id(node), self.fc.ctx))
            self.fc.ctx = ctx
        if kind:
            self.fc.stmt_stack.append(node)
            if kind == 2:
                self.fc.def_stack.append(node)
        for r in node_rules:  # syntax: judged whatever the guards say
            self._run(r, node, r.check_node, node, self.fc)
        return fn is None or fn(self, node) is not False

    def on_leave(self, original_node: cst.CSTNode) -> None:
        fn = (self._plans.get(type(original_node)) or self._plan_of(type(original_node)))[3]
        if fn is not None:
            fn(self, original_node)
        if self._stack and self._stack[-1][0] == id(original_node):
            _, self.fc.ctx = self._stack.pop()
        if self.fc.stmt_stack and self.fc.stmt_stack[-1] is original_node:
            self.fc.stmt_stack.pop()
            if self.fc.def_stack and self.fc.def_stack[-1] is original_node:
                self.fc.def_stack.pop()

    def _set(self, node: cst.CSTNode | None, ctx: Ctx) -> None:
        if node is not None:
            self._pending[id(node)] = ctx

    # -- control flow -----------------------------------------------------------
    def visit_If(self, node: cst.If) -> None:
        split = self.fc.split_later(node.test)  # an elif's worlds are its chain's, branch after branch
        self._if_split[id(node)] = split
        self._set(node.body, self.fc.ctx.narrowed(Lazy(lambda: split()[0], split)))
        self._set(node.orelse, self.fc.ctx.narrowed(Lazy(lambda: split()[1], split)))

    def leave_If(self, node: cst.If) -> None:
        split = self._if_split.pop(id(node))
        body_exits = terminates(node.body, self.fc.resolve, self.fc.libs)
        else_exits = orelse_terminates(node.orelse, self.fc.resolve, self.fc.libs, self.fc.terminates_memo)
        if body_exits and else_exits:
            self.fc.ctx = self.fc.ctx.narrowed(frozenset())
        elif body_exits:
            self.fc.ctx = _narrow_later(self.fc.ctx, split, 1)
        elif else_exits:
            self.fc.ctx = _narrow_later(self.fc.ctx, split, 0)

    def visit_IfExp(self, node: cst.IfExp) -> None:
        split = self.fc.split_later(node.test)
        self._set(node.body, self.fc.ctx.narrowed(Lazy(lambda: split()[0], split)))
        self._set(node.orelse, self.fc.ctx.narrowed(Lazy(lambda: split()[1], split)))

    def visit_BooleanOperation(self, node: cst.BooleanOperation) -> None:
        split = self.fc.split_later(node.left)
        arm = 0 if isinstance(node.operator, cst.And) else 1
        self._set(node.right, self.fc.ctx.narrowed(Lazy(lambda: split()[arm], split)))

    def leave_Expr(self, node: cst.Expr) -> None:
        """A call of this file's helper that may end the run (``_skip_if_not_sm100()`` whose body
        is ``if major < 10: pytest.skip(...)``): what follows runs only where it returned, as after
        an inline ``if ...: pytest.skip()``. Decided when a rule asks."""
        call = node.value
        if isinstance(call, cst.Call) and isinstance(call.func, cst.Name) and self.fc.model.may_exit(call):
            # Returns is a flow condition the evaluator reads as an expression (model/flow.py)
            self.fc.ctx = _narrow_later(self.fc.ctx, self.fc.split_later(cast(Any, Returns(call))), 0)

    def leave_Assert(self, node: cst.Assert) -> None:
        self.fc.ctx = _narrow_later(self.fc.ctx, self.fc.split_later(node.test), 0)

    def visit_Try(self, node: cst.Try) -> None:
        names: set[str] = set()
        for h in node.handlers:
            if h.type is None:
                names.add("BaseException")
                continue
            exprs = [e.value for e in h.type.elements] if isinstance(h.type, cst.Tuple) else [h.type]
            for e in exprs:
                d = dotted(e)
                if d:
                    names.add(d.rsplit(".", 1)[-1])
        if names:
            self._set(node.body, replace(self.fc.ctx, catches=self.fc.ctx.catches | names))
        for h in node.handlers:
            worlds = guard_forms.handler_worlds(h, node.body, self.fc)  # except AttributeError: the fallback
            if worlds is not None:
                self._set(h.body, self.fc.ctx.narrowed(worlds))

    def visit_With(self, node: cst.With) -> None:
        """``with cm(...):`` -- what the rules say ``cm`` means for the body (a later item
        overrides an earlier one, as nested ``with`` statements do)."""
        if not self._with_rules:
            return
        facts = None
        for item in node.items:
            if not isinstance(item.item, cst.Call):
                continue
            call = item.item
            if isinstance(call.func, cst.Name) and self._module_function(call.func.value):
                # ``with helper():`` -- the context manager a helper of this file hands back
                call = inner_context_call(self.fc.lookup(call.func.value), self.fc.resolve) or call
            qual = self.fc.resolve(call.func)
            if not qual:
                continue
            for r in self._with_rules:
                got = r.with_context(call, qual, self.fc)
                if got:
                    facts = {**(facts if facts is not None else self.fc.ctx.facts), **got}
        if facts is not None:
            self._set(node.body, replace(self.fc.ctx, facts=facts))

    # -- scopes -------------------------------------------------------------------
    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self._classes.append(node)
        self.fc.current_class = node
        worlds = guard_forms.class_worlds(node, self.fc)  # skip markers, kernel-selection hooks
        if worlds is not None:
            self._set(node.body, self.fc.ctx.narrowed(worlds))

    def leave_ClassDef(self, node: cst.ClassDef) -> None:
        self._classes.pop()
        self.fc.current_class = self._classes[-1] if self._classes else None

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        if self._owner is None and self.fc.index.bindings.get(node.name.value) is node:
            self._owner = id(node)
        scope: dict[str, Any] = {}
        for p in (*node.params.posonly_params, *node.params.params, *node.params.kwonly_params):
            scope[p.name.value] = OPAQUE
        for star in (node.params.star_arg, node.params.star_kwarg):
            if isinstance(star, cst.Param):
                scope[star.name.value] = OPAQUE
        self.fc.scopes.append(scope)
        decorated: set[str] = set()
        for d in node.decorators:
            decorated |= self._marks_of(d.decorator.func if isinstance(d.decorator, cst.Call) else d.decorator)
        marks = set(self.marked.get(id(node), ())) | decorated
        if marks:
            self.marked.setdefault(id(node), set()).update(marks)
        elif self._marks and self._owner == id(node):
            self._visited_plain[id(node)] = (node, self.fc.ctx.worlds)  # a later call may still mark it
        # A try/with around a *definition* does not cover the body's later calls; marks of
        # an enclosing function (compiled code calling a nested def) do.
        facts = {k: v for k, v in self.fc.ctx.facts.items() if k in self._mark_keys}
        # A decorator marks the body everywhere; ``mark(fn)`` made under a guard only where it runs.
        facts.update({m: True if m in decorated else self.mark_worlds.get((id(node), m), True) for m in marks})
        worlds = guard_forms.function_worlds(node, self.fc)  # skip markers, selected-class methods
        body = replace(self.fc.ctx, world_set=worlds, catches=frozenset(), facts=facts)
        if not body.has_open and _uncalled_with_defaults(node, self.fc):
            body = body.with_open_twins()
        self._set(node.body, body)

    def leave_FunctionDef(self, node: cst.FunctionDef) -> None:
        self.fc.scopes.pop()
        if self._owner == id(node):
            self._owner = None

    def visit_Annotation(self, node: cst.Annotation) -> None:
        if self.fc.postponed_annotations or self._local_annotation(node):
            self.fc.unevaluated += 1
            self._unevaluated.append(node)

    def leave_Annotation(self, node: cst.Annotation) -> None:
        if self._unevaluated and self._unevaluated[-1] is node:
            self._unevaluated.pop()
            self.fc.unevaluated -= 1

    def _local_annotation(self, node: cst.Annotation) -> bool:
        stmt = self.fc.stmt_stack[-1] if self.fc.stmt_stack else None
        return isinstance(stmt, cst.AnnAssign) and stmt.annotation is node and \
            isinstance(self.fc.def_stack[-1] if self.fc.def_stack else None, cst.FunctionDef)

    def visit_Lambda(self, node: cst.Lambda) -> None:
        self.fc.scopes.append(ShadowScope({p.name.value: OPAQUE for p in node.params.params}))

    def leave_Lambda(self, node: cst.Lambda) -> None:
        self.fc.scopes.pop()

    def _comp_enter(self, node) -> None:
        names: dict[str, Any] = {}
        forin = node.for_in
        while forin is not None:
            for n in _target_names(forin.target):
                names[n] = OPAQUE
            forin = forin.inner_for_in
        self.fc.scopes.append(ShadowScope(names))

    def _comp_leave(self, original_node) -> None:  # named as the leave_ handlers it serves
        self.fc.scopes.pop()

    visit_ListComp = visit_SetComp = visit_DictComp = visit_GeneratorExp = _comp_enter
    leave_ListComp = leave_SetComp = leave_DictComp = leave_GeneratorExp = _comp_leave

    def _marks_of(self, func: cst.BaseExpression) -> set[str]:
        if not self._marks:
            return set()
        return self._marks.get(self.fc.resolve(func) or "", set())

    def _mark_call(self, node: cst.Call) -> None:
        """``mark(fn)`` or ``mark(...)(fn)``: ``fn``, a module-level function, is marked."""
        func = node.func.func if isinstance(node.func, cst.Call) else node.func
        if not node.args or node.args[0].keyword is not None or node.args[0].star:
            return
        arg = node.args[0].value
        if not isinstance(arg, cst.Name):
            return
        target = self.fc.lookup(arg.value)
        if not isinstance(target, cst.FunctionDef):
            return
        marks = self._marks_of(func)
        if marks:
            self.marked.setdefault(id(target), set()).update(marks)
            for m in marks:
                key = (id(target), m)
                self.mark_worlds[key] = self.mark_worlds.get(key, frozenset()) | self.fc.ctx.worlds

    def _bind(self, name: str, value) -> None:
        if self.fc.scopes:
            self.fc.scopes[-1][name] = value
            self._alias(name, value)

    def _hook(self, method: str, node) -> None:
        """Rules that read statements or literals rather than calls (``os.environ[...] = ...``)."""
        if self._dead():
            return
        for r in self._hooks[method]:
            self._checked(r, node, getattr(r, method), node, self.fc)

    def visit_Decorator(self, node: cst.Decorator) -> None:
        if self._hooks["check_decorator"] and not isinstance(node.decorator, cst.Call):
            self._hook("check_decorator", node)

    def visit_Dict(self, node: cst.Dict) -> None:
        if self._hooks["check_dict"]:
            self._hook("check_dict", node)

    def visit_Assign(self, node: cst.Assign) -> None:
        if self._hooks["check_assign"]:  # every ``=`` statement, whatever its targets (ruleapi.Rule)
            self._hook("check_assign", node)
        for name, b in assign_bindings([t.target for t in node.targets], node.value):
            self._bind(name, b)
        for t in node.targets:  # self.x = ... and the like: nothing to bind
            if isinstance(t.target, (cst.Tuple, cst.List)):
                for el in t.target.elements:
                    if isinstance(el, cst.StarredElement) and isinstance(el.value, cst.Name):
                        self._bind(el.value.value, OPAQUE)

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        if isinstance(node.target, cst.Name) and node.value is not None:
            self._bind(node.target.value, node.value)

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        if isinstance(node.target, cst.Name):
            self._bind(node.target.value, OPAQUE)

    def visit_For(self, node: cst.For) -> None:
        for name in _target_names(node.target):
            self._bind(name, OPAQUE)

    def visit_WithItem(self, node: cst.WithItem) -> None:
        if node.asname is not None:
            for name in _target_names(node.asname.name):
                self._bind(name, OPAQUE)

    def visit_Import(self, node: cst.Import) -> None:
        if self._hooks["check_import"]:
            self._hook("check_import", node)
        for name, q in import_bindings(node):
            self._bind(name, q)
        self._after_import(node)

    def _after_import(self, node) -> None:
        worlds = guard_forms.after_import(node, self.fc)  # try: import ... except ImportError
        if worlds is not None:
            self.fc.ctx = self.fc.ctx.narrowed(worlds)

    def visit_ImportFrom(self, node: cst.ImportFrom) -> None:
        if self._hooks["check_import"]:
            self._hook("check_import", node)
        for name, q in import_bindings(node):
            if name != "*":
                self._bind(name, q)
        self._after_import(node)

    # -- rule dispatch ------------------------------------------------------------
    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if self._marks:
            self._mark_call(node)
        if isinstance(func, cst.Name) and self._module_function(func.value):
            self._called(func.value)
            self._handed(node)
        elif isinstance(func, cst.Subscript) and isinstance(func.value, cst.Name) \
                and self._module_function(func.value.value):
            # A Triton (or Numba) kernel launch, ``kernel[grid](...)``: its body runs where the launch does.
            self.launched.setdefault(func.value.value, set()).add(id(node))  # a body walked again: same launch
            self._called(func.value.value)
        elif isinstance(func, (cst.Name, cst.Attribute)) and (func.value if isinstance(func, cst.Name) else func.attr.value) \
                in self._runner_tails and self.fc.resolve(func) in self._runners:
            self._handed(node)  # mp.spawn(_worker, ...): the worker runs where the spawn does
        if self._fake_keywords:
            self._handed_fake(node)
        tail = func.attr.value if isinstance(func, cst.Attribute) else func.value if isinstance(func, cst.Name) else None
        rules = self._call_rules.get(tail) if tail else None
        rules = list(rules or ()) + list(self._call_rules.get("*", ()))
        if not rules or self._dead():
            return
        qual = self.fc.resolve(func) or ""
        if any(a.star for a in node.args):
            # Spliced when a rule first reads the arguments (most calls with splats are of
            # the project's own functions, whose arguments no rule reads), as they are here.
            ctx = self.fc.ctx
            site: CallSite = _SplicedSite(node, lambda: self._split_args(node, ctx))
        else:
            site = CallSite(node, *self._split_args(node, None))
        for r in rules:
            self._checked(r, node, r.check_call, site, qual, self.fc)

    def _split_args(self, node: cst.Call, ctx: Ctx | None):
        """Positional and keyword argument expressions, and whether a splat stayed unknown;
        ``ctx``: the context at the call (the splats' values are read in its worlds)."""
        pos: list[cst.BaseExpression] = []
        kw: dict[str, cst.BaseExpression] = {}
        has_star = False
        for a in node.args:
            if a.star:
                assert ctx is not None  # a call with splats passes its context (visit_Call)
                # ``**cfg["compile"]``, ``*shape``: spliced in when the value model knows
                # every key and value as constants, so rules see what the call receives.
                spliced = self._splat(a, ctx)
                if spliced is None or (a.star == "*" and kw):
                    has_star = True
                elif a.star == "*":
                    pos.extend(spliced)
                else:
                    kw.update(spliced)
            elif a.keyword is not None:
                kw[a.keyword.value] = a.value
            else:
                pos.append(a.value)
        return pos, kw, has_star

    def _handed(self, node: cst.Call) -> None:
        """``run_all(test_fp8, ...)`` under a guard, ``run_all`` a function of this module:
        the module-level functions handed to it run where the call does (it can only call
        them or keep them; a helper that calls what it is given is how test scripts run
        their cases)."""
        for a in node.args:
            v = a.value
            if a.keyword is not None and a.keyword.value in self._fake_keywords:
                continue  # a fake implementation runs in no world (_handed_fake)
            if not a.star and isinstance(v, cst.Name) and self._module_function(v.value):
                self.handed[v.value] = self.handed.get(v.value, 0) + 1
                self._called(v.value)
                # ``op_name="f", op_func=f``: the name spelled in the same call is this use too
                for b in node.args:
                    if isinstance(b.value, cst.SimpleString) and b.value.value[1:-1] == v.value \
                            and b.value.value[:1] in "'\"":
                        self.handed[v.value] += 1

    def _handed_fake(self, node: cst.Call) -> None:
        """``register_op(..., fake_impl=f)``: ``f`` runs on FakeTensors while tracing, in no
        world of the fleet (dispatch.toml [fake_impl])."""
        for a in node.args:
            if a.keyword is not None and a.keyword.value in self._fake_keywords and isinstance(a.value, cst.Name) \
                    and self._module_function(a.value.value):
                name = a.value.value
                self.handed[name] = self.handed.get(name, 0) + 1
                self._called(name, replace(self.fc.ctx, world_set=frozenset()))

    def _module_function(self, name: str) -> bool:
        """Does ``name`` here mean a module-level function of this file?"""
        fn = self.fc.lookup(name)
        return isinstance(fn, cst.FunctionDef) and self.fc.index.bindings.get(name) is fn

    def _called(self, name: str, ctx: Ctx | None = None) -> None:
        """Record that module function ``name`` runs here (in ``ctx``, else the current context),
        whose worlds are decided only if ``_narrow_helpers`` needs them (most helpers are used
        otherwise too)."""
        by_owner = self.calls.setdefault(name, {})
        ctx = self.fc.ctx if ctx is None else ctx
        by_owner.setdefault(self._owner, {})[id(ctx)] = ctx

    def _splat(self, arg: cst.Arg, ctx: Ctx):
        """The constant items of a ``*``/``**`` argument as expressions, or None. Only a value
        every world where the call runs agrees on is spliced: where they differ (an uncalled
        helper's ``**kwargs`` default against what its open twin may pass) the items are not
        known, and the call keeps its ``**`` (rules judge it on what it spells out)."""
        if not ctx.worlds:
            return None
        worlds = sorted(ctx.worlds, key=_world_key)
        v = self.fc.value_of(arg.value, worlds[0])
        if any(not _same_value(self.fc.value_of(arg.value, w), v) for w in worlds[1:]):
            return None
        if arg.star == "**":
            if not isinstance(v, DictValue) or not v.exact:
                return None
            out = {}
            for k, x in v.items:
                node = constant_node(x)
                if not isinstance(k, str) or node is None:
                    return None
                out[k] = node
                self._origin(node, arg.value)  # a finding on it is reported at the splat
            return out
        items = v if isinstance(v, tuple) else v.items if isinstance(v, Seq) and v.exact else None
        if items is None:
            return None
        nodes = [constant_node(x) for x in items]
        if any(n is None for n in nodes):
            return None
        for n in cast("list[cst.BaseExpression]", nodes):  # none is None (checked above)
            self._origin(n, arg.value)
        return nodes

    def _origin(self, node: cst.CSTNode, source: cst.CSTNode) -> None:
        """A synthesised node, and every node inside it, stands for ``source``."""
        self.fc.synthesised.append(node)  # kept alive for the file: its id must not be reused
        self.fc.origins[id(node)] = source
        for child in node.children:
            self._origin(child, source)

    def _run(self, rule: Rule, node: cst.CSTNode, check, *args) -> None:
        self._running = (rule, node)
        try:
            found = check(*args)
        except Exception as exc:  # a rule bug must not end the run
            self.errors.append((rule, node, exc))
            return
        finally:
            self._running = None
        for f in found:
            self.findings_by_owner.setdefault(self._owner, []).append((rule, f))
            # Where it sits, so its position is found by generating this statement only.
            self.stmt_paths.setdefault(id(f.node), tuple(self.fc.stmt_stack))

    def _later(self, check) -> None:
        if self._running is None or self.fc.trial:
            raise RuntimeError("fc.later is for a check the engine runs for real, not a trial or no check")
        rule, node = self._running
        self.deferred.setdefault(self._owner, []).append(
            (rule, node, check, self.fc.ctx, tuple(self.fc.stmt_stack), self.fc.open_mode))

    def run_deferred(self) -> None:
        """The checks rules handed to ``fc.later``, in the order handed, each in the guard
        context and statement it was handed from; their findings belong where the check was."""
        fc = self.fc
        saved = fc.ctx, fc.stmt_stack, self._owner, fc.open_mode
        try:
            for owner, items in self.deferred.items():
                for rule, node, check, ctx, stmts, open_mode in items:
                    fc.ctx, fc.stmt_stack, self._owner, fc.open_mode = ctx, list(stmts), owner, open_mode
                    self._run(rule, node, check)
        finally:
            fc.ctx, fc.stmt_stack, self._owner, fc.open_mode = saved
        self.deferred.clear()

    def visit_Attribute(self, node: cst.Attribute) -> None:
        rules = self._attr_rules.get(node.attr.value)
        if self._any_attr:
            rules = list(rules or ()) + self._any_attr
        if not rules or self._dead():
            return
        qual = self.fc.resolve(node)
        if not qual:
            return
        for r in rules:
            self._checked(r, node, r.check_attribute, node, qual, self.fc)

    def _dead(self) -> bool:
        """No world reaches here, as far as is decided: guards not yet asked count as live."""
        w = self.fc.ctx.decided
        return w is not None and not w

    def _checked(self, rule: Rule, node: cst.CSTNode, check, *args) -> None:
        """``_checked_here`` in the worlds the rule judges: inside a function no code of the
        file calls, the closed worlds (parameters at their defaults) for a rule that takes a
        caller's non-default argument as the caller's choice (rules/policy.toml), else every
        world that reaches the node, its flow conditions asked with the parameters unknown."""
        ctx = self.fc.ctx
        if not ctx.has_open:
            self._checked_here(rule, node, check, *args)
            return
        self.fc.ctx = ctx.closed() if rule.callers_choice else ctx.projected()
        self.fc.open_mode = not rule.callers_choice
        try:
            self._checked_here(rule, node, check, *args)
        finally:
            self.fc.ctx = ctx
            self.fc.open_mode = False

    def _checked_here(self, rule: Rule, node: cst.CSTNode, check, *args) -> None:
        """``_run`` where some world reaches the node; a rule whose findings only shrink with
        the worlds is first tried with every statement taken as reachable (``fc.trial``), in
        every world of the target while the guards above are undecided, leaving them undecided
        and the flow conditions of the statement unasked (``fc.reachable``) when it finds
        nothing there."""
        ctx = self.fc.ctx
        if rule.reach_own and check.__name__ in rule.reach_own:
            self._run(rule, node, check, *args)
            return
        decided = ctx.decided
        if rule.worlds_monotone and (decided is None or decided):
            if decided is None:
                self.fc.ctx = replace(ctx, world_set=self.fc.all_worlds)
            self.fc.trial = True
            try:
                found = check(*args)
            except Exception:  # noqa: BLE001 -- judged again below, where a failure is recorded
                found = True
            finally:
                self.fc.ctx = ctx
                self.fc.trial = False
            if not found:
                return
        if ctx.worlds:
            self._run(rule, node, check, *args)


_HANDLERS: dict[tuple, Any] = {}


def _handler(cls: type, prefix: str, tp: type):
    """``cls.visit_<Type>``/``leave_<Type>``, looked up once per node type (CSTVisitor
    formats the name and looks it up on every node)."""
    key = (cls, prefix, tp)
    try:
        return _HANDLERS[key]
    except KeyError:
        fn = getattr(cls, prefix + tp.__name__, None)
        if getattr(fn, "_is_no_op", False):  # CSTVisitor's empty default (libcst's mark_no_op): none to call
            fn = None
        _HANDLERS[key] = fn
        return fn


def constant_node(v) -> cst.BaseExpression | None:
    """A literal expression for a constant value (what a spliced ``**kwargs`` passes)."""
    if v is None or isinstance(v, bool):
        return cst.Name(repr(v))
    if isinstance(v, int):
        return cst.Integer(str(v)) if v >= 0 else cst.UnaryOperation(cst.Minus(), cst.Integer(str(-v)))
    if isinstance(v, float) and v == v and v not in (float("inf"), float("-inf")):
        return cst.Float(repr(v)) if v >= 0 else cst.UnaryOperation(cst.Minus(), cst.Float(repr(-v)))
    if isinstance(v, str) and len(v) < 4096:
        return cst.SimpleString(repr(v))
    if isinstance(v, tuple):
        items = [constant_node(x) for x in v]
        if any(i is None for i in items):
            return None
        return cst.Tuple([cst.Element(i) for i in cast("list[cst.BaseExpression]", items)])  # none None
    if isinstance(v, (Seq, DictValue)) and v.exact:  # ``**cfg`` whose "options" is a dict of constants
        pairs = v.items if isinstance(v, DictValue) else [(None, x) for x in v.items]
        nodes = [(constant_node(k) if k is not None else None, constant_node(x)) for k, x in pairs]
        if any(n is None or (k is None and isinstance(v, DictValue)) for k, n in nodes):
            return None
        if isinstance(v, DictValue):  # every key and value a node (checked above)
            return cst.Dict([cst.DictElement(k, n)
                             for k, n in cast("list[tuple[cst.BaseExpression, cst.BaseExpression]]", nodes)])
        return (cst.List if v.kind == "list" else cst.Set)(
            [cst.Element(n) for _, n in cast("list[tuple[None, cst.BaseExpression]]", nodes)]) if nodes else None
    return None


class _SplicedSite(CallSite):
    """A ``CallSite`` whose arguments (``*``/``**`` splats spliced) are split when a rule
    first reads ``pos``, ``kw`` or ``has_star``."""

    def __init__(self, node: cst.Call, split) -> None:  # noqa: D107 -- no dataclass fields stored
        self.node = node
        self._split = split
        self._parts = None

    def _args(self):
        if self._parts is None:
            self._parts = self._split()
            self._split = None
        return self._parts

    @property
    def pos(self):  # type: ignore[override]
        return self._args()[0]

    @property
    def kw(self):  # type: ignore[override]
        return self._args()[1]

    @property
    def has_star(self):  # type: ignore[override]
        return self._args()[2]


class ShadowScope(dict):
    """Names bound by a lambda or comprehension: the value model does not track them."""


# 1: a statement, 2: a statement that opens a scope (def, class); 0: anything else.
_LOC_KIND: dict[type, int] = {}


def _loc_kind(tp: type) -> int:
    if issubclass(tp, (cst.FunctionDef, cst.ClassDef)):
        k = 2
    elif issubclass(tp, (cst.BaseSmallStatement, cst.BaseCompoundStatement)):
        k = 1
    else:
        k = 0
    _LOC_KIND[tp] = k
    return k


def _target_names(node) -> list[str]:
    if isinstance(node, cst.Name):
        return [node.value]
    if isinstance(node, (cst.Tuple, cst.List)):
        out = []
        for el in node.elements:
            out.extend(_target_names(el.value))
        return out
    return []


def _uncalled_with_defaults(fn: cst.FunctionDef, fc: FileContext) -> bool:
    """A function with parameters that have defaults and that no call in the file names
    (public API, a test helper, a CLI entry point): a caller may pass anything there."""
    ps = fn.params
    if not any(p.default is not None for p in (*ps.posonly_params, *ps.params, *ps.kwonly_params)):
        return False
    cls = fc.current_class
    if cls is not None and fn.name.value in (*CALLED_THROUGH_CLASS, "__new__"):
        # run through calls of the class or of its instances: none where the class is never named in a call
        return not fc.model.calls_named(cls.name.value)
    return not fc.model.calls_named(fn.name.value)


def _rewalk_marked(walker: Walker, fc: FileContext) -> None:
    """A module-level function marked only after its body was walked (``fn`` defined,
    then ``mark(fn)``): walk its body again with the mark, from its definition's worlds."""
    for key, (node, worlds) in list(walker._visited_plain.items()):
        if key not in walker.marked:
            continue
        walker.findings_by_owner.pop(key, None)
        walker.deferred.pop(key, None)
        for by_owner in walker.calls.values():
            by_owner.pop(key, None)
        _rewalk(walker, fc, node, worlds)
    walker._visited_plain.clear()


def _rewalk(walker: Walker, fc: FileContext, node: cst.FunctionDef, worlds) -> None:
    """Walk one module-level function again, in ``worlds``, outside any enclosing context."""
    saved = fc.ctx, fc.scopes, fc.def_stack, fc.stmt_stack
    fc.ctx = replace(fc.ctx, world_set=worlds, catches=frozenset(), facts={})
    fc.scopes, fc.def_stack, fc.stmt_stack = [], [], []
    try:
        walk(node, walker)
    finally:
        fc.ctx, fc.scopes, fc.def_stack, fc.stmt_stack = saved


def _narrow_helpers(text: str, walker: Walker, fc: FileContext, rounds: int = 3) -> None:
    """A module-level function used only through calls made under guards runs
    only in the worlds of those calls: re-check its body there.

    ``def mm(...): return gated_op(...)`` called only under
    ``if torch.cuda.get_device_capability() >= (8, 9):`` is not a finding.
    Functions referenced any other way (passed as a value, exported, named in
    a string) may be called from anywhere and keep their definition's worlds.
    """
    defs = {name: b for name, b in fc.index.bindings.items() if isinstance(b, cst.FunctionDef)}
    done: dict[str, frozenset] = {}
    uses = None
    for _ in range(rounds):
        changed = False
        for name, calls in list(walker.calls.items()):
            node = defs.get(name)
            if node is None or not calls:
                continue
            if uses is None or name not in uses:
                uses = {**(uses or {}), **_name_uses(text, [n for n in walker.calls if n in defs])}
            # Every occurrence of the name (the def included) is followed by "(", or by "[" of a launch.
            refs, called, indexed = uses.get(name, (0, 0, 0))
            launched = len(walker.launched.get(name, ()))
            if indexed != launched or refs != called + walker.handed.get(name, 0) + launched:
                continue
            worlds = _calls_worlds(calls, fc.target.worlds())
            if done.get(name) == worlds or worlds >= fc.target.worlds():
                continue
            done[name] = worlds
            changed = True
            # Forget what the earlier visit of this body found and called.
            walker.findings_by_owner.pop(id(node), None)
            walker.deferred.pop(id(node), None)
            for by_owner in walker.calls.values():
                by_owner.pop(id(node), None)
            _rewalk(walker, fc, node, worlds)
        if not changed:
            return


def _calls_worlds(calls: dict, every: frozenset) -> frozenset:
    """The worlds of the calls' contexts together: the decided ones first, and the
    others only while those do not already cover every world."""
    ctxs = [c for by_ctx in calls.values() for c in by_ctx.values()]
    worlds: frozenset = frozenset()
    for c in sorted(ctxs, key=lambda c: c.decided is None):
        if worlds >= every:
            break
        worlds |= c.worlds
    return worlds


def _name_uses(text: str, names) -> dict[str, tuple[int, int, int]]:
    """Per name of ``names``: how often it occurs in the text as a word not after a dot,
    how often a ``(`` follows it, and how often a ``[`` (a Triton launch ``kernel[grid](...)``).
    One scan of the file for all of them."""
    counts = {n: [0, 0, 0] for n in names}
    if not counts:
        return {}
    alts = "|".join(re.escape(n) for n in sorted(counts, key=len, reverse=True))
    for m in re.finditer(r"(?<![\w.])(" + alts + r")(?!\w)(\s*[(\[])?", text):
        c = counts[m.group(1)]
        c[0] += 1
        if m.group(2) is not None:
            c[1 if m.group(2).endswith("(") else 2] += 1
    return {k: (a, b, n) for k, (a, b, n) in counts.items()}


def check_module(path: str, module: cst.Module, rules: list[Rule], target: ResolvedTarget, matrix: Matrix,
                 attr_exists, known: set[str], text: str, reads: list | None = None,
                 providers: list[Rule] | None = None, root: str | None = None) -> list[Diagnostic]:
    walker = analyse(path, module, rules, target, matrix, attr_exists, known, text, reads, providers, root)
    return diagnostics(path, module, walker, target)


def analyse(path: str, module: cst.Module, rules: list[Rule], target: ResolvedTarget, matrix: Matrix,
            attr_exists, known: set[str], text: str, reads: list | None = None,
            providers: list[Rule] | None = None, root: str | None = None) -> Walker:
    """The traversal and the rules: findings on nodes, no positions yet."""
    # Cyclic garbage collection waits until the file is done: the tree and the value
    # model's memo stay alive throughout, so each full collection walked them for
    # nothing (about a fifth of the engine's time on transformers and torch sources).
    paused = gc.isenabled()
    gc.disable()
    try:
        return _analyse(path, module, rules, target, matrix, attr_exists, known, text, reads, providers, root)
    finally:
        if paused:
            gc.enable()


def _analyse(path, module, rules, target, matrix, attr_exists, known, text, reads, providers, root=None) -> Walker:
    index = build_index(module)
    fc = FileContext(path, module, index, target, matrix, known, attr_exists, text)
    fc.root = root
    if reads is not None:
        fc.reads = reads
    walker = Walker(fc, rules, providers)
    walk(module, walker)
    _rewalk_marked(walker, fc)
    _narrow_helpers(text, walker, fc)
    walker.run_deferred()
    return walker


def _same_value(a, b) -> bool:
    """Do two worlds' values of a splat agree? (values the model cannot compare do not)"""
    try:
        return bool(a == b) and type(a) is type(b)
    except Exception:  # a value whose __eq__ is not a plain comparison
        return False


def diagnostics(path: str, module: cst.Module, walker: Walker, target: ResolvedTarget) -> list[Diagnostic]:
    """Findings with their positions, computed only for a file that has findings."""
    fc = walker.fc
    findings = [f for group in walker.findings_by_owner.values() for f in group]
    if not findings and not walker.errors:
        return []
    # Positions only now, for a file that has findings, and only of the statements they sit in.
    positions = Positions(module, fc.text, walker.stmt_paths)
    out = []
    for rule, f in findings:
        pos = positions.get(f.node)
        if pos is None and id(f.node) in fc.origins:
            pos = positions.get(fc.origins[id(f.node)])
        if pos is None:
            continue
        if f.line_delta:  # the node's lines below its first start at column 1
            line = pos.start.line + f.line_delta
            start_col = end_col = 1 + f.col_delta
            end_line = line
        else:
            line, start_col, end_line, end_col = pos.start.line, pos.start.column + 1, pos.end.line, pos.end.column + 1
            start_col += f.col_delta
        message = f.message
        for ref, ref_node in f.refs.items():
            ref_pos = positions.get(ref_node)
            where = str(ref_pos.start.line) if ref_pos else fc.project.locate(ref_node) if fc._project else None
            message = message.replace("{line:" + ref + "}", where or "?")
        out.append(
            Diagnostic(
                path=path,
                line=line,
                column=start_col,
                end_line=end_line,
                end_column=end_col,
                code=rule.code,
                rule=rule.name,
                severity=f.severity,
                message=message,
                targets=target.labels_for(f.archs) + list(f.extra_targets),
                fix=f.fix if not f.line_delta else None,
            )
        )
    for rule, node, exc in walker.errors:
        pos = positions.get(node)
        line, col = (pos.start.line, pos.start.column + 1) if pos else (1, 1)
        out.append(internal_error(path, line, col, f"rule {rule.code} {rule.name} failed: {type(exc).__name__}: {exc}"))
    return out


def internal_error(path: str, line: int, col: int, message: str) -> Diagnostic:
    """Reported when aicompat itself fails on a file; the run goes on but is incomplete."""
    return Diagnostic(path, line, col, line, col, "AIC000", "internal-error", "error",
                      " ".join(f"internal error: {message}".split()), [])
