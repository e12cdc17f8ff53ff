"""AIC108 bf16-unsupported: bfloat16 autocast on a GPU without native bfloat16, in the torch
releases whose autocast raises there (facts: version_matrix/bf16.toml; the GPUs: hardware.toml
[feature.bf16]).

torch 2.0-2.2's autocast constructor raises "Current CUDA Device does not support bfloat16" on
CUDA with dtype=torch.bfloat16 when ``torch.cuda.is_bf16_supported()`` is False, which those
releases decide from the compute capability alone (major >= 8). From 2.3 that probe falls back
to creating a bfloat16 tensor, so below 8.0 it no longer fails for certain: not judged. The
dtype, the device and ``enabled`` are followed through the value model per world; a guard on
``torch.cuda.is_bf16_supported()`` or on the capability keeps the GPUs out (probes.toml).
"""

from __future__ import annotations

from packaging.specifiers import SpecifierSet

from ..core.ruleapi import Example, Finding, Module, Rule

_STEP = """\
import torch
from torch import nn

DTYPES = {{"bf16": torch.bfloat16, "fp16": torch.float16, "fp32": torch.float32}}
CONFIG = {{"precision": "bf16", "lr": 3e-4}}


def train_step(model, batch, optimizer, cfg):
    {choose}
    with torch.autocast(device_type="cuda", dtype=amp_dtype):
        loss = model(batch).float().pow(2).mean()
    loss.backward()
    optimizer.step()
    return loss


model = nn.Linear(1024, 1024).cuda()
opt = torch.optim.AdamW(model.parameters(), lr=CONFIG["lr"])
train_step(model, torch.randn(8, 1024, device="cuda"), opt, CONFIG)
"""
_FROM_CONFIG = 'amp_dtype = DTYPES[cfg["precision"]]'
_GUARDED = 'amp_dtype = DTYPES[cfg["precision"]] if torch.cuda.is_bf16_supported() else torch.float16'
_LEGACY = """\
import torch

USE_AMP = True


def forward_amp(model, x):
    with torch.cuda.amp.autocast(enabled=USE_AMP, dtype=torch.bfloat16):
        return model(x)
"""
_MSG = ("{call}: dtype=torch.bfloat16 on CUDA raises in torch {rel} on {where}, where "
        "torch.cuda.is_bf16_supported() is False (compute capability below 8.0): \"Current CUDA Device does not "
        "support bfloat16. Please switch dtype to float16.\"; fails on {where}. Use dtype=torch.float16 with "
        "torch.cuda.amp.GradScaler there (choose it with torch.cuda.is_bf16_supported()); torch 2.3 and later do "
        "not raise (bfloat16 is emulated)")


class Bf16Unsupported(Rule):
    code = "AIC108"
    name = "bf16-unsupported"
    tokens = (b"autocast",)
    call_tails = frozenset({"autocast"})
    worlds_monotone = True

    VALID = [
        Example(_STEP.format(choose=_FROM_CONFIG), gpus=["A100", "H100"], pins={"torch": "2.1.0"}),
        Example(_STEP.format(choose=_GUARDED), gpus=["T4", "A100"], pins={"torch": "2.1.0"}),
        # torch 2.3 and later emulate bfloat16 below 8.0: autocast does not raise
        Example(_STEP.format(choose=_FROM_CONFIG), gpus=["T4", "A100"], pins={"torch": "2.3.0"}),
        Example(_LEGACY.replace("USE_AMP = True", "USE_AMP = False"), gpus=["V100"], pins={"torch": "2.2.0"}),
        Example(_STEP.format(choose='amp_dtype = DTYPES["fp16"]'), gpus=["T4"], pins={"torch": "2.0.1"}),
    ]
    INVALID = [
        Example(_STEP.format(choose=_FROM_CONFIG), gpus=["T4", "A100"], pins={"torch": "2.1.0"},
                findings=[(10, 10, _MSG.format(call="torch.autocast", rel="2.1.0", where="sm_75 (T4)"))]),
        Example(_LEGACY, gpus=["V100", "A100"], pins={"torch": "2.2.0"},
                findings=[(7, 10, _MSG.format(call="torch.cuda.amp.autocast", rel="2.2.0", where="sm_70 (V100)"))]),
        # torch 2.0 checks the dtype before it looks at enabled
        Example(_LEGACY.replace("USE_AMP = True", "USE_AMP = False"), gpus=["V100"], pins={"torch": "2.0.1"},
                findings=[(7, 10, _MSG.format(call="torch.cuda.amp.autocast", rel="2.0.1", where="sm_70 (V100)"))]),
    ]

    def __init__(self, matrix) -> None:
        super().__init__(matrix)
        table = matrix.files.get("bf16.toml", {})
        self.autocasts = table.get("autocast", {})
        self.refusals = list(table.get("refusal", {}).values())

    def check_call(self, site, qualname: str, fc) -> list[Finding]:
        a = self.autocasts.get(qualname)
        if a is None or site.has_star:
            return []
        dtype_expr = site.arg(*a["dtype"])
        if dtype_expr is None:
            return []  # the CUDA autocast dtype: float16 unless set elsewhere
        device_expr = site.arg(*a["device"]) if "device" in a else None
        enabled_expr = site.arg(*a["enabled"])
        out = []
        for r in self.refusals:
            have = self.matrix.feature_archs(r["feature"])
            failing, rel_shown = set(), None
            for _caller, bindings in fc.scenarios():
                for w in fc.ctx.worlds:
                    if w.arch in have or w.torch is None or not fc.reachable(w, bindings):
                        continue
                    span = next((s for s in r["spans"] if w.torch in SpecifierSet(s["releases"])), None)
                    if span is None:
                        continue
                    device = a.get("device_implied") if device_expr is None else fc.value_of(device_expr, w, bindings)
                    dtype = fc.value_of(dtype_expr, w, bindings)
                    enabled = True if enabled_expr is None else fc.value_of(enabled_expr, w, bindings)
                    if device != "cuda" or not (isinstance(dtype, Module) and dtype.name == r["dtype"]):
                        continue
                    if span["disabled"] or enabled is True:  # an unknown ``enabled`` decides nothing
                        failing.add(w.arch)
                        rel_shown = rel_shown or w.torch
            if failing:
                where = fc.describe(failing)
                msg = (f"{qualname}: dtype={r['dtype']} on CUDA raises in torch {rel_shown} on {where}, where "
                       f"torch.cuda.is_bf16_supported() is False (compute capability below 8.0): \"{r['error']}\"; "
                       f"fails on {where}. {r['fix'][0].upper()}{r['fix'][1:]}")
                out.append(Finding(site.node, msg, frozenset(failing)))
        return out
