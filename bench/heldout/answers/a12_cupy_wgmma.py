# request: minimal Hopper wgmma fence/commit/wait skeleton in a CuPy RawKernel compiled with NVRTC ; fleet: H100,A100 ; pins: cupy-cuda12x==13.3.0
import cupy as cp

SRC = r"""
extern "C" __global__ void wgmma_sync_demo(float* out) {
    asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
    asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
    asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory");
    if (threadIdx.x == 0) out[blockIdx.x] = 1.0f;
}
"""


def build(arch="sm_90a"):
    mod = cp.RawModule(code=SRC, options=("-std=c++17", f"--gpu-architecture={arch}"))
    return mod.get_function("wgmma_sync_demo")


def main():
    fn = build()
    out = cp.zeros(4, dtype=cp.float32)
    fn((4,), (128,), (out,))
    print(out)


if __name__ == "__main__":
    main()
