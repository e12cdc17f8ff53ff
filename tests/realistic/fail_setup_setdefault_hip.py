"""setup.py for the paged-KV cache ops; builds for ROCm or CUDA depending on the installed torch."""
import os

import torch
from setuptools import setup
from torch.utils.cpp_extension import BuildExtension, CUDAExtension

IS_ROCM = torch.version.hip is not None

if IS_ROCM:
    os.environ.setdefault("PYTORCH_ROCM_ARCH", "gfx90a;gfx942")
else:
    os.environ.setdefault("TORCH_CUDA_ARCH_LIST", "8.0;8.6")

sources = ["csrc/cache_ops.cu", "csrc/torch_bindings.cpp"]
nvcc_args = ["-O3", "--use_fast_math"] if not IS_ROCM else ["-O3"]

setup(
    name="paged_kv_ops",
    ext_modules=[CUDAExtension("paged_kv_ops._C", sources, extra_compile_args={"cxx": ["-O3"], "nvcc": nvcc_args})],
    cmdclass={"build_ext": BuildExtension},
)
