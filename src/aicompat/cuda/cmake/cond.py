"""CMake's ``if()`` condition grammar (https://cmake.org/cmake/help/latest/command/if.html)
over words whose values are known or not: any unknown operand makes the answer None."""

from __future__ import annotations

import re

from ..cpp.ppexpr import UNKNOWN_VALUE as UNK  # an unknown piece inside a value (see eval.py)
from .parse import split_list


class Condition:
    UNARY = {"DEFINED", "EXISTS", "COMMAND", "TARGET", "POLICY", "TEST", "IS_DIRECTORY", "IS_ABSOLUTE"}
    BINARY = {"EQUAL", "LESS", "GREATER", "LESS_EQUAL", "GREATER_EQUAL", "STREQUAL", "STRLESS", "STRGREATER",
              "VERSION_EQUAL", "VERSION_LESS", "VERSION_GREATER", "VERSION_LESS_EQUAL", "VERSION_GREATER_EQUAL",
              "MATCHES", "IN_LIST", "STRLESS_EQUAL", "STRGREATER_EQUAL", "PATH_EQUAL"}

    def __init__(self, words, scope, interp) -> None:
        self.w = words
        self.scope = scope
        self.interp = interp

    def value(self, word):
        text, quoted = word
        if text == UNK:
            return None
        if not quoted and text in self.scope:
            v = self.scope[text]
            return v[0] if len(v) == 1 and UNK not in v[0] else None
        return text

    def truth(self, word):
        """if(<constant>) / if(<variable>): a variable is true when defined to a value
        that is not a false constant."""
        text, quoted = word
        if text == UNK:
            return None
        const = constant(text)
        if const is not None or quoted:
            return bool(const)
        if text not in self.scope:
            return False  # an undefined variable is false
        vals = set()
        for v in self.scope[text]:
            if UNK in v:
                return None
            vals.add(constant(v) is not False)
        return vals.pop() if len(vals) == 1 else None

    def parse_or(self, i):
        val, i = self.parse_and(i)
        while i < len(self.w) and self.w[i][0] == "OR" and not self.w[i][1]:
            rhs, i = self.parse_and(i + 1)
            val = True if (val is True or rhs is True) else (False if val is False and rhs is False else None)
        return val, i

    def parse_and(self, i):
        val, i = self.parse_not(i)
        while i < len(self.w) and self.w[i][0] == "AND" and not self.w[i][1]:
            rhs, i = self.parse_not(i + 1)
            val = False if (val is False or rhs is False) else (True if val is True and rhs is True else None)
        return val, i

    def parse_not(self, i):
        if self.w[i][0] == "NOT" and not self.w[i][1]:
            val, i = self.parse_not(i + 1)
            return (None if val is None else not val), i
        return self.parse_atom(i)

    def parse_atom(self, i):
        text, quoted = self.w[i]
        if text == "(" and not quoted:
            val, i = self.parse_or(i + 1)
            return val, i + 1
        if not quoted and text in self.UNARY and i + 1 < len(self.w):
            arg = self.w[i + 1]
            if text == "DEFINED":
                name = arg[0]
                if name == UNK:
                    return None, i + 2
                if name.startswith(("ENV{", "CACHE{")):
                    return None, i + 2
                return name in self.scope, i + 2
            if text == "COMMAND":
                return (arg[0].lower() in self.interp.functions) or None, i + 2
            return None, i + 2
        if i + 2 < len(self.w) and not self.w[i + 1][1] and self.w[i + 1][0] in self.BINARY:
            op = self.w[i + 1][0]
            if op == "IN_LIST":
                item = self.value(self.w[i])
                lst = self.scope.get(self.w[i + 2][0])
                if item is None or lst is None or len(lst) != 1 or UNK in lst[0]:
                    return (None if lst is not None or item is None else False), i + 3
                return item in split_list(lst[0]), i + 3
            a, b = self.value(self.w[i]), self.value(self.w[i + 2])
            if a is None or b is None:
                return None, i + 3
            return compare(op, a, b), i + 3
        return self.truth(self.w[i]), i + 1



def constant(text: str) -> bool | None:
    """CMake's true/false constants; None for any other word."""
    up = text.upper()
    if up in ("1", "ON", "YES", "TRUE", "Y") or re.fullmatch(r"-?(0*[1-9]\d*(\.\d+)?|0\.\d*[1-9]\d*)", text):
        return True
    if up in ("0", "OFF", "NO", "FALSE", "N", "IGNORE", "NOTFOUND", "") or up.endswith("-NOTFOUND"):
        return False
    return None


def version(s: str) -> tuple[int, ...] | None:
    m = re.match(r"\d+(\.\d+)*", s.strip())
    return tuple(int(x) for x in m.group().split(".")) if m else None


def compare(op: str, a: str, b: str):
    if op == "STREQUAL":
        return a == b
    if op == "MATCHES":
        return re.search(b, a) is not None
    if op.startswith("VERSION_"):
        va, vb = version(a), version(b)
        if va is None or vb is None:
            return None
        n = max(len(va), len(vb))
        va, vb = va + (0,) * (n - len(va)), vb + (0,) * (n - len(vb))
        return {"VERSION_EQUAL": va == vb, "VERSION_LESS": va < vb, "VERSION_GREATER": va > vb,
                "VERSION_LESS_EQUAL": va <= vb, "VERSION_GREATER_EQUAL": va >= vb}[op]
    if op in ("EQUAL", "LESS", "GREATER", "LESS_EQUAL", "GREATER_EQUAL"):
        try:
            x, y = float(a), float(b)
        except ValueError:
            return False  # CMake: not numbers -> false
        return {"EQUAL": x == y, "LESS": x < y, "GREATER": x > y, "LESS_EQUAL": x <= y, "GREATER_EQUAL": x >= y}[op]
    return None
