"""The README shows each entry point as a newcomer can use it today (issue 15 items 7
and 11): no PyPI install of a package that is not published, a GitHub Actions job with
the permission code scanning needs and the current upload-sarif major, a pre-commit rev
that is the package's release tag, and a fast test subset that exists."""

from __future__ import annotations

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


def test_pre_commit_rev_is_the_release_tag():
    yaml = pytest.importorskip("yaml")
    config = next(yaml.safe_load(b) for b in _blocks("yaml") if "repos:" in b)
    repo = config["repos"][0]
    assert repo["rev"] == f"v{_version()}"
    hooks = {h["id"] for h in yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())}
    assert {h["id"] for h in repo["hooks"]} <= hooks


def test_fast_subset_deselects_the_slow_tests():
    r = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q", "-m", "not slow", "-p",
                        "no:cacheprovider", str(ROOT / "tests" / "test_kernel_corpus.py"),
                        str(ROOT / "tests" / "test_limits.py")], capture_output=True, text=True, cwd=ROOT,
                       timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "test_limits.py::" in r.stdout and "test_kernel_corpus.py::" not in r.stdout
    assert 'python3 -m pytest -m "not slow"' in README


@pytest.mark.slow
def test_install_from_a_git_url(tmp_path):
    """The README's ``pip install 'aicompat @ git+URL@REV'``, with this checkout as the URL
    (``file://localhost/...``: pip 23's requirement parser refuses ``file:///...``)."""
    if not (ROOT / ".git").exists():
        pytest.skip("the checkout is not a git repository")
    sha = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True).stdout.strip()
    r = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(tmp_path),
                        f"aicompat @ git+file://localhost{ROOT}@{sha}"], capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stdout + r.stderr
    assert [p.name for p in tmp_path.glob("aicompat-*.whl")] == [f"aicompat-{_version()}-py3-none-any.whl"]
