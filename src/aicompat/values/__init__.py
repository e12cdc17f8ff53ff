"""Abstract values: what the value model says an expression may be.

A leaf module (imports nothing of aicompat), so rules, the evaluator and the
shape model share one vocabulary. Python ints, floats, bools, ``None``,
strings and tuples stand for themselves; everything the analysis cannot pin
down is ``UNKNOWN``. Unknown is honest: an f-string with an unknown part is a
``PartialStr``, never the string of its known parts, and a value that differs
by branch is a ``Union``, never the last assignment seen.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


class _Unknown:
    __slots__ = ()

    def __repr__(self) -> str:
        return "UNKNOWN"

    def __bool__(self) -> bool:  # pragma: no cover - guard against accidental truth tests
        raise TypeError("UNKNOWN has no truth value; use truth()")


UNKNOWN: Any = _Unknown()


@dataclass(frozen=True)
class Tensor:
    """A tensor; ``shape`` is a tuple of dims (int, symbolic dim or UNKNOWN),
    or None when even the rank is unknown."""

    shape: tuple | None
    dtype: str | None = None  # qualified dtype name when known ("torch.float8_e4m3fn")

    def last_dim(self):
        if not self.shape:
            return UNKNOWN
        return self.shape[-1]


@dataclass(frozen=True)
class Module:
    """A resolved module or library object path (``torch.cuda``) that is not a value."""

    name: str


@dataclass(frozen=True)
class LibObject:
    """An object made by calling a library callable the model does not interpret
    (``torch.cuda.Stream()``, ``MXFP8BlockScaling()``); ``kwargs`` holds the
    keyword values it was made with, where known."""

    qualname: str
    kwargs: tuple = ()  # ((name, value), ...)
    origin: Any = field(default=None, compare=False, hash=False, repr=False)  # the Call node that made it

    def kw(self, name: str, default=UNKNOWN):
        for k, v in self.kwargs:
            if k == name:
                return v
        return default


@dataclass(frozen=True)
class PartialStr:
    """A string with known and unknown parts: ``f"{major}.{minor}"`` is
    ``PartialStr((UNKNOWN, ".", UNKNOWN))``. It equals no concrete string."""

    parts: tuple

    def known_prefix(self) -> str:
        out = []
        for p in self.parts:
            if not isinstance(p, str):
                break
            out.append(p)
        return "".join(out)


@dataclass(frozen=True)
class PathValue:
    """A ``pathlib.Path``; ``path`` is a str or a PartialStr."""

    path: Any


@dataclass(frozen=True)
class Seq:
    """A list (``kind="list"``) or set of known items; ``more`` is the join of
    items at unknown positions (appended in loops, extended from unknowns), or
    None when the items are exactly ``items``."""

    items: tuple
    more: Any = None
    kind: str = "list"

    @property
    def exact(self) -> bool:
        return self.more is None


@dataclass(frozen=True)
class DictValue:
    """A dict with known string keys; ``more`` as for ``Seq`` (values under
    unknown keys), None when the keys are exactly ``items``."""

    items: tuple  # ((key, value), ...)
    more: Any = None

    def get(self, key, default=UNKNOWN):
        for k, v in self.items:
            if k == key:
                return v
        return default

    @property
    def exact(self) -> bool:
        return self.more is None

    def as_dict(self) -> dict:
        return dict(self.items)


@dataclass(frozen=True)
class SourceModule:
    """A module of the analysed project (not a library), read through ``env``."""

    path: str
    env: Any = field(default=None, compare=False, hash=False)

    def __repr__(self) -> str:
        return f"SourceModule({self.path})"


@dataclass(frozen=True)
class Function:
    """A function or method of the analysed code (``node`` a FunctionDef or Lambda)."""

    node: Any = field(compare=False, hash=False)
    owner: Any = field(default=None, compare=False, hash=False)  # the Instance a bound method belongs to
    key: int = 0  # id(node), for equality

    def __repr__(self) -> str:
        name = getattr(getattr(self.node, "name", None), "value", "<lambda>")
        return f"Function({name})"


@dataclass(frozen=True)
class ClassValue:
    """A class of the analysed code."""

    node: Any = field(compare=False, hash=False)
    key: int = 0

    @property
    def name(self) -> str:
        return self.node.name.value


@dataclass(frozen=True)
class Instance:
    """An instance of a class of the analysed code. ``ctor`` is the call that made
    it (its arguments bind ``__init__``'s parameters), None when unknown (``self``)."""

    cls: ClassValue
    ctor: Any = field(default=None, compare=False, hash=False)
    ctor_key: int = 0

    def __repr__(self) -> str:
        return f"Instance({self.cls.name})"


@dataclass(frozen=True)
class Union:
    """One of several values (by branch, by call site). Never holds UNKNOWN or a Union."""

    options: tuple

    def __repr__(self) -> str:
        return "Union(" + ", ".join(map(repr, self.options)) + ")"


@dataclass(frozen=True, repr=False)
class Switch(Union):
    """A command-line switch (``store_true``/``store_false``, a bool default): False or
    True, whichever the user passes, so its truth is unknown; ``default`` is what a run
    without it gets. ``enabled=args.fp8`` with an off default is a guard that holds
    unless the user turns FP8 on (guard_forms.off_switch)."""

    default: bool = False


def switch(default: bool) -> Switch:
    return Switch((False, True), default)


MAX_UNION = 8


def join(values) -> Any:
    """The join of several values: the value itself when all agree, a Union when
    they differ, UNKNOWN when one is unknown or there are too many."""
    values = list(values)
    if values and all(isinstance(v, Switch) and v == values[0] for v in values):
        return values[0]  # the same switch from every call site keeps its default
    opts: list = []
    for v in values:
        if v is UNKNOWN:
            return UNKNOWN
        for o in (v.options if isinstance(v, Union) else (v,)):
            if not any(_same(o, x) for x in opts):
                opts.append(o)
    if not opts:
        return UNKNOWN
    if len(opts) == 1:
        return opts[0]
    if len(opts) > MAX_UNION:
        return UNKNOWN
    return Union(tuple(opts))


def join_may(values) -> Any:
    """The join of the values known on some path, the unknown ones left out: what a
    value *may* be (X on one branch, unknown on another: X). UNKNOWN when none is known.
    Only for a question that holds on any path with the value (pickling X fails), never
    for "it is X": the unknown paths are not said to be X, they are not looked at."""
    return join([v for v in values if v is not UNKNOWN])


def options(v) -> tuple:
    """The alternatives of a value (a Union's options, else the value alone)."""
    return v.options if isinstance(v, Union) else (v,)


def _same(a, b) -> bool:
    if a is b:
        return True
    if type(a) is not type(b):
        return False
    try:
        return bool(a == b)
    except Exception:
        return False


def is_known(v) -> bool:
    return v is not UNKNOWN and not isinstance(v, Union)


def contents(v, _depth: int = 0):
    """Every value reachable inside ``v`` (containers, instance attributes are not
    followed here: that needs the model), ``v`` itself included."""
    if _depth > 6:
        return
    for o in options(v):
        yield o
        if isinstance(o, (tuple, Seq)):
            items = o if isinstance(o, tuple) else o.items
            for x in items:
                yield from contents(x, _depth + 1)
            if isinstance(o, Seq) and o.more is not None:
                yield from contents(o.more, _depth + 1)
        elif isinstance(o, DictValue):
            for _, x in o.items:
                yield from contents(x, _depth + 1)
            if o.more is not None:
                yield from contents(o.more, _depth + 1)
