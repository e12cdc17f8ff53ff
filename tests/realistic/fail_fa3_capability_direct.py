"""Test script: FA3 for MLA shapes when the GPU is new enough, SDPA otherwise."""
import torch
import torch.nn.functional as F
from flash_attn_interface import flash_attn_func

q = torch.randn(1, 2048, 16, 192, device="cuda", dtype=torch.bfloat16)
k = torch.randn(1, 2048, 16, 192, device="cuda", dtype=torch.bfloat16)
v = torch.randn(1, 2048, 16, 128, device="cuda", dtype=torch.bfloat16)

if torch.cuda.get_device_capability() >= (9, 0):
    out = flash_attn_func(q, k, v, causal=True)
else:
    out = F.scaled_dot_product_attention(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2), is_causal=True)
    out = out.transpose(1, 2)
print(out.shape)
