#include <torch/extension.h>
#include <cuda_fp16.h>

__global__ void dequant_int8(const int8_t* q, const half* scale, half* out, int n, int group) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = __hmul(__int2half_rn(q[i]), scale[i / group]);
}

torch::Tensor dequant(torch::Tensor q, torch::Tensor scale, int64_t group) {
    auto out = torch::empty(q.sizes(), q.options().dtype(torch::kHalf));
    int n = q.numel();
    dequant_int8<<<(n + 255) / 256, 256>>>(q.data_ptr<int8_t>(),
        reinterpret_cast<const half*>(scale.data_ptr<at::Half>()),
        reinterpret_cast<half*>(out.data_ptr<at::Half>()), n, (int)group);
    return out;
}

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) { m.def("dequant", &dequant); }
