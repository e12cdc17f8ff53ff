"""AIC107 tf32-unsupported: asking for TensorFloat-32 matmuls on a GPU without TF32 (facts:
version_matrix/tf32.toml, the settings; hardware.toml [feature.tf32], the GPUs).

``torch.backends.cuda.matmul.allow_tf32 = True``, ``fp32_precision = "tf32"`` and
``torch.set_float32_matmul_precision("high")`` speed float32 matmuls up only where the GPU has
TF32 math: compute capability 8.0 and newer (torch 2.13.0 ``torch.cuda.is_tf32_supported``).
Below it the setting is accepted and does nothing: the matmuls run in full FP32. A warning, on
the fleet members where that happens, where the statement runs (a guard on
``torch.cuda.is_tf32_supported()`` or the capability keeps them out).
"""

from __future__ import annotations

import libcst as cst

from ..core.ruleapi import Example, Finding, Rule

_TRAIN = """\
import torch


def configure_precision(cfg):
    if cfg["tf32"]:
        {enable}
    torch.backends.cudnn.benchmark = True


def main():
    cfg = {{"tf32": True, "lr": 3e-4}}
    configure_precision(cfg)
    model = torch.nn.Linear(4096, 4096).cuda()
    x = torch.randn(64, 4096, device="cuda")
    return model(x)
"""
_GUARDED = """\
import torch

USE_TF32 = torch.cuda.is_tf32_supported()


class Trainer:
    def __init__(self, model):
        self.model = model
        if USE_TF32:
            torch.backends.cuda.matmul.allow_tf32 = True
        else:
            self.autocast_dtype = torch.float16
"""
_CAPABILITY = """\
import torch

major, _minor = torch.cuda.get_device_capability()
if major >= 8:
    torch.set_float32_matmul_precision("high")
"""


class Tf32Unsupported(Rule):
    code = "AIC107"
    name = "tf32-unsupported"
    tokens = (b"allow_tf32", b"fp32_precision", b"set_float32_matmul_precision")
    call_tails = frozenset({"set_float32_matmul_precision"})
    # It reports the failing worlds among those it is given: the engine can try it with every
    # world and decide the guards around an assignment only where it finds something (most
    # assignments set no TF32 flag, and deciding their guards would cost a tenth of the run).
    worlds_monotone = True

    VALID = [
        Example(_TRAIN.format(enable="torch.backends.cuda.matmul.allow_tf32 = True"), gpus=["A100", "H100"]),
        Example(_GUARDED, gpus=["T4", "A100"]),
        Example(_CAPABILITY, gpus=["T4", "L4"]),
        Example(_TRAIN.format(enable='torch.set_float32_matmul_precision("highest")'), gpus=["T4"]),
        Example(_TRAIN.format(enable="torch.backends.cuda.matmul.allow_tf32 = False"), gpus=["T4"]),
    ]
    INVALID = [
        Example(_TRAIN.format(enable="torch.backends.cuda.matmul.allow_tf32 = True"), gpus=["T4", "A100"],
                findings=[(6, 9, "torch.backends.cuda.matmul.allow_tf32 = True asks for TensorFloat-32 matmuls, "
                                 "which need compute capability 8.0+ (torch.cuda.is_tf32_supported() is False "
                                 "below it); on sm_75 (T4) float32 matmuls still run in full FP32, with no "
                                 "speed-up: guard it with torch.cuda.is_tf32_supported() and use "
                                 "torch.autocast(\"cuda\", dtype=torch.float16) there")]),
        Example(_TRAIN.format(enable='torch.set_float32_matmul_precision("high")'), gpus=["T4"],
                findings=[(6, 9, "torch.set_float32_matmul_precision(\"high\") asks for TensorFloat-32 matmuls, "
                                 "which need compute capability 8.0+ (torch.cuda.is_tf32_supported() is False "
                                 "below it); on sm_75 (T4) float32 matmuls still run in full FP32, with no "
                                 "speed-up: guard it with torch.cuda.is_tf32_supported() and use "
                                 "torch.autocast(\"cuda\", dtype=torch.float16) there")]),
        Example("import torch\n\nPRECISION = {\"matmul\": \"tf32\"}\n"
                "torch.backends.cuda.matmul.fp32_precision = PRECISION[\"matmul\"]\n", gpus=["T4", "H100"],
                findings=[(4, 1, "torch.backends.cuda.matmul.fp32_precision = 'tf32' asks for TensorFloat-32 "
                                 "matmuls, which need compute capability 8.0+ (torch.cuda.is_tf32_supported() "
                                 "is False below it); on sm_75 (T4) float32 matmuls still run in full FP32, with "
                                 "no speed-up: guard it with torch.cuda.is_tf32_supported() and use "
                                 "torch.autocast(\"cuda\", dtype=torch.float16) there")]),
    ]

    def __init__(self, matrix) -> None:
        super().__init__(matrix)
        table = matrix.files.get("tf32.toml", {})
        self.attributes = {k: e["enables"] for k, e in table.get("attribute", {}).items()}
        self.calls = {k: e["enables"] for k, e in table.get("call", {}).items()}
        self.attr_names = frozenset(k.rsplit(".", 1)[-1] for k in self.attributes)

    def check_assign(self, node: cst.Assign, fc) -> list[Finding]:
        for t in node.targets:
            if isinstance(t.target, cst.Attribute) and t.target.attr.value in self.attr_names:
                name = fc.resolve(t.target)
                if name in self.attributes:
                    return self._judge(node, node.value, self.attributes[name],
                                       lambda v: f"{name} = {v!r}", fc)
        return []

    def check_call(self, site, qualname: str, fc) -> list[Finding]:
        enables = self.calls.get(qualname)
        arg = site.arg(0, "precision") if enables is not None and not site.has_star else None
        if arg is None:
            return []
        return self._judge(site.node, arg, enables, lambda v: f'{qualname}("{v}")', fc)

    def _judge(self, node, expr, enables, shown, fc) -> list[Finding]:
        have = self.matrix.feature_archs("tf32")
        failing, said = set(), None
        for world, value in fc.eval_in(expr).items():
            if isinstance(value, (bool, str)) and any(value is e if isinstance(e, bool) else value == e
                                                      for e in enables) and world.arch not in have:
                failing.add(world.arch)
                said = value
        if not failing:
            return []
        return [Finding(node, f"{shown(said)} asks for TensorFloat-32 matmuls, which need compute capability 8.0+ "
                              "(torch.cuda.is_tf32_supported() is False below it); on "
                              f"{fc.describe(failing)} float32 matmuls still run in full FP32, with no speed-up: "
                              "guard it with torch.cuda.is_tf32_supported() and use "
                              "torch.autocast(\"cuda\", dtype=torch.float16) there",
                        frozenset(failing), severity="warning")]
