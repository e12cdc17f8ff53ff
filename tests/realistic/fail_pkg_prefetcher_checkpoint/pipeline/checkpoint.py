"""Resumable checkpoints."""
import os

import torch


def save_checkpoint(path: str, model, optimizer, prefetcher, step: int) -> None:
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    state = {
        "model": model.state_dict(),
        "optimizer": optimizer.state_dict(),
        "prefetcher": prefetcher,
        "step": step,
    }
    torch.save(state, path)
