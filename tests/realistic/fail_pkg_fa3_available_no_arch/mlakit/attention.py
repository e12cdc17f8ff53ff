"""MLA prefill: FlashAttention 3 when installed, SDPA (math / memory-efficient) otherwise."""
import torch
import torch.nn.functional as F

from .utils.import_utils import is_flash_attn_3_available

if is_flash_attn_3_available():
    from flash_attn_interface import flash_attn_func as fa3_func

QK_HEAD_DIM = 192
V_HEAD_DIM = 128


def _use_fa3() -> bool:
    return is_flash_attn_3_available()


def mla_prefill(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    """q, k: (batch, seq, heads, 192); v: (batch, seq, heads, 128)."""
    scale = QK_HEAD_DIM ** -0.5
    if _use_fa3():
        out = fa3_func(q, k, v, softmax_scale=scale, causal=True)
        return out[0] if isinstance(out, tuple) else out
    out = F.scaled_dot_product_attention(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2), scale=scale, is_causal=True)
    return out.transpose(1, 2)


if __name__ == "__main__":
    b, s, h = 2, 2048, 16
    q = torch.randn(b, s, h, QK_HEAD_DIM, device="cuda", dtype=torch.bfloat16)
    k = torch.randn(b, s, h, QK_HEAD_DIM, device="cuda", dtype=torch.bfloat16)
    v = torch.randn(b, s, h, V_HEAD_DIM, device="cuda", dtype=torch.bfloat16)
    print(mla_prefill(q, k, v).shape)
