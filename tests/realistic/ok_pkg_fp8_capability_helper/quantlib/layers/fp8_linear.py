"""Linear layer with per-tensor FP8 weights; FP8 GEMM where the GPU has it, bf16 otherwise."""
import torch
from torch import nn

from ..utils.platform import supports_fp8

FP8_MAX = torch.finfo(torch.float8_e4m3fn).max


def quantize_fp8(t: torch.Tensor):
    scale = t.abs().amax().clamp(min=1e-12).float() / FP8_MAX
    return (t / scale).clamp(-FP8_MAX, FP8_MAX).to(torch.float8_e4m3fn), scale


class FP8Linear(nn.Module):
    def __init__(self, weight: torch.Tensor):
        super().__init__()
        qweight, scale = quantize_fp8(weight)
        self.register_buffer("qweight", qweight)
        self.register_buffer("weight_scale", scale)
        self.use_fp8_gemm = supports_fp8()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self.use_fp8_gemm:
            qx, x_scale = quantize_fp8(x)
            return torch._scaled_mm(qx, self.qweight.t(), scale_a=x_scale, scale_b=self.weight_scale, out_dtype=torch.bfloat16)
        w = self.qweight.to(torch.bfloat16) * self.weight_scale
        return x.to(torch.bfloat16) @ w.t()
