"""AIC301 inline-cuda-arch: arch-gated CUDA/PTX features compiled for a fleet
member whose compile target rejects them (facts: version_matrix/cuda_features.toml,
proved by the nvcc-checked corpus in fixtures/kernels/)."""

from __future__ import annotations

import dataclasses
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

import libcst as cst

from ..core.ruleapi import Example, Finding, Rule, TextFinding, counted
from ..cuda import api as cuda_api


@dataclass(frozen=True)
class Mechanism:
    """Where a call takes CUDA source, its build flags, and how it picks targets."""

    label: str
    source: tuple[int, str]  # positional index, keyword
    flags: tuple[int | None, str] | None = None  # index None: keyword only
    arch_kw: tuple[int, str] | None = None  # pycuda's arch=
    files: bool = False  # the source argument lists file paths (cpp_extension.load)
    torch_env: bool = False  # honours TORCH_CUDA_ARCH_LIST
    a_from: int | None = None  # builds sm_XYa for GPUs with XY >= this (Triton), else plain sm_XY
    ptx: bool = False  # the source is PTX itself, not CUDA C++ (Triton's inline asm)
    unit: bool = True  # the source is a whole translation unit nvcc can compile (exact mode)
    constraints: tuple[int, str] | None = None  # Triton's asm constraints: exact mode wraps the PTX in a kernel
    device_arch: bool = False  # CuPy: its own -arch for the running GPU comes after the options


@dataclass(frozen=True)
class _CupyPlan:
    """A CuPy call whose options name an -arch: what each NVRTC in scope makes of it beside
    CuPy's own (cuda/build/cupy_nvrtc.py)."""

    options: tuple[str, ...]  # the options that name it, as written
    suffix: str  # the 'a'/'f' NVRTC 12.9+ keeps, or ""
    refused: tuple[cuda_api.Nvrtc, ...]  # NVRTC ranges that refuse a second -arch
    kept: tuple[cuda_api.Nvrtc, ...]  # NVRTC ranges that build the GPU's number with the suffix
    targets: dict  # arch -> the target the kept ranges build there
    invalid: dict  # arch -> NVRTC's error where that target does not exist


@dataclass(frozen=True)
class _Call:
    """One mechanism call as read where it is: its CUDA texts as built ((Resolved, CudaSource)
    each), its flags, exact mode's Triton constraints and compiler; judged now or, for a torch
    JIT build that TORCH_CUDA_ARCH_LIST decides, once the module is walked (``fc.later``)."""

    site: object
    mech: Mechanism
    units: tuple
    flags: list
    constraints: cuda_api.Resolved | None
    ver: cuda_api.Verifier | None


ENV_NAME = "TORCH_CUDA_ARCH_LIST"
_ENV_SETTERS = ("os.environ.setdefault", "os.putenv")


# Call signatures: torch.utils.cpp_extension.load_inline(name, cpp_sources, cuda_sources=..., ...,
# extra_cuda_cflags=...) and load(name, sources, ..., extra_cuda_cflags=...); cupy.RawKernel(code, name,
# options=()), cupy.RawModule(code=None, ..., options=()), cupy.ElementwiseKernel(in_params, out_params,
# operation, name=..., preamble=...); pycuda.compiler.SourceModule(source, nvcc, options, keep, no_extern_c,
# arch, code, ...); NVRTC nvrtcCreateProgram(src, name, ...); torch.cuda.jiterator._create_jit_fn(code_string).
MECHANISMS = {
    "torch.utils.cpp_extension.load_inline": Mechanism("load_inline", (2, "cuda_sources"), (6, "extra_cuda_cflags"),
                                                       torch_env=True),
    "torch.utils.cpp_extension.load": Mechanism("load", (1, "sources"), (3, "extra_cuda_cflags"), files=True,
                                                torch_env=True),
    # CuPy 12.0-14.2 cupy/cuda/compiler.py appends -arch=sm_<device cc> after the user's options;
    # what NVRTC makes of two -arch is cuda_jit.toml [nvrtc_arch.*] (cuda/build/cupy_nvrtc.py).
    "cupy.RawKernel": Mechanism("cupy.RawKernel", (0, "code"), (2, "options"), device_arch=True),
    "cupy.RawModule": Mechanism("cupy.RawModule", (0, "code"), (2, "options"), device_arch=True),
    "cupy.ElementwiseKernel": Mechanism("cupy.ElementwiseKernel", (2, "operation"), (None, "options"), unit=False,
                                        device_arch=True),
    "pycuda.compiler.SourceModule": Mechanism("SourceModule", (0, "source"), (2, "options"), arch_kw=(5, "arch")),
    "cuda.bindings.nvrtc.nvrtcCreateProgram": Mechanism("nvrtcCreateProgram", (0, "src")),
    "cuda.nvrtc.nvrtcCreateProgram": Mechanism("nvrtcCreateProgram", (0, "src")),
    "torch.cuda.jiterator._create_jit_fn": Mechanism("jiterator", (0, "code_string"), unit=False),
    # triton-lang/triton python/triton/backends/nvidia/compiler.py sm_arch_from_capability:
    # 'suffix = "a" if capability >= 90 else ""', so inline PTX is built for sm_90a on an H100
    # (also at commit 00526b7b third_party/nvidia/backend/compiler.py: make_llir/make_ptx use it as
    # the LLVM processor, the PTX keeps '.target sm_XYa', make_cubin runs ptxas --gpu-name=sm_XYa;
    # '.version' is ptx_get_version(ptxas's CUDA): 12.x -> 8.x, 13.x -> 9.x, new enough for the
    # forms of ptx_instructions.toml). Capability is the device's own: every GPU builds for itself.
    "triton.language.inline_asm_elementwise": Mechanism("inline_asm_elementwise", (0, "asm"), a_from=90, ptx=True,
                                                        unit=False, constraints=(1, "constraints")),
    "triton.language.core.inline_asm_elementwise": Mechanism("inline_asm_elementwise", (0, "asm"), a_from=90,
                                                             ptx=True, unit=False, constraints=(1, "constraints")),
    "torch.cuda.jiterator._create_multi_output_jit_fn": Mechanism("jiterator", (0, "code_string"), unit=False),
}

# Said once per run with the number of such files (-v names them): base/notes.py.
UNSEEN_NOTE = ("{n} CUDA {file|files} with arch-specific code {has|have} no build aicompat can see: judged only for "
               "what fails on every compile target of every fleet GPU {it|they} could be built for")

_WGMMA = 'asm volatile("wgmma.fence.sync.aligned;");'
_SRC = f'CUDA_SRC = r"""\n__global__ void k(float* x) {{\n  {_WGMMA}\n  x[0] = 1.f;\n}}\n"""\n'
_TC = 'asm volatile("tcgen05.relinquish_alloc_permit.cta_group::1.sync.aligned;");'


class InlineCudaArch(Rule):
    code = "AIC301"
    name = "inline-cuda-arch"
    tokens = (b"load_inline", b"cpp_extension", b"RawKernel", b"RawModule", b"ElementwiseKernel",
              b"SourceModule", b"nvrtc", b"jiterator", b"inline_asm_elementwise")

    VALID = [
        Example("from torch.utils.cpp_extension import load_inline\n" + _SRC +
                "m = load_inline('k', '', cuda_sources=CUDA_SRC,\n"
                "                extra_cuda_cflags=['-gencode=arch=compute_90a,code=sm_90a'])\n", gpus=["H100"]),
        Example("import cupy\nsrc = '__global__ void k(float* x) { x[0] += 1.f; }'\nk = cupy.RawKernel(src, 'k')\n",
                gpus=["T4", "A100"]),
        Example("from torch.utils.cpp_extension import load_inline\n"
                'SRC = """\n__global__ void k(float* x) {\n#if defined(__CUDA_ARCH_FEAT_SM90_ALL)\n  ' + _WGMMA +
                '\n#else\n  x[0] = 0.f;\n#endif\n}\n"""\nload_inline("k", "", cuda_sources=[SRC])\n',
                gpus=["A100", "H100", "B200"]),
    ]
    VALID += [
        # The -D flag of extra_cuda_cflags turns the sm_89+ cvt off for the A100 build.
        Example("from torch.utils.cpp_extension import load_inline\n"
                'SRC = """\n__global__ void k(unsigned short* y, float a) {\n#ifndef NO_HW_FP8\n'
                '  asm("cvt.rn.satfinite.e4m3x2.f32 %0, %1, %1;" : "=h"(y[0]) : "f"(a));\n#else\n  y[0] = 0;\n#endif\n}\n"""\n'
                'FLAGS = ["-O3", "-DNO_HW_FP8"]\nload_inline("k", "", cuda_sources=SRC, extra_cuda_cflags=FLAGS)\n',
                gpus=["A100"]),
        # A Triton kernel with sm_89+ PTX, launched only where the GPU is capable.
        Example("import torch, triton\nimport triton.language as tl\n\n@triton.jit\ndef k(p):\n"
                "    x = tl.load(p)\n"
                "    y = tl.inline_asm_elementwise('cvt.rn.satfinite.e4m3x2.f32 $0, $1, $1;', '=h,r', [x],\n"
                "                                  dtype=tl.int16, is_pure=True, pack=1)\n"
                "    tl.store(p, y)\n\ndef run(x):\n"
                "    if torch.cuda.get_device_capability() >= (8, 9):\n        k[(1,)](x)\n",
                gpus=["A100", "H100"]),
    ]
    INVALID = [
        # Its twin above with the flag list's -U: the cvt is compiled again, for the A100's sm_80.
        Example("from torch.utils.cpp_extension import load_inline\n"
                'SRC = """\n__global__ void k(unsigned short* y, float a) {\n#ifndef NO_HW_FP8\n'
                '  asm("cvt.rn.satfinite.e4m3x2.f32 %0, %1, %1;" : "=h"(y[0]) : "f"(a));\n#else\n  y[0] = 0;\n'
                '#endif\n}\n"""\n'
                'FLAGS = ["-O3", "-UNO_HW_FP8"]\nload_inline("k", "", cuda_sources=SRC, extra_cuda_cflags=FLAGS)\n',
                gpus=["A100"],
                findings=[
                    (5, 8, "load_inline: 'cvt.rn.satfinite.e4m3x2.f32' (cvt e4m3x2, CUDA line 4) is rejected when "
                           "built for sm_80 (no arch flags: built for the GPU it runs on): \"Feature 'cvt with "
                           ".e4m3x2/.e5m2x2' requires .target sm_89 or higher\"; fails on sm_80 (A100). No compile "
                           "target for sm_80 supports cvt e4m3x2: guard it (#if on __CUDA_ARCH_FEAT_SMxx_ALL / "
                           "__CUDA_ARCH_FAMILY_SPECIFIC__) and dispatch to a fallback kernel."),
                ]),
        # Triton builds sm_90a on Hopper (wgmma is fine there) but sm_100a on Blackwell, which has no wgmma.
        Example("import triton.language as tl\n"
                "def body(x):\n    return tl.inline_asm_elementwise('wgmma.fence.sync.aligned; mov.b32 $0, $1;',\n"
                "        '=r,r', [x], dtype=tl.int32, is_pure=False, pack=1)\n", gpus=["H100", "B200"],
                findings=[
                    (3, 39, "inline_asm_elementwise: 'wgmma.fence.sync.aligned' (wgmma, CUDA line 1) is rejected "
                            "when built for sm_100a (Triton builds sm_XYa from sm_90 on, plain sm_XY below): "
                            "\"Instruction 'wgmma.fence' not supported on .target 'sm_100a'\"; fails on sm_100 "
                            "(B200). Triton builds for the GPU it runs on and inline PTX has no #if: launch this "
                            "kernel only where torch.cuda.get_device_capability() is one that accepts wgmma (9.0) "
                            "and use a fallback elsewhere."),
                ]),
        Example("from torch.utils.cpp_extension import load_inline\n" + _SRC +
                "m = load_inline('k', '', cuda_sources=CUDA_SRC)\n", gpus=["H100"],
                findings=[
                    (4, 17, "load_inline: 'wgmma.fence.sync.aligned' (wgmma, CUDA line 3) is rejected when built "
                           "for sm_90 (no arch flags: built for the GPU it runs on): \"Instruction 'wgmma.fence' "
                           "not supported on .target 'sm_90'\"; fails on sm_90 (H100). Build with -gencode "
                           "arch=compute_90a,code=sm_90a."),
                ]),
        Example("import cupy\nK = cupy.RawModule(code='''\n__global__ void k() {\n  " + _TC + "\n}\n''')\n",
                gpus=["H100", "B200"],
                findings=[
                    (4, 17, "cupy.RawModule: 'tcgen05.relinquish_alloc_permit.cta_group::1.sync.aligned' (tcgen05, "
                           "CUDA line 3) is rejected when built for sm_90, sm_100 (no -arch option: CuPy builds the "
                           "plain sm_XY of the GPU it runs on): \"Instruction "
                           "'tcgen05.relinquish_alloc_permit' not supported on .target 'sm_100'\"; "
                           "fails on sm_90 (H100), sm_100 (B200). Pass '-arch=sm_100a' in options on sm_100 only "
                           "(CuPy with NVRTC 12.9 or later builds the GPU's own sm_XY with the option's suffix; "
                           "before 12.9 NVRTC refuses a second -arch: load an nvcc-built cubin with "
                           "cupy.RawModule(path=...) there); no compile target for sm_90 supports it: guard it and "
                           "dispatch to a fallback kernel there."),
                ]),
        Example("from pycuda.compiler import SourceModule\n"
                "mod = SourceModule('__global__ void k() { " + _WGMMA.replace('"', '\\"') + " }', arch='sm_90')\n",
                gpus=["H100"],
                findings=[
                    (2, 58, "SourceModule: 'wgmma.fence.sync.aligned' (wgmma, CUDA line 1) is rejected when built "
                            "for sm_90 (arch='sm_90'): \"Instruction 'wgmma.fence' not supported on .target "
                            "'sm_90'\"; fails on sm_90 (H100). Build with -gencode arch=compute_90a,code=sm_90a."),
                ]),
    ]
    # C++ intrinsics declared only for some targets, and CuTe atoms (a trap, not a compile error).
    _F2 = ('SRC = """\n__global__ void scale2(float2* y, const float2* x, float2 s) {\n'
           '  y[threadIdx.x] = __fmul2_rn(x[threadIdx.x], s);\n}\n"""\n')
    _STSM = ('SRC = """\n#include <cute/tensor.hpp>\nusing namespace cute;\ntemplate <class T>\n'
             '__global__ void epilogue(T* out) {\n  using StoreAtom = Copy_Atom<SM90_U32x4_STSM_N, T>;\n'
             '  StoreAtom atom;\n  (void)atom;\n  out[threadIdx.x] = T(0);\n}\n"""\n')
    _CUTE_INC = 'load_inline("epi", "", cuda_sources=[SRC], extra_include_paths=["third_party/cutlass/include"])\n'
    INVALID += [
        Example("from torch.utils.cpp_extension import load_inline\n" + _F2 +
                'load_inline("scale2", "", cuda_sources=[SRC], extra_cuda_cflags=["-gencode=arch=compute_90a,code=sm_90a"])\n',
                gpus=["H100"],
                findings=[
                    (4, 20, "load_inline: '__fmul2_rn' (float2_math, CUDA line 3) is rejected when built for sm_90a "
                            "(its -gencode/-arch flags): \"identifier \"__fmul2_rn\" is undefined\"; fails on sm_90 "
                            "(H100). No compile target for sm_90 supports float2_math: guard it (#if on "
                            "__CUDA_ARCH_FEAT_SMxx_ALL / __CUDA_ARCH_FAMILY_SPECIFIC__) and dispatch to a fallback "
                            "kernel."),
                ]),
        Example("from torch.utils.cpp_extension import load_inline\n" + _STSM + _CUTE_INC, gpus=["A100", "H100"],
                findings=[
                    (7, 31, "load_inline: 'SM90_U32x4_STSM_N' (CuTe stmatrix atom, CUDA line 6) compiles to "
                            "CUTE_INVALID_CONTROL_PATH, a trap at run time, when built for sm_80: CuTe emits its "
                            "instruction only where CUTE_ARCH_STSM_SM90_ENABLED is defined (sm_90, sm_90a); affects "
                            "sm_80 (A100)"),
                ]),
    ]
    VALID += [
        # The twins: the float2 form only where it is declared, the stmatrix atom only from sm_90 on.
        Example("from torch.utils.cpp_extension import load_inline\n" + _F2.replace(
                    "  y[threadIdx.x] = __fmul2_rn(x[threadIdx.x], s);\n",
                    "#if __CUDA_ARCH__ >= 1000\n  y[threadIdx.x] = __fmul2_rn(x[threadIdx.x], s);\n#else\n"
                    "  y[threadIdx.x] = make_float2(x[threadIdx.x].x * s.x, x[threadIdx.x].y * s.y);\n#endif\n") +
                'load_inline("scale2", "", cuda_sources=[SRC], extra_cuda_cflags=["-gencode=arch=compute_90a,code=sm_90a"])\n',
                gpus=["H100", "B200"]),
        Example("from torch.utils.cpp_extension import load_inline\n" + _STSM.replace(
                    "  using StoreAtom = Copy_Atom<SM90_U32x4_STSM_N, T>;\n",
                    "#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900\n"
                    "  using StoreAtom = Copy_Atom<SM90_U32x4_STSM_N, T>;\n#else\n"
                    "  using StoreAtom = Copy_Atom<DefaultCopy, T>;\n#endif\n") + _CUTE_INC,
                gpus=["A100", "H100"]),
    ]

    # TORCH_CUDA_ARCH_LIST is the module's last setting wherever it sits (dead code and
    # functions never called included): the hooks that record it run everywhere, and a
    # mechanism call asks ``fc.ctx.worlds`` itself.
    reach_own = frozenset({"check_call", "check_assign"})

    def __init__(self, matrix) -> None:
        super().__init__(matrix)
        self.features = cuda_api.load_features(matrix)
        self.call_tails = frozenset({q.rsplit(".", 1)[-1] for q in MECHANISMS} | {"setdefault", "putenv"})
        self._sources: dict[tuple, cuda_api.CudaSource] = {}

    def _judged(self, archs, target) -> list[str]:
        """The fleet GPUs CUDA 13.0's compile targets run on; the others (V100) are said once, in a note."""
        note = self.matrix.unbuilt_note(archs, "AIC301", target.describe)
        if note is not None and note not in self.notes:
            self.notes.append(note)
        return [a for a in archs if self.matrix.buildable(a)]

    def _pass_notes(self, ver: cuda_api.Verifier) -> None:
        """The run-level notes exact mode left while it answered: said as this rule's, in order."""
        self.notes.extend(ver.notes)
        ver.notes.clear()

    def known_names(self) -> set[str]:
        return set(MECHANISMS)

    @classmethod
    def explain_facts(cls, matrix) -> str:
        table = matrix.files.get("ptx_instructions.toml", {})
        pats = table.get("pattern", {})
        lines = [f"PTX instructions -> compile targets whose ptxas accepts them (version_matrix/ptx_instructions.toml, "
                 f"generated by tools/gen_ptx_table.py: {table.get('forms', 0)} forms verified with ptxas, "
                 f"{len(pats)} token patterns, {len(table.get('wrapper', {}))} cuda::ptx wrappers); per opcode:"]
        for key, e in pats.items():
            if not e["modifiers"]:
                lines.append(f"- {key}: {', '.join(e['targets'])}")
        lines.append("CUDA C++ features -> compile targets nvcc 13.0 accepts (proved by fixtures/kernels):")
        for name, e in matrix.section("cuda_features.toml", "feature").items():
            lines.append(f"- {name}: {', '.join(e['targets'])}")
            lines.append(f"    {e['summary']}; corpus: {', '.join(e['corpus']) or '-'}")
        return "\n".join(lines)

    def source(self, text: str, ptx: bool = False, path: str | None = None, cuda: str | None = None) -> cuda_api.CudaSource:
        key = (hash(text), len(text), ptx, path)
        src = self._sources.get(key)
        if src is None:
            src = self._sources[key] = cuda_api.CudaSource(text, self.features, ptx=ptx)
            if path is not None:  # a file: follow its in-tree includes; a header is not compiled alone
                src.context = cuda_api.default_context(path, toolkit=_toolkit(cuda))
        return src

    # -- Python calls that compile CUDA ---------------------------------------
    def check_call(self, site, qualname, fc):
        if qualname in _ENV_SETTERS:
            if len(site.node.args) >= 2 and not site.node.args[0].keyword:
                self._set_env(site.node.args[0].value, site.node.args[1].value, site.node, fc)
            return []
        mech = MECHANISMS.get(qualname)
        if mech is None or site.has_star or not fc.ctx.worlds:
            return []
        arg = site.arg(*mech.source)
        texts: list[cuda_api.Resolved] = []
        if mech.files:
            texts = [r for r in cuda_api.read_files(arg, fc) if r.file.suffix in (".cu", ".cuh")] if arg is not None else []
        else:
            r = cuda_api.resolve_text(arg, fc)
            if r:
                texts.append(r)
        if not texts:
            return []
        flags: list[str] = []
        fexpr = site.arg(*mech.flags) if mech.flags is not None else None
        unknown = None  # why what is built is not known: then only what no target of the GPU accepts is judged
        if fexpr is not None:
            got = cuda_api.string_list(fexpr, fc)
            if got is None:
                unknown = "not known here"
            else:
                flags = got
        build = self._build(site, mech, flags, fc) if unknown is None else None
        if build is not None and build[1] is None:
            unknown, build = "its backend adds -gencode flags of its own", None
        plan = self._cupy_plan(site, flags, fc) if mech.device_arch and build is not None else None
        if isinstance(plan, str):
            unknown, build, plan = plan, None, None
        ver = self.verifier if (mech.unit or mech.constraints) and unknown is None else None
        # Everything the call's names say is read here, where its scopes are; only the
        # judgement may wait for the module's TORCH_CUDA_ARCH_LIST.
        constraints = cuda_api.resolve_text(site.arg(*mech.constraints), fc) if ver and mech.constraints else None
        units = []
        for res in texts:
            src = self.source(res.text, mech.ptx)
            if not src.occurrences and ver is None:
                continue
            units.append((res, self._as_built(src, site, mech, res, fc)))
        if not units:
            return []
        call = _Call(site, mech, tuple(units), flags, constraints, ver)
        if unknown is not None:
            return self._judge_unknown(call, unknown, fc)
        if build is None:  # torch's JIT without arch flags builds what TORCH_CUDA_ARCH_LIST says
            fc.later(lambda: self._judge_call(call, self._env_build(mech, fc), fc))
            return []
        if plan is not None:
            return self._judge_cupy(call, plan, fc)
        return self._judge_call(call, build, fc)

    def _judge_call(self, call: _Call, build: tuple, fc, per_arch: dict | None = None) -> list[Finding]:
        out = []
        for res, src in call.units:
            out.extend(self._judge_python(call, res, src, build[0], build[1], fc, per_arch))
        return out

    def _cupy_plan(self, site, flags: list[str], fc) -> _CupyPlan | str | None:
        """What a CuPy call's -arch options make with each NVRTC in scope; None without one (the
        GPU's plain sm_XY in every release), a reason when that is not known."""
        values = cuda_api.arch_values(flags)
        if values is None:
            return "its options name targets with -gencode/-code, which NVRTC's reading of is not modelled"
        if not values:
            return None
        jit = site.kw.get("jitify")
        if jit is not None and not (isinstance(jit, cst.Name) and jit.value == "False"):
            return "jitify rewrites the options"
        worlds = cuda_api.nvrtc_worlds(self.matrix, fc.target.pins, fc.target.releases, fc.target.cuda)
        if worlds is None:
            return "the CuPy or CUDA release it runs with is not one modelled"
        refused = tuple(w for w in worlds if w.resolves == "refused")
        kept = tuple(w for w in worlds if w.resolves != "refused")
        targets: dict[str, str] = {}
        invalid: dict[str, str] = {}
        if kept:
            for arch in self._judged(sorted({w.arch for w in fc.ctx.worlds}), fc.target):
                t, err = cuda_api.target_for(arch, values, kept[0], self.matrix.targets)
                if t is not None:
                    targets[arch] = t
                elif err is not None:
                    invalid[arch] = err
                else:
                    return "its options name both an 'a' and an 'f' target"
        suffix = next((t[-1] for t in targets.values() if t[-1] in "af"), "")
        shown = tuple(f for f in flags if "arch" in f or f in values)
        return _CupyPlan(shown, suffix, refused, kept, targets, invalid)

    def _judge_cupy(self, call: _Call, plan: _CupyPlan, fc) -> list[Finding]:
        """A CuPy call with an -arch option: where NVRTC refuses the options (before 12.9, or a
        GPU without the target they ask for), then the kernel text against what it builds."""
        site: Any = call.site  # a CallSite
        mech = call.mech
        fleet = self._judged(sorted({w.arch for w in fc.ctx.worlds}), fc.target)
        fexpr = site.arg(*mech.flags) if mech.flags is not None else None
        node = fexpr if fexpr is not None else site.node
        opts = ", ".join(repr(o) for o in plan.options)
        out = []
        if plan.refused and fleet:
            labels = ", ".join(n.label for n in plan.refused)
            out.append(Finding(node, f"{mech.label}: options {opts} fail to compile with NVRTC {labels} (CuPy appends "
                                     f"-arch=sm_XY of the GPU after the options and NVRTC before 12.9 takes one -arch "
                                     f"only: \"{plan.refused[0].error}\"); fails on {fc.describe(fleet)}. Use CUDA 12.9 "
                                     f"or later, or drop the -arch option (CuPy builds the GPU's plain sm_XY), or "
                                     f"build the cubin with nvcc and load it with cupy.RawModule(path=...).",
                               frozenset(fleet)))
        if plan.invalid:
            archs = [a for a in fleet if a in plan.invalid]
            wanted = ", ".join(f"{a}{plan.suffix or 'a'}" for a in archs)
            out.append(Finding(node, f"{mech.label}: options {opts} fail to compile on {fc.describe(archs)} with NVRTC "
                                     f"{', '.join(n.label for n in plan.kept)}: CuPy appends -arch=sm_XY of the GPU "
                                     f"and NVRTC builds that number with the option's '{plan.suffix or 'a'}', {wanted}, "
                                     f"a target that does not exist: \"{plan.invalid[archs[0]]}\". Pass that option "
                                     f"only on the GPUs it names a target of (options chosen by the GPU's compute "
                                     f"capability).", frozenset(archs)))
        if plan.targets:
            out.extend(self._judge_call(call, (None, self._cupy_how(plan)), fc, plan.targets))
        return out

    @staticmethod
    def _cupy_how(plan: _CupyPlan) -> str:
        labels = ", ".join(n.label for n in plan.kept)
        opts = ", ".join(repr(o) for o in plan.options)
        if plan.suffix:
            return (f"CuPy appends -arch=sm_XY of the GPU after the options; NVRTC {labels} builds that number with "
                    f"the '{plan.suffix}' of {opts}")
        return f"CuPy appends -arch=sm_XY of the GPU after the options; NVRTC {labels} builds that one, not {opts}"

    def _judge_unknown(self, call: _Call, why: str, fc) -> list[Finding]:
        """A call whose build is not known: what it compiles fails on a GPU whatever its flags say
        where every compile target that runs there rejects it (tcgen05 on an H100); nothing else
        is judged (an #if that compiles the work out may or may not hold)."""
        fleet = self._judged(sorted({w.arch for w in fc.ctx.worlds}), fc.target)
        cuda = fc.target.cuda
        out = []
        for res, src in call.units:
            fails, _drops, _built = judge_gpus(
                fleet, lambda a: [(ts, True, None)] if (ts := cuda_api.candidates(a, self.matrix, cuda)) else [],
                lambda t, _origin, verdict=src.verdict: verdict(t))
            node, delta = self._anchor(call.site, res)
            where = f"{res.file.name} line" if res.file is not None else "CUDA line"
            for occ, archs in _per_occurrence(fails, "failing", delta is None):
                failing = {a: fails[a] for a in archs}
                target = fails[archs[0]].target
                msg = (f"{call.mech.label}: {occ.token!r} ({occ.feature}, {where} {occ.line}) is rejected by every "
                       f"compile target that runs on {fc.describe(failing)}, whatever the call's flags ({why}): "
                       f"\"{_error(occ, target)}\". {self._fix(occ, failing)}")
                out.append(Finding(node, msg, frozenset(failing), **_inside(node, delta, occ)))
        return out

    def _exact_python(self, call: _Call, res, targets, fc) -> dict:
        """nvcc's outcome per target for one source of a Python call (exact mode)."""
        mech, ver = call.mech, call.ver
        flags = list(cuda_api.exact.TORCH_NVCC_FLAGS if mech.torch_env else ()) + list(cuda_api.device_flags(call.flags))
        here = cuda_api.exact.tree_of(Path(fc.path).resolve().parent)
        source_dir = res.file.resolve().parent if res.file is not None else Path(fc.path).resolve().parent
        extra = cuda_api.exact.torch_include_dirs() if mech.torch_env else ()
        if mech.constraints is not None:
            c = call.constraints
            unit = cuda_api.exact.triton_unit(res.text, c.text) if c else None
            if unit is None:
                return {}
            outs = cuda_api.exact.per_target(cast(cuda_api.Verifier, ver), self.matrix, unit, targets, flags, source_dir, here, extra)
            return {t: cuda_api.exact.triton_line(res.text, o) for t, o in outs.items()}
        return cuda_api.exact.per_target(cast(cuda_api.Verifier, ver), self.matrix, res.text, targets, flags, source_dir, here, extra)

    def _as_built(self, src: cuda_api.CudaSource, site, mech: Mechanism, res, fc) -> cuda_api.CudaSource:
        """``src`` with the macros the call's compile defines (its -D/-U flags; for torch's
        JIT also torch's own, build.toml [torch_jit_defines]): all of them when every flag
        is known, else those it passes as an addition."""
        if mech.ptx or mech.flags is None:
            return src
        fexpr = site.arg(*mech.flags)
        got = cuda_api.define_flags(fexpr, fc) if fexpr is not None else ([], True)
        if got is None:
            return src
        flags, complete = got
        ctx = cuda_api.default_context(str(res.file), toolkit=_toolkit(fc.target.cuda)) if res.file is not None \
            else cuda_api.Context(toolkit=_toolkit(fc.target.cuda))
        defines: dict[str, str] = {}
        known = self.matrix.section("build.toml", "torch_jit_defines") if mech.torch_env else {}
        if known:
            data = max(known.items(), key=lambda kv: _vkey(kv[0]))[1]
            defines.update({d: "1" for d in data["defines"]})
            name = cuda_api.resolve_text(site.arg(0, "name"), fc)
            defines[data["name_define"]] = name.text if name is not None else cuda_api.UNKNOWN_VALUE
            if res.file is None:  # load_inline: its cuda_sources follow torch's #include lines
                ctx = dataclasses.replace(ctx, preincluded=tuple(data["prepended"]),
                                          libraries=tuple(data["libraries"]))
        defines.update(cuda_api.nvcc_defines(flags))
        if not defines and not complete:
            return src
        # torch's own flags and the call's are all that nvcc gets: any other macro is undefined
        # (CuPy, PyCUDA: their own options are not read here, so the call's only add).
        whole = complete and bool(known)
        ctx = dataclasses.replace(ctx, defines=defines) if whole else dataclasses.replace(ctx, some_defines=defines)
        cache = src.__dict__.setdefault("_calls", {})
        key = (tuple(sorted(defines.items())), whole, ctx.path, ctx.preincluded)
        if key not in cache:
            cache[key] = src.with_context(ctx)
        return cache[key]

    def _build(self, site, mech: Mechanism, flags: list[str], fc) -> tuple[cuda_api.Build | None, str | None] | None:
        """What gets built, (build, how): from the call's arch flags or the GPU itself (build
        None); ``how`` None when a backend adds flags that are not modelled; None when it is
        what TORCH_CUDA_ARCH_LIST says (``_env_build``, once the module is walked)."""
        if mech.device_arch:
            backend = site.kw.get("backend")
            named = cuda_api.resolve_text(backend, fc) if backend is not None else None
            if backend is not None and (named is None or named.text != "nvrtc") \
                    and any("arch" in f or "code" in f for f in flags):
                return None, None  # backend="nvcc" adds -gencode for the GPU beside the user's: not modelled
            return None, "no -arch option: CuPy builds the plain sm_XY of the GPU it runs on"
        if mech.arch_kw is not None:
            a = site.arg(*mech.arch_kw)
            r = cuda_api.resolve_text(a, fc) if a is not None else None
            if r and re.fullmatch(r"sm_\d+[af]?", r.text):
                return cuda_api.Build(cubins=[r.text]), f"arch={r.text!r}"
        # torch ignores TORCH_CUDA_ARCH_LIST once any extra flag mentions "arch".
        if any("arch" in f for f in flags):
            b = cuda_api.parse_nvcc_flags(flags, self.matrix, fc.target.cuda)
            if not b.empty():
                return b, "its -gencode/-arch flags"
        if mech.torch_env:
            return None
        return self._fallback(mech)

    def _env_build(self, mech: Mechanism, fc) -> tuple[cuda_api.Build | None, str]:
        """What torch's JIT builds without arch flags: the module's TORCH_CUDA_ARCH_LIST, else the GPU's own."""
        env = _torch_arch_list(fc)
        if env is not None:
            b, _bad = cuda_api.parse_torch_arch_list(env, self.matrix)
            if not b.empty():
                return b, f"TORCH_CUDA_ARCH_LIST={env!r}"
        return self._fallback(mech)

    @staticmethod
    def _fallback(mech: Mechanism) -> tuple[None, str]:
        if mech.a_from is not None:
            return None, f"Triton builds sm_XYa from sm_{mech.a_from} on, plain sm_XY below"
        return None, "no arch flags: built for the GPU it runs on"

    # -- TORCH_CUDA_ARCH_LIST set by the module itself ---------------------------
    def check_assign(self, node: cst.Assign, fc) -> list[Finding]:
        if _names_env(fc):
            for t in node.targets:
                tgt = t.target
                if isinstance(tgt, cst.Subscript) and len(tgt.slice) == 1 and \
                        isinstance(tgt.slice[0].slice, cst.Index) and fc.resolve(tgt.value) == "os.environ":
                    self._set_env(tgt.slice[0].slice.value, node.value, node, fc)
        return []

    def _set_env(self, key, value, node, fc) -> None:
        """Record ``os.environ[key] = value`` (or setdefault/putenv) when ``key`` is TORCH_CUDA_ARCH_LIST:
        the value's text, None when it is not known; by statement, kept in the module's order."""
        if not _names_env(fc):
            return
        k = cuda_api.resolve_text(key, fc)
        if k is None or k.text != ENV_NAME:
            return
        r = cuda_api.resolve_text(value, fc)
        fc.state.setdefault("torch_arch_list", {})[id(node)] = r.text if r is not None else None

    def _judge_python(self, call: _Call, res, src, build, how, fc, per_arch: dict | None = None):
        ver: Any  # a Verifier with a toolkit where the messages below name its release
        site, mech, ver = call.site, call.mech, call.ver
        chosen: dict[str, str] = {}
        fleet = self._judged(sorted({w.arch for w in fc.ctx.worlds}), fc.target)
        for arch in fleet:
            target = arch if build is None else cuda_api.code_for(arch, build, self.matrix)
            if build is None and mech.a_from is not None:
                target = _triton_target(arch, mech, self.matrix)
            if per_arch is not None:  # CuPy: what NVRTC builds beside its own -arch
                target = per_arch.get(arch)
            if target is not None:  # else no kernel image at all: AIC302's finding, not this one
                chosen[arch] = target
        # nvcc compiles every target of the build, and one that ptxas rejects fails the
        # whole build, on every GPU (-arch=sm_90a also embeds compute_90 PTX).
        built = build.every_target() if build is not None else []
        want = list(dict.fromkeys(list(chosen.values()) + built))
        nvcc = self._exact_python(call, res, want, fc) if ver and want else {}
        if ver:
            self._pass_notes(ver)

        def verdict_of(target, _origin):  # nvcc's where it decided, else the static one
            o = nvcc.get(target)
            return o if o is not None and o.status in cuda_api.exact.DECIDED else src.verdict(target)

        fails, drops, _ = judge_gpus(fleet, lambda a: [([chosen[a]], False, None)] if a in chosen else [],
                                     verdict_of)
        by_nvcc = {id(o) for o in nvcc.values()}
        failing = {a: (v, chosen[a]) for a, v in fails.items() if id(v) not in by_nvcc}
        confirmed = {a: (v, chosen[a]) for a, v in fails.items() if id(v) in by_nvcc}
        dropped = {a: (v, chosen[a]) for a, v in drops.items() if id(v) not in by_nvcc}
        emptied = {a: (v, chosen[a]) for a, v in drops.items() if id(v) in by_nvcc}
        whole = self._build_failure(built, src, nvcc)
        if whole is not None:  # a target that fails the build fails it on every GPU not failing already
            for arch in fleet:
                if arch not in fails:
                    dropped.pop(arch, None)
                    emptied.pop(arch, None)
                    (confirmed if whole[2] else failing)[arch] = whole[:2]
            failing = {a: failing[a] for a in fleet if a in failing}
            confirmed = {a: confirmed[a] for a in fleet if a in confirmed}
        out = []
        node, delta = self._anchor(site, res)
        where = f"{res.file.name} line" if res.file is not None else "CUDA line"
        unverified = cuda_api.exact.first_unverified(nvcc.values())
        suffix = f" (nvcc could not verify: {unverified.error})" if unverified is not None else ""
        # One finding per instruction: its message, fix and fleet members from that same occurrence.
        for occ, archs in _per_occurrence(failing, "failing", delta is None):
            target = failing[archs[0]][1]
            targets = sorted({failing[a][1] for a in archs}, key=_tnum)
            fails = {a: failing[a] for a in archs}
            msg = (f"{mech.label}: {occ.token!r} ({occ.feature}, {where} {occ.line}) is rejected when built for "
                   f"{', '.join(_shown(t, build) for t in targets)} ({_how(how, build, targets)}): "
                   f"\"{_error(occ, target)}\"; fails on "
                   f"{fc.describe(fails)}. {self._fix_built(occ, fails, build, mech)}{suffix}")
            out.append(Finding(node, msg, frozenset(fails), **_inside(node, delta, occ)))
        if not failing and unverified is not None:
            self.notes.append(f"{fc.path}: {mech.label}: could not verify with nvcc "
                              f"{ver.toolkit.release}: {unverified.error}; the static verdict stands")
        if confirmed:
            targets = sorted({t for _, t in confirmed.values()}, key=_tnum)
            o, target = nvcc[targets[0]], targets[0]
            at = _Spot(o.line or 0, o.token or _first_word(res.text, o.line))
            static = [occ for occ in src.verdict(target).failing if occ.line == o.line]
            fix = f" {self._fix_built(static[0], confirmed, build, mech)}" if static else ""
            line = f" {where} {o.line}" if o.line else ""
            msg = (f"{mech.label}: nvcc {ver.toolkit.release} rejects{line or ' it'} when built for "
                   f"{', '.join(_shown(t, build) for t in targets)} ({_how(how, build, targets)}): \"{o.error}\"; fails on {fc.describe(confirmed)}.{fix}")
            out.append(Finding(node, msg, frozenset(confirmed), **(_inside(node, delta, at) if o.line else {})))
        for occ, archs in _per_occurrence(dropped, "dropped", delta is None):
            target = dropped[archs[0]][1]
            drops = {a: dropped[a] for a in archs}
            if occ.trap:
                msg = f"{mech.label}: {_trap_text(occ, f'{where} {occ.line}', f'when built for {target}')}; affects " \
                      f"{fc.describe(drops)}"
            else:
                msg = (f"{mech.label}: {occ.feature} ({occ.token!r}, {where} {occ.line}) is compiled out by its #if "
                       f"guard, with no #else, when built for {target}: the kernel silently does nothing there; "
                       f"affects {fc.describe(drops)}")
            out.append(Finding(node, msg, frozenset(drops), severity="warning", **_inside(node, delta, occ)))
        if emptied:
            _o, target = next(iter(emptied.values()))
            msg = (f"{mech.label}: nvcc {ver.toolkit.release} builds only empty kernels for {target} (every kernel "
                   f"body is just 'ret': an #if guard compiled the work out, with no #else): the kernel silently "
                   f"does nothing there; affects {fc.describe(emptied)}")
            out.append(Finding(node, msg, frozenset(emptied), severity="warning"))
        return out

    @staticmethod
    def _build_failure(built: list[str], src, nvcc: dict):
        """(verdict, target, by nvcc?) of the first built target that rejects the source, or None."""
        for t in built:
            o = nvcc.get(t)
            if o is not None and o.status in cuda_api.exact.DECIDED:
                if o.status == "fail":
                    return o, t, True
                continue
            v = src.verdict(t)
            if v.status == "fail":
                return v, t, False
        return None

    def _anchor(self, site, res):
        """Report inside the CUDA string when it is one literal in this call's file."""
        if isinstance(res.node, cst.SimpleString) and res.file is None:
            return res.node, 0
        return site.node, None

    def _fix_built(self, occ, failing: dict, build: cuda_api.Build | None, mech: Mechanism) -> str:
        """The fix, first dropping PTX the build embeds unasked when that is what fails."""
        if mech.device_arch:
            return self._fix_cupy(occ, failing)
        if mech.a_from is not None:
            return self._fix_triton(occ, mech)
        implied = [t for t in {v[1] for v in failing.values()} if build is not None and t in build.implied]
        if not implied:
            return self._fix(occ, failing)
        assert build is not None  # else nothing is implied
        own = {a: v for a, v in failing.items() if v[1] not in implied}
        wanted = [c for c in build.cubins if c not in implied]
        gencode = " ".join(f"-gencode arch=compute_{t[3:]},code={t}" for t in wanted)
        text = f"Build with {gencode} instead, which embeds no {', '.join(_shown(t, build) for t in implied)} PTX"
        tail = f"; {self._fix(occ, own)}" if own else "."  # not ``rest``: a list above
        return text + tail

    def _fix_cupy(self, occ, failing: dict) -> str:
        """CuPy builds the GPU's own number: an 'a'/'f' -arch option gets that GPU's own 'a'/'f'
        target with NVRTC 12.9+ (cuda_jit.toml [nvrtc_arch.*]); else an nvcc-built cubin."""
        ok = self._capable(occ, failing)
        own = {a: [t for t in v if t[:-1] == a and t[-1] in "af"] for a, v in ok.items()}
        able = [a for a in failing if own[a]]
        other = sorted({v[0] for a, v in ok.items() if v and not own[a]}, key=_tnum)
        rest = sorted((a for a, v in ok.items() if not v), key=_tnum)
        parts = []
        if able:
            opts = ", ".join(f"'-arch={t}'" for t in sorted({own[a][0] for a in able}, key=_tnum))
            parts.append(f"pass {opts} in options on {', '.join(able)} only (CuPy with NVRTC 12.9 or later builds the "
                         f"GPU's own sm_XY with the option's suffix; before 12.9 NVRTC refuses a second -arch: load an "
                         f"nvcc-built cubin with cupy.RawModule(path=...) there)")
        if other:
            parts.append(f"build {', '.join(other)} with nvcc (-gencode arch=compute_XY,code=sm_XY) and load the cubin "
                         f"with cupy.RawModule(path=...)")
        if rest:
            parts.append(f"no compile target for {', '.join(rest)} supports it: guard it and dispatch to a fallback "
                         f"kernel there")
        text = "; ".join(parts)
        return text[:1].upper() + text[1:] + "."

    def _fix_triton(self, occ, mech: Mechanism) -> str:
        """Triton builds the running GPU's own target and its inline PTX has no #if: the guard
        is a device check around the launch (a Python ``if`` the guard model reads)."""
        ok = [a for a in self.matrix.by_capability(self.matrix.archs) if _triton_target(a, mech, self.matrix) in occ.targets]
        if not ok:
            return f"No GPU's Triton target accepts {occ.feature}: use another instruction."
        caps = ", ".join(".".join(map(str, self.matrix.archs[a].capability[:2])) for a in ok)
        return (f"Triton builds for the GPU it runs on and inline PTX has no #if: launch this kernel only where "
                f"torch.cuda.get_device_capability() is one that accepts {occ.feature} ({caps}) and use a fallback "
                f"elsewhere.")

    def _capable(self, occ, failing: dict) -> dict[str, list[str]]:
        """{arch: the compile targets that run there and accept the occurrence}."""
        return {a: [t for t in cuda_api.candidates(a, self.matrix) if t in occ.targets] for a in failing}

    def _fix(self, occ, failing: dict) -> str:
        per_arch = list(self._capable(occ, failing).items())
        if all(ok for _, ok in per_arch):
            wanted = sorted({ok[0] for _, ok in per_arch})
            flags = " ".join(f"-gencode arch=compute_{t[3:]},code={t}" for t in wanted)
            return f"Build with {flags}."
        return (f"No compile target for {', '.join(a for a, ok in per_arch if not ok)} supports {occ.feature}: guard "
                f"it (#if on __CUDA_ARCH_FEAT_SMxx_ALL / __CUDA_ARCH_FAMILY_SPECIFIC__) and dispatch to a fallback "
                f"kernel.")

    # -- .cu / .cuh / .ptx files -----------------------------------------------
    def check_cuda_file(self, text: str, path: str, target, cuda: str | None, reads: list | None = None):
        """Findings (line, column, message, archs, severity) for a CUDA or PTX file,
        judged for the targets its build produces (cuda/build/context.py)."""
        src = self.source(text, path.endswith(".ptx"), path, cuda)
        fleet = self._judged(target.archs, target)
        # A header is no build unit: nvcc alone would emit none of its (uncalled) device code.
        ver: Any = self.verifier if path.endswith(".cu") else None
        if not src.occurrences and ver is None:
            return []
        out = []
        ptx_target = None
        if path.endswith(".ptx"):
            m = re.search(r"^\s*\.target\s+(sm_\d+[af]?)", text, re.M)
            ptx_target = m.group(1) if m else None
        ctx = None if ptx_target else cuda_api.context_for(Path(path), target.archs, self.matrix, cuda)
        if ctx is not None and reads is not None:
            reads.extend(r for r in ctx.reads if r not in reads)
        if ctx is not None and any(_unseen(o) for o in ctx.origins):
            self.notes.append(counted(UNSEEN_NOTE, path))
        nvcc: dict
        seen: dict
        nvcc, seen = {}, {}
        if ver is not None and not ptx_target:
            assert ctx is not None  # no .target line: context_for gave it
            # Exact mode compiles for the targets the build makes for each GPU.
            cands = {a: sorted({t for ts, _e, _o in cuda_api.groups(ctx, a, self.matrix, cuda) for t in ts}, key=_tnum)
                     for a in fleet}
            cands = {a: c for a, c in cands.items() if c}
            if cands:
                static_ok = {t for c in cands.values() for t in c if src.verdict(t).status == "ok"}
                folder = Path(path).resolve().parent
                nvcc, seen = cuda_api.exact.per_gpu(ver, self.matrix, text, cands, static_ok, _define_flags(ctx), folder,
                                           cuda_api.exact.tree_of(folder))
                self._pass_notes(ver)
        # built: arch -> (targets, every candidate?, where the build says so)
        if ptx_target:  # the file names its one target
            fails, _drops, _built = judge_gpus(fleet, lambda a: [([ptx_target], True, None)],
                                               lambda t, _o: src.verdict(t))
            drops: dict
            built: dict
            drops, built = {}, {}
        else:  # a GPU nvcc judged (exact mode) is _exact_file's to report
            assert ctx is not None  # no .target line: context_for gave it
            fails, drops, built = judge_gpus(
                fleet, lambda a: [] if a in nvcc else cuda_api.groups(ctx, a, self.matrix, cuda),
                lambda t, origin: self._verdict_via(src, t, origin, path, cuda))
        if drops and path.endswith(".cu"):
            # Run-time effects only where main() launches the kernels; the build still compiles them all.
            away = self._turned_away(src, next(iter(drops.values())).target, list(drops))
            drops = {a: v for a, v in drops.items() if a not in away}
            drops = self._run_by_tests(src, drops)
        unverified = cuda_api.exact.first_unverified(seen.values())
        suffix = f" (nvcc could not verify: {unverified.error})" if unverified is not None else ""
        for occ, archs in _per_occurrence(fails, "failing"):
            v = fails[archs[0]]
            archs_fail = {a: fails[a] for a in archs}
            where, said = _built_where(ptx_target, [built.get(a) for a in archs])
            ok_targets = sorted(occ.targets, key=_tnum)
            msg = (f"{occ.token!r} ({occ.feature}) is rejected by {where}{said}: \"{_error(occ, v.target)}\"; "
                   f"fails on {target.describe(archs_fail)}. Accepted by {', '.join(ok_targets)}: guard it and "
                   f"provide a fallback{suffix}")
            out.append(TextFinding(occ.line, max(occ.column, 1), msg, frozenset(archs_fail), "error"))
        if not fails and unverified is not None:
            self.notes.append(f"{path}: could not verify with nvcc {ver.toolkit.release}: {unverified.error}; "
                              "the static verdict stands")
        for occ, archs in _per_occurrence(drops, "dropped"):
            archs_drop = {a: drops[a] for a in archs}
            info = [built.get(a) for a in archs]
            every = all(i is None or i[1] for i in info)
            origin = next((i[2] for i in info if i and i[2] is not None), None)
            where = "every target of" if _unseen(origin) else "every target that runs on" if every else \
                f"{', '.join(sorted({t for i in info if i for t in i[0]}, key=_tnum))}, the targets built for"
            said = f" ({origin.how})" if origin is not None else ""
            if occ.trap:
                when = "on every target of every GPU it could be built for" if _unseen(origin) else \
                    "on every target that runs there" if every else \
                    f"on {', '.join(sorted({t for i in info if i for t in i[0]}, key=_tnum))}"
                msg = f"{_trap_text(occ, '', when + said)}; affects {target.describe(archs_drop)}"
            else:
                msg = (f"{occ.feature} ({occ.token!r}) is compiled out by its #if guard, with no #else, on {where} "
                       f"{target.describe(archs_drop)}{said}: the kernel silently does nothing there")
            out.append(TextFinding(occ.line, max(occ.column, 1), msg, frozenset(archs_drop), "warning"))
        out.extend(self._exact_file(src, text, target, nvcc, ver))
        return out

    def _turned_away(self, src: cuda_api.CudaSource, target: str, archs: list[str]) -> set[str]:
        """The fleet GPUs the program's main() returns on before launching a kernel (cuda/cpp/host_gate.py)."""
        conds = cuda_api.host_gate.gates(cuda_api.cxx.mask(src.clean, src.preprocessed(target)))
        return {a for a in archs if conds and a in self.matrix.archs
                and cuda_api.host_gate.turned_away(conds, tuple(self.matrix.archs[a].capability[:2]))}

    def _run_by_tests(self, src: cuda_api.CudaSource, drops: dict[str, cuda_api.Verdict]) -> dict[str, cuda_api.Verdict]:
        """A unit test of a harness that filters tests by compute capability (CUTLASS's SM90_*
        tests run only on 9.0): its traps and emptied kernels cannot happen on the GPUs filtered out."""
        filters = cuda_api.host_gate.harness_filters(self.matrix, src.clean)
        if not filters:
            return drops
        out = {}
        for arch, v in drops.items():
            spans = cuda_api.host_gate.test_spans(cuda_api.cxx.mask(src.clean, src.preprocessed(v.target)))
            cap = self.matrix.archs[arch].capability if arch in self.matrix.archs else None
            if cap is None:
                out[arch] = v
                continue
            cc = cap[0] * 10 + cap[1]
            kept = [o for o in v.dropped if not cuda_api.host_gate.filtered_out(o.line, spans, filters, cc)]
            if kept:
                out[arch] = dataclasses.replace(v, dropped=kept)
        return out

    def _verdict_via(self, src: cuda_api.CudaSource, target: str, origin, path: str, cuda: str | None) -> cuda_api.Verdict:
        """A header's verdict for ``target`` inside the unit that includes it: what that unit's
        live kernels do not reach is not emitted (cuda/cpp/tu.py). The header's own verdict when the
        unit cannot be built."""
        # A header alone does not see the macros its includer defines before the #include:
        # there the build's -D flags only add, the unit below knows them all.
        alone = dataclasses.replace(origin, defines_known=False, undefined=()) if origin.via else origin
        v = _built(src, alone).verdict(target)
        if v.status == "ok" or not origin.via or not path.endswith(_HEADERS):
            return v
        unit = self._unit(origin.via, cuda, origin)
        if unit is None:
            return v
        tu_src, lines = unit
        me = lines.get(os.path.normpath(os.path.abspath(path)))
        if not me:
            return v
        tv = tu_src.verdict(target)
        bad = {(me[o.line], o.token) for o in tv.failing if o.line in me}
        empty = {(me[o.line], o.token) for o in tv.dropped if o.line in me}
        out = cuda_api.Verdict(target, "ok")
        out.failing = [o for o in v.failing if (o.line, o.token) in bad]
        out.dropped = [o for o in v.dropped if (o.line, o.token) in empty]
        out.status = "fail" if out.failing else "empty" if out.dropped else "ok"
        return out

    def _unit(self, via: str, cuda: str | None, origin):
        """(CudaSource of the unit, {header path: {unit line: header line}}) for the source
        ``via`` with the -D flags of ``origin``'s build, built once per run; None past tu.py's bounds."""
        cache = self.__dict__.setdefault("_units", {})
        key = (via, origin.defines, origin.defines_known, origin.undefined)
        if key not in cache:
            cache[key] = None
            ctx = cuda_api.default_context(via, toolkit=_toolkit(cuda))
            # The includer is what gets compiled: a build's .cu, or a JIT front-end's source
            # (DeepGEMM compiles a unit around impls/sm90_*.cuh).
            ctx = dataclasses.replace(ctx, translation_unit=True, **cuda_api.define_fields(origin))
            unit = cuda_api.tu.inline(Path(via), ctx.root or Path(via).parent, ctx.include_dirs) if ctx.path else None
            if unit is not None:
                tu_src = cuda_api.CudaSource(unit.text, self.features)
                tu_src.context = ctx
                by_file: dict[str, dict[int, int]] = {}
                for i, (f, ln) in enumerate(unit.where, 1):
                    by_file.setdefault(os.path.normpath(os.path.abspath(f)), {})[i] = ln
                cache[key] = (tu_src, by_file)
        return cache[key]

    def _exact_file(self, src, text: str, target, nvcc: dict, ver) -> list:
        """Findings from nvcc's verdicts per GPU (exact mode): they replace the static ones."""
        out = []
        failed = {a: r for a, r in nvcc.items() if r[0] == "fail"}
        if failed:
            first = next(a for a in target.archs if a in failed)
            _, t, o = failed[first]
            line = o.line or 1
            raw = text.split("\n")[line - 1] if line <= text.count("\n") + 1 else ""
            tok = next((t for t in (o.token, o.token.split(".")[0], _first_word(text, line)) if t and t in raw), "")
            col = (raw.find(tok) if tok else len(raw) - len(raw.lstrip())) + 1
            static = [occ for occ in src.verdict(t).failing if occ.line == o.line]
            hint = (f"Accepted by {', '.join(sorted(static[0].targets, key=_tnum))}: "
                    if static else "")
            msg = (f"nvcc {ver.toolkit.release} rejects {'line ' + str(o.line) if o.line else 'it'} for every compile "
                   f"target that runs there (built for {t}: \"{o.error}\"); fails on {target.describe(failed)}. "
                   f"{hint}guard it and provide a fallback")
            out.append(TextFinding(line, col, msg, frozenset(failed), "error"))
        emptied = {a: r for a, r in nvcc.items() if r[0] == "empty"}
        if emptied:
            t = next(iter(emptied.values()))[1]
            msg = (f"nvcc {ver.toolkit.release} builds only empty kernels on every target that runs on "
                   f"{target.describe(emptied)} (for {t}, every kernel body is just 'ret': an #if guard compiled "
                   f"the work out, with no #else): the kernel silently does nothing there")
            out.append(TextFinding(1, 1, msg, frozenset(emptied), "warning"))
        return out


_HEADERS = (".cuh", ".h", ".hpp", ".hh", ".inl", ".cuinl")


def _define_flags(ctx) -> tuple[str, ...]:
    """-D flags for exact mode: those every origin of the file's build passes alike (one nvcc
    command serves them all); values not known here are left out."""
    sets = [set(o.defines) for o in ctx.origins]
    common = set.intersection(*sets) if sets else set()
    return cuda_api.device_flags([f"-D{k}={v}" for k, v in sorted(common) if v != cuda_api.UNKNOWN_VALUE])


def _built(src: cuda_api.CudaSource, origin) -> cuda_api.CudaSource:
    """``src`` as the build of ``origin`` compiles it (its -D flags), one copy per build."""
    if not origin.defines and not origin.defines_known and not origin.undefined or src.context is None:
        return src
    cache = src.__dict__.setdefault("_builds", {})
    key = (origin.defines, origin.defines_known, origin.undefined)
    if key not in cache:
        cache[key] = src.with_context(dataclasses.replace(src.context, **cuda_api.define_fields(origin)))
    return cache[key]


def _shown(target: str, build: cuda_api.Build | None) -> str:
    """compute_90 for a target the build embeds only as PTX."""
    if build is not None and target in build.ptx and target not in build.cubins:
        return target.replace("sm_", "compute_")
    return target


def _how(how: str, build: cuda_api.Build | None, targets) -> str:
    said = [build.implied[t] for t in targets if build is not None and t in build.implied]
    return f"{how}: {'; '.join(said)}" if said else how


def _built_where(ptx_target, info: list) -> tuple[str, str]:
    """What rejects it (".target sm_90", "every compile target that runs there", or the
    targets the build makes) and where that comes from (" (setup.py line 22 builds ...)")."""
    if ptx_target:
        return f".target {ptx_target}", ""
    origin = next((i[2] for i in info if i and i[2] is not None), None)
    if _unseen(origin):
        where = "every compile target of every GPU it could be built for"
    elif all(i is None or i[1] for i in info):
        where = "every compile target that runs there"
    else:
        where = ", ".join(sorted({t for i in info if i for t in i[0]}, key=_tnum))
    return where, (f" ({origin.how})" if origin is not None else "")


def _unseen(origin) -> bool:
    """Is ``origin`` a file's build aicompat cannot see (cuda/build/context.py _assumed)?"""
    return getattr(origin, "kind", None) == "unseen"


def _common_failing(verdicts: list[cuda_api.Verdict], strict: bool = False) -> cuda_api.Verdict:
    """The first verdict, keeping only the instructions every one of ``verdicts`` rejects
    (those are what keeps the GPU from any build); all of its own if none is common, unless
    ``strict`` (then none)."""
    first = verdicts[0]
    keys = set.intersection(*({(o.line, o.column, o.token) for o in v.failing} for v in verdicts))
    common = [o for o in first.failing if (o.line, o.column, o.token) in keys]
    return cuda_api.Verdict(first.target, first.status, common if strict else common or first.failing, first.dropped)


def judge_gpus(archs, builds_of, verdict_of) -> tuple[dict, dict, dict]:
    """AIC301's one judgement of a CUDA text for each fleet GPU, whether the text is a Python
    string or a file and whoever says how it is built: ``builds_of(arch)`` the builds that may
    run there, each (targets, every candidate?, origin); ``verdict_of(target, origin)`` the
    text's verdict for one target (nvcc's where exact mode decided, else the static one).

    A GPU fails where every target of one of its builds rejects the text, and is left with
    kernels that do nothing where each one rejects it or compiles the work out (no #else).
    Returns (fails, drops, built): {arch: verdict} twice, and {arch: the build judged}."""
    fails: dict[str, cuda_api.Verdict] = {}
    drops: dict[str, cuda_api.Verdict] = {}
    built: dict[str, tuple] = {}
    for arch in archs:
        for targets, every, origin in builds_of(arch):
            verdicts = [verdict_of(t, origin) for t in targets]
            # A build not known: only an instruction every target rejects (compiles out) is its fault.
            strict = getattr(origin, "kind", None) == "unseen"
            # nvcc's outcomes (exact mode) name no occurrences: their status is the verdict
            static = all(isinstance(v, cuda_api.Verdict) for v in verdicts)
            if all(v.status == "fail" for v in verdicts):
                v = verdicts[0] if len(verdicts) == 1 or not static else _common_failing(verdicts, strict)
                if arch not in fails and (not isinstance(v, cuda_api.Verdict) or v.failing):
                    fails[arch] = v
                    built[arch] = (targets, every, origin)
            elif all(v.status in ("fail", "empty") for v in verdicts):
                empty = [v for v in verdicts if v.status == "empty"]
                v = _common_dropped(empty) if strict and static else empty[0]
                if arch not in drops and (not isinstance(v, cuda_api.Verdict) or v.dropped):
                    drops[arch] = v
                    built[arch] = (targets, every, origin)
    return fails, drops, built


def _common_dropped(verdicts: list[cuda_api.Verdict]) -> cuda_api.Verdict:
    """The first verdict, keeping only what every one of ``verdicts`` compiles out."""
    first = verdicts[0]
    keys = set.intersection(*({(o.line, o.column, o.token) for o in v.dropped} for v in verdicts))
    return cuda_api.Verdict(first.target, first.status, first.failing, [o for o in first.dropped
                                                               if (o.line, o.column, o.token) in keys])


def _per_occurrence(by_arch: dict, kind: str, one_per_feature: bool = False):
    """[(occurrence, archs)]: each failing (or dropped) instruction once, with the fleet
    members it fails on; ``one_per_feature`` when all findings land on one call."""
    groups: dict[tuple, tuple] = {}
    for arch, val in by_arch.items():
        v = val[0] if isinstance(val, tuple) else val
        for occ in getattr(v, kind):
            key = (occ.feature,) if one_per_feature else (occ.line, occ.column, occ.token)
            if key not in groups:
                groups[key] = (occ, [])
            if arch not in groups[key][1]:
                groups[key][1].append(arch)
    return sorted(groups.values(), key=lambda g: (g[0].line, g[0].column, g[0].token))


def _trap_text(occ, where: str, when: str) -> str:
    ok = ", ".join(sorted(occ.targets, key=_tnum))
    return (f"{occ.token!r} ({occ.feature}{', ' + where if where else ''}) compiles to CUTE_INVALID_CONTROL_PATH, "
            f"a trap at run time, {when}: CuTe emits its instruction only where {occ.trap} is defined ({ok})")


def _error(occ, target: str) -> str:
    return occ.error.replace("{target}", target)


def _inside(node, delta: int | None, occ) -> dict:
    """Where in the string literal ``node`` the occurrence's text is: the line below
    the literal's first, and the column on that line (found in the literal's source
    text, so escapes and the quotes count); the call itself where there is no literal."""
    if delta is None:
        return {}
    lines = node.value.split("\n")
    index = delta + occ.line - 1
    col = 0
    if index < len(lines):
        raw = lines[index]
        for tok in (occ.token.split(" ")[0], occ.token.split(".")[0]):
            col = raw.find(tok) if tok else -1
            if col >= 0:
                break
        else:  # a macro naming the feature: its use starts the line
            col = len(raw) - len(raw.lstrip()) if index else 0
    return {"line_delta": index, "col_delta": col}


def _toolkit(cuda: str | None) -> tuple[int, int] | None:
    m = re.match(r"(\d+)\.(\d+)", cuda or "")
    return (int(m.group(1)), int(m.group(2))) if m else None


@dataclass(frozen=True)
class _Spot:
    """Where nvcc's error is, in the shape ``_inside`` reads (an occurrence's line and token)."""

    line: int
    token: str


def _first_word(text: str, line: int | None) -> str:
    """The first word on CUDA line ``line``, to put the column on (an asm string's instruction)."""
    lines = text.split("\n")
    if not line or line > len(lines):
        return ""
    m = re.search(r"[A-Za-z_][\w.:]*", lines[line - 1])
    return m.group(0) if m else ""


def _triton_target(arch: str, mech: Mechanism, matrix) -> str:
    """The target Triton compiles for on ``arch``: sm_XYa from ``a_from`` on (triton-lang/triton
    third_party/nvidia/backend/compiler.py sm_arch_from_capability), else plain sm_XY."""
    if int(arch[3:]) >= cast(int, mech.a_from) and f"{arch}a" in matrix.targets:
        return f"{arch}a"
    return arch


def _vkey(v: str) -> tuple:
    return tuple(int(x) for x in re.findall(r"\d+", v)[:2])


def _tnum(t: str):
    return (int(cast(re.Match, re.match(r"sm_(\d+)", t)).group(1)), t)  # t is a target name


def _names_env(fc) -> bool:
    """Does the file's text name TORCH_CUDA_ARCH_LIST at all (asked once per file)?"""
    named = fc.state.get("names_env")
    if named is None:
        named = fc.state["names_env"] = ENV_NAME in fc.text
    return named


def _torch_arch_list(fc) -> str | None:
    """TORCH_CUDA_ARCH_LIST as the module leaves it (``os.environ[...] = ...``,
    ``os.environ.setdefault(...)``, ``os.putenv``), recorded by the hooks wherever the setting
    sits, after the call, in functions not entered or in dead code too: a commented-out line is
    no setting. None when it is not set or its last value is not known."""
    seen = fc.state.get("torch_arch_list")
    return next(reversed(seen.values())) if seen else None
