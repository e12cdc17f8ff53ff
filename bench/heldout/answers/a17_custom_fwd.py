# request: custom autograd function for a fused scale-add that plays well with AMP ; fleet: A100 ; pins: torch==2.2.0
import torch
from torch.amp import custom_fwd, custom_bwd


class ScaleAdd(torch.autograd.Function):
    @staticmethod
    @custom_fwd(device_type="cuda", cast_inputs=torch.float32)
    def forward(ctx, x, y, alpha):
        ctx.alpha = alpha
        return x * alpha + y

    @staticmethod
    @custom_bwd(device_type="cuda")
    def backward(ctx, grad):
        return grad * ctx.alpha, grad, None


def scale_add(x, y, alpha=0.5):
    return ScaleAdd.apply(x, y, alpha)


if __name__ == "__main__":
    x = torch.randn(8, device="cuda", requires_grad=True)
    y = torch.randn(8, device="cuda", requires_grad=True)
    with torch.autocast("cuda", dtype=torch.bfloat16):
        scale_add(x, y).sum().backward()
    print(x.grad)
