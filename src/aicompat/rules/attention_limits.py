"""AIC106 attention-kernel-limits: what a FlashAttention kernel refuses whatever
the V head dim (AIC101 covers V != QK): the GPUs its device check accepts in the
releases in scope, and the largest head dim (facts: version_matrix/attention.toml
[limit.*], read in every flash-attn tag)."""

from __future__ import annotations

from packaging.specifiers import SpecifierSet

from ..probes import capability_range
from ..ruleapi import Example, Finding, Rule
from ..values import UNKNOWN, Tensor

_FA2 = "from flash_attn import flash_attn_func\n\n\n"


_FA3_FP8 = ("import torch\nfrom flash_attn_interface import flash_attn_func\n\n\n"
            "def quantize(x):\n    return x.to(torch.float8_e4m3fn)\n\n\n"
            "def attend(q, k, v, use_fp8):\n"
            "    if use_fp8:\n        q, k, v = quantize(q), quantize(k), quantize(v)\n"
            "    return flash_attn_func(q, k, v, causal=True)\n\n\n"
            "x = torch.randn(2, 128, 16, 128, device='cuda', dtype=torch.bfloat16)\n"
            "out = attend(x, x, x, use_fp8={flag})\n")


class AttentionKernelLimits(Rule):
    code = "AIC106"
    name = "attention-kernel-limits"
    tokens = (b"flash_attn",)

    VALID = [
        Example(_FA2 + "def attend(q, k, v):\n    return flash_attn_func(q, k, v, causal=True)\n",
                gpus=["A100", "H100", "B200"], pins={"flash-attn": "2.8.3"}),
        Example(_FA2 + "def attend(q, k, v):\n    return flash_attn_func(q, k, v, causal=True)\n",
                gpus=["A100", "H100"], pins={"flash-attn": "2.6.3"}),
        Example("import torch\n" + _FA2 + "q = torch.randn(2, 128, 8, 256, dtype=torch.bfloat16, device='cuda')\n"
                "out = flash_attn_func(q, q, q)\n", gpus=["H100"]),
        Example(_FA3_FP8.format(flag="torch.cuda.get_device_capability()[0] >= 9"), gpus=["A100", "H100"]),
        Example(_FA3_FP8.format(flag="True"), gpus=["H100"]),
    ]
    INVALID = [
        Example(_FA3_FP8.format(flag="True"), gpus=["A100", "H100"],
                findings=[
                    (12, 12, "flash_attn_func: FlashAttention 3 (flash-attn-3 3.0.0+g0251105a2) takes "
                             "torch.float8_e4m3fn inputs only on compute capability 9.0 and newer: \"FlashAttention "
                             "on Ampere/Ada cards only supports fp16 and bf16 data type\"; fails on sm_80 (A100). FP8 "
                             "attention needs Hopper or newer: cast q, k, v to bf16 on compute capability 8.x"),
                ]),
        Example(_FA2 + "def attend(q, k, v):\n    return flash_attn_func(q, k, v, causal=True)\n",
                gpus=["H100", "B200"], pins={"flash-attn": "2.6.3"},
                findings=[
                    (5, 12, "flash_attn_func: FlashAttention 2 (flash-attn 2.6.3) refuses sm_100 (B200): "
                            "\"FlashAttention only supports Ampere GPUs or newer.\"; its device check accepts "
                            "compute capability 8.x and 9.0 only; fails on sm_100 (B200). flash-attn >= 2.7.3 "
                            "accepts compute capability 8.0 and newer"),
                ]),
        Example(_FA2 + "def attend(q, k, v):\n    return flash_attn_func(q, k, v, causal=True)\n",
                gpus=["T4", "A100"],
                findings=[
                    (5, 12, "flash_attn_func: FlashAttention 2 (flash-attn 2.8.3.post2) refuses sm_75 (T4): "
                            "\"FlashAttention only supports Ampere GPUs or newer.\"; its device check accepts "
                            "compute capability 8.0 and newer; fails on sm_75 (T4). FlashAttention 2 needs an "
                            "Ampere or newer GPU: fall back to torch.nn.functional.scaled_dot_product_attention "
                            "there"),
                ]),
        Example("import torch\n" + _FA2 + "def attend(x, heads=8, head_dim=320):\n"
                "    q = x.view(x.shape[0], x.shape[1], heads, head_dim)\n"
                "    return flash_attn_func(q, q, q)\n\n\n"
                "attend(torch.randn(2, 128, 2560, dtype=torch.bfloat16, device='cuda'))\n", gpus=["H100"],
                findings=[
                    (7, 12, "flash_attn_func: head dim 320 is more than FlashAttention 2 supports (256): "
                            "\"FlashAttention forward only supports head dimension at most 256\"; fails on "
                            "sm_90 (H100)"),
                ]),
    ]

    def __init__(self, matrix) -> None:
        super().__init__(matrix)
        self.limits: dict[str, list[dict]] = {}
        for e in matrix.section("attention.toml", "limit").values():
            for q in e["calls"]:
                self.limits.setdefault(q, []).append(e)
        self.call_tails = frozenset(q.rsplit(".", 1)[-1] for q in self.limits)

    def known_names(self) -> set[str]:
        return set(self.limits)

    def check_call(self, site, qualname, fc):
        entries = self.limits.get(qualname)
        if not entries or site.has_star or fc.ctx.caught("RuntimeError"):
            return []
        out = []
        for e in entries:
            found = self._capability(site, qualname, e, fc) if e["kind"] == "capability" else \
                self._head_dim(site, qualname, e, fc) if e["kind"] == "head_dim_max" else \
                self._dtype_capability(site, qualname, e, fc) if e["kind"] == "dtype_capability" else None
            if found is not None:
                out.append(found)
        return out

    def _releases(self, fc, package: str):
        pinned = sorted(fc.target.releases.get(package) or [])
        return pinned or sorted(fc.matrix.releases(package))[-1:]  # unpinned: the newest

    def _capability(self, site, qualname, e, fc):
        short = qualname.rsplit(".", 1)[-1]
        failing: dict[str, tuple] = {}
        for v in self._releases(fc, e["package"]):
            span = _span(e, v)
            if span is None:
                continue
            for w in fc.ctx.worlds:
                arch = fc.matrix.archs.get(w.arch)
                if arch is not None and not _accepts(span, arch):
                    failing.setdefault(w.arch, (v, span))
        if not failing:
            return None
        v, span = next(iter(failing.values()))
        accepts = "compute capability 8.x and 9.0 only" if "==9.0" in span["accept"] else \
            "compute capability " + _accepted(span)
        archs = frozenset(failing)
        msg = (f"{short}: {e['library']} ({e['package']} {v}) refuses {fc.describe(archs)}: "
               f"\"{span.get('error', e['error'])}\"; "
               f"its device check accepts {accepts}; fails on {fc.describe(archs)}. {span['fix']}")
        return Finding(site.node, msg, archs)

    def _dtype_capability(self, site, qualname, e, fc):
        """An input dtype (FP8) that the kernel accepts only on some GPUs."""
        spans = [(v, _span(e, v)) for v in self._releases(fc, e["package"])]
        spans = [(v, s) for v, s in spans if s is not None]
        if not spans:
            return None
        failing, shown = {}, None
        for w, val in _q_values(site, e, fc):
            arch = fc.matrix.archs.get(w.arch)
            if arch is None or not isinstance(val, Tensor) or val.dtype not in e["dtypes"]:
                continue
            for v, span in spans:
                if not _accepts(span, arch):
                    failing.setdefault(w.arch, (v, span))
                    shown = shown or val.dtype
        if not failing:
            return None
        v, span = next(iter(failing.values()))
        short = qualname.rsplit(".", 1)[-1]
        archs = frozenset(failing)
        msg = (f"{short}: {e['library']} ({e['package']} {v}) takes {shown} inputs only on compute capability "
               f"{_accepted(span)}: \"{e['error']}\"; fails on {fc.describe(archs)}. {span['fix']}")
        return Finding(site.node, msg, archs)

    def _head_dim(self, site, qualname, e, fc):
        failing, shown = set(), None
        for w, val in _q_values(site, e, fc):
            d = val.last_dim() if isinstance(val, Tensor) else UNKNOWN
            if isinstance(d, int) and not isinstance(d, bool) and d > e["max"]:
                failing.add(w.arch)
                shown = shown or d
        if not failing:
            return None
        short = qualname.rsplit(".", 1)[-1]
        msg = (f"{short}: head dim {shown} is more than {e['library']} supports ({e['max']}): \"{e['error']}\"; "
               f"fails on {fc.describe(failing)}")
        return Finding(site.node, msg, frozenset(failing))


def _span(e: dict, v) -> dict | None:
    """The span of ``e`` that release ``v`` falls in: a specifier, or a list of release labels
    (FA3's share one public version, 3.0.0b1, and differ only in their local label)."""
    for s in e["spans"]:
        r = s["releases"]
        if (isinstance(r, list) and str(v) in r) or (isinstance(r, str) and v in SpecifierSet(r)):
            return s
    return None


def _q_values(site, e: dict, fc):
    """(world, value of the call's q) for every caller scenario and world that reaches the call."""
    index, name = e["args"]["q"]
    q = site.arg(index, name)
    if q is None:
        return
    for _caller, bindings in fc.scenarios():
        for w in fc.ctx.worlds:
            if fc.reachable(w, bindings):
                yield w, fc.value_of(q, w, bindings)


def _accepts(span: dict, arch) -> bool:
    """Does the span's device check accept this GPU?"""
    return any(capability_range(r, "attention.toml")(tuple(arch.capability)) for r in span["accept"])


def _accepted(span: dict) -> str:
    """The span's accepted capabilities in words: '8.0 and newer', '==9.0'."""
    return ", ".join(a.lstrip(">=") + " and newer" if a.startswith(">=") else a for a in span["accept"])

