"""Fused rotary-embedding kernel, JIT-compiled for the archs the cluster runs."""
import torch
from torch.utils.cpp_extension import load_inline

SUPPORTED_ARCHS = ["8.0", "8.6", "8.9"]

CPP_SRC = "torch::Tensor rotary(torch::Tensor x, torch::Tensor cos, torch::Tensor sin);"
CUDA_SRC = r"""
#include <torch/extension.h>
__global__ void rotary_kernel(const float* x, const float* c, const float* s, float* y, int half, int rows) {
  int r = blockIdx.x, i = threadIdx.x;
  if (r >= rows || i >= half) return;
  const float* xr = x + r * 2 * half;
  float a = xr[i], b = xr[i + half];
  y[r * 2 * half + i] = a * c[r * half + i] - b * s[r * half + i];
  y[r * 2 * half + i + half] = b * c[r * half + i] + a * s[r * half + i];
}
torch::Tensor rotary(torch::Tensor x, torch::Tensor cos, torch::Tensor sin) {
  auto y = torch::empty_like(x);
  int half = x.size(-1) / 2, rows = x.numel() / x.size(-1);
  rotary_kernel<<<rows, half>>>(x.data_ptr<float>(), cos.data_ptr<float>(), sin.data_ptr<float>(), y.data_ptr<float>(), half, rows);
  return y;
}
"""


def nvcc_arch_flags(archs):
    flags = []
    for arch in archs:
        num = arch.replace(".", "")
        flags.append(f"-gencode=arch=compute_{num},code=sm_{num}")
    return flags


def build():
    return load_inline(
        name="rotary_ext",
        cpp_sources=CPP_SRC,
        cuda_sources=CUDA_SRC,
        functions=["rotary"],
        extra_cuda_cflags=["-O3"] + nvcc_arch_flags(SUPPORTED_ARCHS),
    )


rotary_ext = build()
