"""Training entry point; torch.compile settings live in the experiment config."""
import torch
from torch import nn

cfg = {
    "model": {"dim": 1024, "depth": 8},
    "optim": {"lr": 3e-4, "weight_decay": 0.1},
    "compile": {"mode": "max-autotune-no-cudagraphs", "fullgraph": False, "dynamic": False},
}


def build_model(dim: int, depth: int) -> nn.Module:
    layers = []
    for _ in range(depth):
        layers += [nn.Linear(dim, 4 * dim), nn.GELU(), nn.Linear(4 * dim, dim)]
    return nn.Sequential(*layers)


def main():
    model = build_model(**cfg["model"]).cuda()
    model = torch.compile(model, **cfg["compile"])
    optimizer = torch.optim.AdamW(model.parameters(), **cfg["optim"])
    for _ in range(10):
        x = torch.randn(64, cfg["model"]["dim"], device="cuda")
        loss = model(x).square().mean()
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()


if __name__ == "__main__":
    main()
