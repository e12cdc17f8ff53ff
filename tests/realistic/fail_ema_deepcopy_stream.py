"""EMA of a model whose forward offloads activations on a side stream."""
import copy

import torch
from torch import nn


class OffloadMLP(nn.Module):
    def __init__(self, dim: int = 1024):
        super().__init__()
        self.fc1 = nn.Linear(dim, 4 * dim)
        self.fc2 = nn.Linear(4 * dim, dim)
        self.offload_stream = torch.cuda.Stream()

    def forward(self, x):
        h = torch.relu(self.fc1(x))
        with torch.cuda.stream(self.offload_stream):
            h_cpu = h.detach().to("cpu", non_blocking=True)
        return self.fc2(h), h_cpu


class EMA:
    def __init__(self, model: nn.Module, decay: float = 0.999):
        self.decay = decay
        self.shadow = copy.deepcopy(model).eval()
        for p in self.shadow.parameters():
            p.requires_grad_(False)

    @torch.no_grad()
    def update(self, model: nn.Module):
        for s, p in zip(self.shadow.parameters(), model.parameters()):
            s.lerp_(p, 1.0 - self.decay)


model = OffloadMLP().cuda()
ema = EMA(model)
