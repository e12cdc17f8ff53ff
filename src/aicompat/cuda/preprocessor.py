"""Which lines of a CUDA source survive the preprocessor for one compile target.

Evaluates ``#if``/``#ifdef``/``#ifndef``/``#elif``/``#else``/``#endif`` with the
macros nvcc defines in the device pass for that target (``__CUDA_ARCH__``,
``__CUDA_ARCH_SPECIFIC__``, ``__CUDA_ARCH_FAMILY_SPECIFIC__``,
``__CUDA_ARCH_FEAT_SMxxx_ALL``) plus the file's own object-like ``#define``s.
Conditions on macros nobody defined in the file and nvcc does not define
(``-D`` flags, headers) are *unknown*: both branches stay possible.
Nothing is compiled; this reads text.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

UNKNOWN = None  # three-valued: True, False, None


@dataclass(frozen=True)
class CompileTarget:
    """A device compile target: ``sm_90``, ``sm_90a`` or ``sm_100f``."""

    name: str

    @property
    def number(self) -> int:
        return int(re.match(r"sm_(\d+)", self.name).group(1))

    @property
    def suffix(self) -> str:
        return self.name[-1] if self.name[-1] in "af" else ""

    def macros(self) -> dict[str, int]:
        """What nvcc defines for this target in the device pass."""
        n = self.number
        arch = n * 10  # sm_90 -> 900, sm_100 -> 1000
        m = {"__CUDA_ARCH__": arch, "__CUDACC__": 1, "__NVCC__": 1, "__CUDA_ARCH_LIST__": arch}
        if self.suffix == "a":
            m["__CUDA_ARCH_SPECIFIC__"] = arch
            m["__CUDA_ARCH_FAMILY_SPECIFIC__"] = arch
            m[f"__CUDA_ARCH_FEAT_SM{n}_ALL"] = 1
        elif self.suffix == "f":
            m["__CUDA_ARCH_FAMILY_SPECIFIC__"] = arch
        return m


# Macros nvcc may define for *some* target: for any target that does not
# define them they are known to be undefined, not unknown.
ARCH_MACRO = re.compile(r"__CUDA_ARCH(?:_SPECIFIC|_FAMILY_SPECIFIC)?__|__CUDA_ARCH_FEAT_SM\d+_ALL|__CUDACC__|__NVCC__")

_DIRECTIVE = re.compile(r"^\s*#\s*(\w+)(.*)$")
_DEFINE = re.compile(r"^\s*#\s*define\s+([A-Za-z_]\w*)(\([^)]*\))?\s*(.*)$")


def strip_comments(text: str) -> str:
    """Remove // and /* */ comments, keeping line numbers and string literals."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c == '"' or c == "'":
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            out.append(text[i:j + 1])
            i = j + 1
        elif text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            chunk = text[i: (n if j < 0 else j + 2)]
            out.append("\n" * chunk.count("\n"))
            i = n if j < 0 else j + 2
        else:
            out.append(c)
            i += 1
    return "".join(out)


def logical_lines(text: str) -> list[tuple[int, str]]:
    """(first physical line number, text) with backslash continuations joined."""
    lines = text.split("\n")
    out: list[tuple[int, str]] = []
    buf, start = "", 0
    for i, line in enumerate(lines, 1):
        if not buf:
            start = i
        if line.endswith("\\"):
            buf += line[:-1] + " "
            continue
        out.append((start, buf + line))
        buf = ""
    if buf:
        out.append((start, buf))
    return out


@dataclass
class Preprocessed:
    live: dict[int, bool | None]  # line number -> True (compiled), False (dropped), None (unknown)
    defines: dict[str, str] = field(default_factory=dict)  # object-like and function-like bodies
    groups: dict[int, list[tuple[int, int, bool | None]]] = field(default_factory=dict)
    # group id -> [(first line, last line, branch live?)] per branch, in order
    line_group: dict[int, tuple[int, int]] = field(default_factory=dict)  # line -> (group, branch)


class _Cond:
    """A tiny C preprocessor expression evaluator with three-valued results."""

    TOKEN = re.compile(r"\s*(defined|\d+[uUlL]*|0x[0-9a-fA-F]+|[A-Za-z_]\w*|&&|\|\||==|!=|<=|>=|<<|>>|[()!<>+\-*/%?:~])")

    def __init__(self, text: str, macros: dict[str, int], defines: dict[str, str], known_undefined) -> None:
        self.toks = [t for t in self.TOKEN.findall(text)]
        self.i = 0
        self.macros = macros
        self.defines = defines
        self.known_undefined = known_undefined

    def peek(self):
        return self.toks[self.i] if self.i < len(self.toks) else None

    def take(self):
        t = self.peek()
        self.i += 1
        return t

    def parse(self):
        try:
            v = self.ternary()
            return v
        except (IndexError, ValueError, ZeroDivisionError, RecursionError):
            return UNKNOWN

    def ternary(self):
        c = self.binary(0)
        if self.peek() == "?":
            self.take()
            a = self.ternary()
            if self.take() != ":":
                raise ValueError
            b = self.ternary()
            if c is UNKNOWN:
                return a if a == b else UNKNOWN
            return a if c else b
        return c

    PREC = [["||"], ["&&"], ["==", "!="], ["<", ">", "<=", ">="], ["<<", ">>"], ["+", "-"], ["*", "/", "%"]]

    def binary(self, level):
        if level == len(self.PREC):
            return self.unary()
        left = self.binary(level + 1)
        while self.peek() in self.PREC[level]:
            op = self.take()
            right = self.binary(level + 1)
            left = self.apply(op, left, right)
        return left

    def apply(self, op, a, b):
        if op == "&&":
            if a == 0 or b == 0:
                return 0
            return UNKNOWN if a is UNKNOWN or b is UNKNOWN else 1
        if op == "||":
            if (a is not UNKNOWN and a != 0) or (b is not UNKNOWN and b != 0):
                return 1
            return UNKNOWN if a is UNKNOWN or b is UNKNOWN else 0
        if a is UNKNOWN or b is UNKNOWN:
            return UNKNOWN
        return {
            "==": lambda: int(a == b), "!=": lambda: int(a != b), "<": lambda: int(a < b), ">": lambda: int(a > b),
            "<=": lambda: int(a <= b), ">=": lambda: int(a >= b), "<<": lambda: a << b, ">>": lambda: a >> b,
            "+": lambda: a + b, "-": lambda: a - b, "*": lambda: a * b, "/": lambda: int(a / b), "%": lambda: a % b,
        }[op]()

    def unary(self):
        t = self.take()
        if t == "!":
            v = self.unary()
            return UNKNOWN if v is UNKNOWN else int(not v)
        if t == "-":
            v = self.unary()
            return UNKNOWN if v is UNKNOWN else -v
        if t == "~":
            v = self.unary()
            return UNKNOWN if v is UNKNOWN else ~v
        if t == "(":
            v = self.ternary()
            if self.take() != ")":
                raise ValueError
            return v
        if t == "defined":
            paren = self.peek() == "("
            if paren:
                self.take()
            name = self.take()
            if paren and self.take() != ")":
                raise ValueError
            return self.is_defined(name)
        if t is None:
            raise ValueError
        if t[0].isdigit():
            return int(t.rstrip("uUlL"), 0)
        return self.value(t)

    def is_defined(self, name):
        if name in self.macros or name in self.defines:
            return 1
        if self.known_undefined(name):
            return 0
        return UNKNOWN

    def value(self, name, depth=0):
        if name in self.macros:
            return self.macros[name]
        if name in self.defines and depth < 8:
            body = self.defines[name].strip()
            if re.fullmatch(r"\d+[uUlL]*|0x[0-9a-fA-F]+", body):
                return int(body.rstrip("uUlL"), 0)
            if re.fullmatch(r"[A-Za-z_]\w*", body):
                return self.value(body, depth + 1)
            if body == "":
                return 0
            sub = _Cond(body, self.macros, self.defines, self.known_undefined)
            return sub.parse()
        if self.known_undefined(name):
            return 0  # an undefined identifier in #if is 0
        return UNKNOWN


def preprocess(text: str, target: CompileTarget, extra_defines: dict[str, str] | None = None) -> Preprocessed:
    """Which lines of ``text`` (comments already stripped or not) are compiled for ``target``."""
    macros = target.macros()
    defines: dict[str, str] = dict(extra_defines or {})
    all_defined = {m.group(1) for m in _DEFINE.finditer(text)} if "#" in text else set()

    def known_undefined(name: str) -> bool:
        # nvcc's arch macros are known per target; a name the file never
        # defines and nvcc does not define for this target is undefined, unless
        # it may come from a -D flag or a header: that we cannot know, so only
        # arch macros are known-undefined.
        return bool(ARCH_MACRO.fullmatch(name)) and name not in all_defined

    live: dict[int, bool | None] = {}
    groups: dict[int, list[tuple[int, int, bool | None]]] = {}
    line_group: dict[int, tuple[int, int]] = {}
    # stack of [group id, parent live, branch taken (True/None/False), current branch live, branch start, index]
    stack: list[list] = []
    gid = 0
    current: bool | None = True
    for lineno, line in logical_lines(text):
        m = _DIRECTIVE.match(line)
        if m:
            d, rest = m.group(1), m.group(2).strip()
            if d in ("if", "ifdef", "ifndef"):
                cond = _eval_directive(d, rest, macros, defines, known_undefined)
                gid += 1
                branch_live = _and(current, cond)
                stack.append([gid, current, cond, branch_live, lineno, 0])
                groups[gid] = []
                current = branch_live
                live[lineno] = False
                continue
            if d in ("elif", "else") and stack:
                top = stack[-1]
                groups[top[0]].append((top[4], lineno, top[3]))
                taken = top[2]
                if d == "elif":
                    cond = _eval_directive("if", rest, macros, defines, known_undefined)
                else:
                    cond = 1
                # this branch runs if no earlier one was taken
                not_taken = _not(taken)
                branch = _and(not_taken, cond)
                top[2] = _or(taken, cond)
                top[3] = _and(top[1], branch)
                top[4] = lineno
                top[5] += 1
                current = top[3]
                live[lineno] = False
                continue
            if d == "endif" and stack:
                top = stack.pop()
                groups[top[0]].append((top[4], lineno, top[3]))
                current = top[1]
                live[lineno] = False
                continue
            if d == "define" and current is not False:
                dm = _DEFINE.match(line)
                if dm:
                    defines[dm.group(1)] = (dm.group(2) or "") + " " + dm.group(3) if dm.group(2) else dm.group(3)
            elif d == "undef" and current is not False:
                defines.pop(rest.split()[0] if rest else "", None)
            live[lineno] = False if d in ("define", "undef", "include", "pragma", "error", "warning", "line") else current
            continue
        live[lineno] = current
        if stack:
            line_group[lineno] = (stack[-1][0], stack[-1][5])
    return Preprocessed(live=live, defines=defines, groups=groups, line_group=line_group)


def _eval_directive(d, rest, macros, defines, known_undefined):
    if d == "ifdef":
        name = rest.split()[0] if rest else ""
        v = _Cond("", macros, defines, known_undefined).is_defined(name)
    elif d == "ifndef":
        name = rest.split()[0] if rest else ""
        v = _Cond("", macros, defines, known_undefined).is_defined(name)
        v = UNKNOWN if v is UNKNOWN else int(not v)
    else:
        v = _Cond(rest, macros, defines, known_undefined).parse()
    if v is UNKNOWN:
        return UNKNOWN
    return bool(v)


def _and(a, b):
    if a is False or b is False:
        return False
    if a is None or b is None:
        return None
    return True


def _or(a, b):
    if a is True or b is True:
        return True
    if a is None or b is None:
        return None
    return False


def _not(a):
    return None if a is None else (not a)
