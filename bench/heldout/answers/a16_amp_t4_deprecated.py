# request: AMP training with GradScaler on T4 in fp16 ; fleet: T4 ; pins: torch==2.4.0
import torch
import torch.nn as nn
from torch.cuda.amp import GradScaler, autocast


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Conv2d(3, 64, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(64, 10))

    def forward(self, x):
        return self.body(x)


def train(steps=100):
    model = Net().cuda()
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    scaler = GradScaler()
    for _ in range(steps):
        x = torch.randn(32, 3, 64, 64, device="cuda")
        y = torch.randint(0, 10, (32,), device="cuda")
        with autocast(dtype=torch.float16):
            loss = nn.functional.cross_entropy(model(x), y)
        scaler.scale(loss).backward()
        scaler.step(opt)
        scaler.update()
        opt.zero_grad()
    return loss.item()


if __name__ == "__main__":
    print(train())
