"""--fix and --diff: apply the replacements rules attach to their findings.

Edits are spliced into the original text (so formatting and comments stay as
they were), the result must still parse, and a second run finds nothing left
to fix (the rules only offer a fix that removes their own finding).
"""

from __future__ import annotations

import difflib

import libcst as cst

from .diagnostics import Diagnostic


def apply_fixes(text: str, diags: list[Diagnostic]) -> str:
    starts = [0]
    for line in text.splitlines(keepends=True):
        starts.append(starts[-1] + len(line))

    def offset(line: int, col: int) -> int:
        return starts[line - 1] + col - 1

    edits = []
    for d in diags:
        if d.fix is None or d.cell is not None:
            continue
        edits.append((offset(d.line, d.column), offset(d.end_line, d.end_column), d.fix))
    out, last = text, None
    for start, end, new in sorted(set(edits), reverse=True):
        if last is not None and end > last:
            continue  # overlapping edits: keep the later one, the next run takes the rest
        out = out[:start] + new + out[end:]
        last = start
    return out


def fixed_source(path: str, diags: list[Diagnostic]) -> tuple[str, str] | None:
    """(old text, new text) for a Python file, or None when nothing applies or the result would not parse."""
    if not any(d.fix for d in diags) or not path.endswith((".py", ".pyi")):
        return None
    with open(path, encoding="utf-8") as fh:
        old = fh.read()
    new = apply_fixes(old, diags)
    if new == old:
        return None
    try:
        cst.parse_module(new)
    except cst.ParserSyntaxError:
        return None
    return old, new


def unified_diff(path: str, old: str, new: str) -> str:
    return "".join(difflib.unified_diff(old.splitlines(keepends=True), new.splitlines(keepends=True),
                                        fromfile=f"a/{path}", tofile=f"b/{path}"))
