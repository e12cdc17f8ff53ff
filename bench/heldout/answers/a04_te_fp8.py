# request: Transformer Engine FP8 training step with DelayedScaling recipe ; fleet: H100,L40S ; pins: torch==2.3.1, transformer-engine==1.9
import torch
import transformer_engine.pytorch as te
from transformer_engine.common import recipe

CONFIG = {
    "hidden": 4096,
    "ffn": 16384,
    "batch": 8,
    "seq": 2048,
    "amax_history_len": 16,
    "amax_compute_algo": "max",
}


def build_model(cfg):
    return torch.nn.Sequential(
        te.LayerNormLinear(cfg["hidden"], cfg["ffn"]),
        te.Linear(cfg["ffn"], cfg["hidden"]),
    ).cuda()


def train_step(model, opt, x, fp8_recipe):
    with te.fp8_autocast(enabled=True, fp8_recipe=fp8_recipe):
        y = model(x)
    loss = y.float().pow(2).mean()
    loss.backward()
    opt.step()
    opt.zero_grad(set_to_none=True)
    return loss.item()


def main(cfg=CONFIG):
    fp8_recipe = recipe.DelayedScaling(
        fp8_format=recipe.Format.HYBRID,
        amax_history_len=cfg["amax_history_len"],
        amax_compute_algo=cfg["amax_compute_algo"],
    )
    model = build_model(cfg)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    x = torch.randn(cfg["seq"], cfg["batch"], cfg["hidden"], device="cuda")
    for _ in range(10):
        print(train_step(model, opt, x, fp8_recipe))


if __name__ == "__main__":
    main()
