"""Output formats. Every format reads the same diagnostics list."""

from __future__ import annotations

import json
from collections import Counter

from .diagnostics import Diagnostic
from .target import ResolvedTarget


def summary(diags: list[Diagnostic], files: int, parsed: int, suppressed: int, skipped: int = 0) -> dict:
    return {
        "files": files,
        "files_parsed": parsed,
        "files_skipped": skipped,
        "diagnostics": len(diags),
        "suppressed": suppressed,
        "by_code": dict(sorted(Counter(d.code for d in diags).items())),
    }


def format_text(diags: list[Diagnostic], summ: dict, target: ResolvedTarget, notes: list[str]) -> str:
    lines = [f"{d.path}:{d.line}:{d.column}: {d.code} {d.message}" for d in diags]
    n, files = summ["diagnostics"], summ["files"]
    where = f"{files} file{'s' if files != 1 else ''}"
    idle = summ.get("files_skipped", 0)
    if idle:
        where += f", {idle} with nothing to check"
    if n:
        lines.append(f"Found {n} finding{'s' if n != 1 else ''} ({where}).")
    else:
        lines.append(f"All checks passed ({where}).")
    if summ.get("suppressed"):
        lines.append(f"{summ['suppressed']} suppressed by noqa comments.")
    lines.extend(f"note: {note}" for note in notes)
    return "\n".join(lines) + "\n"


def format_json(diags: list[Diagnostic], summ: dict, target: ResolvedTarget, notes: list[str]) -> str:
    doc = {
        "diagnostics": [d.as_json() for d in diags],
        "summary": summ,
        "target": target.as_json(),
        "notes": notes,
    }
    return json.dumps(doc, indent=2) + "\n"


FORMATTERS = {"text": format_text, "json": format_json}
