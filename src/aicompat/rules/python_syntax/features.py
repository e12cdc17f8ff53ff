"""Which Python syntax a LibCST node uses, for AIC401 python-syntax.

``DETECTORS`` maps a node type to a function returning the features (keys of
version_matrix/syntax.toml) that node uses, each with the node to report.
Each function looks at one node and, where the grammar rule depends on the
parent (an assignment expression inside an index), at its direct children,
so the walker's single traversal is enough.
"""

from __future__ import annotations

import io
import re
import tokenize
from dataclasses import dataclass
from typing import Callable

import libcst as cst

Found = list[tuple[str, cst.CSTNode]]


def _parenthesized(node: cst.CSTNode) -> bool:
    return bool(getattr(node, "lpar", ()))


def _named_expr(node: cst.NamedExpr, code) -> Found:
    return [("walrus", node)]


def _subscript(node: cst.Subscript, code) -> Found:
    out: Found = []
    for el in node.slice:
        s = el.slice
        if isinstance(s, cst.Index):
            if s.star is not None:
                out.append(("star_index", s))
            elif isinstance(s.value, cst.NamedExpr) and not _parenthesized(s.value):
                out.append(("walrus_in_index", s.value))
    return out


def _set(node: cst.Set | cst.SetComp, code) -> Found:
    elements = node.elements if isinstance(node, cst.Set) else [node.elt]
    out: Found = []
    for el in elements:
        value = el.value if isinstance(el, cst.Element) else el
        if isinstance(value, cst.NamedExpr) and not _parenthesized(value):
            out.append(("walrus_in_set", value))
    return out


def _parameters(node: cst.Parameters, code) -> Found:
    out: Found = []
    if isinstance(node.posonly_ind, cst.ParamSlash):
        out.append(("positional_only", node.posonly_ind))  # report the "/" itself
    elif node.posonly_params:
        out.append(("positional_only", node))
    star = node.star_arg
    if isinstance(star, cst.Param) and star.annotation is not None and isinstance(
            star.annotation.annotation, cst.StarredElement):
        out.append(("star_annotation", star.annotation))
    return out


def _unparenthesized_starred_tuple(value) -> bool:
    return (isinstance(value, cst.Tuple) and not value.lpar
            and any(isinstance(e, cst.StarredElement) for e in value.elements))


def _return(node: cst.Return | cst.Yield, code) -> Found:
    return [("unparenthesized_star_return", node)] if _unparenthesized_starred_tuple(node.value) else []


def _for(node: cst.For, code) -> Found:
    return [("unparenthesized_star_for", node.iter)] if _unparenthesized_starred_tuple(node.iter) else []


def _dotted(expr) -> bool:
    while isinstance(expr, cst.Attribute) and not expr.lpar:
        expr = expr.value
    return isinstance(expr, cst.Name) and not expr.lpar


def _decorator(node: cst.Decorator, code) -> Found:
    d = node.decorator
    # Before 3.9 the grammar was: "@" dotted_name [ "(" [arglist] ")" ].
    ok = _dotted(d) or (isinstance(d, cst.Call) and not d.lpar and _dotted(d.func))
    return [] if ok else [("relaxed_decorator", d)]


def _with(node: cst.With, code) -> Found:
    # ``with (a, b):`` has always parsed (as a tuple); only ``as`` inside the brackets is new.
    if isinstance(node.lpar, cst.LeftParen) and any(item.asname is not None for item in node.items):
        return [("parenthesized_with", node)]
    return []


def _match(node, code) -> Found:
    return [("match", node)]


def _try_star(node: cst.TryStar, code) -> Found:
    # Report the first ``except*``, not the ``try:`` lines above it.
    return [("except_star", node.handlers[0] if node.handlers else node)]


def _type_params(node: cst.FunctionDef | cst.ClassDef, code) -> Found:
    return [("type_parameters", node.type_parameters)] if node.type_parameters is not None else []


def _type_alias(node, code) -> Found:
    return [("type_statement", node)]


def _type_param(node: cst.TypeParam, code) -> Found:
    return [("type_parameter_default", node)] if node.default is not None else []


def _template(node, code) -> Found:
    return [("template_string", node)]


def _except(node: cst.ExceptHandler | cst.ExceptStarHandler, code) -> Found:
    t = node.type
    if isinstance(t, cst.Tuple) and not t.lpar:
        return [("unparenthesized_except", t)]
    return []


def _has_comment(text: str) -> bool:
    """A ``#`` that starts a comment, not one inside a nested string literal
    (``f"{'#':<3}"`` is fine before 3.12: CPython 3.11's f-string scanner skips quoted text)."""
    try:
        return any(t.type == tokenize.COMMENT for t in tokenize.generate_tokens(io.StringIO(text).readline))
    except (tokenize.TokenError, SyntaxError, IndentationError):
        return True


def _fstring(node: cst.FormattedString, code: Callable[[cst.CSTNode], str]) -> Found:
    """PEP 701 (3.12): before it, an f-string was first read as a plain string
    literal, so a replacement field could not hold the string's own quote, a
    backslash, a comment, or (in a single-quoted string) a line break."""
    quote = node.end
    out: Found = []
    seen: set[str] = set()  # one finding per problem and f-string, at its first field

    def add(feature: str, part) -> None:
        if feature not in seen:
            seen.add(feature)
            out.append((feature, part))

    stack = list(reversed(node.parts))
    while stack:
        part = stack.pop()
        if not isinstance(part, cst.FormattedStringExpression):
            continue
        if part.equal is not None and not isinstance(part.equal, cst.MaybeSentinel):
            add("fstring_equals", part)
        text = (code(part.whitespace_before_expression) + code(part.expression)
                + code(part.whitespace_after_expression))
        if quote in text:  # the closing quote (or triple quote) inside the field
            add("fstring_quotes", part)
        elif "\\" in text:
            add("fstring_backslash", part)
        elif "#" in text and _has_comment(text):
            add("fstring_comment", part)
        elif len(quote) == 1 and "\n" in text:
            add("fstring_newline", part)
        if part.format_spec:
            stack.extend(reversed(part.format_spec))
    return out


# node type -> (detector, the features it can report)
DETECTORS: dict[type, tuple[Callable, tuple[str, ...]]] = {
    # The parent (an index, a set) decides whether an assignment expression needs 3.9/3.10 rather than 3.8.
    cst.NamedExpr: (_named_expr, ("walrus", "walrus_in_index", "walrus_in_set")),
    cst.Subscript: (_subscript, ("star_index", "walrus_in_index")),
    cst.Set: (_set, ("walrus_in_set",)),
    cst.SetComp: (_set, ("walrus_in_set",)),
    cst.Parameters: (_parameters, ("positional_only", "star_annotation")),
    cst.Return: (_return, ("unparenthesized_star_return",)),
    cst.Yield: (_return, ("unparenthesized_star_return",)),
    cst.For: (_for, ("unparenthesized_star_for",)),
    cst.Decorator: (_decorator, ("relaxed_decorator",)),
    cst.With: (_with, ("parenthesized_with",)),
    cst.Match: (_match, ("match",)),
    cst.TryStar: (_try_star, ("except_star",)),
    cst.FormattedString: (_fstring, ("fstring_equals", "fstring_quotes", "fstring_backslash", "fstring_comment",
                                     "fstring_newline")),
    cst.ExceptHandler: (_except, ("unparenthesized_except",)),
    cst.ExceptStarHandler: (_except, ("unparenthesized_except",)),
}
# Node types older LibCST releases lack (such files fail to parse there: see the rule's parse-failure path).
for _name, _entry in (("FunctionDef", (_type_params, ("type_parameters",))),
                      ("ClassDef", (_type_params, ("type_parameters",))),
                      ("TypeAlias", (_type_alias, ("type_statement",))),
                      ("TypeParam", (_type_param, ("type_parameter_default",))),
                      ("TemplatedString", (_template, ("template_string",)))):
    if hasattr(cst, _name) and (_name not in ("FunctionDef", "ClassDef") or hasattr(cst, "TypeParameters")):
        DETECTORS[getattr(cst, _name)] = _entry


@dataclass(frozen=True)
class Sig:
    """A byte signature of a feature, for the prefilter. ``pattern`` begins with
    a literal so the regex engine skips ahead with a fast scan (a leading
    ``\b``, ``^`` or character class makes it test every position, ten times
    slower); ``verify(data, start)`` checks the context around a match that a
    leading-literal pattern cannot (``type`` at the start of a statement).

    Every scan is linear in the file (the prefilter reads files nobody has
    vetted): patterns have no two quantifiers that can take the same text, and
    where a pattern's tail may run to the end of the line, ``verify`` is asked
    first, at each occurrence of the literal head, so the tail runs at most at
    the few places that pass it (statement starts), not at every occurrence."""

    pattern: bytes
    verify: Callable[[bytes, int], bool] | None = None
    # A verify that may walk far (up to 4,000 bytes back) answers "unsure" (True:
    # parse the file) after this many refusals, so its cost stays bounded.
    max_refusals: int | None = None

    def search(self, data: bytes) -> bool:
        rx = _compiled(self.pattern)
        if self.verify is None:
            return rx.search(data) is not None
        if self.max_refusals is not None:
            for n, m in enumerate(rx.finditer(data)):
                if n >= self.max_refusals or self.verify(data, m.start()):
                    return True
            return False
        head = _head(self.pattern)
        if head:
            find = data.find
            at = find(head)
            while at >= 0:
                if self.verify(data, at) and rx.match(data, at):
                    return True
                at = find(head, at + 1)
            return False
        return any(self.verify(data, m.start()) for m in rx.finditer(data))


@dataclass(frozen=True)
class Scan:
    """A signature checked by a function ``(data) -> bool`` written to be linear
    where no regex can say it in one linear pass."""

    check: Callable[[bytes], bool]

    def search(self, data: bytes) -> bool:
        return self.check(data)


_RX: dict[bytes, re.Pattern] = {}
_HEADS: dict[bytes, bytes] = {}


def _compiled(pattern: bytes) -> re.Pattern:
    rx = _RX.get(pattern)
    if rx is None:
        rx = _RX[pattern] = re.compile(pattern)
    return rx


def _head(pattern: bytes) -> bytes:
    """The literal bytes a pattern starts with (``except`` of ``except[ \t]*...``)."""
    head = _HEADS.get(pattern)
    if head is None:
        m = re.match(rb"[A-Za-z0-9_@:,=/ ]*", pattern)
        head = _HEADS[pattern] = m.group() if m else b""
        if head and len(pattern) > len(head) and pattern[len(head):len(head) + 1] in b"*+?{":
            head = head[:-1]  # "ab*": the quantifier takes the last byte
    return head


def _before(data: bytes, pos: int) -> bytes:
    """The text between the start of the line and ``pos``."""
    return data[data.rfind(b"\n", 0, pos) + 1:pos]


def _blank_back(data: bytes, pos: int) -> int:
    """The index of the last byte before ``pos`` that is not a space or tab (-1: none)."""
    i = pos - 1
    while i >= 0 and data[i] in (0x20, 0x09):
        i -= 1
    return i


def _statement_start(data: bytes, pos: int) -> bool:
    # Walks back over blanks only (not to the line's start: a long line with the
    # word many times would cost its length each time).
    i = _blank_back(data, pos)
    if i < 0 or data[i] in (0x0A, 0x3B):  # line start, ";"
        return True
    if i >= 4 and data[i - 4:i + 1] == b"async":
        j = _blank_back(data, i - 4)
        return j < 0 or data[j] == 0x0A
    return False


def _line_start(data: bytes, pos: int) -> bool:
    i = _blank_back(data, pos)
    return i < 0 or data[i] == 0x0A


def _word_byte(b: int) -> bool:
    return b >= 0x80 or b == 0x5F or 0x30 <= b <= 0x39 or 0x41 <= b <= 0x5A or 0x61 <= b <= 0x7A


def _string_prefix(data: bytes, pos: int) -> bool:
    """``t"`` / ``rt"`` / ``tr"`` starts a literal: no identifier character before the prefix."""
    i = pos - 1
    if i >= 0 and data[i] in b"rR":
        i -= 1
    return i < 0 or not _word_byte(data[i])


def _in_subscript(data: bytes, pos: int) -> bool:
    """Is the ``*`` at ``pos`` (after ``[`` or ``,``) inside the brackets of a subscript?
    Walks back to the innermost open bracket; gives True when unsure (long or odd text)."""
    depth, i, stop = 0, pos - 1, max(pos - 4000, -1)
    while i > stop:
        c = data[i]
        if c in b")]}":
            depth += 1
        elif c in b"([{":
            if depth == 0:
                if c != 0x5B:  # "("
                    return False
                j = i - 1
                while j >= 0 and data[j] in b" \t":
                    j -= 1
                return j >= 0 and (_word_byte(data[j]) or data[j] in b")]")
            depth -= 1
        i -= 1
    return True


def _fstring_signatures() -> list:
    """Signatures that every f-string using PEP 701 syntax matches (a superset:
    the prefilter must never skip a file the rule would flag). After the opening
    quote: literal text and complete fields, then a field holding the quote, a
    backslash, a ``#`` or a line break before it closes; one level of nested
    braces (a dict or a format spec) inside the field is allowed for.

    Each piece starts with a byte no other piece it competes with starts with
    (a field never starts with ``{{``, the escape), so a failing match backs
    off in linear time: ``f'`` and 25 ``{{}}`` once took minutes."""
    out: list = []
    for q in (b"'", b'"'):
        nq = rb"[^" + q + rb"\\\n{}#]"  # a character a pre-3.12 field could hold
        nested = rb"\{(?:" + nq + rb"|[#])*\}"
        field = rb"\{(?!\{)(?:" + nq + rb"|" + nested + rb")*\}"
        literal = rb"(?:[^" + q + rb"\\\n{]|\\.|\{\{|" + field + rb")*"
        bad = rb"\{(?:" + nq + rb"|" + nested + rb")*(?:\{(?:" + nq + rb")*)?[" + q + rb"\\#\n]"
        for f in (b"f", b"F"):
            out.append(Sig(f + rb"[rR]?" + q + literal + bad))
        # Triple-quoted: only a backslash or "#" in a field is new (quotes and line breaks were fine).
        out.append(Scan(_triple_field_scan(q * 3)))
    return out


def _triple_field_scan(q3: bytes) -> Callable[[bytes], bool]:
    """Is there a triple-quoted f-string with a ``\\`` or ``#`` after a ``{`` and
    before the next ``}``? Each string body is read once: the scan resumes
    after its closing quotes (an opening inside an earlier body sees a suffix of
    that body, which the earlier one already read)."""
    start = re.compile(rb"[fF][rR]?" + re.escape(q3))
    field = re.compile(rb"\{[^{}\\#]*[\\#]")  # the last "{" before the "\\"/"#": no "{" or "}" between

    def check(data: bytes) -> bool:
        pos = 0
        while True:
            m = start.search(data, pos)
            if m is None:
                return False
            end = data.find(q3, m.end())
            if end < 0:
                end = len(data)
            if field.search(data, m.end(), end):
                return True
            pos = end + len(q3)

    return check


def _in_then_star(data: bytes) -> bool:
    """``in`` (a word) and, later on the same line, a ``*`` (``for x in *a, b:``).
    After an ``in`` whose line has no ``*``, the scan goes on at the next line."""
    rx = _compiled(rb"in\b")
    pos = 0
    while True:
        m = rx.search(data, pos)
        if m is None:
            return False
        eol = data.find(b"\n", m.end())
        if eol < 0:
            eol = len(data)
        if data.find(b"*", m.end(), eol) >= 0:
            return True
        pos = eol + 1


_NAME = rb"[\w\x80-\xff]+"
_FSTRING = _fstring_signatures()
_DEF_BRACKET: list[Sig | Scan] = [Sig(rb"def[ \t]+" + _NAME + rb"[ \t]*\[", _statement_start),
                Sig(rb"class[ \t]+" + _NAME + rb"[ \t]*\[", _statement_start)]

# feature -> signatures of which a file using it matches at least one (the prefilter).
SIGNATURES: dict[str, list[Sig | Scan]] = {
    "walrus": [Sig(rb":=")],
    "walrus_in_set": [Sig(rb":=")],
    "walrus_in_index": [Sig(rb":=")],
    "positional_only": [Sig(rb"/\s*(?:[,):#]|\\)")],
    "fstring_equals": [Sig(rb"=\s*[}!:]")],
    "unparenthesized_star_return": [Sig(rb"return"), Sig(rb"yield")],
    # "[ \t\w.]+#" and not "[ \t\w.]+[ \t]*#": the same text, without two quantifiers taking the same blanks.
    "relaxed_decorator": [Sig(rb"@(?m:(?![ \t\w.]+(?:\(|\r?$|#)))", _line_start)],
    "parenthesized_with": [Sig(rb"with\s*\(")],
    "unparenthesized_star_for": [Scan(_in_then_star)],
    "match": [Sig(rb"match", _line_start)],
    "except_star": [Sig(rb"except\s*\*")],
    # ``x[*a]`` / ``x[i, *a]``: a star right after the bracket, or after a comma inside it.
    "star_index": [Sig(rb"\[\s*\*", lambda d, p: _in_subscript(d, p + 1), 256),
                   Sig(rb",[ \t\r\n\\]*\*", _in_subscript, 256)],
    "star_annotation": [Sig(rb"\*\s*" + _NAME + rb"\s*:\s*\*")],
    # Statements start a line (or follow ";"); prose in docstrings rarely has this shape.
    "type_parameters": _DEF_BRACKET,
    "type_statement": [Sig(rb"type[ \t]+" + _NAME + rb"[ \t]*[=\[]", _statement_start)],
    "type_parameter_default": _DEF_BRACKET + [Sig(rb"type[ \t]+" + _NAME + rb"[ \t]*\[", _statement_start)],
    "fstring_quotes": _FSTRING,
    "fstring_backslash": _FSTRING,
    "fstring_comment": _FSTRING,
    "fstring_newline": _FSTRING,
    "template_string": [Sig(t + rb"[rR]?['\"]", _string_prefix) for t in (b"t", b"T")],
    "unparenthesized_except": [Sig(rb"except[ \t]*(?:\*[ \t]*)?[^\s(:*][^:\n]*,", _line_start)],
}
