"""Resumable checkpoints."""
import os

import torch


def save_checkpoint(path: str, model, optimizer, prefetcher, step: int) -> None:
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    state = {
        "model": model.state_dict(),
        "optimizer": optimizer.state_dict(),
        # the prefetcher's stream is re-created on resume; only its position is state
        "batches_seen": prefetcher.batches_seen,
        "step": step,
    }
    torch.save(state, path)
