# request: mixed-precision training loop with bf16 autocast for our V100 cluster ; fleet: V100 ; pins: torch==2.0.1
import torch
import torch.nn as nn

AMP_DTYPE = torch.bfloat16


def make_model():
    return nn.Sequential(nn.Linear(1024, 4096), nn.GELU(), nn.Linear(4096, 1024)).cuda()


def train(epochs=2, steps=50, use_amp=True):
    model = make_model()
    opt = torch.optim.AdamW(model.parameters(), lr=3e-4)
    for epoch in range(epochs):
        for _ in range(steps):
            x = torch.randn(128, 1024, device="cuda")
            with torch.autocast(device_type="cuda", dtype=AMP_DTYPE, enabled=use_amp):
                loss = (model(x) - x).pow(2).mean()
            loss.backward()
            opt.step()
            opt.zero_grad(set_to_none=True)
        print(epoch, loss.item())


if __name__ == "__main__":
    train()
