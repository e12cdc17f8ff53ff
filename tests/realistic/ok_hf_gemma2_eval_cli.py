"""Evaluate a Gemma 2 checkpoint on a prompt file."""
import argparse
import json

import torch
from transformers import AutoTokenizer, Gemma2ForCausalLM


def parse_args():
    parser = argparse.ArgumentParser(description="Gemma 2 evaluation")
    parser.add_argument("--model", default="google/gemma-2-9b-it")
    parser.add_argument("--prompts", default="prompts.jsonl")
    # Gemma 2 soft-caps its attention logits: SDPA cannot (transformers >= 5.21 refuses it)
    parser.add_argument("--attn-implementation", default="eager", choices=["eager", "flash_attention_2"])
    parser.add_argument("--max-new-tokens", type=int, default=128)
    return parser.parse_args()


def load(args):
    tokenizer = AutoTokenizer.from_pretrained(args.model)
    model = Gemma2ForCausalLM.from_pretrained(
        args.model,
        dtype=torch.bfloat16,
        device_map="cuda",
        attn_implementation=args.attn_implementation,
    )
    return tokenizer, model.eval()


def main():
    args = parse_args()
    tokenizer, model = load(args)
    with open(args.prompts) as fh:
        prompts = [json.loads(line)["prompt"] for line in fh]
    for prompt in prompts:
        ids = tokenizer(prompt, return_tensors="pt").to("cuda")
        out = model.generate(**ids, max_new_tokens=args.max_new_tokens)
        print(tokenizer.decode(out[0], skip_special_tokens=True))


if __name__ == "__main__":
    main()
