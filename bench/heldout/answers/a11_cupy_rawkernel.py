# request: CuPy RawKernel doing an async-copy tiled matrix transpose with cp.async ; fleet: T4,V100 ; pins: cupy-cuda12x==13.3.0
import cupy as cp

KERNEL = r"""
extern "C" __global__ void transpose_tiled(const float* __restrict__ in, float* __restrict__ out, int rows, int cols) {
    __shared__ __align__(16) float tile[32][33];
    int x = blockIdx.x * 32 + threadIdx.x;
    int y = blockIdx.y * 32 + threadIdx.y;
    if (x < cols && y < rows) {
        unsigned smem = (unsigned)__cvta_generic_to_shared(&tile[threadIdx.y][threadIdx.x]);
        asm volatile("cp.async.ca.shared.global [%0], [%1], 4;\n" :: "r"(smem), "l"(in + y * cols + x));
    }
    asm volatile("cp.async.commit_group;\n" ::);
    asm volatile("cp.async.wait_group 0;\n" ::);
    __syncthreads();
    x = blockIdx.y * 32 + threadIdx.x;
    y = blockIdx.x * 32 + threadIdx.y;
    if (x < rows && y < cols) {
        out[y * rows + x] = tile[threadIdx.x][threadIdx.y];
    }
}
"""

_kernel = cp.RawKernel(KERNEL, "transpose_tiled")


def transpose(a):
    rows, cols = a.shape
    out = cp.empty((cols, rows), dtype=a.dtype)
    grid = ((cols + 31) // 32, (rows + 31) // 32)
    _kernel(grid, (32, 32), (a, out, cp.int32(rows), cp.int32(cols)))
    return out


if __name__ == "__main__":
    a = cp.random.rand(2048, 1024, dtype=cp.float32)
    assert cp.allclose(transpose(a), a.T)
    print("ok")
