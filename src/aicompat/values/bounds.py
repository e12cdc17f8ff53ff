"""Size caps on folded constants: the evaluator computes what the analysed
code would (``"a" * n``, ``x + x``, f-strings, ``**``), and a few bytes of
source can ask for gigabytes (``"ab" * 4096`` doubled eighteen times: 1 GB).
A value over a cap is unknown, never built; each cap is well above what real
code folds (CUDA sources handed to load_inline are ~100 KB)."""

from __future__ import annotations

import re

MAX_STR = 1_000_000  # characters of a folded string (a CUDA source in load_inline is ~100 KB)
MAX_ITEMS = 100_000  # items of a folded tuple
MAX_INT_BITS = 1 << 16  # bits of a folded integer
MAX_WIDTH = 10_000  # a width or precision in a format spec ("{:>999999999}")

_DIGITS = re.compile(r"\d+")


def too_big(v) -> bool:
    """Is ``v`` a folded value over its cap (a str, tuple, int or PartialStr)?"""
    if isinstance(v, str):
        return len(v) > MAX_STR
    if isinstance(v, tuple):
        return len(v) > MAX_ITEMS
    if isinstance(v, int) and not isinstance(v, bool):
        return v.bit_length() > MAX_INT_BITS
    items = getattr(v, "items", None)  # a Seq (list, set)
    if isinstance(items, tuple) and len(items) > MAX_ITEMS:
        return True
    parts = getattr(v, "parts", None)
    if isinstance(parts, tuple):
        return sum(len(p) for p in parts if isinstance(p, str)) > MAX_STR
    return False


def repeat_fits(seq, n) -> bool:
    """``seq * n`` (a str or tuple) stays under its cap."""
    limit = MAX_STR if isinstance(seq, str) else MAX_ITEMS
    return isinstance(n, int) and len(seq) * max(n, 0) <= limit


def power_fits(a, b) -> bool:
    """``a ** b`` on integers stays under the integer cap (floats overflow by themselves)."""
    if not isinstance(a, int) or not isinstance(b, int) or b < 0:
        return True
    return a.bit_length() * b <= MAX_INT_BITS


def spec_fits(spec: str | None) -> bool:
    """A format spec (``>20``, ``.3f``) asks for no huge width or precision."""
    return not spec or all(len(d) <= 5 and int(d) <= MAX_WIDTH for d in _DIGITS.findall(spec))


_PRINTF = re.compile(r"%[-#0 +]*(\d*)(?:\.(\d*))?")


def printf_fits(fmt: str) -> bool:
    """A ``%`` format (``"%8.3f"``) asks for no huge width or precision."""
    return all(spec_fits(w) and spec_fits(p) for w, p in _PRINTF.findall(fmt))


def total_len(parts) -> int:
    return sum(len(p) for p in parts if isinstance(p, str))
