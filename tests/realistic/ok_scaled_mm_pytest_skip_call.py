"""Smoke test for the FP8 quantized MoE expert GEMM."""
import pytest
import torch


def _gpu_ok() -> bool:
    # torch._scaled_mm: compute capability 8.9 (Ada) or 9.0+
    return torch.cuda.is_available() and torch.cuda.get_device_capability() >= (8, 9)


def quantize_per_tensor(t: torch.Tensor):
    scale = (t.abs().max() / torch.finfo(torch.float8_e4m3fn).max).float()
    return (t / scale).to(torch.float8_e4m3fn), scale


def test_expert_gemm_fp8():
    ok = _gpu_ok()
    if not ok:
        pytest.skip("GPU too old for this test")
    tokens = torch.randn(256, 7168, device="cuda", dtype=torch.bfloat16)
    w_up = torch.randn(2048, 7168, device="cuda", dtype=torch.bfloat16)
    t8, ts = quantize_per_tensor(tokens)
    w8, ws = quantize_per_tensor(w_up)
    out = torch._scaled_mm(t8, w8.t(), scale_a=ts, scale_b=ws, out_dtype=torch.bfloat16)
    assert out.shape == (256, 2048)
    assert torch.isfinite(out).all()
