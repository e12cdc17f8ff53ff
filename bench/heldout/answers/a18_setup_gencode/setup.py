# request: setup.py building a CUDA extension for our A100 and H100 fleet ; fleet: A100,H100 ; pins: torch==2.3.0
from setuptools import setup
from torch.utils.cpp_extension import BuildExtension, CUDAExtension

ARCHS = ["80", "90"]
NVCC_FLAGS = ["-O3", "--use_fast_math", "-lineinfo"]
for a in ARCHS:
    NVCC_FLAGS += ["-gencode", f"arch=compute_{a},code=sm_{a}"]

setup(
    name="fused_rmsnorm",
    ext_modules=[
        CUDAExtension(
            name="fused_rmsnorm",
            sources=["rmsnorm.cpp", "rmsnorm_kernel.cu"],
            extra_compile_args={"cxx": ["-O3"], "nvcc": NVCC_FLAGS},
        )
    ],
    cmdclass={"build_ext": BuildExtension},
)
