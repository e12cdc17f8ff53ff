# request: Triton FP8 matmul kernel with tl.dot on float8e4nv inputs ; fleet: A100,H100 ; pins: torch==2.4.0, triton==3.0.0
import torch
import triton
import triton.language as tl


@triton.jit
def fp8_matmul(a_ptr, b_ptr, c_ptr, M, N, K, sam, sak, sbk, sbn, scm, scn,
               BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    rm = pid_m * BM + tl.arange(0, BM)
    rn = pid_n * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BK)):
        a = tl.load(a_ptr + rm[:, None] * sam + (k * BK + rk)[None, :] * sak)
        b = tl.load(b_ptr + (k * BK + rk)[:, None] * sbk + rn[None, :] * sbn)
        acc = tl.dot(a, b, acc)
    tl.store(c_ptr + rm[:, None] * scm + rn[None, :] * scn, acc.to(tl.bfloat16))


def matmul(a, b, block=(128, 128, 64)):
    M, K = a.shape
    _, N = b.shape
    c = torch.empty(M, N, device=a.device, dtype=torch.bfloat16)
    grid = (triton.cdiv(M, block[0]), triton.cdiv(N, block[1]))
    fp8_matmul[grid](a, b, c, M, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1),
                     c.stride(0), c.stride(1), BM=block[0], BN=block[1], BK=block[2])
    return c


if __name__ == "__main__":
    a = torch.randn(1024, 1024, device="cuda").to(torch.float8_e4m3fn)
    b = torch.randn(1024, 1024, device="cuda").to(torch.float8_e4m3fn)
    print(matmul(a, b).float().mean())
