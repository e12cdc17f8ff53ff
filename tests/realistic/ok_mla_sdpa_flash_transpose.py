"""Naive (non-absorbed) MLA with PyTorch SDPA; the flash backend is forced for speed."""
import torch
import torch.nn.functional as F
from torch import nn
from torch.nn.attention import SDPBackend, sdpa_kernel

CONFIG = {
    "hidden_size": 1536,
    "num_heads": 12,
    "qk_nope_head_dim": 128,
    "qk_rope_head_dim": 64,
    "v_head_dim": 128,
}


class NaiveMLA(nn.Module):
    def __init__(self, cfg: dict):
        super().__init__()
        hidden, heads = cfg["hidden_size"], cfg["num_heads"]
        self.heads = heads
        self.qk_dim = cfg["qk_nope_head_dim"] + cfg["qk_rope_head_dim"]
        self.v_dim = cfg["v_head_dim"]
        self.q_proj = nn.Linear(hidden, heads * self.qk_dim)
        self.k_proj = nn.Linear(hidden, heads * self.qk_dim)
        self.v_proj = nn.Linear(hidden, heads * cfg["v_head_dim"])
        self.out_proj = nn.Linear(heads * cfg["v_head_dim"], hidden)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, s, _ = x.shape
        q = self.q_proj(x).view(b, s, self.heads, self.qk_dim).transpose(1, 2)
        k = self.k_proj(x).view(b, s, self.heads, self.qk_dim).transpose(1, 2)
        v = self.v_proj(x).view(b, s, self.heads, self.v_dim).transpose(1, 2)
        # flash needs equal q/k/v head dims; memory-efficient attention takes a smaller V
        with sdpa_kernel([SDPBackend.FLASH_ATTENTION, SDPBackend.EFFICIENT_ATTENTION]):
            out = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return self.out_proj(out.transpose(1, 2).reshape(b, s, -1))


if __name__ == "__main__":
    model = NaiveMLA(CONFIG).cuda().bfloat16()
    print(model(torch.randn(2, 1024, CONFIG["hidden_size"], device="cuda", dtype=torch.bfloat16)).shape)
