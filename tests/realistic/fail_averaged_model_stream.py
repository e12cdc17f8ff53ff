"""SWA/EMA fine-tuning of a model that overlaps its embedding gather on a side stream."""
import torch
from torch import nn
from torch.optim.swa_utils import AveragedModel, get_ema_multi_avg_fn


class OverlappedEmbeddingModel(nn.Module):
    def __init__(self, vocab: int = 50000, dim: int = 1024):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.body = nn.Sequential(nn.Linear(dim, 4 * dim), nn.GELU(), nn.Linear(4 * dim, dim))
        self.side_stream = torch.cuda.Stream()

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        with torch.cuda.stream(self.side_stream):
            h = self.embed(ids)
        torch.cuda.current_stream().wait_stream(self.side_stream)
        return self.body(h)


def finetune(steps: int = 100):
    model = OverlappedEmbeddingModel().cuda()
    ema_model = AveragedModel(model, multi_avg_fn=get_ema_multi_avg_fn(0.999))
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    for _ in range(steps):
        ids = torch.randint(0, 50000, (16, 256), device="cuda")
        loss = model(ids).pow(2).mean()
        loss.backward()
        opt.step()
        opt.zero_grad()
        ema_model.update_parameters(model)
    return ema_model


if __name__ == "__main__":
    finetune()
