# request: Blackwell tcgen05 tensor-memory alloc/dealloc smoke test via load_inline ; fleet: B200,H100 ; pins: torch==2.7.0
import torch
from torch.utils.cpp_extension import load_inline

CUDA_SRC = r"""
#include <torch/extension.h>
#include <cstdint>

__global__ void tmem_smoke(int* out) {
    __shared__ uint32_t tmem_base;
    if (threadIdx.x < 32) {
        uint32_t dst = static_cast<uint32_t>(__cvta_generic_to_shared(&tmem_base));
        asm volatile("tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [%0], 32;" :: "r"(dst));
        asm volatile("tcgen05.relinquish_alloc_permit.cta_group::1.sync.aligned;");
    }
    __syncthreads();
    if (threadIdx.x < 32) {
        asm volatile("tcgen05.dealloc.cta_group::1.sync.aligned.b32 %0, 32;" :: "r"(tmem_base));
    }
    if (threadIdx.x == 0) out[0] = (int)tmem_base;
}

torch::Tensor smoke() {
    auto out = torch::zeros({1}, torch::dtype(torch::kInt32).device(torch::kCUDA));
    tmem_smoke<<<1, 128>>>(out.data_ptr<int>());
    return out;
}
"""


def build(archs=("100a",)):
    flags = ["-O2"] + [f"-gencode=arch=compute_{a},code=sm_{a}" for a in archs]
    return load_inline(
        name="tmem_smoke",
        cpp_sources="torch::Tensor smoke();",
        cuda_sources=CUDA_SRC,
        functions=["smoke"],
        extra_cuda_cflags=flags,
    )


if __name__ == "__main__":
    ext = build()
    print(ext.smoke())
