import torch

QUANT_CONFIGS = {
    "nvfp4": {"dtype": torch.float4_e2m1fn_x2, "block": 16, "scale_dtype": torch.float8_e4m3fn},
    "fp8": {"dtype": torch.float8_e4m3fn, "block": 0, "scale_dtype": torch.float32},
}


def quantize(x, cfg):
    rows, cols = x.shape
    if cfg["block"]:
        packed = torch.empty(rows, cols // 2, dtype=torch.uint8, device=x.device)
        scales = torch.empty(rows, cols // cfg["block"], dtype=cfg["scale_dtype"], device=x.device)
        return packed.view(cfg["dtype"]), scales
    scale = x.abs().amax().float() / torch.finfo(cfg["dtype"]).max
    return (x / scale).to(cfg["dtype"]), scale


def quantized_linear(x, w, recipe):
    cfg = QUANT_CONFIGS[recipe]
    xq, xs = quantize(x, cfg)
    wq, ws = quantize(w, cfg)
    return torch._scaled_mm(xq, wq.t(), xs, ws, out_dtype=torch.bfloat16)


x = torch.randn(128, 256, device="cuda", dtype=torch.bfloat16)
w = torch.randn(512, 256, device="cuda", dtype=torch.bfloat16)
y = quantized_linear(x, w, "nvfp4" if torch.cuda.get_device_capability() >= (10, 0) else "fp8")
