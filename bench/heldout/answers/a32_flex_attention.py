# request: sliding-window causal attention with FlexAttention block masks ; fleet: A100,H100 ; pins: torch==2.4.1
import torch
from torch.nn.attention.flex_attention import create_block_mask, flex_attention

WINDOW = 256


def sliding_window_causal(b, h, q_idx, kv_idx):
    return (q_idx >= kv_idx) & (q_idx - kv_idx <= WINDOW)


_compiled = torch.compile(flex_attention)


def swa(q, k, v):
    S = q.shape[-2]
    mask = create_block_mask(sliding_window_causal, B=None, H=None, Q_LEN=S, KV_LEN=S)
    return _compiled(q, k, v, block_mask=mask)


if __name__ == "__main__":
    q = torch.randn(2, 8, 4096, 64, device="cuda", dtype=torch.bfloat16)
    print(swa(q, q, q).shape)
