"""aicompat against the parse floor and its peers, as whole processes.

    python bench/bench_peers.py                      # all corpora, 3 runs each
    python bench/bench_peers.py --corpus gpu --runs 5
    python bench/bench_peers.py --peer-sample 20     # peers on every 20th file

Downloads through pip, into bench/.corpus (gitignored):
  transformers  the .py files of the transformers 4.57.6 wheel
  torch         the .py files of the torch 2.13.0 wheel (the macOS arm64 wheel:
                same Python sources, smallest download)
  gpu           a small GPU-heavy corpus: the liger-kernel 0.6.2 wheel (Triton
                kernels) plus this repo's fixtures/demo
and installs each peer (TorchFix, Fixit, vermin) into its own venv under
bench/.corpus/venvs.

For each corpus it times, as separate processes, median of --runs runs:
ast.parse and libcst.parse_module over every file in a ``python -c`` loop
(the parse floors, one process), aicompat cold (--no-cache) with default jobs
and with --jobs 1, aicompat warm (cache filled by an untimed run first), and
the peers. Wall time, CPU time (user + sys of the process and its children,
from wait4) and peak RSS (the largest single process of the tree) per run;
for aicompat also what its -v says: the peak RSS of the parent and of the
largest worker, and the cache's hits (warm: from the tree's root, and again
from a folder inside it).
TorchFix and Fixit need about a CPU-second per file, so with --peer-sample N
they run on every Nth file (deterministic) and their files/s and files/CPU-s
are per file of that sample; the "x floor" column then compares per-file
rates. Prints a Markdown table; not run in CI, no assertion on any timing.
"""

from __future__ import annotations

import argparse
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import venv
import zipfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
CORPUS = HERE / ".corpus"
VENVS = CORPUS / "venvs"
PIP_ENV = dict(os.environ, PIP_CONFIG_FILE=os.devnull, PIP_DISABLE_PIP_VERSION_CHECK="1")
PEERS = {"torchfix": "torchfix==0.7.0", "fixit": "fixit==2.2.1", "vermin": "vermin==1.9.2"}
FLEET = ["--gpu", "A100", "--gpu", "H100", "--gpu", "B200"]

FLOOR = """
import sys, {mod}
for p in open(sys.argv[1]).read().splitlines():
    data = open(p, 'rb').read()
    try:
        {call}
    except Exception:
        pass
"""
FLOORS = {
    "ast.parse": FLOOR.format(mod="ast", call="ast.parse(data)"),
    "libcst.parse_module": FLOOR.format(mod="libcst", call="libcst.parse_module(data)"),
}


def _pip_wheel(req: str, extra: list[str]) -> Path:
    dl = CORPUS / "dl"
    dl.mkdir(parents=True, exist_ok=True)
    name = req.split("==")[0].replace("-", "_")
    found = sorted(dl.glob(f"{name}-{req.split('==')[1]}*.whl"))
    if not found:
        subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:", *extra,
                        "-d", str(dl), req], check=True, env=PIP_ENV)
        found = sorted(dl.glob(f"{name}-{req.split('==')[1]}*.whl"))
    return found[0]


def _extract(wheel: Path, dest: Path) -> None:
    with zipfile.ZipFile(wheel) as zf:
        for n in zf.namelist():
            if n.endswith(".py"):
                zf.extract(n, dest)


def corpus(name: str) -> Path:
    dest = CORPUS / {"transformers": "transformers-4.57.6", "torch": "torch-2.13.0", "gpu": "gpu-heavy"}[name]
    if dest.is_dir():
        return dest
    tmp = dest.with_suffix(".partial")
    if name == "transformers":
        _extract(_pip_wheel("transformers==4.57.6", []), tmp)
    elif name == "torch":
        _extract(_pip_wheel("torch==2.13.0", ["--platform", "macosx_14_0_arm64", "--python-version", "3.12"]), tmp)
    else:
        _extract(_pip_wheel("liger-kernel==0.6.2", []), tmp)
        for f in sorted((REPO / "fixtures" / "demo").glob("*.py")):
            (tmp / "demo").mkdir(parents=True, exist_ok=True)
            (tmp / "demo" / f.name).write_bytes(f.read_bytes())
    tmp.rename(dest)
    return dest


def peer(name: str) -> Path:
    env = VENVS / name
    exe = env / "bin" / name
    if not exe.exists():
        venv.create(env, with_pip=True)
        subprocess.run([str(env / "bin" / "python"), "-m", "pip", "install", "-q", PEERS[name]], check=True)
    return exe


def measure(cmd: list[str], runs: int, env: dict | None = None, cwd: Path | None = None) -> dict:
    walls, cpus, rss = [], [], 0
    for _ in range(runs):
        t = time.perf_counter()
        p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env, cwd=cwd)
        _, status, ru = os.wait4(p.pid, 0)
        walls.append(time.perf_counter() - t)
        p.returncode = os.waitstatus_to_exitcode(status)
        err = p.stderr.read().decode(errors="replace")
        p.stderr.close()
        if "Traceback" in err and "aicompat" in cmd:
            raise SystemExit(f"{cmd} failed:\n{err[-2000:]}")
        cpus.append(ru.ru_utime + ru.ru_stime)
        rss = max(rss, ru.ru_maxrss)  # KiB on Linux
    out = {"wall": statistics.median(walls), "cpu": statistics.median(cpus), "rss": rss / 1024, "runs": runs}
    # aicompat -v: the cache's hits and its own peak RSS of the parent and the largest worker
    hits = re.search(r"cache: (\d+) unchanged files", err)
    mem = re.search(r"memory: peak RSS (\d+) MB in this process(?:, (\d+) MB in the largest worker)?", err)
    if hits:
        out["hits"] = int(hits.group(1))
    if mem:
        out["parent"], out["worker"] = int(mem.group(1)), int(mem.group(2) or 0)
    return out


def bench_corpus(name: str, runs: int, peer_runs: int, sample: int, tools: set[str], whole_sample: int = 1) -> None:
    tmp = Path(tempfile.mkdtemp(prefix="aicompat-bench-"))
    # A copy outside bench/.corpus: Fixit silently skips every file under a
    # hidden folder (and resolves symlinks), and all tools should read the
    # same paths.
    root = tmp / "corpus"
    src = corpus(name)
    for f in sorted(src.rglob("*.py"))[::whole_sample]:
        dest = root / f.relative_to(src)
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(f, dest)
    files = sorted(str(p) for p in root.rglob("*.py"))
    sampled = files[::sample]
    mb = sum(os.path.getsize(f) for f in files) / 1e6
    listing = tmp / "files.txt"
    listing.write_text("\n".join(files))
    py = sys.executable
    env = dict(os.environ, PYTHONPATH=str(REPO / "src"))
    lint = [py, "-m", "aicompat", "lint", "--no-config", "--exit-zero", "-v", *FLEET]
    part = f", every {whole_sample}th file" if whole_sample > 1 else ""
    print(f"\n### {name}: {src.relative_to(REPO)}{part} ({len(files)} files, {mb:.1f} MB)\n", flush=True)
    print("| tool | files | median wall s | files/s | x libcst floor (wall) | CPU s | files/CPU-s | peak RSS MB "
          "| parent / worker MB | cache hits |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|", flush=True)
    floor_rate = None

    def row(label: str, n: int, m: dict) -> None:
        nonlocal floor_rate
        rate = n / m["wall"]
        if label.startswith("libcst.parse_module"):
            floor_rate = rate
        ratio = f"{floor_rate / rate:.2f}" if floor_rate else "-"
        own = f"{m['parent']} / {m['worker'] or '-'}" if "parent" in m else "-"
        print(f"| {label} | {n} | {m['wall']:.2f} | {rate:.1f} | {ratio} | {m['cpu']:.1f} | "
              f"{n / max(m['cpu'], 1e-9):.1f} | {m['rss']:.0f} | {own} | {m.get('hits', '-')} |", flush=True)

    for label, code in FLOORS.items():
        if "floors" in tools:
            row(f"{label} (floor, 1 process)", len(files), measure([py, "-c", code, str(listing)], runs, env))
    if "aicompat" in tools:
        row("aicompat cold, default jobs", len(files), measure([*lint, "--no-cache", str(root)], runs, env))
        row("aicompat cold, --jobs 1", len(files), measure([*lint, "--no-cache", "--jobs", "1", str(root)], runs, env))
        cache = tmp / "cache"
        measure([*lint, "--cache-dir", str(cache), str(root)], 1, env)  # fill the cache
        row("aicompat warm (cache)", len(files), measure([*lint, "--cache-dir", str(cache), str(root)], runs, env))
        inner = next((d for d in sorted(root.iterdir()) if d.is_dir()), None)
        if inner is not None:  # the same tree, the run started from a folder inside it
            row(f"aicompat warm, run from {inner.name}/", len(files),
                measure([*lint, "--cache-dir", str(cache), ".."], runs, env, cwd=inner))
    part = f"every {sample}th file" if sample > 1 else "all files"
    if "torchfix" in tools:
        row(f"TorchFix 0.7.0 ({part})", len(sampled), measure([str(peer("torchfix")), *sampled], peer_runs, cwd=tmp))
    if "fixit" in tools:
        # Fixit's default rules; --no-config-ish: run from an empty folder so no project config applies.
        row(f"Fixit 2.2.1 default rules ({part})", len(sampled),
            measure([str(peer("fixit")), "lint", *sampled], peer_runs, cwd=tmp))
    if "vermin" in tools:
        row("vermin 1.9.2 (all files)", len(files),
            measure([str(peer("vermin")), "--no-tips", "--violations", "-t=3.8-", str(root)], runs, cwd=tmp))
    shutil.rmtree(tmp, ignore_errors=True)


def machine() -> str:
    model = "unknown CPU"
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    try:
        cpus = len(os.sched_getaffinity(0))
    except AttributeError:
        cpus = os.cpu_count()
    mem = ""
    try:
        kb = int(next(ln for ln in open("/proc/meminfo") if ln.startswith("MemTotal")).split()[1])
        mem = f", {kb / 1024 / 1024:.0f} GiB RAM"
    except (OSError, StopIteration):
        pass
    from importlib.metadata import version

    return (f"{platform.machine()}, {cpus} CPUs ({model}){mem}, {platform.system()} {platform.release()}, "
            f"Python {platform.python_version()}, libcst {version('libcst')}, load average at start "
            f"{os.getloadavg()[0]:.1f}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--corpus", action="append", choices=["gpu", "transformers", "torch"])
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--peer-runs", type=int, default=None, help="runs for TorchFix and Fixit (default: --runs)")
    ap.add_argument("--peer-sample", type=int, default=1, help="TorchFix and Fixit on every Nth file")
    ap.add_argument("--tools", default="floors,aicompat,torchfix,fixit,vermin")
    ap.add_argument("--sample", type=int, default=1, help="every tool on every Nth file of each corpus")
    args = ap.parse_args()
    print(f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; {machine()}; median of {args.runs} runs "
          f"(peers: {args.peer_runs or args.runs}); fleet A100 + H100 + B200", flush=True)
    for name in args.corpus or ["gpu", "transformers", "torch"]:
        bench_corpus(name, args.runs, args.peer_runs or args.runs, args.peer_sample, set(args.tools.split(",")),
                     args.sample)


if __name__ == "__main__":
    main()
