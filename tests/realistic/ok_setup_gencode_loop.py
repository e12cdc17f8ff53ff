"""setup.py for the fused MoE routing kernels."""
from pathlib import Path

from setuptools import setup
from torch.utils.cpp_extension import BuildExtension, CUDAExtension

ROOT = Path(__file__).parent
SM_TARGETS = ("80", "90a", "100a")  # A100, H100, B200

nvcc_flags = ["-O3", "-std=c++17", "--expt-relaxed-constexpr", "-lineinfo"]
for sm in SM_TARGETS:
    nvcc_flags += ["-gencode", f"arch=compute_{sm},code=sm_{sm}"]

setup(
    name="moe_routing",
    version="0.3.0",
    ext_modules=[
        CUDAExtension(
            name="moe_routing._C",
            sources=[str(ROOT / "moe_routing" / "csrc" / name) for name in ("topk_gating.cu", "permute.cu", "bindings.cpp")],
            extra_compile_args={"cxx": ["-O3", "-std=c++17"], "nvcc": nvcc_flags},
        )
    ],
    cmdclass={"build_ext": BuildExtension},
)
