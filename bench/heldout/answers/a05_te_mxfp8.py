# request: Transformer Engine MXFP8 block-scaled training of an MLP ; fleet: H100 ; pins: torch==2.6.0, transformer-engine==2.1
import torch
import transformer_engine.pytorch as te
from transformer_engine.common.recipe import MXFP8BlockScaling, Format


class MLP(torch.nn.Module):
    def __init__(self, hidden=2048, ffn=8192):
        super().__init__()
        self.fc1 = te.Linear(hidden, ffn, bias=True)
        self.fc2 = te.Linear(ffn, hidden, bias=True)

    def forward(self, x):
        return self.fc2(torch.nn.functional.gelu(self.fc1(x)))


def run(steps=5):
    model = MLP().cuda().bfloat16()
    opt = torch.optim.SGD(model.parameters(), lr=1e-3)
    fp8_recipe = MXFP8BlockScaling(fp8_format=Format.E4M3)
    x = torch.randn(4096, 2048, device="cuda", dtype=torch.bfloat16)
    for step in range(steps):
        with te.fp8_autocast(enabled=True, fp8_recipe=fp8_recipe):
            out = model(x)
        out.sum().backward()
        opt.step()
        opt.zero_grad()
        print(step, out.float().abs().mean().item())


if __name__ == "__main__":
    run()
