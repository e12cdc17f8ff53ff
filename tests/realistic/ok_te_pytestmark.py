"""Numerics tests for te.Linear under FP8 against a bf16 reference."""
import pytest
import torch
import transformer_engine.pytorch as te
from transformer_engine.common.recipe import DelayedScaling, Format

pytestmark = pytest.mark.skipif(
    not torch.cuda.is_available() or torch.cuda.get_device_capability() < (8, 9),
    reason="FP8 needs compute capability 8.9 or higher",
)

SIZES = [(128, 256, 512), (1024, 1024, 1024)]


def _reference(layer: te.Linear, x: torch.Tensor) -> torch.Tensor:
    return x @ layer.weight.t() + layer.bias


@pytest.mark.parametrize("m,k,n", SIZES)
@pytest.mark.parametrize("fp8_format", [Format.E4M3, Format.HYBRID])
def test_linear_fp8_close_to_bf16(m, k, n, fp8_format):
    torch.manual_seed(0)
    layer = te.Linear(k, n, bias=True, params_dtype=torch.bfloat16).cuda()
    x = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
    recipe = DelayedScaling(fp8_format=fp8_format, amax_history_len=16)
    with te.fp8_autocast(enabled=True, fp8_recipe=recipe):
        out = layer(x)
    torch.testing.assert_close(out.float(), _reference(layer, x).float(), atol=0.25, rtol=0.125)
