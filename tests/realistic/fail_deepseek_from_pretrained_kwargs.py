"""Load DeepSeek-V3 for evaluation with the fastest attention available."""
import torch
from transformers import AutoTokenizer, DeepseekV3ForCausalLM

MODEL_ID = "deepseek-ai/DeepSeek-V3"

model_kwargs = {
    "device_map": "auto",
    "attn_implementation": "flash_attention_3",
    "trust_remote_code": False,
}


def load():
    tokenizer = AutoTokenizer.from_pretrained(MODEL_ID)
    model = DeepseekV3ForCausalLM.from_pretrained(MODEL_ID, dtype=torch.bfloat16, **model_kwargs)
    return tokenizer, model.eval()


if __name__ == "__main__":
    tok, model = load()
    inputs = tok("The capital of France is", return_tensors="pt").to(model.device)
    print(tok.decode(model.generate(**inputs, max_new_tokens=8)[0]))
