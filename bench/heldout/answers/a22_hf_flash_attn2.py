# request: load Llama-3-8B with flash-attention 2 for batched generation ; fleet: A100,V100 ; pins: torch==2.3.1, transformers==4.44.2, flash-attn==2.6.3
import torch
from transformers import AutoModelForCausalLM, AutoTokenizer

MODEL_ID = "meta-llama/Meta-Llama-3-8B-Instruct"


def load(model_id=MODEL_ID, attn="flash_attention_2"):
    tok = AutoTokenizer.from_pretrained(model_id)
    tok.pad_token = tok.eos_token
    tok.padding_side = "left"
    model = AutoModelForCausalLM.from_pretrained(
        model_id,
        torch_dtype=torch.bfloat16,
        attn_implementation=attn,
        device_map="auto",
    )
    return tok, model


def generate(prompts, max_new_tokens=128):
    tok, model = load()
    batch = tok(prompts, return_tensors="pt", padding=True).to(model.device)
    out = model.generate(**batch, max_new_tokens=max_new_tokens, do_sample=False)
    return tok.batch_decode(out, skip_special_tokens=True)


if __name__ == "__main__":
    for s in generate(["Explain GQA in one line.", "What is FP8?"]):
        print(s)
