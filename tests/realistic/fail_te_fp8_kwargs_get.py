"""MLP block on Transformer Engine layers; FP8 is toggled per call through keyword options."""
import torch
import transformer_engine.pytorch as te
from torch import nn
from transformer_engine.common.recipe import Float8CurrentScaling


class TEMlp(nn.Module):
    def __init__(self, hidden: int, ffn: int):
        super().__init__()
        self.fc1 = te.LayerNormLinear(hidden, ffn, bias=False, params_dtype=torch.bfloat16)
        self.fc2 = te.Linear(ffn, hidden, bias=False, params_dtype=torch.bfloat16)
        self.recipe = Float8CurrentScaling()

    def forward(self, x: torch.Tensor, **kwargs) -> torch.Tensor:
        use_fp8 = kwargs.get("fp8", True)
        with te.fp8_autocast(enabled=use_fp8, fp8_recipe=self.recipe):
            h = self.fc1(x)
            h = torch.nn.functional.gelu(h, approximate="tanh")
            return self.fc2(h)


def train_step(mlp: TEMlp, x: torch.Tensor, optim: torch.optim.Optimizer) -> float:
    loss = mlp(x).float().square().mean()
    loss.backward()
    optim.step()
    optim.zero_grad()
    return loss.item()


if __name__ == "__main__":
    mlp = TEMlp(2048, 8192).cuda()
    opt = torch.optim.SGD(mlp.parameters(), lr=1e-3)
    x = torch.randn(4096, 2048, device="cuda", dtype=torch.bfloat16)
    print(train_step(mlp, x, opt))
