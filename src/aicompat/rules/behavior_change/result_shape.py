"""AIC204's result-shape changes (version_matrix/behavior.toml [returns.*]): a call
whose result changed from a tuple to one tensor (``torch._scaled_mm`` in torch 2.5.0),
used the old way on a release after the change (unpacked, indexed) or the new way on a
release before it (a tensor attribute taken from the tuple)."""

from __future__ import annotations

import libcst as cst
from packaging.version import Version

from ...core.ruleapi import Finding, walk
from ...core.ruleapi import api_query as q

_TUPLE_METHODS = frozenset({"count", "index"})


def check(site, qualname: str, e: dict, fc) -> Finding | None:
    # the releases that reach the call (a version guard narrows them); unpinned: none, nothing said
    releases = sorted({w.torch for w in fc.ctx.worlds if w.torch is not None}) if e["package"] == "torch" \
        else q.releases_in_scope(fc, e["package"])
    if not releases:
        return None
    changed = Version(e["changed"])
    since = Version(e["since"]) if "since" in e else None
    after = [v for v in releases if v >= changed]
    before = [v for v in releases if v < changed and (since is None or v >= since)]
    use = _use(site.node, fc)
    if use is None:
        return None
    kind, detail = use
    pkg = e["package"]
    if kind == "old" and after:
        return Finding(site.node, (
            f"{qualname}: returns {e['new']} from {pkg} {changed} ({e['old']} before); {detail} fails or takes "
            f"rows of the result on {pkg} {q.span(after)}, which the pins allow; take the one result "
            f"(out = {qualname.rsplit('.', 1)[-1]}(...))"),
            extra_targets=tuple(f"{pkg}=={v}" for v in after))
    if kind == "new" and before:
        return Finding(site.node, (
            f"{qualname}: returns {e['old']} before {pkg} {changed}; {detail} is an attribute of the tuple on "
            f"{pkg} {q.span(before)}, which the pins allow; unpack it there (out, amax = ...) or require "
            f"{pkg} >= {changed}"),
            extra_targets=tuple(f"{pkg}=={v}" for v in before))
    return None


def _use(call: cst.Call, fc):
    """('old', what) when the statement unpacks or indexes the call's result; ('new', what)
    when it takes a tensor attribute of it, directly or through the one name it is assigned to."""
    stmt = fc.stmt_stack[-1] if fc.stmt_stack else None
    if stmt is None:
        return None
    found = _Parent(call)
    walk(stmt, found)
    if found.unpacked:
        return "old", f"unpacking it into {found.unpacked} names"
    if found.indexed is not None:
        return "old", f"indexing it ([{found.indexed}])"
    if found.attr:
        return "new", f".{found.attr}"
    if found.name:
        attr = _attribute_of(found.name, fc)
        if attr:
            return "new", f"{found.name}.{attr}"
    return None


class _Parent(cst.CSTVisitor):
    """How the statement uses ``call``'s result."""

    def __init__(self, call: cst.Call) -> None:
        super().__init__()
        self.call = call
        self.unpacked = 0
        self.indexed: str | None = None  # the integer index, as written
        self.attr: str | None = None
        self.name: str | None = None

    def visit_Assign(self, node: cst.Assign) -> None:
        if node.value is self.call and len(node.targets) == 1:
            t = node.targets[0].target
            if isinstance(t, (cst.Tuple, cst.List)):
                self.unpacked = len(t.elements)
            elif isinstance(t, cst.Name):
                self.name = t.value

    def visit_Subscript(self, node: cst.Subscript) -> None:
        if node.value is self.call and len(node.slice) == 1 and isinstance(node.slice[0].slice, cst.Index) \
                and isinstance(node.slice[0].slice.value, cst.Integer):
            self.indexed = node.slice[0].slice.value.value

    def visit_Attribute(self, node: cst.Attribute) -> None:
        if node.value is self.call and node.attr.value not in _TUPLE_METHODS:
            self.attr = node.attr.value


def _attribute_of(name: str, fc) -> str | None:
    """A tensor attribute taken of ``name`` in the enclosing function (or module), when
    ``name`` is assigned there only once; None otherwise."""
    scope = fc.def_stack[-1] if fc.def_stack else fc.module
    v = _NameUses(name)
    walk(scope, v)
    return v.attr if v.assigned == 1 and not v.indexed else None


class _NameUses(cst.CSTVisitor):
    attr: str | None

    def __init__(self, name: str) -> None:
        super().__init__()
        self.name, self.assigned, self.attr, self.indexed = name, 0, None, False

    def visit_Name(self, node: cst.Name) -> None:
        pass

    def visit_AssignTarget(self, node: cst.AssignTarget) -> None:
        for n in _names(node.target):
            if n == self.name:
                self.assigned += 1

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        if isinstance(node.target, cst.Name) and node.target.value == self.name:
            self.assigned += 1

    def visit_Subscript(self, node: cst.Subscript) -> None:
        if isinstance(node.value, cst.Name) and node.value.value == self.name:
            self.indexed = True

    def visit_Attribute(self, node: cst.Attribute) -> None:
        if isinstance(node.value, cst.Name) and node.value.value == self.name and self.attr is None \
                and node.attr.value not in _TUPLE_METHODS:
            self.attr = node.attr.value


def _names(target) -> list[str]:
    if isinstance(target, cst.Name):
        return [target.value]
    if isinstance(target, (cst.Tuple, cst.List)):
        return [n for el in target.elements for n in _names(el.value)]
    return []
