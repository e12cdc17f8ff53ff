"""Prefill attention in the SGLang style: the FA3 path is chosen once in __init__ and read in forward."""
import torch
import torch.nn.functional as F
from flash_attn_interface import flash_attn_func
from torch import nn

QK_NOPE_HEAD_DIM = 128
QK_ROPE_HEAD_DIM = 64
V_HEAD_DIM = 128


class MLAAttention(nn.Module):
    def __init__(self, num_heads: int = 16):
        super().__init__()
        self.num_heads = num_heads
        self.qk_head_dim = QK_NOPE_HEAD_DIM + QK_ROPE_HEAD_DIM
        self.scaling = self.qk_head_dim ** -0.5
        # FA3 is built for sm_90 and newer
        self.use_fa3 = torch.cuda.get_device_capability() >= (9, 0)

    def forward(self, hidden_q: torch.Tensor, hidden_kv: torch.Tensor) -> torch.Tensor:
        bsz, seqlen, _ = hidden_q.shape
        q = hidden_q.view(bsz, seqlen, self.num_heads, self.qk_head_dim)
        kv = hidden_kv.view(bsz, seqlen, self.num_heads, QK_NOPE_HEAD_DIM + V_HEAD_DIM)
        k_nope, v = torch.split(kv, [QK_NOPE_HEAD_DIM, V_HEAD_DIM], dim=-1)
        k = torch.cat([k_nope, q[..., QK_NOPE_HEAD_DIM:]], dim=-1)
        if self.use_fa3:
            return flash_attn_func(q, k, v, softmax_scale=self.scaling, causal=True)
        out = F.scaled_dot_product_attention(
            q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2), is_causal=True, scale=self.scaling
        )
        return out.transpose(1, 2)
