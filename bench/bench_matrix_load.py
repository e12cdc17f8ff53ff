"""Load time of the version matrix, which every run pays: the hand-curated
TOML files, and each generated API table (loaded only when a file uses the
package). Prints a Markdown table of medians over fresh processes."""

from __future__ import annotations

import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SNIPPET = """
import sys, time
sys.path.insert(0, {src!r})
t0 = time.perf_counter()
from aicompat.matrix import load_matrix
t1 = time.perf_counter()
m = load_matrix()
t2 = time.perf_counter()
out = [t1 - t0, t2 - t1]
for pkg in ("torch", "flash-attn", "flash-attn-3"):
    a = time.perf_counter(); api = m.api(pkg); api.module(next(iter(api.modules))).all_names(); out.append(time.perf_counter() - a)
print(" ".join(f"{{x:.6f}}" for x in out))
"""


def main(runs: int = 7) -> None:
    rows = []
    for _ in range(runs):
        out = subprocess.run([sys.executable, "-c", SNIPPET.format(src=str(ROOT / "src"))], capture_output=True,
                             text=True, check=True).stdout.split()
        rows.append([float(x) for x in out])
    names = ["import aicompat.matrix", "curated TOML (load_matrix)", "api/torch.toml", "api/flash-attn.toml",
             "api/flash-attn-3.toml"]
    sizes = ["", "", *(f"{(ROOT / 'version_matrix/api' / f).stat().st_size / 1024:.0f} KB"
                       for f in ("torch.toml", "flash-attn.toml", "flash-attn-3.toml"))]
    print(f"| part | size | median ms ({runs} fresh processes) |\n|---|---|---|")
    for i, name in enumerate(names):
        print(f"| {name} | {sizes[i]} | {statistics.median(r[i] for r in rows) * 1000:.1f} |")


if __name__ == "__main__":
    main()
