"""Output formats. Every format reads the same diagnostics list."""

from __future__ import annotations

import json
import os
from collections import Counter
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from ..base.version import __version__

if TYPE_CHECKING:  # annotations only: the CLI imports this module for --help and --version
    from ..base.diagnostics import Diagnostic
    from ..matrix.target import ResolvedTarget


def printable(text: str) -> str:
    """``text`` safe to print on one line of a terminal or a CI log: control and
    format characters (newlines, ESC of terminal escape sequences, bidi
    overrides) and undecodable bytes of a file name are shown as Python escapes
    (a backslash itself is not escaped: Windows-style paths stay readable)."""
    return "".join(c if c.isprintable() or c == " " else _escape(c) for c in text)


_SHORT = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _escape(c: str) -> str:
    if c in _SHORT:
        return _SHORT[c]
    n = ord(c)
    return f"\\x{n:02x}" if n < 0x100 else f"\\u{n:04x}" if n < 0x10000 else f"\\U{n:08x}"


def printable_path(path: str) -> str:
    """A file name made printable, that also cannot start a line a CI runner reads
    as a command (``::error ...``, ``##[...]``, ``##vso[...]``): such a name is
    printed as ``./name``, the same file."""
    out = printable(path)
    return "./" + out if out[:1] in (":", "#", " ") else out


def location(d: Diagnostic) -> str:
    """``Diagnostic.location`` with the path made printable."""
    if d.cell is not None:
        return f"{printable_path(d.path)}:cell {d.cell}:{d.cell_line}:{d.column}"
    return f"{printable_path(d.path)}:{d.line}:{d.column}"


def summary(diags: list[Diagnostic], files: int, parsed: int, suppressed: int, skipped: int = 0,
            informational: list[str] | None = None) -> dict:
    """``informational``: the codes of findings that do not fail the run (AIC204 unless selected)."""
    return {
        "files": files,
        "files_parsed": parsed,
        "files_skipped": skipped,
        "diagnostics": len(diags),
        "suppressed": suppressed,
        "by_code": dict(sorted(Counter(d.code for d in diags).items())),
        "fixable": sum(1 for d in diags if d.fix is not None),
        "informational": sum(1 for d in diags if d.code in (informational or ())),
    }


def format_text(diags: list[Diagnostic], summ: dict, target: ResolvedTarget, notes: list[str]) -> str:
    # ``[*]``: --fix rewrites it (ruff's marker).
    lines = [f"{location(d)}: {d.code} {'[*] ' if d.fix is not None else ''}{printable(d.message)}" for d in diags]
    n, files = summ["diagnostics"], summ["files"]
    where = f"{files} file{'s' if files != 1 else ''}"
    idle = summ.get("files_skipped", 0)
    if idle:
        where += f", {idle} with nothing to check"
    if n:
        lines.append(f"Found {n} finding{'s' if n != 1 else ''} ({where}).")
    else:
        lines.append(f"All checks passed ({where}).")
    if summ.get("informational"):
        n = summ["informational"]
        lines.append(f"{n} of them {'is' if n == 1 else 'are'} informational (AIC204: a default that changed "
                     "inside the pinned range) and do not fail the run; --select AIC204 makes them count.")
    if summ.get("fixable"):
        lines.append(f"[*] {summ['fixable']} fixable with --fix (--diff shows the changes first).")
    if summ.get("suppressed"):
        lines.append(f"{summ['suppressed']} suppressed (noqa/ignore comments or the baseline).")
    lines.extend(f"note: {printable(note)}" for note in notes)  # notes name files of the checked tree
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
    text = printable(text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A"))  # ESC and the like too
    return text.replace(":", "%3A").replace(",", "%2C") if prop else text


def format_github(diags: list[Diagnostic], summ: dict, target: ResolvedTarget, notes: list[str]) -> str:
    """GitHub Actions workflow commands: one annotation per finding."""
    out = []
    for d in diags:
        level = "warning" if d.severity == "warning" else "error"
        line, col, end_line, end_col = d.file_region()  # a notebook's: in the .ipynb file
        props = (f"file={_gh_escape(d.path, True)},line={line},col={col},endLine={end_line},"
                 f"endColumn={end_col},title={_gh_escape(d.code + ' ' + d.rule, True)}")
        out.append(f"::{level} {props}::{_gh_escape(d.message)}")
    # Run-level notes (the default fleet, pins aicompat does not know): a notice each.
    out.extend(f"::notice title=aicompat::{_gh_escape(note)}" for note in notes)
    return "\n".join(out) + ("\n" if out else "")


def format_sarif(diags: list[Diagnostic], summ: dict, target: ResolvedTarget, notes: list[str]) -> str:
    """SARIF 2.1.0: one run, every rule described, results with physical locations."""
    from ..rules.registry import CODES
    from .ruledocs import load_docs

    docs = load_docs()
    rules: list[dict[str, Any]] = []
    index: dict[str, int] = {}
    for code, name in CODES.items():
        doc = docs.get(code)
        if doc is None:
            continue
        index[code] = len(rules)
        rules.append({
            "id": code,
            "name": name,
            "shortDescription": {"text": doc.summary.strip()},
            "fullDescription": {"text": " ".join(doc.what.split())},
            "help": {"text": doc.instead.strip(), "markdown": doc.instead.strip()},
            "defaultConfiguration": {"level": "error" if doc.severity == "error" else "warning"},
        })
    results = []
    for d in diags:
        line, col, end_line, end_col = d.file_region()  # a notebook's: in the .ipynb file
        if end_line < line or (end_line == line and end_col < col):
            end_line, end_col = line, col
        r: dict[str, Any] = {
            "ruleId": d.code,
            "level": "warning" if d.severity == "warning" else "error",
            "message": {"text": d.message},
            "locations": [{"physicalLocation": {
                "artifactLocation": {"uri": _uri(d.path)},
                # endColumn is on endLine: below the start line it may be left of startColumn.
                "region": {"startLine": line, "startColumn": col, "endLine": end_line, "endColumn": end_col},
            }}],
            "properties": {"targets": d.targets},
        }
        if d.code in index:
            r["ruleIndex"] = index[d.code]
        if d.cell is not None:
            r["properties"].update(cell=d.cell, cell_line=d.cell_line, cell_column=d.column)
        results.append(r)
    log = {
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {"name": "aicompat", "version": __version__, "rules": rules,
                                "informationUri": "https://pypi.org/project/aicompat/"}},
            "results": results,
            "properties": {"target": target.as_json(), "notes": notes},
        }],
    }
    return json.dumps(log, indent=2) + "\n"


FORMATTERS = {"text": format_text, "json": format_json, "github": format_github, "sarif": format_sarif}


def statistics(diags: list[Diagnostic]) -> str:
    """Counts per rule, most frequent first, and how many of each --fix rewrites (``--statistics``)."""
    counts = Counter((d.code, d.rule) for d in diags)
    fixable = Counter(d.code for d in diags if d.fix is not None)
    rows = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
    out = []
    for (code, rule), n in rows:
        mark = "[*]" if fixable[code] == n else f"[{fixable[code]} fixable]" if fixable[code] else ""
        out.append(f"{n:5d}  {code}  {rule}{' ' + mark if mark else ''}\n")
    total = sum(fixable.values())
    if total:
        out.append(f"[*] {total} fixable with --fix.\n")
    return "".join(out)


def show_fixes(diags: list[Diagnostic]) -> str:
    """What --fix would write, finding by finding (``--show-fixes``)."""
    out = []
    for d in diags:
        if d.fix is not None:
            out.append(f"fix: {location(d)}: {d.code}: replace {d.line}:{d.column}-{d.end_line}:{d.end_column} "
                       f"with {printable(d.fix)}\n")
    return "".join(out)


def _uri(path: str) -> str:
    """A SARIF artifact uri is a URI reference: a name with spaces, '#', '?', '%', ':' or
    non-ASCII letters is percent-encoded (RFC 3986), as viewers resolve it against the run's root.
    A name that is not valid UTF-8 (its bytes kept as surrogates) is encoded as its own bytes; a
    backslash is a separator only where the OS says so (on POSIX it is part of the name)."""
    if os.sep == "\\" or os.altsep == "\\":
        path = path.replace("\\", "/")
    try:
        raw = path.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:  # a lone surrogate a Windows name may hold
        raw = path.encode("utf-8", "surrogatepass")
    return quote(raw, safe="/")
