"""Attention layer that prefers FlashAttention 3 when the package is installed."""
import torch
import torch.nn.functional as F
from torch import nn

try:
    from flash_attn_interface import flash_attn_func as fa3_attn
    HAS_FA3 = True
except ImportError:
    fa3_attn = None
    HAS_FA3 = False

MAJOR, MINOR = torch.cuda.get_device_capability()
FA3_OK = HAS_FA3 and MAJOR >= 8


class CausalSelfAttention(nn.Module):
    def __init__(self, dim: int = 2048, heads: int = 16):
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(dim, 3 * dim, bias=False)
        self.proj = nn.Linear(dim, dim, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, s, d = x.shape
        q, k, v = self.qkv(x).view(b, s, 3, self.heads, d // self.heads).unbind(2)
        if FA3_OK:
            out = fa3_attn(q, k, v, causal=True)
        else:
            out = F.scaled_dot_product_attention(
                q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2), is_causal=True
            ).transpose(1, 2)
        return self.proj(out.reshape(b, s, d))
