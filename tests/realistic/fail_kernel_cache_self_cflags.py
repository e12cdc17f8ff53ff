"""Lazily JIT-compiled fused bias+GELU; build flags are kept on the loader object."""
import torch
from torch.utils.cpp_extension import load_inline

CUDA_SRC = r"""
#include <torch/extension.h>
__global__ void bias_gelu_kernel(const float* x, const float* b, float* y, int n, int d) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    float v = x[i] + b[i % d];
    y[i] = 0.5f * v * (1.f + tanhf(0.7978845608f * (v + 0.044715f * v * v * v)));
  }
}
torch::Tensor bias_gelu(torch::Tensor x, torch::Tensor b) {
  auto y = torch::empty_like(x);
  int n = x.numel();
  bias_gelu_kernel<<<(n + 255) / 256, 256>>>(x.data_ptr<float>(), b.data_ptr<float>(), y.data_ptr<float>(), n, b.numel());
  return y;
}
"""


class FusedOps:
    def __init__(self):
        self.cflags = ["-O3", "-gencode=arch=compute_90a,code=sm_90a"]
        self._module = None

    @property
    def module(self):
        if self._module is None:
            self._module = load_inline(
                "fused_bias_gelu",
                cpp_sources="torch::Tensor bias_gelu(torch::Tensor x, torch::Tensor b);",
                cuda_sources=CUDA_SRC,
                functions=["bias_gelu"],
                extra_cuda_cflags=self.cflags,
            )
        return self._module

    def bias_gelu(self, x: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:
        return self.module.bias_gelu(x.contiguous(), bias.contiguous())


OPS = FusedOps()
