"""Suppression comments: ``# noqa``, ``# noqa: AIC101``,
``# aicompat: ignore[AIC101]`` on a finding's first or last line; ``# aicompat: ignore-file``
anywhere in a file (the file is not checked) and ``# aicompat: ignore-file[AIC104]`` (only
those codes, in the whole file). A code no rule has in ``ignore-file[...]`` is an error
(AIC003): a typo there would silently leave the finding it meant in, or, read as "every
code", hide all the others. Unknown and unused AIC codes on a line are warnings only when
asked for (AIC004, like ruff's RUF100); codes of other tools (``# noqa: E501``) are theirs."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ..base.diagnostics import Diagnostic

_NOQA = re.compile(r"(?:#|//)\s*noqa(?::\s*(?P<codes>[A-Z]+[0-9]+(?:[\s,]+[A-Z]+[0-9]+)*))?", re.I)
_IGNORE = re.compile(r"(?:#|//)\s*aicompat:\s*ignore(?:\[(?P<codes>[A-Z0-9,\s]+)\])?(?!-)", re.I)
# The whole file, unchecked: a bare ``ignore-file`` (the byte search the prefilter makes).
IGNORE_FILE = re.compile(rb"(?:#|//)\s*aicompat:\s*ignore-file\b(?!\s*\[)")
_IGNORE_FILE_CODES = re.compile(r"(?:#|//)\s*aicompat:\s*ignore-file\s*\[(?P<codes>[^\]\r\n]*)\]", re.I)
_AIC_CODE = re.compile(r"AIC\d+", re.I)
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


@dataclass
class Comments:
    """What a file's suppression comments say: the codes ``ignore-file[...]`` silences in the
    whole file, and the AIC codes each comment names (for AIC003/AIC004)."""

    file_codes: set[str] = field(default_factory=set)
    # (line, column, code, "file" | "line") of every AIC code a suppression comment names
    named: list[tuple[int, int, str, str]] = field(default_factory=list)


def read_comments(lines: list[str]) -> Comments:
    out = Comments()
    for n, line in enumerate(lines, 1):
        if "aicompat" not in line and "noqa" not in line.lower():
            continue
        for m in _IGNORE_FILE_CODES.finditer(line):
            for c in re.finditer(r"[^\s,]+", m.group("codes")):
                out.file_codes.add(c.group().upper())
                out.named.append((n, m.start("codes") + c.start() + 1, c.group().upper(), "file"))
        for rx in (_NOQA, _IGNORE):
            for m in rx.finditer(line):
                codes = m.group("codes")
                if codes:
                    for c in re.finditer(r"[^\s,]+", codes):
                        if _AIC_CODE.fullmatch(c.group()):
                            out.named.append((n, m.start("codes") + c.start() + 1, c.group().upper(), "line"))
    return out


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


@dataclass
class Checks:
    """Which of the comment checks run, and the codes they judge against."""

    known: frozenset = frozenset()  # every code aicompat has
    bad_file_codes: bool = False  # AIC003: an unknown code in ignore-file[...]
    unused: bool = False  # AIC004: unknown or unused AIC codes (opt-in)
    ran: frozenset = frozenset()  # the codes whose rules ran: only they can be unused


def apply(diags: list[Diagnostic], text: str, path: str = "",
          checks: Checks | None = None) -> tuple[list[Diagnostic], list[Diagnostic]]:
    """Split into (kept, suppressed); with ``checks``, the comments' own findings are kept."""
    if "#" not in text and "//" not in text:
        return diags, []
    lines = source_lines(text)
    comments = read_comments(lines) if "aicompat" in text or (checks and checks.unused) else Comments()
    kept: list[Diagnostic] = []
    dropped: list[Diagnostic] = []
    memo: dict = {}
    for d in diags:
        hidden = d.code not in NEVER_SUPPRESSED and d.code in comments.file_codes
        (dropped if hidden or is_suppressed(d, lines, memo) else kept).append(d)
    if checks is not None:
        kept += _comment_findings(comments, dropped, path, checks)
    return kept, dropped


def _comment_findings(comments: Comments, dropped: list[Diagnostic], path: str, checks: Checks) -> list[Diagnostic]:
    out = []
    for line, col, code, where in comments.named:
        end = col + len(code)
        if code not in checks.known:
            if where == "file" and checks.bad_file_codes:
                out.append(Diagnostic(path, line, col, line, end, "AIC003", "bad-suppression", "error",
                                      f"ignore-file[{code}]: no rule has the code {code}, so it hides nothing; "
                                      f"name a code `aicompat rules` lists, or remove it", []))
            elif where == "line" and checks.unused:
                out.append(Diagnostic(path, line, col, line, end, "AIC004", "unused-suppression", "warning",
                                      f"{code}: no rule has this code, so it suppresses nothing here; fix the code "
                                      f"or remove it", []))
            continue
        if not checks.unused or code not in checks.ran:
            continue
        used = any(d.code == code and (where == "file" or line in (d.line, d.end_line)) for d in dropped)
        if not used:
            scope = "in this file" if where == "file" else "on this line"
            out.append(Diagnostic(path, line, col, line, end, "AIC004", "unused-suppression", "warning",
                                  f"{code}: no {code} finding {scope} to suppress; remove the code", []))
    return out
