# request: FP8 linear layer using torch._scaled_mm with per-tensor scaling ; fleet: H100,A100 ; pins: torch==2.4.0
import torch
import torch.nn as nn

E4M3_MAX = torch.finfo(torch.float8_e4m3fn).max


def to_fp8(t):
    amax = t.abs().max().clamp(min=1e-12)
    scale = E4M3_MAX / amax
    return (t * scale).to(torch.float8_e4m3fn), scale.float().reciprocal()


class FP8Linear(nn.Module):
    def __init__(self, in_features, out_features, bias=True):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(out_features, in_features) * 0.02)
        self.bias = nn.Parameter(torch.zeros(out_features)) if bias else None

    def forward(self, x):
        x2 = x.reshape(-1, x.shape[-1])
        xq, xs = to_fp8(x2)
        wq, ws = to_fp8(self.weight)
        out, _ = torch._scaled_mm(xq, wq.t(), scale_a=xs, scale_b=ws,
                                  bias=self.bias, out_dtype=torch.bfloat16)
        return out.view(*x.shape[:-1], -1)


if __name__ == "__main__":
    layer = FP8Linear(4096, 4096).cuda()
    x = torch.randn(16, 4096, device="cuda", dtype=torch.bfloat16)
    print(layer(x).shape)
