"""Latent-attention layer (MLA) for a small research model; heads split with einops."""
import torch
from einops import rearrange
from flash_attn import flash_attn_func
from torch import nn

N_HEADS = 8
QK_NOPE_DIM = 128
QK_ROPE_DIM = 64
V_DIM = 128
KV_RANK = 256


class LatentAttention(nn.Module):
    def __init__(self, d_model: int = 1024):
        super().__init__()
        self.wq = nn.Linear(d_model, N_HEADS * (QK_NOPE_DIM + QK_ROPE_DIM), bias=False)
        self.wkv_down = nn.Linear(d_model, KV_RANK, bias=False)
        self.wk_rope = nn.Linear(d_model, QK_ROPE_DIM, bias=False)
        self.wk_up = nn.Linear(KV_RANK, N_HEADS * QK_NOPE_DIM, bias=False)
        self.wv_up = nn.Linear(KV_RANK, N_HEADS * V_DIM, bias=False)
        self.wo = nn.Linear(N_HEADS * V_DIM, d_model, bias=False)

    def project(self, x: torch.Tensor):
        latent = self.wkv_down(x)
        q = rearrange(self.wq(x), "b s (h d) -> b s h d", h=N_HEADS)
        k_nope = rearrange(self.wk_up(latent), "b s (h d) -> b s h d", h=N_HEADS)
        k_rope = self.wk_rope(x).unsqueeze(2).expand(-1, -1, N_HEADS, -1)
        k = torch.cat([k_nope, k_rope], dim=-1)
        v = rearrange(self.wv_up(latent), "b s (h d) -> b s h d", h=N_HEADS)
        return q, k, v

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        q, k, v = self.project(x)
        out = flash_attn_func(q, k, v, causal=True)
        return self.wo(rearrange(out, "b s h d -> b s (h d)"))


if __name__ == "__main__":
    layer = LatentAttention().cuda().half()
    print(layer(torch.randn(4, 512, 1024, device="cuda", dtype=torch.half)).shape)
