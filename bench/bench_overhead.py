"""What isolation costs on a normal run: two aicompat source trees (before and
after a change) linting the same folder, interleaved, in fresh processes.

    python bench/bench_overhead.py BEFORE_SRC AFTER_SRC CORPUS [--runs 3] [-- LINT ARGS]

Prints per tree the median wall time and median CPU seconds (user + sys of
the process and its workers, from wait4) and the ratio after/before measured
in the same run. ``--no-cache --no-config`` are always passed.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time


def once(src: str, corpus: str, extra: list[str]) -> tuple[float, float, int]:
    cmd = [sys.executable, "-m", "aicompat", "lint", "--no-cache", "--no-config", *extra, corpus]
    t = time.perf_counter()
    p = subprocess.Popen(cmd, env={**os.environ, "PYTHONPATH": src}, stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(p.pid, 0)
    return time.perf_counter() - t, usage.ru_utime + usage.ru_stime, os.waitstatus_to_exitcode(status)


def main() -> int:
    argv = sys.argv[1:]
    extra = argv[argv.index("--") + 1:] if "--" in argv else []
    argv = argv[:argv.index("--")] if "--" in argv else argv
    ap = argparse.ArgumentParser()
    ap.add_argument("before")
    ap.add_argument("after")
    ap.add_argument("corpus")
    ap.add_argument("--runs", type=int, default=3)
    a = ap.parse_args(argv)
    got: dict[str, list[tuple[float, float, int]]] = {"before": [], "after": []}
    for _ in range(a.runs):
        for name, src in (("before", a.before), ("after", a.after)):
            got[name].append(once(src, a.corpus, extra))
    med = {k: (statistics.median(w for w, _, _ in v), statistics.median(c for _, c, _ in v)) for k, v in got.items()}
    print(f"corpus {a.corpus}, args {' '.join(extra) or '(none)'}, {a.runs} runs each, interleaved\n")
    print("| tree | median wall s | median CPU s | exit codes |")
    print("|---|---:|---:|---|")
    for k, (w, c) in med.items():
        print(f"| {k} | {w:.2f} | {c:.2f} | {sorted({e for _, _, e in got[k]})} |")
    print(f"| after/before | {med['after'][0] / med['before'][0]:.3f} | {med['after'][1] / med['before'][1]:.3f} | |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
