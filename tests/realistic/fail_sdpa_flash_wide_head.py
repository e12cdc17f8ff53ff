"""Perceiver-style latent cross-attention with wide heads; SDPA is pinned to the
flash backend so a slow fallback never goes unnoticed."""
import torch
import torch.nn.functional as F
from torch import nn
from torch.nn.attention import SDPBackend, sdpa_kernel

LATENT_CFG = {"latent_dim": 2048, "num_heads": 4, "num_latents": 256}


class LatentAttention(nn.Module):
    def __init__(self, cfg: dict):
        super().__init__()
        self.heads = cfg["num_heads"]
        self.head_dim = cfg["latent_dim"] // cfg["num_heads"]
        self.q = nn.Linear(cfg["latent_dim"], cfg["latent_dim"])
        self.kv = nn.Linear(cfg["latent_dim"], 2 * cfg["latent_dim"])

    def forward(self, latents: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
        b, n, _ = latents.shape
        s = x.shape[1]
        q = self.q(latents).view(b, n, self.heads, self.head_dim).transpose(1, 2)
        k, v = self.kv(x).view(b, s, 2, self.heads, self.head_dim).transpose(1, 3).unbind(2)
        with sdpa_kernel(SDPBackend.FLASH_ATTENTION):
            out = F.scaled_dot_product_attention(q, k, v)
        return out.transpose(1, 2).reshape(b, n, -1)


@torch.inference_mode()
def encode(model: LatentAttention, x: torch.Tensor) -> torch.Tensor:
    latents = torch.zeros(x.shape[0], LATENT_CFG["num_latents"], LATENT_CFG["latent_dim"], device=x.device, dtype=x.dtype)
    return model(latents, x)


if __name__ == "__main__":
    m = LatentAttention(LATENT_CFG).cuda().half()
    print(encode(m, torch.randn(2, 4096, LATENT_CFG["latent_dim"], device="cuda", dtype=torch.half)).shape)
