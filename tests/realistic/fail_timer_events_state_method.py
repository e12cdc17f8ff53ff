"""Trainer with named CUDA-event timers; state() is what the checkpoint stores."""
import torch


def make_timer() -> tuple:
    return torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)


class Trainer:
    def __init__(self, model: torch.nn.Module, lr: float = 1e-3):
        self.model = model
        self.opt = torch.optim.AdamW(model.parameters(), lr=lr)
        self.step = 0
        self.timers = {name: make_timer() for name in ("forward", "backward", "optimizer")}

    def _timed(self, name: str, fn):
        start, end = self.timers[name]
        start.record()
        out = fn()
        end.record()
        return out

    def train_step(self, x: torch.Tensor) -> float:
        loss = self._timed("forward", lambda: self.model(x).square().mean())
        self._timed("backward", loss.backward)
        self._timed("optimizer", self.opt.step)
        self.opt.zero_grad()
        self.step += 1
        return loss.item()

    def state(self) -> dict:
        return {"step": self.step, "model": self.model.state_dict(), "opt": self.opt.state_dict(), "timers": self.timers}

    def save(self, path: str):
        torch.save(self.state(), path)


if __name__ == "__main__":
    trainer = Trainer(torch.nn.Linear(1024, 1024).cuda())
    for _ in range(10):
        trainer.train_step(torch.randn(64, 1024, device="cuda"))
    trainer.save("trainer.pt")
