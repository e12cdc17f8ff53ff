"""FP8 fine-tuning with Transformer Engine: MXFP8 on Blackwell, per-tensor current scaling before it."""
import torch
import transformer_engine.pytorch as te
from transformer_engine.common import recipe

major, _ = torch.cuda.get_device_capability()
# Transformer Engine has no MXFP8 on 12.x (RTX 50xx, RTX PRO 6000)
fp8_recipe = recipe.MXFP8BlockScaling() if major in (10, 11) else recipe.Float8CurrentScaling()

model = torch.nn.Sequential(
    te.LayerNormLinear(4096, 11008, bias=False),
    te.Linear(11008, 4096, bias=False),
).cuda()
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-5)

for step in range(100):
    x = torch.randn(4096, 4096, device="cuda", dtype=torch.bfloat16)
    with te.autocast(enabled=True, recipe=fp8_recipe):
        y = model(x)
    y.float().square().mean().backward()
    optimizer.step()
    optimizer.zero_grad()
