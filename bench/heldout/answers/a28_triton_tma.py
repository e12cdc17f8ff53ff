# request: Triton persistent matmul using TMA descriptors on Hopper ; fleet: H100 ; pins: torch==2.5.1, triton==3.1.0
import torch
import triton
import triton.language as tl
from triton.tools.experimental_descriptor import create_2d_tma_descriptor


@triton.jit
def tma_matmul(a_desc, b_desc, c_desc, M, N, K,
               BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K, BK):
        a = tl._experimental_descriptor_load(a_desc, [pid_m * BM, k], [BM, BK], tl.float16)
        b = tl._experimental_descriptor_load(b_desc, [pid_n * BN, k], [BN, BK], tl.float16)
        acc = tl.dot(a, b.T, acc)
    tl._experimental_descriptor_store(c_desc, acc.to(tl.float16), [pid_m * BM, pid_n * BN])


def matmul(a, b, BM=128, BN=128, BK=64):
    M, K = a.shape
    N = b.shape[0]
    c = torch.empty(M, N, device="cuda", dtype=torch.float16)
    a_d = create_2d_tma_descriptor(a.data_ptr(), M, K, BM, BK, a.element_size())
    b_d = create_2d_tma_descriptor(b.data_ptr(), N, K, BN, BK, b.element_size())
    c_d = create_2d_tma_descriptor(c.data_ptr(), M, N, BM, BN, c.element_size())
    tma_matmul[(triton.cdiv(M, BM), triton.cdiv(N, BN))](a_d, b_d, c_d, M, N, K, BM=BM, BN=BN, BK=BK, num_warps=8)
    return c


if __name__ == "__main__":
    a = torch.randn(2048, 2048, device="cuda", dtype=torch.float16)
    b = torch.randn(2048, 2048, device="cuda", dtype=torch.float16)
    print((matmul(a, b) - a @ b.T).abs().max())
