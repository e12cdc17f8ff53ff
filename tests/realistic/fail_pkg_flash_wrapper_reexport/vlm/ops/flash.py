"""Thin wrapper over FlashAttention 2 so model code does not import flash_attn directly."""
from typing import Optional

import torch
from flash_attn import flash_attn_func as _flash_attn_func


def flash_attention(
    q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, causal: bool = True, softmax_scale: Optional[float] = None
) -> torch.Tensor:
    """q, k, v: (batch, seqlen, heads, head_dim), fp16/bf16."""
    return _flash_attn_func(q, k, v, dropout_p=0.0, softmax_scale=softmax_scale, causal=causal)
