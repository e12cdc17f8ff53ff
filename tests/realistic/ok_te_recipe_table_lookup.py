"""Training config -> Transformer Engine recipe; the run config names the low-precision recipe."""
import torch
import transformer_engine.pytorch as te
from transformer_engine.common import recipe as te_recipe

RECIPES = {
    "delayed": te_recipe.DelayedScaling,
    "current": te_recipe.Float8CurrentScaling,
    "mxfp8": te_recipe.MXFP8BlockScaling,
}

RUN_CONFIG = {
    "model": {"hidden": 4096, "ffn": 14336, "heads": 32},
    "precision": {"fp8": True, "recipe": "current"},  # MXFP8 is Blackwell-only; the fleet has H100s
}


def make_recipe(precision: dict):
    return RECIPES[precision["recipe"]]()


def train(steps: int = 10):
    m = RUN_CONFIG["model"]
    prec = RUN_CONFIG["precision"]
    layer = te.TransformerLayer(m["hidden"], m["ffn"], m["heads"], params_dtype=torch.bfloat16).cuda()
    opt = torch.optim.AdamW(layer.parameters(), lr=3e-4)
    fp8_recipe = make_recipe(prec)
    x = torch.randn(4096, 1, m["hidden"], device="cuda", dtype=torch.bfloat16)
    for _ in range(steps):
        with te.fp8_autocast(enabled=prec["fp8"], fp8_recipe=fp8_recipe):
            loss = layer(x).float().pow(2).mean()
        loss.backward()
        opt.step()
        opt.zero_grad()


if __name__ == "__main__":
    train()
