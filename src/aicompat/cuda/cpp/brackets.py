"""Bracket matching on masked C++ text (literals and directives already blanked)."""

from __future__ import annotations


def match_close(s: str, i: int, open_ch: str, close_ch: str) -> int:
    """Index of the bracket closing s[i] == open_ch, or -1."""
    depth = 0
    for k in range(i, len(s)):
        if s[k] == open_ch:
            depth += 1
        elif s[k] == close_ch:
            depth -= 1
            if depth == 0:
                return k
    return -1


def skip_ws(s: str, i: int) -> int:
    while i < len(s) and s[i].isspace():
        i += 1
    return i


def angle_close(s: str, i: int) -> int:
    """Index of the ``>`` closing the template bracket s[i] == '<', or -1. Parenthesised
    text is skipped whole (``<(N > 2)>``); a ``;``, ``{`` or ``}`` ends the search."""
    depth = 0
    k = i
    while k < len(s):
        ch = s[k]
        if ch == "(":
            k = match_close(s, k, "(", ")")
            if k < 0:
                return -1
        elif ch == "<":
            depth += 1
        elif ch == ">":
            depth -= 1
            if depth == 0:
                return k
        elif ch in ";{}":
            return -1
        k += 1
    return -1


def split_top(s: str) -> list[str]:
    """``s`` split at the commas outside (), [], {} and template brackets (a ``<`` or ``>``
    inside parentheses is a comparison: ``(N >= 900), 128``)."""
    parts, depth, angle, cur = [], 0, 0, []
    for ch in s:
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        elif ch == "<" and depth == 0:
            angle += 1
        elif ch == ">" and depth == 0 and angle:
            angle -= 1
        if ch == "," and depth == 0 and angle == 0:
            parts.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
    parts.append("".join(cur))
    return parts
