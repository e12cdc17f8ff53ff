"""Issue 25, the audit's partly fixed and low items: an unreadable folder makes the
run incomplete; ``# noqa`` and the baseline count lines as Python does; the
checked repository's configuration is not looked for above its git top; an
unquoted ``python = 3.10``; --fix leaves read-only and hard-linked files alone.
Every hostile input is made here, in tmp_path."""
import contextlib
import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import SRC, lint, run_cli

FP8 = "import torch\nx = torch._scaled_mm(a, b, scale_a=sa, scale_b=sb)\n"
A100 = "[tool.aicompat]\ngpus = ['A100']\n"


def _cli(cwd, *args, env=None):
    r = run_cli("lint", *args, cwd=cwd, env=env)
    assert "Traceback" not in r.stderr, r.stderr
    return r


# -- 1: a folder that cannot be listed makes the run incomplete --------------------------

def _too_long_to_open(top: Path) -> Path:
    """A folder nested so deep that its path is over PATH_MAX (4096): opening it by
    name fails (ENAMETOOLONG) for every user, root included, where chmod 000 stops
    no one. Made through folder descriptors, as a checkout can make it."""
    fd = os.open(top, os.O_RDONLY | os.O_DIRECTORY)
    name = "d" * 200
    try:
        for _ in range(22):  # 22 * 201 > 4096
            os.mkdir(name, dir_fd=fd)
            sub = os.open(name, os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
            os.close(fd)
            fd = sub
        out = os.open("k.py", os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=fd)
        os.write(out, FP8.encode())
        os.close(out)
    finally:
        os.close(fd)
    return top / name


def _hostile_tree(tmp_path: Path) -> Path:
    proj = tmp_path / "proj"
    proj.mkdir()
    (proj / "pyproject.toml").write_text(A100)
    (proj / "a.py").write_text("import torch\n")
    _too_long_to_open(proj)
    return proj


def test_a_folder_that_cannot_be_listed_is_incomplete_not_a_finding(tmp_path):
    proj = _hostile_tree(tmp_path)
    r = _cli(proj, ".")
    assert r.returncode == 3, r.stdout + r.stderr
    line = next(ln for ln in r.stdout.splitlines() if "AIC002" in ln)
    assert "cannot read folder" in line and "the run is incomplete" in line and "AIC001" not in r.stdout
    # --exit-zero passes findings, not a run that never read a folder.
    assert _cli(proj, ".", "--exit-zero").returncode == 3
    # Neither --ignore nor the project's ignore may hide it.
    ign = _cli(proj, ".", "--ignore", "AIC002")
    assert ign.returncode == 2 and "cannot be ignored" in ign.stderr
    # --allow-incomplete lets the exit status pass; the folder is still reported.
    ok = _cli(proj, ".", "--allow-incomplete")
    assert ok.returncode == 0 and "cannot read folder" in ok.stdout


def test_a_baseline_does_not_hide_a_folder_that_cannot_be_listed(tmp_path):
    proj = _hostile_tree(tmp_path)
    (proj / "b.py").write_text(FP8)
    w = _cli(proj, ".", "--write-baseline", "base.json")
    assert w.returncode == 3 and "cannot read folder" in w.stderr  # not recorded, and said so
    r = _cli(proj, ".", "--baseline", "base.json")
    assert r.returncode == 3 and "cannot read folder" in r.stdout and "b.py" not in r.stdout


# Root reads a folder whatever its mode; without the two capabilities that let it
# (setpriv drops them) it is held to the mode like any user.
NO_DAC = ["setpriv", "--inh-caps=-dac_override,-dac_read_search", "--bounding-set=-dac_override,-dac_read_search"]


def _as_user(cwd, *args):
    prefix = NO_DAC if os.geteuid() == 0 else []
    env = dict(os.environ, PYTHONPATH=str(SRC), AICOMPAT_CACHE_DIR=str(cwd.parent / "cache"))
    return subprocess.run([*prefix, sys.executable, *args], capture_output=True, text=True, cwd=cwd, env=env,
                          timeout=120)


@contextlib.contextmanager
def _locked(tmp_path, mode):
    """A project whose folder ``locked`` (holding k.py) has ``mode``, for a user held to it."""
    proj = tmp_path / "proj"
    (proj / "locked").mkdir(parents=True)
    (proj / "locked" / "k.py").write_text(FP8)
    (proj / "locked").chmod(mode)
    try:
        if os.geteuid() == 0 and shutil.which("setpriv") is None:
            pytest.skip("root reads a folder whatever its mode and setpriv is not here to drop that")
        probe = _as_user(proj, "-c", "import os; os.stat('locked/k.py')")
        if probe.returncode == 0 or "PermissionError" not in probe.stderr:
            pytest.skip(f"this user reads a folder whatever its mode: {probe.stderr.strip()[-200:]}")
        yield proj
    finally:
        (proj / "locked").chmod(0o755)


@pytest.mark.parametrize("mode", [0, 0o444], ids=["no-access", "listed-not-searchable"])
def test_a_folder_without_read_permission_is_incomplete(tmp_path, mode):
    with _locked(tmp_path, mode) as proj:
        r = _as_user(proj, "-m", "aicompat", "lint", "--no-config", "--exit-zero", ".")
        assert "Traceback" not in r.stderr, r.stderr
        assert r.returncode == 3 and "locked:1:1: AIC002 not checked: cannot read folder: Permission denied" in r.stdout
        ok = _as_user(proj, "-m", "aicompat", "lint", "--no-config", "--allow-incomplete", ".")
        assert ok.returncode == 0 and "AIC002" in ok.stdout


# -- 2: lines are counted as Python counts them ------------------------------------------

# str.splitlines breaks on each of these; Python (and LibCST) does not.
NOT_BREAKS = ["\x0c", "\x0b", "\x1c", "\x1d", "\x1e", "\x85", "\u2028", "\u2029"]
CALL = "x = torch._scaled_mm(a, b, scale_a=sa, scale_b=sb)"


@pytest.mark.parametrize("ch", NOT_BREAKS, ids=[hex(ord(c)) for c in NOT_BREAKS])
def test_noqa_on_the_findings_line_after_a_line_break_python_does_not_count(ch):
    code = f"import torch\n# a{ch}b\n{CALL}  # noqa\n"
    assert lint(code, gpus=["A100"], select=["AIC102"]) == []


@pytest.mark.parametrize("ch", NOT_BREAKS, ids=[hex(ord(c)) for c in NOT_BREAKS])
def test_noqa_on_the_line_before_does_not_silence_the_finding(ch):
    code = f"import torch\n# a{ch} # noqa\n{CALL}\n"
    found = lint(code, gpus=["A100"], select=["AIC102"])
    assert [(d.code, d.line) for d in found] == [("AIC102", 3)]


def test_noqa_through_the_cli_after_a_form_feed(tmp_path):
    (tmp_path / "pyproject.toml").write_text(A100)
    (tmp_path / "silenced.py").write_text(f"import torch\n# a\x0cb\n{CALL}  # noqa\n")
    (tmp_path / "kept.py").write_text(f"import torch\n# a\x0c # noqa\n{CALL}\n")
    r = _cli(tmp_path, ".")
    assert r.returncode == 1 and "kept.py:3:" in r.stdout and "silenced.py" not in r.stdout


def test_a_baseline_fingerprints_the_findings_own_line_after_a_form_feed(tmp_path):
    """The baseline keeps the finding's source line: an edit to that line (here, where its
    result goes) makes it a new finding, whatever a form feed on an earlier line holds."""
    (tmp_path / "pyproject.toml").write_text(A100)
    p = tmp_path / "a.py"
    p.write_text(f"import torch\n# a\x0cb\n{CALL}\n")
    assert _cli(tmp_path, ".", "--write-baseline", "base.json").returncode == 0
    assert _cli(tmp_path, ".", "--baseline", "base.json").returncode == 0
    p.write_text(f"import torch\n# a\x0cb\n{CALL.replace('x =', 'y =')}\n")
    r = _cli(tmp_path, ".", "--baseline", "base.json")
    assert r.returncode == 1 and "a.py:3:" in r.stdout


def test_diff_hunks_count_lines_as_python_does(tmp_path):
    p = tmp_path / "env.py"
    p.write_text("import os  # a\x0cb\nos.environ['TORCH_CUDA_ARCH_LIST'] = '10.0'\n")
    r = _cli(tmp_path, "--no-config", "--gpu", "A100", "--select", "AIC302", "--diff", "env.py")
    assert r.returncode == 1 and "@@ -1,2 +1,2 @@" in r.stdout, r.stdout


# -- 3: the checked repository's configuration stops at its git top ----------------------

def _clone_below_a_config(tmp_path: Path, git_is_file: bool = False) -> tuple[Path, Path]:
    outer = tmp_path / "x"
    repo = outer / "repo"
    repo.mkdir(parents=True)
    (outer / "pyproject.toml").write_text("[tool.aicompat]\ngpus = ['A100']\nexclude = ['*.py']\n")
    (outer / "requirements.txt").write_text("torch==2.1.0\n")
    if git_is_file:  # a worktree or a submodule: .git is a file naming the real one
        (repo / ".git").write_text("gitdir: /nowhere\n")
    else:
        (repo / ".git").mkdir()
    (repo / "a.py").write_text(FP8)
    return outer, repo


@pytest.mark.parametrize("git_is_file", [False, True], ids=["git-folder", "git-file"])
def test_a_pyproject_above_the_git_top_does_not_apply(tmp_path, git_is_file):
    outer, repo = _clone_below_a_config(tmp_path, git_is_file)
    r = _cli(repo, "-v", ".", env={"AICOMPAT_CACHE_DIR": ""})
    # The outer exclude would have hidden a.py, its gpus and requirements set the target.
    assert "a.py:2:" in r.stdout, r.stdout + r.stderr
    assert "(default)" in r.stderr and "torch==2.1.0" not in r.stderr
    assert not (outer / ".aicompat_cache").exists()  # nor is its folder the cache's home


def test_outside_a_repository_the_nearest_pyproject_still_applies(tmp_path):
    outer = tmp_path / "y"
    (outer / "sub").mkdir(parents=True)
    (outer / "pyproject.toml").write_text(A100)
    (outer / "requirements.txt").write_text("torch==2.4.0\n")
    (outer / "sub" / "a.py").write_text(FP8)
    r = _cli(outer / "sub", "-v", ".")
    assert "pyproject.toml [tool.aicompat]" in r.stderr and "torch==2.4.0" in r.stderr, r.stderr


# -- 4: python = 3.10 unquoted is the float 3.1 ------------------------------------------

@pytest.mark.parametrize("value", ["3.10", "3.1", "3"])
def test_an_unquoted_python_version_is_a_config_error(tmp_path, value):
    (tmp_path / "pyproject.toml").write_text(f"[tool.aicompat]\npython = {value}\n")
    (tmp_path / "a.py").write_text("import torch\n")
    r = _cli(tmp_path, ".")
    err = r.stderr.strip()
    assert r.returncode == 2 and len(err.splitlines()) == 1, r.stdout + r.stderr
    assert "python" in err and "quote it" in err and 'python = "3.10"' in err


def test_an_unquoted_cuda_version_is_a_config_error(tmp_path):
    # cuda = 12.10 unquoted is the number 12.1: said, never read as CUDA 12.1.
    (tmp_path / "pyproject.toml").write_text("[tool.aicompat]\ncuda = 12.10\n")
    (tmp_path / "a.py").write_text("import torch\n")
    r = _cli(tmp_path, ".")
    assert r.returncode == 2 and 'quote it: cuda = "12.8"' in r.stderr and "12.1" in r.stderr, r.stderr
    (tmp_path / "pyproject.toml").write_text('[tool.aicompat]\ncuda = "12.8"\n')
    assert _cli(tmp_path, ".").returncode == 0


def test_a_quoted_python_version_is_read(tmp_path):
    (tmp_path / "pyproject.toml").write_text('[tool.aicompat]\npython = "3.10"\n')
    (tmp_path / "a.py").write_text("import torch\n")
    r = _cli(tmp_path, "-v", ".")
    assert r.returncode == 0 and "target: python 3.10 " in r.stderr, r.stderr


# -- 5: --fix leaves read-only and hard-linked files as they are -------------------------

ARCH = "import os\nos.environ['TORCH_CUDA_ARCH_LIST'] = '10.0'\n"
FIX = ["--no-config", "--gpu", "A100", "--select", "AIC302", "--fix"]


def test_fix_skips_a_read_only_file_and_fixes_the_rest(tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    ro, rw = src / "ro.py", src / "rw.py"
    ro.write_text(ARCH)
    rw.write_text(ARCH)
    ro.chmod(0o444)
    inode = ro.stat().st_ino
    r = _cli(tmp_path, *FIX, "src")
    assert ro.read_text() == ARCH and ro.stat().st_ino == inode and stat.S_IMODE(ro.stat().st_mode) == 0o444
    assert rw.read_text() != ARCH and "fixed 1 file" in r.stderr
    note = [ln for ln in r.stderr.splitlines() if "ro.py" in ln]
    assert len(note) == 1 and "read-only" in note[0], r.stderr
    assert r.returncode == 1 and "ro.py:2:" in r.stdout  # its finding is still reported


def test_fix_does_not_break_a_hard_link(tmp_path):
    (tmp_path / "src").mkdir()
    (tmp_path / "keep").mkdir()
    f = tmp_path / "src" / "env.py"
    f.write_text(ARCH)
    os.link(f, tmp_path / "keep" / "env.py")
    r = _cli(tmp_path, *FIX, "src")
    assert f.stat().st_nlink == 2 and f.read_text() == ARCH == (tmp_path / "keep" / "env.py").read_text()
    note = [ln for ln in r.stderr.splitlines() if "env.py" in ln]
    assert len(note) == 1 and "hard link" in note[0], r.stderr
    assert r.returncode == 1 and "fixed" not in r.stderr


def test_a_file_named_inside_a_folder_that_cannot_be_searched_is_incomplete_not_a_crash(tmp_path):
    with _locked(tmp_path, 0o444) as proj:  # listed, not searched: stat of locked/k.py fails
        r = _as_user(proj, "-m", "aicompat", "lint", "--no-config", "--exit-zero", "locked/k.py")
        assert "crashed" not in r.stderr and "Traceback" not in r.stderr, r.stderr
        assert r.returncode == 3 and "AIC002 not checked: cannot read folder: Permission denied" in r.stdout, r.stdout
