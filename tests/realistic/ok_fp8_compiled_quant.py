"""Activation quantizer for FP8 KV-cache storage, compiled to fuse amax + scale + cast."""
import torch

FP8_MAX = 448.0


def _quantize_kv(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    amax = x.abs().amax(dim=-1, keepdim=True).clamp(min=1e-6)
    scale = FP8_MAX / amax
    return (x * scale).clamp(-FP8_MAX, FP8_MAX).to(torch.float8_e4m3fn), scale.reciprocal()


# Triton emits float8_e4m3fn (fp8e4nv) only for sm_89+; older GPUs run the eager version.
quantize_kv = torch.compile(_quantize_kv, fullgraph=True) if torch.cuda.get_device_capability() >= (8, 9) else _quantize_kv


def dequantize_kv(x_fp8: torch.Tensor, inv_scale: torch.Tensor) -> torch.Tensor:
    return x_fp8.to(torch.bfloat16) * inv_scale


if __name__ == "__main__":
    kv = torch.randn(8, 1024, 128, device="cuda", dtype=torch.bfloat16)
    q, s = quantize_kv(kv)
    print((dequantize_kv(q, s) - kv).abs().max())
