"""Device helpers of a training script that runs on CUDA, XPU or MPS alike: the current
accelerator, its device count and a synchronize for timing; torch.accelerator where the
release has it (2.6+), the CUDA calls before."""

import time

import torch

HAS_ACCELERATOR_API = hasattr(torch, "accelerator")


def pick_device() -> torch.device:
    if HAS_ACCELERATOR_API:
        acc = torch.accelerator.current_accelerator()
        return acc if acc is not None else torch.device("cpu")
    return torch.device("cuda") if torch.cuda.is_available() else torch.device("cpu")


def world_size_hint() -> int:
    if HAS_ACCELERATOR_API:
        return max(1, torch.accelerator.device_count())
    return max(1, torch.cuda.device_count())


class StepTimer:
    def __init__(self, device: torch.device) -> None:
        self.device = device
        self.start = 0.0

    def __enter__(self):
        self.start = time.perf_counter()
        return self

    def __exit__(self, *exc) -> None:
        if self.device.type != "cpu":
            if HAS_ACCELERATOR_API:
                torch.accelerator.synchronize()
            else:
                torch.cuda.synchronize()
        self.elapsed = time.perf_counter() - self.start
