# request: save and resume a training checkpoint including a timing helper with CUDA events ; fleet: A100 ; pins: torch==2.1.2
import os
import torch
import torch.nn as nn


class Timer:
    def __init__(self):
        self.start = torch.cuda.Event(enable_timing=True)
        self.end = torch.cuda.Event(enable_timing=True)
        self.stream = torch.cuda.Stream()

    def elapsed(self):
        self.end.synchronize()
        return self.start.elapsed_time(self.end)


def save_checkpoint(path, model, opt, step, timer):
    state = {
        "model": model.state_dict(),
        "opt": opt.state_dict(),
        "step": step,
        "timer": timer,
    }
    torch.save(state, path)


def load_checkpoint(path, model, opt):
    state = torch.load(path, map_location="cuda")
    model.load_state_dict(state["model"])
    opt.load_state_dict(state["opt"])
    return state["step"], state["timer"]


def main(ckpt="ckpt.pt"):
    model = nn.Linear(1024, 1024).cuda()
    opt = torch.optim.Adam(model.parameters())
    timer = Timer()
    step = 0
    if os.path.exists(ckpt):
        step, timer = load_checkpoint(ckpt, model, opt)
    for step in range(step, step + 100):
        timer.start.record()
        loss = model(torch.randn(64, 1024, device="cuda")).sum()
        loss.backward()
        opt.step()
        opt.zero_grad()
        timer.end.record()
    print("last step ms", timer.elapsed())
    save_checkpoint(ckpt, model, opt, step, timer)


if __name__ == "__main__":
    main()
