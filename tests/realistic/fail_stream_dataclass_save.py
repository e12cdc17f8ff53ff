"""Data loading with a side-stream prefetcher; the loop state is checkpointed for resumption."""
from dataclasses import dataclass, field
from typing import Optional

import torch


@dataclass
class LoopState:
    epoch: int = 0
    step: int = 0
    copy_stream: Optional[torch.cuda.Stream] = None
    losses: list = field(default_factory=list)


def prefetch(batch: torch.Tensor, state: LoopState) -> torch.Tensor:
    with torch.cuda.stream(state.copy_stream):
        out = batch.pin_memory().to("cuda", non_blocking=True)
    torch.cuda.current_stream().wait_stream(state.copy_stream)
    return out


def train(model, opt, loader, epochs: int = 3, ckpt_path: str = "loop.pt"):
    state = LoopState(copy_stream=torch.cuda.Stream())
    for epoch in range(epochs):
        state.epoch = epoch
        for batch in loader:
            x = prefetch(batch, state)
            loss = model(x).square().mean()
            loss.backward()
            opt.step()
            opt.zero_grad()
            state.step += 1
            state.losses.append(loss.item())
        torch.save({"model": model.state_dict(), "opt": opt.state_dict(), "loop": state}, ckpt_path)


if __name__ == "__main__":
    net = torch.nn.Linear(512, 512).cuda()
    train(net, torch.optim.SGD(net.parameters(), lr=0.1), [torch.randn(64, 512) for _ in range(10)])
