"""Attention for the speech encoder: prefer cuDNN attention, then flash, then memory-efficient."""
import inspect

import torch
import torch.nn.functional as F
from torch import nn
from torch.nn.attention import SDPBackend, sdpa_kernel

SDPA_BACKENDS = [SDPBackend.CUDNN_ATTENTION, SDPBackend.FLASH_ATTENTION, SDPBackend.EFFICIENT_ATTENTION]


def attention_context(prefer_cudnn: bool = True):
    kwargs = {}
    # set_priority= is newer than sdpa_kernel itself: pass it only where this torch has it
    if prefer_cudnn and "set_priority" in inspect.signature(sdpa_kernel).parameters:
        kwargs["set_priority"] = True  # try the backends in list order
    return sdpa_kernel(SDPA_BACKENDS, **kwargs)


class EncoderSelfAttention(nn.Module):
    def __init__(self, dim: int = 1024, heads: int = 16):
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(dim, 3 * dim, bias=False)
        self.out = nn.Linear(dim, dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, t, d = x.shape
        q, k, v = self.qkv(x).unflatten(-1, (3, self.heads, -1)).permute(2, 0, 3, 1, 4)
        with attention_context():
            y = F.scaled_dot_product_attention(q, k, v)
        return self.out(y.transpose(1, 2).reshape(b, t, d))
