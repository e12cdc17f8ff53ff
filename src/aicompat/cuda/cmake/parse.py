"""CMake read as CMake: commands tokenized by the CMake language grammar
(https://cmake.org/cmake/help/latest/manual/cmake-language.7.html): ``#`` line
comments and ``#[[...]]`` bracket comments, quoted, bracket and unquoted
arguments, ``\\`` escapes, nested parentheses. Never a regex over raw text.

Only the syntax lives here; what the commands mean for a build is in
cmake_eval.py.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

MAX_COMMANDS = 20_000


@dataclass(frozen=True)
class Arg:
    text: str  # raw text without quotes/brackets, escapes not yet applied
    kind: str  # "unquoted" | "quoted" | "bracket"
    line: int
    col: int  # 1-based


@dataclass(frozen=True)
class Command:
    name: str  # lower-cased: CMake command names are case-insensitive
    args: tuple[Arg, ...]
    line: int
    col: int


_BRACKET_OPEN = re.compile(r"\[(=*)\[")
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


class _Reader:
    def __init__(self, text: str) -> None:
        self.s = text
        self.i = 0
        self.line = 1
        self.line_start = 0

    def pos(self) -> tuple[int, int]:
        return self.line, self.i - self.line_start + 1

    def advance_to(self, j: int) -> None:
        nl = self.s.count("\n", self.i, j)
        if nl:
            self.line += nl
            self.line_start = self.s.rfind("\n", self.i, j) + 1
        self.i = j

    def bracket_end(self, at: int) -> tuple[int, int] | None:
        """(content start, end after the closing bracket) of ``[==[...]==]`` at ``at``."""
        m = _BRACKET_OPEN.match(self.s, at)
        if not m:
            return None
        close = "]" + m.group(1) + "]"
        end = self.s.find(close, m.end())
        if end < 0:
            return m.end(), len(self.s)  # unterminated: runs to the end, as for cmake (an error there)
        return m.end(), end + len(close)

    def skip_space_and_comments(self) -> None:
        s = self.s
        while self.i < len(s):
            c = s[self.i]
            if c in " \t\r\n":
                self.advance_to(self.i + 1)
            elif c == "#":
                b = self.bracket_end(self.i + 1)
                if b is not None:
                    self.advance_to(b[1])
                else:
                    nl = s.find("\n", self.i)
                    self.advance_to(len(s) if nl < 0 else nl)
            else:
                return


def tokenize(text: str) -> list[Command]:
    """Every command invocation of a CMake file, in order. Malformed input never
    raises: an unterminated invocation ends at the end of the text."""
    r = _Reader(text)
    out: list[Command] = []
    s = text
    while len(out) < MAX_COMMANDS:
        r.skip_space_and_comments()
        if r.i >= len(s):
            break
        m = _IDENT.match(s, r.i)
        if not m:
            r.advance_to(r.i + 1)  # stray character: skip it
            continue
        line, col = r.pos()
        name = m.group().lower()
        r.advance_to(m.end())
        while r.i < len(s) and s[r.i] in " \t":
            r.advance_to(r.i + 1)
        if r.i >= len(s) or s[r.i] != "(":
            continue
        r.advance_to(r.i + 1)
        out.append(Command(name, tuple(_arguments(r)), line, col))
    return out


def _arguments(r: _Reader) -> list[Arg]:
    s = r.s
    args: list[Arg] = []
    depth = 0
    while True:
        r.skip_space_and_comments()
        if r.i >= len(s):
            return args
        c = s[r.i]
        line, col = r.pos()
        if c == ")":
            r.advance_to(r.i + 1)
            if depth == 0:
                return args
            depth -= 1
            args.append(Arg(")", "unquoted", line, col))
            continue
        if c == "(":
            depth += 1
            r.advance_to(r.i + 1)
            args.append(Arg("(", "unquoted", line, col))
            continue
        if c == '"':
            j = r.i + 1
            while j < len(s) and s[j] != '"':
                j += 2 if s[j] == "\\" else 1
            args.append(Arg(s[r.i + 1:min(j, len(s))], "quoted", line, col))
            r.advance_to(min(j + 1, len(s)))
            continue
        if c == "[":
            b = r.bracket_end(r.i)
            if b is not None:
                content = s[b[0]:b[1]]
                close = content.rfind("]", 0, len(content) - 1)
                text = content[:close] if close >= 0 else content
                if text.startswith("\n"):  # CMake drops one newline right after the opening bracket
                    text = text[1:]
                args.append(Arg(text, "bracket", line, col))
                r.advance_to(b[1])
                continue
        # Unquoted argument: up to whitespace, a paren, or a comment start; quotes
        # inside (a="b c") are kept as part of the argument as CMake does.
        j = r.i
        while j < len(s):
            ch = s[j]
            if ch in " \t\r\n()#":
                break
            if ch == "\\":
                j += 2
                continue
            if ch == '"':
                k = j + 1
                while k < len(s) and s[k] != '"':
                    k += 2 if s[k] == "\\" else 1
                j = k + 1
                continue
            if ch == "$" and s.startswith("{", j + 1):
                k = s.find("}", j)
                j = len(s) if k < 0 else k + 1
                continue
            j += 1
        j = min(j, len(s))
        args.append(Arg(s[r.i:j], "unquoted", line, col))
        r.advance_to(j)


_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", ";": "\\;"}


def unescape(text: str) -> str:
    r"""Apply CMake escapes: ``\n``, ``\t``, ``\"``, ``\\``; ``\;`` stays a literal
    semicolon marker (kept as ``\;`` so list splitting skips it)."""
    if "\\" not in text:
        return text
    out, i = [], 0
    while i < len(text):
        c = text[i]
        if c == "\\" and i + 1 < len(text):
            n = text[i + 1]
            out.append(_ESCAPES.get(n, n))
            i += 2
            continue
        out.append(c)
        i += 1
    return "".join(out)


def split_list(value: str) -> list[str]:
    """A CMake list value split on ``;`` (not ``\\;``); empty elements dropped,
    as an unquoted argument does."""
    parts, cur, i = [], [], 0
    while i < len(value):
        c = value[i]
        if c == "\\" and value.startswith(";", i + 1):
            cur.append(";")
            i += 2
            continue
        if c == ";":
            parts.append("".join(cur))
            cur = []
        else:
            cur.append(c)
        i += 1
    parts.append("".join(cur))
    return [p for p in parts if p != ""]
