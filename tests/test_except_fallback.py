"""An ``except`` handler that catches only what a missing name raises runs where a name its try
body reads is missing, as the ``else`` of ``if hasattr(...)`` does (model/guard_forms.py
handler_worlds). Found on unsloth utils/attention_dispatch.py (stop 35): the deprecated
``torch.get_autocast_gpu_dtype()`` in the fallback of ``torch.get_autocast_dtype("cuda")`` only
runs on torch < 2.4, where it is not deprecated."""
from conftest import lint

DISPATCH = '''
import torch


class AttentionDispatch:
    def __init__(self, supports_bf16: bool):
        self.supports_bf16 = supports_bf16

    def downcast_dtype(self, q):
        if torch.is_autocast_enabled():
            try:
                dtype = torch.get_autocast_dtype("cuda")
            except {caught}:
                dtype = torch.get_autocast_gpu_dtype()
        else:
            dtype = q.dtype
        if dtype not in (torch.float16, torch.bfloat16):
            dtype = torch.bfloat16 if self.supports_bf16 else torch.float16
        return dtype
'''


def aic203(code, pins):
    return [(d.line, d.message) for d in lint(code, pins=pins, select=["AIC203"])]


def test_fallback_of_a_newer_name_runs_only_where_it_is_missing():
    for caught in ("(AttributeError, TypeError)", "AttributeError"):
        assert aic203(DISPATCH.format(caught=caught), {"torch": ">=2.3"}) == []


def test_a_handler_that_catches_everything_is_still_judged():
    # except Exception may run on any release (an error of the call itself), so the deprecated
    # call it makes on torch >= 2.4 is reported
    found = aic203(DISPATCH.format(caught="Exception"), {"torch": ">=2.3"})
    assert [line for line, _ in found] == [14], found


def test_a_handler_around_names_that_exist_everywhere_is_judged():
    code = '''
import torch


def autocast_dtype(module):
    try:
        return module.compute_dtype
    except AttributeError:
        return torch.get_autocast_gpu_dtype()
'''
    assert [line for line, _ in aic203(code, {"torch": ">=2.4"})] == [9]


IMPORT_FALLBACK = '''
import torch

try:
    from torch.amp import custom_fwd

    fwd = custom_fwd(device_type="cuda", cast_inputs=torch.float32)
except ImportError:
    fwd = torch.cuda.amp.custom_fwd(cast_inputs=torch.float32)


class ScaledMatmul(torch.autograd.Function):
    @staticmethod
    @fwd
    def forward(ctx, a, b):
        return a @ b
'''


def test_import_fallback_runs_where_the_import_fails():
    # torch.amp.custom_fwd is there from 2.4.0, the release that deprecates the cuda one: the
    # handler runs on 2.0-2.3 only, where torch.cuda.amp.custom_fwd does not warn
    assert aic203(IMPORT_FALLBACK, {"torch": ">=2.0"}) == []
    # written without the probe, the deprecated form is reported on the releases that warn
    plain = IMPORT_FALLBACK.replace("try:\n    from torch.amp import custom_fwd\n\n    fwd = custom_fwd("
                                    "device_type=\"cuda\", cast_inputs=torch.float32)\nexcept ImportError:\n", "if True:\n")
    assert [line for line, _ in aic203(plain, {"torch": ">=2.0"})] == [5]


def test_unpinned_code_is_judged_on_the_newest_release_through_the_handler_too():
    # unpinned, the newest release is judged: the fallback of a name it has does not run there
    assert aic203(DISPATCH.format(caught="(AttributeError, TypeError)"), None) == []
    aliased = DISPATCH.format(caught="AttributeError").replace("import torch\n", "import torch\nimport torch as T\n", 1)
    aliased = aliased.replace('dtype = torch.get_autocast_dtype("cuda")', 'dtype = T.get_autocast_dtype("cuda")')
    assert aic203(aliased, None) == []
    # a handler that may see any error is judged there
    assert [line for line, _ in aic203(DISPATCH.format(caught="Exception"), None)] == [14]
