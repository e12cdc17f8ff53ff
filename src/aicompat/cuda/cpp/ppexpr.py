"""``#if`` expressions: tokens, macro expansion, three-valued evaluation.

The grammar is the C++ one nvcc's front end implements: ``defined X`` and
``defined(X)``, the alternative tokens (``and``, ``or``, ``not``, ``bitand``,
``bitor``, ``xor``, ``compl``, ``not_eq``), ``& | ^`` with their C precedence,
integer literals with suffixes and digit separators, character literals,
function-like macros, ``__has_include``. A value is an int or None (unknown):
an unknown operand makes the result unknown unless the operator decides
without it (``0 && x``, ``1 || x``). The macro environment says, per name,
whether it is defined (True / False / None) and with which body.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

UNKNOWN = None
# A macro value not known (a -D value computed at build time): preprocessor.ident reads it as
# UNKNOWN. The one text marker of "not known" (cuda/build/pyeval.py says why there is one).
UNKNOWN_VALUE = "__aicompat_unknown__"

_TOKEN = re.compile(
    r"""\s*(
      (?:u8|[uUL])?'(?:\\.|[^'\\])+'                 # character literal
    | "(?:\\.|[^"\\])*"                               # string (only in __has_include)
    | \.?\d(?:[eEpP][+-]|[\w.']|)*                      # pp-number
    | [A-Za-z_]\w*
    | &&|\|\||==|!=|<=|>=|<<|>>|\#\#
    | [()!<>+\-*/%?:~&|^,\#]
    )""",
    re.X,
)
ALTERNATIVE = {"and": "&&", "or": "||", "not": "!", "bitand": "&", "bitor": "|", "xor": "^", "compl": "~",
               "not_eq": "!="}
_UNK = "\0unknown"  # a token standing for a value nobody can know (a maybe-defined macro)
# Built-in function-like operators whose answer needs the compiler itself.
_COMPILER_QUERIES = {"__has_builtin", "__has_attribute", "__has_cpp_attribute", "__has_feature", "__has_extension",
                     "__has_declspec_attribute", "__building_module", "__CUDA_ARCH_HAS_FEATURE__"}
MAX_DEPTH = 32


class ExprError(ValueError):
    """Not an expression we can read: the caller treats the result as unknown."""


_ANGLE_INCLUDE = re.compile(r"(__has_include(?:_next)?\s*\(\s*)<([^>\n]*)>")


def tokenize(text: str) -> list[str]:
    out, pos = [], 0
    # <header> is one token only inside __has_include: carried as the string "<header>"
    text = _ANGLE_INCLUDE.sub(lambda m: f'{m.group(1)}"<{m.group(2)}>"', text.rstrip())
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if not m or m.end() == pos:
            raise ExprError(f"unexpected {text[pos:pos + 10]!r}")
        out.append(ALTERNATIVE.get(m.group(1), m.group(1)))
        pos = m.end()
    return out


@dataclass
class Macro:
    name: str
    params: tuple[str, ...] | None  # None: object-like
    body: str
    state: bool | None = True  # True defined, None maybe (defined under an unknown branch)


class Env:
    """What the evaluator asks: subclassed by the preprocessor."""

    def macro(self, name: str) -> Macro | bool | None:
        """The Macro if defined for sure or maybe; False when known undefined; None when unknown."""
        return None

    def has_include(self, name: str, quoted: bool) -> bool | None:
        return None


def expand(tokens: list[str], env: Env, hide: frozenset = frozenset(), depth: int = 0) -> list[str]:
    """Macro-expand ``tokens``; operands of ``defined`` and ``__has_include`` stay as written."""
    if depth > MAX_DEPTH:
        raise ExprError("macro expansion too deep")
    out: list[str] = []
    i, n = 0, len(tokens)
    while i < n:
        t = tokens[i]
        if t == "defined":
            j = i + 1
            if j < n and tokens[j] == "(":
                j += 3
            else:
                j += 1
            out.extend(tokens[i:j])
            i = j
            continue
        if t in ("__has_include", "__has_include_next") or t in _COMPILER_QUERIES:
            j = _close(tokens, i + 1) if i + 1 < n and tokens[i + 1] == "(" else i + 1
            out.extend(tokens[i:j])
            i = j
            continue
        if not (t[0].isalpha() or t[0] == "_") or t in hide:
            out.append(t)
            i += 1
            continue
        m = env.macro(t)
        if not isinstance(m, Macro):
            out.append(t)
            i += 1
            continue
        if m.params is None:
            if m.state is not True:
                out.append(_UNK)
            else:
                out.extend(expand(_body_tokens(m), env, hide | {t}, depth + 1))
            i += 1
            continue
        if i + 1 >= n or tokens[i + 1] != "(":
            out.append(t)  # a function-like macro's name without a call is just a name
            i += 1
            continue
        end = _close(tokens, i + 1)
        if m.state is not True:
            out.append(_UNK)
        else:
            args = _split_args(tokens[i + 2:end - 1])
            out.extend(expand(_substitute(m, args, env, hide, depth), env, hide | {t}, depth + 1))
        i = end
    return out


def _body_tokens(m: Macro) -> list[str]:
    toks = tokenize(m.body)
    if "#" in toks or "##" in toks:
        raise ExprError("stringizing/pasting in #if")
    return toks


def _close(tokens: list[str], open_at: int) -> int:
    """Index just past the parenthesis matching tokens[open_at] == '('."""
    depth = 0
    for k in range(open_at, len(tokens)):
        if tokens[k] == "(":
            depth += 1
        elif tokens[k] == ")":
            depth -= 1
            if depth == 0:
                return k + 1
    raise ExprError("unbalanced parentheses")


def _split_args(tokens: list[str]) -> list[list[str]]:
    args, cur, depth = [], [], 0
    for t in tokens:
        if t == "," and depth == 0:
            args.append(cur)
            cur = []
            continue
        depth += t == "("
        depth -= t == ")"
        cur.append(t)
    args.append(cur)
    return args


def _substitute(m: Macro, args: list[list[str]], env: Env, hide, depth) -> list[str]:
    params = list(m.params)
    variadic = bool(params) and params[-1] in ("...", "__VA_ARGS__")
    if variadic:
        params[-1] = "__VA_ARGS__"
        fixed = len(params) - 1
        rest = args[fixed:]
        joined: list[str] = []
        for k, a in enumerate(rest):
            joined.extend(([","] if k else []) + a)
        args = args[:fixed] + [joined]
    if args == [[]] and not params:
        args = []
    if len(args) != len(params):
        raise ExprError(f"{m.name}: {len(args)} arguments for {len(params)} parameters")
    values = {p: expand(a, env, hide, depth + 1) for p, a in zip(params, args)}
    out: list[str] = []
    for t in _body_tokens(m):
        out.extend(values.get(t, [t]))
    return out


class Evaluator:
    """Evaluate an expanded token list; identifiers left over are resolved by ``ident``."""

    PREC = [["||"], ["&&"], ["|"], ["^"], ["&"], ["==", "!="], ["<", ">", "<=", ">="], ["<<", ">>"], ["+", "-"],
            ["*", "/", "%"]]

    def __init__(self, tokens: list[str], env: Env, ident) -> None:
        self.toks = tokens
        self.i = 0
        self.env = env
        self.ident = ident  # name -> int | None, for identifiers that are not macros

    def run(self):
        try:
            v = self.ternary()
            if self.i != len(self.toks):
                raise ExprError("trailing tokens")
            return v
        except (ExprError, IndexError, ValueError, ZeroDivisionError, RecursionError, OverflowError):
            return UNKNOWN

    def peek(self):
        return self.toks[self.i] if self.i < len(self.toks) else None

    def take(self):
        t = self.peek()
        if t is None:
            raise ExprError("unexpected end")
        self.i += 1
        return t

    def expect(self, tok):
        if self.take() != tok:
            raise ExprError(f"expected {tok}")

    def ternary(self):
        c = self.binary(0)
        if self.peek() != "?":
            return c
        self.take()
        a = self.ternary()
        self.expect(":")
        b = self.ternary()
        if c is UNKNOWN:
            return a if a == b else UNKNOWN
        return a if c else b

    def binary(self, level):
        if level == len(self.PREC):
            return self.unary()
        left = self.binary(level + 1)
        while self.peek() in self.PREC[level]:
            op = self.take()
            right = self.binary(level + 1)
            left = _apply(op, left, right)
        return left

    def unary(self):
        t = self.take()
        if t in ("!", "-", "+", "~"):
            v = self.unary()
            if v is UNKNOWN:
                return UNKNOWN
            return {"!": lambda: int(not v), "-": lambda: -v, "+": lambda: v, "~": lambda: ~v}[t]()
        if t == "(":
            v = self.ternary()
            self.expect(")")
            return v
        if t == "defined":
            paren = self.peek() == "("
            if paren:
                self.take()
            name = self.take()
            if paren:
                self.expect(")")
            return _defined(self.env.macro(name))
        if t in ("__has_include", "__has_include_next"):
            self.expect("(")
            end = _close(self.toks, self.i - 1)
            inner = "".join(self.toks[self.i:end - 1])
            self.i = end
            if len(inner) > 2 and inner[0] == '"' and inner[-1] == '"':
                name = inner[1:-1]
                if name.startswith("<") and name.endswith(">"):
                    return _int(self.env.has_include(name[1:-1], False))
                return _int(self.env.has_include(name, True))
            return UNKNOWN
        if t in _COMPILER_QUERIES:
            if self.peek() == "(":
                self.i = _close(self.toks, self.i)
            return UNKNOWN
        if t == _UNK:
            return UNKNOWN
        if t[0].isdigit() or t[0] == ".":
            return _number(t)
        if "'" in t:
            return _char(t)
        if t[0].isalpha() or t[0] == "_":
            if self.peek() == "(":  # an undefined or unknown function-like name: not a valid #if
                self.i = _close(self.toks, self.i)
                return UNKNOWN
            return self.ident(t)
        raise ExprError(f"unexpected {t!r}")


def _defined(m) -> int | None:
    if isinstance(m, Macro):
        return 1 if m.state is True else UNKNOWN
    if m is False:
        return 0
    return UNKNOWN


def _int(v: bool | None) -> int | None:
    return UNKNOWN if v is None else int(v)


def _apply(op, a, b):
    if op == "&&":
        if a == 0 or b == 0:
            return 0
        return UNKNOWN if a is UNKNOWN or b is UNKNOWN else 1
    if op == "||":
        if (a is not UNKNOWN and a != 0) or (b is not UNKNOWN and b != 0):
            return 1
        return UNKNOWN if a is UNKNOWN or b is UNKNOWN else 0
    if op == "&" and (a == 0 or b == 0):
        return 0
    if a is UNKNOWN or b is UNKNOWN:
        return UNKNOWN
    if op in ("/", "%"):
        if b == 0:
            raise ExprError("division by zero")
        q = abs(a) // abs(b) * (1 if (a >= 0) == (b >= 0) else -1)  # C truncates toward zero
        return q if op == "/" else a - q * b
    if op in ("<<", ">>") and not 0 <= b < 64:
        return UNKNOWN  # undefined in C's 64-bit arithmetic; `1 << 12000000000` must not build a 1.5 GB int
    return _int64({
        "==": lambda: int(a == b), "!=": lambda: int(a != b), "<": lambda: int(a < b), ">": lambda: int(a > b),
        "<=": lambda: int(a <= b), ">=": lambda: int(a >= b), "<<": lambda: a << b, ">>": lambda: a >> b,
        "+": lambda: a + b, "-": lambda: a - b, "*": lambda: a * b, "&": lambda: a & b, "|": lambda: a | b,
        "^": lambda: a ^ b,
    }[op]())


def _int64(v: int) -> int:
    """#if arithmetic is intmax_t (64 bits for nvcc's host compilers): wrap, as they do."""
    return ((v + (1 << 63)) & ((1 << 64) - 1)) - (1 << 63)


_SUFFIX = re.compile(r"[uUlLzZ]+$")


def _number(tok: str) -> int:
    s = tok.replace("'", "")
    s = _SUFFIX.sub("", s)  # u, l, ul, ll, ull, z (no hex digit is among them)
    if re.fullmatch(r"0[0-7]+", s):
        return int(s, 8)
    if re.fullmatch(r"0[xX][0-9a-fA-F]+|0[bB][01]+|\d+", s):
        if len(s) > 64:
            raise ExprError(f"integer literal too long: {tok[:20]}...")  # wider than any C integer type
        return _int64(int(s, 0))
    raise ExprError(f"not an integer literal: {tok}")


_ESCAPES = {"n": 10, "t": 9, "r": 13, "0": 0, "\\": 92, "'": 39, '"': 34, "a": 7, "b": 8, "f": 12, "v": 11, "?": 63}


def _char(tok: str) -> int:
    body = tok[tok.index("'") + 1:-1]
    if body.startswith("\\"):
        if body[1:2] == "x":
            return int(body[2:], 16)
        if body[1:].isdigit():
            return int(body[1:], 8)
        if body[1:] in _ESCAPES:
            return _ESCAPES[body[1:]]
        raise ExprError(f"escape {body}")
    if len(body) != 1:
        raise ExprError("multi-character literal")
    return ord(body)


def evaluate(text: str, env: Env, ident) -> int | None:
    """The value of the ``#if`` expression ``text``, or None when unknown."""
    try:
        toks = expand(tokenize(text), env)
    except (ExprError, IndexError, RecursionError):
        return UNKNOWN
    return Evaluator(toks, env, ident).run()
