"""Suppression comments: ``# noqa``, ``# noqa: AIC101``,
``# aicompat: ignore[AIC101]`` on a finding's first or last line, and
``# aicompat: ignore-file`` anywhere in a file's leading comments or body."""

from __future__ import annotations

import re

from ..base.diagnostics import Diagnostic

_NOQA = re.compile(r"(?:#|//)\s*noqa(?::\s*(?P<codes>[A-Z]+[0-9]+(?:[\s,]+[A-Z]+[0-9]+)*))?", re.I)
_IGNORE = re.compile(r"(?:#|//)\s*aicompat:\s*ignore(?:\[(?P<codes>[A-Z0-9,\s]+)\])?(?!-)", re.I)
IGNORE_FILE = re.compile(rb"(?:#|//)\s*aicompat:\s*ignore-file\b")
# An internal error (AIC000) or a per-file limit (AIC002) says the run is
# incomplete: no comment in the checked file (a bare ``# noqa`` after
# ``import torch`` is common) and no baseline may hide that.
NEVER_SUPPRESSED = frozenset({"AIC000", "AIC002"})
# Line breaks as Python (and LibCST, whose line numbers findings carry) counts them:
# str.splitlines also breaks on \f, \v, \x1c-\x1e, \x85, \u2028 and \u2029, so one of
# those in a comment moved every later line, and its ``# noqa``, by one.
_BREAK = re.compile(r"\r\n|\r|\n")


def source_lines(text: str) -> list[str]:
    """``text`` split into lines without their breaks, numbered as Python numbers them."""
    lines = _BREAK.split(text)
    if lines and not lines[-1]:
        lines.pop()  # the break ending the last line starts no line
    return lines


def _codes_on(line: str) -> set[str] | None:
    """None: nothing suppressed; empty set: everything; else those codes."""
    found: set[str] | None = None
    for rx in (_NOQA, _IGNORE):
        for m in rx.finditer(line):
            codes = m.group("codes")
            if not codes:
                return set()
            found = (found or set()) | {c.upper() for c in re.split(r"[\s,]+", codes) if c}
    return found


def is_suppressed(d: Diagnostic, lines: list[str], memo: dict | None = None) -> bool:
    if d.code in NEVER_SUPPRESSED:
        return False
    memo = {} if memo is None else memo
    for ln in {d.line, d.end_line}:
        if 1 <= ln <= len(lines):
            if ln not in memo:  # each line read once, however many findings it has
                memo[ln] = _codes_on(lines[ln - 1])
            codes = memo[ln]
            if codes is not None and (not codes or d.code in codes):
                return True
    return False


def apply(diags: list[Diagnostic], text: str) -> tuple[list[Diagnostic], list[Diagnostic]]:
    """Split into (kept, suppressed)."""
    if not diags:
        return [], []
    if "#" not in text and "//" not in text:
        return diags, []
    lines = source_lines(text)
    kept, dropped = [], []
    memo: dict = {}
    for d in diags:
        (dropped if is_suppressed(d, lines, memo) else kept).append(d)
    return kept, dropped
