"""Hostile input (issue 16): a file, a folder or a config in the linted tree must
not stall, crash or exhaust the run, nor make an incomplete run look complete.
Inputs are generated here, at sizes that keep this file fast; bench/bench_hostile.py
runs them at the audit's sizes."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import tracemalloc
from pathlib import Path

import pytest
from conftest import SRC, lint

FP8 = "import torch\nx = torch._scaled_mm(a, b)\n"


def _cli(tmp_path, monkeypatch, capsys, *args):
    from aicompat.cli import main

    monkeypatch.chdir(tmp_path)
    code = main(["lint", "--no-config", "--no-cache", "--gpu", "A100", *args])
    out, err = capsys.readouterr()
    return code, out, err


def _under(seconds: float, fn, *args):
    """fn(*args), failing the test (not hanging it) when it runs past ``seconds``."""
    def stop(*_):
        raise AssertionError(f"took more than {seconds} s")

    previous = signal.signal(signal.SIGALRM, stop)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        return fn(*args)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


# -- 3: the prefilter reads every file: its scans are linear -------------------------------

PREFILTER_UNITS = [
    "except x ",  # 180 KB once took 22 s
    "from a import (\n",
    "f'''{\n",  # an unterminated triple-quoted f-string, repeated
    "in x ",
    "@ a ",
    "type  ",
]


@pytest.mark.parametrize("unit", PREFILTER_UNITS)
def test_prefilter_time_grows_linearly(unit):
    from aicompat.matrix import default_matrix
    from aicompat.matrix.target import Target
    from aicompat.run.config import build_settings
    from aicompat.run.linter import Linter

    m = default_matrix()
    linter = Linter(build_settings(m, cli=Target(gpus=["A100"], python="3.7"), no_config=True).target, m)

    def took(size: int) -> float:
        data = (unit * (size // len(unit))).encode()
        t = time.perf_counter()
        linter.precheck(data, "a.py")
        return time.perf_counter() - t

    took(1_000)  # compile the patterns
    small, big = _under(10, took, 40_000), _under(10, took, 160_000)
    assert big < 8 * small + 0.05, (small, big)  # 4x the input: ~4x the time, never ~16x


def test_fstring_signature_does_not_backtrack_exponentially():
    """``f'`` then 30 ``{{}}`` and an unclosed ``{``: 25 pairs took minutes."""
    from aicompat.rules.python_syntax.features import SIGNATURES

    data = ("x = f'" + "{{}}" * 30 + "{").encode()  # at the end of the file: nothing closes it
    assert not _under(5, lambda: any(sig.search(data) for sig in SIGNATURES["fstring_quotes"]))
    # ... and still finds what it is for.
    assert any(sig.search(b"x = f'{d['a']}'\n") for sig in SIGNATURES["fstring_quotes"])
    assert not any(sig.search(b"x = f'{{a}} {b}'\n") for sig in SIGNATURES["fstring_quotes"])


def test_prefilter_time_counts_against_the_per_file_limit(tmp_path, monkeypatch, capsys):
    from aicompat.run.linter import Linter

    def slow(self, data, path):
        time.sleep(30)

    monkeypatch.setattr(Linter, "precheck", slow)
    (tmp_path / "a.py").write_text(FP8)
    t = time.monotonic()
    code, out, _ = _cli(tmp_path, monkeypatch, capsys, "--timeout", "0.5")
    assert time.monotonic() - t < 10
    assert "a.py:1:1: AIC002" in out and code == 3


def test_the_size_limit_comes_before_reading_the_file(tmp_path, monkeypatch, capsys):
    with open(tmp_path / "big.py", "wb") as fh:  # sparse: 200 MB on paper, nothing on disk
        fh.write(b"import torch\n")
        fh.truncate(200 << 20)
    tracemalloc.start()
    try:
        code, out, _ = _cli(tmp_path, monkeypatch, capsys)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert "big.py:1:1: AIC002 not checked: 210 MB is over the 2 MB limit" in out
    assert code == 3 and peak < 20 << 20


# -- 4: CPython's parser first; every file on a worker, never in the parent ---------------

DEEP = {
    "minus": "y = " + "-" * 10_000,
    "subscripts": "a" + "[0]" * 5_000,
    "not": "y = " + "not " * 10_000 + "x",
    "lambda": "y = " + "lambda: " * 10_000 + "x",
    "power": "y = " + "x ** " * 10_000 + "x",
    "conditional": "y = " + "a if b else " * 10_000 + "c",
    "elif": "if a:\n    pass\n" + "elif b:\n    pass\n" * 10_000,
}


@pytest.mark.parametrize("name", sorted(DEEP))
def test_what_cpython_refuses_never_reaches_libcst(name, monkeypatch):
    """LibCST crashed (5.5 GB, then SIGSEGV) or took minutes on these."""
    import libcst

    def refuse(*a, **k):
        raise AssertionError("LibCST was asked to parse it")

    monkeypatch.setattr(libcst, "parse_module", refuse)
    d = lint("import torch\n" + DEEP[name] + "\n")
    assert [x.code for x in d] == ["AIC001"] and "too deep" in d[0].message


def test_newer_syntax_than_this_interpreter_still_reaches_libcst():
    """CPython 3.11 refuses PEP 701 f-strings; LibCST reads them, and AIC401 names them."""
    if sys.version_info >= (3, 12):
        pytest.skip("this interpreter reads PEP 701 f-strings itself")
    d = lint('import torch\nx = f"{d["a"]}"\n', python="3.11")
    assert [x.code for x in d] == ["AIC401"]


def test_a_parser_crash_costs_one_file_and_never_the_run(tmp_path, monkeypatch, capsys):
    """The crash happens on a worker even for a single small file: the parent prints the report."""
    import libcst

    real = libcst.parse_module

    def crash(source, *a, **k):
        if b"CRASH" in (source if isinstance(source, bytes) else source.encode()):
            import faulthandler

            faulthandler.disable()  # pytest's would print the stack
            os.kill(os.getpid(), signal.SIGSEGV)
        return real(source, *a, **k)

    monkeypatch.setattr(libcst, "parse_module", crash)
    (tmp_path / "a.py").write_text("import torch\n# CRASH\n")
    (tmp_path / "b.py").write_text(FP8)
    for jobs in ("1", "2"):
        code, out, err = _cli(tmp_path, monkeypatch, capsys, "-j", jobs)
        assert "a.py:1:1: AIC000 internal error: the worker process checking this file died (signal 11)" in out
        assert "b.py:2:5: AIC102" in out and code == 3


def test_the_time_limit_is_a_hard_kill(tmp_path, monkeypatch, capsys):
    """A parse busy where no Python signal handler runs (native code) is ended at the CPU
    limit by the kernel (RLIMIT_CPU: whole seconds, so up to two past the limit)."""
    from aicompat.run.linter import Linter

    def stuck(self, data, path):
        signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGPROF, signal.SIGALRM})  # as inside LibCST's parser
        end = time.process_time() + 60
        while time.process_time() < end:  # busy: CPU time, as a parser's
            pass

    monkeypatch.setattr(Linter, "lint_bytes", stuck)
    (tmp_path / "a.py").write_text(FP8)
    code, out, _ = _cli(tmp_path, monkeypatch, capsys, "--timeout", "1")
    assert "a.py:1:1: AIC002 not checked: analysis used more than the 1 s CPU-time limit" in out
    assert code == 3


def test_a_worker_that_waits_is_ended_at_the_wall_clock_cap(tmp_path, monkeypatch, capsys):
    """An analysis that sleeps uses no CPU time: the wall-clock cap (10 times the limit, at least 5 s) ends it."""
    from aicompat.run.linter import Linter

    def stuck(self, data, path):
        signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGPROF, signal.SIGALRM})
        time.sleep(60)

    monkeypatch.setattr(Linter, "lint_bytes", stuck)
    (tmp_path / "a.py").write_text(FP8)
    t = time.monotonic()
    code, out, _ = _cli(tmp_path, monkeypatch, capsys, "--timeout", "0.3")
    assert time.monotonic() - t < 20
    assert ("a.py:1:1: AIC002 not checked: analysis ran for more than 5 s of wall-clock time, the last-resort cap "
            "over the 0.3 s CPU-time limit per file (--timeout)") in out
    assert code == 3


def test_a_worker_has_a_memory_limit(tmp_path, monkeypatch, capsys):
    from aicompat.run import parallel
    from aicompat.run.linter import Linter

    def greedy(self, data, path):
        return bytearray(1 << 30)  # 1 GiB, over the limit set below

    monkeypatch.setattr(parallel, "MEMORY_LIMIT", 256 << 20)
    monkeypatch.setattr(Linter, "lint_bytes", greedy)
    (tmp_path / "a.py").write_text(FP8)
    code, out, _ = _cli(tmp_path, monkeypatch, capsys)
    assert "a.py:1:1: AIC002 not checked: analysis needed more than the 0.25 GiB memory limit" in out
    assert code == 3


# -- 5: constant folding is capped -------------------------------------------------------

LOAD = "from torch.utils.cpp_extension import load_inline\n"
BOMBS = {
    "doubling": 'x = "ab" * 4096\n' + "x = x + x\n" * 18,  # 1 GB
    "fstring fields": 'x = "a" * 4000\nx = f"' + "{x}" * 2000 + '"\n',  # 8 MB, then more
    "format width": 'x = f"{1:>999999999}"\n',
    "printf width": 'x = "%999999999d" % 1\n',
    "replace": 'x = "a" * 4000\nx = x.replace("a", x)\nx = x.replace("a", x)\n',
    "power": "x = 10 ** 64\n" + "x = x ** 64\n" * 4,
    "tuple": "x = (1,) * 4000\nx = x * 4000\nx = x * 4000\n",
}


@pytest.mark.parametrize("name", sorted(BOMBS))
def test_folding_is_capped(name):
    src = LOAD + BOMBS[name] + 'load_inline(name="a", cpp_sources="", cuda_sources=str(x))\n'
    tracemalloc.start()
    try:
        _under(20, lint, src)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 64 << 20, peak


def test_folding_under_the_caps_still_folds():
    from aicompat.values import bounds

    assert not bounds.too_big("a" * 4096 * 2) and bounds.too_big("a" * (bounds.MAX_STR + 1))
    assert bounds.repeat_fits("ab", 4096) and not bounds.repeat_fits("a" * 4000, 4000)
    assert bounds.spec_fits(">20") and not bounds.spec_fits(">999999999")
    assert bounds.printf_fits("%8.3f %s") and not bounds.printf_fits("%999999999d")


# -- 8: incomplete runs are reported as such ---------------------------------------------

@pytest.fixture
def broken_rule(monkeypatch):
    from aicompat.rules.fp8 import Fp8Unsupported

    def boom(self, *a, **k):
        raise KeyError("bug")

    monkeypatch.setattr(Fp8Unsupported, "check_call", boom)


def test_noqa_never_silences_an_internal_error(tmp_path, monkeypatch, capsys, broken_rule):
    (tmp_path / "a.py").write_text("import torch  # noqa\nx = torch._scaled_mm(a, b)  # noqa: AIC000\n")
    code, out, _ = _cli(tmp_path, monkeypatch, capsys, "--select", "AIC0,AIC102")
    assert "AIC000 internal error" in out and code == 3


def test_a_baseline_never_holds_what_was_not_checked(tmp_path, monkeypatch, capsys, broken_rule):
    (tmp_path / "a.py").write_text(FP8)
    code, out, err = _cli(tmp_path, monkeypatch, capsys, "--write-baseline", "bl.json")
    assert code == 3 and "AIC000" in err
    assert [e["code"] for e in json.loads((tmp_path / "bl.json").read_text())["entries"]] == ["AIC202"]
    # A baseline that names the AIC000 (committed by someone) does not hide it either.
    from aicompat.base.diagnostics import Diagnostic
    from aicompat.report import baseline

    d = Diagnostic("a.py", 1, 1, 1, 1, "AIC000", "internal-error", "error", "x", [])
    new, old = baseline.split([d], baseline.Counter({("AIC000", "a.py", baseline.fingerprint(d, {})): 1}))
    assert new == [d] and old == []


def test_diff_on_an_incomplete_run_is_not_success(tmp_path, monkeypatch, capsys, broken_rule):
    (tmp_path / "a.py").write_text(FP8)
    code, _, _ = _cli(tmp_path, monkeypatch, capsys, "--diff")
    assert code == 3


def test_an_unreadable_folder_is_reported(tmp_path, monkeypatch, capsys):
    from aicompat.fs import files

    (tmp_path / "locked").mkdir()
    (tmp_path / "locked" / "a.py").write_text(FP8)
    real = os.scandir

    def scandir(path="."):  # we run as root, where chmod 000 does not stop a listing
        if str(path).endswith("locked"):
            raise PermissionError(13, "Permission denied", str(path))
        return real(path)

    monkeypatch.setattr(files.os, "scandir", scandir)
    code, out, _ = _cli(tmp_path, monkeypatch, capsys)
    assert "locked:1:1: AIC002 not checked: cannot read folder: Permission denied" in out and code == 3


# -- 9: a crash is exit 3 and one line; bad configuration is exit 2 ------------------------

def test_a_crash_is_one_line_and_exit_3(tmp_path, monkeypatch, capsys):
    from aicompat.run import api

    def boom(*a, **k):
        raise RuntimeError("something\nbroke")

    monkeypatch.setattr(api, "run", boom)  # the CLI imports it when a lint starts
    (tmp_path / "a.py").write_text(FP8)
    code, out, err = _cli(tmp_path, monkeypatch, capsys)
    assert code == 3 and out == ""
    assert err == "aicompat: error: crashed: RuntimeError: something broke; the run is incomplete\n"


@pytest.mark.parametrize("toml", [
    "[tool.aicompat]\ntimeout = inf\n",
    "[tool.aicompat]\ntimeout = nan\n",
    "[tool.aicompat]\ntimeout = 1e308\n",
    '[tool.aicompat]\ncache-dir = "a\\u0000b"\n',
    "[tool.aicompat]\npins = [5]\n",
    "[project]\ndependencies = [5]\n",
    'project = "x"\n',
    "tool = 5\n",
])
def test_bad_config_values_are_exit_2(tmp_path, monkeypatch, capsys, toml):
    from aicompat.cli import main

    (tmp_path / "pyproject.toml").write_text(toml)
    (tmp_path / "a.py").write_text(FP8)
    monkeypatch.chdir(tmp_path)
    assert main(["lint", "--gpu", "A100", "."]) == 2
    err = capsys.readouterr().err
    assert err.startswith("aicompat: error: ") and err.count("\n") == 1 and "pyproject.toml" in err


def test_a_non_utf8_file_name_with_a_strict_stdout(tmp_path, monkeypatch):
    import io

    from aicompat.cli import main

    (tmp_path / os.fsdecode(b"\xff\xfe.py")).write_text(FP8)
    raw = io.BytesIO()
    monkeypatch.setattr(sys, "stdout", io.TextIOWrapper(raw, encoding="ascii", errors="strict"))  # LC_ALL=C, a pipe
    monkeypatch.chdir(tmp_path)
    code = main(["lint", "--no-config", "--no-cache", "--gpu", "A100", "."])
    sys.stdout.flush()
    assert code == 1 and b"AIC102" in raw.getvalue()


def test_a_folder_tree_1100_levels_deep(tmp_path):
    from aicompat.fs.files import discover

    p = tmp_path
    for _ in range(1_100):  # os.walk recursed once per level on Python < 3.12
        p = p / "d"
        p.mkdir()
    (p / "a.py").write_text(FP8)
    found, missing = discover([str(tmp_path)], [], tmp_path)
    assert [f.name for f in found] == ["a.py"] and missing == []
    subprocess.run(["rm", "-rf", str(tmp_path / "d")], check=False)  # rmtree recurses too


# -- 10: jobs ------------------------------------------------------------------------------

def test_jobs_are_bounded_by_the_cpus(tmp_path, monkeypatch):
    from aicompat.matrix import default_matrix
    from aicompat.matrix.target import Target
    from aicompat.run import parallel
    from aicompat.run.api import run
    from aicompat.run.config import build_settings

    assert parallel.bound_jobs(100_000) == parallel.available_cpus()
    monkeypatch.setitem(parallel.MIN_PARALLEL_BYTES, "fork", 0)
    for i in range(6):
        (tmp_path / f"m{i}.py").write_text(FP8)
    m = default_matrix()
    monkeypatch.setattr(parallel, "available_cpus", lambda: 2)
    res = run([str(tmp_path)], build_settings(m, cli=Target(gpus=["A100"]), no_config=True), m, jobs=100_000)
    assert res.workers == 2


# -- 14: signals ---------------------------------------------------------------------------

@pytest.mark.parametrize("sig,code", [(signal.SIGTERM, 143), (signal.SIGINT, 130)], ids=["SIGTERM", "SIGINT"])
def test_a_signal_stops_the_workers_quietly(tmp_path, monkeypatch, capsys, sig, code):
    import threading

    from aicompat.run import parallel
    from aicompat.run.linter import Linter

    def busy(self, data, path):
        time.sleep(60)

    monkeypatch.setattr(Linter, "lint_bytes", busy)
    monkeypatch.setattr(parallel, "warm_up", lambda linter: None)  # it would be busy too
    monkeypatch.setitem(parallel.MIN_PARALLEL_BYTES, "fork", 0)
    for i in range(3):
        (tmp_path / f"s{i}.py").write_text(FP8)
    me = os.getpid()

    def children() -> list[int]:
        return [int(x) for x in Path(f"/proc/{me}/task/{me}/children").read_text().split()]

    before = set(children())
    seen: list[int] = []

    def interrupt():
        end = time.monotonic() + 30
        while len(seen) < 2 and time.monotonic() < end:
            seen[:] = [k for k in children() if k not in before]
            time.sleep(0.05)
        os.kill(me, sig)

    threading.Thread(target=interrupt, daemon=True).start()
    t = time.monotonic()
    got, out, err = _cli(tmp_path, monkeypatch, capsys, "-j", "2")
    assert got == code and err == "" and time.monotonic() - t < 20
    assert len(seen) == 2
    time.sleep(0.2)
    for k in seen:
        stat = Path(f"/proc/{k}/stat")
        assert not stat.exists() or stat.read_text().split()[2] == "Z", f"worker {k} still running"


# -- 15: notebooks -------------------------------------------------------------------------

@pytest.mark.parametrize("content", [
    json.dumps({"cells": 5}),
    json.dumps([1]),
    json.dumps({"cells": [{"cell_type": "code", "source": [1, 2]}]}),
    "[" * 100_000 + "]" * 100_000,
], ids=["cells-number", "list", "source-numbers", "deep"])
def test_a_malformed_notebook_is_a_parse_error(tmp_path, monkeypatch, capsys, content):
    (tmp_path / "a.ipynb").write_text(content)
    code, out, _ = _cli(tmp_path, monkeypatch, capsys)
    assert "a.ipynb:1:1: AIC001 cannot parse: not a readable notebook" in out and code == 1


# -- the benchmark, small ------------------------------------------------------------------

def test_bench_hostile_generates_every_input():
    """The benchmark's inputs build (the full run is by hand: bench/RESULTS.md)."""
    sys.path.insert(0, str(SRC.parent / "bench"))
    try:
        import bench_hostile
    finally:
        sys.path.remove(str(SRC.parent / "bench"))
    small = bench_hostile.cases("small")
    assert {c.item for c in small} >= {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 14, 15}
    assert all(c.files or c.setup for c in small)


def test_a_worker_dying_at_its_memory_limit_is_a_limit_not_a_crash():
    """Under RLIMIT_AS a worker whose stack cannot grow dies by SIGSEGV instead of raising
    MemoryError (TransformerEngine's dot_product_attention/utils.py did, at 3.0 GiB): the
    watched peak size tells it from a real crash, which stays AIC000."""
    from aicompat.run.parallel import _crashed

    limit = 3 << 30
    at_limit = _crashed("big.py", -signal.SIGSEGV, limit, peak=limit - (50 << 20))
    assert [(d.code, d.message) for d in at_limit.diagnostics] == [
        ("AIC002", "not checked: analysis reached the 3 GiB memory limit per file (the worker died with SIGSEGV "
                   "at 2.95 GiB; --max-file-size raises the limit); the run is incomplete".replace("2.95", "3.0"))]
    crash = _crashed("a.py", -signal.SIGSEGV, limit, peak=400 << 20)
    assert [d.code for d in crash.diagnostics] == ["AIC000"]
    assert [d.code for d in _crashed("a.py", -signal.SIGKILL, limit, peak=limit).diagnostics] == ["AIC000"]
