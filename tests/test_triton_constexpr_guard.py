"""A Triton kernel whose inline PTX sits under ``if FLAG:`` with ``FLAG: tl.constexpr``. Triton
specialises constexpr parameters per launch and generates code for the taken branch only
(triton-lang/triton python/triton/compiler/code_generator.py, CodeGenerator.visit_If: a
condition that is not a tensor is unwrapped with _unwrap_if_constexpr and only
``node.body if cond else node.orelse`` is visited), so the PTX reaches ptxas only on launches
that pass a true flag. The value comes from the launch ``kernel[grid](..., FLAG=...)`` (or the
caller that hands it down), read as any call's argument. ptxas 13.0: cvt.rn.satfinite.e4m3x2.f32
is rejected for sm_80 ("requires .target sm_89 or higher"), accepted for sm_89 and up."""
import textwrap
from pathlib import Path

from aicompat import Target, lint_paths

KERNELS = '''\
import torch
import triton
import triton.language as tl


@triton.jit
def _to_e4m3x2(x):
    return tl.inline_asm_elementwise(
        asm="""
        {
        .reg .b16 lo;
        cvt.rn.satfinite.e4m3x2.f32 lo, $2, $1;
        cvt.u32.u16 $0, lo;
        }
        """,
        constraints="=r,r,r",
        args=[x, x],
        dtype=tl.int32,
        is_pure=True,
        pack=1,
    )


DECORATORS
def quant_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr, USE_FP8_CVT: tl.constexpr = False):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    if USE_FP8_CVT:
        y = _to_e4m3x2(x)
    else:
        y = x.to(tl.float8e4nv).to(tl.uint8, bitcast=True).to(tl.int32)
    tl.store(y_ptr + offs, y, mask=mask)


'''

JIT = "@triton.jit"
AUTOTUNED = '''\
@triton.autotune(
    configs=[triton.Config({"BLOCK": 1024, "USE_FP8_CVT": True}, num_warps=4)],
    key=["n"],
)
@triton.jit'''


def launch(flag: str) -> str:
    return f'''\
def quant(x):
    y = torch.empty(x.shape, dtype=torch.int32, device=x.device)
    grid = (triton.cdiv(x.numel(), 1024),)
    quant_kernel[grid](x, y, x.numel(), BLOCK=1024{flag})
    return y
'''


# The flag decided one level up and handed down (vLLM/SGLang-style wrappers).
HANDED_DOWN = '''\
def quant(x, use_cvt):
    y = torch.empty(x.shape, dtype=torch.int32, device=x.device)
    quant_kernel[(triton.cdiv(x.numel(), 1024),)](x, y, x.numel(), BLOCK=1024, USE_FP8_CVT=use_cvt)
    return y


def quantize(x):
    return quant(x, FLAG)
'''


def run(tmp_path: Path, text: str, gpus=("A100", "H100")):
    p = tmp_path / "fp8_quant.py"
    p.write_text(textwrap.dedent(text))
    diags = lint_paths([p], target=Target(gpus=list(gpus)), use_config=False, select=["AIC301"])
    return [(d.line, d.column, list(d.targets)) for d in diags]


FINDING = [(12, 9, ["A100"])]


def test_flag_true_on_every_gpu_compiles_the_ptx_for_the_a100(tmp_path):
    assert run(tmp_path, KERNELS.replace("DECORATORS", JIT) + launch(", USE_FP8_CVT=True")) == FINDING


def test_flag_from_the_capability_at_the_launch_is_clean(tmp_path):
    flag = ", USE_FP8_CVT=torch.cuda.get_device_capability(x.device) >= (8, 9)"
    assert run(tmp_path, KERNELS.replace("DECORATORS", JIT) + launch(flag)) == []


def test_flag_left_at_its_false_default_is_clean(tmp_path):
    assert run(tmp_path, KERNELS.replace("DECORATORS", JIT) + launch("")) == []


def test_flag_an_autotune_config_may_set_is_not_taken_from_the_default(tmp_path):
    # @triton.autotune's Config sets USE_FP8_CVT=True: the default does not say what is compiled.
    assert run(tmp_path, KERNELS.replace("DECORATORS", AUTOTUNED) + launch("")) == FINDING


def test_flag_handed_down_true_by_the_caller_fails(tmp_path):
    assert run(tmp_path, KERNELS.replace("DECORATORS", JIT) + HANDED_DOWN.replace("FLAG", "True")) == FINDING


def test_flag_handed_down_from_a_capability_check_is_clean(tmp_path):
    text = HANDED_DOWN.replace("FLAG", "torch.cuda.get_device_capability() >= (8, 9)")
    assert run(tmp_path, KERNELS.replace("DECORATORS", JIT) + text) == []


def test_required_flag_from_the_capability_at_the_launch_is_clean(tmp_path):
    # No default to fall back on: only the launch's value says the branch is not compiled on the A100.
    text = KERNELS.replace("DECORATORS", JIT).replace("USE_FP8_CVT: tl.constexpr = False", "USE_FP8_CVT: tl.constexpr")
    flag = ", USE_FP8_CVT=torch.cuda.get_device_capability(x.device) >= (8, 9)"
    assert run(tmp_path, text + launch(flag)) == []
    assert run(tmp_path, text + launch(", USE_FP8_CVT=True")) == FINDING
