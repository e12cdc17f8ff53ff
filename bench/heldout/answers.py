"""Score aicompat on the held-out corpus of generated answers.

Standard library only.  Steps:

1. verify bench/heldout/answers.sha256 against bench/heldout/answers/ (the
   answers were frozen before any lint ran; a changed file stops the run);
2. for each [[answer]] in bench/heldout/answers.toml, lint its file or folder
   with ``python3 -m aicompat lint --no-cache --no-config -j 1 --format json``
   from the tree given by ``--src`` (default /work/base27/src), with the
   answer's fleet as --gpu and its pins as --pin/--python/--cuda;
3. match findings to the manifest's knowable defects by line (a finding on a
   defect's line, or within --slack lines of it, counts as found) and count
   findings on no defect line as false alarms;
4. print per-answer rows and per-half totals (recall over knowable defects,
   false alarms per file).  --check compares the numbers with the manifest's
   baseline_found / baseline_false (meaningful for the baseline tree only).

Line matching is how the manifest's verdicts were made too, except that the
manifest records a verdict per finding by hand; a finding judged "unjudged"
is counted neither way.  With --src other than the baseline the script
cannot know verdicts of new findings, so it uses the line rule alone.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import tomllib

HERE = Path(__file__).resolve().parent
ANSWERS = HERE / "answers"
MANIFEST = HERE / "answers.toml"
SUMS = HERE / "answers.sha256"


def verify_checksums() -> list[str]:
    bad = []
    listed = set()
    for line in SUMS.read_text().splitlines():
        digest, name = line.split(maxsplit=1)
        name = name.strip()
        listed.add(name)
        path = ANSWERS / name
        if not path.is_file():
            bad.append(f"missing {name}")
            continue
        if hashlib.sha256(path.read_bytes()).hexdigest() != digest:
            bad.append(f"changed {name}")
    for path in sorted(ANSWERS.rglob("*")):
        if path.is_file() and "./" + path.relative_to(ANSWERS).as_posix() not in listed:
            bad.append(f"unlisted {path.relative_to(ANSWERS)}")
    return bad


def lint_args(answer: dict, fleet: list[str]) -> list[str]:
    args = ["--gpu", ",".join(fleet)]
    for pin in answer.get("pins", []):
        name = pin.split("=")[0].split(">")[0].split("<")[0].strip().lower()
        if name == "python":
            args += ["--python", pin.split("==")[1]]
        elif name == "cuda":
            args += ["--cuda", pin.split("==")[1]]
        elif name == "cmake":
            continue
        else:
            args += ["--pin", pin]
    return args


def run_lint(src: str, answer: dict, fleet: list[str], timeout: int) -> tuple[list[dict], str]:
    env = dict(os.environ, PYTHONPATH=src)
    cmd = [sys.executable, "-m", "aicompat", "lint", "--no-cache", "--no-config",
           "-j", "1", "--exit-zero", "--format", "json", *lint_args(answer, fleet), answer["path"]]
    if hasattr(os, "nice"):
        cmd = ["nice", *cmd]
    proc = subprocess.run(cmd, cwd=ANSWERS, env=env, capture_output=True, text=True,
                          timeout=timeout, check=False)
    try:
        doc = json.loads(proc.stdout)
    except json.JSONDecodeError:
        return [], f"no json (rc {proc.returncode}): {proc.stderr.strip()[-300:]}"
    out = []
    for f in doc.get("diagnostics", []):
        out.append({"code": f.get("code"), "line": int(f.get("line") or 0),
                    "file": f.get("path", ""), "message": f.get("message", "")})
    return out, ""


def _lines(defect: dict) -> set[int]:
    return {defect["line"], *defect.get("also", [])}


def _hits(defect: dict, finding: dict, slack: int) -> bool:
    if defect.get("file") and not finding["file"].endswith(defect["file"]):
        return False
    if defect.get("codes") and finding["code"] not in defect["codes"]:
        return False
    return any(abs(finding["line"] - ln) <= slack for ln in _lines(defect))


def score(answer: dict, findings: list[dict], slack: int) -> dict:
    """Count per answer: knowable failure defects and how many a finding names,
    deprecations found, and false alarms.

    A finding names a defect when it is on the defect's line or one of its
    ``also`` lines (in its ``file``, with one of its ``codes`` where given);
    each finding names at most one defect.  A finding on no defect line at all
    is a false alarm, unless the manifest judged that finding "unjudged".
    """
    used: set[int] = set()
    counts = {"knowable": 0, "found": 0, "deprecations": 0, "deprecations_found": 0, "false": 0}
    for d in answer.get("defects", []):
        if not d.get("knowable"):
            continue
        key = "deprecations" if d.get("kind") == "deprecation" else "knowable"
        counts[key] += 1
        for i, f in enumerate(findings):
            if i not in used and _hits(d, f, slack):
                used.add(i)
                counts["deprecations_found" if key == "deprecations" else "found"] += 1
                break
    unjudged = {(b["code"], b["line"]) for b in answer.get("baseline_findings", [])
                if b.get("verdict") == "unjudged"}
    for i, f in enumerate(findings):
        if i in used or (f["code"], f["line"]) in unjudged:
            continue
        if not any(_hits({**d, "codes": None}, f, slack) for d in answer.get("defects", [])):
            counts["false"] += 1
    return counts


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--src", default="/work/base27/src", help="aicompat src tree to run")
    ap.add_argument("--slack", type=int, default=0, help="lines a finding may be off its defect")
    ap.add_argument("--timeout", type=int, default=300)
    ap.add_argument("--only", help="comma-separated answer ids")
    ap.add_argument("--raw", action="store_true", help="print each finding")
    ap.add_argument("--check", action="store_true",
                    help="exit 1 unless the counts equal the manifest's baseline_* fields")
    args = ap.parse_args()

    bad = verify_checksums()
    if bad:
        print("checksum failure:", *bad, sep="\n  ")
        return 2
    manifest = tomllib.loads(MANIFEST.read_text())
    answers = manifest["answer"]
    if args.only:
        keep = set(args.only.split(","))
        answers = [a for a in answers if a["id"] in keep]

    totals: dict[str, dict[str, int]] = {}
    mismatches = []
    print(f"{'id':28} {'half':8} {'knowable':>8} {'found':>5} {'depr':>5} {'false':>5}")
    for a in answers:
        findings, err = run_lint(args.src, a, a["fleet"], args.timeout)
        if err and "lint_gpu" in a:
            # The stated fleet was refused (a GPU name aicompat does not know,
            # or one outside its facts).  Retry with the manifest's lint_gpu,
            # the fleet as aicompat can take it; an empty one means no lint.
            err = "refused: " + err.split("error:")[-1].strip()[:60]
            if a["lint_gpu"]:
                findings, err2 = run_lint(args.src, a, a["lint_gpu"], args.timeout)
                err = err2 or err + f"... -> linted as {','.join(a['lint_gpu'])}"
        c = score(a, findings, args.slack)
        print(f"{a['id']:28} {a['half']:8} {c['knowable']:8d} {c['found']:5d} "
              f"{c['deprecations_found']:2d}/{c['deprecations']:<2d} {c['false']:5d} {err}")
        if args.raw:
            for f in findings:
                print(f"    {f['code']} {f['file']}:{f['line']} {f['message'][:110]}")
        t = totals.setdefault(a["half"], {"files": 0})
        t["files"] += 1
        for k, v in c.items():
            t[k] = t.get(k, 0) + v
        if args.check and (c["found"], c["false"]) != (a.get("baseline_found"), a.get("baseline_false")):
            mismatches.append(f"{a['id']}: found {c['found']} false {c['false']}, manifest "
                              f"{a.get('baseline_found')} / {a.get('baseline_false')}")
    print()
    every: dict[str, int] = {}
    for t in totals.values():
        for k, v in t.items():
            every[k] = every.get(k, 0) + v
    for half, t in [*sorted(totals.items()), ("all", every)]:
        n, found, false, files = t.get("knowable", 0), t.get("found", 0), t.get("false", 0), t["files"]
        print(f"{half:8} files {files:3d} knowable {n:3d} found {found:3d} recall {found / max(n, 1):.2f} "
              f"deprecations {t.get('deprecations_found', 0)}/{t.get('deprecations', 0)} "
              f"false {false:3d} false/file {false / max(files, 1):.2f}")
    if mismatches:
        print("differs from manifest:", *mismatches, sep="\n  ")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
