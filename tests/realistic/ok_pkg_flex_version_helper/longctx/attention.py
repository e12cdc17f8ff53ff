"""Sliding-window attention: flex_attention where torch has it, a masked SDPA otherwise."""
import torch
import torch.nn.functional as F

from .utils import is_torch_greater_or_equal

_HAS_FLEX = is_torch_greater_or_equal("2.5")
if _HAS_FLEX:
    from torch.nn.attention.flex_attention import create_block_mask, flex_attention

WINDOW = 512


def _sliding_window(b, h, q_idx, kv_idx):
    return (q_idx >= kv_idx) & (q_idx - kv_idx <= WINDOW)


def sliding_window_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    """q, k, v: (batch, heads, seq, head_dim)."""
    seqlen = q.shape[-2]
    if _HAS_FLEX:
        block_mask = create_block_mask(_sliding_window, B=None, H=None, Q_LEN=seqlen, KV_LEN=seqlen, device=q.device)
        return flex_attention(q, k, v, block_mask=block_mask)
    idx = torch.arange(seqlen, device=q.device)
    mask = (idx[:, None] >= idx[None, :]) & (idx[:, None] - idx[None, :] <= WINDOW)
    return F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
