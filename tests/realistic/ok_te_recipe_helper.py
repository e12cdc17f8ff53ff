"""Transformer Engine training step; the FP8 recipe is picked from the run config by a helper."""
from dataclasses import dataclass

import torch
import transformer_engine.pytorch as te
from transformer_engine.common import recipe


@dataclass
class TrainConfig:
    hidden_size: int = 4096
    ffn_hidden_size: int = 16384
    num_heads: int = 32
    fp8_recipe: str = "mxfp8"
    lr: float = 3e-4


def get_fp8_recipe(name: str):
    # MXFP8 runs on Blackwell datacenter parts (10.x) only; Hopper in the same job uses delayed scaling
    if name == "mxfp8" and torch.cuda.get_device_capability()[0] == 10:
        return recipe.MXFP8BlockScaling()
    if name == "current":
        return recipe.Float8CurrentScaling()
    return recipe.DelayedScaling(fp8_format=recipe.Format.HYBRID, amax_history_len=16, amax_compute_algo="max")


def train_step(model, batch, optimizer, cfg: TrainConfig):
    fp8_recipe = get_fp8_recipe(cfg.fp8_recipe)
    with te.fp8_autocast(enabled=True, fp8_recipe=fp8_recipe):
        out = model(batch)
    loss = out.float().pow(2).mean()
    loss.backward()
    optimizer.step()
    optimizer.zero_grad(set_to_none=True)
    return loss.detach()


if __name__ == "__main__":
    cfg = TrainConfig()
    model = te.TransformerLayer(cfg.hidden_size, cfg.ffn_hidden_size, cfg.num_heads).cuda()
    optimizer = torch.optim.AdamW(model.parameters(), lr=cfg.lr)
    batch = torch.randn(2048, 2, cfg.hidden_size, device="cuda")
    print(train_step(model, batch, optimizer, cfg))
