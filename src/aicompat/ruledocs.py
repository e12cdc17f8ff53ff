"""Rule documentation, read from rules/AICxxx.toml (what it does, why it
matters, an example, what to use instead), for ``aicompat rules``/``explain``."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from .data import data_dir
from .errors import MatrixError
from .toml_compat import tomllib

FIELDS = ("code", "name", "summary", "severity", "what", "why", "example", "instead")


@dataclass
class RuleDoc:
    code: str
    name: str
    summary: str
    severity: str
    what: str
    why: str
    example: str
    instead: str
    notes: str = ""
    facts: str = ""


def load_docs(directory: Path | None = None) -> dict[str, RuleDoc]:
    directory = directory or data_dir("rules")
    docs: dict[str, RuleDoc] = {}
    for path in sorted(directory.glob("AIC*.toml")):
        with open(path, "rb") as fh:
            doc = tomllib.load(fh)
        missing = [f for f in FIELDS if not isinstance(doc.get(f), str) or not doc[f].strip()]
        if missing:
            raise MatrixError(f"rules/{path.name}: missing {', '.join(missing)}")
        docs[doc["code"]] = RuleDoc(**{k: doc.get(k, "") for k in (*FIELDS, "notes", "facts")})
    return docs


def render(doc: RuleDoc, facts: str = "") -> str:
    parts = [
        f"{doc.code} {doc.name} ({doc.severity})",
        "",
        doc.summary.strip(),
        "",
        "## What it does",
        doc.what.strip(),
        "",
        "## Why it matters",
        doc.why.strip(),
        "",
        "## Example",
        doc.example.rstrip(),
        "",
        "## Use instead",
        doc.instead.rstrip(),
    ]
    if doc.notes.strip():
        parts += ["", "## Notes", doc.notes.strip()]
    if facts:
        parts += ["", "## Facts (version_matrix)", facts.rstrip()]
    return "\n".join(parts) + "\n"
