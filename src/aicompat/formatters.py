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
    lines = [f"{d.location()}: {d.code} {d.message}" for d in diags]
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
        lines.append(f"{summ['suppressed']} suppressed (noqa/ignore comments or the baseline).")
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


def _gh_escape(text: str, prop: bool = False) -> str:
    text = text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
    return text.replace(":", "%3A").replace(",", "%2C") if prop else text


def format_github(diags: list[Diagnostic], summ: dict, target: ResolvedTarget, notes: list[str]) -> str:
    """GitHub Actions workflow commands: one annotation per finding."""
    out = []
    for d in diags:
        level = "warning" if d.severity == "warning" else "error"
        props = (f"file={_gh_escape(d.path, True)},line={d.line},col={d.column},endLine={d.end_line},"
                 f"endColumn={d.end_column},title={_gh_escape(d.code + ' ' + d.rule, True)}")
        out.append(f"::{level} {props}::{_gh_escape(d.message)}")
    return "\n".join(out) + ("\n" if out else "")


FORMATTERS = {"text": format_text, "json": format_json, "github": format_github}


def statistics(diags: list[Diagnostic]) -> str:
    """Counts per rule, most frequent first (``--statistics``)."""
    counts = Counter((d.code, d.rule) for d in diags)
    rows = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
    return "".join(f"{n:5d}  {code}  {rule}\n" for (code, rule), n in rows)
