// Hopper warpgroup-MMA fence/commit/wait around a bf16 tile copy; plain copy on other targets.
#include <cuda_bf16.h>
#include <torch/extension.h>

__global__ void wgmma_tile_kernel(const __nv_bfloat16* __restrict__ a, __nv_bfloat16* __restrict__ c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
  asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
  asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory");
#endif
  if (i < n) c[i] = a[i];
}

torch::Tensor wgmma_tile(torch::Tensor a) {
  auto c = torch::empty_like(a);
  int n = a.numel();
  wgmma_tile_kernel<<<(n + 127) / 128, 128>>>(
      reinterpret_cast<const __nv_bfloat16*>(a.data_ptr()), reinterpret_cast<__nv_bfloat16*>(c.data_ptr()), n);
  return c;
}

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) { m.def("wgmma_tile", &wgmma_tile); }
