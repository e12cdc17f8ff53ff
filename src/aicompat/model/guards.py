"""Guard context: where a piece of code can run.

``Ctx.worlds`` is the set of (arch, torch release) worlds in which control can
reach the current node. ``if cond:`` narrows it to the worlds where ``cond``
may hold, its ``else`` to those where it may not; an early ``return`` or
``raise`` narrows what follows. ``catches`` holds the exceptions an enclosing
``try`` handles, so a call whose failure is caught and has a fallback is not
reported. Unknown conditions keep every world: guards never hide a finding
they do not prove.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

import libcst as cst

from ..matrix.target import World
from .evaluate import OPENS, UNKNOWN, WORLD, truth, world_part


class Lazy:
    """A world set decided when first read. An ``if`` test is evaluated only when a rule
    asks where the code under it runs (most branches hold nothing a rule reports), with
    the evaluator the traversal had at the ``if`` (``fn`` captures it). ``parents``: the
    undecided sets ``fn`` reads; they are decided first, outermost first (``_settle``)."""

    __slots__ = ("fn", "value", "parents")

    def __init__(self, fn, *parents) -> None:
        self.fn = fn
        self.value = None
        self.parents = tuple(p for p in parents if type(p) is Lazy and p.value is None)

    def __call__(self) -> Any:  # a world set; from FileContext.split_later, the pair of them
        if self.value is None:
            if self.parents:
                _settle(self)
            self._decide()
        return self.value

    def _decide(self) -> None:
        self.value = self.fn()
        self.fn = None  # what it captured is no longer needed
        self.parents = ()


def _settle(lazy: Lazy) -> None:
    """Decide the undecided sets ``lazy`` depends on, those furthest up first, with a loop: an
    elif chain thousands of branches long is a chain of sets as long, and deciding the last
    branch by recursion through each one's ``fn`` would exhaust the stack. Nothing is decided
    that ``lazy`` does not need: a chain no rule asks about is never evaluated."""
    order: list[Lazy] = []
    stack: list[tuple[Lazy, bool]] = [(lazy, False)]
    seen: set[int] = set()
    while stack:
        node, done = stack.pop()
        if done:
            order.append(node)
            continue
        if id(node) in seen:
            continue
        seen.add(id(node))
        stack.append((node, True))
        stack.extend((p, False) for p in node.parents if p.value is None and id(p) not in seen)
    for node in order:
        if node is not lazy and node.value is None:
            node._decide()


@dataclass(frozen=True)
class Ctx:
    world_set: Any  # frozenset[World], or a Lazy that gives it: read through ``worlds``
    catches: frozenset[str] = frozenset()
    # What enclosing ``with`` items and function marks mean here, as the rules
    # that provide them define it (``Rule.with_context``, ``Rule.function_marks``).
    facts: Mapping[str, Any] = field(default_factory=dict, hash=False)
    # exception name -> the handler names that catch it (version_matrix/exceptions.toml)
    handlers: Mapping[str, frozenset[str]] = field(default_factory=dict, hash=False, compare=False, repr=False)
    # Some worlds are open twins (World.open): code in a function no code of the file calls,
    # whose parameters are what a caller passes. False everywhere else, where nothing changes.
    has_open: bool = False

    @property
    def worlds(self) -> frozenset[World]:
        w = self.world_set
        return w if type(w) is frozenset else w()

    @property
    def decided(self) -> frozenset[World] | None:
        """The worlds, if already decided; None while a guard above is still unasked."""
        w = self.world_set
        return w if type(w) is frozenset else w.value

    def with_open_twins(self) -> "Ctx":
        """This context where the parameters of the function entered are unknown: each world
        also in its open twin, whose evaluator does not take an uncalled function's defaults."""
        return replace(self, world_set=Lazy(lambda: _with_twins(self.worlds), self.world_set), has_open=True)

    def closed(self) -> "Ctx":
        """The worlds where every parameter has its default: what a rule for which a caller's
        non-default argument is the caller's choice (rules/policy.toml) judges."""
        return replace(self, world_set=Lazy(lambda: frozenset(x for x in self.worlds if not x.open), self.world_set),
                       has_open=False)

    def projected(self) -> "Ctx":
        """Every world that reaches here, an open twin as its closed world: what a rule that
        judges all reachable code sees (its values are still read at the defaults)."""
        return replace(self, world_set=Lazy(lambda: frozenset(replace(x, open=False) if x.open else x
                                                             for x in self.worlds), self.world_set), has_open=False)

    def narrowed(self, worlds) -> "Ctx":
        """This context in ``worlds`` (a frozenset or a Lazy)."""
        return replace(self, world_set=worlds)

    def fact_worlds(self, key: str) -> frozenset[World]:
        """The worlds here in which fact ``key`` holds: a fact is True (everywhere) or
        the worlds it holds in (a function compiled by ``torch.compile(fn)`` under a guard)."""
        v = self.facts.get(key)
        if not v:
            return frozenset()
        return self.worlds & v if isinstance(v, frozenset) else self.worlds

    def caught(self, exc: str) -> bool:
        """Would an enclosing handler catch an ``exc`` raised here? An exception the
        hierarchy does not list (a library's own) counts as an Exception subclass."""
        return bool(self.catches & self.handlers.get(exc, {exc, "Exception", "BaseException"}))


def _with_twins(worlds: frozenset[World]) -> frozenset[World]:
    return worlds | frozenset(replace(x, open=True) for x in worlds)


def split_worlds(test: cst.BaseExpression, worlds: frozenset[World], evaluator_for) -> tuple[frozenset[World], frozenset[World]]:
    """Worlds where ``test`` may be true, and where it may be false."""
    yes, no = set(), set()
    known: list[tuple[int, tuple, Any]] = []  # (what an answer depended on, that part of its world, answer)
    for w in worlds:
        for bits, part, t in known:
            if world_part(w, bits) == part:
                break
        else:
            ev = evaluator_for(w)
            t = truth(ev.eval(test))
            bits = int(ev.touched)
            if bits != WORLD | OPENS:  # the same in every world that agrees on that: evaluate once
                known.append((bits, world_part(w, bits), t))
        if t is UNKNOWN:
            yes.add(w)
            no.add(w)
        elif t:
            yes.add(w)
        else:
            no.add(w)
    return frozenset(yes), frozenset(no)


def is_exit_call(func: cst.BaseExpression, resolve, libs) -> bool:
    """A call that never returns (``sys.exit()``, a test framework's skip): the library
    table's ``exit_calls`` by qualified name, ``exit_methods`` on any receiver."""
    if resolve(func) in libs.exit_calls:
        return True
    return isinstance(func, cst.Attribute) and func.attr.value in libs.exit_methods


def terminates(block: cst.BaseSuite, resolve, libs) -> bool:
    """Does this block always leave (return/raise/continue/break/sys.exit)?"""
    if isinstance(block, cst.SimpleStatementSuite):
        return _leaves(block.body, resolve, libs)
    if not block.body:
        return False
    last = block.body[-1]
    if isinstance(last, cst.If):
        return _chain_terminates(last, resolve, libs)
    return isinstance(last, cst.SimpleStatementLine) and _leaves(last.body, resolve, libs)


def orelse_terminates(orelse: cst.If | cst.Else | None, resolve, libs, memo: dict | None = None) -> bool:
    """Does an ``else`` (or an ``elif`` chain) always leave? ``memo`` (id(If) -> answer,
    one per file) keeps asking it of each ``elif`` of a chain linear, not quadratic."""
    if orelse is None:
        return False
    if isinstance(orelse, cst.Else):
        return terminates(orelse.body, resolve, libs)
    return _chain_terminates(orelse, resolve, libs, memo)


def _chain_terminates(node: cst.If, resolve, libs, memo: dict | None = None) -> bool:
    """Does every branch of ``if``/``elif``/``else`` leave, an ``else`` included? A loop
    along the chain, not recursion: a legal chain has thousands of ``elif`` branches.
    (A branch body nests by indentation, which CPython caps at 100 levels.)"""
    if memo is None:
        cur: cst.If | cst.Else | None = node
        while isinstance(cur, cst.If):
            if cur.orelse is None or not terminates(cur.body, resolve, libs):
                return False
            cur = cur.orelse
        return cur is not None and terminates(cur.body, resolve, libs)
    chain: list[cst.If] = []
    cur = node
    known = None
    while isinstance(cur, cst.If):
        known = memo.get(id(cur))
        if known is not None:
            break
        chain.append(cur)
        cur = cur.orelse
    if known is None:  # the chain's end: an ``else`` or nothing
        known = cur is not None and terminates(cur.body, resolve, libs)
    for branch in reversed(chain):
        known = known and terminates(branch.body, resolve, libs)
        memo[id(branch)] = known
    return known


def _leaves(smalls, resolve, libs) -> bool:
    for small in smalls:
        if isinstance(small, (cst.Return, cst.Raise, cst.Continue, cst.Break)):
            return True
        if isinstance(small, cst.Expr) and isinstance(small.value, cst.Call):
            if is_exit_call(small.value.func, resolve, libs):
                return True
    return False
