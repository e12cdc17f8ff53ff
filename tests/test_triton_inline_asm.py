"""Triton compiles a kernel for the GPU it runs on (sm_XYa from capability 90 on, plain sm_XY below:
triton-lang/triton third_party/nvidia/backend/compiler.py sm_arch_from_capability, used for the
PTX .target and ptxas --gpu-name). PTX handed to tl.inline_asm_elementwise is therefore judged per
fleet member against that target, and its only guard is a device check around the launch
(``kernel[grid](...)`` under ``if torch.cuda.get_device_capability() >= (8, 9)``). ptxas 13.0 here:
cvt.rn.satfinite.e4m3x2.f32 fails for sm_80/sm_86 ("Feature 'cvt with .e4m3x2/.e5m2x2' requires
.target sm_89 or higher") and assembles for sm_89, sm_90a, sm_100a and sm_120a."""
import textwrap
from pathlib import Path

from aicompat import Target, lint_paths

# An fp8 packer written as Triton kernels write hardware conversions (vLLM/SGLang quant kernels).
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


@triton.jit
def quant_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n)
    tl.store(y_ptr + offs, _to_e4m3x2(x), mask=offs < n)


'''

UNGUARDED = KERNELS + '''\
def quant(x):
    y = torch.empty(x.shape, dtype=torch.int32, device=x.device)
    quant_kernel[(triton.cdiv(x.numel(), 1024),)](x, y, x.numel(), BLOCK=1024)
    return y
'''

GUARDED = KERNELS + '''\
def quant(x):
    if torch.cuda.get_device_capability(x.device) < (8, 9):
        return x.to(torch.float8_e4m3fn).view(torch.uint8).to(torch.int32)
    y = torch.empty(x.shape, dtype=torch.int32, device=x.device)
    quant_kernel[(triton.cdiv(x.numel(), 1024),)](x, y, x.numel(), BLOCK=1024)
    return y
'''

# The check one level up: the wrapper is only called from a guarded dispatcher.
GUARDED_CALLER = UNGUARDED + '''

def quantize(x):
    major, minor = torch.cuda.get_device_capability()
    if (major, minor) >= (8, 9):
        return quant(x)
    return x.to(torch.float8_e4m3fn).view(torch.uint8).to(torch.int32)
'''


def run(tmp_path: Path, text: str, gpus=("A100", "H100")):
    p = tmp_path / "fp8_quant.py"
    p.write_text(textwrap.dedent(text))
    diags = lint_paths([p], target=Target(gpus=list(gpus)), use_config=False, select=["AIC301"])
    return [(d.line, d.column, d.targets, d.message) for d in diags]


MESSAGE = ("inline_asm_elementwise: 'cvt.rn.satfinite.e4m3x2.f32' (cvt e4m3x2, CUDA line 4) is rejected when built "
           "for sm_80 (Triton builds sm_XYa from sm_90 on, plain sm_XY below): \"Feature 'cvt with .e4m3x2/.e5m2x2' "
           "requires .target sm_89 or higher\"; fails on sm_80 (A100). Triton builds for the GPU it runs on and "
           "inline PTX has no #if: launch this kernel only where torch.cuda.get_device_capability() is one that "
           "accepts cvt e4m3x2 (8.9, 9.0, 10.0, 10.3, 11.0, 12.0, 12.1) and use a fallback elsewhere.")


def test_e4m3_cvt_in_a_triton_kernel_fails_on_a100(tmp_path):
    assert run(tmp_path, UNGUARDED) == [(12, 9, ["A100"], MESSAGE)]


def test_launch_behind_a_capability_check_is_clean(tmp_path):
    assert run(tmp_path, GUARDED) == []


def test_launch_inside_a_wrapper_called_only_behind_the_check_is_clean(tmp_path):
    assert run(tmp_path, GUARDED_CALLER) == []


def test_second_launch_without_the_check_still_fails(tmp_path):
    text = GUARDED + '''

def quant_inplace(x):
    quant_kernel[(triton.cdiv(x.numel(), 1024),)](x, x, x.numel(), BLOCK=1024)
'''
    assert [(line, t) for line, _c, t, _m in run(tmp_path, text)] == [(12, ["A100"])]


def test_kernel_kept_in_a_table_may_run_anywhere(tmp_path):
    # Referenced other than by a launch (here a dispatch table): its launches are not all seen.
    text = GUARDED + '\nKERNELS = {"e4m3": quant_kernel}\n'
    assert [(line, t) for line, _c, t, _m in run(tmp_path, text)] == [(12, ["A100"])]


def test_hopper_and_blackwell_fleet_is_clean(tmp_path):
    # sm_90a and sm_100a (what Triton builds there) both accept the cvt.
    assert run(tmp_path, UNGUARDED, gpus=("H100", "B200")) == []


def test_ada_is_clean(tmp_path):
    assert run(tmp_path, UNGUARDED, gpus=("L40S",)) == []
