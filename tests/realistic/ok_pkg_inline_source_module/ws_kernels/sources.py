"""CUDA/C++ sources of the warp-specialized kernels (kept apart so editors highlight them)."""
CPP_SRC = "torch::Tensor ws_scale(torch::Tensor x, double s);"

CUDA_SRC = r"""
#include <torch/extension.h>

__global__ void __launch_bounds__(384) ws_scale_kernel(const float* x, float* y, float s, int n) {
  int warpgroup = threadIdx.x / 128;
  if (warpgroup == 0) {
    asm volatile("setmaxnreg.dec.sync.aligned.u32 40;\n");
    return;  // producer warpgroup: would issue the TMA loads
  }
  asm volatile("setmaxnreg.inc.sync.aligned.u32 232;\n");
  int i = blockIdx.x * 256 + (threadIdx.x - 128);
  if (i < n) y[i] = x[i] * s;
}

torch::Tensor ws_scale(torch::Tensor x, double s) {
  auto y = torch::empty_like(x);
  int n = x.numel();
  ws_scale_kernel<<<(n + 255) / 256, 384>>>(x.data_ptr<float>(), y.data_ptr<float>(), static_cast<float>(s), n);
  return y;
}
"""
