"""Decode step in the style of SGLang's FlashAttention backend: paged KV cache read by
sgl-kernel's flash_attn_with_kvcache, whose kernels sgl-kernel builds for compute capability
8.x and 9.x only: other GPUs (Blackwell) take PyTorch's SDPA over the gathered pages."""
import torch
from sgl_kernel.flash_attn import flash_attn_with_kvcache


class FlashAttentionDecode:
    def __init__(self, num_heads: int, num_kv_heads: int, head_dim: int, page_size: int = 256):
        self.num_heads, self.num_kv_heads, self.head_dim = num_heads, num_kv_heads, head_dim
        self.page_size = page_size
        self.scale = head_dim ** -0.5

    def forward_decode(self, q, k_cache, v_cache, page_table, cache_seqlens):
        if torch.cuda.get_device_capability()[0] not in (8, 9):
            return self.forward_decode_sdpa(q, k_cache, v_cache, page_table)
        return flash_attn_with_kvcache(
            q, k_cache, v_cache,
            page_table=page_table, cache_seqlens=cache_seqlens,
            softmax_scale=self.scale, causal=True,
        )

    def forward_decode_sdpa(self, q, k_cache, v_cache, page_table):
        k = k_cache[page_table].flatten(1, 2).transpose(1, 2)
        v = v_cache[page_table].flatten(1, 2).transpose(1, 2)
        out = torch.nn.functional.scaled_dot_product_attention(q.transpose(1, 2), k, v, enable_gqa=True)
        return out.transpose(1, 2)


def decode(batch: int = 8, pages: int = 64):
    attn = FlashAttentionDecode(num_heads=32, num_kv_heads=8, head_dim=128)
    q = torch.randn(batch, 1, attn.num_heads, attn.head_dim, device="cuda", dtype=torch.bfloat16)
    kc = torch.zeros(pages, attn.page_size, attn.num_kv_heads, attn.head_dim, device="cuda", dtype=torch.bfloat16)
    table = torch.arange(pages, device="cuda", dtype=torch.int32).view(batch, -1)
    lens = torch.full((batch,), 1000, device="cuda", dtype=torch.int32)
    return attn.forward_decode(q, kc, kc.clone(), table, lens)
