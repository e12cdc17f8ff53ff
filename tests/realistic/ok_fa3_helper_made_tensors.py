"""Microbenchmark: FlashAttention 3 vs SDPA on DeepSeek-V3 prefill shapes (QK 192, V 128)."""
import torch
import torch.nn.functional as F
from flash_attn_interface import flash_attn_func

BATCH, SEQLEN, HEADS = 2, 8192, 128
QK_HEAD_DIM, V_HEAD_DIM = 192, 128


def make_inputs(batch: int, seqlen: int, heads: int, device: str = "cuda"):
    opts = {"device": device, "dtype": torch.bfloat16}
    q_shape = (batch, seqlen, heads, QK_HEAD_DIM)
    v_shape = (batch, seqlen, heads, V_HEAD_DIM)
    q = torch.randn(*q_shape, **opts)
    k = torch.randn(*q_shape, **opts)
    v = torch.randn(*v_shape, **opts)
    return q, k, v


def run_attention(q, k, v):
    if torch.cuda.get_device_capability()[0] == 9:  # FA3 runs V != QK head dim on Hopper only
        out = flash_attn_func(q, k, v, causal=True)
        return out[0] if isinstance(out, tuple) else out
    return F.scaled_dot_product_attention(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2), is_causal=True).transpose(1, 2)


def bench(iters: int = 20) -> float:
    q, k, v = make_inputs(BATCH, SEQLEN, HEADS)
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    run_attention(q, k, v)
    start.record()
    for _ in range(iters):
        run_attention(q, k, v)
    end.record()
    torch.cuda.synchronize()
    return start.elapsed_time(end) / iters


if __name__ == "__main__":
    print(f"{bench():.3f} ms/iter")
