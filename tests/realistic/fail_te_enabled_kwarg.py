"""Benchmark a Transformer Engine layer with FP8 where the GPU supports it."""
import time

import torch
import transformer_engine.pytorch as te
from transformer_engine.common.recipe import DelayedScaling, Format

FP8_OK = torch.cuda.is_available() and torch.cuda.get_device_capability() >= (8, 0)
FP8_RECIPE = DelayedScaling(fp8_format=Format.HYBRID, amax_history_len=16, amax_compute_algo="max")


def bench(layer, x, iters=50):
    for _ in range(5):
        with te.fp8_autocast(enabled=FP8_OK, fp8_recipe=FP8_RECIPE):
            layer(x)
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(iters):
        with te.fp8_autocast(enabled=FP8_OK, fp8_recipe=FP8_RECIPE):
            layer(x)
    torch.cuda.synchronize()
    return (time.perf_counter() - t0) / iters


if __name__ == "__main__":
    layer = te.Linear(8192, 8192, bias=True, params_dtype=torch.bfloat16).cuda()
    x = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
    print(f"fp8={FP8_OK}: {bench(layer, x) * 1e3:.2f} ms")
