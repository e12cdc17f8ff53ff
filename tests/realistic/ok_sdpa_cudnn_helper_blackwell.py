"""Decoder attention with cuDNN forced through a module helper; Gemma-style configs use a
head dim of 256, which cuDNN takes on Hopper in torch 2.13 but not on Blackwell."""
import torch
import torch.nn.functional as F
from torch import nn
from torch.nn.attention import SDPBackend, sdpa_kernel


class Config:
    hidden_size = 2048
    num_attention_heads = 8
    num_key_value_heads = 1
    head_dim = 256


def fused_attention():
    # cuDNN first, flash when cuDNN turns the shape down (head dim 256 on Blackwell before 2.14)
    return sdpa_kernel([SDPBackend.CUDNN_ATTENTION, SDPBackend.FLASH_ATTENTION], set_priority=True)


class DecoderAttention(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.heads = config.num_attention_heads
        self.head_dim = config.head_dim
        self.q_proj = nn.Linear(config.hidden_size, self.heads * self.head_dim, bias=False)
        self.kv_proj = nn.Linear(config.hidden_size, 2 * self.head_dim, bias=False)

    def forward(self, x):
        b, s, _ = x.shape
        q = self.q_proj(x).view(b, s, self.heads, self.head_dim).transpose(1, 2)
        k, v = self.kv_proj(x).view(b, s, 2, 1, self.head_dim).expand(b, s, 2, self.heads, self.head_dim).unbind(2)
        with fused_attention():
            return F.scaled_dot_product_attention(q, k.transpose(1, 2), v.transpose(1, 2), is_causal=True)


if __name__ == "__main__":
    attn = DecoderAttention(Config()).cuda().half()
    print(attn(torch.randn(1, 4096, 2048, device="cuda", dtype=torch.float16)).shape)
