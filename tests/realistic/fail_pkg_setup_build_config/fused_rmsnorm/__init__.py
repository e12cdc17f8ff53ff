import torch

from . import _C


def rms_norm(x: torch.Tensor, weight: torch.Tensor, eps: float = 1e-6) -> torch.Tensor:
    return _C.rms_norm(x.contiguous(), weight, eps)
