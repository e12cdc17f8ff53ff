"""Pretraining step for a Transformer Engine GPT block; FP8 only with --fp8 (needs an sm_89+ GPU)."""
import argparse

import torch
import transformer_engine.pytorch as te
from transformer_engine.common import recipe


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--hidden-size", type=int, default=4096)
    parser.add_argument("--num-heads", type=int, default=32)
    parser.add_argument("--seq-len", type=int, default=2048)
    parser.add_argument("--micro-batch", type=int, default=2)
    parser.add_argument("--steps", type=int, default=100)
    parser.add_argument("--fp8", action="store_true", help="FP8 GEMMs (Ada/Hopper/Blackwell only)")
    return parser.parse_args(argv)


def main(argv=None):
    args = parse_args(argv)
    block = te.TransformerLayer(args.hidden_size, 4 * args.hidden_size, args.num_heads, params_dtype=torch.bfloat16).cuda()
    optim = torch.optim.AdamW(block.parameters(), lr=1e-4)
    fp8_recipe = recipe.DelayedScaling(fp8_format=recipe.Format.HYBRID, amax_history_len=1024, amax_compute_algo="max")
    x = torch.randn(args.seq_len, args.micro_batch, args.hidden_size, device="cuda", dtype=torch.bfloat16)
    for step in range(args.steps):
        with te.fp8_autocast(enabled=args.fp8, fp8_recipe=fp8_recipe):
            out = block(x)
        loss = out.float().pow(2).mean()
        loss.backward()
        optim.step()
        optim.zero_grad(set_to_none=True)
        if step % 10 == 0:
            print(f"step {step} loss {loss.item():.4f}")


if __name__ == "__main__":
    main()
