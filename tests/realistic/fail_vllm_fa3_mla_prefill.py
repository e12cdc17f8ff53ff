"""MLA prefill in the style of vLLM's attention backends: the non-absorbed prefill
runs vllm_flash_attn's varlen kernel with QK head dim 192 and V head dim 128."""
from dataclasses import dataclass

import torch
from vllm.vllm_flash_attn import flash_attn_varlen_func


@dataclass
class MLADims:
    qk_nope_head_dim: int = 128
    qk_rope_head_dim: int = 64
    v_head_dim: int = 128
    num_heads: int = 16


class MLAPrefill:
    def __init__(self, dims: MLADims):
        self.dims = dims
        self.qk_head_dim = dims.qk_nope_head_dim + dims.qk_rope_head_dim
        # FA3 takes a V head dim different from QK's without padding
        self.fa_version = 3 if torch.cuda.get_device_capability() >= (9, 0) else 2

    def forward(self, q, k, v, cu_seqlens, max_seqlen):
        return flash_attn_varlen_func(
            q, k, v,
            max_seqlen_q=max_seqlen, cu_seqlens_q=cu_seqlens,
            max_seqlen_k=max_seqlen, cu_seqlens_k=cu_seqlens,
            causal=True, fa_version=self.fa_version,
        )


def run(tokens: int = 8192):
    dims = MLADims()
    layer = MLAPrefill(dims)
    q = torch.randn(tokens, dims.num_heads, layer.qk_head_dim, device="cuda", dtype=torch.bfloat16)
    k = torch.randn(tokens, dims.num_heads, layer.qk_head_dim, device="cuda", dtype=torch.bfloat16)
    v = torch.randn(tokens, dims.num_heads, dims.v_head_dim, device="cuda", dtype=torch.bfloat16)
    cu = torch.tensor([0, tokens], device="cuda", dtype=torch.int32)
    return layer.forward(q, k, v, cu, tokens)
