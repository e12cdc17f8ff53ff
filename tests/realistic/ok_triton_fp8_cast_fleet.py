"""Per-row FP8 (e4m3) quantisation kernel, launched only where the GPU generates e4m3 code."""
import torch
import triton
import triton.language as tl

FP8_MAX = 448.0


@triton.jit
def quant_fp8_kernel(x_ptr, q_ptr, scale_ptr, n_cols, stride, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * stride + cols, mask=mask, other=0.0).to(tl.float32)
    amax = tl.max(tl.abs(x), axis=0)
    scale = tl.maximum(amax, 1e-12) / FP8_MAX
    q = (x / scale).to(tl.float8e4nv)
    tl.store(q_ptr + row * stride + cols, q, mask=mask)
    tl.store(scale_ptr + row, scale)


def quant_fp8(x: torch.Tensor):
    rows, cols = x.shape
    q = torch.empty_like(x, dtype=torch.float8_e4m3fn)
    scales = torch.empty(rows, device=x.device, dtype=torch.float32)
    if torch.cuda.get_device_capability(x.device) < (8, 9):
        # no e4m3 code generation below sm_89: quantise with torch there
        scales = (x.abs().amax(dim=1).clamp(min=1e-12) / FP8_MAX).float()
        return (x / scales[:, None]).to(torch.float8_e4m3fn), scales
    quant_fp8_kernel[(rows,)](x, q, scales, cols, x.stride(0), BLOCK=triton.next_power_of_2(cols))
    return q, scales
