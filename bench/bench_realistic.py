"""Recall and false alarms on code written the way real repositories write it.

    python bench/bench_realistic.py [--json PATH] [--corpus DIR]

Lints every case of tests/realistic/cases.toml (a failing file and its fixed
twin) against the case's GPUs and pins, through the public API, and prints a
Markdown table:

- recall: expected (code, line) findings found / expected, overall and per
  form (the indirection a case exercises: config dict, helper parameter, ...);
- false alarms: every (code, line) reported in an ok_ twin, plus those
  reported in a fail_ file that the case does not expect.

Findings are compared as (code, line) pairs: two findings of one rule on one
line count once. A package case (fail_<name>/ and ok_<name>/ folders, linted as
a whole) compares (code, file, line) with file relative to the case folder. Not run in CI; tests/test_realistic.py pins the same numbers
case by case.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "src"))

from aicompat import Target, lint_paths  # noqa: E402
from aicompat.base.toml_compat import tomllib  # noqa: E402

CORPUS = HERE.parent / "tests" / "realistic"


@dataclass
class CaseResult:
    name: str
    form: str
    expected: set[tuple]  # (code, line), or (code, file, line) for a package case
    found: set[tuple]  # reported in the fail_ file
    twin_found: set[tuple]  # reported in the ok_ twin
    messages: dict[str, list[str]] = field(default_factory=dict)

    @property
    def hits(self) -> set[tuple]:
        return self.expected & self.found

    @property
    def misses(self) -> set[tuple]:
        return self.expected - self.found

    @property
    def unexpected(self) -> set[tuple]:
        return self.found - self.expected


def load_cases(corpus: Path = CORPUS) -> list[dict]:
    with open(corpus / "cases.toml", "rb") as f:
        return tomllib.load(f)["case"]


def findings(path: Path, case: dict) -> tuple[set[tuple], list[str]]:
    """(code, line) pairs aicompat reports for ``path`` on the case's target (for a package
    folder (code, file, line), file relative to it), and the messages."""
    target = Target(gpus=list(case["gpus"]), pins=dict(case.get("pins", {})))
    diags = lint_paths([path], target, use_config=False)
    if path.is_dir():
        rel = [Path(d.path).resolve().relative_to(path.resolve()).as_posix() for d in diags]
        return ({(d.code, r, d.line) for d, r in zip(diags, rel)},
                [f"{d.code} {r}:L{d.line}: {d.message}" for d, r in zip(diags, rel)])
    return {(d.code, d.line) for d in diags}, [f"{d.code} L{d.line}: {d.message}" for d in diags]


def expected_of(case: dict, corpus: Path = CORPUS) -> set[tuple]:
    if (corpus / case["file"]).is_dir():
        return {(e["code"], e["file"], e["line"]) for e in case["expect"]}
    return {(e["code"], e["line"]) for e in case["expect"]}


def run_case(case: dict, corpus: Path = CORPUS) -> CaseResult:
    found, fail_msgs = findings(corpus / case["file"], case)
    twin_found, twin_msgs = findings(corpus / case["twin"], case)
    expected = expected_of(case, corpus)
    name = case["file"].removeprefix("fail_").removesuffix(".py")
    return CaseResult(name, case["form"], expected, found, twin_found, {"fail": fail_msgs, "twin": twin_msgs})


def summarize(results: list[CaseResult]) -> dict:
    expected = sum(len(r.expected) for r in results)
    hits = sum(len(r.hits) for r in results)
    forms: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for r in results:
        forms[r.form][0] += len(r.hits)
        forms[r.form][1] += len(r.expected)
    return {
        "cases": len(results),
        "expected": expected,
        "found": hits,
        "recall": hits / expected if expected else 0.0,
        "false_alarms_twins": sum(len(r.twin_found) for r in results),
        "false_alarms_fail_unexpected": sum(len(r.unexpected) for r in results),
        "twins_with_false_alarms": sum(1 for r in results if r.twin_found),
        "per_form": {f: {"found": h, "expected": n, "recall": h / n} for f, (h, n) in sorted(forms.items())},
        "cases_detail": [
            {
                "case": r.name,
                "form": r.form,
                "missed": sorted(map(list, r.misses)),
                "unexpected_in_fail": sorted(map(list, r.unexpected)),
                "twin_false_alarms": sorted(map(list, r.twin_found)),
                "messages": r.messages,
            }
            for r in results
        ],
    }


def markdown(s: dict) -> str:
    lines = [
        "| metric | value |",
        "|---|---|",
        f"| cases (fail/ok pairs) | {s['cases']} |",
        f"| recall | {s['found']}/{s['expected']} = {s['recall']:.0%} |",
        f"| false alarms in ok_ twins | {s['false_alarms_twins']} ({s['twins_with_false_alarms']} twins) |",
        f"| unexpected findings in fail_ files | {s['false_alarms_fail_unexpected']} |",
        "",
        "| form | found / expected | recall |",
        "|---|---|---|",
    ]
    lines += [f"| {f} | {v['found']}/{v['expected']} | {v['recall']:.0%} |" for f, v in s["per_form"].items()]
    lines += ["", "| case | form | missed | unexpected in fail | false alarms in twin |", "|---|---|---|---|---|"]
    for c in s["cases_detail"]:
        if c["missed"] or c["unexpected_in_fail"] or c["twin_false_alarms"]:
            fmt = lambda keys: ", ".join(  # noqa: E731
                f"{k[0]} {k[1]}:L{k[2]}" if len(k) == 3 else f"{k[0]} L{k[1]}" for k in keys) or "-"
            lines.append(f"| {c['case']} | {c['form']} | {fmt(c['missed'])} | {fmt(c['unexpected_in_fail'])} | "
                         f"{fmt(c['twin_false_alarms'])} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--json", metavar="PATH", help="write the numbers (and each case's findings) as JSON")
    ap.add_argument("--corpus", metavar="DIR", default=str(CORPUS), help="folder holding cases.toml")
    args = ap.parse_args(argv)
    corpus = Path(args.corpus)
    summary = summarize([run_case(c, corpus) for c in load_cases(corpus)])
    print(markdown(summary))
    if args.json:
        Path(args.json).write_text(json.dumps(summary, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
