# request: run Mistral-7B inference on T4 with SDPA attention in half precision ; fleet: T4 ; pins: torch==2.1.2, transformers==4.36.2
import argparse

import torch
from transformers import AutoModelForCausalLM, AutoTokenizer


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", default="mistralai/Mistral-7B-Instruct-v0.2")
    ap.add_argument("--prompt", default="Write a haiku about GPUs.")
    ap.add_argument("--attn", default="sdpa", choices=["eager", "sdpa"])
    args = ap.parse_args()

    tok = AutoTokenizer.from_pretrained(args.model)
    model = AutoModelForCausalLM.from_pretrained(
        args.model, torch_dtype=torch.float16, attn_implementation=args.attn, low_cpu_mem_usage=True
    ).to("cuda")
    ids = tok(args.prompt, return_tensors="pt").to("cuda")
    out = model.generate(**ids, max_new_tokens=64)
    print(tok.decode(out[0], skip_special_tokens=True))


if __name__ == "__main__":
    main()
