"""What the current GPU can do, as one integer per capability (vLLM style: 90 = sm_90)."""
import functools

import torch


@functools.lru_cache(maxsize=8)
def get_device_capability(device_id: int = 0) -> int:
    major, minor = torch.cuda.get_device_capability(device_id)
    return major * 10 + minor


def has_device_capability(capability: int, device_id: int = 0) -> bool:
    return get_device_capability(device_id) >= capability


def supports_fp8() -> bool:
    # FP8 tensor cores arrived with Ampere
    return has_device_capability(80)
