"""Grouped-query attention layer; SDPA options are collected in a dict and splatted."""
import torch
import torch.nn.functional as F
from torch import nn


class GQAttention(nn.Module):
    def __init__(self, dim: int = 2048, n_heads: int = 32, n_kv_heads: int = 8):
        super().__init__()
        self.n_heads = n_heads
        self.n_kv_heads = n_kv_heads
        self.head_dim = dim // n_heads
        self.wq = nn.Linear(dim, n_heads * self.head_dim, bias=False)
        self.wkv = nn.Linear(dim, 2 * n_kv_heads * self.head_dim, bias=False)
        self.wo = nn.Linear(n_heads * self.head_dim, dim, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, s, _ = x.shape
        q = self.wq(x).view(b, s, self.n_heads, self.head_dim).transpose(1, 2)
        k, v = self.wkv(x).view(b, s, 2, self.n_kv_heads, self.head_dim).permute(2, 0, 3, 1, 4)
        sdpa_kwargs = {"is_causal": True}
        if self.n_kv_heads != self.n_heads:
            sdpa_kwargs["enable_gqa"] = True
        out = F.scaled_dot_product_attention(q, k, v, **sdpa_kwargs)
        return self.wo(out.transpose(1, 2).reshape(b, s, -1))
