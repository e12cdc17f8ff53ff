import torch

BLOCK = 32
E4M3_MAX = torch.finfo(torch.float8_e4m3fn).max


def to_mxfp8(x):
    """One power-of-two (e8m0) scale per 32 values along K."""
    rows, cols = x.shape
    amax = x.abs().reshape(rows, cols // BLOCK, BLOCK).amax(dim=-1)
    scales = (amax / E4M3_MAX).to(torch.float8_e8m0fnu)
    return x.to(torch.float8_e4m3fn), scales


def mxfp8_matmul(a, b):
    a8, sa = to_mxfp8(a)
    b8, sb = to_mxfp8(b)
    return torch._scaled_mm(a8, b8.t(), sa, sb, out_dtype=torch.bfloat16)


out = mxfp8_matmul(torch.randn(256, 512, device="cuda"), torch.randn(128, 512, device="cuda"))
