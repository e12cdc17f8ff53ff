"""AIC203 on deprecated callables used as bare decorators (issue 27 item 4):
``@torch.cuda.amp.custom_fwd`` runs ``custom_fwd(forward)``, which warns as
the called form does; each failing module has its fixed twin."""
from conftest import lint

AUTOGRAD = '''\
import torch
from torch.cuda.amp import custom_bwd


class ScaledMatmul(torch.autograd.Function):
    @staticmethod
    @torch.cuda.amp.custom_fwd
    def forward(ctx, a, b, scale):
        ctx.save_for_backward(a, b)
        ctx.scale = scale
        return (a @ b) * scale

    @staticmethod
    @custom_bwd
    def backward(ctx, grad):
        a, b = ctx.saved_tensors
        grad = grad * ctx.scale
        return grad @ b.t(), a.t() @ grad, None


def scaled_matmul(a, b, scale=1.0):
    return ScaledMatmul.apply(a, b, scale)
'''

FIXED = (AUTOGRAD.replace("from torch.cuda.amp import custom_bwd", "from torch.amp import custom_bwd")
         .replace("@torch.cuda.amp.custom_fwd", '@torch.amp.custom_fwd(device_type="cuda")')
         .replace("    @custom_bwd\n", '    @custom_bwd(device_type="cuda")\n'))


def _found(code, pins):
    return [(d.line, d.column, d.message) for d in lint(code, pins=pins, select=["AIC203"])]


def test_bare_decorators_are_reported_where_the_release_warns():
    found = _found(AUTOGRAD, {"torch": ">=2.4,<2.6"})
    assert [(line, col) for line, col, _ in found] == [(7, 6), (14, 6)]
    assert found[0][2].startswith("torch.cuda.amp.custom_fwd is deprecated since torch 2.4.0 (warns in 2.4.0–2.5.1: "
                                  '"`torch.cuda.amp.custom_fwd(args...)` is deprecated.')
    assert found[0][2].endswith('use torch.amp.custom_fwd(..., device_type="cuda")')
    assert found[1][2].startswith("torch.cuda.amp.custom_bwd is deprecated since torch 2.4.0")


def test_bare_and_called_forms_agree():
    called = AUTOGRAD.replace("@torch.cuda.amp.custom_fwd\n", "@torch.cuda.amp.custom_fwd()\n")
    assert [m for _, _, m in _found(called, {"torch": "2.4.0"})] == [m for _, _, m in _found(AUTOGRAD,
                                                                                               {"torch": "2.4.0"})]


def test_before_the_deprecation_and_the_fixed_twin_are_clean():
    assert _found(AUTOGRAD, {"torch": "2.3.1"}) == []
    assert _found(FIXED, {"torch": ">=2.4,<2.8"}) == []
