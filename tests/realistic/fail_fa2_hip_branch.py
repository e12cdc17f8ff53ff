"""MLA prefill kernel dispatch: ROCm and CUDA builds take different attention paths."""
import torch
import torch.nn.functional as F

try:
    from flash_attn import flash_attn_func
except ImportError:  # flash-attn not installed: SDPA only
    flash_attn_func = None

NUM_HEADS, QK_HEAD_DIM, V_HEAD_DIM = 16, 192, 128


def _sdpa(q, k, v):
    out = F.scaled_dot_product_attention(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2), is_causal=True)
    return out.transpose(1, 2)


def prefill_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    if torch.version.hip is not None or flash_attn_func is None:
        return _sdpa(q, k, v)
    return flash_attn_func(q, k, v, causal=True)


if __name__ == "__main__":
    q = torch.randn(1, 4096, NUM_HEADS, QK_HEAD_DIM, device="cuda", dtype=torch.bfloat16)
    k = torch.randn(1, 4096, NUM_HEADS, QK_HEAD_DIM, device="cuda", dtype=torch.bfloat16)
    v = torch.randn(1, 4096, NUM_HEADS, V_HEAD_DIM, device="cuda", dtype=torch.bfloat16)
    print(prefill_attention(q, k, v).shape)
