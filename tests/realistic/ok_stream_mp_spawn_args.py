"""Multi-GPU evaluation: one spawned worker per GPU, sharing the run context built by the parent."""
import os

import torch
import torch.distributed as dist
import torch.multiprocessing as mp


def build_context(world_size: int) -> dict:
    return {
        "world_size": world_size,
        "batch_size": 32,
        "master_port": os.environ.get("MASTER_PORT", "29500"),
    }


def worker(rank: int, ctx: dict):
    os.environ["MASTER_ADDR"] = "127.0.0.1"
    os.environ["MASTER_PORT"] = ctx["master_port"]
    dist.init_process_group("nccl", rank=rank, world_size=ctx["world_size"])
    torch.cuda.set_device(rank)
    h2d_stream = torch.cuda.Stream()  # made in the worker: streams cannot be pickled to it
    x = torch.randn(ctx["batch_size"], 1024)
    with torch.cuda.stream(h2d_stream):
        x = x.cuda(non_blocking=True)
    dist.all_reduce(x)
    dist.destroy_process_group()


if __name__ == "__main__":
    n = torch.cuda.device_count()
    ctx = build_context(n)
    mp.spawn(worker, args=(ctx,), nprocs=n, join=True)
