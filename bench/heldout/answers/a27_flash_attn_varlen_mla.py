# request: packed variable-length MLA attention with flash_attn_varlen_func, v head dim 128 vs qk 192 ; fleet: H100 ; pins: torch==2.5.1, flash-attn==2.7.4
import torch
from flash_attn import flash_attn_varlen_func

QK_DIM = 192
V_DIM = 128


def packed_attention(q, k, v, cu_seqlens, max_seqlen, softmax_scale=None, causal=True):
    if softmax_scale is None:
        softmax_scale = QK_DIM ** -0.5
    return flash_attn_varlen_func(
        q, k, v,
        cu_seqlens_q=cu_seqlens, cu_seqlens_k=cu_seqlens,
        max_seqlen_q=max_seqlen, max_seqlen_k=max_seqlen,
        softmax_scale=softmax_scale, causal=causal,
    )


if __name__ == "__main__":
    lens = torch.tensor([0, 300, 1000, 1024], device="cuda", dtype=torch.int32)
    total, heads = 1024, 16
    q = torch.randn(total, heads, QK_DIM, device="cuda", dtype=torch.bfloat16)
    k = torch.randn(total, heads, QK_DIM, device="cuda", dtype=torch.bfloat16)
    v = torch.randn(total, heads, V_DIM, device="cuda", dtype=torch.bfloat16)
    print(packed_attention(q, k, v, lens, 700).shape)
