"""Time one prefill step of a single DeepSeek-V3 attention layer."""
import time

import torch

from models.deepseek_v3 import DeepseekV3Attention, DeepseekV3Config


def main():
    config = DeepseekV3Config(hidden_size=2048, num_attention_heads=16, q_lora_rank=512)
    layer = DeepseekV3Attention(config, layer_idx=0).cuda().to(torch.bfloat16).eval()
    hidden = torch.randn(4, 2048, config.hidden_size, device="cuda", dtype=torch.bfloat16)
    with torch.no_grad():
        layer(hidden)
        torch.cuda.synchronize()
        start = time.perf_counter()
        out = layer(hidden)
        torch.cuda.synchronize()
    print(out.shape, f"{(time.perf_counter() - start) * 1e3:.2f} ms")


if __name__ == "__main__":
    main()
