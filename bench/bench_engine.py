"""Engine cost against the parse floor, on a real corpus.

    python bench/bench_engine.py                 # transformers' sources (pip download, cached in bench/.corpus)
    python bench/bench_engine.py PATH [--runs N]

Prints a Markdown table: median wall time over N runs of, in one process each
time, ast.parse over every file, libcst.parse_module over every file (the
parse floor), and aicompat's linter (prefilter on and off), with files/s and
the ratio to the libcst floor measured in the same run. Not run in CI.
"""

from __future__ import annotations

import argparse
import ast
import statistics
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import libcst as cst

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "src"))

from aicompat.matrix import default_matrix  # noqa: E402
from aicompat.matrix.target import Target  # noqa: E402
from aicompat.run.config import build_settings  # noqa: E402
from aicompat.run.linter import Linter  # noqa: E402


def corpus(default_pkg: str = "transformers==4.57.6") -> Path:
    dest = HERE / ".corpus" / default_pkg.replace("==", "-")
    if dest.is_dir():
        return dest
    dl = HERE / ".corpus" / "dl"
    dl.mkdir(parents=True, exist_ok=True)
    subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:", "-d", str(dl),
                    default_pkg], check=True)
    wheel = next(dl.glob(default_pkg.split("==")[0] + "-*.whl"))
    with zipfile.ZipFile(wheel) as zf:
        for n in zf.namelist():
            if n.endswith(".py"):
                zf.extract(n, dest)
    return dest


def timed(fn, runs: int) -> float:
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("path", nargs="?")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--sample", type=int, default=1, help="take every Nth file (deterministic), for a quicker run")
    args = ap.parse_args()
    root = Path(args.path) if args.path else corpus()
    files = sorted(root.rglob("*.py"))[:: args.sample]
    blobs = [(str(f), f.read_bytes()) for f in files]
    total_mb = sum(len(b) for _, b in blobs) / 1e6
    matrix = default_matrix()
    target = build_settings(matrix, cli=Target(gpus=["A100", "H100", "B200"]), no_config=True).target

    def run_ast():
        for _, b in blobs:
            try:
                ast.parse(b)
            except SyntaxError:
                pass

    def run_cst():
        for _, b in blobs:
            try:
                cst.parse_module(b)
            except Exception:
                pass

    def run_lint(prefilter: bool):
        linter = Linter(target, matrix, prefilter=prefilter)

        def go():
            for p, b in blobs:
                linter.lint_bytes(b, p)
        return go

    kept = [b for _, b in blobs if Linter(target, matrix).relevant(b)]
    print(f"corpus: {root} ({len(files)} files, {total_mb:.1f} MB; prefilter keeps {len(kept)} files, "
          f"{sum(map(len, kept)) / 1e6:.1f} MB); median of {args.runs} runs, one process, "
          f"Python {sys.version.split()[0]}, libcst {_libcst_version()}\n", flush=True)
    print("| step | median s | files/s | x libcst floor |")
    print("|---|---:|---:|---:|", flush=True)
    floor = timed(run_cst, args.runs)
    for name, fn in [("ast.parse", run_ast), ("libcst.parse_module (floor)", None),
                     ("aicompat, prefilter on", run_lint(True)), ("aicompat, prefilter off", run_lint(False))]:
        t = floor if fn is None else timed(fn, args.runs)
        print(f"| {name} | {t:.2f} | {len(files) / t:.0f} | {t / floor:.2f} |", flush=True)


def _libcst_version() -> str:
    from importlib.metadata import version

    return version("libcst")


if __name__ == "__main__":
    main()
