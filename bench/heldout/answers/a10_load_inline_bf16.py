# request: fused bf16 bias+GELU kernel via torch.utils.cpp_extension.load_inline ; fleet: V100,A100 ; pins: torch==2.1.0
import torch
from torch.utils.cpp_extension import load_inline

cuda_src = r"""
#include <cuda_bf16.h>
#include <torch/extension.h>

__global__ void bias_gelu_kernel(const __nv_bfloat16* __restrict__ x,
                                 const __nv_bfloat16* __restrict__ b,
                                 __nv_bfloat16* __restrict__ y, int n, int cols) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        __nv_bfloat16 v = __hadd(x[i], b[i % cols]);
        float f = __bfloat162float(v);
        float g = 0.5f * f * (1.0f + tanhf(0.7978845608f * (f + 0.044715f * f * f * f)));
        y[i] = __float2bfloat16(g);
    }
}

torch::Tensor bias_gelu(torch::Tensor x, torch::Tensor b) {
    auto y = torch::empty_like(x);
    int n = x.numel();
    int cols = b.numel();
    int threads = 256;
    bias_gelu_kernel<<<(n + threads - 1) / threads, threads>>>(
        reinterpret_cast<const __nv_bfloat16*>(x.data_ptr<at::BFloat16>()),
        reinterpret_cast<const __nv_bfloat16*>(b.data_ptr<at::BFloat16>()),
        reinterpret_cast<__nv_bfloat16*>(y.data_ptr<at::BFloat16>()), n, cols);
    return y;
}
"""

cpp_src = "torch::Tensor bias_gelu(torch::Tensor x, torch::Tensor b);"

_ext = None


def get_ext(verbose=False):
    global _ext
    if _ext is None:
        _ext = load_inline(
            name="bias_gelu_ext",
            cpp_sources=cpp_src,
            cuda_sources=cuda_src,
            functions=["bias_gelu"],
            extra_cuda_cflags=["-O3", "--use_fast_math"],
            verbose=verbose,
        )
    return _ext


if __name__ == "__main__":
    x = torch.randn(1024, 4096, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(4096, device="cuda", dtype=torch.bfloat16)
    print(get_ext().bias_gelu(x, b).float().mean())
