"""Start-up cost of aicompat (issue 29, item 4): what one small file costs.

    python bench/bench_startup.py [--src SRC] [--runs 5] [--pylint]

Runs in fresh processes, ``--runs`` times each, and prints the median wall
time and the median CPU time (user + sys of the process and its children,
from wait4: on a shared machine wall time carries other jobs' load, CPU time
less so) of:

- ``aicompat --version`` (the console script's ``main``),
- ``aicompat lint --no-cache FILE`` on a 26-line torch training snippet
  written to a temporary folder (so no config or cache of this checkout is read),
- ``python -c "import aicompat"``,
- with ``--pylint``: ``pylint --load-plugins=aicompat.pylint_plugin FILE``
  limited to aicompat's messages (one editor save), and pylint with one cheap
  check and no plugin (what pylint itself costs: its start, the astroid parse).

``--src`` picks the source tree (default: this checkout's src/), so two trees
can be measured in the same session. Byte code is written to a private
PYTHONPYCACHEPREFIX (this environment may set PYTHONDONTWRITEBYTECODE, and an
installed package has its .pyc), and each command runs once unmeasured first.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# A realistic small file: a torch training step, 26 lines.
SNIPPET = '''\
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset


class Net(nn.Module):
    def __init__(self, dim: int = 64) -> None:
        super().__init__()
        self.body = nn.Sequential(nn.Linear(dim, 128), nn.ReLU(), nn.Linear(128, 10))

    def forward(self, x):
        return self.body(x)


def train(epochs: int = 2) -> None:
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    data = TensorDataset(torch.randn(256, 64), torch.randint(0, 10, (256,)))
    model = Net().to(device, dtype=torch.bfloat16)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    for _ in range(epochs):
        for x, y in DataLoader(data, batch_size=32, shuffle=True):
            loss = nn.functional.cross_entropy(model(x.to(device, torch.bfloat16)), y.to(device))
            opt.zero_grad()
            loss.backward()
            opt.step()
    torch.save(model.state_dict(), "model.pt")
'''
assert SNIPPET.count("\n") == 26

CLI = "import sys; from aicompat.cli import main; sys.exit(main())"  # what the console script runs


def once(cmd: list[str], env: dict, cwd: str) -> tuple[float, float, int]:
    t = time.perf_counter()
    p = subprocess.Popen(cmd, env=env, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(p.pid, 0)  # this child's and its waited-for children's CPU
    return time.perf_counter() - t, usage.ru_utime + usage.ru_stime, os.waitstatus_to_exitcode(status)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--src", default=str(ROOT / "src"), help="the aicompat source tree to measure")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--pylint", action="store_true", help="also time one pylint run with the plugin")
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp, tempfile.TemporaryDirectory() as pyc:
        env = {k: v for k, v in os.environ.items() if k not in ("PYTHONDONTWRITEBYTECODE", "AICOMPAT_CACHE_DIR")}
        env.update(PYTHONPATH=os.path.abspath(a.src), PYTHONPYCACHEPREFIX=pyc)
        path = Path(tmp, "train.py")
        path.write_text(SNIPPET)
        cases = {
            "aicompat --version": [sys.executable, "-c", CLI, "--version"],
            "aicompat lint train.py (26 lines, --no-cache)": [sys.executable, "-c", CLI, "lint", "--no-cache",
                                                               "train.py"],
            'python -c "import aicompat"': [sys.executable, "-c", "import aicompat"],
        }
        if a.pylint:  # aicompat's messages only, so the plugin's cost shows beside pylint's own
            pylint = [sys.executable, "-m", "pylint", "--disable=all", "--persistent=n", "--score=n"]
            cases["pylint train.py (no plugin, one check: unused-import)"] = [*pylint, "--enable=unused-import",
                                                                               "train.py"]
            cases["pylint --load-plugins aicompat.pylint_plugin train.py"] = [
                *pylint, "--load-plugins=aicompat.pylint_plugin", "--enable=aicompat", "train.py"]
        print(f"src {a.src}, python {sys.version.split()[0]}, median of {a.runs} fresh processes\n")
        print("| command | median wall s | median CPU s | exit codes |\n|---|---:|---:|---|")
        for name, cmd in cases.items():
            once(cmd, env, tmp)  # writes the byte code
            got = [once(cmd, env, tmp) for _ in range(a.runs)]
            print(f"| {name} | {statistics.median(w for w, _, _ in got):.3f} | "
                  f"{statistics.median(c for _, c, _ in got):.3f} | {sorted({e for _, _, e in got})} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
