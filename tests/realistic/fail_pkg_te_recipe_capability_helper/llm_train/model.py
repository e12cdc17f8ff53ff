"""Decoder stack on Transformer Engine layers, FP8 forward."""
import torch
import transformer_engine.pytorch as te

from .fp8_utils import get_fp8_recipe


class Decoder(torch.nn.Module):
    def __init__(self, hidden: int = 2048, heads: int = 16, layers: int = 8):
        super().__init__()
        self.layers = torch.nn.ModuleList(
            [te.TransformerLayer(hidden, 4 * hidden, heads, params_dtype=torch.bfloat16) for _ in range(layers)]
        )
        self.fp8_recipe = get_fp8_recipe()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        with te.fp8_autocast(enabled=True, fp8_recipe=self.fp8_recipe):
            for layer in self.layers:
                x = layer(x)
        return x
