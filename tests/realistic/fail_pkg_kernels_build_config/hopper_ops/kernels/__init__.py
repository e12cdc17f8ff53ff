"""Hopper GEMM epilogue kernels, compiled on first import."""
import os

import torch
from torch.utils.cpp_extension import load

from .build_config import NVCC_FLAGS

_HERE = os.path.dirname(os.path.abspath(__file__))

_C = load(
    name="hopper_tile_ops",
    sources=[os.path.join(_HERE, "tile_ops.cu")],
    extra_cuda_cflags=NVCC_FLAGS,
    verbose=os.environ.get("HOPPER_OPS_VERBOSE", "0") == "1",
)


def tile_copy(x: torch.Tensor) -> torch.Tensor:
    return _C.tile_copy(x.contiguous())
