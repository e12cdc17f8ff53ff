"""Numerics test for the FP8 GEMM path against a bf16 reference."""
import pytest
import torch

requires_cuda = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")


def quantize(t: torch.Tensor):
    scale = t.abs().max().float() / torch.finfo(torch.float8_e4m3fn).max
    return (t / scale).to(torch.float8_e4m3fn), scale


@requires_cuda
@pytest.mark.parametrize("m,n,k", [(16, 32, 64), (128, 256, 512)])
def test_scaled_mm_matches_bf16(m, n, k):
    a = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(n, k, device="cuda", dtype=torch.bfloat16)
    a8, sa = quantize(a)
    b8, sb = quantize(b)
    out = torch._scaled_mm(a8, b8.t(), scale_a=sa, scale_b=sb, out_dtype=torch.bfloat16)
    ref = a @ b.t()
    torch.testing.assert_close(out.float(), ref.float(), atol=0.5, rtol=0.1)
