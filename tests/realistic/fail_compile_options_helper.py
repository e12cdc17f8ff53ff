"""Inference server warm-up: compile the decoder with CUDA graphs for the decode step."""
import torch
from torch import nn

INDUCTOR_OPTIONS = {
    "triton.cudagraph": True,
    "max_autotune": True,
    "epilogue_fusion": True,
}


def compile_decoder(module: nn.Module, options: dict) -> nn.Module:
    return torch.compile(module, fullgraph=True, options=options)


class Decoder(nn.Module):
    def __init__(self, vocab: int = 32000, dim: int = 2048):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.proj = nn.Linear(dim, vocab, bias=False)

    def forward(self, tokens):
        return self.proj(self.embed(tokens))


decoder = compile_decoder(Decoder().cuda().eval(), INDUCTOR_OPTIONS)
with torch.inference_mode():
    logits = decoder(torch.zeros(8, 1, dtype=torch.long, device="cuda"))
