"""Attention backend in the vLLM style: the layer hands q/k/v to an impl object's forward()."""
import torch
from flash_attn_interface import flash_attn_varlen_func
from torch import nn


class FlashAttention3Impl:
    def __init__(self, num_heads: int, scale: float):
        self.num_heads = num_heads
        self.scale = scale

    def forward(self, q, k, v, cu_seqlens, max_seqlen):
        return flash_attn_varlen_func(
            q,
            k,
            v,
            cu_seqlens_q=cu_seqlens,
            cu_seqlens_k=cu_seqlens,
            max_seqlen_q=max_seqlen,
            max_seqlen_k=max_seqlen,
            softmax_scale=self.scale,
            causal=True,
        )


class MLAPrefill(nn.Module):
    """DeepSeek-V2-Lite shapes: 16 heads, qk_nope 128 + qk_rope 64, v 128."""

    def __init__(self, hidden_size=2048, num_heads=16, kv_lora_rank=512):
        super().__init__()
        self.num_heads = num_heads
        self.qk_nope_head_dim = 128
        self.qk_rope_head_dim = 64
        self.v_head_dim = 128
        self.qk_head_dim = self.qk_nope_head_dim + self.qk_rope_head_dim
        self.kv_lora_rank = kv_lora_rank
        self.q_proj = nn.Linear(hidden_size, num_heads * self.qk_head_dim, bias=False)
        self.kv_a_proj_with_mqa = nn.Linear(hidden_size, kv_lora_rank + self.qk_rope_head_dim, bias=False)
        self.kv_b_proj = nn.Linear(kv_lora_rank, num_heads * (self.qk_nope_head_dim + self.v_head_dim), bias=False)
        self.o_proj = nn.Linear(num_heads * self.v_head_dim, hidden_size, bias=False)
        self.impl = FlashAttention3Impl(num_heads, self.qk_head_dim ** -0.5)

    def forward(self, hidden_states, cu_seqlens, max_seqlen):
        n = hidden_states.shape[0]
        q = self.q_proj(hidden_states).view(-1, self.num_heads, self.qk_head_dim)
        latent, k_pe = self.kv_a_proj_with_mqa(hidden_states).split([self.kv_lora_rank, self.qk_rope_head_dim], dim=-1)
        kv = self.kv_b_proj(latent).view(-1, self.num_heads, self.qk_nope_head_dim + self.v_head_dim)
        k_nope, v = kv.split([self.qk_nope_head_dim, self.v_head_dim], dim=-1)
        k = torch.cat((k_nope, k_pe.unsqueeze(1).expand(-1, self.num_heads, -1)), dim=-1)
        out = self.impl.forward(q, k, v, cu_seqlens, max_seqlen)
        return self.o_proj(out.reshape(n, -1))
