"""Micro-benchmark: FlashAttention 2 at DeepSeek-V3 head dims."""
import torch
from flash_attn import flash_attn_func

batch, seqlen, heads = 4, 4096, 16
q = torch.randn(batch, seqlen, heads, 192, device="cuda", dtype=torch.bfloat16)
k = torch.randn(batch, seqlen, heads, 192, device="cuda", dtype=torch.bfloat16)
v = torch.randn(batch, seqlen, heads, 128, device="cuda", dtype=torch.bfloat16)

start = torch.cuda.Event(enable_timing=True)
end = torch.cuda.Event(enable_timing=True)
start.record()
for _ in range(10):
    out = flash_attn_func(q, k, v, causal=True)
end.record()
torch.cuda.synchronize()
print(f"{start.elapsed_time(end) / 10:.3f} ms")
