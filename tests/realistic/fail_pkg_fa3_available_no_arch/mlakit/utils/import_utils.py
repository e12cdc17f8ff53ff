"""Optional dependencies."""
import importlib.util
from functools import lru_cache

import torch


@lru_cache
def is_flash_attn_3_available() -> bool:
    # the hopper/ build of flash-attention installs the top-level module flash_attn_interface
    return torch.cuda.is_available() and importlib.util.find_spec("flash_attn_interface") is not None


def get_device_capability() -> tuple:
    return torch.cuda.get_device_capability() if torch.cuda.is_available() else (0, 0)
