// Blackwell tensor-memory round trip: allocate TMEM columns, store a tile, load it back.
#include <cstdint>
#include <torch/extension.h>

__global__ void tmem_roundtrip_kernel(const float* __restrict__ x, float* __restrict__ y, int n) {
  __shared__ uint32_t tmem_base;
  const uint32_t smem_addr = static_cast<uint32_t>(__cvta_generic_to_shared(&tmem_base));
  if (threadIdx.x < 32) {
    asm volatile("tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [%0], 32;" ::"r"(smem_addr));
    asm volatile("tcgen05.relinquish_alloc_permit.cta_group::1.sync.aligned;");
  }
  __syncthreads();
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  const float v = i < n ? x[i] : 0.f;
  const uint32_t taddr = tmem_base + ((threadIdx.x & ~31u) << 16);
  asm volatile("tcgen05.st.sync.aligned.32x32b.x1.b32 [%0], {%1};" ::"r"(taddr), "r"(__float_as_uint(v)));
  asm volatile("tcgen05.wait::st.sync.aligned;");
  uint32_t r;
  asm volatile("tcgen05.ld.sync.aligned.32x32b.x1.b32 {%0}, [%1];" : "=r"(r) : "r"(taddr));
  asm volatile("tcgen05.wait::ld.sync.aligned;");
  if (i < n) y[i] = __uint_as_float(r);
  __syncthreads();
  if (threadIdx.x < 32) {
    asm volatile("tcgen05.dealloc.cta_group::1.sync.aligned.b32 %0, 32;" ::"r"(tmem_base));
  }
}

torch::Tensor tmem_roundtrip(torch::Tensor x) {
  auto y = torch::empty_like(x);
  const int n = x.numel();
  tmem_roundtrip_kernel<<<(n + 127) / 128, 128>>>(x.data_ptr<float>(), y.data_ptr<float>(), n);
  return y;
}

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) { m.def("tmem_roundtrip", &tmem_roundtrip); }
