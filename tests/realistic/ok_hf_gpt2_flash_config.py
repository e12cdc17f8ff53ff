"""Small-model pretraining run; settings live in one config dict."""
import torch
import transformers

CONFIG = {
    "model_name": "gpt2",
    "lr": 3e-4,
    "model_kwargs": {
        "torch_dtype": torch.float16,
        # GPT-2 has no FlashAttention 2 path before transformers 4.40
    },
}


class Trainer:
    def __init__(self, config):
        self.config = config
        self.model = transformers.GPT2LMHeadModel.from_pretrained(config["model_name"], **config["model_kwargs"])
        self.opt = torch.optim.AdamW(self.model.parameters(), lr=config["lr"])

    def step(self, batch):
        loss = self.model(**batch, labels=batch["input_ids"]).loss
        loss.backward()
        self.opt.step()
        self.opt.zero_grad()
        return loss.item()


trainer = Trainer(CONFIG)
