"""AIC201-AIC204 on the examples of issue 5 and the forms generated code takes:
aliases, star imports, guards, and the generated tables' provenance."""

import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from conftest import lint

from aicompat.matrix import default_matrix


def codes(diags, prefix="AIC2"):
    return [(d.code, d.line) for d in diags if d.code.startswith(prefix)]


def test_issue_examples_are_flagged_with_what_exists_instead():
    cases = [
        ("from flash_attn import flash_attn_func\nout = flash_attn_func(q, k, v, qk_headdim=128, v_headdim=64)\n",
         {"flash-attn": "2.6.3"}, "AIC202", "head dims come from the tensor shapes"),
        ("import torch.nn.functional as F\ny = F.scaled_dot_product_attention(q, k, v, enable_flash=True)\n",
         {"torch": "2.4.0"}, "AIC202", "torch.nn.attention.sdpa_kernel(SDPBackend.FLASH_ATTENTION)"),
        ("import torch\nwith torch.cuda.amp.disable_casts():\n    y = m(x)\n",
         {"torch": "2.4.0"}, "AIC201", "torch.autocast(device_type=\"cuda\", enabled=False)"),
        ("import torch\nwith torch.amp.autocast(enabled=False):\n    y = m(x)\n",
         {"torch": "2.4.0"}, "AIC202", "torch.amp.autocast(\"cuda\", ...)"),
    ]
    for code, pins, rule, instead in cases:
        diags = [d for d in lint(code, pins=pins) if d.code.startswith("AIC2")]
        assert [d.code for d in diags] == [rule], (code, [d.message for d in diags])
        assert instead in diags[0].message, diags[0].message


def test_aliases_star_imports_and_from_imports():
    sdpa = "scaled_dot_product_attention(q, k, v, enable_flash=True)\n"
    for code in (
        "import torch.nn.functional as F\nF." + sdpa,
        "from torch.nn import functional as fn\nfn." + sdpa,
        "from torch.nn.functional import scaled_dot_product_attention as sdpa_fn\nsdpa_fn(q, k, v, enable_flash=True)\n",
        "from torch.nn.functional import *\n" + sdpa,
    ):
        assert codes(lint(code, pins={"torch": "2.4.0"})) == [("AIC202", 2)], code
    code = "from torch.cuda import amp\nwith amp.disable_casts():\n    pass\n"
    assert codes(lint(code, pins={"torch": "2.4.0"})) == [("AIC201", 2)]


def test_guards_and_try_keep_version_gated_names_quiet():
    guarded = ("import torch\n"
               "if hasattr(torch.nn.attention, 'sdpa_kernel'):\n"
               "    from torch.nn.attention import sdpa_kernel\n")
    assert codes(lint(guarded, pins={"torch": ">=2.3,<2.6"})) == []
    versioned = ("import torch\nfrom packaging import version\n"
                 "if version.parse(torch.__version__) >= version.parse('2.5'):\n"
                 "    y = torch.nn.functional.scaled_dot_product_attention(q, k, v, enable_gqa=True)\n"
                 "else:\n    y = None\n")
    assert codes(lint(versioned, pins={"torch": ">=2.3,<2.7"})) == []
    unguarded = "import torch\ny = torch.nn.functional.scaled_dot_product_attention(q, k, v, enable_gqa=True)\n"
    d = [x for x in lint(unguarded, pins={"torch": ">=2.3,<2.7"}) if x.code == "AIC202"]
    assert d and d[0].targets == ["torch==2.3.0", "torch==2.3.1", "torch==2.4.0", "torch==2.4.1"]
    caught = ("try:\n    from torch.nn.attention.flex_attention import flex_attention\n"
              "except ImportError:\n    flex_attention = None\n")
    assert codes(lint(caught, pins={"torch": "2.4.0"})) == []



FLASH_ONLY = """
import torch
{guard}
def flash_only():
    from torch.nn.attention import SDPBackend, sdpa_kernel
    return sdpa_kernel(SDPBackend.FLASH_ATTENTION)
"""


def test_a_failing_import_is_reported_once_not_again_at_each_use():
    # On 2.1-2.2 the import raises, so line 6 never runs there: only the import is reported.
    d = [x for x in lint(FLASH_ONLY.format(guard=""), pins={"torch": ">=2.1,<2.4"}) if x.code == "AIC201"]
    assert [(x.line, x.column, x.message) for x in d] == [
        (5, 36, "torch.nn.attention.SDPBackend is not in torch 2.1.0–2.2.2 (added in 2.3.0); pins allow torch "
                "2.1.0–2.3.1"),
        (5, 48, "torch.nn.attention.sdpa_kernel is not in torch 2.1.0–2.2.2 (added in 2.3.0); pins allow torch "
                "2.1.0–2.3.1; before 2.3.0 use torch.backends.cuda.sdp_kernel, the name it replaces"),
    ]
    # the fix: import (and use) it only where the release has it
    guarded = FLASH_ONLY.format(guard="HAS_SDPA_KERNEL = hasattr(torch.nn, 'attention')\n").replace(
        "def flash_only():\n", "def flash_only():\n    if not HAS_SDPA_KERNEL:\n        return None\n")
    assert codes(lint(guarded, pins={"torch": ">=2.1,<2.4"}), "AIC201") == []


def test_a_use_is_still_reported_where_its_name_was_imported_fine():
    code = "import torch\nfrom torch import nn\nctx = nn.attention.sdpa_kernel\n"
    assert codes(lint(code, pins={"torch": ">=2.1,<2.4"}), "AIC201") == [("AIC201", 3)]

def test_runtime_and_numpy_style_names_are_not_flagged():
    code = ("import torch\nif torch.npu.is_available():\n    pass\n"
            "m = torch.mean(x, axis=1, keepdims=True)\ns = torch.sum(x, axis=0)\n")
    assert codes(lint(code, pins={"torch": "2.8.0"})) == []
    # A Python-defined function takes no NumPy aliases: F.softmax(x, axis=1) is a TypeError.
    assert codes(lint("import torch.nn.functional as F\nF.softmax(x, axis=1)\n", pins={"torch": "2.8.0"})) == [
        ("AIC202", 2)]


def test_unpinned_is_judged_on_the_newest_release():
    code = "import torch\ntorch.export.export_for_training(m, (x,))\n"
    d = [x for x in lint(code) if x.code == "AIC201"]  # removed in 2.11.0
    assert d and "removed in 2.11.0" in d[0].message and "unpinned" in d[0].message
    assert codes(lint(code, pins={"torch": "2.9.0"}), "AIC201") == []


def test_generated_tables_name_their_provenance():
    m = default_matrix()
    for package, count in (("torch", 28), ("flash-attn", 57)):
        api = m.api(package)
        assert len(api.releases) == count and len(api.files) == count
        assert all("sha256:" in f or " git " in f for f in api.files)
    assert [str(v) for v in m.api("torch").releases] == [str(v) for v in m.releases("torch")]


REAL = ["transformers/modeling_flash_attention_utils.py", "transformers/integrations/sdpa_attention.py",
        "transformers/integrations/flash_attention.py", "transformers/models/llama/modeling_llama.py",
        "transformers/models/mistral/modeling_mistral.py", "transformers/modeling_utils.py"]


def test_real_modules_at_their_pins_have_no_aic2_findings(tmp_path):
    """transformers 4.57.6's attention code (torch, flash-attn, transformers) at the pins it supports."""
    proc = subprocess.run([sys.executable, "-m", "pip", "download", "transformers==4.57.6", "--no-deps",
                           "--only-binary=:all:", "-q", "-d", str(tmp_path)], capture_output=True, text=True)
    wheels = list(tmp_path.glob("transformers-4.57.6-*.whl"))
    if not wheels:
        pytest.skip(f"cannot download the transformers 4.57.6 wheel: {proc.stderr.strip()[-200:]}")
    with zipfile.ZipFile(wheels[0]) as z:
        for name in REAL:
            (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
            (tmp_path / name).write_bytes(z.read(name))
    from aicompat import Target, lint_paths

    target = Target(gpus=["H100"], python="3.11",
                    pins={"torch": "2.8.0", "transformers": "4.57.6", "flash-attn": "2.8.3"})
    diags = lint_paths([str(tmp_path / "transformers")], target=target)
    found = [f"{Path(d.path).name}:{d.line} {d.code}" for d in diags if d.code.startswith("AIC2")]
    # One real finding: torch 2.8.0 warns from C++ (TORCH_WARN_DEPRECATION) on
    # `torch.get_autocast_gpu_dtype()` (flash_attention.py L54), seen at run time in 2.6.0 and 2.10.0.
    assert found == ["flash_attention.py:54 AIC203"]


PRIORITY = """
import inspect
from inspect import signature

from torch.nn.attention import SDPBackend, sdpa_kernel

BACKENDS = [SDPBackend.CUDNN_ATTENTION, SDPBackend.FLASH_ATTENTION]
{flag}

def attention_context():
    kwargs = {{}}
    if {test}:
        kwargs["set_priority"] = True
    return sdpa_kernel(BACKENDS, **kwargs)
"""


@pytest.mark.parametrize("flag, test", [
    ("", '"set_priority" in inspect.signature(sdpa_kernel).parameters'),
    ("", '"set_priority" in signature(sdpa_kernel).parameters'),
    ("", 'not "set_priority" not in inspect.signature(sdpa_kernel).parameters'),
    ('HAS_PRIORITY = "set_priority" in inspect.signature(sdpa_kernel).parameters', "HAS_PRIORITY"),
    ("SDPA_PARAMS = inspect.signature(sdpa_kernel).parameters", '"set_priority" in SDPA_PARAMS'),
])
def test_signature_parameter_guard_keeps_the_keyword_quiet(flag, test):
    code = PRIORITY.format(flag=flag, test=test)
    assert codes(lint(code, pins={"torch": ">=2.4,<2.7"}), "AIC202") == []


def test_keyword_without_the_signature_guard_is_reported():
    d = [x for x in lint(PRIORITY.format(flag="", test="True"), pins={"torch": ">=2.4,<2.7"}) if x.code == "AIC202"]
    assert [(x.line, x.column, x.message) for x in d] == [
        (14, 12, "torch.nn.attention.sdpa_kernel: keyword 'set_priority' is not accepted by torch 2.4.0–2.5.1 "
                 "(accepted in torch 2.6.0–2.15.0); pins allow torch 2.4.0–2.6.0")]


def test_signature_guard_on_another_parameter_proves_nothing():
    # "backends" is in every release's signature: the guard is true everywhere, set_priority still fails on 2.4/2.5
    code = PRIORITY.format(flag="", test='"backends" in inspect.signature(sdpa_kernel).parameters')
    assert codes(lint(code, pins={"torch": ">=2.4,<2.7"}), "AIC202") == [("AIC202", 14)]


def test_deprecated_keyword_spliced_from_a_kwargs_dict_is_reported_at_the_splat():
    # It raised StopIteration inside AIC203 (an AIC000 internal error) before.
    code = (
        "from transformers import AutoModelForCausalLM\n"
        "\n"
        'LOAD_KWARGS = {"{kw}": "auto", "device_map": "auto"}\n'
        "\n"
        "\n"
        "def load(name):\n"
        "    return AutoModelForCausalLM.from_pretrained(name, **LOAD_KWARGS)\n"
    )
    got = [(d.code, d.line, d.column, d.message, d.fix) for d in lint(code.replace("{kw}", "torch_dtype"), gpus=["H100"],
                                                                       pins={"transformers": "4.57.6"})]
    assert got == [("AIC203", 7, 57, 'from_pretrained(torch_dtype=...) is deprecated since transformers 4.56.0 '
                    '(warns in 4.57.6: "`torch_dtype` is deprecated! Use `dtype` instead!"); use dtype=...', None)]
    assert lint(code.replace("{kw}", "dtype"), gpus=["H100"], pins={"transformers": "4.57.6"}) == []


FLEX = '''import torch
from torch.nn.attention.flex_attention import flex_attention

RETURN_LSE = False


def attend(q, k, v, block_mask, scale=None):
    return flex_attention(q, k, v, block_mask=block_mask, scale=scale)


def attend_flagged(q, k, v, block_mask):
    return flex_attention(q, k, v, block_mask=block_mask, return_lse=RETURN_LSE)


def attend_with_lse(q, k, v, block_mask):
    out, lse = flex_attention(q, k, v, block_mask=block_mask, return_lse=True)
    return out, lse


def attend_positional(q, k, v):
    return flex_attention(q, k, v, None, None, None, False, True)
'''


def test_a_deprecated_overload_warns_only_for_the_calls_it_matches():
    # torch 2.12-2.15 mark one @overload of flex_attention @deprecated (return_lse: Literal[True]);
    # the implementation warns only `elif return_lse and return_aux is None` (read in the 2.13.0 source).
    # Before, the whole function was reported deprecated, also for calls that never pass return_lse.
    diags = [d for d in lint(FLEX, pins={"torch": "2.13.0"}) if d.code == "AIC203"]
    msg = ('torch.nn.attention.flex_attention.flex_attention(return_lse=True) is deprecated since torch 2.12.0 '
           '(warns in 2.13.0: "return_lse is deprecated and will be removed in v2.10. Use '
           'return_aux=AuxRequest(lse=True) instead.")')
    assert [(d.line, d.column, d.message) for d in diags] == [(16, 16, msg), (21, 12, msg)]
    # Before the overload was marked (2.11), no release in scope warns.
    assert [d for d in lint(FLEX, pins={"torch": "2.11.0"}) if d.code == "AIC203"] == []


def test_the_scanner_records_an_overload_deprecation_with_its_condition():
    from aicompat.matrixbuild.apiscan import ApiReader

    src = '''from typing import Literal, overload
from typing_extensions import deprecated


@overload
def pool(x, mode: Literal["max"] = ...) -> int: ...
@overload
@deprecated("mode='avg' is deprecated")
def pool(x, mode: Literal["avg"] = ...) -> int: ...
def pool(x, mode="max"):
    return 0


@overload
@deprecated("all of it is deprecated")
def first(x: int) -> int: ...
@overload
def first(x: str) -> str: ...
def first(x):
    return x


@overload
def spaced(x, mode: Literal["a b"]) -> int: ...
@overload
@deprecated("no")
def spaced(x, mode: Literal["c d"]) -> int: ...
def spaced(x, mode):
    return 0
'''
    r = ApiReader({"m.py": src})
    assert r.lookup("m", "pool").deprecated == "[mode='avg'] mode='avg' is deprecated"
    assert r.lookup("m", "first").deprecated == "all of it is deprecated"  # the first overload matches an omission
    assert r.lookup("m", "spaced").deprecated is None  # a condition it cannot write is not claimed for every call


GROUPED = '''import torch


def moe_gemm(x_fp8, w_fp8, x_scale, w_scale, offsets):
    if hasattr(torch, "_scaled_grouped_mm"):
        return torch._scaled_grouped_mm(x_fp8, w_fp8, x_scale, w_scale, offs=offsets, out_dtype=torch.bfloat16)
    return None


def moe_gemm_unguarded(x_fp8, w_fp8, x_scale, w_scale, offsets):
    return torch._scaled_grouped_mm(x_fp8, w_fp8, x_scale, w_scale, offs=offsets, out_dtype=torch.bfloat16)
'''


def test_an_fp8_op_before_its_first_release_is_reported_unless_guarded():
    # fp8.toml op."torch._scaled_grouped_mm".added = 2.7.0 (first stub in the 2.7.0 wheel); before,
    # AIC201 left the name to AIC102 (fp8.toml owns it) and AIC102 never read `added`.
    got = [(d.code, d.line, d.message) for d in lint(GROUPED, gpus=["H100"], pins={"torch": "2.6.0"})]
    assert got == [("AIC102", 11, "torch._scaled_grouped_mm: not in torch 2.6.0 (added in 2.7.0); AttributeError: "
                                  "module 'torch' has no attribute '_scaled_grouped_mm'")]
    assert [d for d in lint(GROUPED, gpus=["H100"], pins={"torch": "2.7.0"}) if d.code == "AIC102"] == []


_FA3_CALL = '''\
from flash_attn_interface import flash_attn_func


class MLAAttention:
    def __init__(self, causal=True):
        self.causal = causal

    def forward(self, q, k, v):
        return flash_attn_func(q, k, v, causal=self.causal, window=(-1, -1))
'''


@pytest.mark.parametrize("spec", ["3.0.0b1", "==3.0.0b1", ">=3.0.0b1,<3.1"])
def test_fa3_pin_as_its_setup_declares_reaches_the_table(spec):
    # FA3's hopper/__init__.py says 3.0.0.b1 at every tag; the table's labels are 3.0.0b1+v2.7.0...
    # A pin without a local label matches them all (PEP 440), so the check runs instead of being skipped.
    d = lint(_FA3_CALL, pins={"flash-attn-3": spec}, select=["AIC202"])
    assert [(x.line, "accepts keyword 'window'" in x.message) for x in d] == [(9, True)]
    assert lint(_FA3_CALL.replace("window=", "window_size="), pins={"flash-attn-3": spec}, select=["AIC202"]) == []
