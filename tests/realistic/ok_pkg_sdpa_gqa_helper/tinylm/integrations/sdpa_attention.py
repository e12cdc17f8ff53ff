"""SDPA attention for grouped-query attention models."""
from typing import Optional

import torch
import torch.nn.functional as F

from ..utils.import_utils import is_torch_greater_or_equal


def use_gqa_in_sdpa(attention_mask: Optional[torch.Tensor]) -> bool:
    # enable_gqa= exists from torch 2.5; SDPA broadcasts the KV heads itself when there is no explicit mask
    return is_torch_greater_or_equal("2.5", accept_dev=True) and attention_mask is None


def repeat_kv(hidden_states: torch.Tensor, n_rep: int) -> torch.Tensor:
    batch, num_kv_heads, slen, head_dim = hidden_states.shape
    if n_rep == 1:
        return hidden_states
    hidden_states = hidden_states[:, :, None, :, :].expand(batch, num_kv_heads, n_rep, slen, head_dim)
    return hidden_states.reshape(batch, num_kv_heads * n_rep, slen, head_dim)


def sdpa_attention_forward(
    query: torch.Tensor,
    key: torch.Tensor,
    value: torch.Tensor,
    attention_mask: Optional[torch.Tensor] = None,
    dropout: float = 0.0,
    scaling: Optional[float] = None,
) -> torch.Tensor:
    sdpa_kwargs = {}
    if use_gqa_in_sdpa(attention_mask):
        sdpa_kwargs = {"enable_gqa": True}
    else:
        n_rep = query.shape[1] // key.shape[1]
        key = repeat_kv(key, n_rep)
        value = repeat_kv(value, n_rep)
    is_causal = attention_mask is None and query.shape[2] > 1
    attn_output = F.scaled_dot_product_attention(query, key, value, attn_mask=attention_mask, dropout_p=dropout, scale=scaling, is_causal=is_causal, **sdpa_kwargs)
    return attn_output.transpose(1, 2).contiguous()
