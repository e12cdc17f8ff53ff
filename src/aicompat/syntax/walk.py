"""A lean depth-first walk over a LibCST tree for read-only visitors.

LibCST's own ``visit`` rebuilds every node it passes (the machinery it shares
with transformers) and descends into every whitespace and punctuation node;
on real modules that costs about as much as the parse. This walk calls the
visitor's ``on_visit``/``on_leave`` (so ``visit_X``/``leave_X`` methods work
unchanged) in source order, and skips the nodes no rule reads: whitespace,
comments, brackets, commas and operators.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import libcst as cst

_SKIP_TYPES: tuple[type, ...] = (
    cst.BaseParenthesizableWhitespace, cst.TrailingWhitespace, cst.EmptyLine, cst.Newline, cst.Comment,
    cst.LeftParen, cst.RightParen, cst.LeftSquareBracket, cst.RightSquareBracket, cst.LeftCurlyBrace,
    cst.RightCurlyBrace, cst.Comma, cst.Semicolon, cst.Dot, cst.Colon, cst.AssignEqual, cst.ImportStar,
    cst.BaseBinaryOp, cst.BaseBooleanOp, cst.BaseCompOp, cst.BaseUnaryOp, cst.BaseAugOp,
)
_SKIP_FIELDS = {"lpar", "rpar", "leading_lines", "lines_after_decorators", "header", "footer", "comma", "semicolon",
                "newline", "trailing_whitespace", "indent"}
_FIELDS: dict[type, tuple[str, ...]] = {}


def _fields(tp: type) -> tuple[str, ...]:
    names = _FIELDS.get(tp)
    if names is None:
        names = tuple(
            f.name for f in dataclasses.fields(tp)
            if f.name not in _SKIP_FIELDS and not f.name.startswith("whitespace")
        )
        _FIELDS[tp] = names
    return names


_KIND: dict[type, int] = {}  # 1: a node to walk, 2: a sequence, 0: anything else
_NODE, _SEQ = 1, 2


def _kind(tp: type) -> int:
    k = _KIND.get(tp)
    if k is None:  # isinstance against LibCST's ABCs is slow: decide once per type
        if issubclass(tp, cst.CSTNode):
            k = 0 if issubclass(tp, _SKIP_TYPES) else _NODE
        elif issubclass(tp, (list, tuple)):
            k = _SEQ
        else:
            k = 0
        _KIND[tp] = k
    return k


# Nodes with no child to walk: a visitor that reads none of them lists them in ``ignored``.
LEAF_TYPES: tuple[type, ...] = (cst.Name, cst.Integer, cst.Float, cst.Imaginary, cst.SimpleString, cst.Ellipsis)
_LEAF_SET = frozenset(LEAF_TYPES)


def walk(node: cst.CSTNode, visitor: Any) -> None:
    """Visit ``node`` and its descendants with a ``CSTVisitor``-style visitor. Leaf node
    types in the visitor's ``ignored`` set (if it has one) are not visited at all: about
    half of a module's nodes are names and literals, which most visitors never read."""
    _walk(node, visitor, getattr(visitor, "ignored", frozenset()))


def _walk(node: cst.CSTNode, visitor: Any, ignored: frozenset) -> None:
    # An explicit stack, not recursion: legal code nests deeper than Python's
    # recursion limit (a 5,000-branch elif chain, ``x + x + ...`` with 5,000 terms).
    # A node on the stack is to be visited; a 1-tuple holds a node to leave.
    stack: list = [node]
    pop, push = stack.pop, stack.append
    on_visit, on_leave = visitor.on_visit, visitor.on_leave
    while stack:
        item = pop()
        if type(item) is tuple:
            on_leave(item[0])
            continue
        push((item,))
        if on_visit(item) is False:
            continue
        kids = []
        for name in _fields(type(item)):
            value = getattr(item, name)
            tp = type(value)
            k = _KIND.get(tp) or _kind(tp)
            if k == _NODE:
                if tp not in ignored:
                    kids.append(value)
            elif k == _SEQ:
                for sub in value:
                    tp = type(sub)
                    if (_KIND.get(tp) or _kind(tp)) == _NODE and tp not in ignored:
                        kids.append(sub)
        kids.reverse()
        stack.extend(kids)


class _FieldRecorder(cst.CSTVisitor):
    """Records the fields LibCST visits, in its order, without descending."""

    def __init__(self) -> None:
        self.names: list[str] = []

    def on_visit(self, node: cst.CSTNode) -> bool:
        return False

    def on_visit_attribute(self, node: cst.CSTNode, attribute: str) -> None:
        if attribute not in self.names:
            self.names.append(attribute)


_SOURCE_FIELDS: dict[type, tuple[str, ...]] = {}


def source_fields(node: cst.CSTNode) -> tuple[str, ...]:
    """The walked fields of ``node``'s type in source order (decorators before a def's
    body, an ``IfExp``'s body before its test), as LibCST's ``children`` gives them,
    learnt once per type from LibCST's own visit; ``children`` rebuilds every node."""
    tp = type(node)
    names = _SOURCE_FIELDS.get(tp)
    if names is None:
        rec = _FieldRecorder()
        node._visit_and_replace_children(rec)
        walked = _fields(tp)
        order = [n for n in rec.names if n in walked]
        names = tuple(order + [n for n in walked if n not in order])
        _SOURCE_FIELDS[tp] = names
    return names


def children(node: cst.CSTNode):
    """The child nodes ``walk`` would visit, in source order."""
    for name in source_fields(node):
        value = getattr(node, name)
        k = _KIND.get(type(value)) or _kind(type(value))
        if k == _NODE:
            yield value
        elif k == _SEQ:
            for item in value:
                if (_KIND.get(type(item)) or _kind(type(item))) == _NODE:
                    yield item


def inner_children(node: cst.CSTNode) -> list:
    """``children(node)`` less the names and literals (``LEAF_TYPES``), as a list: for
    searches that look for compound nodes (calls) and need not stop at every leaf."""
    out = []
    for name in _SOURCE_FIELDS.get(type(node)) or source_fields(node):
        value = getattr(node, name)
        tp = type(value)
        k = _KIND.get(tp) or _kind(tp)
        if k == _NODE:
            if tp not in _LEAF_SET:
                out.append(value)
        elif k == _SEQ:
            for item in value:
                tp = type(item)
                if (_KIND.get(tp) or _kind(tp)) == _NODE and tp not in _LEAF_SET:
                    out.append(item)
    return out
