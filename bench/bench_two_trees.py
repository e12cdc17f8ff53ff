"""Two aicompat trees against the same 1-core parse floor, in one run (a refactor must not cost more).

    python3 bench/bench_two_trees.py OLD_SRC NEW_SRC CORPUS_DIR [--runs 3] [--jobs 1]

Times whole processes, interleaved per run so both trees see the same machine: the libcst parse
floor (one ``python -c`` process parsing every .py file of CORPUS_DIR) and ``aicompat lint``
(--no-cache --no-config --format json --exit-zero, --jobs as given) with PYTHONPATH set to each
tree's src. Prints a Markdown table of median wall seconds and the ratio to the floor; asserts
nothing.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time

FLOOR = """
import pathlib, sys, libcst
for p in sorted(pathlib.Path(sys.argv[1]).rglob("*.py")):
    try:
        libcst.parse_module(p.read_bytes())
    except Exception:
        pass
"""


def timed(cmd, env=None) -> float:
    t = time.perf_counter()
    subprocess.run(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    return time.perf_counter() - t


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("old")
    ap.add_argument("new")
    ap.add_argument("corpus")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--jobs", default="1")
    args = ap.parse_args()
    rows: dict[str, list[float]] = {"libcst floor (1 process)": [], "aicompat OLD": [], "aicompat NEW": []}
    for _ in range(args.runs):
        rows["libcst floor (1 process)"].append(timed([sys.executable, "-c", FLOOR, args.corpus]))
        for label, src in (("aicompat OLD", args.old), ("aicompat NEW", args.new)):
            env = dict(os.environ, PYTHONPATH=src)
            rows[label].append(timed([sys.executable, "-m", "aicompat", "lint", args.corpus, "--no-cache",
                                      "--no-config", "--format", "json", "--exit-zero", "--jobs", args.jobs,
                                      "--gpu", "A100", "--gpu", "H100"], env))
    floor = statistics.median(rows["libcst floor (1 process)"])
    n = sum(1 for _ in __import__("pathlib").Path(args.corpus).rglob("*.py"))
    print(f"{n} .py files in {args.corpus}; {args.runs} runs, interleaved; --jobs {args.jobs}\n")
    print("| process | median wall s | x floor | runs |")
    print("|---|---|---|---|")
    for label, ts in rows.items():
        m = statistics.median(ts)
        print(f"| {label} | {m:.1f} | {m / floor:.2f} | {', '.join(f'{t:.1f}' for t in ts)} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
