"""The pre-commit hook, run by the real pre-commit package against a throwaway repo."""
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _pre_commit():
    exe = shutil.which("pre-commit")
    if exe:
        return [exe]
    import importlib.util

    if importlib.util.find_spec("pre_commit") is None:
        pytest.skip("pre-commit is not installed (pip install -e '.[test]' installs it)")
    return [sys.executable, "-m", "pre_commit"]


def test_manifest_validates():
    r = subprocess.run(_pre_commit() + ["validate-manifest", str(ROOT / ".pre-commit-hooks.yaml")],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr


def test_try_repo_fails_on_bad_and_passes_on_good(tmp_path):
    if not (ROOT / ".git").exists():
        pytest.skip("try-repo needs the aicompat checkout to be a git repository")
    repo = tmp_path / "user-repo"
    repo.mkdir()
    (repo / "bad.py").write_text("import torch\nfrom flash_attn import flash_attn_func\n"
                                 "q = torch.randn(1, 8, 4, 192)\nv = torch.randn(1, 8, 4, 128)\n"
                                 "out = flash_attn_func(q, q, v)\n")
    (repo / "good.py").write_text("import torch\nq = torch.randn(1, 8, 4, 64)\n"
                                  "out = torch.nn.functional.scaled_dot_product_attention(q, q, q)\n")
    env = dict(os.environ, PRE_COMMIT_HOME=str(tmp_path / "pc-home"), GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@t",
               GIT_COMMITTER_NAME="t", GIT_COMMITTER_EMAIL="t@t")
    env.pop("PYTHONPATH", None)
    for cmd in (["git", "init", "-q"], ["git", "add", "."]):
        subprocess.run(cmd, cwd=repo, check=True, env=env)
    base = _pre_commit() + ["try-repo", str(ROOT), "aicompat", "--files"]
    bad = subprocess.run(base + ["bad.py"], cwd=repo, capture_output=True, text=True, env=env, timeout=900)
    assert bad.returncode == 1, bad.stdout + bad.stderr
    assert "AIC101 flash_attn_func: V head dim 128 != QK head dim 192" in bad.stdout
    good = subprocess.run(base + ["good.py"], cwd=repo, capture_output=True, text=True, env=env, timeout=900)
    assert good.returncode == 0, good.stdout + good.stderr
