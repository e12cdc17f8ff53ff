"""Fine-tuning entry point: the model family picks the class from a registry."""
from dataclasses import dataclass

import torch
from transformers import AutoTokenizer, LlamaForCausalLM, MistralForCausalLM

MODEL_REGISTRY = {
    "llama": LlamaForCausalLM,
    "mistral": MistralForCausalLM,
}


@dataclass
class ModelArgs:
    family: str = "mistral"
    checkpoint: str = "mistralai/Mistral-7B-v0.1"


def load_model_and_tokenizer(family, checkpoint, attn_implementation="sdpa"):
    model_cls = MODEL_REGISTRY[family]
    model = model_cls.from_pretrained(
        checkpoint,
        torch_dtype=torch.bfloat16,
        attn_implementation=attn_implementation,
    )
    tokenizer = AutoTokenizer.from_pretrained(checkpoint)
    return model, tokenizer


def main():
    args = ModelArgs()
    model, tokenizer = load_model_and_tokenizer("mistral", args.checkpoint)
    model.train()
    return model, tokenizer


if __name__ == "__main__":
    main()
