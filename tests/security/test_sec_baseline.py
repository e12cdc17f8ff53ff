"""A baseline file is untrusted (committed with the pull request): it is read only
when it is a regular file of bounded size, a bad one is a one-line configuration
error (exit 2) naming it and why, and --write-baseline replaces the name with a new
regular file rather than writing through whatever is there."""
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import SRC, run_cli

FP8 = "import torch\nx = torch._scaled_mm(a, b, scale_a=sa, scale_b=sb)\n"
posix_only = pytest.mark.skipif(os.name != "posix", reason="FIFOs, /dev/zero and byte file names are POSIX")


def _project(tmp_path: Path) -> Path:
    tmp_path.mkdir(parents=True, exist_ok=True)
    (tmp_path / "pyproject.toml").write_text("[tool.aicompat]\ngpus = ['A100']\n")
    (tmp_path / "a.py").write_text(FP8)
    return tmp_path


def _quick(cwd, *args, timeout=20):
    """The CLI with a short time limit and 1.5 GB of address space, so a run that hangs on
    a FIFO or reads /dev/zero fails this test at once instead of stalling or eating memory."""
    def limit():
        import resource
        resource.setrlimit(resource.RLIMIT_AS, (1_500_000_000, 1_500_000_000))

    env = dict(os.environ, PYTHONPATH=str(SRC) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    try:
        return subprocess.run([sys.executable, "-m", "aicompat", "lint", "--no-cache", "-j", "1", *args], cwd=cwd,
                              env=env, capture_output=True, text=True, timeout=timeout, preexec_fn=limit)
    except subprocess.TimeoutExpired:
        pytest.fail(f"aicompat lint {' '.join(args)} did not finish in {timeout} s")


def _one_error(r, *words):
    assert r.returncode == 2, (r.returncode, r.stdout, r.stderr)
    lines = r.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("aicompat: error: "), r.stderr
    for w in words:
        assert w in lines[0], r.stderr
    assert "crashed" not in r.stderr and "Traceback" not in r.stderr
    return lines[0]


@posix_only
def test_a_baseline_linked_to_dev_zero_is_refused_unread(tmp_path):
    proj = _project(tmp_path)
    os.symlink("/dev/zero", proj / "bl.json")
    _one_error(_quick(proj, "--baseline", "bl.json", "."), "bl.json", "symlink")


@posix_only
def test_a_baseline_that_is_a_fifo_does_not_hang(tmp_path):
    proj = _project(tmp_path)
    os.mkfifo(proj / "bl.json")
    _one_error(_quick(proj, "--baseline", "bl.json", "."), "bl.json", "not a regular file")


def test_a_baseline_too_big_is_refused_unread(tmp_path):
    from aicompat.report.baseline import MAX_BYTES

    proj = _project(tmp_path)
    with open(proj / "bl.json", "wb") as fh:
        fh.truncate(MAX_BYTES + 1)  # sparse: costs no disk and no time
    _one_error(_quick(proj, "--baseline", "bl.json", "."), "bl.json", "larger than")


@pytest.mark.parametrize("text", ["[" * 200_000, '{"entries": [1, 2]}', '{"entries": [{"code": [], "path": "a", '
                                  '"fingerprint": "x"}]}', "null", "\xff\xfe"],
                         ids=["nested-too-deep", "entries-not-objects", "unhashable-code", "null", "not-utf8"])
def test_a_baseline_that_is_not_valid_is_a_configuration_error(tmp_path, text):
    proj = _project(tmp_path)
    (proj / "bl.json").write_bytes(text.encode("latin-1"))
    _one_error(_quick(proj, "--baseline", "bl.json", "."), "bl.json", "not an aicompat baseline")


def test_write_baseline_replaces_a_symlink_never_its_target(tmp_path):
    proj = _project(tmp_path / "proj")
    outside = tmp_path / "outside.txt"
    outside.write_text("someone else's file\n")
    os.symlink(outside, proj / "bl.json")
    r = run_cli("lint", "--no-cache", "--write-baseline", "bl.json", ".", cwd=proj)
    assert r.returncode == 0 and "wrote 1 finding to bl.json" in r.stdout, r.stderr
    assert outside.read_text() == "someone else's file\n"
    assert not (proj / "bl.json").is_symlink()
    assert len(json.loads((proj / "bl.json").read_text())["entries"]) == 1
    assert sorted(p.name for p in proj.iterdir()) == ["a.py", "bl.json", "pyproject.toml"]  # no temporary left
    again = run_cli("lint", "--no-cache", "--baseline", "bl.json", ".", cwd=proj)
    assert again.returncode == 0 and "1 suppressed" in again.stdout


@pytest.mark.parametrize("where", ["missing/bl.json", "folder"])
def test_write_baseline_that_cannot_write_is_one_escaped_line(tmp_path, where):
    proj = _project(tmp_path)
    (proj / "folder").mkdir()
    name = where + "\x1b[31m\n::error file=a.py::forged" if where != "folder" else where
    r = _quick(proj, "--write-baseline", name, ".")
    _one_error(r, "--write-baseline", "cannot write")
    assert "\x1b" not in r.stderr and "::error" not in r.stdout
    assert sorted(p.name for p in (proj / "folder").iterdir()) == []


@posix_only
def test_a_file_name_that_is_not_utf8_is_baselined(tmp_path):
    proj = _project(tmp_path)
    (proj / "a.py").unlink()
    with open(os.path.join(os.fsencode(proj), b"b\xff.py"), "w") as fh:
        fh.write(FP8)
    r = _quick(proj, "--write-baseline", "bl.json", ".")
    assert r.returncode == 0 and "wrote 1 finding" in r.stdout, r.stderr
    again = _quick(proj, "--baseline", "bl.json", ".")
    assert again.returncode == 0 and "1 suppressed" in again.stdout, again.stdout + again.stderr
