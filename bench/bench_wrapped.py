"""How many of the rules' own INVALID examples are still found when their code sits in a branch
on an optional parameter of a function nothing calls (issue 27 item 1's form):

    def _entry(flag=None):
        if flag is not None:
            <the example's module-level statements>

Imports, functions and classes stay at module level; every other top-level statement moves into
the branch. An example counts as found when the wrapped code still has a finding of the
example's own rule. Runs the tree given by --src in a subprocess; prints per-rule and total
counts. This is the project's own corpus (the examples), not a held-out one.

    python3 bench/bench_wrapped.py [--src SRC]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

_PROBE = r'''
import ast, json, sys, textwrap
from aicompat import Target, lint_source
from aicompat.rules.registry import RULE_CLASSES

KEEP = (ast.Import, ast.ImportFrom, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


def wrapped(code):
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return None
    lines = code.splitlines()
    # Constants the module's own functions read stay at module level too (CKPT = 'run/last.pt').
    used = {n.id for node in tree.body if isinstance(node, KEEP[2:]) for n in ast.walk(node) if isinstance(n, ast.Name)}
    top, moved = [], []
    for node in tree.body:
        start = (node.decorator_list[0].lineno if getattr(node, "decorator_list", None) else node.lineno) - 1
        text = "\n".join(lines[start:node.end_lineno])
        const = isinstance(node, ast.Assign) and all(isinstance(t, ast.Name) and t.id in used for t in node.targets)
        (top if isinstance(node, KEEP) or const else moved).append(text)
    if not moved:
        return None
    body = textwrap.indent("\n".join(moved), "        ")
    return "\n".join(top) + "\n\n\ndef _entry(flag=None):\n    if flag is not None:\n" + body + "\n"


out = []
for cls in sorted(RULE_CLASSES, key=lambda c: c.code):
    for i, ex in enumerate(cls.INVALID):
        if not ex.findings:
            continue
        code = wrapped(ex.code)
        if code is None:
            continue
        t = Target(gpus=list(ex.gpus), python=ex.python, pins=dict(ex.pins))
        plain = any(d.code == cls.code for d in lint_source(ex.code, target=t))
        hit = any(d.code == cls.code for d in lint_source(code, target=t))
        out.append([cls.code, i, plain, hit])
json.dump(out, sys.stdout)
'''


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--src", default=str(ROOT / "src"))
    args = ap.parse_args()
    env = dict(os.environ, PYTHONPATH=os.path.abspath(args.src))
    r = subprocess.run([sys.executable, "-c", _PROBE], env=env, capture_output=True, text=True, check=True)
    rows = json.loads(r.stdout)
    by: dict[str, list[int]] = {}
    for code, _i, plain, hit in rows:
        if not plain:
            continue  # the example alone is not found on this tree: nothing to compare
        c = by.setdefault(code, [0, 0])
        c[0] += 1
        c[1] += hit
    print("| rule | examples | found when wrapped |")
    print("|---|---|---|")
    for code, (n, hit) in sorted(by.items()):
        print(f"| {code} | {n} | {hit} |")
    n = sum(v[0] for v in by.values())
    hit = sum(v[1] for v in by.values())
    print(f"| all | {n} | {hit} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
