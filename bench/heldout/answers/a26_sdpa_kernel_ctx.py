# request: force the flash SDPA backend with the new sdpa_kernel context manager and benchmark it ; fleet: A100,T4 ; pins: torch==2.2.2
import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

SHAPES = [(4, 16, 1024, 64), (4, 16, 4096, 128)]


def bench(shape, backend=SDPBackend.FLASH_ATTENTION, iters=20):
    q = torch.randn(*shape, device="cuda", dtype=torch.float16)
    start = torch.cuda.Event(enable_timing=True)
    end = torch.cuda.Event(enable_timing=True)
    with sdpa_kernel(backend):
        F.scaled_dot_product_attention(q, q, q, is_causal=True)
        start.record()
        for _ in range(iters):
            F.scaled_dot_product_attention(q, q, q, is_causal=True)
        end.record()
    torch.cuda.synchronize()
    return start.elapsed_time(end) / iters


if __name__ == "__main__":
    for s in SHAPES:
        print(s, f"{bench(s):.3f} ms")
