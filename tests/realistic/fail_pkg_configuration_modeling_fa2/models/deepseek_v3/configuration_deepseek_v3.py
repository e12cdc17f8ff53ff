"""DeepSeek-V3 model configuration."""


class DeepseekV3Config:
    model_type = "deepseek_v3"

    def __init__(
        self,
        vocab_size: int = 129280,
        hidden_size: int = 7168,
        num_attention_heads: int = 128,
        q_lora_rank: int = 1536,
        kv_lora_rank: int = 512,
        qk_rope_head_dim: int = 64,
        v_head_dim: int = 128,
        qk_nope_head_dim: int = 128,
        attention_dropout: float = 0.0,
        rms_norm_eps: float = 1e-6,
        **kwargs,
    ):
        self.vocab_size = vocab_size
        self.hidden_size = hidden_size
        self.num_attention_heads = num_attention_heads
        self.q_lora_rank = q_lora_rank
        self.kv_lora_rank = kv_lora_rank
        self.qk_rope_head_dim = qk_rope_head_dim
        self.v_head_dim = v_head_dim
        self.qk_nope_head_dim = qk_nope_head_dim
        self.qk_head_dim = qk_nope_head_dim + qk_rope_head_dim
        self.attention_dropout = attention_dropout
        self.rms_norm_eps = rms_norm_eps
        for key, value in kwargs.items():
            setattr(self, key, value)
