"""Attention op for the ViT encoder: force the flash SDPA kernel for deterministic memory use."""
import torch
import torch.nn.functional as F
from packaging import version

TORCH_VERSION = version.parse(torch.__version__)


def flash_only():
    if TORCH_VERSION >= version.parse("2.3"):
        from torch.nn.attention import SDPBackend, sdpa_kernel

        return sdpa_kernel(SDPBackend.FLASH_ATTENTION)
    # torch < 2.3: the older (now deprecated) context manager
    return torch.backends.cuda.sdp_kernel(enable_flash=True, enable_math=False, enable_mem_efficient=False)


class Attention(torch.nn.Module):
    def __init__(self, dim: int = 768, heads: int = 12):
        super().__init__()
        self.heads = heads
        self.qkv = torch.nn.Linear(dim, 3 * dim)
        self.proj = torch.nn.Linear(dim, dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, n, c = x.shape
        q, k, v = self.qkv(x).view(b, n, 3, self.heads, c // self.heads).permute(2, 0, 3, 1, 4)
        with flash_only():
            out = F.scaled_dot_product_attention(q, k, v)
        return self.proj(out.transpose(1, 2).reshape(b, n, c))


if __name__ == "__main__":
    attn = Attention().cuda().bfloat16()  # the flash kernel runs fp16/bf16 only
    print(attn(torch.randn(8, 197, 768, device="cuda", dtype=torch.bfloat16)).shape)
