# request: Multi-head latent attention (MLA) layer using flash-attn with a 128-dim QK and 64-dim V head ; fleet: A100,H100 ; pins: torch==2.4.0, flash-attn==2.6.3
import torch
import torch.nn as nn
from flash_attn import flash_attn_func


class MLAConfig:
    d_model = 2048
    n_heads = 16
    kv_lora_rank = 512
    qk_head_dim = 128
    v_head_dim = 64
    dropout = 0.0


class MultiHeadLatentAttention(nn.Module):
    def __init__(self, cfg=MLAConfig()):
        super().__init__()
        self.cfg = cfg
        self.q_proj = nn.Linear(cfg.d_model, cfg.n_heads * cfg.qk_head_dim, bias=False)
        self.kv_down = nn.Linear(cfg.d_model, cfg.kv_lora_rank, bias=False)
        self.k_up = nn.Linear(cfg.kv_lora_rank, cfg.n_heads * cfg.qk_head_dim, bias=False)
        self.v_up = nn.Linear(cfg.kv_lora_rank, cfg.n_heads * cfg.v_head_dim, bias=False)
        self.o_proj = nn.Linear(cfg.n_heads * cfg.v_head_dim, cfg.d_model, bias=False)

    def forward(self, x, causal=True):
        b, s, _ = x.shape
        h = self.cfg.n_heads
        q = self.q_proj(x).view(b, s, h, self.cfg.qk_head_dim)
        c = self.kv_down(x)
        k = self.k_up(c).view(b, s, h, self.cfg.qk_head_dim)
        v = self.v_up(c).view(b, s, h, self.cfg.v_head_dim)
        out = flash_attn_func(q, k, v, dropout_p=self.cfg.dropout, causal=causal)
        return self.o_proj(out.reshape(b, s, h * self.cfg.v_head_dim))


if __name__ == "__main__":
    m = MultiHeadLatentAttention().cuda().half()
    x = torch.randn(2, 1024, 2048, device="cuda", dtype=torch.float16)
    print(m(x).shape)
