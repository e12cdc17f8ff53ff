"""FP8 training of a Transformer Engine layer stack."""
import torch
import transformer_engine.pytorch as te

from .config import FP8Config, build_fp8_recipe


def make_model(hidden: int = 4096, layers: int = 4) -> torch.nn.Module:
    blocks = [te.TransformerLayer(hidden, 4 * hidden, 32, params_dtype=torch.bfloat16) for _ in range(layers)]
    return torch.nn.Sequential(*blocks).cuda()


def train_step(model, batch, optimizer, fp8_cfg: FP8Config, fp8_recipe) -> float:
    with te.fp8_autocast(enabled=fp8_cfg.enabled, fp8_recipe=fp8_recipe):
        out = model(batch)
    loss = out.float().pow(2).mean()
    loss.backward()
    optimizer.step()
    optimizer.zero_grad(set_to_none=True)
    return loss.item()


def main():
    fp8_cfg = FP8Config()
    fp8_recipe = build_fp8_recipe(fp8_cfg)
    model = make_model()
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
    for _ in range(100):
        batch = torch.randn(2048, 4, 4096, device="cuda", dtype=torch.bfloat16)
        train_step(model, batch, optimizer, fp8_cfg, fp8_recipe)


if __name__ == "__main__":
    main()
