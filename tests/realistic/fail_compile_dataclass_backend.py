"""Fine-tuning script with a typed config; the compile backend is a config field."""
from dataclasses import dataclass

import torch
from torch import nn


@dataclass
class TrainingConfig:
    batch_size: int = 32
    lr: float = 1e-4
    compile: bool = True
    compile_backend: str = "nvfuser"


class Classifier(nn.Module):
    def __init__(self, in_dim: int = 768, n_classes: int = 10):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(in_dim, 512), nn.ReLU(), nn.Linear(512, n_classes))

    def forward(self, x):
        return self.net(x)


def train(config: TrainingConfig):
    model = Classifier().cuda()
    if config.compile:
        model = torch.compile(model, backend=config.compile_backend)
    opt = torch.optim.Adam(model.parameters(), lr=config.lr)
    x = torch.randn(config.batch_size, 768, device="cuda")
    y = torch.randint(0, 10, (config.batch_size,), device="cuda")
    loss = nn.functional.cross_entropy(model(x), y)
    loss.backward()
    opt.step()


if __name__ == "__main__":
    train(TrainingConfig())
