"""Sliding-window attention through FlexAttention."""
import torch
from torch.nn.attention.flex_attention import create_block_mask, flex_attention

WINDOW = 256


def sliding_window(b, h, q_idx, kv_idx):
    return (q_idx >= kv_idx) & (q_idx - kv_idx <= WINDOW)


def windowed_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    seqlen = q.shape[-2]
    mask = create_block_mask(sliding_window, B=None, H=None, Q_LEN=seqlen, KV_LEN=seqlen, device=q.device)
    return flex_attention(q, k, v, block_mask=mask)
