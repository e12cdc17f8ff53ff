"""Would a maintainer act on it? The seeded per-rule sample of unique TRUE findings (issue 30).

    TRIAGE_OUT=DIR python3 bench/usefulness.py

Reads the runs `bench/triage_run.py run` left in TRIAGE_OUT, keeps the findings judged TRUE in
bench/real_repos_verdicts.tsv, one per (path, line, code) over both fleets, and draws per rule
random.Random("useful:" + code).sample(sorted findings, min(8, n)) -- the sample stop 38 drew.
Each drawn finding is looked up in bench/real_repos_usefulness.tsv (USEFUL / NOT-USEFUL, judged by
reading the code); the table is printed only when every drawn finding is judged, else the
unjudged ones are listed (exit 1).
"""

from __future__ import annotations

import csv
import json
import os
import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import triage_run  # noqa: E402  (the verdict keys and paths, as the triage writes them)

USEFUL = Path(__file__).resolve().parent / "real_repos_usefulness.tsv"
PER_RULE = 8


def true_findings() -> dict[str, list[tuple[str, int]]]:
    verdicts = triage_run.load_verdicts()
    seen: dict[str, set] = {}
    for f in sorted(triage_run.OUT.glob("*.json")):
        name, fleet = f.name[:-5].rsplit(".", 1)
        data = json.loads(f.read_text())
        dirs = data.get("dirs") or []
        for d in data["diagnostics"]:
            path = triage_run._rel(d["path"], dirs)
            v = verdicts.get((fleet, path, d["line"], d["code"]))
            if v is not None and v["verdict"] == "TRUE":
                seen.setdefault(d["code"], set()).add((path, d["line"]))
    return {code: sorted(s) for code, s in sorted(seen.items())}


def load_useful() -> dict[tuple, str]:
    out = {}
    with USEFUL.open() as fh:
        for row in csv.DictReader((line for line in fh if not line.startswith("#")), delimiter="\t"):
            out[(row["code"], row["path"], int(row["line"]))] = row["verdict"]
    return out


def main() -> int:
    found = true_findings()
    judged = load_useful()
    rows, missing = [], []
    tot_n = tot_u = 0
    weighted = 0.0
    total = sum(len(v) for v in found.values())
    for code, items in found.items():
        drawn = random.Random(f"useful:{code}").sample(items, min(PER_RULE, len(items)))
        marks = [judged.get((code, p, line)) for p, line in drawn]
        missing += [(code, p, line) for (p, line), m in zip(drawn, marks) if m is None]
        useful = sum(m == "USEFUL" for m in marks)
        rows.append((code, len(items), len(drawn), useful))
        tot_n += len(drawn)
        tot_u += useful
        weighted += len(items) * useful / len(drawn)
    if missing:
        print(f"{len(missing)} drawn findings not judged in {USEFUL.name}:")
        for code, p, line in missing:
            print(f"  {code}\t{p}\t{line}")
        return 1
    print("| rule | unique TRUE | drawn | useful | share |")
    print("|---|---:|---:|---:|---:|")
    for code, n, k, u in rows:
        print(f"| {code} | {n} | {k} | {u} | {100 * u // k}% |")
    print(f"| all, pooled sample | {total} | {tot_n} | {tot_u} | {round(100 * tot_u / tot_n)}% "
          f"(about {round(100 * weighted / total)}% weighted by each rule's count) |")
    return 0


if __name__ == "__main__":
    os.environ.setdefault("TRIAGE_OUT", "/tmp/triage")
    sys.exit(main())
