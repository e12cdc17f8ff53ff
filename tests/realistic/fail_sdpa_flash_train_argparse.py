"""Fine-tune a small decoder with wide heads; the flash backend is forced so that a
run never silently falls back to the math kernel."""
import argparse

import torch
import torch.nn.functional as F
from torch import nn
from torch.nn.attention import SDPBackend, sdpa_kernel


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--dim", type=int, default=2048)
    p.add_argument("--heads", type=int, default=8)
    p.add_argument("--attn-dropout", type=float, default=0.1)
    p.add_argument("--steps", type=int, default=100)
    return p.parse_args()


class SelfAttention(nn.Module):
    def __init__(self, dim: int, heads: int, dropout: float):
        super().__init__()
        self.heads, self.dropout = heads, dropout
        self.qkv = nn.Linear(dim, 3 * dim, bias=False)
        self.proj = nn.Linear(dim, dim, bias=False)

    def forward(self, x):
        b, s, d = x.shape
        q, k, v = self.qkv(x).view(b, s, 3, self.heads, d // self.heads).transpose(1, 3).unbind(2)
        with sdpa_kernel(SDPBackend.FLASH_ATTENTION):
            y = F.scaled_dot_product_attention(q, k, v, dropout_p=self.dropout, is_causal=True)
        return self.proj(y.transpose(1, 2).reshape(b, s, d))


def main():
    args = parse_args()
    model = SelfAttention(args.dim, args.heads, args.attn_dropout).cuda().bfloat16()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    for _ in range(args.steps):
        x = torch.randn(4, 1024, args.dim, device="cuda", dtype=torch.bfloat16)
        loss = model(x).float().pow(2).mean()
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)


if __name__ == "__main__":
    main()
