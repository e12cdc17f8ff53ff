# request: torch.compile a ResNet50 with max-autotune and CUDA graphs, configurable via argparse ; fleet: A100 ; pins: torch==2.2.2, torchvision==0.17.2
import argparse
import time

import torch
import torchvision


def parse():
    p = argparse.ArgumentParser()
    p.add_argument("--mode", default="max-autotune", choices=["default", "reduce-overhead", "max-autotune", "max-autotune-no-cudagraphs"])
    p.add_argument("--backend", default="inductor")
    p.add_argument("--batch", type=int, default=64)
    p.add_argument("--fullgraph", action="store_true")
    return p.parse_args()


def main():
    args = parse()
    model = torchvision.models.resnet50().cuda().eval().to(memory_format=torch.channels_last)
    compiled = torch.compile(model, backend=args.backend, mode=args.mode, fullgraph=args.fullgraph, dynamic=False)
    x = torch.randn(args.batch, 3, 224, 224, device="cuda").to(memory_format=torch.channels_last)
    with torch.inference_mode(), torch.autocast("cuda", dtype=torch.bfloat16):
        for _ in range(3):
            compiled(x)
        torch.cuda.synchronize()
        t = time.perf_counter()
        for _ in range(20):
            compiled(x)
        torch.cuda.synchronize()
    print(f"{(time.perf_counter() - t) / 20 * 1000:.2f} ms/iter")


if __name__ == "__main__":
    main()
