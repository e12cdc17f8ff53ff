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
    from aicompat.files import ExcludeMatcher

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
