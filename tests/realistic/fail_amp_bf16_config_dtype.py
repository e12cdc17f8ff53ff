"""Training loop whose mixed precision comes from a config dict."""
import torch
from torch import nn

PRECISIONS = {"bf16": torch.bfloat16, "fp16": torch.float16}
TRAIN_CONFIG = {"precision": "bf16", "lr": 3e-4, "steps": 100}


class Trainer:
    def __init__(self, model: nn.Module, cfg: dict):
        self.model = model
        self.cfg = cfg
        self.amp_dtype = PRECISIONS[cfg["precision"]]
        self.opt = torch.optim.AdamW(model.parameters(), lr=cfg["lr"])

    def step(self, batch: torch.Tensor) -> float:
        self.opt.zero_grad(set_to_none=True)
        with torch.autocast(device_type="cuda", dtype=self.amp_dtype):
            loss = self.model(batch).float().pow(2).mean()
        loss.backward()
        self.opt.step()
        return loss.item()


trainer = Trainer(nn.Linear(512, 512).cuda(), TRAIN_CONFIG)
for _ in range(TRAIN_CONFIG["steps"]):
    trainer.step(torch.randn(32, 512, device="cuda"))
