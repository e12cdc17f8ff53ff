"""Training engine that overlaps the next batch's host-to-device copy with compute."""
import torch
from torch import nn


class Trainer:
    def __init__(self, model: nn.Module, lr: float = 1e-3):
        self.model = model.cuda()
        self.optimizer = torch.optim.AdamW(self.model.parameters(), lr=lr)
        self.copy_stream = torch.cuda.Stream()
        self.step = 0

    def _to_device(self, batch):
        with torch.cuda.stream(self.copy_stream):
            return [t.cuda(non_blocking=True) for t in batch]

    def fit(self, loader, epochs: int = 1):
        for _ in range(epochs):
            for batch in loader:
                x, y = self._to_device(batch)
                torch.cuda.current_stream().wait_stream(self.copy_stream)
                loss = nn.functional.cross_entropy(self.model(x), y)
                loss.backward()
                self.optimizer.step()
                self.optimizer.zero_grad(set_to_none=True)
                self.step += 1

    def state_dict(self) -> dict:
        return {"model": self.model.state_dict(), "optimizer": self.optimizer.state_dict(), "step": self.step}
