"""DeepSeek-V2 style attention block for the prefill path, FlashAttention 2 kernel."""
import torch
from flash_attn import flash_attn_func
from torch import nn

HIDDEN = 2048
NUM_HEADS = 16
QK_NOPE_HEAD_DIM = 128
QK_ROPE_HEAD_DIM = 64
V_HEAD_DIM = 128
KV_LORA_RANK = 512


class DeepseekV2Attention(nn.Module):
    def __init__(self):
        super().__init__()
        self.q_head_dim = QK_NOPE_HEAD_DIM + QK_ROPE_HEAD_DIM
        self.q_proj = nn.Linear(HIDDEN, NUM_HEADS * self.q_head_dim, bias=False)
        self.kv_a_proj_with_mqa = nn.Linear(HIDDEN, KV_LORA_RANK + QK_ROPE_HEAD_DIM, bias=False)
        self.kv_a_layernorm = nn.RMSNorm(KV_LORA_RANK)
        self.kv_b_proj = nn.Linear(KV_LORA_RANK, NUM_HEADS * (QK_NOPE_HEAD_DIM + V_HEAD_DIM), bias=False)
        self.o_proj = nn.Linear(NUM_HEADS * V_HEAD_DIM, HIDDEN, bias=False)
        self.softmax_scale = self.q_head_dim ** -0.5

    def forward(self, hidden_states: torch.Tensor) -> torch.Tensor:
        q = self.q_proj(hidden_states).unflatten(-1, (NUM_HEADS, -1))
        compressed_kv = self.kv_a_proj_with_mqa(hidden_states)
        compressed_kv, k_pe = compressed_kv.split([KV_LORA_RANK, QK_ROPE_HEAD_DIM], dim=-1)
        kv = self.kv_b_proj(self.kv_a_layernorm(compressed_kv)).unflatten(-1, (NUM_HEADS, -1))
        k_nope, value_states = kv.split([QK_NOPE_HEAD_DIM, V_HEAD_DIM], dim=-1)
        k_pe = k_pe.unsqueeze(2).expand(-1, -1, NUM_HEADS, -1)
        key_states = torch.cat([k_nope, k_pe], dim=-1)
        attn_output = flash_attn_func(q, key_states, value_states, softmax_scale=self.softmax_scale, causal=True)
        return self.o_proj(attn_output.flatten(-2))


if __name__ == "__main__":
    attn = DeepseekV2Attention().cuda().to(torch.bfloat16)
    x = torch.randn(1, 2048, HIDDEN, device="cuda", dtype=torch.bfloat16)
    print(attn(x).shape)
