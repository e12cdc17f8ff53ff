"""Issue 27 item 1: a parameter of a function that no code of the file calls is whatever a
caller passes. Every branch on it is reachable for the rules whose fact holds on any GPU (a
keyword or name the release lacks, a pickled CUDA object); the hardware rules take a branch
that only a non-default argument turns on as the caller's choice (rules/policy.toml)."""

import pytest
from conftest import lint

from aicompat.rules import registry

_ATTEND = '''import torch
import torch.nn.functional as F


def attend(q, k, v, mask=None, dropout=0.0):
    """Scaled dot-product attention with an optional additive mask."""
    if mask is not None:
        return F.scaled_dot_product_attention(q, k, v, attn_mask=mask, dropout_p=dropout, CAUSAL)
    return F.scaled_dot_product_attention(q, k, v, dropout_p=dropout)
'''


@pytest.mark.parametrize("keyword, found", [("causal=True", True), ("is_causal=False", False)])
def test_a_keyword_in_an_optional_branch_of_an_uncalled_helper(keyword, found):
    d = lint(_ATTEND.replace("CAUSAL", keyword), gpus=["A100"], select=["AIC202"])
    assert [(x.line, x.code) for x in d] == ([(8, "AIC202")] if found else [])
    if found:
        assert "accepts keyword 'causal'; did you mean 'is_causal'?" in d[0].message


def test_the_branch_stays_dead_where_the_file_calls_the_helper_without_it():
    """The file's own calls are what it does: here none passes a mask."""
    code = _ATTEND.replace("CAUSAL", "causal=True") + "\n\ndef forward(q, k, v):\n    return attend(q, k, v)\n"
    assert lint(code, gpus=["A100"], select=["AIC202"]) == []


_BLOCK = '''import torch
from torch import nn
import torch.nn.functional as F


class SelfAttention(nn.Module):
    def __init__(self, dim, heads=8):
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(dim, 3 * dim)

    def forward(self, x, mask=None):
        b, s, d = x.shape
        q, k, v = self.qkv(x).view(b, s, 3, self.heads, d // self.heads).unbind(2)
        if mask is None:
            return F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return F.scaled_dot_product_attention(q, k, v, MASK)
'''


@pytest.mark.parametrize("mask, found", [("mask=mask", True), ("attn_mask=mask", False)])
def test_a_module_never_built_in_the_file_has_its_forward_judged_on_every_branch(mask, found):
    d = lint(_BLOCK.replace("MASK", mask), gpus=["H100"], select=["AIC202"])
    assert [x.line for x in d] == ([17] if found else [])


_SAVE = '''import torch


def save_checkpoint(model, path, stream=None):
    state = {"model": model.state_dict()}
    if stream is not None:
        state["stream"] = STREAM
    torch.save(state, path)
'''


@pytest.mark.parametrize("stream, found", [("torch.cuda.Stream()", True), ("stream.priority", False)])
def test_a_pickled_cuda_object_in_an_optional_branch(stream, found):
    d = lint(_SAVE.replace("STREAM", stream), gpus=["A100"], select=["AIC104"])
    assert [(x.line, x.code) for x in d] == ([(8, "AIC104")] if found else [])


_FP8 = '''import torch


def linear(x, weight, scale, use_fp8=DEFAULT):
    if use_fp8:
        xq = x.to(torch.float8_e4m3fn)
        wq = weight.to(torch.float8_e4m3fn)
        return torch._scaled_mm(xq, wq.t(), scale_a=scale, scale_b=scale, out_dtype=torch.bfloat16)
    return x @ weight.t()
'''


@pytest.mark.parametrize("default, found", [("False", False), ("True", True)])
def test_an_opt_in_fp8_path_is_the_callers_choice(default, found):
    """AIC102 judges a GPU's features: off by default, the FP8 path runs where a caller enables it."""
    d = lint(_FP8.replace("DEFAULT", default), gpus=["A100"], select=["AIC102"])
    assert [x.line for x in d] == ([8] if found else [])


def test_the_policy_is_one_table():
    """Which rules take a caller's choice is rules/policy.toml's, set on the classes by the registry."""
    chosen = {c.code for c in registry.RULE_CLASSES if c.callers_choice}
    assert chosen == set(registry.CALLERS_CHOICE)
    assert "AIC102" in chosen and "AIC202" not in chosen and "AIC104" not in chosen


_TMEM = '''import cupy as cp

TCGEN05_SRC = r"""
extern "C" __global__ void alloc_tmem(unsigned* dst) {
BODY
}
"""


def build_kernel(arch):
    return cp.RawKernel(TCGEN05_SRC, "alloc_tmem", options=(f"--gpu-architecture={arch}",))
'''
_ALLOC = '  asm volatile("tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [%0], 32;" :: "r"(dst[0]));'


def test_unknown_arch_flags_still_judge_what_no_target_of_the_gpu_accepts():
    """``arch`` is unknown, but every compile target an H100 runs rejects tcgen05: the kernel
    fails there whatever the option says. The B200 has targets that accept it: not judged."""
    d = lint(_TMEM.replace("BODY", _ALLOC), gpus=["H100", "B200"], select=["AIC301"])
    assert [(x.line, x.column, x.targets) for x in d] == [(5, 17, ["H100"])]
    assert d[0].message.startswith(
        "cupy.RawKernel: 'tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32' (tcgen05, CUDA line 3) is "
        "rejected by every compile target that runs on sm_90 (H100), whatever the call's flags (not known here)")
    guarded = _TMEM.replace("BODY", "#if defined(__CUDA_ARCH_FEAT_SM100_ALL)\n" + _ALLOC + "\n#else\n  dst[0] = 0;\n#endif")
    assert lint(guarded, gpus=["H100", "B200"], select=["AIC301"]) == []


_PROFILE = '''import torch


class Timer:
    def __init__(self):
        self.events = []

    def start(self):
        self.events.append(torch.cuda.Event(enable_timing=True))


def export(model, path, profile=False):
    state = {"model": model.state_dict()}
    if profile:
        timer = Timer()
        timer.start()
        state["timer"] = TIMER
    torch.save(state, path)
'''


@pytest.mark.parametrize("timer, found", [("timer", True), ("len(timer.events)", False)])
def test_values_made_inside_the_optional_branch(timer, found):
    """``timer`` is defined only where ``profile`` is true: its value is read with the branch's
    condition unknown (the open twin decides conditions), not dropped as dead."""
    d = lint(_PROFILE.replace("TIMER", timer), gpus=["A100"], select=["AIC104"])
    assert [x.line for x in d] == ([18] if found else [])
    if found:
        assert "holds a CUDA event (via state['timer'].events[...]) created at line 9" in d[0].message
