"""A ``for`` body runs once per item of its iterable: with the items known, rules judge
each run (loop_items.py), as they judge each row of a parametrized test. Benchmarks and
tests sweep head dims and dtypes this way; the loop variable used to be the join of the
items, and rules that need an exact value stayed silent."""

import textwrap

from conftest import lint

SWEEP = """
import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

HEAD_DIMS = {head_dims}


def bench_flash(batch=2, heads=8, seqlen=1024):
    for head_dim in HEAD_DIMS:
{skip}        q = torch.randn(batch, heads, seqlen, head_dim, device="cuda", dtype=torch.float16)
        with sdpa_kernel([SDPBackend.FLASH_ATTENTION]):
            F.scaled_dot_product_attention(q, q, q, is_causal=True)
"""


def found(code, gpus=("A100", "H100"), select=("AIC106",)):
    return [(d.code, d.line, d.message) for d in lint(textwrap.dedent(code), gpus=gpus, select=list(select))]


def test_a_swept_head_dim_the_flash_backend_refuses():
    got = found(SWEEP.format(head_dims="(64, 128, 512)", skip=""))
    assert [(c, line) for c, line, _ in got] == [("AIC106", 13)]
    assert "head dim 512" in got[0][2] and "sm_80 (A100), sm_90 (H100)" in got[0][2]


def test_a_sweep_within_the_limit_is_clean():
    assert found(SWEEP.format(head_dims="(64, 128, 256)", skip="")) == []


def test_a_sweep_that_skips_the_large_head_dims_is_clean():
    skip = "        if head_dim > 256:\n            continue\n"
    assert found(SWEEP.format(head_dims="(64, 128, 512)", skip=skip)) == []


def test_a_list_filled_by_append_is_swept_item_by_item():
    filled = "[]\nfor _mult in (1, 2, 4):\n    HEAD_DIMS.append(128 * _mult)"
    got = found(SWEEP.format(head_dims=filled, skip=""))
    assert [(c, line) for c, line, _ in got] == [("AIC106", 15)]
    assert "head dim 512" in got[0][2]
    halved = "[]\nfor _mult in (1, 2):\n    HEAD_DIMS.append(64 * _mult)"
    assert found(SWEEP.format(head_dims=halved, skip="")) == []


# The loop is in the caller; the attention call and the forced backend list are in a helper.
HELPER = """
import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel


def attend(q, k, v, backends):
    with sdpa_kernel(backends):
        return F.scaled_dot_product_attention(q, k, v)


def sweep(backends):
    for head_dim in (96, 192, 320):
        q = torch.randn(1, 16, 2048, head_dim, device="cuda", dtype=torch.bfloat16)
        attend(q, q, q, backends)


sweep({backends})
"""


def test_a_loop_in_the_caller_and_backends_handed_down():
    got = found(HELPER.format(backends="[SDPBackend.FLASH_ATTENTION]"))
    assert [(c, line) for c, line, _ in got] == [("AIC106", 9)]
    assert "head dim 320" in got[0][2]
    # with the memory-efficient backend allowed too, SDPA falls back to it
    assert found(HELPER.format(backends="[SDPBackend.FLASH_ATTENTION, SDPBackend.EFFICIENT_ATTENTION]")) == []


# A dtype sweep whose FP8 item is skipped below sm_89 (torch._scaled_mm's capability check).
DTYPE_SWEEP = """
import torch

FP8_OK = torch.cuda.get_device_capability() >= (8, 9)


def matmul(a, b, dtype):
    one = torch.ones((), device="cuda")
    if dtype in (torch.float8_e4m3fn, torch.float8_e5m2):
        return torch._scaled_mm(a.to(dtype), b.to(dtype).t(), scale_a=one, scale_b=one,
                                out_dtype=torch.bfloat16)
    return a.to(dtype) @ b.to(dtype).t()


def bench(a, b):
    for dtype in (torch.half, torch.bfloat16, torch.float8_e4m3fn):
{skip}        matmul(a, b, dtype)
"""


def test_a_dtype_sweep_whose_fp8_item_is_skipped_is_clean():
    skip = "        if dtype == torch.float8_e4m3fn and not FP8_OK:\n            continue\n"
    assert found(DTYPE_SWEEP.format(skip=skip), select=("AIC102",)) == []


def test_a_dtype_sweep_that_runs_fp8_everywhere_is_reported():
    got = found(DTYPE_SWEEP.format(skip=""), select=("AIC102",))
    assert [(c, line) for c, line, _ in got] == [("AIC102", 10)]
    assert "sm_80 (A100)" in got[0][2] and "sm_90" not in got[0][2]


ALIASES = """
import torch


def matmul(a, b, dtype, scale):
    if dtype in (torch.float16, torch.bfloat16):
        return a.to(dtype) @ b.to(dtype).t()
    return torch._scaled_mm(a.to(dtype), b.to(dtype).t(), scale_a=scale, scale_b=scale, out_dtype=torch.bfloat16)


def bench(a, b, scale):
    for dtype in ({dtypes}):
        matmul(a, b, dtype, scale)
"""


def test_dtype_aliases_compare_equal():
    # torch.half is torch.float16: neither item of the sweep reaches _scaled_mm
    assert found(ALIASES.format(dtypes="torch.half, torch.bfloat16"), select=("AIC102",)) == []
    got = found(ALIASES.format(dtypes="torch.half, torch.float8_e4m3fn"), select=("AIC102",))
    assert [(c, line) for c, line, _ in got] == [("AIC102", 8)]
