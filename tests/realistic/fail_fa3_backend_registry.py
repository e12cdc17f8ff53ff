"""Attention backend selection for MLA prefill, in the style of vLLM's backend registry."""
from typing import Optional

import torch
import torch.nn.functional as F

QK_HEAD_DIM = 192  # qk_nope_head_dim 128 + qk_rope_head_dim 64
V_HEAD_DIM = 128


class AttentionBackend:
    name = "base"

    @classmethod
    def is_supported(cls) -> bool:
        raise NotImplementedError

    def forward(self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, scale: float) -> torch.Tensor:
        raise NotImplementedError


class FlashAttn3Backend(AttentionBackend):
    name = "FLASH_ATTN_3"

    @classmethod
    def is_supported(cls) -> bool:
        major, _ = torch.cuda.get_device_capability()
        return major >= 9

    def forward(self, q, k, v, scale):
        from flash_attn_interface import flash_attn_func

        out = flash_attn_func(q, k, v, softmax_scale=scale, causal=True)
        return out[0] if isinstance(out, tuple) else out


class TorchSDPABackend(AttentionBackend):
    name = "TORCH_SDPA"

    @classmethod
    def is_supported(cls) -> bool:
        return True

    def forward(self, q, k, v, scale):
        q, k, v = (t.transpose(1, 2) for t in (q, k, v))
        return F.scaled_dot_product_attention(q, k, v, is_causal=True, scale=scale).transpose(1, 2)


_BACKENDS = [FlashAttn3Backend, TorchSDPABackend]


def get_attn_backend(preferred: Optional[str] = None) -> AttentionBackend:
    for cls in _BACKENDS:
        if preferred is not None and cls.name != preferred:
            continue
        if cls.is_supported():
            return cls()
    raise RuntimeError(f"no attention backend available (preferred={preferred})")


def mla_prefill(num_tokens: int = 4096, num_heads: int = 16) -> torch.Tensor:
    backend = get_attn_backend()
    q = torch.randn(1, num_tokens, num_heads, QK_HEAD_DIM, device="cuda", dtype=torch.bfloat16)
    k = torch.randn(1, num_tokens, num_heads, QK_HEAD_DIM, device="cuda", dtype=torch.bfloat16)
    v = torch.randn(1, num_tokens, num_heads, V_HEAD_DIM, device="cuda", dtype=torch.bfloat16)
    return backend.forward(q, k, v, QK_HEAD_DIM ** -0.5)


if __name__ == "__main__":
    print(mla_prefill().shape)
