"""Quick check of FP8 GEMM throughput on this node."""
import torch

M = N = K = 8192
a = torch.randn(M, K, device="cuda").to(torch.float8_e4m3fn)
b = torch.randn(N, K, device="cuda").to(torch.float8_e4m3fn)
one = torch.tensor(1.0, device="cuda")

out = torch._scaled_mm(a, b.t(), scale_a=one, scale_b=one, out_dtype=torch.bfloat16)
torch.cuda.synchronize()
print(out.shape, out.dtype)
