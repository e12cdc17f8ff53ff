"""The FlashAttention 3 API on Moore Threads GPUs: MATE's flash-attention wrapper keeps
this module at the top of the tree and forwards to its MUSA kernels."""
from flash_attn_3 import __version__  # noqa: F401  MATE's flash_attn_3 wrapper package
from flash_attn_3.interface import flash_attn_func, flash_attn_varlen_func, flash_attn_with_kvcache

__all__ = ["flash_attn_func", "flash_attn_varlen_func", "flash_attn_with_kvcache"]
