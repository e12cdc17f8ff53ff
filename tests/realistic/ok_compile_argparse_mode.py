"""Fine-tune a small GPT with torch.compile; compile settings come from the command line."""
import argparse

import torch
from torch import nn


def get_args():
    p = argparse.ArgumentParser()
    p.add_argument("--lr", type=float, default=6e-4)
    p.add_argument("--steps", type=int, default=1000)
    p.add_argument("--compile", action=argparse.BooleanOptionalAction, default=True)
    p.add_argument("--compile-mode", default="max-autotune", help="torch.compile mode")
    return p.parse_args()


class Block(nn.Module):
    def __init__(self, d: int = 768, h: int = 12):
        super().__init__()
        self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.attn = nn.MultiheadAttention(d, h, batch_first=True)
        self.mlp = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d))

    def forward(self, x):
        h = self.ln1(x)
        x = x + self.attn(h, h, h, need_weights=False)[0]
        return x + self.mlp(self.ln2(x))


def main():
    args = get_args()
    model = nn.Sequential(*[Block() for _ in range(12)]).cuda()
    if args.compile:
        model = torch.compile(model, mode=args.compile_mode)
    opt = torch.optim.AdamW(model.parameters(), lr=args.lr, fused=True)
    for step in range(args.steps):
        x = torch.randn(8, 1024, 768, device="cuda")
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = model(x).pow(2).mean()
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)


if __name__ == "__main__":
    main()
