"""Per-tensor scaled FP8 GEMM tests; the GPU requirement lives in one marker shared by the module."""
import pytest
import torch

requires_fp8 = pytest.mark.skipif(
    not torch.cuda.is_available() or torch.cuda.get_device_capability() < (8, 9),
    reason="torch._scaled_mm needs compute capability 8.9 or 9.0+",
)

E4M3_MAX = torch.finfo(torch.float8_e4m3fn).max


def to_fp8(x: torch.Tensor):
    amax = x.abs().max().float().clamp(min=1e-12)
    scale = amax / E4M3_MAX
    return (x / scale).to(torch.float8_e4m3fn), scale


@requires_fp8
@pytest.mark.parametrize("shape", [(64, 128, 256), (512, 1024, 2048)])
def test_scaled_mm_per_tensor(shape):
    m, k, n = shape
    a = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(n, k, device="cuda", dtype=torch.bfloat16)
    a8, a_scale = to_fp8(a)
    b8, b_scale = to_fp8(b)
    out = torch._scaled_mm(a8, b8.t(), scale_a=a_scale, scale_b=b_scale, out_dtype=torch.bfloat16)
    torch.testing.assert_close(out, a @ b.t(), atol=1.0, rtol=0.1)
