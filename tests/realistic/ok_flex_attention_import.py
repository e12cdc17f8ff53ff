"""Sliding-window attention through FlexAttention (torch >= 2.5), dense-mask SDPA before it."""
import torch
import torch.nn.functional as F

try:
    from torch.nn.attention.flex_attention import create_block_mask, flex_attention
except ImportError:  # torch < 2.5
    flex_attention = None

WINDOW = 256


def sliding_window(b, h, q_idx, kv_idx):
    return (q_idx >= kv_idx) & (q_idx - kv_idx <= WINDOW)


def windowed_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    seqlen = q.shape[-2]
    if flex_attention is None:
        idx = torch.arange(seqlen, device=q.device)
        mask = sliding_window(None, None, idx[:, None], idx[None, :])
        return F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
    mask = create_block_mask(sliding_window, B=None, H=None, Q_LEN=seqlen, KV_LEN=seqlen, device=q.device)
    return flex_attention(q, k, v, block_mask=mask)
