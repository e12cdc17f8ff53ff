"""Build the fused RMSNorm extension: pip install --no-build-isolation -e ."""
from pathlib import Path

from setuptools import setup
from torch.utils.cpp_extension import BuildExtension, CUDAExtension

from tools.build_config import gencode_flags

ROOT = Path(__file__).parent
NVCC_FLAGS = ["-O3", "-std=c++17", "--use_fast_math", "-lineinfo"]

setup(
    name="fused_rmsnorm",
    version="0.1.0",
    packages=["fused_rmsnorm"],
    ext_modules=[
        CUDAExtension(
            name="fused_rmsnorm._C",
            sources=[str(ROOT / "csrc" / "rmsnorm.cu")],
            extra_compile_args={"cxx": ["-O3", "-std=c++17"], "nvcc": NVCC_FLAGS + gencode_flags()},
        )
    ],
    cmdclass={"build_ext": BuildExtension},
)
