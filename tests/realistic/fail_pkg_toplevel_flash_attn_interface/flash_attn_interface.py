"""FlashAttention 3's Python interface kept at the top of the tree, as hopper/ installs it
(only the entry point this project uses)."""
import torch

import flash_attn_3._C  # noqa: F401  registers torch.ops.flash_attn_3

_ops = torch.ops.flash_attn_3


def flash_attn_func(q, k, v, softmax_scale=None, causal=False):
    if softmax_scale is None:
        softmax_scale = q.shape[-1] ** -0.5
    out, softmax_lse, *_ = _ops.fwd(q, k, v, None, None, None, None, None, None, None, None, None, None,
                                    None, None, None, None, None, None, None, None, None, None,
                                    softmax_scale, causal)
    return out
