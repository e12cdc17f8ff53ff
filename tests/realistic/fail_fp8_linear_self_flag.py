"""Drop-in FP8 linear layer: per-tensor scaled FP8 GEMM, bf16 fallback when the GPU has no FP8."""
import torch
import torch.nn.functional as F
from torch import nn

E4M3_MAX = torch.finfo(torch.float8_e4m3fn).max


def to_fp8(t: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    scale = t.abs().amax().clamp(min=1e-12) / E4M3_MAX
    return (t / scale).clamp(-E4M3_MAX, E4M3_MAX).to(torch.float8_e4m3fn), scale.float()


class Fp8Linear(nn.Module):
    def __init__(self, in_features: int, out_features: int):
        super().__init__()
        self.weight = nn.Parameter(torch.empty(out_features, in_features, dtype=torch.bfloat16))
        nn.init.xavier_uniform_(self.weight)
        # tensor-core FP8 from Ampere on
        self.use_fp8 = torch.cuda.get_device_capability()[0] >= 8

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if not self.use_fp8:
            return F.linear(x, self.weight)
        x_fp8, x_scale = to_fp8(x.reshape(-1, x.shape[-1]))
        w_fp8, w_scale = to_fp8(self.weight)
        out = torch._scaled_mm(x_fp8, w_fp8.t(), scale_a=x_scale, scale_b=w_scale, out_dtype=torch.bfloat16)
        return out.view(*x.shape[:-1], -1)
