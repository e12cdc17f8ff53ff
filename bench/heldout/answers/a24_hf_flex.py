# request: load Qwen2 with flex attention for a long-context experiment ; fleet: H100 ; pins: torch==2.5.1, transformers==4.46.3
import torch
from transformers import AutoModelForCausalLM

CFG = dict(model_id="Qwen/Qwen2-7B", attn_implementation="flex_attention", torch_dtype=torch.bfloat16)


def load_model(cfg=CFG):
    model = AutoModelForCausalLM.from_pretrained(
        cfg["model_id"], attn_implementation=cfg["attn_implementation"], torch_dtype=cfg["torch_dtype"]
    )
    return model.cuda().eval()


if __name__ == "__main__":
    m = load_model()
    x = torch.randint(0, 1000, (1, 8192), device="cuda")
    with torch.no_grad():
        print(m(x).logits.shape)
