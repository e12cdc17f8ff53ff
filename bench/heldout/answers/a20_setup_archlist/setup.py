# request: setup.py for a fused dequant kernel, building for T4, A10G and L4 via TORCH_CUDA_ARCH_LIST ; fleet: T4,A10G,L4 ; pins: torch==2.4.0
import os

from setuptools import setup
from torch.utils.cpp_extension import BuildExtension, CUDAExtension

os.environ.setdefault("TORCH_CUDA_ARCH_LIST", "8.0;8.6;8.9+PTX")

setup(
    name="dequant_ext",
    ext_modules=[
        CUDAExtension(
            "dequant_ext",
            ["dequant.cu"],
            extra_compile_args={"cxx": ["-O3"], "nvcc": ["-O3", "--use_fast_math"]},
        )
    ],
    cmdclass={"build_ext": BuildExtension},
)
