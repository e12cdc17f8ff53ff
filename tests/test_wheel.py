"""Build the wheel, install it into a fresh venv, and lint with the installed command.

Proves rules/, version_matrix/ and the demo ship inside the package: the
installed command runs from a folder outside the checkout.
"""
import json
import os
import shutil
import subprocess
import sys
import venv
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("wheel")
    dist = tmp / "dist"
    r = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(dist), str(ROOT)],
                       capture_output=True, text=True, timeout=600)
    if r.returncode != 0:
        pytest.fail(f"building the wheel failed:\n{r.stdout}\n{r.stderr}")
    wheel = next(dist.glob("aicompat-*.whl"))
    env_dir = tmp / "venv"
    venv.EnvBuilder(with_pip=True).create(env_dir)
    py = env_dir / "bin" / "python"
    r = subprocess.run([str(py), "-m", "pip", "install", "-q", str(wheel)], capture_output=True, text=True, timeout=600)
    if r.returncode != 0:
        pytest.fail(f"installing the wheel failed:\n{r.stdout}\n{r.stderr}")
    return wheel, env_dir


def test_wheel_contains_data(installed):
    wheel, _ = installed
    names = zipfile.ZipFile(wheel).namelist()
    for needed in ("aicompat/_data/rules/AIC101.toml", "aicompat/_data/version_matrix/gpus.toml",
                   "aicompat/_data/version_matrix/attention.toml", "aicompat/_data/fixtures/demo/fp8_linear.py",
                   "aicompat/_data/version_matrix/cuda_features.toml", "aicompat/_data/fixtures/kernels/manifest.toml",
                   "aicompat/_data/fixtures/kernels/wgmma_mma_bf16.cu", "aicompat/_data/rules/AIC301.toml",
                   "aicompat/_data/version_matrix/api/torch.toml", "aicompat/_data/version_matrix/api/index.toml",
                   "aicompat/_data/version_matrix/stdlib.toml", "aicompat/_data/rules/AIC201.toml"):
        assert needed in names


def test_installed_command_lints_a_fixture(installed, tmp_path):
    _, env_dir = installed
    work = tmp_path / "outside"
    shutil.copytree(ROOT / "fixtures" / "demo", work)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    exe = env_dir / "bin" / "aicompat"
    r = subprocess.run([str(exe), "lint", "--gpu", "A100", "--format", "json", "."], cwd=work, capture_output=True,
                       text=True, env=env, timeout=300)
    assert r.returncode == 1, r.stderr
    found = {(d["path"], d["code"]) for d in json.loads(r.stdout)["diagnostics"]}
    assert ("fp8_linear.py", "AIC102") in found and ("fa2_padded_wrong.py", "AIC101") in found
    r = subprocess.run([str(exe), "explain", "AIC102"], cwd=work, capture_output=True, text=True, env=env)
    assert r.returncode == 0 and "## Use instead" in r.stdout
    r = subprocess.run([str(env_dir / "bin" / "python"), "-c",
                        "from aicompat.base.data import data_dir; print(data_dir('version_matrix'))"],
                       cwd=work, capture_output=True, text=True, env=env)
    assert "site-packages" in r.stdout and str(ROOT) not in r.stdout
    # The generated API tables ship too: the installed command judges a call against torch 2.4.0's signatures.
    (work / "api_use.py").write_text("import torch.nn.functional as F\n"
                                     "y = F.scaled_dot_product_attention(q, k, v, enable_gqa=True)\n")
    r = subprocess.run([str(exe), "lint", "--no-config", "--pin", "torch==2.4.0", "--format", "json", "api_use.py"],
                       cwd=work, capture_output=True, text=True, env=env, timeout=300)
    assert [d["code"] for d in json.loads(r.stdout)["diagnostics"]] == ["AIC202"], r.stdout + r.stderr
