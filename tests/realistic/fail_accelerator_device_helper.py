"""Device helpers of a training script that runs on CUDA, XPU or MPS alike: the current
accelerator, its device count and a synchronize for timing."""

import time

import torch


def pick_device() -> torch.device:
    acc = torch.accelerator.current_accelerator()
    return acc if acc is not None else torch.device("cpu")


def world_size_hint() -> int:
    return max(1, torch.accelerator.device_count())


class StepTimer:
    def __init__(self, device: torch.device) -> None:
        self.device = device
        self.start = 0.0

    def __enter__(self):
        self.start = time.perf_counter()
        return self

    def __exit__(self, *exc) -> None:
        if self.device.type != "cpu":
            torch.accelerator.synchronize()
        self.elapsed = time.perf_counter() - self.start
