"""Training entry point: python -m pipeline.train"""
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

from .checkpoint import save_checkpoint
from .streams import CUDAPrefetcher


def main(epochs: int = 3, ckpt_dir: str = "checkpoints"):
    data = TensorDataset(torch.randn(4096, 64), torch.randint(0, 10, (4096,)))
    loader = DataLoader(data, batch_size=128, shuffle=True, pin_memory=True)
    model = nn.Sequential(nn.Linear(64, 256), nn.ReLU(), nn.Linear(256, 10)).cuda()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    prefetcher = CUDAPrefetcher(loader)
    step = 0
    for epoch in range(epochs):
        for x, y in prefetcher:
            loss = nn.functional.cross_entropy(model(x), y)
            loss.backward()
            optimizer.step()
            optimizer.zero_grad()
            step += 1
        save_checkpoint(f"{ckpt_dir}/epoch{epoch}.pt", model, optimizer, prefetcher, step)


if __name__ == "__main__":
    main()
