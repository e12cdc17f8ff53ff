"""Guard awareness: code that runs only where the capability is proven is not
flagged for the targets that fail the guard; unknown conditions prove nothing."""
import textwrap

import pytest
from conftest import lint

HDR = textwrap.dedent("""
    import sys
    import torch
    from flash_attn_interface import flash_attn_func
    q = torch.randn(1, 128, 8, 192)
    v = torch.randn(1, 128, 8, 128)
""")
FLEET = ["A100", "H100", "B200"]  # sm_80, sm_90, sm_100


def fa3_failing(body: str, gpus=FLEET, pins=None, python="3.11"):
    diags = lint(HDR + textwrap.dedent(body), gpus=gpus, pins=pins, python=python)
    return sorted({t for d in diags if d.code == "AIC101" for t in d.targets})


@pytest.mark.parametrize("body", [
    "if torch.cuda.get_device_capability()[0] == 9:\n    flash_attn_func(q, q, v)\n",
    "if torch.cuda.get_device_capability() == (9, 0):\n    flash_attn_func(q, q, v)\n",
    "major, minor = torch.cuda.get_device_capability()\nif major == 9:\n    flash_attn_func(q, q, v)\n",
    "cap = torch.cuda.get_device_capability(0)\nif cap[0] == 9 and cap[1] == 0:\n    flash_attn_func(q, q, v)\n",
    "if torch.cuda.get_device_properties(0).major == 9:\n    flash_attn_func(q, q, v)\n",
    "if (9, 0) <= torch.cuda.get_device_capability() < (10, 0):\n    flash_attn_func(q, q, v)\n",
    "def is_hopper():\n    return torch.cuda.get_device_capability()[0] == 9\n"
    "def f():\n    if is_hopper():\n        return flash_attn_func(q, q, v)\n",
    "def is_hopper():\n    major, _ = torch.cuda.get_device_capability()\n    return major == 9\n"
    "def f():\n    if not is_hopper():\n        return None\n    return flash_attn_func(q, q, v)\n",
    "def f():\n    if torch.cuda.get_device_capability()[0] != 9:\n        raise RuntimeError('Hopper only')\n"
    "    flash_attn_func(q, q, v)\n",
    "IS_HOPPER = torch.cuda.get_device_capability()[0] == 9\nif IS_HOPPER:\n    flash_attn_func(q, q, v)\n",
    "out = flash_attn_func(q, q, v) if torch.cuda.get_device_capability()[0] == 9 else None\n",
    "ok = torch.cuda.get_device_capability()[0] == 9 and flash_attn_func(q, q, v)\n",
    "def f():\n    assert torch.cuda.get_device_capability()[0] == 9\n    flash_attn_func(q, q, v)\n",
    "if torch.cuda.get_device_capability()[0] >= 10:\n    pass\nelif torch.cuda.get_device_capability()[0] == 9:\n"
    "    flash_attn_func(q, q, v)\n",
    "try:\n    flash_attn_func(q, q, v)\nexcept RuntimeError:\n    pass\n",
    "try:\n    flash_attn_func(q, q, v)\nexcept Exception:\n    pass\n",
    "try:\n    flash_attn_func(q, q, v)\nexcept (ImportError, RuntimeError):\n    pass\n",
])
def test_guard_proves_hopper(body):
    assert fa3_failing(body) == []


@pytest.mark.parametrize("body,failing", [
    ("flash_attn_func(q, q, v)\n", ["A100", "B200"]),
    # >= (9, 0) lets Blackwell in: the classic wrong guard.
    ("if torch.cuda.get_device_capability() >= (9, 0):\n    flash_attn_func(q, q, v)\n", ["B200"]),
    ("if torch.cuda.get_device_capability()[0] >= 9:\n    flash_attn_func(q, q, v)\n", ["B200"]),
    ("if torch.cuda.get_device_capability()[0] < 9:\n    pass\nelse:\n    flash_attn_func(q, q, v)\n", ["B200"]),
    # bf16 support proves only >= 8.0.
    ("if torch.cuda.is_bf16_supported():\n    flash_attn_func(q, q, v)\n", ["A100", "B200"]),
    # A runtime flag proves nothing.
    ("import os\nif os.environ.get('USE_FA3'):\n    flash_attn_func(q, q, v)\n", ["A100", "B200"]),
    # The wrong exception is caught.
    ("try:\n    flash_attn_func(q, q, v)\nexcept ImportError:\n    pass\n", ["A100", "B200"]),
    # A try around a function *definition* does not cover its later calls.
    ("try:\n    def f():\n        return flash_attn_func(q, q, v)\nexcept RuntimeError:\n    pass\n", ["A100", "B200"]),
    # The early return is in the positive branch: what follows runs off Hopper.
    ("def f():\n    if torch.cuda.get_device_capability()[0] == 9:\n        return None\n    flash_attn_func(q, q, v)\n",
     ["A100", "B200"]),
])
def test_guard_does_not_prove(body, failing):
    assert fa3_failing(body) == failing


def test_module_level_raise_guards_the_whole_module():
    body = "if torch.cuda.get_device_capability()[0] != 9:\n    raise ImportError('FA3 needs Hopper')\nflash_attn_func(q, q, v)\n"
    assert fa3_failing(body) == []


def test_sys_exit_counts_as_leaving():
    body = "if torch.cuda.get_device_capability()[0] != 9:\n    sys.exit(0)\nflash_attn_func(q, q, v)\n"
    assert fa3_failing(body) == []


def test_sys_version_info_guard():
    body = "if sys.version_info >= (3, 12):\n    flash_attn_func(q, q, v)\n"
    assert fa3_failing(body, python="3.11") == []
    assert fa3_failing(body, python="3.12") == ["A100", "B200"]


def test_torch_version_guard_with_packaging():
    body = ("from packaging import version\n"
            "if version.parse(torch.__version__) >= version.parse('2.5'):\n    flash_attn_func(q, q, v)\n")
    assert fa3_failing(body, pins={"torch": "2.4.0"}) == []
    assert fa3_failing(body, pins={"torch": "2.6.0"}) == ["A100", "B200"]
    # torch unpinned: the guard is unknown, so it proves nothing.
    assert fa3_failing(body) == ["A100", "B200"]


@pytest.mark.parametrize("version", [
    'tuple(int(x) for x in torch.__version__.split("+")[0].split(".")[:2])',
    'tuple(map(int, torch.__version__.split(".")[:2]))',
    '(int(torch.__version__.split(".")[0]), int(torch.__version__.split(".")[1]))',
])
def test_torch_version_tuple_guard(version):
    body = f"TORCH_VERSION = {version}\nif TORCH_VERSION >= (2, 5):\n    flash_attn_func(q, q, v)\n"
    assert fa3_failing(body, pins={"torch": "2.4.0"}) == []
    assert fa3_failing(body, pins={"torch": "2.6.0"}) == ["A100", "B200"]


def test_the_local_part_of_torch_version_is_unknown():
    # torch.__version__ is "2.6.0+cu124" on CUDA wheels: nothing after the release is known.
    for test in ['"cu12" in torch.__version__', 'torch.__version__.split("+")[1] == "cu124"',
                 'torch.__version__.endswith("cu124")', 'int(torch.__version__.split(".")[2]) == 0']:
        assert fa3_failing(f"if not ({test}):\n    flash_attn_func(q, q, v)\n", pins={"torch": "2.6.0"}) \
            == ["A100", "B200"], test


def test_installed_distribution_version_of_torch_is_the_release():
    body = ("from importlib.metadata import version\nfrom packaging.version import Version\n"
            "if Version(version('torch')) >= Version('2.5'):\n    flash_attn_func(q, q, v)\n")
    assert fa3_failing(body, pins={"torch": "2.4.0"}) == []
    assert fa3_failing(body, pins={"torch": "2.6.0"}) == ["A100", "B200"]
    # Another distribution's version is not torch's.
    assert fa3_failing(body.replace("version('torch')", "version('numpy')"), pins={"torch": "2.4.0"}) == ["A100", "B200"]


def test_torch_version_string_comparison_is_a_version_comparison():
    # torch.__version__ is a TorchVersion: "2.10.0" >= "2.9" holds although the strings do not compare so.
    body = "if torch.__version__ >= '2.9':\n    flash_attn_func(q, q, v)\n"
    assert fa3_failing(body, pins={"torch": "2.10.0"}) == ["A100", "B200"]
    assert fa3_failing(body, pins={"torch": "2.8.0"}) == []


FP8 = "import torch\n"


def test_hasattr_float8_guard_respects_pinned_range():
    code = FP8 + "if hasattr(torch, 'float8_e4m3fn'):\n    DT = torch.float8_e4m3fn\nelse:\n    DT = torch.float16\n"
    assert lint(code, pins={"torch": ">=2.0,<2.3"}) == []
    unguarded = FP8 + "DT = torch.float8_e4m3fn\n"
    d = lint(unguarded, pins={"torch": ">=2.0,<2.3"})
    assert [x.code for x in d] == ["AIC102"]
    assert d[0].targets == ["torch==2.0.0", "torch==2.0.1"]


def test_attributeerror_fallback_for_missing_dtype():
    code = FP8 + "try:\n    DT = torch.float8_e8m0fnu\nexcept AttributeError:\n    DT = None\n"
    assert lint(code, pins={"torch": "2.5.0"}) == []


def test_capability_tuple_guard_for_fp8():
    code = FP8 + ("def mm(a, b, s):\n    if torch.cuda.get_device_capability() < (8, 9):\n        return a.float() @ b.float()\n"
                  "    return torch._scaled_mm(a, b, scale_a=s, scale_b=s)\n")
    assert lint(code, gpus=["A100", "A10", "L4", "H100"]) == []
    bad = code.replace("< (8, 9)", "< (8, 0)")
    d = lint(bad, gpus=["A100", "A10", "L4", "H100"])
    assert d and d[0].targets == ["A100", "A10"]


def test_guarded_code_in_demo_is_clean(matrix):
    from pathlib import Path

    from aicompat import Target, lint_paths

    demo = Path(__file__).resolve().parent.parent / "fixtures" / "demo" / "guarded_ok.py"
    assert lint_paths([demo], Target(gpus=["A100", "A10", "H100", "B200", "RTX 5090"]), use_config=False) == []


def test_helper_called_only_under_a_guard_is_judged_there():
    code = FP8 + ("def fp8_mm(a, b, s):\n    return torch._scaled_mm(a, b, scale_a=s, scale_b=s)\n\n"
                  "def mm(a, b, s):\n    if torch.cuda.get_device_capability() >= (8, 9):\n        return fp8_mm(a, b, s)\n"
                  "    return a.float() @ b.float()\n")
    assert lint(code, gpus=["A100", "H100"]) == []
    # One unguarded call is enough to run it on the A100.
    d = lint(code + "y = fp8_mm(x, x, s)\n", gpus=["A100", "H100"])
    assert [x.targets for x in d] == [["A100"]]
    # Passed around as a value: it may be called anywhere.
    d = lint(code + "OPS = {'fp8': fp8_mm}\n", gpus=["A100", "H100"])
    assert [x.targets for x in d] == [["A100"]]


def test_helper_chain_narrows_transitively():
    code = FP8 + ("def inner(a, s):\n    return torch._scaled_mm(a, a, scale_a=s, scale_b=s)\n\n"
                  "def outer(a, s):\n    return inner(a, s)\n\n"
                  "if torch.cuda.get_device_capability() >= (8, 9):\n    outer(x, s)\n")
    assert lint(code, gpus=["A100", "L4"]) == []


def test_hasattr_on_symbols_table():
    code = ("import torch\nimport torch.nn.functional as F\nimport torch.nn.attention as A\n"
            "q = torch.randn(2, 8, 128, 64)\nv = torch.randn(2, 8, 128, 32)\n"
            "if hasattr(A, 'sdpa_kernel'):\n    with A.sdpa_kernel(A.SDPBackend.FLASH_ATTENTION):\n"
            "        F.scaled_dot_product_attention(q, q, v)\n")
    # sdpa_kernel arrived in torch 2.3.0: on 2.2 the branch never runs (but
    # the module import itself fails there, which AIC201 reports).
    assert [(d.code, d.line) for d in lint(code, pins={"torch": "2.2.0"})] == [("AIC201", 3)]
    assert [d.code for d in lint(code, pins={"torch": "2.4.0"})] == ["AIC101"]


FP8_QUANT = '''import torch


def _quant_fp8(x, scale):
    return (x * scale).clamp(-448.0, 448.0).to(torch.float8_e4m3fn)


class Fp8Quantizer:
    def __init__(self):
        {pick}

    def __call__(self, x, scale):
        return self.quant(x, scale)
'''


def test_compiled_only_under_a_capability_guard():
    # Triton's fp8e4nv cast is compiled only where the guard holds; elsewhere the eager
    # function runs, which casts on any GPU.
    guarded = ("if torch.cuda.get_device_capability() >= (8, 9):\n"
               "            self.quant = torch.compile(_quant_fp8, dynamic=True)\n"
               "        else:\n            self.quant = _quant_fp8")
    assert lint(FP8_QUANT.format(pick=guarded), gpus=["A100", "H100"]) == []
    unguarded = "self.quant = torch.compile(_quant_fp8, dynamic=True)"
    d = lint(FP8_QUANT.format(pick=unguarded), gpus=["A100", "H100"])
    assert [(x.code, x.line, x.targets) for x in d] == [("AIC102", 5, ["A100"])]
    # A guard that lets sm_80 in proves nothing for it.
    loose = guarded.replace("(8, 9)", "(8, 0)")
    d = lint(FP8_QUANT.format(pick=loose), gpus=["A100", "H100"])
    assert [(x.code, x.line, x.targets) for x in d] == [("AIC102", 5, ["A100"])]


def test_availability_flag_set_by_try_import_guards_its_uses():
    # The flag is True where the import succeeds and False where the except handler ran.
    code = textwrap.dedent("""
        import torch

        try:
            import torch.distributed._symmetric_memory as symm_mem

            HAS_SYMM_MEM = True
        except ImportError:
            HAS_SYMM_MEM = False


        def alloc(n, group):
            if not HAS_SYMM_MEM:
                raise RuntimeError("torch.distributed._symmetric_memory is unavailable")
            t = symm_mem.empty(n, device="cuda")
            symm_mem.rendezvous(t, group=group)
            return t


        def alloc_unchecked(n, group):
            return symm_mem.empty(n, device="cuda")
        """)
    found = [(d.code, d.line) for d in lint(code, gpus=["H100"], pins={"torch": ">=2.1"})]
    assert found == [("AIC201", 21)]


def test_a_handler_that_cannot_see_the_import_error_proves_nothing():
    code = textwrap.dedent("""
        import torch

        try:
            import torch.distributed._symmetric_memory as symm_mem

            HAS_SYMM_MEM = True
        except (KeyError, ValueError):
            HAS_SYMM_MEM = False


        def alloc(n):
            if HAS_SYMM_MEM:
                return symm_mem.empty(n, device="cuda")
        """)
    assert [(d.code, d.line) for d in lint(code, gpus=["H100"], pins={"torch": ">=2.1"})] == [("AIC201", 5)]
