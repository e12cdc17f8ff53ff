"""Containers as abstract values: items of tuples, lists and dicts, and what
``.append``/``.extend``/``.update``/``.setdefault``/``d[k] = v`` make of them,
for the evaluator (model/evaluate.py)."""

from __future__ import annotations

from ..values import UNKNOWN, DictValue, Module, Seq, Union, join


def seq_as_tuple(v):
    """Lists of known items as tuples, the form the shape model takes sizes in."""
    if isinstance(v, Seq) and v.exact:
        return tuple(v.items)
    return v


def plain(v) -> bool:
    return isinstance(v, (int, float, str, tuple)) and v is not None


def hashable(v) -> bool:
    try:
        hash(v)
        return True
    except TypeError:
        return False


def as_items(v):
    """The items of a value known to be a fixed sequence, else None."""
    if isinstance(v, tuple):
        return list(v)
    if isinstance(v, Seq) and v.exact:
        return list(v.items)
    return None


def element(v):
    """Any one item of an iterable value."""
    if isinstance(v, Union):  # one of several lists: an item of any of them
        items = [element(o) for o in v.options if not (isinstance(o, (tuple, Seq)) and not _has_items(o))]
        return join(items) if items else UNKNOWN
    if isinstance(v, tuple):
        return join(v) if v else UNKNOWN
    if isinstance(v, Seq):
        vals = list(v.items) + ([v.more] if v.more is not None else [])
        return join(vals) if vals else UNKNOWN
    if isinstance(v, DictValue):
        keys = [k for k, _ in v.items]
        return join(keys) if keys and v.exact else UNKNOWN
    return UNKNOWN


def _has_items(v) -> bool:
    return bool(v) if isinstance(v, tuple) else bool(v.items) or v.more is not None


def item_at(v, i):
    if isinstance(v, Union):
        return join([_item_or_unknown(o, i) for o in v.options])
    if v is UNKNOWN:
        return UNKNOWN
    if isinstance(v, DictValue):
        if i is UNKNOWN or not hashable(i):
            return UNKNOWN
        got = v.get(i, NotImplemented)
        if got is NotImplemented:
            return UNKNOWN if not v.exact else UNKNOWN
        return got
    if not isinstance(i, int) or isinstance(i, bool):
        return UNKNOWN
    if isinstance(v, (tuple, str)):
        return v[i]
    if isinstance(v, Seq) and v.exact:
        return v.items[i]
    return UNKNOWN


CONVERTERS = {"int": int, "float": float, "str": str}


def convert(name: str, v):
    """``int(v)`` and the like on an abstract value; UNKNOWN where Python would raise or we cannot tell."""
    if not plain(v) or isinstance(v, (tuple, bool)) and name != "str":
        return UNKNOWN
    try:
        return CONVERTERS[name](v)
    except (TypeError, ValueError, OverflowError):
        return UNKNOWN


def _item_or_unknown(v, i):
    try:
        return item_at(v, i)
    except (IndexError, KeyError, TypeError):
        return UNKNOWN


def widen(v):
    """A container after a change the model cannot follow."""
    if isinstance(v, Seq):
        return Seq(v.items, UNKNOWN, v.kind)
    if isinstance(v, DictValue):
        return DictValue(v.items, UNKNOWN)
    return UNKNOWN


def set_item(prev, key, val):
    if isinstance(prev, DictValue):
        if key is UNKNOWN or not hashable(key):
            return DictValue(prev.items, join([prev.more, val]) if prev.more is not None else val)
        return DictValue(tuple((k, v) for k, v in prev.items if k != key) + ((key, val),), prev.more)
    if isinstance(prev, Seq):
        return Seq(prev.items, join([prev.more, val]) if prev.more is not None else val, prev.kind) \
            if not isinstance(key, int) else _seq_set(prev, key, val)
    return UNKNOWN


def _seq_set(prev: Seq, i: int, val):
    items = list(prev.items)
    if prev.exact and -len(items) <= i < len(items):
        items[i] = val
        return Seq(tuple(items), None, prev.kind)
    return Seq(prev.items, join([prev.more, val]) if prev.more is not None else val, prev.kind)


def mutate(prev, method: str, vals: list, kw: dict, libs):
    """``prev`` after ``prev.<method>(*vals, **kw)``; a library's own mutators (a parser's
    ``add_argument``) are the library table's (``libs.mutated``)."""
    if isinstance(prev, Union):
        return join([mutate(o, method, vals, kw, libs) for o in prev.options])
    if method in libs.mutators:
        return libs.mutated(prev, method, vals, kw)
    if isinstance(prev, Seq):
        if method in ("append", "add") and len(vals) == 1:
            return Seq(prev.items + (vals[0],), prev.more, prev.kind)
        if method == "insert" and len(vals) == 2:
            more = vals[1] if prev.more is None else join([prev.more, vals[1]])
            return Seq(prev.items, more, prev.kind)
        if method == "extend" and len(vals) == 1:
            items = as_items(vals[0])
            if items is not None:
                return Seq(prev.items + tuple(items), prev.more, prev.kind)
            el = element(vals[0])
            return Seq(prev.items, el if prev.more is None else join([prev.more, el]), prev.kind)
        return widen(prev)
    if isinstance(prev, DictValue):
        if method == "update":
            out = prev
            if len(vals) == 1:
                other = vals[0]
                out = dict_merge(out, other if isinstance(other, DictValue) else DictValue((), UNKNOWN))
            return dict_merge(out, DictValue(tuple(kw.items())))
        if method == "setdefault" and vals:
            key = vals[0]
            if key is UNKNOWN or not hashable(key):
                return widen(prev)
            if prev.get(key, NotImplemented) is not NotImplemented:
                return prev
            val = vals[1] if len(vals) > 1 else None
            if not prev.exact:
                # the key may already be set to something we do not know
                return DictValue(prev.items + ((key, join([val, prev.more]) if prev.more is not UNKNOWN else UNKNOWN),),
                                 prev.more)
            return DictValue(prev.items + ((key, val),), prev.more)
        return widen(prev)
    if isinstance(prev, Module) and prev.name == "os.environ":
        return prev
    return UNKNOWN


def dict_merge(a: DictValue, b: DictValue) -> DictValue:
    items = dict(a.items)
    items.update(b.items)
    more = a.more if b.more is None else (b.more if a.more is None else join([a.more, b.more]))
    return DictValue(tuple(items.items()), more)
