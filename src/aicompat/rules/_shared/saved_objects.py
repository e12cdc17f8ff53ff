"""Files the checked code saves with ``torch.save`` and loads with ``torch.load``: where a save
and a load meet (a known path, one in-memory buffer, one attribute set only in ``__init__``),
and whether what a save writes is known to load with the weights-only unpickler (facts:
version_matrix/pickle.toml [weights_only]). AIC105 reports a load of a file saved with an
object that unpickler refuses; AIC204 keeps quiet about ``torch.load``'s changed default where
every save of the file writes only what it accepts."""

from __future__ import annotations

import libcst as cst

from ...core.ruleapi import (
    UNKNOWN,
    ClassValue,
    DictValue,
    Instance,
    Layer,
    LibObject,
    PathValue,
    Seq,
    Tensor,
    options,
)

_MAX_DEPTH = 6
_PLAIN = (bool, int, float, complex, str, bytes, type(None))


def saves(fc, e: dict):
    """The calls of the entry's savers (``torch.save``) in the file: (call, owner, statement)."""
    for saver in e["savers"]:
        for call, owner, stmt in fc.model.calls_named(saver.rsplit(".", 1)[-1]):
            if fc.resolve(call.func) == saver:
                yield call, owner, stmt


def save_args(call: cst.Call, e: dict):
    """(object expression, path expression) of a save, or None (a splat, or either missing)."""
    if any(a.star for a in call.args):
        return None
    args = [a for a in call.args if a.keyword is None]
    kws = {a.keyword.value: a.value for a in call.args if a.keyword is not None}

    def arg(spec):
        i, k = spec
        return kws.get(k) if k in kws else (args[i].value if i < len(args) else None)

    obj, where = arg(e["save_obj"]), arg(e["save_path"])
    return None if obj is None or where is None else (obj, where)


def storage(value, expr, owner, fc, e: dict):
    """What a save or load reads or writes, as far as a save and a load of one file can be
    told to meet there: a known path; an in-memory buffer by the call that made it (``buf =
    io.BytesIO()``); ``self.<name>`` of one class's methods, set only by its ``__init__``.
    None when it cannot be told."""
    if isinstance(value, (str, PathValue)):
        return ("path", value)
    if isinstance(value, LibObject) and value.qualname in e["buffers"] and value.origin is not None:
        return ("buffer", id(value.origin))
    if isinstance(expr, cst.Attribute) and isinstance(expr.value, cst.Name) and isinstance(owner, cst.FunctionDef):
        scope = fc.model.scope(owner)
        cls = scope.owner_class
        if cls is None or scope.self_name != expr.value.value:
            return None
        defs = fc.model.attr_defs(cls).get(expr.attr.value, [])
        if defs and all(isinstance(d.scope.node, cst.FunctionDef) and d.scope.node.name.value == "__init__"
                        and d.kind != "mutate" for d in defs):
            return ("attribute", id(cls), expr.attr.value)
    return None


def loads_weights_only(fc, e: dict, where) -> bool:
    """Is the file at ``where`` (``storage``) saved in this file, and does every save of it
    write only what the weights-only unpickler loads (tensors, plain values, containers of
    them, [accepted] library types, the ``state_dict()`` of a torch module or optimizer), in
    every world? False when any save's object is not known to."""
    found = False
    worlds = sorted(fc.ctx.worlds, key=lambda w: (w.arch, str(w.torch)))
    if not worlds:
        return False
    for call, owner, stmt in saves(fc, e):
        got = save_args(call, e)
        if got is None:
            return False  # a save that cannot be read may write this file
        obj, path = got
        loc = (owner, stmt)
        evs = [fc.evaluator(w) for w in worlds]
        meets = [storage(ev.at(loc, {}, lambda ev=ev: ev.eval(path)), path, owner, fc, e) == where for ev in evs]
        if not any(meets):
            continue  # another file
        if not all(meets):
            return False  # this file in some worlds only: not known
        if not all(_accepted(obj, ev, loc, fc, e, 0) for ev in evs):
            return False
        found = True
    return found


def _accepted(expr, ev, loc, fc, e: dict, depth: int) -> bool:
    """Does ``expr`` (written out where it can be: a dict, list or tuple display item by item)
    evaluate, at ``loc``, to something the weights-only unpickler loads?"""
    if depth > _MAX_DEPTH:
        return False
    if isinstance(expr, cst.Dict):
        return all(isinstance(el, cst.DictElement) and isinstance(el.key, (cst.SimpleString, cst.Integer))
                   and _accepted(el.value, ev, loc, fc, e, depth + 1) for el in expr.elements)
    if isinstance(expr, (cst.List, cst.Tuple)):
        return all(isinstance(el, cst.Element) and _accepted(el.value, ev, loc, fc, e, depth + 1)
                   for el in expr.elements)
    v = ev.at(loc, {}, lambda: ev.eval(expr))
    if v is UNKNOWN:
        return _state_dict(expr, ev, loc, fc, e)
    return _value_accepted(v, e, depth)


def _value_accepted(v, e: dict, depth: int) -> bool:
    if depth > _MAX_DEPTH:
        return False
    opts = options(v)
    if not opts:
        return False
    for o in opts:
        if o is UNKNOWN:
            return False
        if isinstance(o, _PLAIN) or isinstance(o, Tensor):
            continue
        if isinstance(o, LibObject) and o.qualname in e["accepted"]:
            continue
        if isinstance(o, tuple):
            if all(_value_accepted(x, e, depth + 1) for x in o):
                continue
            return False
        if isinstance(o, Seq) and o.exact:
            if all(_value_accepted(x, e, depth + 1) for x in o.items):
                continue
            return False
        if isinstance(o, DictValue) and o.exact:
            if all(_value_accepted(x, e, depth + 1) for _k, x in o.items):
                continue
            return False
        return False
    return True


def _state_dict(expr, ev, loc, fc, e: dict) -> bool:
    """``<torch module or optimizer>.state_dict()``: tensors and plain values (pickle.toml
    [weights_only] observed); a class of the file that defines its own ``state_dict`` is not."""
    if not (isinstance(expr, cst.Call) and not expr.args and isinstance(expr.func, cst.Attribute)
            and expr.func.attr.value == "state_dict"):
        return False
    recv = ev.at(loc, {}, lambda: ev.eval(expr.func.value))
    opts = options(recv)
    return bool(opts) and all(_has_library_state_dict(o, ev, fc, e) for o in opts)


def _has_library_state_dict(o, ev, fc, e: dict, depth: int = 0) -> bool:
    if isinstance(o, Layer):
        return True
    if isinstance(o, LibObject):
        return any(o.qualname.startswith(p) for p in e["state_dict_of"])
    cls = o.cls if isinstance(o, Instance) else None
    return cls is not None and _library_module_class(cls, ev, fc, e, depth)


def _library_module_class(cls: ClassValue, ev, fc, e: dict, depth: int) -> bool:
    """Does the file's class derive from a class in ``state_dict_of`` without a ``state_dict``
    of its own (or of a base of the file's) on the way?"""
    node = cls.node
    if depth > _MAX_DEPTH or not isinstance(node, cst.ClassDef):
        return False
    if any(isinstance(s, cst.FunctionDef) and s.name.value in ("state_dict", "__getstate__", "__reduce__")
           for s in getattr(node.body, "body", ())):
        return False
    for base in node.bases:
        if base.keyword is not None:
            continue
        q = fc.resolve(base.value)
        if q and any(q == p or (p.endswith(".") and q.startswith(p)) for p in e["state_dict_of"]):
            return True
        v = ev.at((fc.model.parent_of(node), node), {}, lambda b=base: ev.eval(b.value))
        if isinstance(v, ClassValue) and _library_module_class(v, ev, fc, e, depth + 1):
            return True
    return False
