"""The one self-contained unit exact mode hands nvcc: nothing in it makes the
preprocessor open a file outside the linted tree.

nvcc's host preprocessor opens whatever the source names: ``#include "/etc/passwd"``,
``#include "../../.git/config"``, ``__has_include(...)`` (an existence test),
``#pragma GCC dependency "file"``. So exact mode never gives nvcc the tree's
include folders. It inlines each ``#include`` that names a regular file inside the
tree (confine.within: real path inside, not in .git, not a link out), with ``#line``
directives so errors keep the source's line numbers, and keeps an include that
does not resolve in the tree only when its name is a plain relative path (no
``/`` at the start, no ``..`` or ``.git`` part), which nvcc can then find only in
its own temporary folder, the toolkit or the system's headers. Everything else
refuses the unit, with a reason from a fixed vocabulary: a computed ``#include
MACRO``, an absolute or escaping name, ``__has_include`` of such a name, a
``dependency`` pragma, a trigraph that spells ``#`` or a line splice, a header that
ends inside a comment or string, an ``#if`` whose macros could paste tokens into
``__has_include``.

The text is first made unambiguous (``\\r\\n`` and ``\\r`` become ``\\n``, a
backslash with spaces before the line break a plain splice), so that what this
module reads is what the preprocessor reads. Directives are found by a small
lexer (comments, string and raw string literals, splices, the ``%:`` digraph), and
checked again in a second, naive view of every physical line that ignores strings
and comments: a line that looks like an include in either view must be safe.
A refused unit is not compiled: its static verdict stands.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from pathlib import Path

from ...fs.confine import within
from ..cpp import includes

MAX_BYTES = 4_000_000  # the whole unit
MAX_DEPTH = 64
MAX_FILES = 400

_INCLUDES = {"include", "include_next", "import", "embed"}
_HAS = ("__has_include", "__has_include_next", "__has_embed", "__has_include__", "__has_include_next__")
# Calls that may stand in an #if without expanding macros of the unit into new tokens.
_SAFE_CALLS = frozenset({"defined", "__has_attribute", "__has_cpp_attribute", "__has_builtin", "__has_feature",
                         "__has_extension", "__has_warning", "__has_declspec_attribute", *_HAS})
_NAME = re.compile(r"[A-Za-z0-9_+][A-Za-z0-9_.+/-]*")
_VCS = {".git", ".hg", ".svn"}
_IDENT = re.compile(r"[A-Za-z_]\w*")
_RAW_PREFIX = {"R", "uR", "UR", "LR", "u8R"}
_SPLICE_WS = re.compile(r"\\[ \t\f\v]+\n")
_TRIGRAPH = re.compile(r"\?\?[=/]")


class Refused(Exception):
    """The unit cannot be handed to nvcc; the message is from a fixed vocabulary."""


@dataclass(frozen=True)
class Sealed:
    text: str | None  # the unit, or None when refused
    refused: str = ""  # why, when refused
    headers: tuple[str, ...] = ()  # the in-tree files inlined (their text is in ``text``)


def safe_name(name: str) -> bool:
    """A header name nvcc may look up itself: relative, no ``..`` or VCS part, plain characters."""
    if not name or len(name) > 255 or not _NAME.fullmatch(name):
        return False
    parts = name.split("/")
    return not any(p == ".." or p in _VCS for p in parts)


def normalize(text: str) -> str:
    """One spelling of line breaks and splices, the one this module and the preprocessor agree on."""
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    return _SPLICE_WS.sub("\\\\\n", text)


# -- the lexer ---------------------------------------------------------------------------

@dataclass
class Directive:
    start: int  # offset of the line the directive begins on
    end: int  # offset just past its last character (before the newline that ends it)
    line: int  # its first physical line, 1-based
    last_line: int  # its last physical line
    name: str
    rest: str  # the text after the name, splices joined and comments replaced by a space


_BORING = re.compile(r"[^\n\\/#%\"']+")
_WORD_BEFORE = re.compile(r"[\w.']*\Z")


class _Lexer:
    """Finds the directives of a (normalized) text: the only part of the preprocessor's
    lexing that matters here. Runs of plain text are skipped by one regular expression."""

    def __init__(self, text: str) -> None:
        self.s = text
        self.n = len(text)
        self.directives: list[Directive] = []
        self.open_at_end = False  # ended inside a comment, a literal or a splice
        self._at, self._line = 0, 1  # a cursor for line numbers (directives come in order)

    def line_of(self, offset: int) -> int:
        self._line += self.s.count("\n", self._at, offset)
        self._at = offset
        return self._line

    def run(self) -> "_Lexer":
        s, n = self.s, self.n
        i, bol = 0, True
        while i < n:
            m = _BORING.match(s, i)
            if m:
                if bol and m.group(0).strip(" \t\f\v"):
                    bol = False
                i = m.end()
                continue
            c = s[i]
            if c == "\n":
                i, bol = i + 1, True
            elif c == "\\":
                if s.startswith("\\\n", i):
                    i += 2
                else:
                    i, bol = i + 1, False
            elif s.startswith("/*", i):
                j = s.find("*/", i + 2)
                if j < 0:
                    self.open_at_end = True
                    return self
                i = j + 2
            elif s.startswith("//", i):
                i = self._line_comment(i)
            elif bol and (c == "#" or s.startswith("%:", i)):
                i = self._directive(i)
            elif c == '"':
                before = _WORD_BEFORE.search(s, max(0, i - 8), i).group(0)
                i = self._raw(i) if before in _RAW_PREFIX else self._quoted(i, c)
                bol = False
            elif c == "'":
                before = _WORD_BEFORE.search(s, max(0, i - 64), i).group(0)
                if before[:1].isdigit():
                    i += 1  # a digit separator (1'000), not a character literal
                else:
                    i = self._quoted(i, c)
                bol = False
            else:
                i, bol = i + 1, False
        if s.endswith("\\"):
            self.open_at_end = True
        return self

    def _line_comment(self, i: int) -> int:
        s = self.s
        while True:
            j = s.find("\n", i)
            if j < 0:
                if s.endswith("\\"):
                    self.open_at_end = True
                return self.n
            if s[j - 1] == "\\":  # a spliced // comment goes on
                i = j + 1
                continue
            return j

    def _quoted(self, i: int, q: str) -> int:
        s, n = self.s, self.n
        j = i + 1
        while j < n:
            ch = s[j]
            if ch == "\\":
                j += 2
                continue
            if ch == q:
                return j + 1
            if ch == "\n":
                return j  # unterminated: the literal ends with the line, as in GCC
            j += 1
        self.open_at_end = True
        return n

    def _raw(self, i: int) -> int:
        """``i`` at the opening quote of a raw string literal."""
        s = self.s
        m = _RAW_OPEN.match(s, i)
        if not m:
            return self._quoted(i, '"')
        close = ")" + m.group(1) + '"'
        j = s.find(close, m.end())
        if j < 0:
            self.open_at_end = True
            return self.n
        return j + len(close)

    def _directive(self, i: int) -> int:
        """Read one directive from its ``#``; returns the offset of the newline that ends it."""
        s, n = self.s, self.n
        start = s.rfind("\n", 0, i) + 1
        line = self.line_of(start)
        j = i + (2 if s[i] == "%" else 1)
        out: list[str] = []
        while j < n:
            ch = s[j]
            if ch == "\n":
                break
            if s.startswith("\\\n", j):
                j += 2
                continue
            if s.startswith("/*", j):
                k = s.find("*/", j + 2)
                if k < 0:
                    self.open_at_end = True
                    j = n
                    break
                out.append(" ")
                j = k + 2
                continue
            if s.startswith("//", j):
                j = self._line_comment(j)
                break
            if ch == '"' or ch == "'":
                before = _WORD_BEFORE.search(s, max(0, j - 8), j).group(0)
                if ch == '"' and before in _RAW_PREFIX:
                    raise Refused("a raw string literal in a preprocessor directive")
                k = self._quoted(j, ch)
                out.append(s[j:k])
                j = k
                continue
            out.append(ch)
            j += 1
        body = "".join(out).strip()
        m = _IDENT.match(body)
        name = m.group(0) if m else ""
        rest = body[m.end():] if m else body
        self.directives.append(Directive(start, j, line, self.line_of(j), name, rest.strip()))
        return j


_RAW_OPEN = re.compile(r'"([^()\\ \t\n]{0,16})\(')


# -- include operands ----------------------------------------------------------------------

def _operand(rest: str, check: bool = True) -> tuple[str, bool]:
    """(name, quoted) of a literal ``"name"`` or ``<name>`` operand; Refused otherwise, or
    (``check``) when nvcc would have to look the name up outside the tree."""
    m = re.match(r'"([^"\n]*)"|<([^>\n]*)>', rest)
    if not m:
        raise Refused("a computed #include (its operand is a macro, not a literal name)")
    name = m.group(1) if m.group(1) is not None else m.group(2)
    if check and not safe_name(name.strip()):
        raise Refused("an #include of a path outside the tree (absolute, with '..' or a VCS folder)")
    return name.strip(), m.group(1) is not None


def _check_has(text: str) -> None:
    """Every ``__has_include``-like test names a plain relative header."""
    for word in _HAS:
        for m in re.finditer(rf"(?<![\w]){re.escape(word)}(?!\w)", text):
            tail = re.sub(r"/\*.*?\*/", " ", text[m.end():m.end() + 600], flags=re.S).replace("\\\n", "")
            if not tail.lstrip(" \t\f\v\n").startswith("("):
                continue  # named, not called (``#ifdef __has_include``): opens nothing
            a = re.match(r'\s*\(\s*(?:"([^"\n]*)"|<([^>\n]*)>)\s*\)', tail)
            name = (a.group(1) if a.group(1) is not None else a.group(2)) if a else None
            if name is None or not safe_name(name.strip()):
                raise Refused("a __has_include test of a path outside the tree, or of a computed name")


def _check_pragmas(directives: list[Directive], text: str) -> None:
    for d in directives:
        if d.name == "pragma" and re.search(r"\b(?:dependency|pch_preprocess)\b", d.rest):
            raise Refused("a '#pragma GCC dependency' (it opens the file it names)")
    if "_Pragma" in text and re.search(r"dependency|pch_preprocess", text):
        raise Refused("a '#pragma GCC dependency' (it opens the file it names)")


# -- macros that could build __has_include in an #if -------------------------------------

def _calls(body: str) -> list[str]:
    return [m.group(1) for m in re.finditer(r"\b([A-Za-z_]\w*)\s*\(", body)]


def _check_if_pasting(directives: list[Directive]) -> None:
    """An ``#if`` that reaches a token-pasting macro could build ``__has_include`` of any path
    out of pieces (``CAT(__has_, include)("/x")``) where no literal check sees it: refused.
    A macro of the unit is safe when its body pastes nothing and calls only safe macros; a
    function-like macro from outside the unit (a toolkit header's) is not known, so not safe."""
    defs: dict[str, list[tuple[bool, str]]] = {}
    for d in directives:
        if d.name == "define":
            m = re.match(r"([A-Za-z_]\w*)(\([^)]*\))?\s*(.*)", d.rest, re.S)
            if m:
                defs.setdefault(m.group(1), []).append((m.group(2) is not None, m.group(3)))
    tainted: set[str] = set()
    changed = True
    while changed:
        changed = False
        for name, forms in defs.items():
            if name in tainted:
                continue
            if any(_unsafe(body, defs, tainted) for _fn, body in forms):
                tainted.add(name)
                changed = True
    for d in directives:
        if d.name in ("if", "elif") and _unsafe(d.rest, defs, tainted):
            raise Refused("an #if whose macros paste tokens or call macros from outside the unit "
                          "(it could build a __has_include of any path)")
    for name in tainted:
        if name.startswith("__") or re.match(r"_[A-Z]", name):
            raise Refused("a token-pasting definition of a reserved macro name (a toolkit header's "
                          "#if could use it)")


def _unsafe(body: str, defs, tainted) -> bool:
    if "##" in body or "%:%:" in body:
        return True
    for call in _calls(body):
        if call in _SAFE_CALLS:
            continue
        forms = defs.get(call)
        if not forms or call in tainted or not all(fn for fn, _b in forms):
            return True  # outside the unit, pasting, or an object-like macro followed by "("
    return any(w in tainted for w in _IDENT.findall(body))


# -- the second view -------------------------------------------------------------------------

_LOOKS = re.compile(r"^[ \t\f\v]*(?:/\*.*?\*/[ \t\f\v]*)*(?:#|%:)[ \t\f\v]*(?:/\*.*?\*/[ \t\f\v]*)*(\w+)(.*)$")


def _naive_check(text: str) -> None:
    """Every physical and every spliced line that could be an include or a pragma, whatever the
    lexer thought of strings and comments around it, is a safe one."""
    joined = text.replace("\\\n", "")
    for view in (text, joined):
        for line in view.split("\n"):
            m = _LOOKS.match(line)
            if not m:
                continue
            name, rest = m.group(1), m.group(2).strip()
            if name in _INCLUDES:
                _operand(re.sub(r"/\*.*?\*/", " ", rest).strip())
            elif name == "pragma" and re.search(r"dependency|pch_preprocess", rest):
                raise Refused("a '#pragma GCC dependency' (it opens the file it names)")


# -- sealing ---------------------------------------------------------------------------------

class _Sealer:
    def __init__(self, root: Path | None, include_dirs: tuple[Path, ...]) -> None:
        self.root = root
        self.include_dirs = include_dirs
        self.size = 0
        self.headers: list[str] = []
        self.once: set[str] = set()
        self.count = 0

    def resolve(self, name: str, quoted: bool, from_dir: Path | None) -> Path | None:
        if self.root is None:
            return None
        dirs = ([from_dir] if quoted and from_dir is not None else []) + list(self.include_dirs)
        for d in dirs:
            cand = d / name
            if within(cand, self.root) is not None and includes.regular_file(cand) is not None:
                return Path(within(cand, self.root))
        return None

    def seal(self, text: str, from_dir: Path | None, name: str, depth: int) -> str:
        if depth > MAX_DEPTH:
            raise Refused(f"#includes nest deeper than {MAX_DEPTH}")
        self.size += len(text)
        if self.size > MAX_BYTES:
            raise Refused(f"the unit with its in-tree headers is over {MAX_BYTES // 1_000_000} MB")
        text = normalize(text)
        if "\0" in text:
            raise Refused("a NUL character in the source")
        if _TRIGRAPH.search(text):
            raise Refused("a trigraph that spells '#' or a line splice ('??=' or '??/')")
        lex = _Lexer(text).run()
        if lex.open_at_end and depth > 0:
            raise Refused("an in-tree header ends inside a comment, a literal or a line splice")
        out: list[str] = []
        pos = 0
        for d in lex.directives:
            if d.name == "pragma" and d.rest.strip() == "once" and depth > 0:
                out.append(text[pos:d.start])
                out.append("")  # the inlined header is in the unit once (see below)
                pos = d.end
                continue
            if d.name not in _INCLUDES:
                continue
            if d.name == "embed":
                raise Refused("an #embed directive")
            inc, quoted = _operand(d.rest, check=False)
            path = self.resolve(inc, quoted, from_dir)
            body = includes.read(path) if path is not None else None
            if body is None:
                _operand(d.rest)  # left to nvcc: only a plain relative name, found in the toolkit or the system
                continue
            key = str(path)
            out.append(text[pos:d.start])
            pos = d.end
            if key in self.once:
                continue
            if re.search(r"^[ \t]*#[ \t]*pragma[ \t]+once\b", body, re.M):
                self.once.add(key)
            self.count += 1
            if self.count > MAX_FILES:
                raise Refused(f"the unit includes more than {MAX_FILES} in-tree files")
            self.headers.append(key)
            label = f"aicompat-header-{self.count}.h"
            inner = self.seal(body, path.parent, label, depth + 1)
            out.append(f'#line 1 "{label}"\n{inner}\n#line {d.last_line + 1} "{name}"')
        out.append(text[pos:])
        return "".join(out)


def seal(text: str, source_dir: Path | None, root: Path | None, include_dirs=(),
         defines: tuple[tuple[str, str | None], ...] = ()) -> Sealed:
    """The unit for ``text`` (a source in ``source_dir`` of the tree ``root``), with its in-tree
    includes inlined and ``defines`` ((name or name(params), value or None) of the build's
    -D flags that cannot go on nvcc's command line) at the top; or why it is refused."""
    dirs = tuple(Path(d) for d in include_dirs) or ((source_dir,) if source_dir is not None else ())
    sealer = _Sealer(Path(root).resolve() if root is not None else None, dirs)
    try:
        prelude = "".join(f"#define {n} {v if v is not None else 1}\n" for n, v in defines)
        body = sealer.seal(text, source_dir, "source.cu", 0)
        unit = f'{prelude}#line 1 "source.cu"\n{body}' if prelude else body
        lex = _Lexer(unit).run()
        _naive_check(unit)
        joined = unit.replace("\\\n", "")  # an identifier split by a line splice is one identifier
        for view in (unit, joined):
            _check_has(view)
        _check_pragmas(lex.directives, joined)
        _check_if_pasting(lex.directives)
    except Refused as why:
        return Sealed(None, str(why))
    except RecursionError:
        return Sealed(None, "the unit nests too deep to read")
    return Sealed(unit, "", tuple(sealer.headers))


def digest(text: str) -> str:
    return hashlib.blake2b(text.encode("utf-8", "surrogateescape"), digest_size=16).hexdigest()
