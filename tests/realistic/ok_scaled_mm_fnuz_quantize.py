import torch

FP8_DTYPE = torch.float8_e4m3fnuz if torch.version.hip else torch.float8_e4m3fn
FP8_MAX = torch.finfo(FP8_DTYPE).max


def quantize(x, dtype=FP8_DTYPE):
    scale = x.abs().amax().float() / FP8_MAX
    return (x / scale).clamp(-FP8_MAX, FP8_MAX).to(dtype), scale


def bench_scaled_mm(m, n, k):
    a, sa = quantize(torch.randn(m, k, device="cuda", dtype=torch.bfloat16))
    b, sb = quantize(torch.randn(n, k, device="cuda", dtype=torch.bfloat16))
    return torch._scaled_mm(a, b.t(), scale_a=sa, scale_b=sb, out_dtype=torch.bfloat16)
