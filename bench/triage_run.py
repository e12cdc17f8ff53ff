"""Lint real repositories, sample findings for hand triage, tabulate verdicts.

  python3 bench/triage_run.py run NAME DIR [DIR...]   lint DIRs (both fleets) -> /tmp/triage/NAME.<fleet>.json
  python3 bench/triage_run.py sample NAME              print the fixed-seed sample to triage
  python3 bench/triage_run.py table [--sample N --seed S] [--only NAME,NAME]
                                                       every finding against bench/real_repos_verdicts.tsv;
                                                       unjudged ones listed, no ratio while any is unjudged
                                                       (a seeded sample: its ratio with a 95% interval)
  python3 bench/triage_run.py compare BEFORE AFTER     gone / new / changed findings of two TRIAGE_OUT folders;
                                                       exits 1 when a finding judged TRUE is gone (lost)

Runs the worktree's own src, one process (--jobs 1), no cache, repo config ignored, from the
folder holding the DIRs (the repository root, as CI runs it).
`sample` (a hand-triage queue): all findings when a repo/fleet has at most SAMPLE, else
random.Random(f"{NAME}:{fleet}").sample(sorted findings, SAMPLE).
"""

from __future__ import annotations

import collections
import csv
import json
import os
import random
import re
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = Path(os.environ.get("TRIAGE_OUT", "/tmp/triage"))
VERDICTS = Path(os.environ.get("TRIAGE_VERDICTS", ROOT / "bench" / "real_repos_verdicts.tsv"))
FLEETS = {"A100+H100": ["A100", "H100"], "H100+B200": ["H100", "B200"]}
SAMPLE = 40


def run(name: str, dirs: list[str]) -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ, PYTHONPATH=str(ROOT / "src"))
    for fleet, gpus in FLEETS.items():
        cmd = [sys.executable, "-m", "aicompat", "lint", *dirs, "--format", "json",
               "--no-cache", "--no-config", "--jobs", "1", "--exit-zero"]
        for g in gpus:
            cmd += ["--gpu", g]
        start = time.monotonic()
        # From the repository's root, as a user or CI runs it (the project root, inside which
        # the checked code's own modules are read).
        common = os.path.commonpath([os.path.abspath(d) for d in dirs])
        cwd = common if os.path.isdir(common) else os.path.dirname(common)
        proc = subprocess.run(cmd, env=env, capture_output=True, text=True, cwd=cwd)
        seconds = time.monotonic() - start
        try:
            data = json.loads(proc.stdout)
        except json.JSONDecodeError:
            sys.exit(f"{name} {fleet}: no JSON from aicompat (exit {proc.returncode}); its stderr ends:\n"
                     f"{proc.stderr[-3000:]}")
        data["seconds"] = round(seconds, 1)
        data["dirs"] = dirs
        (OUT / f"{name}.{fleet}.json").write_text(json.dumps(data, indent=1))
        print(f"{name} {fleet}: {data['summary']['files']} files, {seconds:.1f}s, "
              f"{data['summary']['by_code']}", flush=True)


def key(d: dict) -> tuple:
    return (d["path"], d["line"], d["column"], d["code"])


def sample(name: str, fleet: str) -> list[dict]:
    data = json.loads((OUT / f"{name}.{fleet}.json").read_text())
    diags = sorted(data["diagnostics"], key=key)
    if len(diags) <= SAMPLE:
        return diags
    return sorted(random.Random(f"{name}:{fleet}").sample(diags, SAMPLE), key=key)


def load_verdicts() -> dict:
    out = {}
    if VERDICTS.exists():
        with VERDICTS.open() as f:
            for row in csv.DictReader((l for l in f if not l.startswith("#")), delimiter="\t"):
                out[(row["fleet"], row["path"], int(row["line"]), row["code"])] = row
    return out


def _rel(path: str, dirs: list[str]) -> str:
    """A verdict's path: relative to the folder above the linted one (``SageAttention/csrc/...``)."""
    if not os.path.isabs(path) and dirs:  # printed relative to the folder the lint ran from
        path = os.path.join(os.path.commonpath([os.path.abspath(d) for d in dirs]), path)
    for d in dirs:
        parent = os.path.dirname(os.path.abspath(d).rstrip("/"))
        if os.path.isabs(path) and path.startswith(parent + "/"):
            return path[len(parent) + 1:]
    return path


def _wilson(t: int, n: int, z: float = 1.96) -> tuple[float, float]:
    """95% Wilson score interval of a sampled ratio t/n."""
    if not n:
        return 0.0, 1.0
    p = t / n
    d = 1 + z * z / n
    c = (p + z * z / (2 * n)) / d
    h = z * ((p * (1 - p) / n + z * z / (4 * n * n)) ** 0.5) / d
    return max(0.0, c - h), min(1.0, c + h)


def _unbuilt(data: dict) -> str:
    """The run's count of CUDA files with arch-specific code and no build it could see (its note)."""
    for n in data.get("notes", []):
        m = re.match(r"(\d+) CUDA files? with arch-specific code ha(?:s|ve) no build", n)
        if m:
            return m.group(1)
    return "0" if "notes" in data else "-"


def _findings(name: str, fleet: str, data: dict, sample_n: int | None, seed: str) -> list[dict]:
    diags = sorted(data["diagnostics"], key=key)
    if sample_n is None or len(diags) <= sample_n:
        return diags
    return sorted(random.Random(f"{seed}:{name}:{fleet}").sample(diags, sample_n), key=key)


def table(sample_n: int | None = None, seed: str = "triage", only: set | None = None) -> bool:
    """Every finding of every run against its verdict (or, with ``sample_n``, a seeded sample
    per repo and fleet, whose ratio is given with its 95% interval). No ratio is printed while
    a finding in the count has no verdict; the unjudged ones are listed. Returns whether every
    counted finding is judged."""
    verdicts = load_verdicts()
    classes: collections.Counter = collections.Counter()
    examples: dict = collections.defaultdict(list)
    overall = collections.defaultdict(lambda: [0, 0, 0])
    unique: dict = {}  # (code, path, line) -> set of verdicts over the fleets
    unjudged: list[str] = []
    names = sorted({p.name.split(".")[0] for p in OUT.glob("*.json") if p.name.count(".") == 2})
    names = [n for n in names if only is None or n in only]
    mode = "every finding" if sample_n is None else f"a sample of {sample_n} per repo and fleet, seed {seed!r}"
    print(f"Judged: {mode}.")
    print()
    print("| repo | fleet | files | seconds | findings per code | counted | true | false | n/a | unjudged | unbuilt CUDA |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for name in names:
        for fleet in FLEETS:
            p = OUT / f"{name}.{fleet}.json"
            if not p.exists():
                continue
            data = json.loads(p.read_text())
            picked = _findings(name, fleet, data, sample_n, seed)
            # a subtree run whose whole-package run exists is shown, not counted twice
            counted = not (OUT / f"{name}-full.{fleet}.json").exists()
            t = f = u = na = 0
            for d in picked:
                rel = _rel(d["path"], data.get("dirs", []))
                v = verdicts.get((fleet, rel, d["line"], d["code"]))
                if d["code"] in ("AIC001", "AIC002") and v is None:
                    na += 1  # says nothing about a GPU or a release
                    continue
                if v is None:
                    u += 1
                    if counted:
                        unjudged.append(f"{fleet}\t{rel}\t{d['line']}\t{d['code']}\t\t\t{d['message'][:160]}")
                    continue
                if v["verdict"] == "NA":
                    na += 1
                    continue
                if counted:
                    unique.setdefault((d["code"], rel, d["line"]), set()).add(v["verdict"])
                if v["verdict"] == "TRUE":
                    t += 1
                else:
                    f += 1
                    classes[(fleet, v["class"])] += counted
                    if len(examples[v["class"]]) < 2 and f"{rel}:{d['line']}" not in examples[v["class"]]:
                        examples[v["class"]].append(f"{rel}:{d['line']}")
            o = overall[fleet]
            if counted:
                o[0] += t; o[1] += f; o[2] += u
            codes = ", ".join(f"{c} {n}" for c, n in sorted(data["summary"]["by_code"].items()))
            print(f"| {name}{'' if counted else ' (subset, not counted)'} | {fleet} | {data['summary']['files']} "
                  f"| {data['seconds']} | {codes or '-'} | {len(picked)} | {t} | {f} | {na} | {u} | {_unbuilt(data)} |")
    complete = not unjudged
    print()
    print("| false class | A100+H100 | H100+B200 | examples |")
    print("|---|---|---|---|")
    for cls in sorted({c for _, c in classes}, key=lambda c: -sum(n for (fl, k), n in classes.items() if k == c)):
        print(f"| {cls} | {classes[('A100+H100', cls)]} | {classes[('H100+B200', cls)]} | {'; '.join(examples[cls])} |")
    print()
    # A unique finding (code, path, line) is true when it is true on every fleet that reports it.
    per_code = collections.defaultdict(lambda: [0, 0])
    for (code, _p, _l), vs in unique.items():
        per_code[code][0 if vs == {"TRUE"} else 1] += 1
    print("| code | unique findings | true | false | true share |")
    print("|---|---|---|---|---|")
    for code, (t, f) in sorted(per_code.items()):
        share = f"{t / (t + f):.0%}" if complete and t + f else "withheld" if not complete else "-"
        print(f"| {code} | {t + f} | {t} | {f} | {share} |")
    print()
    for fleet, (t, f, u) in overall.items():
        if u:
            print(f"{fleet}: true {t}, false {f}, unjudged {u}: no ratio while findings are unjudged")
        elif sample_n is not None:
            lo, hi = _wilson(t, t + f)
            print(f"{fleet}: sampled true {t}, false {f}; true ratio {t / (t + f) if t + f else 0:.0%} "
                  f"(95% interval {lo:.0%}-{hi:.0%})")
        else:
            print(f"{fleet}: every finding judged: true {t}, false {f}; true ratio {t / (t + f) if t + f else 0:.0%}")
    if unjudged:
        print()
        print(f"{len(unjudged)} unjudged findings (verdict rows to fill in: fleet path line code verdict class note):")
        for row in unjudged:
            print(row)
    return complete


def compare(before: Path, after: Path) -> bool:
    """Findings of two runs (TRIAGE_OUT folders) side by side: gone, new and changed, with verdicts.

    A finding is (fleet, path, line, code); gone true findings are regressions, new ones need a verdict.
    """
    verdicts = load_verdicts()
    counts = collections.Counter()
    for p in sorted(after.glob("*.json")):
        name, fleet = p.name.split(".")[0], p.name.split(".")[1]
        q = before / p.name
        if not q.exists():
            print(f"{name} {fleet}: no run in {before}")
            continue
        runs = [json.loads(x.read_text()) for x in (q, p)]
        maps = [{(_rel(d["path"], r.get("dirs", [])), d["line"], d["code"]): d["message"] for d in r["diagnostics"]}
                for r in runs]
        for k in sorted(maps[0].keys() | maps[1].keys()):
            v = verdicts.get((fleet, *k))
            verdict = v["verdict"] if v else "unjudged"
            if k not in maps[1]:
                kind = "gone"
            elif k not in maps[0]:
                kind = "new"
            elif maps[0][k] != maps[1][k]:
                kind = "changed"
            else:
                counts[(fleet, "kept")] += 1
                continue
            counts[(fleet, kind)] += 1
            counts[(fleet, f"{kind} {verdict}")] += 1
            print(f"{kind:8} {verdict:9} {fleet} {k[0]}:{k[1]} {k[2]} {maps[1].get(k) or maps[0].get(k)}")
    for (fleet, kind), n in sorted(counts.items()):
        print(f"{fleet} {kind}: {n}")
    lost = sum(n for (fleet, kind), n in counts.items() if kind == "gone TRUE")
    new_unjudged = sum(n for (fleet, kind), n in counts.items() if kind in ("new unjudged", "changed unjudged"))
    print(f"lost true findings: {lost}; new or changed findings without a verdict: {new_unjudged}")
    return lost == 0


def main(argv: list[str]) -> None:
    if argv[0] == "run":
        run(argv[1], argv[2:])
    elif argv[0] == "sample":
        for fleet in FLEETS:
            if not (OUT / f"{argv[1]}.{fleet}.json").exists():
                continue
            for d in sample(argv[1], fleet):
                print(f"{fleet}\t{d['path']}\t{d['line']}\t{d['code']}\t{d['message']}")
    elif argv[0] == "table":
        # table [--sample N [--seed S]]: exits 1 while any counted finding is unjudged
        n = int(argv[argv.index("--sample") + 1]) if "--sample" in argv else None
        seed = argv[argv.index("--seed") + 1] if "--seed" in argv else "triage"
        only = set(argv[argv.index("--only") + 1].split(",")) if "--only" in argv else None
        sys.exit(0 if table(n, seed, only) else 1)
    elif argv[0] == "compare":
        # exits 1 when a finding with a TRUE verdict is gone (a lost true finding is a regression)
        sys.exit(0 if compare(Path(argv[1]), Path(argv[2])) else 1)


if __name__ == "__main__":
    main(sys.argv[1:])
