"""Reduce launch overhead of a small MLP with CUDA graphs."""
import torch

model = torch.nn.Sequential(torch.nn.Linear(256, 256), torch.nn.ReLU(), torch.nn.Linear(256, 256)).cuda()
model = torch.compile(model, mode="reduce-overhead")  # inductor + CUDA graphs

x = torch.randn(32, 256, device="cuda")
for _ in range(3):
    y = model(x)
print(y.sum().item())
