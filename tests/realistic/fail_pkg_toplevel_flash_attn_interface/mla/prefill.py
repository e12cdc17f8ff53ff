"""DeepSeek-style MLA prefill: QK head dim 192 (128 nope + 64 rope), V head dim 128."""
import torch
from torch import nn

from flash_attn_interface import flash_attn_func

QK_NOPE, QK_ROPE, V_DIM = 128, 64, 128


class MLAPrefill(nn.Module):
    def __init__(self, hidden: int = 2048, heads: int = 16):
        super().__init__()
        self.heads = heads
        self.q_proj = nn.Linear(hidden, heads * (QK_NOPE + QK_ROPE))
        self.k_proj = nn.Linear(hidden, heads * (QK_NOPE + QK_ROPE))
        self.v_proj = nn.Linear(hidden, heads * V_DIM)

    def forward(self, x):
        b, s, _ = x.shape
        q = self.q_proj(x).view(b, s, self.heads, QK_NOPE + QK_ROPE)
        k = self.k_proj(x).view(b, s, self.heads, QK_NOPE + QK_ROPE)
        v = self.v_proj(x).view(b, s, self.heads, V_DIM)
        return flash_attn_func(q, k, v, causal=True)
