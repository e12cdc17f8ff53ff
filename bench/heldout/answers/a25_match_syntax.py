# request: dispatcher that picks an attention backend from the GPU's compute capability ; fleet: V100,A100 ; pins: python==3.8, torch==2.0.1
import torch
import torch.nn.functional as F


def pick_backend(cc: tuple[int, int]) -> str:
    match cc:
        case (9, _):
            return "flash"
        case (8, _):
            return "flash"
        case (7, _):
            return "mem_efficient"
        case _:
            return "math"


def attention(q, k, v, causal=True):
    backend = pick_backend(torch.cuda.get_device_capability())
    flags = dict(enable_flash=backend == "flash",
                 enable_mem_efficient=backend != "math",
                 enable_math=True)
    with torch.backends.cuda.sdp_kernel(**flags):
        return F.scaled_dot_product_attention(q, k, v, is_causal=causal)


if __name__ == "__main__":
    q = torch.randn(1, 8, 256, 64, device="cuda", dtype=torch.float16)
    print(attention(q, q, q).shape)
