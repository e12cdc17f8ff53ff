"""JIT build of the TMEM round-trip test kernel for the B200 nodes."""
from pathlib import Path

import torch
from torch.utils.cpp_extension import load

CSRC = Path(__file__).parent / "csrc"
NVCC_FLAGS = ["-O3", "-std=c++17", "-gencode=arch=compute_100,code=sm_100"]

_ext = load(
    name="tmem_roundtrip",
    sources=[str(CSRC / "tmem_roundtrip.cu")],
    extra_cuda_cflags=NVCC_FLAGS,
    verbose=True,
)


def tmem_roundtrip(x: torch.Tensor) -> torch.Tensor:
    assert x.is_cuda and x.dtype == torch.float32
    return _ext.tmem_roundtrip(x.contiguous())


if __name__ == "__main__":
    t = torch.randn(4096, device="cuda")
    torch.testing.assert_close(tmem_roundtrip(t), t)
