"""AIC102 fp8-unsupported: FP8/FP4 compute on targets without it, and FP8/FP4
dtypes in torch releases that lack them (facts: version_matrix/fp8.toml).

Storing in an FP8 dtype and upcasting in eager code works on any GPU and is
not flagged; what needs the hardware is FP8 *math*: scaled matmuls,
Transformer Engine FP8 recipes, and FP8 casts that Triton must generate code
for inside ``torch.compile`` or in a Triton kernel (``x.to(tl.float8e4nv)``;
``tl.dot`` on such operands, whose check triton 2.2.0 made stricter).
"""

from __future__ import annotations

import libcst as cst
from packaging.specifiers import SpecifierSet
from packaging.version import Version

from ..core.ruleapi import (
    UNKNOWN,
    DictValue,
    Example,
    Finding,
    LibObject,
    Rule,
    Tensor,
    api_query,
    enabled_worlds,
    off_switch,
    options,
    truth,
)
from ._shared.getattr_names import by_name

_T = "import torch\n"
_TE = "import transformer_engine.pytorch as te\nfrom transformer_engine.common import recipe\n"


class Fp8Unsupported(Rule):
    code = "AIC102"
    name = "fp8-unsupported"
    tokens = (b"float8", b"float4", b"_scaled_mm", b"_scaled_grouped_mm", b"transformer_engine", b"fp8")

    VALID = [
        # FP8 storage, upcast for compute: fine on Ampere.
        Example(_T + "w = torch.randn(64, 64).to(torch.float8_e4m3fn)\ny = torch.randn(8, 64) @ w.to(torch.bfloat16)\n",
                gpus=["A100"], pins={"torch": "2.4.0"}),
        Example(_T + "a = torch.randn(16, 16).to(torch.float8_e4m3fn)\n"
                "y = torch._scaled_mm(a, a.t(), scale_a=torch.tensor(1.0), scale_b=torch.tensor(1.0))\n",
                gpus=["H100", "L40S"]),
        Example(_T + "def mm(a, b, sa, sb):\n    if torch.cuda.get_device_capability() >= (8, 9):\n"
                "        return torch._scaled_mm(a, b, scale_a=sa, scale_b=sb)\n    return a.float() @ b.float()\n",
                gpus=["A100", "H100"]),
        Example(_T + "if hasattr(torch, 'float8_e4m3fn'):\n    DT = torch.float8_e4m3fn\n", pins={"torch": ">=2.0,<2.3"}),
        Example(_TE + "with te.fp8_autocast(enabled=False):\n    pass\n", gpus=["A100"]),
        # TE JAX's autocast is off unless enabled=True is given.
        Example("import transformer_engine.jax as tej\nfrom transformer_engine.common import recipe\n"
                "with tej.autocast(recipe=recipe.DelayedScaling(), mesh_resource=None):\n    pass\n", gpus=["A100"]),
        Example(_TE + "r = recipe.DelayedScaling()\nwith te.fp8_autocast(enabled=True, fp8_recipe=r):\n    pass\n",
                gpus=["H100", "RTX 4090"]),
        # An FP8 cast outside compiled code is eager: works anywhere.
        Example(_T + "def f(x):\n    return x.to(torch.float8_e5m2)\n", gpus=["A100"]),
        Example(_T + "try:\n    y = torch._scaled_mm(a, b, scale_a=s, scale_b=s)\nexcept RuntimeError:\n    y = a @ b\n",
                gpus=["A100"]),
        Example("import torch\nSCALE = getattr(torch, \"float8_e8m0fnu\", None)\n"
                "if SCALE is not None:\n    s = torch.ones(4).to(torch.float8_e8m0fnu)\n", pins={"torch": "2.6.0"}),
    ]
    INVALID = [
        Example(_T + "y = torch._scaled_mm(a, b, scale_a=sa, scale_b=sb, out_dtype=torch.bfloat16)\n",
                gpus=["A100", "H100"],
                findings=[
                    (2, 5, 'torch._scaled_mm: FP8 matmul needs compute capability 8.9+ ("torch._scaled_mm is only '
                           'supported on CUDA devices with compute capability >= 9.0 or 8.9, or ROCm MI300+"); '
                           "fails on sm_80 (A100); call it only where torch.cuda.get_device_capability() >= (8, 9), and a bf16 matmul elsewhere"),
                ]),
        Example("from torch import _scaled_mm as smm\ny = smm(a, b, scale_a=sa, scale_b=sb)\n", gpus=["A10"],
                findings=[
                    (2, 5, 'torch._scaled_mm: FP8 matmul needs compute capability 8.9+ ("torch._scaled_mm is only '
                           'supported on CUDA devices with compute capability >= 9.0 or 8.9, or ROCm MI300+"); '
                           "fails on sm_86 (A10); call it only where torch.cuda.get_device_capability() >= (8, 9), and a bf16 matmul elsewhere"),
                ]),
        Example(_T + "w = torch.zeros(8, dtype=torch.float8_e4m3fn)\n", gpus=["H100"], pins={"torch": "2.0.1"},
                findings=[
                    (2, 26, "torch.float8_e4m3fn: not in torch 2.0.1 (added in 2.1.0); AttributeError: module "
                            "'torch' has no attribute 'float8_e4m3fn'"),
                ]),
        Example(_T + "s = torch.float8_e8m0fnu\n", gpus=["B200"], pins={"torch": ">=2.5,<2.8"},
                findings=[
                    (2, 5, "torch.float8_e8m0fnu: not in torch 2.5.0, 2.5.1, 2.6.0 (added in 2.7.0); "
                           "AttributeError: module 'torch' has no attribute 'float8_e8m0fnu'"),
                ]),
        Example(_TE + "with te.fp8_autocast(enabled=True, fp8_recipe=recipe.DelayedScaling()):\n    pass\n",
                gpus=["A100", "H100"],
                findings=[
                    (3, 6, 'fp8_autocast with DelayedScaling ("Device compute capability 8.9 or higher required '
                           'for FP8 execution."); fails on sm_80 (A100); pass enabled=False (no FP8) where the compute capability is below 8.9'),
                ]),
        Example(_TE + "r = recipe.MXFP8BlockScaling()\nwith te.fp8_autocast(fp8_recipe=r):\n    pass\n",
                gpus=["H100", "B200", "RTX 5090"],
                findings=[
                    (4, 6, 'fp8_autocast with MXFP8BlockScaling ("Device compute capability 10.0 or higher '
                           "required for MXFP8 execution. / MXFP8 (for all gemm layouts) is not supported on 12.0+ "
                           'architectures yet."); fails on sm_90 (H100), sm_120 (RTX 5090); use Float8CurrentScaling where the compute capability is 8.9, 9.x or 12.x, and no FP8 below 8.9'),
                ]),
        Example(_T + "@torch.compile\ndef quant(x):\n    return x.to(torch.float8_e4m3fn)\n", gpus=["A100", "H100"],
                findings=[
                    (4, 12, ".to(torch.float8_e4m3fn) inside torch.compile: Triton generates fp8e4nv "
                            '(float8_e4m3fn) code only for sm_89+ ("type fp8e4nv not supported in this '
                            'architecture"); fails on sm_80 (A100); cast to torch.float8_e5m2 there (Triton generates fp8e5 code on every capability), or keep bf16'),
                ]),
        Example(_T + "def quant(x):\n    return x.to(dtype=torch.float8_e4m3fn)\ncq = torch.compile(quant)\n",
                gpus=["RTX 3090"],
                findings=[
                    (3, 12, ".to(torch.float8_e4m3fn) inside torch.compile: Triton generates fp8e4nv "
                            '(float8_e4m3fn) code only for sm_89+ ("type fp8e4nv not supported in this '
                            'architecture"); fails on sm_86 (RTX 3090); cast to torch.float8_e5m2 there (Triton generates fp8e5 code on every capability), or keep bf16'),
                ]),
        Example("import torch\nSCALE = getattr(torch, \"float8_e8m0fnu\")\n", pins={"torch": "2.6.0"},
                findings=[
                    (2, 9, "torch.float8_e8m0fnu: not in torch 2.6.0 (added in 2.7.0); AttributeError: module "
                           "'torch' has no attribute 'float8_e8m0fnu'"),
                ]),
    ]

    # Operand dtypes _scaled_mm refuses on GPUs that pass its capability check (fp8.toml [operands.*]).
    _NVFP4 = (_T + "\n\ndef quantize_nvfp4(x):\n"
              "    packed = torch.empty(x.shape[0], x.shape[1] // 2, dtype=torch.uint8, device=x.device)\n"
              "    scales = torch.empty(x.shape[0], x.shape[1] // 16, dtype=torch.float8_e4m3fn, device=x.device)\n"
              "    return packed.view(torch.float4_e2m1fn_x2), scales\n\n\n"
              "def nvfp4_linear(x, w):\n{guard}"
              "    xq, xs = quantize_nvfp4(x)\n    wq, ws = quantize_nvfp4(w)\n"
              "    return torch._scaled_mm(xq, wq.t(), xs, ws, out_dtype=torch.bfloat16)\n")
    _PAIR = (_T + "FWD, BWD = torch.float8_e4m3fn, torch.float8_e5m2\nFP8 = {fp8}\n"
             "a = torch.randn(64, 64, device='cuda').to({a})\nb = torch.randn(64, 64, device='cuda').to({b})\n"
             "one = torch.tensor(1.0, device='cuda')\n"
             "y = torch._scaled_mm(a, b.t(), scale_a=one, scale_b=one, out_dtype=torch.bfloat16)\n")
    VALID += [
        Example(_NVFP4.format(guard=""), gpus=["B200", "B300"]),
        Example(_NVFP4.format(guard="    if torch.cuda.get_device_capability() < (10, 0):\n"
                                    "        return x @ w.t()\n"), gpus=["H100", "B200"]),
        Example(_PAIR.format(fp8="torch.float8_e4m3fn", a="FWD", b="BWD"), gpus=["H100"], pins={"torch": "2.3.0"}),
        Example(_PAIR.format(fp8="torch.float8_e4m3fnuz if torch.version.hip else torch.float8_e4m3fn", a="FP8",
                             b="FP8"), gpus=["L40S", "H100"]),
    ]
    INVALID += [
        Example(_NVFP4.format(guard=""), gpus=["H100", "B200"],
                findings=[
                    (13, 12, "torch._scaled_mm: torch.float4_e2m1fn_x2 operands (packed FP4: NVFP4 or MXFP4) need "
                             "compute capability 10.0+: cuBLASLt has no block-scaled FP4 kernel before Blackwell "
                             '("CUBLAS_STATUS_NOT_SUPPORTED"); fails on sm_90 (H100). Dequantize, or use FP8 '
                             "(float8_e4m3fn) operands, below compute capability 10.0"),
                ]),
        Example(_PAIR.format(fp8="torch.float8_e4m3fn", a="BWD", b="BWD"), gpus=["H100"], pins={"torch": "2.3.0"},
                findings=[
                    (7, 5, "torch._scaled_mm: torch.float8_e5m2 x torch.float8_e5m2 is refused by torch on CUDA: "
                           'cuBLASLt has no e5m2 x e5m2 kernel ("Multiplication of two Float8_e5m2 matrices is not '
                           'supported"); fails on sm_90 (H100). Make one operand float8_e4m3fn (e5m2 is meant for '
                           "gradients: e4m3 x e5m2 is accepted)"),
                ]),
        Example(_PAIR.format(fp8="torch.float8_e4m3fnuz", a="FP8", b="FP8"), gpus=["L40S", "H100"],
                findings=[
                    (7, 5, "torch._scaled_mm: torch.float8_e4m3fnuz operands are a ROCm (MI300) FP8 format that "
                           'torch cannot hand to cuBLASLt ("Cannot convert ScalarType Float8_e4m3fnuz to '
                           'cudaDataType."); fails on sm_89 (L40S), sm_90 (H100). Use torch.float8_e4m3fn / '
                           "torch.float8_e5m2 on NVIDIA GPUs"),
                ]),
    ]

    # FP8 inside Triton kernels: a cast to fp8e4nv below sm_89; tl.dot on fp8e4nv operands on sm_89 (triton 2.2.0).
    _TK = ("import triton\nimport triton.language as tl\n\n\n@triton.jit\n"
           "def quant(x_ptr, q_ptr, scale, BLOCK: tl.constexpr):\n"
           "    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)\n"
           "    q = (tl.load(x_ptr + offs) / scale).to({dtype})\n"
           "    tl.store(q_ptr + offs, q)\n")
    _TDOT = ("import triton\nimport triton.language as tl\n\n\n@triton.jit\n"
             "def fp8_mm(a_ptr, b_ptr, c_ptr, BLOCK: tl.constexpr):\n"
             "    offs = tl.arange(0, BLOCK)\n    tile = offs[:, None] * BLOCK + offs[None, :]\n"
             "    a = tl.load(a_ptr + tile).to(tl.float8e4nv)\n    b = tl.load(b_ptr + tile).to(tl.float8e4nv)\n"
             "    tl.store(c_ptr + tile, tl.dot(a, b))\n")
    VALID += [
        Example(_TK.format(dtype="tl.float8e5"), gpus=["A100", "H100"]),
        Example(_TDOT, gpus=["L40S", "H100"], pins={"torch": "2.3.0"}),
    ]
    INVALID += [
        Example(_TK.format(dtype="tl.float8e4nv"), gpus=["A100", "H100"],
                findings=[
                    (8, 9, "cast to triton.language.float8e4nv in a Triton kernel: Triton compiles fp8e4nv (e4m3) only "
                           "for compute capability 8.9+ (triton 3.9.0) (\"type fp8e4nv not supported in this "
                           "architecture. The supported fp8 dtypes are ('fp8e4b15', 'fp8e5')\"); fails on sm_80 (A100); "
                           "use tl.float8e5 there (every capability), or launch the kernel only where the capability "
                           "is >= (8, 9)"),
                ]),
        Example(_TDOT, gpus=["L40S", "H100"], pins={"torch": "2.2.2"},
                findings=[
                    (11, 28, "triton.language.dot: triton.language.float8e4nv operands (triton 2.2.0) (\"Dot op does not "
                             "support fp8e4nv on CUDA arch < 90\"); fails on sm_89 (L40S); use tl.float8e5 operands on "
                             "sm_89 with triton 2.2.0, or a triton release from 2.3.0 (torch >= 2.3)"),
                ]),
    ]

    def __init__(self, matrix) -> None:
        super().__init__(matrix)
        self.ops = matrix.section("fp8.toml", "op")
        # First torch release with each dtype and op: a use before it is an AttributeError.
        self.dtypes = {k: Version(e["added"]) for k, e in matrix.section("fp8.toml", "dtype").items()}
        self.dtypes.update({k: Version(e["added"]) for k, e in self.ops.items() if "added" in e})
        self.casts = matrix.section("fp8.toml", "compiled_cast")
        self.recipes = matrix.section("fp8.toml", "te_recipe")
        self.autocasts = matrix.section("fp8.toml", "te_autocast")
        self.attr_tails = frozenset(k.rsplit(".", 1)[-1] for k in self.dtypes)
        self.call_tails = frozenset({k.rsplit(".", 1)[-1] for k in self.ops} | {"to", "fp8_autocast", "autocast", "getattr"})
        self.default_recipe = next((k for k, e in self.recipes.items() if e.get("default")), None)
        self.operands = matrix.section("fp8.toml", "operands")
        self.newest_torch = max(matrix.releases("torch"), default=None)
        # FP8 inside Triton kernels, per triton release: casts to fp8e4nv, tl.dot on fp8e4nv operands
        self.triton_casts = matrix.section("fp8.toml", "triton_cast")
        self.triton_dots = {e["call"]: e for e in matrix.section("fp8.toml", "triton_dot").values()}
        self.triton_releases = matrix.releases("triton")
        self.call_tails = self.call_tails | {"cast"} | {c.rsplit(".", 1)[-1] for c in self.triton_dots}

    @classmethod
    def explain_facts(cls, matrix) -> str:
        lines = ["dtypes (first torch release that has them):"]
        for k, e in matrix.section("fp8.toml", "dtype").items():
            lines.append(f"- {k}: {e['added']} ({e['kind']}); source: {e['source']}")
        lines.append("hardware gates:")
        for sec in ("op", "compiled_cast", "te_recipe"):
            for k, e in matrix.section("fp8.toml", sec).items():
                archs = ", ".join(matrix.by_capability(matrix.feature_archs(e["feature"])))
                lines.append(f"- {k}: runs on {archs}; error: {e['error']}; source: {e['source']}")
        lines.append("operand dtypes refused (on GPUs that pass the op's own check):")
        for k, e in matrix.section("fp8.toml", "operands").items():
            runs = ", ".join(matrix.by_capability(matrix.feature_archs(e["feature"]))) if "feature" in e else "none"
            lines.append(f"- {e['call']} {k} ({e['match']} of {', '.join(e['dtypes'])}), torch {e['releases']}: "
                         f"runs on {runs}; error: {e['error']}; source: {e['source']}")
        return "\n".join(lines)

    def known_names(self) -> set[str]:
        return set(self.ops) | set(self.dtypes) | set(self.autocasts)

    def attr_exists(self, qualname: str, world):
        added = self.dtypes.get(qualname)
        if added is None or world.torch is None:
            return UNKNOWN
        return world.torch >= added

    # -- dtypes missing from the pinned torch -------------------------------------
    def check_attribute(self, node, qualname, fc):
        return self._missing(node, qualname, fc)

    def _missing(self, node, qualname, fc, worlds=None):
        added = self.dtypes.get(qualname)
        if added is None or fc.ctx.caught("AttributeError"):
            return []
        missing = sorted({w.torch for w in (fc.ctx.worlds if worlds is None else worlds)
                          if w.torch is not None and w.torch < added})
        if not missing:
            return []
        attr = qualname.rsplit(".", 1)[-1]
        shown = ", ".join(str(v) for v in missing[:4]) + (f" and {len(missing) - 4} more" if len(missing) > 4 else "")
        msg = (f"{qualname}: not in torch {shown} (added in {added}); "
               f"AttributeError: module 'torch' has no attribute '{attr}'")
        return [Finding(node, msg, extra_targets=tuple(f"torch=={v}" for v in missing))]

    # -- FP8 compute ---------------------------------------------------------------
    # Most calls of the watched names (``.to``, ``autocast``) are no FP8 op: where the call
    # runs is asked only on the branches that judge one (``reach_own``).
    reach_own = frozenset({"check_call"})

    def check_call(self, site, qualname, fc):
        by = by_name(site, fc) if isinstance(site.node.func, cst.Name) and site.node.func.value == "getattr" else None
        if by is not None:  # getattr(torch, "float8_e8m0fnu"), the name a constant or a loop item
            if by.owner is None or by.names is None:
                return []
            return [f for n, worlds in by.names.items() for f in self._missing(site.node, f"{by.owner}.{n}", fc, worlds)]
        if qualname in self.ops:
            if not fc.ctx.worlds:
                return []
            op = self.ops[qualname]
            if fc.ctx.caught(op.get("exception", "RuntimeError")):
                return []  # a fallback handles the failure
            added = self.dtypes.get(qualname)
            if added is not None and fc.ctx.worlds and all(w.torch is not None and w.torch < added
                                                           for w in fc.ctx.worlds):
                return []  # no release in scope has the op: check_attribute says so
            out = self._hw(site.node, op["feature"], fc, f"{qualname}: {op['summary']}", op["error"],
                           _live_worlds(fc, self.matrix.feature_archs(op["feature"])), op["fix"])
            return out + self._operands(site, qualname, op["feature"], fc)
        if qualname in self.triton_dots:
            return self._triton_dot(site, qualname, fc)
        dtype = _cast_dtype(site.node, fc) if self.triton_casts else None
        cast = next((e for e in self.triton_casts.values() if dtype in e["dtypes"]), None)
        if cast is not None:
            return self._triton_cast(site, dtype, cast, fc)
        tail = qualname.rsplit(".", 1)[-1] if qualname else None
        entry = self._autocast(qualname) if tail in ("fp8_autocast", "autocast") else None
        if entry is not None:
            if not fc.ctx.worlds:
                return []
            # TE asserts on autocast entry (v2.16+ raises RuntimeError from check_recipe_support).
            if fc.ctx.caught("AssertionError") or fc.ctx.caught("RuntimeError"):
                return []
            return self._te(site, qualname, fc, entry)
        if isinstance(site.node.func, cst.Attribute) and site.node.func.attr.value == "to" \
                and fc.ctx.facts.get("compiled"):  # marked by AIC103's compile entry points
            if not fc.ctx.worlds:
                return []
            return self._compiled_cast(site, fc, fc.ctx.fact_worlds("compiled"))
        return []

    def _hw(self, node, feature, fc, what, error, worlds=None, fix=""):
        have = self.matrix.feature_archs(feature)
        failing = {w.arch for w in (fc.ctx.worlds if worlds is None else worlds)} - have
        if not failing:
            return []
        use = f"; {fix}" if fix else ""
        return [Finding(node, f'{what} ("{error}"); fails on {fc.describe(failing)}{use}', frozenset(failing))]

    def _operands(self, site, qualname, op_feature, fc):
        """Operand dtypes the op refuses (fp8.toml [operands.*]) on the GPUs that pass its
        capability check: NVFP4 before Blackwell, e5m2 x e5m2, the ROCm fnuz formats."""
        capable = self.matrix.feature_archs(op_feature)
        out, reported = [], set()
        for e in self.operands.values():
            if e["call"] != qualname or any(fc.ctx.caught(x) for x in e["exceptions"]):
                continue
            runs = self.matrix.feature_archs(e["feature"]) if "feature" in e else frozenset()
            refusing = SpecifierSet(e["releases"])
            failing, shown = set(), set()
            for _call, bindings in fc.scenarios():
                for w in fc.ctx.worlds:
                    release = w.torch if w.torch is not None else self.newest_torch
                    if w.arch not in capable or w.arch in runs or release is None \
                            or release not in refusing or not fc.reachable(w, bindings):
                        continue
                    hit = _matching(site, e, w, bindings, fc)
                    if hit:
                        failing.add(w.arch)
                        shown |= hit
            failing -= reported  # one finding per GPU (MXFP4: FP4 operands and e8m0 scales)
            if failing:
                reported |= failing
                dts = sorted(shown)
                role = e.get("role", "operands")
                what = " x ".join(dts * len(e["args"])) if e["match"] == "both" else f"{', '.join(dts)} {role}"
                # the C++ ScalarType torch names in its message (torch.float8_e4m3fnuz -> Float8_e4m3fnuz)
                error = e["error"].format(scalar_type=dts[0].split(".")[-1].capitalize())
                out.append(Finding(site.node, f'{qualname}: {what} {e["summary"]} ("{error}"); fails on '
                                   f'{fc.describe(failing)}. {e["fix"]}', frozenset(failing)))
        return out

    def _compiled_cast(self, site, fc, worlds):
        dt = site.arg(0, "dtype")
        q = fc.resolve(dt) if dt is not None else None
        for key, e in self.casts.items():
            if q in e["dtypes"]:
                if fc.ctx.caught(e.get("exception", "RuntimeError")):
                    return []  # what torch.compile raises is handled
                return self._hw(site.node, e["feature"], fc,
                                f".to({q}) inside torch.compile: {e['summary']}", e["error"], worlds, e["fix"])
        return []

    # -- FP8 in Triton kernels ---------------------------------------------------------
    def _triton_judged(self, fc, releases: str) -> list[Version]:
        """The triton releases judged here (a pin, the torch release that requires them, or the
        newest) inside ``releases``; [] where none is, or the code is not judged."""
        got = api_query.judged_releases(fc, "triton", self.triton_releases)
        if got is None:
            return []
        spec = SpecifierSet(releases)
        return [v for v in (self.triton_releases[i] for i in got[0]) if v in spec]

    def _triton_cast(self, site, dtype: str, e, fc):
        """``x.to(tl.float8e4nv)`` / ``tl.cast(x, tl.float8e4nv)``: the kernel cannot compile below
        the feature's archs in the releases that have the dtype (before them AIC201 says it is missing)."""
        bitcast = _arg(site.node, 2, "bitcast")
        if bitcast is not None and not (isinstance(bitcast, cst.Name) and bitcast.value == "False"):
            return []  # a bitcast skips the cast's check in 2.2.0-3.1.0: judged only where it is plain
        judged = self._triton_judged(fc, e["releases"])
        if not judged or not fc.ctx.worlds:
            return []
        newest = judged[-1]
        error = next(msg for spec, msg in e["errors"].items() if newest in SpecifierSet(spec))
        what = f"cast to {dtype} in a Triton kernel: {e['summary']} (triton {api_query.span(judged)})"
        return self._hw(site.node, e["feature"], fc, what, error, _live_worlds(fc, self.matrix.feature_archs(e["feature"])),
                        e["fix"])

    def _triton_dot(self, site, qualname: str, fc):
        """``tl.dot`` on operands a cast made fp8e4nv, in the releases whose dot check is stricter
        than the cast's (triton 2.2.0: capability >= 9.0): reported on the GPUs the cast passes."""
        e = self.triton_dots[qualname]
        judged = self._triton_judged(fc, e["releases"])
        if not judged or not fc.ctx.worlds:
            return []
        found = (_kernel_dtype(site.arg(index, name), fc) for index, name in e["args"])
        hit = sorted({dt for dt in found if dt is not None and dt in e["dtypes"]})
        if not hit:
            return []  # operand dtypes unknown: silent
        casting = next((c["feature"] for c in self.triton_casts.values() if hit[0] in c["dtypes"]), None)
        passing = self.matrix.feature_archs(casting) if casting else frozenset(w.arch for w in fc.ctx.worlds)
        worlds = frozenset(w for w in fc.ctx.worlds if w.arch in passing)  # below it the cast fails first
        return self._hw(site.node, e["feature"], fc, f"{qualname}: {', '.join(hit)} operands (triton "
                        f"{api_query.span(judged)})", e["error"], worlds, e["fix"])

    def _autocast(self, qualname: str):
        """The te_autocast entry ``qualname`` names, also through a submodule
        (``transformer_engine.pytorch.quantization.autocast``)."""
        if qualname in self.autocasts:
            return self.autocasts[qualname]
        tail = qualname.rsplit(".", 1)[-1]
        for key, e in self.autocasts.items():
            package, name = key.rsplit(".", 1)
            if name == tail and qualname.startswith(package + "."):
                return e
        return None

    def _te(self, site, qualname, fc, entry):
        enabled = site.kw.get("enabled")
        if enabled is None and not entry["enabled_default"]:
            return []  # off unless asked for (TE JAX)
        # Judged only where FP8 may be on: enabled=FP8_OK from the capability, or a
        # switch that is off by default (store_true flag, fp8=False parameter).
        worlds = fc.ctx.worlds if enabled is None else enabled_worlds(enabled, fc)
        if enabled is None and site.has_star:
            worlds = self._splat_on(site, fc, worlds)
        if not worlds:
            return []
        rexpr = site.kw.get(entry["recipe_kw"])
        # The recipes that may reach this call, per world: one picked by a conditional
        # or a helper is a Union, and the call fails on a GPU if any of them fails there.
        failing: dict[str, set] = {}
        scenarios = fc.scenarios() if rexpr is not None or enabled is not None else [(None, None)]
        for w in worlds:
            # A scenario (call site, parametrize row) in which this line cannot run
            # here, or runs with FP8 off, says nothing about it.
            live = [(c, b) for c, b in scenarios if fc.reachable(w, b)
                    and (enabled is None or _may_be_on(fc.value_of(enabled, w, b)))]
            if not live:
                continue
            for name in self._recipes_in(rexpr, w, fc, live):
                if w.arch not in self.matrix.feature_archs(self.recipes[name]["feature"]):
                    failing.setdefault(name, set()).add(w.arch)
        if not failing:
            return []
        short = qualname.rsplit(".", 1)[-1]
        parts = [f'{name} ("{self.recipes[name]["error"]}"); fails on {fc.describe(archs)}; {self.recipes[name]["fix"]}'
                 for name, archs in sorted(failing.items())]
        return [Finding(site.node, f"{short} with " + "; with ".join(parts),
                        frozenset(a for archs in failing.values() for a in archs))]

    @staticmethod
    def _splat_on(site, fc, worlds) -> frozenset:
        """The worlds where a ``**`` the engine could not splice leaves FP8 on: the dict the value
        model gives it there has no ``enabled`` key (and no unknown ones), or one that may be on.
        A dict not known (a helper's parameter) may say ``enabled=False``: that world is not judged."""
        out = set()
        splats = [a.value for a in site.node.args if a.star == "**"]
        for w in worlds:
            on = True
            for expr in splats:
                v = fc.value_of(expr, w)
                if not isinstance(v, DictValue):
                    on = False
                elif any(k == "enabled" for k, _x in v.items):
                    on = on and _may_be_on(v.get("enabled"))
                elif not v.exact:
                    on = False
            if on:
                out.add(w)
        return frozenset(out)

    def _recipes_in(self, rexpr, world, fc, scenarios) -> set[str]:
        """The TE recipes ``rexpr`` may be in ``world``, under each way the enclosing
        function is called; a value that is not a known recipe says nothing."""
        if rexpr is None:
            return {self.default_recipe} if self.default_recipe else set()
        out = set()
        for _call, bindings in scenarios:
            for v in options(fc.value_of(rexpr, world, bindings)):
                if v is None and self.default_recipe:
                    out.add(self.default_recipe)  # fp8_recipe=None: TE picks its default
                elif isinstance(v, LibObject) and v.qualname.startswith("transformer_engine"):
                    name = v.qualname.rsplit(".", 1)[-1]
                    if name in self.recipes:
                        out.add(name)
        return out


def _matching(site, e, world, bindings, fc) -> set[str]:
    """The dtypes of ``e`` the call's operands have in this world and scenario: any operand's
    ("any"), or those every operand may have ("both"); an unknown dtype matches nothing."""
    per_arg: list[set] = []  # dtype names: o.dtype is in e["dtypes"], so never None
    for index, name in e["args"]:
        arg = site.arg(index, name)
        val = fc.value_of(arg, world, bindings) if arg is not None else UNKNOWN
        per_arg.append({o.dtype for o in options(val) if isinstance(o, Tensor) and o.dtype in e["dtypes"]})
    if e["match"] == "both":
        return set.intersection(*per_arg) if per_arg else set()
    return set().union(*per_arg)


def _may_be_on(v) -> bool:
    """``enabled=v`` may turn FP8 on: not False, and not a switch off unless the user passes it."""
    return truth(v) is not False and not off_switch(v)


def _live_worlds(fc, capable) -> frozenset:
    """The worlds of the context on which the op would fail, less those where no way
    the function runs (call site, parametrize row, ``for`` item) reaches it: a loop over
    ``(torch.bfloat16, torch.float8_e4m3fn)`` that skips the FP8 item below sm_89."""
    failing = [w for w in fc.ctx.worlds if w.arch not in capable]
    if not failing:
        return fc.ctx.worlds
    scenarios = fc.scenarios()
    if scenarios == [(None, None)] or not fc.scenarios_complete():
        return fc.ctx.worlds  # the function may also run in ways no scenario shows (passed as a value)
    dead = {w for w in failing if not any(fc.reachable(w, b) for _c, b in scenarios)}
    return fc.ctx.worlds - dead if dead else fc.ctx.worlds


def _cast_dtype(call, fc) -> str | None:
    """The dtype a cast call names: ``x.to(D)`` / ``x.to(dtype=D)``, or a ``cast(x, D)`` function
    (``tl.cast``); None for anything else."""
    func = call.func
    if isinstance(func, cst.Attribute) and func.attr.value == "to":
        dt = _arg(call, 0, "dtype")
    elif isinstance(func, (cst.Name, cst.Attribute)) and (fc.resolve(func) or "").rsplit(".", 1)[-1] == "cast":
        dt = _arg(call, 1, "dtype")
    else:
        return None
    return fc.resolve(dt) if dt is not None else None


def _arg(call, index: int, name: str):
    pos = [a.value for a in call.args if a.keyword is None and not a.star]
    kw = {a.keyword.value: a.value for a in call.args if a.keyword is not None}
    return pos[index] if index < len(pos) else kw.get(name)


def _kernel_dtype(expr, fc, depth: int = 0) -> str | None:
    """The dtype of a kernel value known from its own cast: the cast itself, or a local name
    every definition of which is such a cast to the same dtype; None when unknown."""
    if expr is None or depth > 3:
        return None
    if isinstance(expr, cst.Call):
        return _cast_dtype(expr, fc)
    if not isinstance(expr, cst.Name) or fc.model is None:
        return None
    owner, here = fc.loc
    scope, at, defs = fc.model.scope(owner), here, None
    while scope is not None and defs is None:
        defs = scope.defs_at(expr.value, at)
        scope, at = scope.parent, None
    found = {_kernel_dtype(d.node, fc, depth + 1) if d.kind == "expr" else None for d in defs or ()}
    return found.pop() if len(found) == 1 else None
