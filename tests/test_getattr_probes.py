"""getattr(MODULE, "name") is judged as MODULE.name (AIC201, AIC102 for the FP8 dtypes), with the
name a literal, a constant or a loop item; getattr with a default never raises and guards what
follows it as hasattr does. Every failing case has a fixed twin that is clean."""
from conftest import lint


def found(code, pin, select=("AIC201", "AIC102")):
    return [(d.code, d.line, d.column, d.message) for d in lint(code, pins={"torch": pin}, select=list(select))]


NORM = '''\
import torch
import torch.nn.functional as F

NORM_FN = "rms_norm"


class Block(torch.nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.weight = torch.nn.Parameter(torch.ones(dim))
        self.norm = getattr(F, NORM_FN)

    def forward(self, x):
        return self.norm(x, (x.shape[-1],), self.weight)
'''


def test_getattr_with_a_constant_name_is_the_attribute():
    assert found(NORM, "2.3.1") == [
        ("AIC201", 11, 21, "torch.nn.functional.rms_norm is not in torch 2.3.1 (added in 2.4.0); pins allow torch 2.3.1")]
    assert found(NORM, "2.4.0") == []  # fixed twin: the release that has it
    assert found(NORM.replace('"rms_norm"', '"layer_norm"'), "2.3.1") == []  # or the function 2.3 has


DTYPES = '''\
import torch

SCALE_DTYPES = ["float32", "{name}"]


def supported_scale_dtypes():
    out = []
    for name in SCALE_DTYPES:
        out.append(getattr(torch, name))
    return out
'''


def test_getattr_over_loop_items_reaches_the_fp8_rule():
    assert found(DTYPES.format(name="float8_e8m0fnu"), "2.6.0") == [
        ("AIC102", 9, 20, "torch.float8_e8m0fnu: not in torch 2.6.0 (added in 2.7.0); AttributeError: module 'torch' "
                          "has no attribute 'float8_e8m0fnu'")]
    assert found(DTYPES.format(name="float8_e8m0fnu"), "2.7.0") == []
    assert found(DTYPES.format(name="float8_e4m3fn"), "2.6.0") == []


PROBE = '''\
import torch
import torch.nn.functional as F

_RMS = getattr(F, "rms_norm", None)
HAS_E8M0 = getattr(torch, "float8_e8m0fnu", None) is not None


def norm(x, w):
    if _RMS is not None:
        return F.rms_norm(x, (x.shape[-1],), w)
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6) * w


def scale_dtype():
    if HAS_E8M0:
        return torch.float8_e8m0fnu
    return torch.float32
'''


def test_getattr_with_a_default_guards_like_hasattr():
    assert found(PROBE, ">=2.1,<2.8") == []
    # unguarded twin: the same uses without the probes
    bare = PROBE.replace("if _RMS is not None:", "if True:").replace("if HAS_E8M0:", "if True:")
    assert [(c, ln) for c, ln, _, _ in found(bare, ">=2.1,<2.8")] == [("AIC201", 10), ("AIC102", 16)]


def test_a_name_the_model_cannot_tell_is_not_judged():
    code = "import sys\nimport torch\n\ndt = getattr(torch, sys.argv[1])\n"
    assert found(code, "2.1.0") == []
    # a getattr with a default never raises: nothing to report even where the name is missing
    assert found('import torch\ndt = getattr(torch, "float8_e8m0fnu", torch.float16)\n', "2.1.0") == []


def test_parametrize_names_with_unknown_parts_are_not_a_table():
    # vLLM 0.33.0 tests/kernels/moe/test_gpt_oss_triton_kernels.py: argnames joined from dataclass
    # fields is a string with unknown parts; reading the table crashed AIC102's getattr check (AIC000)
    code = '''
from dataclasses import dataclass, fields

import pytest
import torch


@dataclass
class Case:
    a_dtype: str
    w_dtype: str


@pytest.mark.parametrize(
    ", ".join(f.name for f in fields(Case)),
    [tuple(getattr(case, f.name) for f in fields(Case)) for case in [Case(a_dtype="bf16", w_dtype="mx4")]],
)
def test_moe(a_dtype, w_dtype):
    x = getattr(torch, "float8_e8m0fnu")
'''
    found = lint(code, gpus=("sm_80",), pins={"torch": "2.6.0"})
    assert [d.code for d in found] == ["AIC102"], [(d.code, d.message) for d in found]  # FP8 dtypes: AIC102
