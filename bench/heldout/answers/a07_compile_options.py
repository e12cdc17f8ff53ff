# request: compile a transformer block with inductor options (coordinate descent tuning, epilogue fusion) and both mode and options ; fleet: H100 ; pins: torch==2.3.0
import torch
import torch.nn as nn

INDUCTOR_OPTS = {
    "epilogue_fusion": True,
    "max_autotune": True,
    "coordinate_descent_tuning": True,
    "triton.cudagraphs": False,
}


class Block(nn.Module):
    def __init__(self, d=1024, h=16):
        super().__init__()
        self.ln1 = nn.LayerNorm(d)
        self.attn = nn.MultiheadAttention(d, h, batch_first=True)
        self.ln2 = nn.LayerNorm(d)
        self.mlp = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(approximate="tanh"), nn.Linear(4 * d, d))

    def forward(self, x):
        y = self.ln1(x)
        x = x + self.attn(y, y, y, need_weights=False)[0]
        return x + self.mlp(self.ln2(x))


def compile_block(block, use_options=True):
    if use_options:
        return torch.compile(block, mode="max-autotune", options=INDUCTOR_OPTS)
    return torch.compile(block, mode="max-autotune")


if __name__ == "__main__":
    blk = Block().cuda()
    cb = compile_block(blk)
    x = torch.randn(8, 256, 1024, device="cuda")
    print(cb(x).shape)
