"""JIT-built Hopper tile kernel; the CUDA source sits next to this module."""
from pathlib import Path

import torch
from torch.utils.cpp_extension import load

_ext = load(
    name="wgmma_tile",
    sources=[str(Path(__file__).with_suffix(".cu"))],
    extra_cuda_cflags=[
        "-O3",
        "--use_fast_math",
        "-gencode=arch=compute_80,code=sm_80",
        "-gencode=arch=compute_90a,code=sm_90a",
    ],
    verbose=False,
)


def wgmma_tile(a: torch.Tensor) -> torch.Tensor:
    return _ext.wgmma_tile(a.contiguous())
