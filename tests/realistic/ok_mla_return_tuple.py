"""Latent KV up-projection factored into a helper that returns (k, v)."""
import torch
from flash_attn import flash_attn_func
from torch import nn

NUM_HEADS = 32
QK_NOPE_HEAD_DIM = 128
QK_ROPE_HEAD_DIM = 64
V_HEAD_DIM = 128
KV_LORA_RANK = 512


class LatentAttention(nn.Module):
    def __init__(self, hidden_size: int = 4096):
        super().__init__()
        self.q_proj = nn.Linear(hidden_size, NUM_HEADS * (QK_NOPE_HEAD_DIM + QK_ROPE_HEAD_DIM), bias=False)
        self.kv_a_proj = nn.Linear(hidden_size, KV_LORA_RANK + QK_ROPE_HEAD_DIM, bias=False)
        self.kv_b_proj = nn.Linear(KV_LORA_RANK, NUM_HEADS * (QK_NOPE_HEAD_DIM + V_HEAD_DIM), bias=False)
        self.o_proj = nn.Linear(NUM_HEADS * V_HEAD_DIM, hidden_size, bias=False)

    def _project_kv(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        bsz, seqlen, _ = x.shape
        latent, k_pe = self.kv_a_proj(x).split([KV_LORA_RANK, QK_ROPE_HEAD_DIM], dim=-1)
        kv = self.kv_b_proj(latent).view(bsz, seqlen, NUM_HEADS, QK_NOPE_HEAD_DIM + V_HEAD_DIM)
        k_nope, v = kv.split([QK_NOPE_HEAD_DIM, V_HEAD_DIM], dim=-1)
        k_pe = k_pe.view(bsz, seqlen, 1, QK_ROPE_HEAD_DIM).expand(-1, -1, NUM_HEADS, -1)
        return torch.cat([k_nope, k_pe], dim=-1), v

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        bsz, seqlen, _ = x.shape
        q = self.q_proj(x).view(bsz, seqlen, NUM_HEADS, QK_NOPE_HEAD_DIM + QK_ROPE_HEAD_DIM)
        k, v = self._project_kv(x)
        v = torch.nn.functional.pad(v, [0, q.shape[-1] - V_HEAD_DIM])
        out = flash_attn_func(q, k, v, causal=True)[..., :V_HEAD_DIM]
        return self.o_proj(out.reshape(bsz, seqlen, -1))
