"""Output that never breaks or lies: a file name or a line of source the checked tree
controls gives a complete, parseable report in every format, and no line of text
output (stdout or stderr) it reaches can start a CI workflow command (``::error``)
or carry a terminal control sequence."""
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import SRC, run_cli

from aicompat.report.formatters import FORMATTERS

FP8 = "import torch\nx = torch._scaled_mm(a, b, scale_a=sa, scale_b=sb)\n"
A100 = "[tool.aicompat]\ngpus = ['A100']\n"
A100_PINNED = A100 + "pins = ['torch==2.8.0']\n"  # no run-level note after the summary line
FORGED = "\n::error file=a.py,line=1::forged\x1b[2J\x1b]0;pwned\x07"
posix_only = pytest.mark.skipif(os.name != "posix", reason="byte file names; a backslash is a separator on Windows")


def _clean(text: str) -> None:
    """No line a CI runner reads as a command, no control character but the line breaks."""
    for line in text.splitlines():
        assert not line.startswith(("::", "##")), line
        assert not any(c < " " and c != "\t" or c in "\x7f\x9b" for c in line), repr(line)


def _parsed(fmt: str, out: str) -> list[str]:
    """The file names a report names, from its parsed form: the report is complete."""
    if fmt == "json":
        doc = json.loads(out)
        assert doc["summary"]["diagnostics"] == len(doc["diagnostics"])
        return [d["path"] for d in doc["diagnostics"]]
    if fmt == "sarif":
        doc = json.loads(out)
        return [loc["physicalLocation"]["artifactLocation"]["uri"]
                for r in doc["runs"][0]["results"] for loc in r["locations"]]
    if fmt == "github":
        lines = out.splitlines()
        assert all(line.startswith(("::error ", "::warning ", "::notice ")) for line in lines), out
        return [line.split("file=", 1)[1].split(",line=", 1)[0] for line in lines if "file=" in line]
    assert fmt == "text"
    lines = out.splitlines()
    assert lines[-1].startswith("Found 1 finding"), out
    return [line.split(":", 1)[0] for line in lines[:-1]]


@posix_only
@pytest.mark.parametrize("fmt", sorted(FORMATTERS))
def test_a_file_name_that_is_not_utf8_gives_a_whole_report(tmp_path, fmt):
    (tmp_path / "pyproject.toml").write_text(A100_PINNED)
    with open(os.path.join(os.fsencode(tmp_path), b"k\xff\xfe.py"), "w") as fh:
        fh.write(FP8)
    r = run_cli("lint", "--no-cache", "--format", fmt, ".", cwd=tmp_path)
    assert r.returncode == 1 and "crashed" not in r.stderr, r.stderr
    names = _parsed(fmt, r.stdout)
    assert len(names) == 1
    if fmt == "sarif":
        assert names == ["k%FF%FE.py"]  # the file's own bytes, percent-encoded (RFC 3986)
    if fmt == "json":
        assert os.fsencode(names[0]) == b"k\xff\xfe.py"  # the name round-trips to the file


@posix_only
def test_a_backslash_in_a_posix_file_name_is_not_a_separator_in_sarif(tmp_path):
    (tmp_path / "pyproject.toml").write_text(A100)
    (tmp_path / "dir").mkdir()
    (tmp_path / "dir" / "a\\b.py").write_text(FP8)
    r = run_cli("lint", "--no-cache", "--format", "sarif", ".", cwd=tmp_path)
    assert r.returncode == 1, r.stderr
    assert _parsed("sarif", r.stdout) == ["dir/a%5Cb.py"]  # a/b.py would be another file


def _forging_requirements(root: Path) -> None:
    """Two requirements files that disagree: the note names both, one with a hostile name."""
    (root / "pyproject.toml").write_text(A100)
    (root / "requirements").mkdir()
    (root / "requirements" / "a.txt").write_text("torch==2.1.0\n")
    (root / "requirements" / f"b{FORGED}.txt").write_text("torch==2.4.0\n")
    (root / "a.py").write_text("import torch\n")


@posix_only
def test_a_requirements_file_name_cannot_forge_a_line_of_text_output(tmp_path):
    _forging_requirements(tmp_path)
    r = run_cli("lint", "--no-cache", "-v", ".", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert "requirement sources disagree" in r.stdout and "\\x1b[2J" in r.stdout
    _clean(r.stdout)
    _clean(r.stderr)


@posix_only
def test_a_requirements_file_name_stays_inside_its_github_notice(tmp_path):
    _forging_requirements(tmp_path)
    r = run_cli("lint", "--no-cache", "--format", "github", ".", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert len(lines) == 1 and lines[0].startswith("::notice title=aicompat::"), r.stdout
    assert "%0A::error file=a.py,line=1::forged\\x1b[2J" in lines[0]  # GitHub's escaping, then ours


@posix_only
def test_write_baseline_says_what_was_not_checked_in_escaped_lines(tmp_path):
    (tmp_path / "pyproject.toml").write_text(A100)
    (tmp_path / f"big{FORGED}.py").write_text(FP8 * 20)  # over --max-file-size: AIC002, printed on stderr
    r = run_cli("lint", "--no-cache", "--max-file-size", "0.0005", "--write-baseline", "bl.json", ".", cwd=tmp_path)
    assert r.returncode == 3 and "AIC002" in r.stderr, r.stderr
    assert "\\x1b[2J" in r.stderr
    _clean(r.stdout)
    _clean(r.stderr)


def test_an_error_naming_a_given_file_is_escaped(tmp_path):
    (tmp_path / "pyproject.toml").write_text(A100)
    (tmp_path / "a.py").write_text(FP8)
    r = run_cli("lint", "--no-cache", "--baseline", f"missing{FORGED}.json", ".", cwd=tmp_path)
    assert r.returncode == 2 and len(r.stderr.splitlines()) == 1, r.stderr
    _clean(r.stderr)


ARCH = "import os\nos.environ['TORCH_CUDA_ARCH_LIST'] = '8.0'\n"
DIFF_ARGS = ["lint", "--no-config", "--no-cache", "--gpu", "A100", "--gpu", "H100", "--select", "AIC302", "--diff"]


def test_diff_escapes_control_characters_of_the_source(tmp_path):
    src = "import os  # \x1b[2J\x1b]0;pwned\x07\n\tpass_through = 1 if True else 0  # \t tab kept\n" \
          "os.environ['TORCH_CUDA_ARCH_LIST'] = '8.0'  # \x1b[31m\n"
    src = src.replace("\tpass_through", "pass_through")
    (tmp_path / "setup_env.py").write_text(src)
    r = run_cli(*DIFF_ARGS, "setup_env.py", cwd=tmp_path)
    assert r.returncode == 1, r.stderr
    assert "-os.environ['TORCH_CUDA_ARCH_LIST'] = '8.0'  # \\x1b[31m\n" in r.stdout
    assert " import os  # \\x1b[2J\\x1b]0;pwned\\x07\n" in r.stdout and "# \t tab kept" in r.stdout
    _clean(r.stdout)


@pytest.mark.skipif(not os.path.exists("/usr/bin/patch"), reason="needs patch(1)")
@pytest.mark.parametrize("ending", ["\n", "\r\n", ""], ids=["lf", "crlf", "no-final-newline"])
def test_a_diff_of_plain_source_applies_with_patch(tmp_path, ending):
    src = ARCH.replace("\n", "\r\n") if ending == "\r\n" else ARCH if ending else ARCH.rstrip("\n")
    p = tmp_path / "setup_env.py"
    p.write_bytes(src.encode())
    env = dict(os.environ, PYTHONPATH=str(SRC), AICOMPAT_CACHE_DIR=str(tmp_path / "cache"))
    r = subprocess.run([sys.executable, "-m", "aicompat", *DIFF_ARGS, "setup_env.py"], cwd=tmp_path, env=env,
                       capture_output=True, timeout=120)  # bytes: the CRLF line ends as printed
    assert r.returncode == 1, r.stderr
    (tmp_path / "fix.diff").write_bytes(r.stdout)
    applied = subprocess.run(["patch", "-p1", "--dry-run", "-i", "fix.diff"], cwd=tmp_path, capture_output=True,
                             text=True)
    assert applied.returncode == 0, applied.stdout + applied.stderr + r.stdout.decode()
    subprocess.run(["patch", "-p1", "-s", "-i", "fix.diff"], cwd=tmp_path, check=True)
    fixed = run_cli("lint", "--no-config", "--no-cache", "--gpu", "A100", "--gpu", "H100", "--select", "AIC302",
                    "setup_env.py", cwd=tmp_path)
    assert fixed.returncode == 0, fixed.stdout
    assert p.read_bytes().endswith(b"+PTX'" + ending.encode())
