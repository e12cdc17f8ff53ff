"""Quick check of FP8 GEMM throughput on this node."""
import torch

M = N = K = 8192
a = torch.randn(M, K, device="cuda").to(torch.float8_e4m3fn)
b = torch.randn(N, K, device="cuda").to(torch.float8_e4m3fn)
one = torch.tensor(1.0, device="cuda")

if torch.cuda.get_device_capability() >= (8, 9):
    out = torch._scaled_mm(a, b.t(), scale_a=one, scale_b=one, out_dtype=torch.bfloat16)
else:  # no FP8 tensor cores: upcast and run the bf16 GEMM
    out = a.to(torch.bfloat16) @ b.to(torch.bfloat16).t()
torch.cuda.synchronize()
print(out.shape, out.dtype)
