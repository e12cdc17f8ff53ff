"""The README shows each entry point as a newcomer can use it today (issue 15 items 7
and 11): no PyPI install of a package that is not published, a GitHub Actions job with
the permission code scanning needs and the current upload-sarif major, a pre-commit rev
that is the package's release tag, and a fast test subset that exists."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text()


def _blocks(lang: str) -> list[str]:
    return re.findall(rf"```{lang}\n(.*?)```", README, re.S)


def _version() -> str:
    return re.search(r'^version = "([^"]+)"', (ROOT / "pyproject.toml").read_text(), re.M).group(1)


def test_no_install_from_pypi():
    commands = [ln for ln in README.splitlines()
                if ln.strip().startswith(("python3 -m pip install", "pip install", "- run: pip install"))]
    assert len(commands) >= 4
    for line in commands:
        target = line.split("pip install", 1)[1].split("#", 1)[0]
        # A local path ('.', '.[test]') or a git URL: aicompat is not on PyPI.
        assert re.search(r"(^|\s)'?\.(\[|'|\s|$)|git\+https://", target), line


def test_github_actions_job():
    yaml = pytest.importorskip("yaml")
    jobs = [yaml.safe_load(b) for b in _blocks("yaml")]
    job = next(j["jobs"]["aicompat"] for j in jobs if isinstance(j, dict) and "jobs" in j)
    assert job["permissions"]["security-events"] == "write"
    uses = [s["uses"] for s in job["steps"] if "uses" in s]
    assert "github/codeql-action/upload-sarif@v4" in uses
    runs = [s["run"] for s in job["steps"] if "run" in s]
    assert "aicompat lint --format github ." in runs
    assert any(r.startswith("aicompat lint --format sarif --exit-zero .") for r in runs)
    assert "10 error and 10 warning annotations per step" in README.replace("\n", " ").replace("      # ", "")


def test_refs_are_commits_and_the_version_has_its_changelog():
    """No tags are published (issue 30: ``rev: v0.1.0`` failed with ``pathspec 'v0.1.0' did not
    match``), so every ref the README shows is a commit, and the version has its changelog entry."""
    yaml = pytest.importorskip("yaml")
    config = next(yaml.safe_load(b) for b in _blocks("yaml") if "repos:" in b)
    repo = config["repos"][0]
    assert repo["rev"] == "COMMIT"
    hooks = {h["id"] for h in yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())}
    assert {h["id"] for h in repo["hooks"]} <= hooks
    assert re.findall(r"git\+https://github\.com/OWNER/aicompat@(\S+?)'", README) == ["COMMIT"] * 3
    commands = [ln for ln in README.splitlines() if "pip install" in ln or re.match(r"\s*rev:", ln)]
    assert not [ln for ln in commands if re.search(r"@v\d|rev: v\d", ln)]
    assert f"## {_version()}\n" in (ROOT / "CHANGELOG.md").read_text()


def test_fast_subset_deselects_the_slow_tests():
    r = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q", "-m", "not slow", "-p",
                        "no:cacheprovider", str(ROOT / "tests" / "test_kernel_corpus.py"),
                        str(ROOT / "tests" / "test_limits.py")], capture_output=True, text=True, cwd=ROOT,
                       timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "test_limits.py::" in r.stdout and "test_kernel_corpus.py::" not in r.stdout
    assert 'python3 -m pytest -m "not slow"' in README


def _clone(tmp_path: Path) -> tuple[Path, str]:
    """A fresh clone of this checkout and its HEAD commit: what a user's ``git+URL@COMMIT`` reaches."""
    if not (ROOT / ".git").exists():
        pytest.skip("the checkout is not a git repository")
    clone = tmp_path / "aicompat-clone"
    r = subprocess.run(["git", "clone", "-q", "--no-local", str(ROOT), str(clone)], capture_output=True, text=True,
                       timeout=300)
    assert r.returncode == 0, r.stderr
    sha = subprocess.run(["git", "rev-parse", "HEAD"], cwd=clone, capture_output=True, text=True).stdout.strip()
    return clone, sha


def _as_written(line: str, clone: Path, sha: str) -> str:
    """A README line with its placeholders filled: the clone for OWNER's repository
    (``file://localhost/...``: pip 23's requirement parser refuses ``file:///...``), the commit for COMMIT."""
    return line.replace("https://github.com/OWNER/aicompat", f"file://localhost{clone}").replace("COMMIT", sha)


@pytest.mark.slow
def test_install_from_a_git_url_as_the_readme_writes_it(tmp_path):
    """The README's ``pip install 'aicompat @ git+URL@COMMIT'`` line, run as written against a clone."""
    clone, sha = _clone(tmp_path)
    line = next(ln.strip() for ln in README.splitlines() if ln.strip().startswith("python3 -m pip install 'aicompat @"))
    requirement = re.search(r"'([^']+)'", _as_written(line, clone, sha)).group(1)
    dist = tmp_path / "dist"
    r = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(dist), requirement],
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stdout + r.stderr
    assert [p.name for p in dist.glob("aicompat-*.whl")] == [f"aicompat-{_version()}-py3-none-any.whl"]


@pytest.mark.slow
def test_the_pre_commit_snippet_as_written(tmp_path):
    """The README's ``.pre-commit-config.yaml``, with the clone and its commit for OWNER and COMMIT:
    pre-commit checks the ref out, installs the hook and runs it on a file with a finding."""
    yaml = pytest.importorskip("yaml")
    pre_commit = [sys.executable, "-m", "pre_commit"]
    if subprocess.run(pre_commit + ["--version"], capture_output=True).returncode != 0:
        pytest.skip("pre-commit is not installed (pip install -e '.[test]' installs it)")
    clone, sha = _clone(tmp_path)
    block = next(b for b in _blocks("yaml") if "repos:" in b)
    config = yaml.safe_load(_as_written(block, clone, sha).replace(f"file://localhost{clone}", str(clone)))
    repo = tmp_path / "user-repo"
    repo.mkdir()
    (repo / ".pre-commit-config.yaml").write_text(yaml.safe_dump(config))
    (repo / "pyproject.toml").write_text('[tool.aicompat]\ngpus = ["A100"]\n')
    (repo / "gemm.py").write_text("import torch\n\ndef fp8(a, b, sa, sb):\n"
                                  "    return torch._scaled_mm(a, b, scale_a=sa, scale_b=sb, out_dtype=torch.bfloat16)\n")
    env = dict(os.environ, PRE_COMMIT_HOME=str(tmp_path / "pc-home"), GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@t",
               GIT_COMMITTER_NAME="t", GIT_COMMITTER_EMAIL="t@t")
    env.pop("PYTHONPATH", None)
    for cmd in (["git", "init", "-q"], ["git", "add", "."]):
        subprocess.run(cmd, cwd=repo, check=True, env=env)
    r = subprocess.run(pre_commit + ["run", "--files", "gemm.py"], cwd=repo, capture_output=True, text=True,
                       env=env, timeout=900)
    assert r.returncode == 1, r.stdout + r.stderr
    assert "gemm.py:4:12: AIC102" in r.stdout, r.stdout + r.stderr
