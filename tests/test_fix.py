"""--fix / --diff: formatting and comments kept, idempotent, the result parses."""
import libcst as cst
from conftest import run_cli

SRC = ("import os  # build settings\n"
       "\n"
       "os.environ['TORCH_CUDA_ARCH_LIST'] = '10.0'   # written for B200\n"
       "os.environ.setdefault(\"TORCH_CUDA_ARCH_LIST\", \"8.0\")\n")


def test_fix_rewrites_arch_lists_to_cover_the_fleet(tmp_path):
    p = tmp_path / "setup_env.py"
    p.write_text(SRC)
    args = ["lint", "--no-config", "--gpu", "A100", "--gpu", "H100", "--select", "AIC302"]
    diff = run_cli(*args, "--diff", "setup_env.py", cwd=tmp_path)
    assert diff.returncode == 1 and "-os.environ['TORCH_CUDA_ARCH_LIST'] = '10.0'" in diff.stdout
    assert p.read_text() == SRC  # --diff changes nothing
    r = run_cli(*args, "--fix", "setup_env.py", cwd=tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    new = p.read_text()
    assert new == ("import os  # build settings\n"
                   "\n"
                   "os.environ['TORCH_CUDA_ARCH_LIST'] = '8.0;9.0+PTX'   # written for B200\n"
                   "os.environ.setdefault(\"TORCH_CUDA_ARCH_LIST\", \"8.0;9.0+PTX\")\n")
    cst.parse_module(new)
    # Idempotent: a second --fix changes nothing and finds nothing.
    r2 = run_cli(*args, "--fix", "setup_env.py", cwd=tmp_path)
    assert r2.returncode == 0 and p.read_text() == new and "fixed" not in r2.stderr


DEPRECATED = (
    "import torch  # training loop\n"
    "from transformers import AutoModelForCausalLM\n"
    "\n"
    "model = AutoModelForCausalLM.from_pretrained(\n"
    "    'x',\n"
    "    use_flash_attention_2=True,  # fast path\n"
    "    torch_dtype=torch.bfloat16,\n"
    ")\n"
    "scaler = torch.cuda.amp.GradScaler(2.0**16, 2.0)\n"
    "with torch.cuda.amp.autocast(True, torch.bfloat16):   # mixed precision\n"
    "    with torch.backends.cuda.sdp_kernel(enable_flash=True, enable_math=False, enable_mem_efficient=False):\n"
    "        y = model(x)\n"
)


def test_fix_rewrites_deprecated_calls_and_keywords(tmp_path):
    p = tmp_path / "train.py"
    p.write_text(DEPRECATED)
    # use_flash_attention_2 is no longer read in 4.57.1 (a TypeError: AIC202, with the same rewrite)
    args = ["lint", "--no-config", "--gpu", "H100", "--pin", "torch==2.5.1", "--pin", "transformers==4.57.1",
            "--select", "AIC202,AIC203"]
    r = run_cli(*args, "--fix", "train.py", cwd=tmp_path)
    new = p.read_text()
    assert new == (
        "import torch  # training loop\n"
        "from transformers import AutoModelForCausalLM\n"
        "\n"
        "model = AutoModelForCausalLM.from_pretrained(\n"
        "    'x',\n"
        "    attn_implementation=\"flash_attention_2\",  # fast path\n"
        "    dtype=torch.bfloat16,\n"
        ")\n"
        "scaler = torch.amp.GradScaler(\"cuda\", init_scale=2.0**16, growth_factor=2.0)\n"
        "with torch.amp.autocast(\"cuda\", enabled=True, dtype=torch.bfloat16):   # mixed precision\n"
        "    with torch.nn.attention.sdpa_kernel([torch.nn.attention.SDPBackend.FLASH_ATTENTION, "
        "torch.nn.attention.SDPBackend.CUDNN_ATTENTION]):\n"
        "        y = model(x)\n"
    ), new
    cst.parse_module(new)
    assert r.returncode == 0, r.stdout
    r2 = run_cli(*args, "--fix", "train.py", cwd=tmp_path)
    assert p.read_text() == new and "fixed" not in r2.stderr


def test_fix_skips_when_the_replacement_is_missing_in_scope(tmp_path):
    p = tmp_path / "old.py"
    src = "import torch\nscaler = torch.cuda.amp.GradScaler()\n"
    p.write_text(src)
    # torch.amp.GradScaler arrived in 2.3.0: with 2.2 in scope there is nothing safe to write.
    r = run_cli("lint", "--no-config", "--pin", "torch>=2.2,<2.6", "--select", "AIC203", "--fix", "old.py",
                cwd=tmp_path)
    assert p.read_text() == src and "AIC203" in r.stdout


def test_fix_rewrites_gencode_lists_to_cover_the_fleet(tmp_path):
    p = tmp_path / "ext.py"
    src = ("from torch.utils.cpp_extension import load_inline\n"
           "mod = load_inline(\n"
           "    name='k',  # built for B200 only\n"
           "    cuda_sources=[SRC],\n"
           "    extra_cuda_cflags=['-O3', '-gencode=arch=compute_100a,code=sm_100a', '--use_fast_math'],\n"
           ")\n")
    p.write_text(src)
    args = ["lint", "--no-config", "--gpu", "A100", "--gpu", "H100", "--select", "AIC302"]
    r = run_cli(*args, "--fix", "ext.py", cwd=tmp_path)
    new = p.read_text()
    assert new == src.replace("['-O3', '-gencode=arch=compute_100a,code=sm_100a', '--use_fast_math']",
                              "['-O3', '--use_fast_math', '-gencode=arch=compute_80,code=sm_80', "
                              "'-gencode=arch=compute_90a,code=sm_90a']"), new
    assert r.returncode == 0, r.stdout
    cst.parse_module(new)
    r2 = run_cli(*args, "--fix", "ext.py", cwd=tmp_path)
    assert p.read_text() == new and r2.returncode == 0


def test_fix_says_what_it_does_not_rewrite(tmp_path):
    """Notebooks, Dockerfiles and shell scripts keep their findings: --fix/--diff say so instead of
    doing nothing in silence; the Python twin of the same setting is fixed."""
    import json

    (tmp_path / "Dockerfile").write_text("FROM pytorch/pytorch:2.6.0-cuda12.4-cudnn9-devel\n"
                                         "ENV TORCH_CUDA_ARCH_LIST=\"8.0\"\nRUN pip install -e .\n")
    (tmp_path / "build.sh").write_text("#!/bin/sh\nexport TORCH_CUDA_ARCH_LIST=8.0\npython setup.py build_ext\n")
    cell = {"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": 1,
            "source": ["import os\n", "os.environ['TORCH_CUDA_ARCH_LIST'] = '8.0'\n"]}
    (tmp_path / "setup.ipynb").write_text(json.dumps({"cells": [cell], "metadata": {}, "nbformat": 4,
                                                      "nbformat_minor": 5}))
    (tmp_path / "env.py").write_text("import os\nos.environ['TORCH_CUDA_ARCH_LIST'] = '8.0'\n")
    args = ["lint", "--no-config", "--no-cache", "--gpu", "A100", "--gpu", "H100", "--select", "AIC302"]
    r = run_cli(*args, "--diff", ".", cwd=tmp_path)
    assert "+os.environ['TORCH_CUDA_ARCH_LIST'] = '8.0;9.0+PTX'" in r.stdout, r.stdout + r.stderr
    assert ("aicompat: --diff: only Python files are fixed; the findings in Dockerfile, build.sh, setup.ipynb are "
            "left as they are") in r.stderr, r.stderr
    r = run_cli(*args, "--fix", ".", cwd=tmp_path)
    assert "the findings in Dockerfile, build.sh, setup.ipynb are left as they are" in r.stderr, r.stderr
    assert "'8.0;9.0+PTX'" in (tmp_path / "env.py").read_text()
    assert r.returncode == 1 and "env.py" not in r.stdout and "Dockerfile:2:" in r.stdout, r.stdout


def test_fix_on_stdin_says_it_rewrites_nothing(tmp_path):
    import subprocess
    import sys

    from conftest import SRC as src

    r = subprocess.run([sys.executable, "-m", "aicompat", "lint", "--no-config", "--gpu", "H100", "--fix",
                        "--stdin-filename", "env.py"], input="import os\nos.environ['TORCH_CUDA_ARCH_LIST'] = '8.0'\n",
                       capture_output=True, text=True, cwd=tmp_path, env={"PYTHONPATH": str(src), "PATH": "/usr/bin:/bin"})
    assert r.returncode == 1 and "env.py:2:38: AIC302" in r.stdout, r.stdout + r.stderr
    assert "aicompat: --fix: standard input is checked, never rewritten" in r.stderr
