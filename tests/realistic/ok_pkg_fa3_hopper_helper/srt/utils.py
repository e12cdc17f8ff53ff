"""Small helpers shared by the serving runtime."""
import functools
import logging

import torch

logger = logging.getLogger(__name__)


@functools.lru_cache(maxsize=1)
def is_hopper() -> bool:
    if not torch.cuda.is_available():
        return False
    major, _ = torch.cuda.get_device_capability()
    # FA3 runs a V head dim != QK head dim only on Hopper ("Only Hopper supports different V headdim")
    return major == 9


def get_bool_env_var(name: str, default: str = "false") -> bool:
    import os

    return os.getenv(name, default).lower() in ("true", "1")
