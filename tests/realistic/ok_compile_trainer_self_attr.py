"""Minimal trainer; compilation knobs are set on the trainer and applied in setup()."""
import torch
from torch import nn


class Trainer:
    def __init__(self, model: nn.Module, lr: float = 1e-3):
        self.model = model
        self.lr = lr
        # torch.compile takes mode= or options=, not both: max-autotune spelled as options
        self.inductor_options = {"max_autotune": True, "epilogue_fusion": True, "shape_padding": True}

    def setup(self):
        self.model = self.model.cuda()
        self.model = torch.compile(self.model, options=self.inductor_options)
        self.optimizer = torch.optim.SGD(self.model.parameters(), lr=self.lr)

    def step(self, x, y):
        loss = nn.functional.mse_loss(self.model(x), y)
        loss.backward()
        self.optimizer.step()
        self.optimizer.zero_grad()
        return loss.item()


if __name__ == "__main__":
    trainer = Trainer(nn.Linear(128, 128))
    trainer.setup()
    print(trainer.step(torch.randn(8, 128, device="cuda"), torch.randn(8, 128, device="cuda")))
