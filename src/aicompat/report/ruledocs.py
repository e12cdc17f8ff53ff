"""Rule documentation, read from rules/AICxxx.toml (what it does, why it
matters, an example, what to use instead), for ``aicompat rules``/``explain``.

The example is a complete program with the target it is checked on
(``example_target``) and the exact findings aicompat reports for it
(``example_findings``); ``fixed`` is its corrected twin, which has none.
tests/test_rule_docs.py runs what ``explain`` prints through the CLI."""

from __future__ import annotations

import shlex
from dataclasses import dataclass, field
from pathlib import Path

from ..base.data import data_dir
from ..base.errors import MatrixError
from ..base.toml_compat import tomllib

FIELDS = ("code", "name", "summary", "severity", "what", "why", "example", "fixed", "instead")
EXAMPLE_FILE = "example.py"  # the name findings are shown under


@dataclass
class RuleDoc:
    code: str
    name: str
    summary: str
    severity: str
    what: str
    why: str
    example: str
    fixed: str
    instead: str
    notes: str = ""
    facts: str = ""
    # gpus (list), pins (requirement strings, as for --pin), python, extend_select (codes): the CLI
    # flags it is checked with
    example_target: dict = field(default_factory=dict)
    example_findings: list[dict] = field(default_factory=list)  # {line, column, message}
    # {line, times}: the example stands for a file with that line repeated (AIC002: a file too large to show)
    example_repeat: dict = field(default_factory=dict)

    def lint_args(self) -> list[str]:
        """The ``aicompat lint`` flags of the example's target."""
        t = self.example_target
        args: list[str] = []
        for gpu in t.get("gpus", []):
            args += ["--gpu", gpu]
        for pin in t.get("pins", []):
            args += ["--pin", pin]
        if "python" in t:
            args += ["--python", t["python"]]
        for code in t.get("extend_select", []):  # an opt-in rule's example names it (AIC004)
            args += ["--extend-select", code]
        return args

    def program(self) -> str:
        """The file the example stands for (``example_repeat`` applied)."""
        rep, text = self.example_repeat, self.example
        if not rep:
            return text
        lines = text.splitlines(keepends=True)
        i = rep["line"] - 1
        return "".join(lines[:i] + lines[i:i + 1] * rep["times"] + lines[i + 1:])


def load_docs(directory: Path | None = None) -> dict[str, RuleDoc]:
    directory = directory or data_dir("rules")
    docs: dict[str, RuleDoc] = {}
    for path in sorted(directory.glob("AIC*.toml")):
        with open(path, "rb") as fh:
            doc = tomllib.load(fh)
        missing = [f for f in FIELDS if not isinstance(doc.get(f), str) or not doc[f].strip()]
        if missing:
            raise MatrixError(f"rules/{path.name}: missing {', '.join(missing)}")
        _check_example(path, doc)
        docs[doc["code"]] = RuleDoc(**{k: doc.get(k, "") for k in (*FIELDS, "notes", "facts")},
                                    example_target=doc.get("example_target", {}),
                                    example_findings=doc.get("example_findings", []),
                                    example_repeat=doc.get("example_repeat", {}))
    return docs


def _check_example(path: Path, doc: dict) -> None:
    findings = doc.get("example_findings")
    if not findings or not all(isinstance(f, dict) and isinstance(f.get("line"), int)
                               and isinstance(f.get("column"), int) and isinstance(f.get("message"), str)
                               and isinstance(f.get("fixable", False), bool)
                               for f in findings):
        raise MatrixError(f"rules/{path.name}: example_findings must list the example's findings "
                          "({line, column, message})")
    target = doc.get("example_target", {})
    if set(target) - {"gpus", "pins", "python", "extend_select"}:
        raise MatrixError(f"rules/{path.name}: example_target takes gpus, pins, python, extend_select")


def _transcript(doc: RuleDoc, code: str, findings: list[dict], repeat: dict) -> list[str]:
    """The program, the command that checks it, and what that prints."""
    out = [code.rstrip(), ""]
    if repeat:
        out.append(f"(line {repeat['line']} repeated {repeat['times']} times)")
    out.append("$ " + shlex.join(["aicompat", "lint", *doc.lint_args(), EXAMPLE_FILE]))
    # ``fixable = true``: --fix rewrites it, and the text output marks it ``[*]``.
    out += [f"{EXAMPLE_FILE}:{f['line']}:{f['column']}: {doc.code} {'[*] ' if f.get('fixable') else ''}{f['message']}"
            for f in findings]
    return out


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
        *_transcript(doc, doc.example, doc.example_findings, doc.example_repeat),
        "",
        "## Fixed",
        *_transcript(doc, doc.fixed, [], {}),
        "(no findings)",
        "",
        "## Use instead",
        doc.instead.rstrip(),
    ]
    if doc.notes.strip():
        parts += ["", "## Notes", doc.notes.strip()]
    if facts:
        parts += ["", "## Facts (version_matrix)", facts.rstrip()]
    return "\n".join(parts) + "\n"
