"""MLA-style attention: QK head dim 192 (nope 128 + rope 64), V head dim 128."""
import argparse

import torch
import torch.nn.functional as F

# Prefer the flash kernel, keeping the math fallback for the shapes it refuses (V head dim != QK).
SDPA_CONFIG = {"enable_flash": True, "enable_math": True, "enable_mem_efficient": False}
FLASH_ONLY = False


class MLAAttention(torch.nn.Module):
    def __init__(self, dim=2048, heads=16, qk_nope=128, qk_rope=64, v_dim=128):
        super().__init__()
        self.heads = heads
        self.qk_dim = qk_nope + qk_rope
        self.v_dim = v_dim
        self.q_proj = torch.nn.Linear(dim, heads * self.qk_dim)
        self.k_proj = torch.nn.Linear(dim, heads * self.qk_dim)
        self.v_proj = torch.nn.Linear(dim, heads * v_dim)

    def forward(self, x):
        b, s, _ = x.shape
        q = self.q_proj(x).view(b, s, self.heads, self.qk_dim).transpose(1, 2)
        k = self.k_proj(x).view(b, s, self.heads, self.qk_dim).transpose(1, 2)
        v = self.v_proj(x).view(b, s, self.heads, self.v_dim).transpose(1, 2)
        with torch.backends.cuda.sdp_kernel(**SDPA_CONFIG):
            out = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return out.transpose(1, 2).reshape(b, s, -1)


def decode_step(q, k, v):
    with torch.backends.cuda.sdp_kernel(enable_flash=True, enable_math=not FLASH_ONLY,
                                        enable_mem_efficient=not FLASH_ONLY):
        return F.scaled_dot_product_attention(q, k, v)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--flash-only", action="store_true")
    args = p.parse_args()
    q = torch.randn(1, 16, 1, 192, device="cuda", dtype=torch.bfloat16)
    k = torch.randn(1, 16, 4096, 192, device="cuda", dtype=torch.bfloat16)
    v = torch.randn(1, 16, 4096, 128, device="cuda", dtype=torch.bfloat16)
    decode_step(q, k, v)
    # positional flags, in the signature's order (flash, math, mem_efficient)
    with torch.backends.cuda.sdp_kernel(True, True, False):
        F.scaled_dot_product_attention(q, k, v)
    # a command-line flag: what it holds is not known before the run
    with torch.backends.cuda.sdp_kernel(enable_math=not args.flash_only, enable_mem_efficient=False):
        F.scaled_dot_product_attention(q, k, v)
    x = torch.randn(2, 1024, 2048, device="cuda", dtype=torch.bfloat16)
    return MLAAttention().cuda()(x)


if __name__ == "__main__":
    main()
