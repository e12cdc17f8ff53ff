# request: load_inline bf16 vector add kernel with explicit arch flags for our T4 inference boxes ; fleet: T4 ; pins: torch==2.3.1
import os

import torch
from torch.utils.cpp_extension import load_inline

os.environ["TORCH_CUDA_ARCH_LIST"] = "7.5"

SRC = r"""
#include <torch/extension.h>
#include <cuda_bf16.h>

__global__ void add_bf16(const __nv_bfloat162* a, const __nv_bfloat162* b, __nv_bfloat162* c, int n2) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n2) c[i] = __hadd2(a[i], b[i]);
}

torch::Tensor add(torch::Tensor a, torch::Tensor b) {
    auto c = torch::empty_like(a);
    int n2 = a.numel() / 2;
    add_bf16<<<(n2 + 255) / 256, 256>>>(
        reinterpret_cast<const __nv_bfloat162*>(a.data_ptr<at::BFloat16>()),
        reinterpret_cast<const __nv_bfloat162*>(b.data_ptr<at::BFloat16>()),
        reinterpret_cast<__nv_bfloat162*>(c.data_ptr<at::BFloat16>()), n2);
    return c;
}
"""

ext = load_inline("add_bf16_ext", cpp_sources="torch::Tensor add(torch::Tensor a, torch::Tensor b);",
                  cuda_sources=SRC, functions=["add"], extra_cuda_cflags=["-O3"])

if __name__ == "__main__":
    a = torch.randn(1 << 20, device="cuda", dtype=torch.bfloat16)
    print((ext.add(a, a) - 2 * a).abs().max())
