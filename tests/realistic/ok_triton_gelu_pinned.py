"""Elementwise tanh-GELU; the project pins triton 2.1.0 itself (the pin wins over torch's)."""
import torch
import triton
import triton.language as tl

SQRT_2_OVER_PI = 0.7978845608028654


@triton.jit
def _tanh(x):
    return tl.math.tanh(x)


@triton.jit
def gelu_kernel(x_ptr, y_ptr, n_elements, BLOCK: tl.constexpr):
    pid = tl.program_id(axis=0)
    offsets = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask)
    y = 0.5 * x * (1.0 + _tanh(SQRT_2_OVER_PI * (x + 0.044715 * x * x * x)))
    tl.store(y_ptr + offsets, y, mask=mask)


def gelu(x: torch.Tensor, block: int = 1024) -> torch.Tensor:
    y = torch.empty_like(x)
    n = x.numel()
    gelu_kernel[(triton.cdiv(n, block),)](x, y, n, BLOCK=block)
    return y
