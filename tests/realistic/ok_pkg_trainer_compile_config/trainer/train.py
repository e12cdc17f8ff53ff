"""Single-GPU training loop: python -m trainer.train"""
import torch
from torch import nn

from trainer.config import TrainConfig


def build_model(cfg: TrainConfig) -> nn.Module:
    model = nn.Sequential(
        nn.Linear(1024, 4096), nn.GELU(), nn.Linear(4096, 1024), nn.LayerNorm(1024), nn.Linear(1024, 1024)
    ).cuda()
    if cfg.compile:
        model = torch.compile(model, mode=cfg.compile_mode)
    return model


def train(cfg: TrainConfig) -> None:
    model = build_model(cfg)
    opt = torch.optim.AdamW(model.parameters(), lr=cfg.lr, weight_decay=cfg.weight_decay)
    for step in range(cfg.max_steps):
        x = torch.randn(cfg.batch_size, 1024, device="cuda")
        loss = model(x).pow(2).mean()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), cfg.grad_clip)
        opt.step()
        opt.zero_grad(set_to_none=True)
        if step % cfg.log_every == 0:
            print(f"step {step} loss {loss.item():.4f}")


if __name__ == "__main__":
    train(TrainConfig())
