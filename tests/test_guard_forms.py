"""Guards that are not ``if`` statements: test skip markers, kernel-selection
hooks, non-NVIDIA branches, imports inside ``try`` and ``enabled=`` switches.
Each correct form is paired with a near twin that still fails and must be reported."""
import textwrap

import pytest
from conftest import lint

from aicompat.libmodels.probes import load


def failing(code, code_="AIC102", gpus=("A100", "H100"), pins=None, python="3.11", cuda=None):
    diags = lint(textwrap.dedent(code), gpus=gpus, pins=pins, python=python, cuda=cuda)
    return sorted({t for d in diags if d.code == code_ for t in d.targets if not t.startswith("torch==")})


# -- TransformerEngine's own test suite (tests/pytorch/test_sanity.py @ v2.8) -------------------
TE_HEADER = """
import pytest
import torch
import transformer_engine.pytorch as te
from transformer_engine.common import recipe
from transformer_engine.pytorch.fp8 import FP8GlobalStateManager

fp8_available, reason_for_no_fp8 = FP8GlobalStateManager.is_fp8_available()
mxfp8_available, reason_for_no_mxfp8 = FP8GlobalStateManager.is_mxfp8_available()
"""

TE_LINEAR_TEST = """
{decorator}
def test_linear_fp8(dtype):
    layer = te.Linear(256, 256, params_dtype=dtype).cuda()
    inp = torch.randn(32, 256, dtype=dtype, device="cuda", requires_grad=True)
    with te.fp8_autocast(enabled=True, fp8_recipe=recipe.{recipe}()):
        out = layer(inp)
    out.sum().backward()
"""


def te_test(decorator, recipe="DelayedScaling"):
    return TE_HEADER + TE_LINEAR_TEST.format(decorator=decorator, recipe=recipe)


def test_skipif_on_te_probe_guards_the_test():
    assert failing(te_test("@pytest.mark.skipif(not fp8_available, reason=reason_for_no_fp8)")) == []


def test_unguarded_te_test_is_reported():
    assert failing(te_test("@pytest.mark.parametrize('dtype', [torch.bfloat16])")) == ["A100"]


def test_skipif_on_the_wrong_probe_is_reported():
    # FP8 available on Hopper does not make MXFP8 (Blackwell) run there.
    code = te_test("@pytest.mark.skipif(not fp8_available, reason=reason_for_no_fp8)", "MXFP8BlockScaling")
    assert failing(code, gpus=["H100", "B200"]) == ["H100"]
    code = te_test("@pytest.mark.skipif(not mxfp8_available, reason=reason_for_no_mxfp8)", "MXFP8BlockScaling")
    assert failing(code, gpus=["H100", "B200"]) == []


def test_skipif_with_several_marks_stacked():
    code = te_test("@pytest.mark.skipif(not fp8_available, reason=reason_for_no_fp8)\n"
                   "@pytest.mark.parametrize('dtype', [torch.float32, torch.bfloat16])")
    assert failing(code) == []


NEW_STYLE = """
import pytest
import torch
import transformer_engine.pytorch as te
from transformer_engine.common import recipe

fp8_available, reason_for_no_fp8 = te.is_fp8_available(return_reason=True)
{module_mark}

class TestFP8Linear:
    @pytest.mark.parametrize("bias", [True, False])
    def test_forward(self, bias):
        layer = te.Linear(128, 128, bias=bias)
        with te.fp8_autocast(fp8_recipe=recipe.Float8CurrentScaling()):
            layer(torch.randn(16, 128, device="cuda"))


def test_backward():
    layer = te.LayerNormLinear(128, 128)
    with te.fp8_autocast(enabled=True):
        layer(torch.randn(16, 128, device="cuda")).sum().backward()
"""


@pytest.mark.parametrize("module_mark", [
    "pytestmark = pytest.mark.skipif(not fp8_available, reason=reason_for_no_fp8)",
    "pytestmark = [pytest.mark.skipif(not fp8_available, reason=reason_for_no_fp8), pytest.mark.slow]",
])
def test_module_pytestmark_guards_every_test(module_mark):
    assert failing(NEW_STYLE.format(module_mark=module_mark)) == []


def test_module_without_pytestmark_is_reported():
    diags = lint(textwrap.dedent(NEW_STYLE.format(module_mark="")), gpus=["A100", "H100"])
    assert sorted(d.line for d in diags if d.code == "AIC102") == [14, 20]


def test_pytestmark_does_not_cover_module_level_code():
    # Module code runs at collection, skipped tests or not.
    code = NEW_STYLE.format(module_mark="pytestmark = pytest.mark.skipif(not fp8_available, reason='no fp8')")
    code += "\nwith te.fp8_autocast(enabled=True):\n    WARMUP = te.Linear(16, 16)(torch.randn(16, 16))\n"
    assert failing(code) == ["A100"]


MARKER_ALIAS = """
import pytest
import torch
import transformer_engine.pytorch as te
from transformer_engine.common import recipe

mxfp8_available, reason_for_no_mxfp8 = te.is_mxfp8_available(return_reason=True)
requires_mxfp8 = pytest.mark.skipif({cond}, reason=reason_for_no_mxfp8)


@requires_mxfp8
class TestMXFP8:
    def _run(self, layer, x):
        with te.fp8_autocast(fp8_recipe=recipe.MXFP8BlockScaling()):
            return layer(x)

    def test_linear(self):
        self._run(te.Linear(64, 64), torch.randn(32, 64, device="cuda"))
"""


def test_marker_alias_on_a_class():
    assert failing(MARKER_ALIAS.format(cond="not mxfp8_available"), gpus=["H100", "B200", "RTX 5090"]) == []


def test_marker_alias_with_a_wrong_condition_is_reported():
    # MXFP8 is not supported on 12.x (quantization.py check_mxfp8_support); a major >= 10 test lets RTX 5090 in.
    code = MARKER_ALIAS.format(cond="torch.cuda.get_device_capability()[0] < 10")
    assert failing(code, gpus=["H100", "B200", "RTX 5090"]) == ["RTX 5090"]


IMPERATIVE_SKIP = """
import pytest
import torch
import transformer_engine.pytorch as te
from transformer_engine.common import recipe

fp8_available, reason_for_no_fp8 = te.is_fp8_available(return_reason=True)


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_sanity_layernorm_mlp(dtype):
    if {skip_cond}:
        pytest.skip(reason_for_no_fp8)
    block = te.LayerNormMLP(256, 1024, params_dtype=dtype)
    with te.fp8_autocast(enabled=True, fp8_recipe=recipe.DelayedScaling()):
        block(torch.randn(8, 256, device="cuda"))
"""


def test_imperative_pytest_skip_inside_the_test():
    assert failing(IMPERATIVE_SKIP.format(skip_cond="not fp8_available")) == []
    assert failing(IMPERATIVE_SKIP.format(skip_cond="fp8_available")) == ["A100"]


# -- unittest -----------------------------------------------------------------------------------
UNITTEST = """
import unittest

import torch

SM89_OR_LATER = torch.cuda.get_device_capability() >= (8, 9)


def _fp8(x):
    return x.to(torch.float8_e4m3fn)


{class_decorator}
class TestScaledMM(unittest.TestCase):
    def setUp(self):
        self.a = _fp8(torch.randn(64, 64, device="cuda"))
        self.scale = torch.tensor(1.0, device="cuda")

    {method_decorator}
    def test_scaled_mm(self):
        {body_guard}
        out = torch._scaled_mm(self.a, self.a.t(), scale_a=self.scale, scale_b=self.scale, out_dtype=torch.bfloat16)
        self.assertEqual(out.shape, (64, 64))


if __name__ == "__main__":
    unittest.main()
"""


def unittest_case(class_decorator="", method_decorator="", body_guard="pass"):
    return UNITTEST.format(class_decorator=class_decorator, method_decorator=method_decorator, body_guard=body_guard)


@pytest.mark.parametrize("kw", [
    {"method_decorator": '@unittest.skipUnless(SM89_OR_LATER, "FP8 matmul needs sm_89+")'},
    {"method_decorator": '@unittest.skipIf(not SM89_OR_LATER, "FP8 matmul needs sm_89+")'},
    {"class_decorator": '@unittest.skipIf(torch.cuda.get_device_capability() < (8, 9), "needs sm_89+")'},
    {"body_guard": 'if not SM89_OR_LATER:\n            self.skipTest("FP8 matmul needs sm_89+")'},
])
def test_unittest_skips(kw):
    assert failing(unittest_case(**kw)) == []


@pytest.mark.parametrize("kw", [
    {},
    {"method_decorator": '@unittest.skipIf(SM89_OR_LATER, "runs on old GPUs only")'},
    {"class_decorator": '@unittest.skipUnless(torch.cuda.get_device_capability() >= (8, 0), "needs Ampere")'},
    {"body_guard": 'if SM89_OR_LATER:\n            self.skipTest("inverted")'},
])
def test_unittest_skips_that_do_not_prove_fp8(kw):
    assert failing(unittest_case(**kw)) == ["A100"]


def test_bf16_probe_proves_only_ampere():
    # torch.cuda.is_bf16_supported() is true from sm_80: it does not prove FP8.
    code = unittest_case(method_decorator='@unittest.skipUnless(torch.cuda.is_bf16_supported(), "needs bf16")')
    assert failing(code, gpus=["T4", "A100", "H100"]) == ["A100", "T4"]


# -- kernel-selection hooks (vLLM kernels/scaled_mm/*.py, kernels/mixed_precision/*.py) -----------
VLLM_SCALED_MM = """
import torch

from vllm.platforms import current_platform

from .ScaledMMLinearKernel import FP8ScaledMMLinearKernel, FP8ScaledMMLinearLayerConfig


class TorchFP8ScaledMMLinearKernel(FP8ScaledMMLinearKernel):
    @classmethod
    def is_supported(cls, compute_capability: int | None = None) -> tuple[bool, str | None]:
        if not current_platform.is_cuda():
            return False, "requires CUDA."
        if compute_capability is not None and compute_capability < {min_cc}:
            return False, "requires compute capability {min_cc} and above."
        return True, None

    @classmethod
    def can_implement(cls, c: FP8ScaledMMLinearLayerConfig) -> tuple[bool, str | None]:
        if not c.weight_quant_key.scale.group_shape.is_per_tensor():
            return False, "requires per tensor weight scales."
        return True, None

    def apply_scaled_mm(self, *, A, B, out_dtype, As, Bs, bias, output_shape):
        output = torch._scaled_mm(A, B, out_dtype=out_dtype, scale_a=As, scale_b=Bs, bias=bias)
        return output.view(*output_shape)
"""


def test_is_supported_capability_gates_the_kernel_methods():
    assert failing(VLLM_SCALED_MM.format(min_cc=89)) == []


def test_is_supported_with_a_too_low_bound_is_reported():
    assert failing(VLLM_SCALED_MM.format(min_cc=80)) == ["A100"]


# vLLM 0.33 kernels/linear/scaled_mm/pytorch.py and nvfp4/pytorch.py: the check is inherited
# from a base class of the file, asks the platform (supports_fp8, is_device_capability_family),
# and returns early from inside a nested branch.
VLLM_TORCH_KERNELS = """
import torch

from vllm.platforms import current_platform

from .ScaledMMLinearKernel import FP8ScaledMMLinearKernel


def _supports_torch_fp8_scaled_mm() -> bool:
    if current_platform.is_cpu():
        return True
    if not current_platform.is_cuda_alike():
        return False
    return {platform_check}


class TorchFP8ScaledMMLinearKernel(FP8ScaledMMLinearKernel):
    @classmethod
    def is_supported(cls, compute_capability: int | None = None) -> tuple[bool, str | None]:
        if _supports_torch_fp8_scaled_mm():
            return True, None
        return False, "requires a platform with torch FP8 scaled-MM support."


class PerTensorTorchFP8ScaledMMLinearKernel(TorchFP8ScaledMMLinearKernel):
    @classmethod
    def can_implement(cls, c) -> tuple[bool, str | None]:
        return True, None

    def apply_scaled_mm(self, A, B, out_dtype, As, Bs):
        return torch._scaled_mm(A, B, out_dtype=out_dtype, scale_a=As, scale_b=Bs)


class BlockWiseTorchFP8ScaledMMLinearKernel(FP8ScaledMMLinearKernel):
    @classmethod
    def is_supported(cls, compute_capability: int | None = None) -> tuple[bool, str | None]:
        if not (current_platform.is_cuda_alike() or current_platform.is_xpu()):
            return False, "requires CUDA, ROCm or XPU."
        if current_platform.is_cuda():
            is_sm90 = (
                compute_capability == {block_cc}
                if compute_capability is not None
                else current_platform.is_device_capability({block_cc})
            )
            if not is_sm90:
                return False, "block scaling on CUDA requires compute capability 90 (Hopper)."
        return True, None

    def apply_scaled_mm(self, A, B, out_dtype, As, Bs):
        return torch._scaled_mm(A, B, out_dtype=out_dtype, scale_a=As, scale_b=Bs)
"""


def test_inherited_platform_checks_and_nested_early_returns_gate_the_kernels():
    clean = VLLM_TORCH_KERNELS.format(platform_check="current_platform.supports_fp8()", block_cc=90)
    assert failing(clean) == []
    # The twins: a check that lets the A100 in, in the base class and in the nested branch.
    assert failing(VLLM_TORCH_KERNELS.format(platform_check="True", block_cc=90)) == ["A100"]
    assert failing(VLLM_TORCH_KERNELS.format(platform_check="current_platform.supports_fp8()", block_cc=80)) \
        == ["A100"]


NVFP4 = """
import torch

from vllm.platforms import current_platform


class TorchNvFp4LinearKernel:
    @classmethod
    def is_supported(cls, compute_capability: int | None = None) -> tuple[bool, str | None]:
        if not current_platform.is_device_capability_family({family}):
            return False, "Torch NVFP4 requires sm_10x (Blackwell)"
        return True, None

    def apply_weights(self, x, w, sx, sw):
        return torch._scaled_mm(x, w, scale_a=sx, scale_b=sw, out_dtype=torch.bfloat16)
"""


def test_a_capability_family_check_gates_the_kernel():
    assert failing(NVFP4.format(family=100)) == []
    assert failing(NVFP4.format(family=80)) == ["A100"]


MACHETE_LIKE = """
import torch

from vllm.platforms import current_platform

from .MPLinearKernel import MPLinearKernel, MPLinearLayerConfig


class GroupedFP8Kernel(MPLinearKernel):
    @classmethod
    def get_min_capability(cls) -> int:
        return {min_cap}

    @classmethod
    def can_implement(cls, c: MPLinearLayerConfig) -> tuple[bool, str | None]:
        if not current_platform.is_cuda():
            return False, "only supported on CUDA"
        if not current_platform.{probe}(90):
            return False, "requires compute capability of 90 (Hopper)"
        return check_supports_shape(c.partition_weight_shape[0], c.partition_weight_shape[1])

    def apply_weights(self, layer, x, offs, bias=None):
        return torch._scaled_grouped_mm(x, layer.weight, layer.x_scale, layer.w_scale, offs=offs)
"""


def test_can_implement_with_is_device_capability():
    assert failing(MACHETE_LIKE.format(min_cap=90, probe="is_device_capability"), gpus=["H100", "RTX 5090"]) == []


def test_can_implement_with_has_device_capability_lets_blackwell_in():
    # _scaled_grouped_mm runs on 9.x and 10.x only; has_device_capability(90) is true on sm_120.
    code = MACHETE_LIKE.format(min_cap=90, probe="has_device_capability")
    assert failing(code, gpus=["A100", "H100", "RTX 5090"]) == ["RTX 5090"]


def test_get_min_capability_alone_is_not_trusted():
    # vLLM's scaled_mm registry never reads it (kernels/scaled_mm/__init__.py), and
    # ChannelWiseTorchScaledMMLinearKernel returns 94 while being selected on CUDA.
    code = """
    import torch

    class ChannelWiseTorchScaledMMLinearKernel(TorchScaledMMLinearKernel):
        @classmethod
        def get_min_capability(cls) -> int:
            return 94

        def apply_weights(self, layer, x, bias=None):
            return torch._scaled_mm(x, layer.weight, scale_a=layer.x_s, scale_b=layer.w_s, out_dtype=torch.float32)
    """
    assert failing(code, gpus=["A100", "H100"]) == ["A100"]


def test_a_stub_support_check_proves_nothing():
    # A base class saying "not supported" everywhere is overridden by subclasses: its methods stay judged.
    code = """
    import torch

    class ScaledMMKernel:
        @classmethod
        def is_supported(cls, compute_capability=None):
            return False, "abstract"

        def apply(self, a, b, sa, sb):
            return torch._scaled_mm(a, b, scale_a=sa, scale_b=sb)
    """
    assert failing(code) == ["A100"]


# -- non-NVIDIA branches ------------------------------------------------------------------------
PLATFORM_BRANCH = """
import torch
from vllm.platforms import current_platform


def is_hip() -> bool:
    return torch.version.hip is not None


_is_hip = is_hip()


def fp8_gemm(a, b, scale_a, scale_b):
    if {cond}:
        # MI300: hipBLASLt FP8
        return torch._scaled_mm(a, b, scale_a=scale_a, scale_b=scale_b, out_dtype=torch.bfloat16)
    return (a.float() * scale_a) @ (b.float() * scale_b)
"""


@pytest.mark.parametrize("cond", [
    "torch.version.hip",
    "torch.version.hip is not None",
    "_is_hip",
    "current_platform.is_rocm()",
    "torch.xpu.is_available()",
    "hasattr(torch, 'npu') and torch.npu.is_available()",
    "current_platform.is_rocm() or current_platform.is_xpu()",
])
def test_non_nvidia_branches_do_not_run_on_the_fleet(cond):
    assert failing(PLATFORM_BRANCH.format(cond=cond)) == []


@pytest.mark.parametrize("cond", [
    "torch.version.cuda",
    "not _is_hip",
    "current_platform.is_cuda()",
    "torch.version.hip is None",
    "current_platform.is_rocm() or torch.cuda.is_available()",
])
def test_nvidia_branches_are_judged(cond):
    assert failing(PLATFORM_BRANCH.format(cond=cond)) == ["A100"]


def test_rocm_kernel_class_is_never_selected_on_nvidia():
    code = """
    import torch
    from vllm.platforms import current_platform

    class ROCmFP8ScaledMMLinearKernel:
        @classmethod
        def is_supported(cls, compute_capability=None):
            if not current_platform.is_rocm():
                return False, "requires ROCm."
            return True, None

        def apply_scaled_mm(self, *, A, B, out_dtype, As, Bs, bias, output_shape):
            return torch._scaled_mm(A, B, out_dtype=out_dtype, scale_a=As, scale_b=Bs, bias=bias)
    """
    assert failing(code) == []
    assert failing(code.replace("is_rocm", "is_cuda")) == ["A100"]


# -- imports inside try ---------------------------------------------------------------------------
TRY_IMPORT = """
import torch
import torch.nn.functional as F
{head}
    from torch.nn.attention.flex_attention import flex_attention, create_block_mask

{indent}def gqa_attention(q, k, v):
{indent}    return F.scaled_dot_product_attention(q, k, v, enable_gqa=True)

{tail}
"""


def test_function_defined_after_a_guarded_import_in_try():
    # enable_gqa and flex_attention both came in torch 2.5: where the import fails, the def never runs.
    tail = "    HAS_FLEX = True\nexcept ImportError:\n    HAS_FLEX = False"
    code = TRY_IMPORT.format(head="try:", indent="    ", tail=tail)
    assert failing(code, "AIC202", pins={"torch": ">=2.3,<2.6"}) == []


def test_same_function_outside_the_try_is_reported():
    code = TRY_IMPORT.format(head="try:", indent="", tail="")
    code = code.replace("\ndef gqa", "except ImportError:\n    flex_attention = None\n\ndef gqa")
    diags = lint(textwrap.dedent(code), gpus=["A100"], pins={"torch": ">=2.3,<2.6"})
    assert [d.line for d in diags if d.code == "AIC202"] == [10]


def test_try_catching_another_exception_does_not_narrow():
    code = TRY_IMPORT.format(head="try:", indent="    ", tail="except RuntimeError:\n    pass")
    diags = lint(textwrap.dedent(code), gpus=["A100"], pins={"torch": ">=2.3,<2.6"})
    assert any(d.code == "AIC202" for d in diags)


def test_fa3_import_in_try_does_not_prove_hopper():
    # flash_attn_interface imports on any GPU; its kernels need sm_90. Still reported.
    code = """
    import torch
    try:
        from flash_attn_interface import flash_attn_func

        def attn():
            q = torch.randn(1, 128, 8, 192)
            v = torch.randn(1, 128, 8, 128)
            return flash_attn_func(q, q, v)
    except ImportError:
        attn = None
    """
    assert failing(code, "AIC101", gpus=["A100", "H100"]) == ["A100"]


# -- and/or mixing Python, torch and capability tests -----------------------------------------------
def test_and_of_python_and_torch_versions():
    code = """
    import sys
    import torch
    from packaging.version import Version

    TORCH = Version(torch.__version__)

    def maybe_compile(model):
        if sys.version_info >= (3, 12) {op} TORCH < Version("2.4"):
            return model
        return torch.compile(model)
    """
    pins = {"torch": ">=2.2,<2.6"}
    assert failing(code.replace("{op}", "and"), "AIC103", pins=pins, python="3.12") == []
    assert failing(code.replace("{op}", "or"), "AIC103", pins=pins, python="3.12") == []
    unguarded = code.replace("{op}", "and").replace("        if sys", "        if False and sys")
    assert failing(unguarded, "AIC103", pins=pins, python="3.12") == ["A100", "H100"]


def test_or_of_capability_and_torch_version():
    code = """
    import torch
    from packaging.version import Version

    def fp8_linear(x, w, sx, sw):
        if torch.cuda.get_device_capability() < (8, 9) or Version(torch.__version__) < Version("2.1"):
            return (x.float() * sx) @ (w.float() * sw).t()
        return torch._scaled_mm(x, w.t(), scale_a=sx, scale_b=sw, out_dtype=torch.bfloat16)
    """
    assert failing(code, gpus=["A100", "H100"]) == []
    assert failing(code.replace("(8, 9)", "(8, 0)"), gpus=["A100", "H100"]) == ["A100"]


# -- enabled= switches -------------------------------------------------------------------------------
def test_enabled_from_a_capability_constant():
    code = """
    import torch
    import transformer_engine.pytorch as te
    from transformer_engine.common import recipe

    FP8_OK = torch.cuda.get_device_capability() >= {cap}
    FP8_RECIPE = recipe.DelayedScaling(margin=0, amax_history_len=16)

    class Block(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.proj = te.Linear(1024, 1024)

        def forward(self, x):
            with te.fp8_autocast(enabled=FP8_OK, fp8_recipe=FP8_RECIPE):
                return self.proj(x)
    """
    assert failing(code.replace("{cap}", "(8, 9)")) == []
    assert failing(code.replace("{cap}", "(8, 0)")) == ["A100"]


def test_enabled_from_a_te_probe_unpacked():
    code = """
    import transformer_engine.pytorch as te
    from transformer_engine.pytorch.fp8 import check_fp8_support

    FP8_OK, _ = check_fp8_support()

    def step(model, batch):
        with te.fp8_autocast(enabled=FP8_OK):
            return model(batch)
    """
    assert failing(code) == []


ARGPARSE = """
import argparse

import torch
import transformer_engine.pytorch as te
from transformer_engine.common import recipe


def parse_args():
    parser = argparse.ArgumentParser()
    parser.add_argument("--lr", type=float, default=3e-4)
    {flag}
    return parser.parse_args()


def main():
    args = parse_args()
    model = te.Linear(512, 512)
    with te.fp8_autocast(enabled=args.fp8, fp8_recipe=recipe.DelayedScaling()):
        model(torch.randn(4, 512, device="cuda"))


if __name__ == "__main__":
    main()
"""


def test_enabled_from_an_off_by_default_flag():
    flag = 'parser.add_argument("--fp8", action="store_true", help="train in FP8 (needs sm_89+)")'
    assert failing(ARGPARSE.format(flag=flag)) == []


def test_enabled_from_an_on_by_default_flag_is_reported():
    flag = 'parser.add_argument("--no-fp8", dest="fp8", action="store_false")'
    assert failing(ARGPARSE.format(flag=flag)) == ["A100"]


# TransformerEngine's examples/pytorch/mnist/main.py: the switch reaches the autocast through
# the train() helper's parameter, as `train(args, model, ..., use_fp8=args.use_fp8)`.
MNIST = """
import argparse

import torch
import transformer_engine.pytorch as te


def train(model, loader, optimizer, use_fp8):
    for data, target in loader:
        optimizer.zero_grad()
        with te.autocast(enabled=use_fp8):
            output = model(data.cuda())
        torch.nn.functional.nll_loss(output, target.cuda()).backward()
        optimizer.step()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=14)
    {flag}
    args = parser.parse_args()
    model = te.Linear(784, 10)
    optimizer = torch.optim.Adadelta(model.parameters(), lr=1.0)
    loader = torch.utils.data.DataLoader(torch.load("mnist_train.pt"), batch_size=64)
    for _ in range(args.epochs):
        train(model, loader, optimizer, args.use_fp8)
"""


def test_a_switch_off_by_default_passed_through_a_helper_parameter():
    off = 'parser.add_argument("--use-fp8", action="store_true", default=False)'
    assert failing(MNIST.format(flag=off), pins={"transformer-engine": "2.8.0"}) == []
    on = 'parser.add_argument("--no-fp8", dest="use_fp8", action="store_false")'
    assert failing(MNIST.format(flag=on), pins={"transformer-engine": "2.8.0"}) == ["A100"]


KWARGS = """
import transformer_engine.pytorch as te
from transformer_engine.common import recipe


class Trainer:
    def __init__(self, model):
        self.model = model

    def train_step(self, batch, **kwargs):
        use_fp8 = kwargs.get("fp8", {kw_default})
        with te.fp8_autocast(enabled=use_fp8, fp8_recipe=recipe.Float8CurrentScaling()):
            return self.model(batch)

    def eval_step(self, batch, fp8={param_default}):
        with te.fp8_autocast(enabled=fp8):
            return self.model(batch)
"""


def test_enabled_from_kwargs_and_parameters_with_off_defaults():
    assert failing(KWARGS.format(kw_default="False", param_default="False")) == []


def test_enabled_with_on_defaults_is_reported():
    diags = lint(textwrap.dedent(KWARGS.format(kw_default="True", param_default="True")), gpus=["A100", "H100"])
    assert sorted(d.line for d in diags if d.code == "AIC102") == [12, 16]


# -- the probe data ---------------------------------------------------------------------------------
def test_probe_table_answers_per_capability():
    calls, attrs = load()
    te_fp8 = calls["transformer_engine.pytorch.is_fp8_available"]
    assert [te_fp8.answer(cap, None, [], {}) for cap in [(8, 0), (9, 0), (12, 0)]] == [False, True, True]
    assert str(te_fp8.answer((8, 9), None, [], {})) == "UNKNOWN"  # Ada: depends on cuBLASLt and CUDA
    mx = calls["transformer_engine.pytorch.fp8.check_mxfp8_support"]
    assert [mx.answer(cap, None, [], {})[0] for cap in [(9, 0), (10, 0), (12, 0)]] == [False, True, False]
    block = calls["transformer_engine.pytorch.is_fp8_block_scaling_available"]
    assert block.answer((9, 0), "12.4", [], {}) is False
    assert attrs["torch.version.hip"].answer((9, 0), None, [], {}) is None


# -- pytest.mark.parametrize rows are scenarios ---------------------------------------------------
PARAMETRIZED = """
    import pytest
    import torch
    import transformer_engine.pytorch as te
    from transformer_engine.common import recipe

    fp8_available, reason_for_no_fp8 = te.is_fp8_available(return_reason=True)
    mxfp8_available, reason_for_no_mxfp8 = te.is_mxfp8_available(return_reason=True)


    def _run(layer, x, fp8_recipe):
        use_fp8 = fp8_recipe is not None
        with te.autocast(enabled=use_fp8, recipe=fp8_recipe):
            return layer(x)


    @pytest.mark.parametrize("quantization", [None, "fp8_delayed_scaling", "mxfp8"])
    def test_linear(quantization):
        if quantization == "fp8_delayed_scaling" and not fp8_available:
            pytest.skip(reason_for_no_fp8)
        if quantization == "mxfp8" and not {mx_guard}:
            pytest.skip(reason_for_no_mxfp8)
        fp8_recipe = None
        if quantization == "fp8_delayed_scaling":
            fp8_recipe = recipe.DelayedScaling()
        elif quantization == "mxfp8":
            fp8_recipe = recipe.MXFP8BlockScaling()
        layer = te.Linear(64, 64)
        x = torch.randn(16, 64, device="cuda")
        with te.autocast(enabled=quantization is not None, recipe=fp8_recipe):
            layer(x)
        _run(layer, x, fp8_recipe)
    """


def test_each_parametrize_row_is_judged_with_its_own_skip():
    code = PARAMETRIZED.replace("{mx_guard}", "mxfp8_available")
    assert failing(code, "AIC102", gpus=["A100", "H100"], pins={"transformer-engine": "2.8.0"}) == []


def test_a_row_whose_skip_tests_the_wrong_flag_is_reported():
    # The MXFP8 row is skipped only where FP8 (not MXFP8) is missing: it runs and fails on the H100.
    code = PARAMETRIZED.replace("{mx_guard}", "fp8_available")
    got = [(d.code, d.line, d.message.split(" (")[0]) for d in lint(textwrap.dedent(code), gpus=["A100", "H100"],
                                                                      pins={"transformer-engine": "2.8.0"})
           if d.code == "AIC102"]
    assert got == [("AIC102", 13, "autocast with MXFP8BlockScaling"), ("AIC102", 30, "autocast with MXFP8BlockScaling")]


# -- layers that dispatch their forward by platform --------------------------------------------------
PLATFORM_OP = """
    import torch
    from sglang.srt.layers.utils.multi_platform import MultiPlatformOp


    class SiluAndMul({base}):
        def forward_cuda(self, x):
            d = x.shape[-1] // 2
            return torch.nn.functional.silu(x[..., :d]) * x[..., d:]

        def forward_musa(self, x):
            return torch.nn.SwishGLU()(x)  # torch_musa's module, not torch's
    """


def test_a_method_for_another_platform_never_runs_on_an_nvidia_fleet():
    def found(base):
        return [(d.code, d.line) for d in lint(textwrap.dedent(PLATFORM_OP.format(base=base)), gpus=["A100", "H100"])]

    assert found("MultiPlatformOp") == []
    # A class that does not dispatch by platform: forward_musa is an ordinary method.
    assert found("torch.nn.Module") == [("AIC201", 12)]


def test_availability_flags_in_parametrize_rows_are_read_per_gpu():
    # TransformerEngine tests/pytorch/test_recipe.py: each row carries its recipe and the flag that skips it.
    code = """
        import pytest
        import torch
        import transformer_engine.pytorch as te
        from transformer_engine.common.recipe import Float8CurrentScaling, MXFP8BlockScaling

        mxfp8_available, reason_for_no_mxfp8 = te.is_mxfp8_available(return_reason=True)
        fp8_available, reason_for_no_fp8 = te.is_fp8_available(return_reason=True)


        class TestRecipe:
            @pytest.mark.parametrize(
                "recipe_class, available, reason",
                [
                    pytest.param(MXFP8BlockScaling, {flag}, reason_for_no_mxfp8, id="mxfp8"),
                    pytest.param(Float8CurrentScaling, fp8_available, reason_for_no_fp8, id="current"),
                ],
            )
            def test_recipe(self, recipe_class, available, reason):
                if not available:
                    pytest.skip(reason)
                layer = te.Linear(32, 32).cuda()
                with te.autocast(enabled=True, recipe=recipe_class()):
                    layer(torch.randn(32, 32, device="cuda"))
        """
    assert failing(code.replace("{flag}", "mxfp8_available"), gpus=["H100", "B200"]) == []
    assert failing(code.replace("{flag}", "fp8_available"), gpus=["H100", "B200"]) == ["H100"]


SWIZZLE = """
    import pytest
    import torch
    import transformer_engine.pytorch as te
    from transformer_engine.common.recipe import MXFP8BlockScaling, NVFP4BlockScaling

    mxfp8_available, reason_for_no_mxfp8 = te.is_mxfp8_available(return_reason=True)
    nvfp4_available, reason_for_no_nvfp4 = te.is_nvfp4_available(return_reason=True)

    _RECIPES = [
        pytest.param("mxfp8", marks=pytest.mark.skipif(not {mx}, reason=reason_for_no_mxfp8)),
        pytest.param("nvfp4", marks=pytest.mark.skipif(not nvfp4_available, reason=reason_for_no_nvfp4)),
    ]
    _LAYERS = ["Linear", "LayerNormLinear", "LayerNormMLP", "GroupedLinear"]
    _SHAPES = [256, 1024, 1056]


    def _make_recipe(name):
        if name == "mxfp8":
            return MXFP8BlockScaling()
        return NVFP4BlockScaling(disable_stochastic_rounding=True)


    def _step(module, x, recipe):
        with te.autocast(enabled=True, recipe=recipe):
            return module(x)


    @pytest.mark.parametrize("layer_type", _LAYERS)
    @pytest.mark.parametrize("recipe_name", _RECIPES)
    @pytest.mark.parametrize("features", _SHAPES)
    @pytest.mark.parametrize("microbatches", [1, 2, 4, 8, 16, 32])
    def test_caching(layer_type, recipe_name, features, microbatches):
        module = te.Linear(features, features).cuda()
        _step(module, torch.randn(8, features, device="cuda"), _make_recipe(recipe_name))


    @pytest.mark.skipif(not nvfp4_available, reason=reason_for_no_nvfp4)
    def test_nvfp4_only():
        module = te.Linear(64, 64).cuda()
        _step(module, torch.randn(8, 64, device="cuda"), NVFP4BlockScaling())
    """


def test_rows_skipped_by_their_own_marks_and_callers_skipped_by_theirs():
    # TransformerEngine tests/pytorch/test_weight_swizzle_in_layers.py: the rows' skip marks and
    # a test's skipif decorator reach the helper the tests call; the table product (4*2*3*6 rows)
    # is over the bound, so the small tables and the one with row marks are kept.
    assert failing(SWIZZLE.replace("{mx}", "mxfp8_available"), gpus=["H100", "B200"]) == []
    assert failing(SWIZZLE.replace("{mx}", "nvfp4_available"), gpus=["H100", "B200"]) == []
    assert failing(SWIZZLE.replace("{mx}", "True"), gpus=["H100", "B200"]) == ["H100"]


def test_a_helper_called_only_from_a_skipped_test_class():
    # TransformerEngine tests/pytorch/attention/test_linear_mxfp8_attention.py
    code = """
        import pytest
        import torch
        import transformer_engine.pytorch as te
        from transformer_engine.common.recipe import MXFP8BlockScaling

        mxfp8_available, reason_for_no_mxfp8 = te.is_mxfp8_available(return_reason=True)


        def _run_forward(module, x, recipe):
            with te.fp8_autocast(enabled=True, fp8_recipe=recipe):
                return module(x)


        {mark}
        class TestLinearMXFP8:
            def test_accuracy(self):
                module = te.Linear(64, 64).cuda()
                _run_forward(module, torch.randn(8, 64, device="cuda"), MXFP8BlockScaling())
        """
    skip = "@pytest.mark.skipif(not mxfp8_available, reason=reason_for_no_mxfp8)"
    assert failing(code.replace("{mark}", skip), gpus=["H100", "B200"]) == []
    assert failing(code.replace("{mark}", ""), gpus=["H100", "B200"]) == ["H100"]


def test_a_loop_over_a_list_filled_per_capability_never_runs_where_it_is_empty():
    # TransformerEngine tests/pytorch/distributed/test_cast_master_weights_to_fp8.py run_parallel_tests
    code = """
        import torch
        import transformer_engine.pytorch as te
        from transformer_engine.common.recipe import Float8CurrentScaling, MXFP8BlockScaling


        def _get_recipe(name):
            if name in ("fp8_cs", "fp8_cs_block_amax"):
                return Float8CurrentScaling()
            return MXFP8BlockScaling()


        def _test_cast(quantization):
            layer = te.Linear(128, 128).cuda()
            with te.autocast(enabled=quantization is not None, recipe=_get_recipe(quantization)):
                layer(torch.randn(32, 128, device="cuda"))


        def run_parallel_tests():
            quantizations = []
            if te.is_fp8_available():
                quantizations.append("fp8_cs")
            if te.is_fp8_block_scaling_available():  # also needs CUDA 12.9: unknown here, so a Union of lists
                quantizations.append("fp8_cs_block_amax")
            {mx}
            for quantization in quantizations:
                _test_cast(quantization)
        """
    guarded = "if te.is_mxfp8_available():\n                quantizations.append('mxfp8')"
    assert failing(code.replace("{mx}", guarded), gpus=["A100", "H100", "B200"]) == []
    unguarded = "quantizations.append('mxfp8')"
    assert failing(code.replace("{mx}", unguarded), gpus=["A100", "H100", "B200"]) == ["A100", "H100"]


def test_a_helper_shared_by_several_parametrized_tests_keeps_each_row():
    # TransformerEngine tests/pytorch/test_backward_override.py: _run_single_step is called by several
    # tests, each parametrized over recipes whose rows carry their own skip marks (3 tests x 3 x 8 rows).
    tests = "\n".join(f"""
        @pytest.mark.parametrize("recipe_name", _RECIPES)
        @pytest.mark.parametrize("hidden", [64, 128, 256, 512, 768, 1024, 2048, 4096])
        def test_override_{i}(recipe_name, hidden):
            module = te.Linear(hidden, hidden).cuda()
            _run_single_step(module, torch.randn(8, hidden, device="cuda"), make_recipe(recipe_name))
        """ for i in range(3))
    code = """
        import pytest
        import torch
        import transformer_engine.pytorch as te
        from transformer_engine.common.recipe import DelayedScaling, Float8CurrentScaling, MXFP8BlockScaling

        fp8_available, reason_for_no_fp8 = te.is_fp8_available(return_reason=True)
        mxfp8_available, reason_for_no_mxfp8 = te.is_mxfp8_available(return_reason=True)

        _RECIPES = [
            pytest.param("delayed", marks=pytest.mark.skipif(not fp8_available, reason=reason_for_no_fp8)),
            pytest.param("current", marks=pytest.mark.skipif(not fp8_available, reason=reason_for_no_fp8)),
            pytest.param("mxfp8", marks=pytest.mark.skipif(not {flag}, reason=reason_for_no_mxfp8)),
        ]


        def make_recipe(name):
            if name == "delayed":
                return DelayedScaling()
            if name == "current":
                return Float8CurrentScaling()
            return MXFP8BlockScaling()


        def _run_single_step(module, x, fp8_recipe):
            with te.autocast(enabled=True, recipe=fp8_recipe):
                return module(x)
        """ + tests
    assert failing(code.replace("{flag}", "mxfp8_available"), gpus=["H100", "B200"]) == []
    assert failing(code.replace("{flag}", "fp8_available"), gpus=["H100", "B200"]) == ["H100"]


# -- a test script that hands its cases to a runner under a capability flag ---------------------
# TransformerEngine tests/pytorch/debug/run_distributed.py: the FP8 cases are run by
# `_run_test_with_combinations(test_x, ...)` from `if fp8_available:` in the __main__ block.
RUNNER_SCRIPT = """
import itertools
import torch
import transformer_engine.pytorch as te
from transformer_engine.common.recipe import DelayedScaling
from transformer_engine.pytorch import is_fp8_available

fp8_available = is_fp8_available()


def _forward_backward(x, model):
    with te.autocast(enabled=True, recipe=DelayedScaling()):
        y = model(x)
    y.sum().backward()


def test_disable_fp8_gemms(fprop_fp8, dgrad_fp8, parallel_mode):
    model = te.Linear(64, 64)
    _forward_backward(torch.randn(8, 64, device="cuda"), model)


def _run_test_with_combinations(test_function, values, extra_args):
    for comb in itertools.product(values, repeat=2):
        for arg in extra_args:
            test_function(*comb, arg)


if __name__ == "__main__":
    {guard}
        _run_test_with_combinations(test_disable_fp8_gemms, [True, False], extra_args=["column", "row"])
"""


def test_cases_handed_to_a_runner_under_a_capability_flag_are_clean():
    assert failing(RUNNER_SCRIPT.replace("{guard}", "if fp8_available:")) == []


def test_cases_handed_to_a_runner_without_the_flag_are_reported():
    assert failing(RUNNER_SCRIPT.replace("{guard}", "if True:")) == ["A100"]


# -- a skip helper whose condition depends on its argument ----------------------------------------
# TransformerEngine tests/pytorch/test_fusible_ops.py: maybe_skip_quantization(quantization, ...)
# calls pytest.skip for the schemes the GPU lacks; the test then runs MXFP8.
SKIP_HELPER = """
from typing import Optional

import pytest
import torch
import transformer_engine.pytorch as te
from transformer_engine.common.recipe import MXFP8BlockScaling

fp8_available, reason_for_no_fp8 = te.is_fp8_available(return_reason=True)
mxfp8_available, reason_for_no_mxfp8 = te.is_mxfp8_available(return_reason=True)


def maybe_skip_quantization(quantization: Optional[str], *, device=None) -> None:
    if quantization is None:
        return
    if device is not None and torch.device(device).type != "cuda":
        pytest.skip("Quantization is only supported on CUDA devices")
    if quantization in ("fp8", "fp8_delayed_scaling") and not fp8_available:
        pytest.skip(reason_for_no_fp8)
    if quantization == "mxfp8" and not mxfp8_available:
        pytest.skip(reason_for_no_mxfp8)


class TestBasicOps:
    def test_situglu_mxfp8_quantization(self, device: torch.device = "cuda") -> None:
        quantization = "{scheme}"
        maybe_skip_quantization(quantization, device=device)
        layer = te.Linear(256, 256)
        x = torch.randn(32, 256, device=device)
        with te.autocast(enabled=True, recipe=MXFP8BlockScaling()):
            y = layer(x)
        y.sum().backward()
"""


def test_a_skip_helper_called_with_the_scheme_the_test_runs_is_a_guard():
    assert failing(SKIP_HELPER.replace("{scheme}", "mxfp8"), gpus=("H100", "B200")) == []


def test_a_skip_helper_called_with_another_scheme_guards_nothing_here():
    assert failing(SKIP_HELPER.replace("{scheme}", "fp8"), gpus=("H100", "B200")) == ["H100"]


# -- a backend class its project's registry creates only on another platform ---------------------
# sglang 0.5.10.post1: XPUAttentionBackend (sglang/srt/layers/attention/xpu_backend.py) is created
# by the "intel_xpu" registry entry, which server_args picks only when device == "xpu".
XPU_BACKEND = '''
import torch
from sgl_kernel.flash_attn import flash_attn_with_kvcache


class {cls}:
    def __init__(self, num_heads: int, head_dim: int):
        self.num_heads, self.head_dim = num_heads, head_dim
        self.scale = head_dim ** -0.5

    def forward_decode(self, q, k_cache, v_cache, page_table, cache_seqlens):
        return flash_attn_with_kvcache(q, k_cache, v_cache, page_table=page_table,
                                       cache_seqlens=cache_seqlens, softmax_scale=self.scale, causal=True)
'''


def _lint_at(tmp_path, rel, code, gpus):
    from aicompat import Target, lint_source
    path = tmp_path / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(code)
    diags = lint_source(code, Target(gpus=list(gpus)), path=str(path))
    return [(d.code, d.line) for d in diags]


def test_sglangs_intel_xpu_backend_never_runs_on_an_nvidia_fleet(tmp_path):
    code = XPU_BACKEND.replace("{cls}", "XPUAttentionBackend")
    assert _lint_at(tmp_path, "sglang/srt/layers/attention/xpu_backend.py", code, ("H100", "B200")) == []


def test_the_same_decode_in_another_backend_class_is_reported(tmp_path):
    # sgl-kernel's FA3 kernels exist for 8.x and 9.x only: the B200 fails
    code = XPU_BACKEND.replace("{cls}", "FlashAttentionBackend")
    assert _lint_at(tmp_path, "sglang/srt/layers/attention/xpu_backend.py", code, ("H100", "B200")) == [("AIC106", 12)]


# -- a parametrize table whose rows depend on the GPU --------------------------------------------
# TransformerEngine tests/pytorch/test_grouped_mlp.py: the MXFP8 row exists only where MXFP8 does.
GROUPED_MLP = """
from typing import Optional

import pytest
import torch
import transformer_engine.pytorch as te
from transformer_engine.common.recipe import Float8CurrentScaling, MXFP8BlockScaling

fp8_available, reason_for_no_fp8 = te.is_fp8_available(return_reason=True)
mxfp8_available, reason_for_no_mxfp8 = te.is_mxfp8_available(return_reason=True)


def make_recipe(name: Optional[str]):
    if name == "fp8_current_scaling":
        return Float8CurrentScaling()
    if name == "mxfp8":
        return MXFP8BlockScaling()
    return None


class TestGroupedMLP:
    @pytest.mark.parametrize("dtype", (torch.bfloat16, torch.float16))
    @pytest.mark.parametrize(
        "quantization",
        [None]
        + (["fp8_current_scaling"] if fp8_available else [])
        + ({mxfp8_row}),
    )
    def test_grouped_linear(self, *, dtype: torch.dtype, quantization: Optional[str]) -> None:
        recipe = make_recipe(quantization)
        layer = te.GroupedLinear(4, 128, 128, params_dtype=dtype)
        x = torch.randn(512, 128, dtype=dtype, device="cuda")

        def train_step(inp):
            with te.autocast(enabled=quantization is not None, recipe=recipe):
                out = layer(inp, [128] * 4)
            out.sum().backward()
            return out

        train_step(x)
"""


def test_a_row_the_table_has_only_where_mxfp8_is_runs_only_there():
    code = GROUPED_MLP.replace("{mxfp8_row}", '["mxfp8"] if mxfp8_available else []')
    assert failing(code, gpus=("H100", "B200")) == []


def test_a_row_the_table_always_has_is_reported_where_mxfp8_is_missing():
    code = GROUPED_MLP.replace("{mxfp8_row}", '["mxfp8"]')
    assert failing(code, gpus=("H100", "B200")) == ["H100"]


# -- a helper whose FP8 default is used only by tests that skip without FP8, while other
# tests call it with fp8=False (TransformerEngine tests/pytorch/debug/test_numerics.py @ fa33183:
# _run_forward_backward(..., fp8=True) called 10 times, some from a function nested in a test
# below its skip, run_logging_zero_numel_tensor with fp8=False) ---------------------------------
HELPER_CALLERS = """
import pytest
import torch
import transformer_engine.pytorch as te
from transformer_engine.common.recipe import DelayedScaling

fp8_available, reason_for_no_fp8 = te.is_fp8_available(return_reason=True)
FP8_RECIPE = DelayedScaling()


def _run_forward_backward(x, model, loss_scale=1.0, fp8=True):
    with te.autocast(enabled=fp8, recipe=FP8_RECIPE):
        y = model(x)
    (y.sum() * loss_scale).backward()
    return y


def test_zero_numel():
    model = te.Linear(16, 16)
    x = torch.randn(4, 16, device="cuda", requires_grad=True)
    _run_forward_backward(x[:0], model, fp8=False)
    _run_forward_backward(x, model, fp8=False)


def test_microbatching():
{skip}
    def run_microbatching_test(x):
        def init_and_warmup():
            model = te.Linear(16, 16)
            _run_forward_backward(x[:2], model, loss_scale=0.5)
            _run_forward_backward(x[2:], model, loss_scale=0.5)
            return model

        model = init_and_warmup()
        y1 = _run_forward_backward(x[:2], model, loss_scale=0.5)
        y2 = _run_forward_backward(x[2:], model, loss_scale=0.5)
        return torch.cat([y1, y2])

    run_microbatching_test(torch.randn(4, 16, device="cuda", requires_grad=True))
{more}
"""

_SKIP = "    if not fp8_available:\n        pytest.skip(reason_for_no_fp8)\n"
_MORE_TESTS = "".join(f"""

def test_scaling_{i}():
{{skip}}    _run_forward_backward(torch.randn(4, 16, device="cuda"), te.Linear(16, 16))
""" for i in range(4))


def test_helper_called_from_a_function_nested_below_the_skip():
    assert failing(HELPER_CALLERS.format(skip=_SKIP, more="")) == []
    assert failing(HELPER_CALLERS.format(skip="", more="")) == ["A100"]


def test_helper_with_many_call_sites_all_fp8_ones_below_skips():
    # 10 calls of the helper: each way it is called is judged, not its default alone.
    assert failing(HELPER_CALLERS.format(skip=_SKIP, more=_MORE_TESTS.format(skip=_SKIP))) == []
    assert failing(HELPER_CALLERS.format(skip=_SKIP, more=_MORE_TESTS.format(skip=""))) == ["A100"]


# -- an option whose default is None, tested with ``is not None``, from a parser built in
# another module of the project (TransformerEngine examples/jax/collective_gemm @ fa33183:
# common.py cgemm_parser adds --quantize-recipe with default=None; test_gemm.py runs
# autocast(enabled=args.quantize_recipe is not None, ...)) ---------------------------------------
CGEMM_COMMON = '''
import argparse


def cgemm_parser(description):
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--collective-type", type=str, default="all_gather")
    parser.add_argument("--quantize-recipe", type=str, default={default},
                        choices=["DelayedScaling", "MXFP8BlockScaling"])
    return parser
'''

CGEMM_TEST = '''
import sys

from common import cgemm_parser
from transformer_engine.jax.quantize import autocast, get_quantization_recipe


def run_gemm_tests(args, step):
    use_quantization = args.quantize_recipe is not None
    recipe = get_quantization_recipe(args.quantize_recipe) if use_quantization else None
    with autocast(enabled=use_quantization, recipe=recipe):
        return step()


if __name__ == "__main__":
    args = cgemm_parser("Collective GEMM test").parse_args()
    run_gemm_tests(args, lambda: None)
'''


@pytest.mark.parametrize("default, expected", [("None", []), ('"DelayedScaling"', [("AIC102", 11)])])
def test_option_off_unless_given_in_a_parser_of_another_module(tmp_path, default, expected):
    (tmp_path / "common.py").write_text(CGEMM_COMMON.format(default=default))
    assert _lint_at(tmp_path, "test_gemm.py", CGEMM_TEST, ("A100", "H100")) == expected


# -- TransformerEngine JAX: skips on is_scaling_mode_supported(<mode>) (tests/jax/
# test_recipe_characteristics.py @ fa33183: each test's recipe goes through two helper methods) --
JAX_RECIPES = """
import unittest

from transformer_engine.common.recipe import DelayedScaling, MXFP8BlockScaling
from transformer_engine.jax.quantize import ScalingMode, autocast, is_scaling_mode_supported
from transformer_engine.jax.sharding import MeshResource

is_fp8_supported, reason = is_scaling_mode_supported(ScalingMode.DELAYED_TENSOR_SCALING)
is_mxfp8_supported, mxfp8_reason = is_scaling_mode_supported(ScalingMode.MXFP8_1D_SCALING)


class TestFP8Functions(unittest.TestCase):
    def _test_recipe(self, quantization_recipe):
        self._test_recipe_autocast(quantization_recipe)

    def _test_recipe_autocast(self, quantization_recipe):
        with autocast(enabled=True, recipe=quantization_recipe, mesh_resource=MeshResource()):
            pass

    @unittest.skipIf(not is_fp8_supported, reason=reason)
    def test_autocast_delayed_scaling(self):
        self._test_recipe(DelayedScaling())

    @unittest.skipIf(not {mxfp8_probe}, reason=mxfp8_reason)
    def test_autocast_mxfp8_block_scaling(self):
        self._test_recipe(MXFP8BlockScaling())
"""


def test_te_jax_scaling_mode_probe_guards_each_recipe():
    assert failing(JAX_RECIPES.format(mxfp8_probe="is_mxfp8_supported"), gpus=("A100", "H100", "B200")) == []
    # the MXFP8 test skipped on the FP8 probe still runs on the H100, where MXFP8 fails
    assert failing(JAX_RECIPES.format(mxfp8_probe="is_fp8_supported"), gpus=("A100", "H100", "B200")) == ["H100"]


# -- TransformerEngine JAX's capability number (docs/features/low_precision_training/introduction/
# autocast_jax.py @ fa33183: an assert on it before the first FP8 autocast) ---------------------------
JAX_DOC = """
import jax
import jax.numpy as jnp
import transformer_engine.jax as te
from transformer_engine.common.recipe import DelayedScaling
from transformer_engine.jax.flax import DenseGeneral
from transformer_engine.jax.quantize import get_device_compute_capability

assert get_device_compute_capability() >= {minimum}, "This example requires SM89 (Ada) or newer"

recipe = DelayedScaling()
layer = DenseGeneral(features=1024)
x = jax.random.normal(jax.random.PRNGKey(0), (32, 1024), dtype=jnp.bfloat16)
with te.autocast(enabled=True, recipe=recipe):
    params = layer.init(jax.random.PRNGKey(1), x)
"""


def test_assert_on_te_jax_capability_number():
    assert failing(JAX_DOC.format(minimum=89)) == []
    assert failing(JAX_DOC.format(minimum=80)) == ["A100"]


# -- a worker handed to torch.multiprocessing.spawn by a test that skips off its GPUs (vLLM 0.33.0
# tests/kernels/test_gemm_rs_ar.py: skipif(not is_device_capability_family(100)), mp.spawn(_worker)) --
SPAWNED = """
import pytest
import torch
import torch.multiprocessing as mp

fp8_ok = torch.cuda.get_device_capability() >= (8, 9)


def _reference(x, w, scale):
    return torch._scaled_mm(x, w.t(), scale_a=scale, scale_b=scale, out_dtype=torch.bfloat16)


def _worker(rank, world_size):
    x = torch.randn(64, 64, device="cuda").to(torch.float8_e4m3fn)
    one = torch.ones((), device="cuda")
    _reference(x, x, one)


{mark}
def test_gemm_collective():
    mp.spawn(_worker, args=(2,), nprocs=2)
"""


def test_worker_spawned_by_a_skipped_test():
    assert failing(SPAWNED.format(mark="@pytest.mark.skipif(not fp8_ok, reason='FP8 needs sm_89+')")) == []
    assert failing(SPAWNED.format(mark="@pytest.mark.slow")) == ["A100"]


# -- an operator's fake implementation runs on FakeTensors while tracing, never on the GPU (vLLM
# 0.33.0 vllm/distributed/parallel_state.py: direct_register_custom_op(..., fake_impl=...)) --------
FAKE_IMPL = """
import torch
from vllm.utils.torch_utils import direct_register_custom_op


def scaled_matmul_reduce_scatter(A, B, A_scale, B_scale):
    return torch.ops.symm_mem.fused_scaled_matmul_reduce_scatter(A, B, A_scale, B_scale)


def scaled_matmul_reduce_scatter_shape(A, B, A_scale, B_scale):
    C = torch._scaled_mm(A.flatten(0, -2).contiguous(), B, A_scale, B_scale, out_dtype=torch.bfloat16)
    return C.view(*A.shape[:-1], B.shape[1])


direct_register_custom_op(
    op_name="scaled_matmul_reduce_scatter",
    op_func=scaled_matmul_reduce_scatter,
    {keyword}=scaled_matmul_reduce_scatter_shape,
)
"""


def test_a_fake_implementation_never_runs_on_the_gpu():
    assert failing(FAKE_IMPL.format(keyword="fake_impl")) == []
    # handed to the op as its real implementation, the same body runs on every GPU
    assert failing(FAKE_IMPL.format(keyword="op_func").replace(
        "    op_func=scaled_matmul_reduce_scatter,\n", "")) == ["A100"]


# -- an operator registered only on ROCm: its implementation is reachable only through
# torch.ops.vllm.<name>, which exists only where the registration ran (vLLM 0.33.0
# vllm/model_executor/kernels/linear/scaled_mm/rocm.py) ------------------------------------------
ROCM_OP = """
import torch

from vllm.platforms import current_platform
from vllm.utils.torch_utils import direct_register_custom_op


def per_tensor_w8a8_scaled_mm_impl(A, B, out_dtype, As, Bs, bias):
    if A.shape[0] <= 4 and B.shape[1] % 16 == 0:
        return torch.ops.vllm.wvSplitKQ(B.t(), A, out_dtype, As, Bs, bias)
    return torch._scaled_mm(A, B, out_dtype=out_dtype, scale_a=As, scale_b=Bs, bias=bias)


def per_tensor_w8a8_scaled_mm_fake(A, B, out_dtype, As, Bs, bias):
    return A.new_empty((*A.shape[:-1], B.shape[1]), dtype=out_dtype)


{guard}direct_register_custom_op(
    {indent}op_name="per_tensor_w8a8_scaled_mm_impl",
    {indent}op_func=per_tensor_w8a8_scaled_mm_impl,
    {indent}fake_impl=per_tensor_w8a8_scaled_mm_fake,
{indent})


class SkinnyFP8ScaledMMKernel:
    def apply(self, A, B, out_dtype, As, Bs, bias=None):
        return torch.ops.vllm.per_tensor_w8a8_scaled_mm_impl(A, B, out_dtype, As, Bs, bias)
"""


def test_an_operator_registered_only_on_rocm_never_runs_on_nvidia():
    assert failing(ROCM_OP.format(guard="if current_platform.is_rocm():\n    ", indent="    ")) == []
    # registered on every platform, the implementation's FP8 fallback runs on the A100 too
    assert failing(ROCM_OP.format(guard="", indent="")) == ["A100"]


def test_the_xpu_backend_linted_from_the_repository_root(tmp_path, monkeypatch):
    # CI lints from the project root, so the path is relative: "sglang/srt/...", no leading folder
    from aicompat import Target, lint_source
    code = XPU_BACKEND.replace("{cls}", "XPUAttentionBackend")
    monkeypatch.chdir(tmp_path)
    rel = "sglang/srt/layers/attention/xpu_backend.py"
    (tmp_path / rel).parent.mkdir(parents=True)
    (tmp_path / rel).write_text(code)
    assert lint_source(code, Target(gpus=["H100", "B200"]), path=rel) == []


# -- a skip helper of the test module with no parameter: the GPU check inside it -------------------
# The form of a blockscaled-GEMM test suite: `_skip_if_not_sm90()` called first in each test.
SKIP_IF_NOT = """
import pytest
import torch


def _skip_if_not_sm90():
    major = torch.cuda.get_device_properties(0).major
    if major < {major}:
        pytest.skip("SM90+ required for FP8 GEMM")


def _operands(m, n, k):
    a = torch.randn(m, k, device="cuda").to(torch.float8_e4m3fn)
    b = torch.randn(n, k, device="cuda").to(torch.float8_e4m3fn).t()
    return a, b


@pytest.mark.parametrize("m", [64, 128])
def test_scaled_mm_matches_bf16(m):
    _skip_if_not_sm90()
    a, b = _operands(m, 256, 128)
    one = torch.tensor(1.0, device="cuda")
    out = torch._scaled_mm(a, b, scale_a=one, scale_b=one, out_dtype=torch.bfloat16)
    assert out.shape == (m, 256)
"""


def test_a_parameterless_skip_helper_called_first_is_a_guard():
    assert failing(SKIP_IF_NOT.replace("{major}", "9")) == []


def test_a_skip_helper_that_lets_the_a100_through_guards_nothing_there():
    assert failing(SKIP_IF_NOT.replace("{major}", "8")) == ["A100"]
