"""Model hyper-parameters (DeepSeek-V3 attention layout)."""
from dataclasses import dataclass


@dataclass
class ModelArgs:
    dim: int = 2048
    n_heads: int = 16
    q_lora_rank: int = 0
    kv_lora_rank: int = 512
    qk_nope_head_dim: int = 128
    qk_rope_head_dim: int = 64
    v_head_dim: int = 128
    max_seq_len: int = 4096
