"""Lint time against file size (issue 15 item 5): the same realistic block repeated
N times, linted in one process, median of --runs runs per size; the time per KB
should stay flat as N doubles. Optionally real large files (--file).

    python bench/bench_linear.py --sizes 100,200,400,800 --runs 5 [--src DIR] [--file F ...]

--src lints with another checkout's sources (e.g. main before a change)."""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

BLOCK = '''
async def pull_{i}(stream, model, batch):
    first = await anext(stream)
    rest = [await anext(stream) for _ in range(batch - 1)]
    out = model(first, *rest)
    torch.save(out, "step_{i}.pt")
    return out
'''
HEADER = "import torch\nimport os\nos.environ['TORCH_CUDA_ARCH_LIST'] = '8.0;9.0'\n"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="100,200,400,800")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--python", default="3.9", help="target Python (3.9: every anext() call is judged)")
    ap.add_argument("--src", default=str(Path(__file__).resolve().parents[1] / "src"))
    ap.add_argument("--file", action="append", default=[])
    args = ap.parse_args()
    sys.path.insert(0, args.src)
    from aicompat.matrix import default_matrix
    from aicompat.matrix.target import Target
    from aicompat.run.config import build_settings
    from aicompat.run.linter import Linter

    m = default_matrix()
    linter = Linter(build_settings(m, cli=Target(gpus=["A100", "H100"], python=args.python), no_config=True).target, m)
    print(f"| input | KB | median s ({args.runs} runs) | ms per KB |")
    print("|---|---:|---:|---:|")
    inputs = [(f"{n} blocks", (HEADER + "".join(BLOCK.format(i=i) for i in range(n))).encode(), args.runs)
              for n in (int(s) for s in args.sizes.split(","))]
    inputs += [(f, Path(f).read_bytes(), 1) for f in args.file]
    for label, data, runs in inputs:
        times = []
        for _ in range(runs):
            t = time.perf_counter()
            linter.lint_bytes(data, "bench.py")
            times.append(time.perf_counter() - t)
        med = statistics.median(times)
        print(f"| {label} | {len(data) / 1e3:.0f} | {med:.2f} | {med * 1e3 / (len(data) / 1e3):.2f} |", flush=True)


if __name__ == "__main__":
    main()
