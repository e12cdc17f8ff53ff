"""Hostile inputs (issue 16): each input the audit found, generated here, linted by
the command line in a fresh process; time, peak memory and exit code per input.

    python bench/bench_hostile.py                    # full scale (the audit's sizes)
    python bench/bench_hostile.py --scale small      # what tests/test_hostile.py runs
    python bench/bench_hostile.py --only prefilter   # inputs whose name contains this

Goal per input: wall time <= the per-file limit (--timeout, set here) + 1 s, the
peak memory of every process under a fixed limit, the run completes, and the
exit code is the honest one (1 findings, 2 configuration error, 3 incomplete).
Peak memory is the largest single process of the run's tree (wait4's
ru_maxrss: the CLI or one of its workers). Every run is also held under an
address-space limit of GUARD bytes, so a regression cannot take this machine
down; a run that hits it shows as a crash. Prints a Markdown table.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
SRC = HERE.parent / "src"
TIMEOUT = 10.0  # --timeout for every run: the bound is TIMEOUT + 1 s
GUARD = 12 << 30  # address space per process of a run (RLIMIT_AS), far above aicompat's own limit
MEMORY_GOAL_MB = 3 * 1024 + 512  # parallel.MEMORY_LIMIT (3 GiB over a worker's start) plus the interpreter

FP8 = "import torch\nx = torch._scaled_mm(a, b)\n"


@dataclass
class Case:
    name: str
    item: int
    files: dict = field(default_factory=dict)  # relative path -> str | bytes
    args: list = field(default_factory=list)
    expect: tuple = (1,)  # honest exit codes
    env: dict = field(default_factory=dict)
    setup: object = None  # fn(dir) for what files cannot say (links, sparse files, folders)
    check: object = None  # fn(dir, stdout, stderr) -> note ("" when fine, else what is wrong)
    signal_after: float | None = None  # send SIGTERM this many seconds in
    bound: float | None = None  # seconds; default TIMEOUT + 1


def cases(scale: str) -> list[Case]:
    full = scale == "full"
    n = (lambda big, small: big if full else small)
    out: list[Case] = []

    # -- 3: prefilter scans (no token any rule reacts to, so only the prefilter reads them)
    out.append(Case("prefilter: 'except x ' x 20,000 (180 KB)", 3, {"a.py": "except x " * n(20_000, 2_000)}, expect=(0,)))
    out.append(Case("prefilter: 'except x ' 2.25 MB (over the size limit)", 3,
                    {"a.py": "except x " * n(250_000, 2_000)}, expect=(3,) if full else (0,)))
    out.append(Case("prefilter: 'from a import (' repeated, 1 MB", 3,
                    {"a.py": "from a import (\n" * n(62_500, 2_000)}, expect=(0,)))
    out.append(Case("prefilter: unterminated f'''{ repeated, 1 MB", 3, {"a.py": "f'''{\n" * n(170_000, 2_000)},
                    expect=(0,)))
    out.append(Case("prefilter: f' and 30 '{{}}' (exponential before)", 3,
                    {"a.py": "x = f'" + "{{}}" * 30 + "{\n"}, expect=(1,)))  # AIC001: it does not parse
    out.append(Case("prefilter: '@' and 1 MB of blanks", 3, {"a.py": "@" + " " * n(1_000_000, 10_000) + "-\n"},
                    expect=(0,)))
    # -- 4: inputs LibCST crashes on or takes minutes over; CPython refuses them in milliseconds
    for label, body in (("y = and 10,000 '-'", "y = " + "-" * 10_000),
                        ("'a' and 5,000 '[0]'", "a" + "[0]" * 5_000),
                        ("10,000 'not'", "y = " + "not " * 10_000 + "x"),
                        ("10,000 'lambda:'", "y = " + "lambda: " * 10_000 + "x"),
                        ("10,000 '**'", "y = " + "x ** " * 10_000 + "x"),
                        ("10,000 conditional expressions", "y = " + "a if b else " * 10_000 + "c"),
                        ("10,000-branch elif", "if a:\n    pass\n" + "elif b:\n    pass\n" * 10_000)):
        out.append(Case(f"parser: {label}", 4, {"a.py": "import torch\n" + body + "\n"}))
    # CPython accepts this one; LibCST needs ~n^2 time: the worker is killed at the limit.
    out.append(Case("parser: 'a' and 2,900 '[0]' (CPython accepts; LibCST quadratic)", 4,
                    {"a.py": "import torch\nx = a" + "[0]" * n(2_900, 300) + "\n"}, expect=(3, 0, 1)))
    # -- 5: memory bombs
    load = "from torch.utils.cpp_extension import load_inline\n"
    out.append(Case("fold: \"a\" * 700_000_000", 5, {"a.py": load + 'load_inline(name="a", cpp_sources="", '
                                                    'cuda_sources="a" * 700_000_000)\n'}, expect=(0, 1)))
    out.append(Case("fold: \"ab\" * 4096 doubled 18 times", 5,
                    {"a.py": load + 'x = "ab" * 4096\n' + "x = x + x\n" * 18 +
                     'load_inline(name="a", cpp_sources="", cuda_sources=x)\n'}, expect=(0, 1)))
    out.append(Case("fold: f\"{1:>999999999}\"", 5,
                    {"a.py": load + 'load_inline(name="a", cpp_sources="", cuda_sources=f"{1:>999999999}")\n'},
                    expect=(0, 1)))
    fields_ = "".join("{x}" for _ in range(n(300_000, 1_000)))
    out.append(Case("fold: f-string of 300,000 fields (1.8 MB)", 5,
                    {"a.py": load + 'x = "a" * 4000\n' + 'y = f"' + fields_ + '"\n'
                     'load_inline(name="a", cpp_sources="", cuda_sources=y)\n'}, expect=(0, 1, 3)))
    out.append(Case("CUDA: #if (1 << 12000000000)", 5,
                    {"k.cu": "#if (1 << 12000000000)\n__global__ void k() {}\n#endif\n"}, expect=(0, 1)))
    macros = "".join(f"#define M{i} M{i - 1} M{i - 1} M{i - 1} M{i - 1}\n" for i in range(1, n(12, 6)))
    out.append(Case("CUDA: macros that expand 4^11 times", 5,
                    {"k.cu": "#define M0 __nv_fp8_e4m3\n" + macros + f"__global__ void k() {{ M{n(11, 5)}; }}\n"},
                    expect=(0, 1)))
    # -- 1, 2: the cache (a committed entry; a cache-dir outside the tree)
    out.append(Case("cache: committed entries with reads -> /dev/zero", 1, {"a.py": FP8},
                    args=["--cache-dir", ".aicompat_cache"], setup=_forge_cache, check=_finding("AIC102")))
    out.append(Case("cache: [tool.aicompat] cache-dir = '../outside'", 2,
                    {"repo/pyproject.toml": '[tool.aicompat]\ncache-dir = "../outside"\n', "repo/a.py": FP8},
                    args=["repo"], expect=(1, 2), check=_nothing_at("outside")))
    # -- 6: --fix through a symlink to a file outside the tree
    out.append(Case("--fix: setup.py is a symlink to a file outside the tree", 6,
                    {"outside/setup.py": 'import os\nos.environ["TORCH_CUDA_ARCH_LIST"] = "7.0"\n'},
                    args=["--fix", "--gpu", "H100", "repo"], expect=(0, 1, 2, 3), setup=_link_setup,
                    check=_unchanged("outside/setup.py")))
    # -- 7: a file name that carries a workflow command and a terminal escape
    out.append(Case("names: '\\x1b[2J::error::x.py' in --format github", 7, {"\x1b[2J::error::x.py": FP8},
                    args=["--format", "github"], check=_no_raw("\x1b")))
    # -- 8: honest exit codes
    out.append(Case("exit: '# noqa' on line 1 of a file over the time limit", 8,
                    {"a.py": "import torch  # noqa\nx = a" + "[0]" * 2_900 + "\n"},
                    args=["--timeout", "1"], expect=(3,), bound=2.0))
    out.append(Case("exit: --write-baseline on an incomplete run", 8,
                    {"a.py": "import torch\nx = a" + "[0]" * 2_900 + "\n", "b.py": FP8},
                    args=["--timeout", "1", "--write-baseline", "bl.json"], expect=(3,), bound=2.0))
    # -- 9: crashes and configuration errors
    out.append(Case("crash: non-UTF-8 file name, strict ASCII stdout", 9, {b"\xff\xfe.py": FP8},
                    env={"PYTHONIOENCODING": "ascii:strict", "LC_ALL": "C"}))
    out.append(Case("config: timeout = inf", 9, {"pyproject.toml": "[tool.aicompat]\ntimeout = inf\n", "a.py": FP8},
                    args=["--no-timeout-flag"], expect=(2,)))
    out.append(Case("config: timeout = nan", 9, {"pyproject.toml": "[tool.aicompat]\ntimeout = nan\n", "a.py": FP8},
                    args=["--no-timeout-flag"], expect=(2,)))
    out.append(Case("config: a NUL in cache-dir", 9,
                    {"pyproject.toml": '[tool.aicompat]\ncache-dir = "a\\u0000b"\n', "a.py": FP8},
                    args=["--use-cache"], expect=(2,)))
    out.append(Case("config: gpus = [5]", 9, {"pyproject.toml": "[tool.aicompat]\ngpus = [5]\n", "a.py": FP8},
                    expect=(2,)))
    out.append(Case("tree: 1,100 folders deep", 9, setup=_deep(1_100)))
    # -- 10: jobs
    out.append(Case("config: jobs = 100000, 40 files", 10,
                    {"pyproject.toml": "[tool.aicompat]\njobs = 100000\n",
                     **{f"m{i}.py": FP8 + "#" * 4_000 for i in range(40)}}, args=["--no-jobs-flag"]))
    # -- 11: paths in the analysed code / requirements followed outside the tree
    out.append(Case("paths: requirements.txt -> /dev/zero", 11, {"pyproject.toml": "", "a.py": FP8},
                    setup=lambda d: (d / "requirements.txt").symlink_to("/dev/zero"), expect=(1, 2), bound=5.0))
    out.append(Case("paths: open('/dev/zero').read() in the code", 11,
                    {"a.py": load + 'load_inline(name="a", cpp_sources="", cuda_sources=open("/dev/zero").read())\n'},
                    expect=(0, 1)))
    # -- 13: --gpu auto with an empty PATH entry
    out.append(Case("--gpu auto: ./nvidia-smi through an empty PATH entry", 13, {"a.py": FP8},
                    args=["--gpu", "auto"], env={"PATH": ":/usr/bin:/bin"}, setup=_fake_smi, expect=(1, 2),
                    check=_nothing_at("smi-ran")))
    # -- 14: SIGTERM in the middle of a run
    out.append(Case("SIGTERM 1 s after the first worker started", 14,
                    {f"s{i}.py": "import torch\nx = a" + "[0]" * 2_900 + "\n" for i in range(3)},
                    args=["--timeout", "60"], expect=(143,), signal_after=1.0, bound=2.0))
    # -- 15: notebooks, SARIF, size before read
    out.append(Case("notebook: 'cells' is a number", 15, {"a.ipynb": json.dumps({"cells": 5})}))
    out.append(Case("notebook: JSON nested 100,000 deep", 15, {"a.ipynb": "[" * 100_000 + "]" * 100_000}))
    out.append(Case("SARIF: a file name with a space and '#'", 15, {"a b#c.py": FP8}, args=["--format", "sarif"],
                    check=_sarif_uri("a%20b%23c.py")))
    out.append(Case("size: a 3 GB sparse .py file", 15, setup=_sparse(3 << 30 if full else 50 << 20), expect=(3,)))
    return out


# -- setups and checks -----------------------------------------------------------------

def _forge_cache(d: Path) -> None:
    """A first run fills the cache; then every entry names /dev/zero among the
    files it depends on, as a committed (git add -f) cache could."""
    _run(d, ["--cache-dir", ".aicompat_cache", "."], {}, None)
    for p in (d / ".aicompat_cache").rglob("*.json"):
        try:
            doc = json.loads(p.read_text())
        except (OSError, ValueError):
            continue
        for holder in _dicts(doc):
            if "reads" in holder:
                holder["reads"] = ["/dev/zero"]
            if "diagnostics" in holder:
                holder["diagnostics"] = []
        p.write_text(json.dumps(doc))


def _dicts(x):
    if isinstance(x, dict):
        yield x
        for v in x.values():
            yield from _dicts(v)
    elif isinstance(x, list):
        for v in x:
            yield from _dicts(v)


def _link_setup(d: Path) -> None:
    (d / "repo").mkdir()
    (d / "repo" / "setup.py").symlink_to(d / "outside" / "setup.py")


def _fake_smi(d: Path) -> None:
    smi = d / "nvidia-smi"
    smi.write_text(f"#!/bin/sh\ntouch {d / 'smi-ran'}\necho 9.0\n")
    smi.chmod(0o755)


def _deep(depth: int):
    def make(d: Path) -> None:
        p = d
        for _ in range(depth):  # os.makedirs recurses once per level
            p = p / "d"
            p.mkdir()
        (p / "a.py").write_text(FP8)
    return make


def _sparse(size: int):
    def make(d: Path) -> None:
        with open(d / "big.py", "wb") as fh:
            fh.write(b"import torch\n")
            fh.truncate(size)
    return make


def _finding(code: str):
    return lambda d, out, err: "" if code in out else f"{code} missing (a forged entry hid it)"


def _nothing_at(rel: str):
    return lambda d, out, err: f"{rel} was written" if (d / rel).exists() else ""


def _unchanged(rel: str):
    def check(d, out, err):
        text = (d / rel).read_text()
        return "" if '"7.0"' in text else "the file outside the tree was rewritten"
    return check


def _no_raw(ch: str):
    return lambda d, out, err: f"raw {ch!r} in the output" if ch in out else ""


def _sarif_uri(want: str):
    def check(d, out, err):
        try:
            uris = [loc["physicalLocation"]["artifactLocation"]["uri"] for run in json.loads(out)["runs"]
                    for r in run["results"] for loc in r["locations"]]
        except (ValueError, KeyError, TypeError):
            return "no SARIF"
        return "" if want in uris else f"uri {uris[:1]} (want {want})"
    return check


# -- running ---------------------------------------------------------------------------

def _guard() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (GUARD, GUARD))


def _run(d: Path, args: list, env: dict, signal_after: float | None):
    cmd = [sys.executable, "-m", "aicompat", "lint"]  # no pyproject.toml above the temporary folder
    if "--timeout" not in args and "--no-timeout-flag" not in args:
        cmd += ["--timeout", str(TIMEOUT)]
    if "--cache-dir" not in args and "--use-cache" not in args:
        cmd += ["--no-cache"]
    cmd += [a for a in args if a not in ("--no-timeout-flag", "--no-jobs-flag", "--use-cache")]
    if not any(not a.startswith("-") and a not in _flag_values(args) for a in args):
        cmd.append(".")
    full_env = {**os.environ, "PYTHONPATH": str(SRC), **env}
    t0 = time.perf_counter()
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        p = subprocess.Popen(cmd, cwd=d, env=full_env, stdout=out, stderr=err, preexec_fn=_guard)
        if signal_after is not None:  # once a worker is busy (the interpreter starts slowly on a loaded machine)
            _wait_for_child(p.pid, 60)
            time.sleep(signal_after)
            t0 = time.perf_counter()  # the bound is on the time from the signal to the exit
            p.send_signal(signal.SIGTERM)
        try:
            _, status, usage = _wait4(p.pid, 600)
        except TimeoutError:
            p.kill()
            _, status, usage = os.wait4(p.pid, 0)
        wall = time.perf_counter() - t0
        p.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        stdout = out.read().decode("utf-8", "replace")
        stderr = err.read().decode("utf-8", "replace")
    return p.returncode, wall, usage.ru_maxrss / 1024, stdout, stderr


def _children(pid: int) -> list[int]:
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as fh:
            return [int(x) for x in fh.read().split()]
    except OSError:
        return []


def _wait_for_child(pid: int, limit: float) -> None:
    end = time.monotonic() + limit
    while not _children(pid) and time.monotonic() < end:
        time.sleep(0.05)


def _flag_values(args: list) -> set:
    takes = {"--timeout", "--format", "--gpu", "--cache-dir", "--write-baseline", "--baseline"}
    return {args[i + 1] for i, a in enumerate(args[:-1]) if a in takes}


def _wait4(pid: int, limit: float):
    end = time.monotonic() + limit
    while True:
        got, status, usage = os.wait4(pid, os.WNOHANG)
        if got:
            return got, status, usage
        if time.monotonic() > end:
            raise TimeoutError
        time.sleep(0.01)


@dataclass
class Row:
    case: Case
    code: int
    wall: float
    peak_mb: float
    note: str

    startup: float = 0.0  # wall time of a run over an empty folder: the interpreter, imports, the matrix

    @property
    def ok(self) -> bool:
        bound = (0 if self.case.signal_after else self.startup) + (self.case.bound or TIMEOUT + 1)
        return (self.code in self.case.expect and self.wall <= bound and self.peak_mb <= MEMORY_GOAL_MB
                and not self.note)


def run_case(c: Case, root: Path, k: int = 0) -> Row:
    d = root / f"case{abs(hash(c.name)) % 10**8}-{k}"
    d.mkdir()
    for rel, content in c.files.items():
        p = Path(os.fsdecode(os.fsencode(d) + b"/" + rel)) if isinstance(rel, bytes) else d / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        with open(p, "wb") as fh:
            fh.write(content.encode() if isinstance(content, str) else content)
    if c.setup:
        c.setup(d)
    code, wall, peak, out, err = _run(d, c.args, c.env, c.signal_after)
    note = c.check(d, out, err) if c.check else ""
    if code not in c.expect and not note:
        tail = (err.strip().splitlines() or out.strip().splitlines() or [""])[-1]
        note = f"exit {code}: {tail[:120]}"
    if code == 3 and err.count("\n") > 3 and "Traceback" in err:
        note = (note + "; " if note else "") + "traceback on stderr"
    return Row(c, code, wall, peak, note)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scale", choices=("full", "small"), default="full")
    ap.add_argument("--only", default="", help="run the inputs whose name contains this")
    args = ap.parse_args(argv)
    rows = []
    tmp = tempfile.mkdtemp(prefix="aicompat-hostile-")
    try:
        startup = min(run_case(Case("startup: an empty folder", 0, expect=(0,)), Path(tmp), n).wall for n in range(3))
        print(f"startup (empty folder, best of 3): {startup:.2f} s", file=sys.stderr)
        for c in cases(args.scale):
            if args.only.lower() not in c.name.lower():
                continue
            row = run_case(c, Path(tmp))
            row.startup = startup
            rows.append(row)
            print(f"{'ok  ' if row.ok else 'FAIL'} {row.wall:7.2f} s {row.peak_mb:7.0f} MB exit {row.code:3d}  "
                  f"{c.name}  {row.note}", file=sys.stderr, flush=True)
    finally:
        subprocess.run(["rm", "-rf", tmp], check=False)  # shutil.rmtree recurses once per level of the deep tree
    print(f"\nper-file limit {TIMEOUT:g} s (--timeout) unless the input sets one; bound: startup ({startup:.2f} s, an "
          f"empty folder) + limit + 1 s; memory goal {MEMORY_GOAL_MB} MB per process\n")
    print("| item | input | wall s | peak RSS MB | exit | honest exit | within bounds | note |")
    print("|---:|---|---:|---:|---:|---|---|---|")
    for r in rows:
        expect = "/".join(map(str, r.case.expect))
        print(f"| {r.case.item} | {r.case.name.replace('|', '/')} | {r.wall:.2f} | {r.peak_mb:.0f} | {r.code} | {expect} "
              f"| {'yes' if r.ok else 'NO'} | {r.note.replace('|', '/')} |")
    return 0 if all(r.ok for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
