"""Load a causal LM for evaluation; quantization and the Hub token come from the command line."""
import argparse

from transformers import AutoModelForCausalLM, AutoTokenizer, BitsAndBytesConfig


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
    quant = BitsAndBytesConfig(load_in_8bit=True) if args.load_8bit else None
    tok, model = load(args.model, token=args.hf_token, quantization_config=quant)
