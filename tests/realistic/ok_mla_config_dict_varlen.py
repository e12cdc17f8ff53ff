"""MLA prefill over packed sequences; hyper-parameters come from the checkpoint's config.json dict."""
import torch
from flash_attn import flash_attn_varlen_func
from torch import nn

CONFIG = {
    "hidden_size": 5120,
    "num_attention_heads": 128,
    "q_lora_rank": 1536,
    "kv_lora_rank": 512,
    "qk_nope_head_dim": 128,
    "qk_rope_head_dim": 64,
    "v_head_dim": 128,
}


class PackedMLA(nn.Module):
    def __init__(self, config: dict):
        super().__init__()
        self.num_heads = config["num_attention_heads"]
        self.qk_nope_head_dim = config["qk_nope_head_dim"]
        self.qk_rope_head_dim = config["qk_rope_head_dim"]
        self.q_head_dim = self.qk_nope_head_dim + self.qk_rope_head_dim
        self.v_head_dim = config["v_head_dim"]
        self.kv_lora_rank = config["kv_lora_rank"]
        self.softmax_scale = self.q_head_dim ** -0.5
        self.q_a_proj = nn.Linear(config["hidden_size"], config["q_lora_rank"], bias=False)
        self.q_b_proj = nn.Linear(config["q_lora_rank"], self.num_heads * self.q_head_dim, bias=False)
        self.kv_a_proj_with_mqa = nn.Linear(
            config["hidden_size"], self.kv_lora_rank + self.qk_rope_head_dim, bias=False
        )
        self.kv_b_proj = nn.Linear(
            self.kv_lora_rank, self.num_heads * (self.qk_nope_head_dim + self.v_head_dim), bias=False
        )
        self.o_proj = nn.Linear(self.num_heads * self.v_head_dim, config["hidden_size"], bias=False)

    def forward(self, hidden_states, cu_seqlens, max_seqlen):
        total = hidden_states.shape[0]
        q = self.q_b_proj(self.q_a_proj(hidden_states)).view(total, self.num_heads, self.q_head_dim)
        compressed_kv = self.kv_a_proj_with_mqa(hidden_states)
        compressed_kv, k_pe = torch.split(compressed_kv, [self.kv_lora_rank, self.qk_rope_head_dim], dim=-1)
        kv = self.kv_b_proj(compressed_kv).view(total, self.num_heads, self.qk_nope_head_dim + self.v_head_dim)
        k_nope, value_states = torch.split(kv, [self.qk_nope_head_dim, self.v_head_dim], dim=-1)
        k_pe = k_pe.view(total, 1, self.qk_rope_head_dim).expand(-1, self.num_heads, -1)
        key_states = torch.cat([k_nope, k_pe], dim=-1)
        if self.q_head_dim != self.v_head_dim:
            value_states = torch.nn.functional.pad(value_states, [0, self.q_head_dim - self.v_head_dim])
        attn_output = flash_attn_varlen_func(
            q,
            key_states,
            value_states,
            cu_seqlens,
            cu_seqlens,
            max_seqlen,
            max_seqlen,
            softmax_scale=self.softmax_scale,
            causal=True,
        )
        attn_output = attn_output[..., : self.v_head_dim]
        return self.o_proj(attn_output.reshape(total, -1))


def build_attention(config=CONFIG):
    return PackedMLA(config).cuda().to(torch.bfloat16)
