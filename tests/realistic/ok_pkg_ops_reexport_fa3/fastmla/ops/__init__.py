"""Attention kernels: FlashAttention 3 (the hopper/ build of flash-attention) when it is installed."""
try:
    from flash_attn_interface import flash_attn_func, flash_attn_varlen_func

    HAS_FA3 = True
except ImportError:
    flash_attn_func = flash_attn_varlen_func = None
    HAS_FA3 = False

__all__ = ["HAS_FA3", "flash_attn_func", "flash_attn_varlen_func"]
