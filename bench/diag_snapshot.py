"""Every diagnostic aicompat gives on the project's own inputs, as one JSON document, so that
two trees (before and after a refactor) can be compared byte for byte.

    python3 bench/diag_snapshot.py OUT.json [--src SRC]

Inputs: `aicompat lint` (one process, no cache, no config, --format json) of fixtures/ and of
tests/realistic/, each on two fleets (A100+H100, H100+B200); and every rule's VALID and
INVALID example through `lint_source` with the example's own target. Paths are made
relative and the run's timing fields dropped; nothing else is normalized. SRC (default: this
checkout's src/) is the tree whose aicompat runs.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FLEETS = {"A100+H100": ["A100", "H100"], "H100+B200": ["H100", "B200"]}

_EXAMPLES = """
import json, sys
from aicompat import Target, lint_source
try:
    from aicompat.rules.registry import RULE_CLASSES
except ImportError:
    from aicompat.rules import RULE_CLASSES
out = []
for cls in sorted(RULE_CLASSES, key=lambda c: c.code):
    for kind in ("VALID", "INVALID"):
        for i, ex in enumerate(getattr(cls, kind)):
            t = Target(gpus=list(ex.gpus), python=ex.python, pins=dict(ex.pins))
            ds = lint_source(ex.code, target=t)
            out.append([cls.code, kind, i, [[d.code, d.line, d.column, d.end_line, d.end_column, d.severity,
                                             d.message, list(d.targets)] for d in ds]])
json.dump(out, sys.stdout)
"""


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--src", default=str(ROOT / "src"))
    args = ap.parse_args()
    env = dict(os.environ, PYTHONPATH=args.src)
    doc: dict = {}
    for name in ("fixtures", "tests/realistic"):
        for fleet, gpus in FLEETS.items():
            cmd = [sys.executable, "-m", "aicompat", "lint", name, "--format", "json", "--no-cache", "--no-config",
                   "--jobs", "1", "--exit-zero"]
            for g in gpus:
                cmd += ["--gpu", g]
            r = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=3600)
            got = json.loads(r.stdout)
            doc[f"{name} {fleet}"] = {"exit": r.returncode, "diagnostics": got["diagnostics"],
                                      "summary": {k: v for k, v in got.get("summary", {}).items()
                                                  if "second" not in k and "time" not in k}}
    r = subprocess.run([sys.executable, "-c", _EXAMPLES], cwd=ROOT, env=env, capture_output=True, text=True,
                       timeout=3600)
    if r.returncode:
        print(r.stderr, file=sys.stderr)
        return 1
    doc["rule examples"] = json.loads(r.stdout)
    Path(args.out).write_text(json.dumps(doc, indent=1, sort_keys=True))
    n = sum(len(v["diagnostics"]) for k, v in doc.items() if k != "rule examples")
    print(f"{args.out}: {n} diagnostics on fixtures/ and tests/realistic/, {len(doc['rule examples'])} rule examples")
    return 0


if __name__ == "__main__":
    sys.exit(main())
