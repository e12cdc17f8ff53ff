"""Sizes read as named dims: where the value model cannot evaluate a size, one value it
can still name (``self.n_heads = cfg["n_heads"]``) becomes a symbol (values/symbolic.py).

The shape model computes with symbols exactly: ``nn.Linear(d, self.n_heads * 192)`` then
``.view(b, s, self.n_heads, -1)`` is 192 in its last dim whatever ``n_heads`` is. A
symbol stands for one value: it is made for one definition (in one binding of its
function's parameters), never for a definition inside a loop (each turn may differ), and
only where the library table says the argument is a size (libs.size_args); elsewhere the
value stays UNKNOWN. Two symbols are never taken to be equal unless they are the same one.

Two sources of symbols:
- ``read_dim``: a size argument whose value is unknown, read through its definition
  (a name, ``self.<attr>``, a sum or product of such, a key or attribute of a name);
- ``shaped``: a name whose value is unknown and whose shape the code unpacks before any
  other use (``b, s, _ = x.shape``): past that statement ``x`` has that many dims, so it is
  a tensor of that rank with a symbol per dim (``b`` is then ``x``'s first dim).
"""

from __future__ import annotations

from typing import Any

import libcst as cst

from ..syntax.walk import walk
from ..values import UNKNOWN, ClassValue, Instance, Seq, Tensor
from ..values import symbolic as sym

_OPS = {cst.Add: sym.add, cst.Subtract: sym.sub, cst.Multiply: sym.mul, cst.FloorDivide: sym.floordiv}
_MAX_SCAN = 64  # top-level statements looked through for the unpack of a shape


def sized_args(ev, spec, pos, kw) -> tuple[list, dict]:
    """The values of a call's arguments, those the library table's ``spec`` names as sizes
    (libmodels Sizes: ``ints``, ``shapes``, ``varargs``, ``all_keywords``) read as dims."""
    def one(key, node, alone: bool):
        if key in spec.ints or spec.all_keywords and isinstance(key, str):
            return read_dim(ev, node)
        if key in spec.shapes or spec.varargs and isinstance(key, int):
            # one size, or a sequence of them: read item by item only where it is written out
            return read_dim(ev, node) if not alone or isinstance(node, (cst.Tuple, cst.List)) else ev.eval(node)
        return ev.eval(node)

    alone = not spec.varargs or len(pos) < 2
    return [one(i, a, alone) for i, a in enumerate(pos)], {k: one(k, a, True) for k, a in kw.items()}


def read_dim(ev, node) -> Any:
    """The value of ``node`` as a size: its value where known, else a symbol for it where
    it is one nameable value (module docstring), else UNKNOWN."""
    v = ev.eval(node)
    if isinstance(node, (cst.Tuple, cst.List)) and _unknown_items(v):
        return _dims_of(ev, node, v)
    if v is not UNKNOWN or not isinstance(node, cst.BaseExpression):
        return v
    key = ("dim", id(node), _binding_key(ev))
    hit = ev.memo.get(key)
    if hit is not None:
        ev.touched |= hit[1]
        return hit[0]
    if key in ev._active:
        return UNKNOWN
    ev._active.add(key)
    touched, ev.touched = ev.touched, 0
    try:
        out = _named(ev, node)
    finally:
        ev._active.discard(key)
        if ev.fuel > 0:
            ev.memo[key] = (out, ev.touched)  # with what it depended on (evaluate.Evaluator._put)
        ev.touched |= touched
    return out


def _unknown_items(v) -> bool:
    items = v if isinstance(v, tuple) else v.items if isinstance(v, Seq) and v.exact else None
    return v is UNKNOWN or isinstance(v, Seq) and not v.exact or items is not None and UNKNOWN in items


def _dims_of(ev, node, v):
    if any(isinstance(el, cst.StarredElement) for el in node.elements):
        return v
    items = tuple(read_dim(ev, el.value) for el in node.elements)
    return items if isinstance(node, cst.Tuple) else Seq(items)


def _binding_key(ev) -> int:
    scope = ev._scope()[0]
    b = ev.bindings.get(id(scope)) if scope is not None else None
    return id(b)


def _named(ev, node):
    if isinstance(node, cst.BinaryOperation):
        op = _OPS.get(type(node.operator))
        if op is None:
            return UNKNOWN
        a, b = read_dim(ev, node.left), read_dim(ev, node.right)
        if not (sym.is_dim(a) and sym.is_dim(b)):
            return UNKNOWN
        v = op(a, b)
        if v is UNKNOWN and op is sym.floordiv and not (isinstance(b, int) and b <= 0):
            # ``n_heads // tp``: no polynomial, but one value of its operands wherever it is written
            return symbol(ev, ("floordiv", a, b), f"({a})//({b})")
        return v
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Minus):
        a = read_dim(ev, node.expression)
        return sym.sub(0, a) if sym.is_dim(a) else UNKNOWN
    if isinstance(node, cst.Name):
        return _name_dim(ev, node.value)
    if isinstance(node, cst.Attribute):
        base = ev.eval(node.value)
        if isinstance(base, Instance):
            return _attr_dim(ev, base, node.attr.value)
    return _chain_dim(ev, node)


def _one_def(ev, name: str):
    """The one definition of ``name`` that reaches here (None when several, or none),
    with its scope's binding."""
    if name in ev.shadow or any(name in f for f in ev._frames):
        return None
    scope, stmt = ev._scope()
    while scope is not None:
        defs = scope.defs_at(name, stmt)
        if defs is not None:
            live = [d for d in defs if ev.feasible(d.conds, d.scope)]
            return live[0] if len(live) == 1 else None
        scope, stmt = scope.parent, None
    return None


def _name_dim(ev, name: str):
    d = _one_def(ev, name)
    if d is None or d.kind not in ("expr", "param", "unpack") or _in_loop(ev, d):
        return UNKNOWN
    b = ev.bindings.get(id(d.scope))
    if d.kind == "expr":
        v = ev.at((d.scope.node, d.stmt), ev.bindings, lambda: read_dim(ev, d.node))
        if sym.is_dim(v):
            return v
    return symbol(ev, ("def", id(d.origin or d), binding_key(ev, b)), name)


def _attr_def(ev, inst: Instance, attr: str):
    """The one definition of ``inst.<attr>`` in its class's methods that can run here, with
    the binding it is read under (as the evaluator reads instance attributes); None when
    there are several, or none, or it is made in a loop."""
    for c in ev.classes(inst.cls):
        defs = ev.model_of(c.node).attr_defs(c.node).get(attr)
        if not defs:
            continue
        if len(defs) != 1 or defs[0].kind != "expr" or _in_loop(ev, defs[0]):
            return None
        d = defs[0]
        fn = d.scope.node
        b = ev._ctor_binding(inst) if fn.name.value == "__init__" and inst.ctor is not None else ev._receiver(inst)
        saved = ev.bindings
        ev.bindings = {**saved, id(d.scope): b}
        try:
            ok = ev.feasible(d.conds, d.scope)
        finally:
            ev.bindings = saved
        return (d, b) if ok else None
    return None


def _attr_dim(ev, inst: Instance, attr: str):
    """``self.<attr>``: its one definition read as a size, else a symbol for it."""
    found = _attr_def(ev, inst, attr)
    if found is None:
        return UNKNOWN
    d, b = found
    v = ev.at((d.scope.node, d.stmt), {**ev.bindings, id(d.scope): b}, lambda: read_dim(ev, d.node))
    return v if sym.is_dim(v) else symbol(ev, ("attr", id(d), binding_key(ev, b)), attr)


def _chain_dim(ev, node):
    """``cfg["n_heads"]``, ``args.n_heads``, ``self.config.num_heads``: literal keys and
    attributes of one definition (a name's, or an instance attribute's), named by that
    definition and the path."""
    path: list = []
    root = None
    while isinstance(node, (cst.Attribute, cst.Subscript)) and len(path) < 8:
        if isinstance(node, cst.Attribute):
            if path:
                base = ev.eval(node.value)
                if isinstance(base, Instance):  # ``self.config`` of ``self.config.num_heads``
                    found = _attr_def(ev, base, node.attr.value)
                    if found is None:
                        return UNKNOWN
                    root, label = _source(ev, *found), node.attr.value
                    break
            path.append(node.attr.value)
        else:
            if len(node.slice) != 1 or not isinstance(node.slice[0].slice, cst.Index):
                return UNKNOWN
            k = node.slice[0].slice.value
            if not isinstance(k, (cst.SimpleString, cst.Integer)):
                return UNKNOWN
            path.append(k.value)
        node = node.value
    if root is None:
        if not isinstance(node, cst.Name) or not path:
            return UNKNOWN
        d = _one_def(ev, node.value)
        if d is None or d.kind not in ("expr", "param", "unpack") or _in_loop(ev, d):
            return UNKNOWN
        root, label = _source(ev, d, ev.bindings.get(id(d.scope))), node.value
    label += "".join(f".{p}" if p.isidentifier() else f"[{p}]" for p in reversed(path))
    return symbol(ev, root + (tuple(path),), label)


def _source(ev, d, b, depth: int = 0) -> tuple:
    """The definition a value is first made by, through copies into other names
    (``self.config = config``, ``cfg = self.config``): the root a path of keys is named from."""
    if depth < 8 and d.kind == "expr" and isinstance(d.node, (cst.Name, cst.Attribute)):
        def step():
            if isinstance(d.node, cst.Name):
                got = _one_def(ev, d.node.value)
                return None if got is None else (got, ev.bindings.get(id(got.scope)))
            base = ev.eval(d.node.value)
            return _attr_def(ev, base, d.node.attr.value) if isinstance(base, Instance) else None
        nxt = ev.at((d.scope.node, d.stmt), {**ev.bindings, id(d.scope): b}, step)
        if nxt is not None and not _in_loop(ev, nxt[0]) and nxt[0].kind in ("expr", "param", "unpack"):
            return _source(ev, nxt[0], nxt[1], depth + 1)
    return ("root", id(d.origin or d), binding_key(ev, b))


def binding_key(ev, b) -> Any:
    """``b`` (a parameter binding, or None) as the same key in every world: the call, where it
    is made, the bindings in force there and the receiver, not the binding object, which each
    world makes for itself. A binding with values given directly or a loop's items stays itself."""
    if b is None:
        return None
    if b.given or b.items or ev.shared is None:
        return ("id", id(b))
    keys = ev.shared.setdefault("_bkeys", {})
    hit = keys.get(id(b))
    if hit is not None and hit[0] is b:
        return hit[1]
    loc = b.loc
    recv = b.receiver
    if recv is None:
        rkey: Any = None
    elif isinstance(recv, Instance) and recv.ctor_key:
        rkey = ("inst", recv.cls.key, recv.ctor_key)
    elif isinstance(recv, ClassValue):
        rkey = ("cls", recv.key)
    else:
        rkey = ("id", id(recv))
    out = (id(b.call), None if loc is None else tuple(id(x) for x in loc),
           tuple(sorted((k, binding_key(ev, o)) for k, o in b.outer.items())), rkey)
    keys[id(b)] = (b, out)  # the binding kept alive with its key: its id is never reused
    return out


def symbol(ev, key: tuple, label: str):
    """The symbol for one value (``key``), the same each time it is asked, in every world
    (an answer one world computed is reused by the others: evaluate.Evaluator._put)."""
    memo_key = ("sym",) + key
    store = ev.memo if ev.shared is None else ev.shared
    hit = store.get(memo_key)
    if hit is None:
        n = store["_syms"] = store.get("_syms", 0) + 1
        hit = store[memo_key] = sym.Sym.var(f"{label}#{n}")
    return hit


def _in_loop(ev, d) -> bool:
    """Is the definition made inside a ``for``/``while`` body of its scope (a value per turn)?"""
    inside = d.scope.syntax.get("loop_statements")
    if inside is None:
        inside = d.scope.syntax["loop_statements"] = frozenset(_loop_statements(d.scope.node))
    return id(d.stmt) in inside


def _loop_statements(owner):
    body = _top(owner)
    found: list[int] = []

    class _Loops(cst.CSTVisitor):
        depth = 0

        def visit_FunctionDef(self, node) -> bool:
            return False

        def visit_ClassDef(self, node) -> bool:
            return False

        def visit_Lambda(self, node) -> bool:
            return False

        def visit_For(self, node) -> None:
            self.depth += 1

        def leave_For(self, node) -> None:
            self.depth -= 1

        def visit_While(self, node) -> None:
            self.depth += 1

        def leave_While(self, node) -> None:
            self.depth -= 1

        def on_visit(self, node) -> bool:
            if self.depth and isinstance(node, (cst.BaseStatement, cst.BaseSmallStatement)):
                found.append(id(node))
            return super().on_visit(node)

    v = _Loops()
    for stmt in body:
        walk(stmt, v)
    return found


# -- a tensor whose shape is unpacked ------------------------------------------------------

def shaped(ev, name: str, d):
    """The value of ``name`` (unknown, made by ``d``) as a tensor of the rank its shape is
    unpacked into before any other use (``b, s, _ = x.shape``/``x.size()``), a symbol per
    dim; None when the code does no such thing."""
    if d.kind not in ("param", "expr"):
        return None
    key = (name, id(d.origin or d))
    ranks = d.scope.syntax.setdefault("unpacked", {})
    rank = ranks.get(key)
    if rank is None:
        rank = ranks[key] = _unpacked_rank(d, name)
    if not rank:
        return None
    b = ev.bindings.get(id(d.scope))
    return Tensor(tuple(symbol(ev, ("shape", id(d.origin or d), binding_key(ev, b), i), f"{name}.shape[{i}]")
                        for i in range(rank)))


def _unpacked_rank(d, name: str) -> int:
    """The number of names the first top-level statement that uses ``name`` after ``d``
    unpacks its shape into, with ``d`` the one definition reaching it; 0 otherwise."""
    scope = d.scope
    body = _top(scope.node)
    unpacks: dict[str, list] | None = scope.syntax.get("unpacks")
    if unpacks is None:  # found by a shallow look at each top-level statement, once per scope
        unpacks = {}
        scope.syntax["unpacks"] = unpacks
        for i, stmt in enumerate(body):
            found = _shape_unpack(stmt)
            if found is not None:
                unpacks.setdefault(found[0], []).append((i, found[1]))
    if name not in unpacks:
        return 0
    start = 0
    if d.kind == "expr":
        start = next((i + 1 for i, s in enumerate(body) if s is d.stmt or _holds(s, d.stmt)), -1)
        if start < 0:
            return 0  # made in a nested block: not every path past it has the same value
    at, rank = next(((i, n) for i, n in unpacks[name] if i >= start), (None, 0))
    if at is None or at - start > _MAX_SCAN:
        return 0
    mentions = scope.syntax.setdefault("mentions", {})
    for i in range(start, at):  # no other use of the name before the unpack
        if i not in mentions:
            mentions[i] = _names_in(body[i])
        if name in mentions[i]:
            return 0
    defs: tuple = scope.defs_at(name, body[at]) or ()
    return rank if len(defs) == 1 and (defs[0].origin or defs[0]) is (d.origin or d) else 0


def _top(owner) -> list:
    if isinstance(owner, (cst.FunctionDef, cst.ClassDef)) and isinstance(owner.body, cst.IndentedBlock):
        return list(owner.body.body)
    return list(owner.body) if isinstance(owner, cst.Module) else []


def _holds(line, small) -> bool:
    return isinstance(line, cst.SimpleStatementLine) and any(x is small for x in line.body)


def _shape_unpack(stmt) -> tuple[str, int] | None:
    """``a, b, c = x.shape`` / ``x.size()``: (``x``, the number of names), else None."""
    if not isinstance(stmt, cst.SimpleStatementLine) or len(stmt.body) != 1:
        return None
    small = stmt.body[0]
    if not isinstance(small, cst.Assign) or len(small.targets) != 1:
        return None
    target, value = small.targets[0].target, small.value
    if not isinstance(target, (cst.Tuple, cst.List)) or not target.elements \
            or not all(isinstance(el, cst.Element) and isinstance(el.value, cst.Name) for el in target.elements):
        return None
    if isinstance(value, cst.Call) and not value.args:
        value = value.func
        attr = "size"
    else:
        attr = "shape"
    if isinstance(value, cst.Attribute) and value.attr.value == attr and isinstance(value.value, cst.Name):
        return value.value.value, len(target.elements)
    return None


def _names_in(node) -> frozenset:
    """The variable names a statement mentions (``obj.attr``'s ``attr`` is none)."""
    found: set = set()

    class _Find(cst.CSTVisitor):
        def visit_Attribute(self, n: cst.Attribute) -> bool:
            walk(n.value, self)
            return False

        def visit_Name(self, n: cst.Name) -> None:
            found.add(n.value)

    walk(node, _Find())
    return frozenset(found)
