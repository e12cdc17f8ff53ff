"""Resume helper shared by the training scripts."""
import os

import torch


def load_checkpoint(path: str, model: torch.nn.Module, optimizer=None) -> int:
    if not os.path.exists(path):
        return 0
    state = torch.load(path, map_location="cpu")
    model.load_state_dict(state["model"])
    if optimizer is not None and "optimizer" in state:
        optimizer.load_state_dict(state["optimizer"])
    return state.get("step", 0)
