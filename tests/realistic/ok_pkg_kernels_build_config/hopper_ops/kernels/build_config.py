"""nvcc flags shared by every JIT-built kernel of this package."""
NVCC_FLAGS = [
    "-O3",
    "-std=c++17",
    "--use_fast_math",
    "--expt-relaxed-constexpr",
    # wgmma exists only on the arch-specific Hopper target
    "-gencode=arch=compute_90a,code=sm_90a",
]
