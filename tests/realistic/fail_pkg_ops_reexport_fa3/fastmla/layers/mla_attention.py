"""MLA prefill attention: QK head dim 192 (128 nope + 64 rope), V head dim 128."""
import torch
import torch.nn.functional as F
from torch import nn

from ..ops import HAS_FA3, flash_attn_func


class MLAPrefill(nn.Module):
    def __init__(self, num_heads: int = 16, qk_nope_head_dim: int = 128, qk_rope_head_dim: int = 64, v_head_dim: int = 128):
        super().__init__()
        self.num_heads = num_heads
        self.qk_head_dim = qk_nope_head_dim + qk_rope_head_dim
        self.v_head_dim = v_head_dim
        self.scale = self.qk_head_dim ** -0.5

    def forward(self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        """q, k: (batch, seq, heads, qk_head_dim); v: (batch, seq, heads, v_head_dim)."""
        # FA3 needs sm_90+
        if HAS_FA3 and torch.cuda.get_device_capability(q.device)[0] >= 9:
            out = flash_attn_func(q, k, v, softmax_scale=self.scale, causal=True)
            return out[0] if isinstance(out, tuple) else out
        out = F.scaled_dot_product_attention(
            q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2), is_causal=True, scale=self.scale
        )
        return out.transpose(1, 2)


def bench(batch: int = 2, seqlen: int = 4096) -> torch.Tensor:
    attn = MLAPrefill()
    q = torch.randn(batch, seqlen, attn.num_heads, attn.qk_head_dim, device="cuda", dtype=torch.bfloat16)
    k = torch.randn(batch, seqlen, attn.num_heads, attn.qk_head_dim, device="cuda", dtype=torch.bfloat16)
    v = torch.randn(batch, seqlen, attn.num_heads, attn.v_head_dim, device="cuda", dtype=torch.bfloat16)
    return attn(q, k, v)
