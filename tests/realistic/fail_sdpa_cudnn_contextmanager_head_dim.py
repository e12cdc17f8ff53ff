"""ViT-style attention block that pins SDPA to cuDNN's fused kernel through a helper
context manager (cuDNN attention is the fastest SDPA backend on Hopper)."""
import contextlib

import torch
import torch.nn.functional as F
from torch import nn
from torch.nn.attention import SDPBackend, sdpa_kernel

VIT_HUGE = {"hidden_size": 1280, "num_attention_heads": 8, "layer_norm_eps": 1e-6}


@contextlib.contextmanager
def cudnn_attention():
    """Run the SDPA calls in the body on the cuDNN backend only."""
    with sdpa_kernel(SDPBackend.CUDNN_ATTENTION):
        yield


class Attention(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.num_heads = config["num_attention_heads"]
        self.head_dim = config["hidden_size"] // config["num_attention_heads"]
        self.qkv = nn.Linear(config["hidden_size"], 3 * config["hidden_size"])
        self.proj = nn.Linear(config["hidden_size"], config["hidden_size"])

    def forward(self, x):
        b, s, _ = x.shape
        q, k, v = self.qkv(x).view(b, s, 3, self.num_heads, self.head_dim).permute(2, 0, 3, 1, 4).unbind(0)
        with cudnn_attention():
            out = F.scaled_dot_product_attention(q, k, v)
        return self.proj(out.transpose(1, 2).reshape(b, s, -1))


if __name__ == "__main__":
    block = Attention(VIT_HUGE).cuda().to(torch.bfloat16)
    print(block(torch.randn(4, 257, 1280, device="cuda", dtype=torch.bfloat16)).shape)
