"""Warp-specialized row-softmax kernel for the Hopper and Blackwell serving fleet, built at import."""
import torch
from torch.utils.cpp_extension import load_inline

TARGET_ARCHS = ("90a", "100a")  # setmaxnreg: arch-specific targets only

CUDA_SRC = r"""
#include <torch/extension.h>

__global__ void __launch_bounds__(384) ws_softmax_kernel(const float* __restrict__ x, float* __restrict__ y, int cols) {
  const int wg = threadIdx.x / 128;
  if (wg == 0) {
    asm volatile("setmaxnreg.dec.sync.aligned.u32 56;\n");
    return;
  }
  asm volatile("setmaxnreg.inc.sync.aligned.u32 224;\n");
  const float* row = x + blockIdx.x * cols;
  float m = -INFINITY, s = 0.f;
  for (int c = threadIdx.x - 128; c < cols; c += 256) m = fmaxf(m, row[c]);
  for (int c = threadIdx.x - 128; c < cols; c += 256) s += __expf(row[c] - m);
  for (int c = threadIdx.x - 128; c < cols; c += 256) y[blockIdx.x * cols + c] = __expf(row[c] - m) / s;
}

torch::Tensor ws_softmax(torch::Tensor x) {
  auto y = torch::empty_like(x);
  ws_softmax_kernel<<<x.size(0), 384>>>(x.data_ptr<float>(), y.data_ptr<float>(), x.size(1));
  return y;
}
"""


def _gencode_flags():
    flags = []
    for arch in TARGET_ARCHS:
        flags.append(f"-gencode=arch=compute_{arch},code=sm_{arch}")
    return flags


_ext = load_inline(
    name="ws_softmax",
    cpp_sources="torch::Tensor ws_softmax(torch::Tensor x);",
    cuda_sources=CUDA_SRC,
    functions=["ws_softmax"],
    extra_cuda_cflags=["-O3", "--use_fast_math", *_gencode_flags()],
)


def ws_softmax(x: torch.Tensor) -> torch.Tensor:
    return _ext.ws_softmax(x.float().contiguous())
