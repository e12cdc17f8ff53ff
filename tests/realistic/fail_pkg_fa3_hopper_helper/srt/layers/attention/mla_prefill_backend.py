"""Prefill attention for MLA models: FA3 when the GPU supports it, SDPA otherwise."""
import torch
import torch.nn.functional as F
from flash_attn_interface import flash_attn_func

from srt.utils import is_hopper

QK_NOPE_HEAD_DIM = 128
QK_ROPE_HEAD_DIM = 64
V_HEAD_DIM = 128


class MLAPrefillBackend:
    def __init__(self, num_heads: int):
        self.num_heads = num_heads
        self.qk_head_dim = QK_NOPE_HEAD_DIM + QK_ROPE_HEAD_DIM
        self.scaling = self.qk_head_dim ** -0.5
        self.use_fa3 = is_hopper()

    def forward(self, q_latent: torch.Tensor, kv_latent: torch.Tensor) -> torch.Tensor:
        bsz, seqlen, _ = q_latent.shape
        q = q_latent.view(bsz, seqlen, self.num_heads, self.qk_head_dim)
        kv = kv_latent.view(bsz, seqlen, self.num_heads, QK_NOPE_HEAD_DIM + V_HEAD_DIM)
        k_nope, v = torch.split(kv, [QK_NOPE_HEAD_DIM, V_HEAD_DIM], dim=-1)
        k = torch.cat([k_nope, q[..., QK_NOPE_HEAD_DIM:]], dim=-1)
        if self.use_fa3:
            return flash_attn_func(q, k, v, softmax_scale=self.scaling, causal=True)
        out = F.scaled_dot_product_attention(
            q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2), is_causal=True, scale=self.scaling
        )
        return out.transpose(1, 2)
