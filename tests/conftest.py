import os
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SRC = ROOT / "src"
if str(SRC) not in sys.path:  # run from a checkout without installing
    sys.path.insert(0, str(SRC))

# The cache's per-user secret (cachefs.py) goes to a throwaway cache home, not the user's.
if "AICOMPAT_TEST_KEEP_CACHE_HOME" not in os.environ:
    import atexit as _atexit
    import shutil as _shutil
    import tempfile as _tempfile

    os.environ["XDG_CACHE_HOME"] = _tempfile.mkdtemp(prefix="aicompat-test-home-")
    _atexit.register(_shutil.rmtree, os.environ["XDG_CACHE_HOME"], True)

from aicompat import Target, lint_source  # noqa: E402
from aicompat.matrix import default_matrix  # noqa: E402

# The whole suite takes about 11 minutes on a 2-CPU VM; `pytest -m "not slow"` leaves out
# these modules (real tools in the loop: nvcc over the kernel corpus and exact mode, the
# pre-commit and wheel installs, the property-based fuzzer), the day-to-day subset. CI runs
# everything. A single test can also carry @pytest.mark.slow.
SLOW_MODULES = {"test_kernel_corpus.py", "test_cuda_verify.py", "test_sec_exact.py", "test_precommit.py", "test_wheel.py",
                "test_fuzz.py"}
SLOW_TESTS = {"test_python_wrappers_agree_with_nvcc"}  # tests/test_aic301.py: nvcc on every wrapper


def pytest_configure(config):
    config.addinivalue_line("markers", "slow: left out of the day-to-day subset (pytest -m 'not slow')")


def pytest_collection_modifyitems(config, items):
    for item in items:
        if item.path.name in SLOW_MODULES or item.originalname in SLOW_TESTS:
            item.add_marker(pytest.mark.slow)


@pytest.fixture(scope="session")
def matrix():
    return default_matrix()


def lint(code: str, gpus=("sm_80",), pins=None, python="3.11", cuda=None, select=None):
    """Lint a snippet against a target; returns the diagnostics."""
    return lint_source(code, Target(gpus=list(gpus), python=python, pins=pins or {}, cuda=cuda), select=select)


def codes(diags):
    return [d.code for d in diags]


_CACHE = None


def run_cli(*args, cwd=None, env=None):
    """Run the CLI in a subprocess with the checkout's src on the path; its
    cache goes to a temporary folder, not into the checkout, unless ``env``
    says otherwise."""
    import subprocess
    import tempfile

    global _CACHE
    if _CACHE is None:
        import atexit
        import shutil

        _CACHE = tempfile.mkdtemp(prefix="aicompat-test-cache-")
        atexit.register(shutil.rmtree, _CACHE, True)
    e = dict(os.environ)
    e["PYTHONPATH"] = str(SRC) + os.pathsep + e.get("PYTHONPATH", "")
    e.setdefault("AICOMPAT_CACHE_DIR", _CACHE)
    e.update(env or {})
    return subprocess.run([sys.executable, "-m", "aicompat", *args], capture_output=True, text=True, cwd=cwd, env=e,
                          timeout=300)
