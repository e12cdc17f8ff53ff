"""Latent attention block of the language tower: keys/values decompressed from a shared latent."""
import torch
import torch.nn.functional as F
from torch import nn

from ..ops import flash_attention

NUM_HEADS = 12
QK_HEAD_DIM = 192
V_HEAD_DIM = 128
LATENT_DIM = 512


class LatentAttention(nn.Module):
    def __init__(self, hidden_size: int = 1536):
        super().__init__()
        self.qk_head_dim = QK_HEAD_DIM
        self.v_head_dim = V_HEAD_DIM
        self.scale = QK_HEAD_DIM ** -0.5
        self.q_proj = nn.Linear(hidden_size, NUM_HEADS * QK_HEAD_DIM, bias=False)
        self.kv_down = nn.Linear(hidden_size, LATENT_DIM, bias=False)
        self.k_up = nn.Linear(LATENT_DIM, NUM_HEADS * QK_HEAD_DIM, bias=False)
        self.v_up = nn.Linear(LATENT_DIM, NUM_HEADS * V_HEAD_DIM, bias=False)
        self.o_proj = nn.Linear(NUM_HEADS * V_HEAD_DIM, hidden_size, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        bsz, seqlen, _ = x.shape
        latent = self.kv_down(x)
        q = self.q_proj(x).view(bsz, seqlen, NUM_HEADS, QK_HEAD_DIM)
        k = self.k_up(latent).view(bsz, seqlen, NUM_HEADS, QK_HEAD_DIM)
        v = self.v_up(latent).view(bsz, seqlen, NUM_HEADS, V_HEAD_DIM)
        # FlashAttention 2 needs equal head dims: pad V, attend, drop the padding
        v = F.pad(v, [0, self.qk_head_dim - self.v_head_dim])
        out = flash_attention(q, k, v, causal=True, softmax_scale=self.scale)[..., : self.v_head_dim]
        return self.o_proj(out.reshape(bsz, seqlen, -1))
