"""nvcc flags shared by every JIT-built kernel of this package."""
NVCC_FLAGS = [
    "-O3",
    "-std=c++17",
    "--use_fast_math",
    "--expt-relaxed-constexpr",
    "-gencode=arch=compute_90,code=sm_90",
]
