# request: config-driven torch.compile wrapper with dynamic shapes and a fallback to eager ; fleet: L4,A100 ; pins: torch==2.0.1
import torch
import torch.nn as nn

COMPILE_CFG = {
    "enabled": True,
    "backend": "inductor",
    "mode": "reduce-overhead",
    "dynamic": True,
    "fullgraph": False,
}


def maybe_compile(model, cfg=COMPILE_CFG):
    if not cfg.get("enabled"):
        return model
    try:
        return torch.compile(model, backend=cfg["backend"], mode=cfg["mode"],
                             dynamic=cfg["dynamic"], fullgraph=cfg["fullgraph"])
    except Exception as e:
        print("compile failed, falling back to eager:", e)
        return model


if __name__ == "__main__":
    net = nn.Sequential(nn.Linear(512, 512), nn.SiLU(), nn.Linear(512, 512)).cuda()
    fast = maybe_compile(net)
    for bs in (8, 16, 24):
        print(fast(torch.randn(bs, 512, device="cuda")).shape)
