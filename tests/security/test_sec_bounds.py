"""Issue 25, bounded work outside the per-file limits: a checked repository's
config must not make the walk unbounded, and the parent process must not hold
every queued file's bytes (nor run without a memory limit of its own)."""
import fnmatch
import json
import random
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from conftest import SRC, run_cli

FP8 = "import torch\nx = torch._scaled_mm(a, b, scale_a=sa, scale_b=sb)\n"


def _project(root: Path, exclude: list[str], files=("a.py",)) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "pyproject.toml").write_text("[tool.aicompat]\ngpus = ['A100']\nexclude = " + json.dumps(exclude) + "\n")
    for name in files:
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(FP8)
    return root


def _refused(r):
    assert r.returncode == 2, (r.returncode, r.stderr)
    assert "Traceback" not in r.stderr and r.stdout == ""
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1, lines
    return lines[0]


# -- 1: the config bomb: 40,000 exclude patterns took 170 s before any file was checked ------

def test_forty_thousand_exclude_patterns_are_refused_before_the_walk(tmp_path):
    proj = _project(tmp_path / "p", [f"pat{i}*x" for i in range(40_000)], [f"f{i}.py" for i in range(31)])
    line = _refused(run_cli("lint", ".", cwd=proj))
    assert "[tool.aicompat] exclude: 40,000 patterns is over the limit of 1,000" in line


def test_an_overlong_exclude_pattern_is_refused(tmp_path):
    proj = _project(tmp_path / "p", ["ok", "*a" * 600])
    line = _refused(run_cli("lint", ".", cwd=proj))
    assert "[tool.aicompat] exclude[1]: a pattern of 1,200 characters is over the limit of 1,000" in line


def test_too_many_exclude_characters_in_all_are_refused(tmp_path):
    proj = _project(tmp_path / "p", ["*a" * 400 + str(i) for i in range(100)])
    line = _refused(run_cli("lint", ".", cwd=proj))
    assert "[tool.aicompat] exclude: 80,190 characters of patterns in all is over the limit of 50,000" in line


def test_the_most_exclude_patterns_allowed_still_exclude(tmp_path):
    """1,000 patterns: the run goes on and excludes what they name, as fnmatch would."""
    pats = [f"vendor{i}" for i in range(997)] + ["gen_*.py", "legacy/*.py", "third_party/"]
    files = ["keep.py", "gen_1.py", "legacy/old.py", "legacy/sub/deep.py", "third_party/x.py", "vendor5/y.py",
             "src/vendor996/z.py", "src/ok.py"]
    proj = _project(tmp_path / "p", pats, files)
    r = run_cli("lint", "--format", "json", "--no-cache", ".", cwd=proj)
    assert r.returncode == 1, r.stderr
    paths = {d["path"] for d in json.loads(r.stdout)["diagnostics"]}
    # legacy/*.py: fnmatch's * crosses "/", so legacy/sub/deep.py is excluded too.
    assert paths == {"keep.py", "src/ok.py"}


def _fnmatch_excluded(rel: str, patterns: list[str]) -> bool:
    """How discover matched ``exclude`` before the patterns were compiled: fnmatch per
    pattern, against the whole path and each part, and the folders above it."""
    parts = rel.split("/")
    for pat in patterns:
        pat = pat.rstrip("/")
        if fnmatch.fnmatch(rel, pat) or any(fnmatch.fnmatch(p, pat) for p in parts):
            return True
        if rel.startswith(pat + "/"):
            return True
    return False


HAND = ["skipme", "legacy/*.py", "third_party/", "*.pyi", "a?c", "[ab]*", "[!x]y", "x[", "[]]", "a[-z]b",
        "**/gen", "/", "", "dir/sub", "*", "b*/c", "\\", "a\\b", ".*", "[z-a]", "[^a]", "a|b", "(a)", "a.b"]
HAND_PATHS = ["skipme", "skipme/a.py", "src/skipme/a.py", "legacy/a.py", "legacy/x/y.py", "third_party/k.cu",
              "third_partyx/a.py", "m.pyi", "abc", "adc/x.py", "bob.py", "xy", "ay", "x[", "]", "a-b", "a]b",
              "q/gen", "dir/sub/a.py", "dir/subx.py", "b1/c", "a\\b", ".hidden/a.py", "/abs/a.py", "^", "a|b",
              "(a)", "a.b", "axb", "", "a/b/c/d/e/f.py"]


def test_the_compiled_matcher_agrees_with_fnmatch():
    from aicompat.fs.files import ExcludeMatcher

    rnd = random.Random(25)
    paths = HAND_PATHS + ["".join(rnd.choice("ab/.-!^[]") for _ in range(rnd.randint(1, 8))) for _ in range(300)]
    cases = [([p], paths) for p in HAND] + [(HAND, paths), (HAND[::-1], paths), ([], paths)]
    for _ in range(3000):  # random globs, each against a sample of the paths
        glob = "ab/*?[]!-.^\\"
        pats = ["".join(rnd.choice(glob) for _ in range(rnd.randint(0, 6))) for _ in range(rnd.randint(1, 5))]
        cases.append((pats, rnd.sample(paths, 40)))
    differ = []
    for pats, sample in cases:
        m = ExcludeMatcher(pats)
        differ += [(pats, p) for p in sample if m(p) != _fnmatch_excluded(p, pats)]
    assert differ == []
    assert sum(ExcludeMatcher(HAND)(p) for p in HAND_PATHS) > 0  # the oracle is not all False


# -- 2: the parent held the bytes of every queued file (900 files of 1.9 MB: 1.72 GB) --------

LINUX = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="RLIMIT_AS, ru_maxrss in KiB: Linux")


def _driver(code: str, cwd: Path):
    """A small Python process that runs the CLI's main() in itself, so what it measures is the parent's alone."""
    env = {"PYTHONPATH": str(SRC), "PATH": "/usr/bin:/bin", "XDG_CACHE_HOME": str(cwd / ".home")}
    r = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, cwd=cwd,
                       env=env, timeout=300)
    assert "Traceback" not in r.stderr, r.stderr
    return r


@LINUX
def test_the_parent_does_not_hold_the_queued_files(tmp_path):
    """60 files of 1 MB, each parsed on a worker: the parent's peak memory does not grow
    with them (it grew by 65 MB: every file's bytes waited in the queue)."""
    line = "#" + "x" * 99 + "\n"
    for i in range(60):  # the syntax error makes each file cheap to check, once it is on a worker
        (tmp_path / f"f{i}.py").write_text(FP8 + ")\n" + line * 10_000)
    r = _driver("""
        import json, resource
        from aicompat.cli import main
        from aicompat.matrix import default_matrix
        default_matrix()  # loaded before the measurement starts
        before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        rc = main(["lint", "--no-config", "--no-cache", "--gpu", "A100", "--jobs", "2", "--format", "json", "."])
        grown = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before
        print(json.dumps({"rc": rc, "grown_mib": grown / 1024}))
    """, tmp_path)
    *out, report = r.stdout.strip().splitlines()
    got, grown = json.loads("\n".join(out)), json.loads(report)
    assert len(got["diagnostics"]) == 60 and {d["code"] for d in got["diagnostics"]} == {"AIC001"}
    assert grown["rc"] == 1
    assert grown["grown_mib"] < 20, grown  # 60 MB of files; it grew by 53-65 MB


@LINUX
def test_the_parent_has_a_memory_limit_of_its_own(tmp_path):
    """What the parent itself takes is bounded too: 4 GiB on standard input (a sparse file,
    so nothing is written) is one line and exit 3 at the parent's limit, not 4 GiB taken."""
    big = tmp_path / "big.py"
    with open(big, "wb") as fh:
        fh.truncate(4 << 30)
    r = _stdin(tmp_path, big)
    assert r.returncode == 3, r.stderr
    assert r.stderr.strip().splitlines() == [
        "aicompat: error: out of memory: the run needed more than the 3 GiB memory limit of aicompat's own process; "
        "the run is incomplete: check fewer files at a time, or raise --max-file-size, which raises the limit"]


def _stdin(cwd: Path, file: Path, preexec_fn=None):
    """``aicompat lint -`` with ``file`` on standard input."""
    env = {"PYTHONPATH": str(SRC), "PATH": "/usr/bin:/bin", "XDG_CACHE_HOME": str(cwd / ".home")}
    with open(file, "rb") as stdin:
        return subprocess.run([sys.executable, "-m", "aicompat", "lint", "--no-config", "--gpu", "A100", "-"],
                              capture_output=True, text=True, cwd=cwd, env=env, stdin=stdin, timeout=300,
                              preexec_fn=preexec_fn)


@LINUX
def test_a_memory_limit_the_user_set_is_left_alone(tmp_path):
    """A soft limit the user set (ulimit -v) holds, lower than aicompat's own would be:
    1.5 GiB on standard input under a 1 GiB limit is one line and exit 3."""
    import resource

    big = tmp_path / "big.py"
    with open(big, "wb") as fh:
        fh.truncate(3 << 29)

    def ulimit():
        resource.setrlimit(resource.RLIMIT_AS, (1 << 30, resource.getrlimit(resource.RLIMIT_AS)[1]))

    r = _stdin(tmp_path, big, ulimit)
    assert r.returncode == 3, r.stderr
    assert r.stderr.strip().splitlines() == [
        "aicompat: error: out of memory (the process's limit, ulimit -v, or the machine's); the run is incomplete: "
        "check fewer files at a time, or raise the limit"]


@LINUX
def test_the_parents_limit_is_undone_when_main_returns(tmp_path):
    """main() called in a process of the caller's (a test, an editor plugin) leaves its limit as it was."""
    (tmp_path / "a.py").write_text(FP8)
    r = _driver("""
        import resource
        from aicompat.cli import main
        before = resource.getrlimit(resource.RLIMIT_AS)
        rc = main(["lint", "--no-config", "--no-cache", "--gpu", "A100", "--jobs", "2", "."])
        print(rc, before == resource.getrlimit(resource.RLIMIT_AS))
    """, tmp_path)
    assert r.stdout.splitlines()[-1] == "1 True"


@LINUX
def test_a_queued_file_is_linted_only_as_the_parent_checked_it(tmp_path):
    """Read again where it is linted, a file must still be the bytes the parent checked (and
    keyed the cache with): changed, or swapped for a FIFO, it is reported, not linted, and
    the read does not block."""
    import os

    from aicompat import Target
    from aicompat.matrix import default_matrix
    from aicompat.report.fix import digest
    from aicompat.run.config import build_settings
    from aicompat.run.parallel import LinterSpec, Queued, lint_serial

    m = default_matrix()
    spec = LinterSpec(build_settings(m, cli=Target(gpus=["A100"]), no_config=True).target, m)
    same, changed, fifo = tmp_path / "same.py", tmp_path / "changed.py", tmp_path / "fifo.py"
    same.write_text(FP8)
    changed.write_text(FP8.replace("sa", "s1"))
    os.mkfifo(fifo)
    checked = FP8.encode()
    work = [(i, p.name, Queued(str(p), len(checked), digest(checked))) for i, p in enumerate((same, changed, fifo))]
    got = lint_serial(spec, work, 20)
    assert [d.code for d in got[0].diagnostics] == ["AIC102"] and got[0].digest == digest(checked)
    assert [d.message for d in got[1].diagnostics] == [
        "not checked: cannot read file: it changed while it was being checked; check it again; the run is incomplete"]
    assert [d.message for d in got[2].diagnostics] == [
        "not checked: cannot read file: not a regular file; the run is incomplete"]
    assert got[1].digest is got[2].digest is None  # so neither is cached nor fixed
