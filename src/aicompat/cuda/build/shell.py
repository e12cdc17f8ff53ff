"""Variable assignments in shell scripts and Dockerfiles, read with a shell
tokenizer (POSIX Shell Command Language, 2.3 Token Recognition / 2.9.1 Simple
Commands; Dockerfile reference for ENV/ARG): comments, quotes, backslash
line continuations, command separators. Never a regex over raw text, so
``# TORCH_CUDA_ARCH_LIST is read from ...`` is a comment, not an assignment.

An assignment's value is known when it is literal or expands only variables
the file itself assigned before (``${VAR}``, ``$VAR``); otherwise it is None
(``${VAR:-default}``, command substitution, variables from the environment).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_SEPARATORS = {";", ";;", "&&", "||", "|", "&", "(", ")", "\n", "then", "do", "else", "elif", "!"}
_OPENERS = {"if", "for", "while", "until", "case", "select", "{"}
_CLOSERS = {"fi", "done", "esac", "}"}
_DECLARE = {"export", "declare", "local", "readonly", "typeset", "env"}
_DOCKER_ASSIGN = {"ENV", "ARG"}
_DOCKER_SHELL = {"RUN"}
MAX_WORDS = 200_000


@dataclass(frozen=True)
class Word:
    text: str | None  # the word after quote removal and expansion; None when not known
    raw: str
    line: int
    col: int  # 1-based column of the word's first character
    value_col: int  # column where the value of NAME=value starts (else col)


@dataclass(frozen=True)
class Assignment:
    name: str
    value: str | None
    line: int
    col: int  # of the value


class _Lexer:
    def __init__(self, text: str, dockerfile: bool) -> None:
        self.s = text
        self.docker = dockerfile

    def words(self):
        """Words and separators of the text: (raw, parts, line, col), parts being
        (kind, text) with kind 'lit' or 'var' or 'unknown'."""
        s, i, n = self.s, 0, len(self.s)
        line, line_start = 1, 0
        out = 0
        while i < n and out < MAX_WORDS:
            c = s[i]
            if c == "\\" and s.startswith("\n", i + 1):  # continuation
                i += 2
                line += 1
                line_start = i
                continue
            if c == "\n":
                yield ("\n", None, line, i - line_start + 1)
                i += 1
                line += 1
                line_start = i
                continue
            if c in " \t\r":
                i += 1
                continue
            if c == "#":
                # At a word's start '#' begins a comment (POSIX 2.3 rule 9); inside a word it is literal.
                j = s.find("\n", i)
                i = n if j < 0 else j
                continue
            col = i - line_start + 1
            if c in ";&|()":
                op = s[i:i + 2] if s[i:i + 2] in ("&&", "||", ";;") else c
                yield (op, None, line, col)
                i += len(op)
                continue
            start, start_line = i, line
            parts: list[tuple[str, str]] = []
            lit: list[str] = []
            while i < n:
                c = s[i]
                if c in " \t\r\n;&|()":
                    break
                if c == "\\":
                    if s.startswith("\n", i + 1):
                        i += 2
                        line += 1
                        line_start = i
                        continue
                    lit.append(s[i + 1:i + 2])
                    i += 2
                    continue
                if c == "'":
                    j = s.find("'", i + 1)
                    j = n if j < 0 else j
                    lit.append(s[i + 1:j])
                    line, line_start = _lines(s, i, j, line, line_start)
                    i = j + 1
                    continue
                if c == '"':
                    j = i + 1
                    while j < n and s[j] != '"':
                        if s[j] == "\\" and j + 1 < n:
                            lit.append(s[j + 1] if s[j + 1] in '$`"\\\n' else s[j:j + 2])
                            j += 2
                            continue
                        if s[j] == "$":
                            if lit:
                                parts.append(("lit", "".join(lit)))
                                lit = []
                            kind, text, j = _dollar(s, j)
                            parts.append((kind, text))
                            continue
                        if s[j] == "`":
                            k = s.find("`", j + 1)
                            j = n if k < 0 else k + 1
                            parts.append(("unknown", ""))
                            continue
                        lit.append(s[j])
                        j += 1
                    line, line_start = _lines(s, i, j, line, line_start)
                    i = j + 1
                    continue
                if c == "$":
                    if lit:
                        parts.append(("lit", "".join(lit)))
                        lit = []
                    kind, text, j = _dollar(s, i)
                    line, line_start = _lines(s, i, j, line, line_start)  # $(cmd \<newline> | grep ...)
                    i = j
                    parts.append((kind, text))
                    continue
                if c == "`":
                    k = s.find("`", i + 1)
                    j = n if k < 0 else k + 1
                    line, line_start = _lines(s, i, j, line, line_start)
                    i = j
                    parts.append(("unknown", ""))
                    continue
                lit.append(c)
                i += 1
            if lit:
                parts.append(("lit", "".join(lit)))
            out += 1
            yield (s[start:i], parts, start_line, col)  # a word spanning lines is where it starts


def _lines(s: str, i: int, j: int, line: int, line_start: int) -> tuple[int, int]:
    """(line, start of that line) after the text s[i:j] that a word spans."""
    nl = s.rfind("\n", i, j)
    return (line + s.count("\n", i, j), nl + 1) if nl >= 0 else (line, line_start)


def _dollar(s: str, i: int) -> tuple[str, str, int]:
    """A ``$`` expansion at ``i``: ('var', NAME, end) for $NAME / ${NAME}, else
    ('unknown', '', end) for ${NAME:-x}, $(...), $((...)), $1."""
    n = len(s)
    if s.startswith("${", i):
        j = s.find("}", i)
        j = n if j < 0 else j
        inner = s[i + 2:j]
        return ("var", inner, j + 1) if _NAME.fullmatch(inner) else ("unknown", "", j + 1)
    if s.startswith("$(", i):
        depth, j = 0, i + 1
        while j < n:
            if s[j] == "(":
                depth += 1
            elif s[j] == ")":
                depth -= 1
                if depth == 0:
                    break
            j += 1
        return ("unknown", "", j + 1)
    m = _NAME.match(s, i + 1)
    if m:
        return ("var", m.group(), m.end())
    if i + 1 < n and (s[i + 1].isdigit() or s[i + 1] in "@*#?$!-"):
        return ("unknown", "", i + 2)
    return ("lit", "$", i + 1)


def assignments(text: str, dockerfile: bool = False) -> list[Assignment]:
    """Every ``NAME=value`` the script makes: before a command (``X=1 cmd``),
    after export/declare/local/env, and Dockerfile ENV/ARG (``ENV X=1 Y=2``
    and the legacy ``ENV X value``)."""
    return _scan(text, dockerfile, None)


def commands(text: str, dockerfile: bool = False, known: dict[str, str] | None = None) -> list[list[Word]]:
    """The simple commands the script runs, each a list of words (the command name first,
    after any ``NAME=value`` prefix), variables expanded where the file (or ``known``) sets them."""
    found: list[list[Word]] = []
    _scan(text, dockerfile, found, dict(known or {}))
    return found


def _scan(text: str, dockerfile: bool, found: list | None, known: dict | None = None) -> list[Assignment]:
    known = {} if known is None else known
    out: list[Assignment] = []
    command: list[tuple] = []
    cond = [False]  # the command being read is inside a conditional block

    def value(parts) -> str | None:
        vals = []
        for kind, t in parts:
            if kind == "lit":
                vals.append(t)
            elif kind == "var" and known.get(t) is not None:
                vals.append(known[t])
            else:
                return None
        return "".join(vals)

    def flush():
        if not command:
            return
        words = command[:]
        command.clear()
        before = len(out)
        try:
            _flush(words)
        finally:
            if cond[0]:
                for a in out[before:]:
                    known[a.name] = None  # set only on some paths: its value afterwards is not known

    def _flush(words):
        head = words[0][0]
        if dockerfile and head.upper() in _DOCKER_SHELL:
            words = words[1:]
            head = words[0][0] if words else ""
        if dockerfile and head.upper() in _DOCKER_ASSIGN:
            args = words[1:]
            if args and "=" not in args[0][0] and head.upper() == "ENV" and _NAME.fullmatch(args[0][0]):
                # Legacy form ``ENV NAME value with spaces``: the rest of the line.
                rest = args[1:]
                parts = [p for w in rest for p in (w[1] or []) + [("lit", " ")]][:-1]
                v = value(parts) if rest else ""
                _record(out, known, args[0][0], v, rest[0] if rest else args[0], 0)
                return
            for w in args:
                _assign_word(w, out, known, value, allow_bare=head.upper() == "ARG")
            return
        if words[0][0] in _DECLARE:  # export A=1 B=2 (options and bare names skipped)
            for w in words[1:]:
                _assign_word(w, out, known, value)
            return
        for i, w in enumerate(words):  # assignments before the command name
            if not _assign_word(w, out, known, value):
                if found is not None:
                    found.append([Word(value(p) if p is not None else None, r, ln, c, c)
                                  for r, p, ln, c in words[i:]])
                break

    depth = 0  # inside if/for/while/case/{ }: what is assigned there may not happen
    for raw, parts, line, col in _Lexer(text, dockerfile).words():
        if dockerfile and raw == "\n":
            depth = 0  # each Dockerfile instruction runs its own shell
        if dockerfile and len(command) == 1 and command[0][0].upper() in _DOCKER_SHELL and raw in _OPENERS:
            command.clear()  # RUN if ...: the shell's compound command
        if not command and raw in _OPENERS:
            flush()
            depth += 1
            continue
        if not command and raw in _CLOSERS:
            depth = max(depth - 1, 0)
            continue
        if parts is None or raw in _SEPARATORS:
            flush()
            continue
        if not command:
            cond[0] = depth > 0
        command.append((raw, parts, line, col))
    flush()
    return out


def _assign_word(w, out, known, value, allow_bare: bool = False) -> bool:
    raw, parts, line, col = w
    m = _NAME.match(raw)
    if not m or not raw.startswith("=", m.end()):
        if allow_bare and _NAME.fullmatch(raw):
            known.setdefault(raw, None)
            return True
        return False
    name = m.group()
    # The value: the word's parts after "NAME=" (the first literal part begins with it).
    rest = list(parts or [])
    if rest and rest[0][0] == "lit" and rest[0][1].startswith(name + "="):
        first = rest[0][1][len(name) + 1:]
        rest = ([("lit", first)] if first else []) + rest[1:]
    else:
        return False
    _record(out, known, name, value(rest), w, len(name) + 1)
    return True


def _record(out, known, name, v, w, offset) -> None:
    raw, parts, line, col = w
    known[name] = v
    out.append(Assignment(name, v, line, col + offset))


def is_nvcc(words: list) -> bool:
    """Does this command (words as ``commands`` gives them, None where unknown) run nvcc?"""
    return bool(words) and words[0] is not None and words[0].rsplit("/", 1)[-1] == "nvcc"

