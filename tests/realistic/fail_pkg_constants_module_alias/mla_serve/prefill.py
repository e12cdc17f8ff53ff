"""Packed (varlen) prefill of a batch of prompts with FlashAttention 2."""
import torch
from flash_attn import flash_attn_varlen_func

import mla_serve.constants as C


def prefill_attention(seq_lens: list, device: str = "cuda") -> torch.Tensor:
    total = sum(seq_lens)
    max_seqlen = max(seq_lens)
    cu_seqlens = torch.zeros(len(seq_lens) + 1, dtype=torch.int32, device=device)
    cu_seqlens[1:] = torch.cumsum(torch.tensor(seq_lens, device=device), 0)
    q = torch.randn(total, C.NUM_HEADS, C.QK_HEAD_DIM, device=device, dtype=torch.bfloat16)
    k = torch.randn(total, C.NUM_HEADS, C.QK_HEAD_DIM, device=device, dtype=torch.bfloat16)
    v = torch.randn(total, C.NUM_HEADS, C.V_HEAD_DIM, device=device, dtype=torch.bfloat16)
    out = flash_attn_varlen_func(
        q, k, v, cu_seqlens, cu_seqlens, max_seqlen, max_seqlen, softmax_scale=C.QK_HEAD_DIM ** -0.5, causal=True
    )
    return out


if __name__ == "__main__":
    print(prefill_attention([512, 1024, 77]).shape)
