// request: CMake project for a Hopper TMA bulk-copy kernel library ; fleet: H100,A100 ; pins: cuda==12.4
#include <cuda_runtime.h>
#include <cstdint>

__global__ void bulk_copy_kernel(const float* __restrict__ src, float* __restrict__ dst, int n) {
    __shared__ __align__(128) float buf[1024];
    __shared__ __align__(8) uint64_t bar;
    unsigned bar_addr = static_cast<unsigned>(__cvta_generic_to_shared(&bar));
    unsigned buf_addr = static_cast<unsigned>(__cvta_generic_to_shared(buf));
    const float* g = src + blockIdx.x * 1024;
    if (threadIdx.x == 0) {
        asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" :: "r"(bar_addr));
        asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" :: "r"(bar_addr), "r"(4096));
        asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];"
                     :: "r"(buf_addr), "l"(g), "r"(4096), "r"(bar_addr) : "memory");
    }
    __syncthreads();
    asm volatile(
        "{\n .reg .pred p;\n WAIT:\n"
        " mbarrier.try_wait.parity.shared::cta.b64 p, [%0], 0;\n"
        " @!p bra WAIT;\n}\n" :: "r"(bar_addr));
    for (int i = threadIdx.x; i < 1024; i += blockDim.x) {
        int idx = blockIdx.x * 1024 + i;
        if (idx < n) dst[idx] = buf[i];
    }
}

extern "C" void bulk_copy(const float* src, float* dst, int n, cudaStream_t s) {
    bulk_copy_kernel<<<(n + 1023) / 1024, 256, 0, s>>>(src, dst, n);
}
