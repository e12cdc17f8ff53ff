# request: resume from a checkpoint that stores model, optimizer, scheduler and RNG state ; fleet: H100 ; pins: torch==2.6.0, python==3.10
import random

import numpy as np
import torch


def save(path, model, opt, sched, epoch):
    torch.save({
        "epoch": epoch,
        "model": model.state_dict(),
        "opt": opt.state_dict(),
        "sched": sched.state_dict(),
        "rng": {
            "python": random.getstate(),
            "numpy": np.random.get_state(),
            "torch": torch.get_rng_state(),
            "cuda": torch.cuda.get_rng_state_all(),
        },
    }, path)


def resume(path, model, opt, sched):
    ckpt = torch.load(path, map_location="cpu")
    model.load_state_dict(ckpt["model"])
    opt.load_state_dict(ckpt["opt"])
    sched.load_state_dict(ckpt["sched"])
    random.setstate(ckpt["rng"]["python"])
    np.random.set_state(ckpt["rng"]["numpy"])
    torch.set_rng_state(ckpt["rng"]["torch"])
    torch.cuda.set_rng_state_all(ckpt["rng"]["cuda"])
    return ckpt["epoch"] + 1


if __name__ == "__main__":
    m = torch.nn.Linear(8, 8).cuda()
    o = torch.optim.AdamW(m.parameters())
    s = torch.optim.lr_scheduler.CosineAnnealingLR(o, 100)
    save("ck.pt", m, o, s, 3)
    print(resume("ck.pt", m, o, s))
