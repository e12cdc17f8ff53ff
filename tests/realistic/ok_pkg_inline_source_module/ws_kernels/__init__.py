"""Warp-specialized elementwise kernels, built on first use."""
import functools

import torch
from torch.utils.cpp_extension import load_inline

from .sources import CPP_SRC, CUDA_SRC


@functools.lru_cache(maxsize=None)
def _ext():
    return load_inline(
        "ws_scale",
        cpp_sources=CPP_SRC,
        cuda_sources=CUDA_SRC,
        functions=["ws_scale"],
        # setmaxnreg needs the arch-specific Hopper target
        extra_cuda_cflags=["-O3", "--use_fast_math", "-gencode=arch=compute_90a,code=sm_90a"],
    )


def ws_scale(x: torch.Tensor, s: float) -> torch.Tensor:
    return _ext().ws_scale(x.contiguous(), s)
