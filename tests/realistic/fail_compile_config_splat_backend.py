"""Inference server warm-up: compile the decoder with CUDA graphs; settings from a defaults dict."""
from dataclasses import dataclass, field

import torch
from torch import nn

DEFAULTS = {
    "max_batch_size": 64,
    "dtype": "bfloat16",
    "compile": {"enabled": True, "backend": "aot_cudagraphs", "fullgraph": True},
}


@dataclass
class ServerConfig:
    max_batch_size: int = 32
    dtype: str = "float16"
    compile: dict = field(default_factory=dict)


class Decoder(nn.Module):
    def __init__(self, vocab: int = 32000, d: int = 2048):
        super().__init__()
        self.emb = nn.Embedding(vocab, d)
        self.layers = nn.ModuleList(nn.Sequential(nn.LayerNorm(d), nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d)) for _ in range(4))
        self.head = nn.Linear(d, vocab, bias=False)

    def forward(self, ids):
        h = self.emb(ids)
        for layer in self.layers:
            h = h + layer(h)
        return self.head(h)


class Engine:
    def __init__(self, cfg: ServerConfig):
        self.cfg = cfg
        model = Decoder().cuda().to(getattr(torch, cfg.dtype)).eval()
        opts = cfg.compile
        if opts.get("enabled", False):
            model = torch.compile(model, backend=opts["backend"], fullgraph=opts.get("fullgraph", False))
        self.model = model

    @torch.inference_mode()
    def warmup(self):
        for bs in (1, 8, self.cfg.max_batch_size):
            self.model(torch.zeros(bs, 128, dtype=torch.long, device="cuda"))


if __name__ == "__main__":
    Engine(ServerConfig(**DEFAULTS)).warmup()
