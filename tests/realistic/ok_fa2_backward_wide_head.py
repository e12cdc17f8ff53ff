"""Training step of a wide-head attention block on FlashAttention 2; before flash-attn
2.7.3 its backward takes head dim 256 with dropout only on A100/H100, so the dropout
is left out elsewhere."""
from dataclasses import dataclass

import torch
from flash_attn import flash_attn_func


@dataclass
class AttnConfig:
    n_heads: int = 8
    head_dim: int = 256
    attn_dropout: float = 0.1


def attention(q, k, v, cfg: AttnConfig, training: bool = True):
    p = cfg.attn_dropout if torch.cuda.get_device_capability() in ((8, 0), (9, 0)) else 0.0
    return flash_attn_func(q, k, v, dropout_p=p, causal=True)


def train_step(cfg: AttnConfig):
    shape = (2, 2048, cfg.n_heads, cfg.head_dim)
    q = torch.randn(shape, device="cuda", dtype=torch.bfloat16, requires_grad=True)
    k = torch.randn(shape, device="cuda", dtype=torch.bfloat16, requires_grad=True)
    v = torch.randn(shape, device="cuda", dtype=torch.bfloat16, requires_grad=True)
    out = attention(q, k, v, cfg)
    out.float().sum().backward()
    return q.grad


if __name__ == "__main__":
    train_step(AttnConfig())
