"""The static checks CI runs with the tests (issue 26): ruff with the project's chosen rule set
(pyproject.toml [tool.ruff]) over the code, the tests, bench/ and tools/, and mypy over the typed layers
([tool.mypy] files)."""

import shutil
import subprocess
import sys

import pytest
from conftest import ROOT


def _ruff():
    try:
        import ruff  # noqa: F401  (the wheel ships the binary; python -m ruff runs it)
    except ImportError:
        return None
    return [sys.executable, "-m", "ruff"]


@pytest.mark.skipif(_ruff() is None and shutil.which("ruff") is None,
                    reason="ruff is not installed (pip install -e '.[test]' installs it)")
def test_ruff_finds_nothing():
    cmd = _ruff() or ["ruff"]
    r = subprocess.run([*cmd, "check", "--no-cache", "src", "tests", "bench", "tools"], cwd=ROOT, capture_output=True,
                       text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr


def _has_mypy() -> bool:
    try:
        import mypy  # noqa: F401
    except ImportError:
        return False
    return True


@pytest.mark.skipif(not _has_mypy(), reason="mypy is not installed (pip install -e '.[test]' installs it)")
def test_mypy_finds_nothing_in_the_typed_layers():
    r = subprocess.run([sys.executable, "-m", "mypy", "--no-incremental", "--cache-dir=/dev/null"], cwd=ROOT, capture_output=True, text=True,
                       timeout=600)
    assert r.returncode == 0, r.stdout + r.stderr
