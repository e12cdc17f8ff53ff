"""Benchmark helper that pins SDPA to one backend chosen by name."""
import os

# torch 2.3/2.4 run the cuDNN SDPA backend only with this set (read at the first SDPA call)
os.environ.setdefault("TORCH_CUDNN_SDPA_ENABLED", "1")

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

BACKENDS = {"flash": SDPBackend.FLASH_ATTENTION, "cudnn": SDPBackend.CUDNN_ATTENTION, "math": SDPBackend.MATH}


def timed_attention(q, k, v, backend="cudnn"):
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    with sdpa_kernel(BACKENDS[backend]):
        out = F.scaled_dot_product_attention(q, k, v, is_causal=True)
    end.record()
    torch.cuda.synchronize()
    return out, start.elapsed_time(end)


q = torch.randn(4, 16, 2048, 128, device="cuda", dtype=torch.bfloat16)
print(timed_attention(q, q, q)[1])
