"""Trainer with a CUDA prefetcher that overlaps host-to-device copies with compute."""
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset


class CUDAPrefetcher:
    def __init__(self, loader: DataLoader):
        self.loader = loader
        self.stream = torch.cuda.Stream()
        self.iter = None
        self.next_batch = None

    def __iter__(self):
        self.iter = iter(self.loader)
        self.preload()
        return self

    def preload(self):
        try:
            batch = next(self.iter)
        except StopIteration:
            self.next_batch = None
            return
        with torch.cuda.stream(self.stream):
            self.next_batch = [t.cuda(non_blocking=True) for t in batch]

    def __next__(self):
        torch.cuda.current_stream().wait_stream(self.stream)
        batch = self.next_batch
        if batch is None:
            raise StopIteration
        self.preload()
        return batch


class Trainer:
    def __init__(self, model: nn.Module, loader: DataLoader):
        self.model = model.cuda()
        self.optimizer = torch.optim.AdamW(self.model.parameters(), lr=1e-3)
        self.prefetcher = CUDAPrefetcher(loader)
        self.epoch = 0

    def train_epoch(self):
        for x, y in self.prefetcher:
            loss = nn.functional.cross_entropy(self.model(x), y)
            loss.backward()
            self.optimizer.step()
            self.optimizer.zero_grad()
        self.epoch += 1

    def save_checkpoint(self, path: str):
        torch.save(
            {"model": self.model.state_dict(), "optimizer": self.optimizer.state_dict(), "epoch": self.epoch}, path
        )


if __name__ == "__main__":
    data = TensorDataset(torch.randn(1024, 32), torch.randint(0, 4, (1024,)))
    trainer = Trainer(nn.Linear(32, 4), DataLoader(data, batch_size=64, pin_memory=True))
    trainer.train_epoch()
    trainer.save_checkpoint("trainer.pt")
