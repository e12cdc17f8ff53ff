"""Load a causal LM for evaluation; quantization and the Hub token come from the command line."""
import argparse

from transformers import AutoModelForCausalLM, AutoTokenizer


def load(model_id, **load_kwargs):
    tokenizer = AutoTokenizer.from_pretrained(model_id)
    model = AutoModelForCausalLM.from_pretrained(model_id, device_map="auto", **load_kwargs)
    return tokenizer, model.eval()


def parse():
    p = argparse.ArgumentParser()
    p.add_argument("--model", default="Qwen/Qwen2.5-7B-Instruct")
    p.add_argument("--hf-token")
    p.add_argument("--load-8bit", action="store_true")
    return p.parse_args()


if __name__ == "__main__":
    args = parse()
    tok, model = load(args.model, use_auth_token=args.hf_token, load_in_8bit=args.load_8bit)
