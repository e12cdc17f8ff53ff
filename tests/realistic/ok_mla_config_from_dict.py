"""Packed-sequence MLA prefill (varlen FlashAttention 2); model dims come from the config."""
from dataclasses import dataclass

import torch
from flash_attn import flash_attn_varlen_func
from torch import nn

DEEPSEEK_V2_LITE = {
    "hidden_size": 2048,
    "num_attention_heads": 16,
    "kv_lora_rank": 512,
    "qk_nope_head_dim": 128,
    "qk_rope_head_dim": 64,
    "v_head_dim": 128,
}


@dataclass
class MLAConfig:
    hidden_size: int
    num_attention_heads: int
    kv_lora_rank: int
    qk_nope_head_dim: int
    qk_rope_head_dim: int
    v_head_dim: int

    @classmethod
    def from_dict(cls, d: dict) -> "MLAConfig":
        return cls(**d)


class VarlenMLA(nn.Module):
    def __init__(self, config: MLAConfig):
        super().__init__()
        self.config = config
        self.num_heads = config.num_attention_heads
        self.qk_head_dim = config.qk_nope_head_dim + config.qk_rope_head_dim
        self.q_proj = nn.Linear(config.hidden_size, self.num_heads * self.qk_head_dim, bias=False)
        self.kv_a = nn.Linear(config.hidden_size, config.kv_lora_rank + config.qk_rope_head_dim, bias=False)
        self.kv_b = nn.Linear(
            config.kv_lora_rank, self.num_heads * (config.qk_nope_head_dim + config.v_head_dim), bias=False
        )
        self.o_proj = nn.Linear(self.num_heads * config.v_head_dim, config.hidden_size, bias=False)

    def forward(self, x: torch.Tensor, cu_seqlens: torch.Tensor, max_seqlen: int) -> torch.Tensor:
        # x: (total_tokens, hidden)
        cfg = self.config
        q = self.q_proj(x).view(-1, self.num_heads, self.qk_head_dim)
        latent, k_pe = self.kv_a(x).split([cfg.kv_lora_rank, cfg.qk_rope_head_dim], dim=-1)
        kv = self.kv_b(latent).view(-1, self.num_heads, cfg.qk_nope_head_dim + cfg.v_head_dim)
        k_nope, v = kv.split([cfg.qk_nope_head_dim, cfg.v_head_dim], dim=-1)
        k = torch.cat([k_nope, k_pe[:, None, :].expand(-1, self.num_heads, -1)], dim=-1)
        v = torch.nn.functional.pad(v, [0, self.qk_head_dim - cfg.v_head_dim])  # FA2 needs equal head dims
        out = flash_attn_varlen_func(q, k, v, cu_seqlens, cu_seqlens, max_seqlen, max_seqlen, causal=True)
        out = out[..., : cfg.v_head_dim]
        return self.o_proj(out.reshape(-1, self.num_heads * cfg.v_head_dim))


def build(config_dict: dict = DEEPSEEK_V2_LITE) -> VarlenMLA:
    return VarlenMLA(MLAConfig.from_dict(config_dict)).cuda().bfloat16()


if __name__ == "__main__":
    layer = build()
    lens = torch.tensor([0, 700, 1500, 2048], device="cuda", dtype=torch.int32)
    x = torch.randn(2048, 2048, device="cuda", dtype=torch.bfloat16)
    print(layer(x, lens, 800).shape)
