"""Issue 27 item 6: V100 (sm_70) in the fleet. CUDA 13.0, whose compile targets the CUDA
rules' facts come from, cannot build sm_70 (version_matrix/gpus.toml [unbuildable.sm_70]):
AIC301/AIC302 leave it unjudged and say so once; every other rule judges it by its capability."""

from conftest import lint, run_cli

_EXT = '''import os
from torch.utils.cpp_extension import load_inline

SRC = r"""
__global__ void scale(float* x, float a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] *= a;
}
"""


def build():
    return load_inline("scale_ext", "", cuda_sources=[SRC], extra_cuda_cflags=FLAGS)
'''


def test_a_build_for_volta_and_ampere_is_not_judged_for_volta(tmp_path):
    ok = _EXT.replace("FLAGS", '["-gencode=arch=compute_70,code=sm_70", "-gencode=arch=compute_80,code=sm_80"]')
    assert lint(ok, gpus=["V100", "A100"], select=["AIC301", "AIC302"]) == []
    # The twin: the Ampere target left out is still found, and the fix keeps the Volta one.
    bad = _EXT.replace("FLAGS", '["-gencode=arch=compute_70,code=sm_70"]')
    d = lint(bad, gpus=["V100", "A100"], select=["AIC302"])
    assert [(x.line, x.targets) for x in d] == [(13, ["A100"])]
    assert d[0].message.endswith("no code for sm_80 (A100), which then fails with \"no kernel image is available "
                                 "for execution on the device\"; use -gencode=arch=compute_70,code=sm_70 "
                                 "-gencode=arch=compute_80,code=sm_80")


def test_the_unjudged_gpu_is_said_once_per_run(tmp_path):
    for i in range(2):
        (tmp_path / f"ext{i}.py").write_text(_EXT.replace("FLAGS", '["-gencode=arch=compute_70,code=sm_70"]'))
    r = run_cli("lint", "--no-config", "--no-cache", "--gpu", "V100", str(tmp_path), cwd=tmp_path)
    notes = [ln for ln in r.stderr.splitlines() + r.stdout.splitlines() if "did not judge sm_70 (V100)" in ln]
    assert r.returncode == 0 and len(notes) == 1, r.stdout + r.stderr
    assert notes[0].startswith("note: AIC302 did not judge sm_70 (V100): CUDA 13.0, whose compile targets")


_AMP = '''import torch
import torch.nn.functional as F
from flash_attn import flash_attn_func


def attention(q, k, v):
    return flash_attn_func(q, k, v, causal=True)
'''


def test_python_rules_judge_volta_by_its_capability():
    d = lint(_AMP, gpus=["V100", "A100"], pins={"flash-attn": "2.6.3"}, select=["AIC106"])
    assert [(x.line, x.targets) for x in d] == [(7, ["V100"])]
    assert "FlashAttention 2 (flash-attn 2.6.3) refuses sm_70 (V100)" in d[0].message
    assert lint(_AMP, gpus=["A100"], pins={"flash-attn": "2.6.3"}, select=["AIC106"]) == []
