# request: Triton fused tanh-GELU elementwise kernel ; fleet: A100,T4 ; pins: torch==2.1.2, triton==2.1.0
import torch
import triton
import triton.language as tl


@triton.jit
def gelu_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(axis=0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask).to(tl.float32)
    inner = 0.7978845608 * (x + 0.044715 * x * x * x)
    y = 0.5 * x * (1.0 + tl.tanh(inner))
    tl.store(y_ptr + offs, y, mask=mask)


def gelu(x, block=1024):
    y = torch.empty_like(x)
    n = x.numel()
    gelu_kernel[(triton.cdiv(n, block),)](x, y, n, BLOCK=block)
    return y


if __name__ == "__main__":
    x = torch.randn(1 << 20, device="cuda")
    torch.testing.assert_close(gelu(x), torch.nn.functional.gelu(x, approximate="tanh"), atol=1e-4, rtol=1e-4)
    print("ok")
