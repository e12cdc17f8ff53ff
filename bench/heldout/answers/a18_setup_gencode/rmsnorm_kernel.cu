#include <torch/extension.h>
#include <cuda_bf16.h>

template <int BLOCK>
__global__ void rmsnorm_kernel(const __nv_bfloat16* x, const __nv_bfloat16* w, __nv_bfloat16* y, int cols, float eps) {
    __shared__ float red[BLOCK];
    int row = blockIdx.x;
    float acc = 0.f;
    for (int c = threadIdx.x; c < cols; c += BLOCK) {
        float v = __bfloat162float(x[row * cols + c]);
        acc += v * v;
    }
    red[threadIdx.x] = acc;
    __syncthreads();
    for (int s = BLOCK / 2; s > 0; s >>= 1) {
        if (threadIdx.x < s) red[threadIdx.x] += red[threadIdx.x + s];
        __syncthreads();
    }
    float inv = rsqrtf(red[0] / cols + eps);
    for (int c = threadIdx.x; c < cols; c += BLOCK) {
        y[row * cols + c] = __hmul(__float2bfloat16(__bfloat162float(x[row * cols + c]) * inv), w[c]);
    }
}

torch::Tensor rmsnorm_cuda(torch::Tensor x, torch::Tensor w, double eps) {
    auto y = torch::empty_like(x);
    int rows = x.size(0), cols = x.size(1);
    rmsnorm_kernel<256><<<rows, 256>>>(
        reinterpret_cast<const __nv_bfloat16*>(x.data_ptr<at::BFloat16>()),
        reinterpret_cast<const __nv_bfloat16*>(w.data_ptr<at::BFloat16>()),
        reinterpret_cast<__nv_bfloat16*>(y.data_ptr<at::BFloat16>()), cols, (float)eps);
    return y;
}
