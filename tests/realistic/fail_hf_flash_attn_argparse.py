"""Fine-tuning entry point: the attention implementation comes from the command line."""
import argparse

import torch
from transformers import AutoModelForCausalLM, AutoTokenizer


def parse_args():
    parser = argparse.ArgumentParser(description="SFT")
    parser.add_argument("--model-name", default="Qwen/Qwen2.5-1.5B")
    parser.add_argument("--attn-implementation", default="flash_attention_2",
                        choices=["eager", "sdpa", "flash_attention_2"])
    parser.add_argument("--lr", type=float, default=2e-5)
    return parser.parse_args()


def load(model_name, attn_implementation):
    tokenizer = AutoTokenizer.from_pretrained(model_name)
    model = AutoModelForCausalLM.from_pretrained(
        model_name,
        dtype=torch.bfloat16,
        attn_implementation=attn_implementation,
    )
    return tokenizer, model.to("cuda")


def main():
    args = parse_args()
    tokenizer, model = load(args.model_name, args.attn_implementation)
    batch = tokenizer(["hello world"], return_tensors="pt").to("cuda")
    return model(**batch).logits


if __name__ == "__main__":
    main()
