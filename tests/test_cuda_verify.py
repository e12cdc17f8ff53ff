"""Exact mode (--cuda-verify): AIC301 compiles each CUDA source with the local nvcc for
each target its build produces, maps ptxas errors back to the Python or CUDA line, and
caches the results. Needs nvcc; skipped where it is not installed."""
import os
import shutil

import pytest
from conftest import ROOT, run_cli

from aicompat.base.notes import is_counted
from aicompat.base.toml_compat import tomllib
from aicompat.cuda import exact
from aicompat.cuda.cpp.scan import CudaSource, load_features
from aicompat.cuda.exact import verify
from aicompat.matrix.target import Target
from aicompat.run.api import with_run_options
from aicompat.run.config import build_settings
from aicompat.run.linter import Linter

if shutil.which("nvcc") is None:
    pytest.skip("nvcc not found: exact mode is checked only where the CUDA toolkit is installed",
                allow_module_level=True)

KERNELS = ROOT / "fixtures" / "kernels"
NVCC = verify.probe()[0]

# A Hopper GEMM prologue as DeepGEMM/CUTLASS write it: fence the warpgroup before wgmma.
WGMMA_EXT = '''\
from torch.utils.cpp_extension import load_inline

HOPPER_GEMM = r"""
#include <cuda_bf16.h>

__global__ void gemm_prologue(float* acc) {
  asm volatile("wgmma.fence.sync.aligned;\\n" ::: "memory");
  acc[threadIdx.x] = 0.f;
  asm volatile("wgmma.commit_group.sync.aligned;\\n" ::: "memory");
}
"""

ext = load_inline(
    name="hopper_gemm",
    cpp_sources="",
    cuda_sources=HOPPER_GEMM,
    extra_cuda_cflags=["-O3", "-gencode=arch=compute_90{a},code=sm_90{a}"],
)
'''

# A warp-level min over floats: redux.sync on .f32 is sm_100a-only (PTX ISA redux.sync notes; the
# ptxas-verified table agrees).
REDUX_F32 = '''\
import cupy

WARP_MIN = r"""
extern "C" __global__ void warp_min(const float* x, float* out) {
  float v = x[threadIdx.x];
  float r;
  asm volatile("redux.sync.min.f32 %0, %1, 0xffffffff;" : "=f"(r) : "f"(v));
  out[threadIdx.x] = r;
}
"""

warp_min = cupy.RawKernel(WARP_MIN, "warp_min"{options})
'''

# A Triton kernel's warp max through inline PTX (as Liger/unsloth write helpers).
TRITON_WARP_MAX = '''\
import triton
import triton.language as tl


@triton.jit
def warp_max(x):
    return tl.inline_asm_elementwise(
        """
        {
          .reg .f32 t;
          mov.b32 t, $1;
          redux.sync.max.f32 t, t, 0xffffffff;
          mov.b32 $0, t;
        }
        """,
        "=r,r", [x], dtype=tl.int32, is_pure=True, pack=1)
'''

BULK_COPY_CU = '''\
#include <cstdint>

__global__ void stage_tile(const float4* __restrict__ src, float4* __restrict__ dst, uint32_t bytes) {
  __shared__ alignas(128) float4 tile[256];
  __shared__ alignas(8) uint64_t bar;
  uint32_t smem = static_cast<uint32_t>(__cvta_generic_to_shared(tile));
  uint32_t mbar = static_cast<uint32_t>(__cvta_generic_to_shared(&bar));
{guard_open}  if (threadIdx.x == 0) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" :: "r"(mbar));
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" :: "r"(mbar), "r"(bytes));
    asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];"
                 :: "r"(smem), "l"(src), "r"(bytes), "r"(mbar) : "memory");
  }
{guard_else}  for (int i = threadIdx.x; i < 256; i += blockDim.x) tile[i] = src[i];
{guard_close}  __syncthreads();
  dst[threadIdx.x] = tile[threadIdx.x];
}
'''


def _bulk(guard_open, guard_else, guard_close):
    return BULK_COPY_CU.replace("{guard_open}", guard_open).replace("{guard_else}", guard_else) \
        .replace("{guard_close}", guard_close)


def _linter(gpus, tmp_path, cuda=None, **opts):
    from aicompat.matrix import default_matrix

    matrix = default_matrix()
    settings = build_settings(matrix, cli=Target(gpus=list(gpus), cuda=cuda, cuda_verify=True), no_config=True)
    v = with_run_options(settings.target.verify, 120.0, tmp_path / "cache")
    if opts:
        from dataclasses import replace

        v = replace(v, **opts)
    settings.target.verify = v
    return Linter(settings.target, matrix, select=["AIC301"])


def _lint(tmp_path, name, code, gpus, cuda=None, **opts):
    path = tmp_path / name
    path.write_text(code)
    linter = _linter(gpus, tmp_path, cuda, **opts)
    res = linter.lint_bytes(code.encode(), str(path))
    # the file's item of a counted run note (a .cu with no build) is not what these tests look at
    return [(d.line, d.column, d.message) for d in res.diagnostics], [n for n in res.notes if not is_counted(n)]


def test_load_inline_wgmma_built_for_sm_90_is_rejected_by_ptxas_at_its_python_line(tmp_path):
    found, notes = _lint(tmp_path, "ext.py", WGMMA_EXT.replace("{a}", ""), ["H100"])
    assert notes == []
    assert found == [(7, 17, f"load_inline: nvcc {NVCC.release} rejects CUDA line 5 when built for sm_90 (its "
                             "-gencode/-arch flags): \"ptxas error: Instruction 'wgmma.fence' not supported on "
                             "target 'sm_90'\"; fails on sm_90 (H100). Build with -gencode "
                             "arch=compute_90a,code=sm_90a.".replace("on target", "on .target"))]


def test_load_inline_wgmma_built_for_sm_90a_is_clean(tmp_path):
    assert _lint(tmp_path, "ext.py", WGMMA_EXT.replace("{a}", "a"), ["H100"]) == ([], [])


def test_redux_f32_static_and_exact_agree(tmp_path, matrix):
    # Once found by exact mode only; the ptxas-verified instruction table (ptx_instructions.toml) now
    # knows redux.sync's .f32 forms too, and both verdicts agree.
    code = REDUX_F32.replace("{options}", "")
    static = Linter(build_settings(matrix, cli=Target(gpus=["B200"]), no_config=True).target, matrix,
                    select=["AIC301"])
    assert [(d.line, "sm_100 (B200)" in d.message) for d in
            static.lint_bytes(code.encode(), str(tmp_path / "k.py")).diagnostics] == [(7, True)]
    found, _ = _lint(tmp_path, "k.py", code, ["B200"])
    assert found == [(7, 17, f"cupy.RawKernel: nvcc {NVCC.release} rejects CUDA line 5 when built for sm_100 (no "
                             "-arch option: CuPy builds the plain sm_XY of the GPU it runs on): \"ptxas "
                             "error: Instruction 'redux.f32' not supported on .target 'sm_100'\"; fails on sm_100 "
                             "(B200). Pass '-arch=sm_100a' in options on sm_100 only (CuPy with NVRTC 12.9 or later "
                             "builds the GPU's own sm_XY with the option's suffix; before 12.9 NVRTC refuses a second "
                             "-arch: load an nvcc-built cubin with cupy.RawModule(path=...) there).")]


def test_redux_f32_with_an_sm_100a_option_is_built_for_sm_100a_from_nvrtc_12_9(tmp_path):
    # CuPy appends -arch=sm_100 after options=(...): NVRTC 12.9+ builds sm_100 with the option's 'a'
    # (cuda_jit.toml [nvrtc_arch.cuda13]), NVRTC 12.8 refuses the second -arch.
    code = REDUX_F32.replace("{options}", ", options=('-arch=sm_100a',)")
    assert _lint(tmp_path, "k.py", code, ["B200"], cuda="13.0") == ([], [])
    found, _ = _lint(tmp_path, "k.py", code, ["B200"], cuda="12.8")
    assert [(line, m.split(" (")[0]) for line, _c, m in found] == [
        (12, "cupy.RawKernel: options '-arch=sm_100a' fail to compile with NVRTC 12.0-12.8")]


def test_redux_f32_built_for_sm_100a_by_load_inline_is_clean(tmp_path):
    code = REDUX_F32.replace("import cupy", "from torch.utils.cpp_extension import load_inline").replace(
        'cupy.RawKernel(WARP_MIN, "warp_min"{options})',
        "load_inline('w', '', cuda_sources=WARP_MIN, extra_cuda_cflags=['-gencode=arch=compute_100a,code=sm_100a'])")
    assert _lint(tmp_path, "k.py", code, ["B200"]) == ([], [])


def test_triton_inline_asm_is_compiled_inside_a_kernel_for_the_target_triton_builds(tmp_path):
    found, _ = _lint(tmp_path, "kern.py", TRITON_WARP_MAX, ["H100", "B200"])
    assert found == [(12, 11, f"inline_asm_elementwise: nvcc {NVCC.release} rejects CUDA line 5 when built for "
                              "sm_90a (Triton builds sm_XYa from sm_90 on, plain sm_XY below): \"ptxas error: "
                              "Instruction 'redux.f32' not supported on .target 'sm_90a'\"; fails on sm_90 (H100). Triton "
                              "builds for the GPU it runs on and inline PTX has no #if: launch this kernel only where "
                              "torch.cuda.get_device_capability() is one that accepts redux f32 (10.0, 10.3) and use a "
                              "fallback elsewhere.")]


def test_triton_inline_asm_on_blackwell_only_is_clean(tmp_path):
    # Triton builds sm_100a on a B200, where redux.sync takes .f32.
    assert _lint(tmp_path, "kern.py", TRITON_WARP_MAX, ["B200"]) == ([], [])


def test_cu_file_exact_error_at_the_cuda_line(tmp_path):
    code = _bulk("", "", "")
    # The unguarded fallback loop keeps the kernel valid C++ on every target; only ptxas objects.
    code = code.replace("  for (int i", "  if (bytes == 0) for (int i")
    # built by CMake with its default architectures (the fleet's); with no build visible only
    # what fails on every fleet GPU would be judged
    (tmp_path / "CMakeLists.txt").write_text("cmake_minimum_required(VERSION 3.24)\nproject(k LANGUAGES CXX CUDA)\n"
                                             "add_library(k STATIC stage_tile.cu)\n")
    found, notes = _lint(tmp_path, "stage_tile.cu", code, ["A100", "H100"])
    assert notes == []
    assert found == [(10, 19, f"nvcc {NVCC.release} rejects line 10 for every compile target that runs there (built "
                              "for sm_80: \"ptxas error: Feature 'mbarrier.arrive.expect_tx' requires .target sm_90 "
                              "or higher\"); fails on sm_80 (A100). Accepted by sm_90, sm_90a, sm_100, sm_100a, "
                              "sm_100f, sm_103, sm_103a, sm_103f, sm_110, sm_110a, sm_110f, sm_120, sm_120a, sm_120f, "
                              "sm_121, sm_121a, sm_121f: guard it and provide a fallback")]


def test_cu_file_guarded_with_a_fallback_is_clean(tmp_path):
    code = _bulk("#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900\n", "#else\n", "#endif\n")
    assert _lint(tmp_path, "stage_tile.cu", code, ["A100", "H100"]) == ([], [])


def test_second_run_comes_from_the_cache_without_running_nvcc(tmp_path):
    code = WGMMA_EXT.replace("{a}", "")
    first = _lint(tmp_path, "ext.py", code, ["H100", "B200"])
    before = verify.COMPILES
    second = _lint(tmp_path, "ext.py", code, ["H100", "B200"])
    assert verify.COMPILES == before
    assert first == second and first[0]
    assert list((tmp_path / "cache").glob("cuda-verify/*/*.json"))
    assert (tmp_path / "cache" / ".gitignore").is_file()


def test_a_source_needing_a_missing_header_keeps_the_static_verdict(tmp_path):
    code = WGMMA_EXT.replace("{a}", "").replace("#include <cuda_bf16.h>", '#include "gemm_traits.cuh"')
    found, _ = _lint(tmp_path, "ext.py", code, ["H100"])
    assert len(found) == 2  # one per instruction: wgmma.fence and wgmma.commit_group
    assert found[0][2].startswith("load_inline: 'wgmma.fence.sync.aligned' (wgmma, CUDA line 5) is rejected when "
                                  "built for sm_90")
    assert found[0][2].endswith("(nvcc could not verify: error: gemm_traits.cuh: No such file or directory)")


def test_a_clean_source_that_cannot_be_compiled_says_so_once_as_a_note(tmp_path):
    code = REDUX_F32.replace("{options}", "").replace("extern", '#include "warp_utils.cuh"\nextern')
    code = code.replace("redux.sync.min.f32 %0, %1, 0xffffffff;", "mov.f32 %0, %1;")  # statically clean
    found, notes = _lint(tmp_path, "k.py", code, ["B200"])
    assert found == []
    assert notes == [f"{tmp_path / 'k.py'}: cupy.RawKernel: could not verify with nvcc {NVCC.release}: error: "
                     "warp_utils.cuh: No such file or directory; the static verdict stands"]


def test_nvcc_too_old_for_a_target_keeps_the_static_verdict_with_one_note(tmp_path):
    old = verify.Toolkit(NVCC.nvcc, NVCC.ptxas, "12.6", "12.6, fake", NVCC.path)
    code = REDUX_F32.replace("{options}", "")
    found, notes = _lint(tmp_path, "k.py", code, ["B200"], toolkit=old)
    # The static verdict stands (the ptxas-verified table knows redux.sync's .f32 forms).
    assert [f[2].split(" (")[0] for f in found] == ["cupy.RawKernel: 'redux.sync.min.f32'"]
    assert notes == ["--cuda-verify: nvcc 12.6 is too old to build sm_100 (needs CUDA 12.8): verdicts for sm_100 "
                     "are the static ones"]


def test_compile_budget_spent_keeps_the_static_verdict(tmp_path):
    found, notes = _lint(tmp_path, "ext.py", WGMMA_EXT.replace("{a}", ""), ["H100"], max_compiles=0)
    assert [f[2].split(" (")[0] for f in found] == ["load_inline: 'wgmma.fence.sync.aligned'",
                                                    "load_inline: 'wgmma.commit_group.sync.aligned'"]
    assert notes == ["--cuda-verify: the budget of 0 compiles per run is spent: the remaining CUDA sources keep "
                     "their static verdicts"]


def test_nvcc_missing_is_one_note_and_the_run_continues(tmp_path):
    for name in ("a.py", "b.py"):
        (tmp_path / name).write_text(WGMMA_EXT.replace("{a}", ""))
    path = os.pathsep.join(d for d in os.environ["PATH"].split(os.pathsep)
                           if d and not os.path.exists(os.path.join(d, "nvcc")))
    r = run_cli("lint", "--no-config", "--gpu", "H100", "--cuda-verify", "--select", "AIC301", str(tmp_path),
                env={"PATH": path, "CUDA_HOME": ""})
    assert r.returncode == 1, r.stderr
    notes = [ln for ln in r.stdout.splitlines() if "nvcc" in ln and ln.startswith("note:")]
    assert notes == ["note: --cuda-verify: nvcc not found on PATH: nothing was compiled; CUDA verdicts are the static "
                     "ones"]
    assert r.stdout.count("AIC301 load_inline: 'wgmma.fence.sync.aligned'") == 2


def test_only_the_user_turns_exact_mode_on_never_the_checked_trees_config(tmp_path):
    # issue 25: a pull request's own [tool.aicompat] cuda-verify = true must not make aicompat run nvcc
    # on its code (it used to); the command line or AICOMPAT_CUDA_VERIFY=1 does.
    (tmp_path / "pyproject.toml").write_text('[tool.aicompat]\ngpus = ["H100"]\ncuda-verify = true\n')
    (tmp_path / "ext.py").write_text(WGMMA_EXT.replace("{a}", ""))
    r = run_cli("lint", "--select", "AIC301", "ext.py", cwd=tmp_path)
    assert f"nvcc {NVCC.release} rejects" not in r.stdout, r.stdout
    assert r.stdout.count("AIC301 load_inline: 'wgmma.fence.sync.aligned'") == 1  # the static verdict
    assert (f"note: {tmp_path / 'pyproject.toml'}: [tool.aicompat] cuda-verify is ignored: exact mode runs nvcc on "
            "the checked code, so only the command line (--cuda-verify) or the environment "
            "(AICOMPAT_CUDA_VERIFY=1) turns it on") in r.stdout.splitlines()
    r = run_cli("lint", "--select", "AIC301", "ext.py", cwd=tmp_path, env={"AICOMPAT_CUDA_VERIFY": "1"})
    assert f"AIC301 load_inline: nvcc {NVCC.release} rejects CUDA line 5" in r.stdout, r.stdout + r.stderr
    r = run_cli("lint", "--select", "AIC301", "ext.py", cwd=tmp_path, env={"AICOMPAT_CUDA_VERIFY": "maybe"})
    assert r.returncode == 2 and "$AICOMPAT_CUDA_VERIFY: expected 1 or 0" in r.stderr


def test_only_safe_device_flags_reach_nvcc():
    assert verify.device_flags(["-O3", "-DUSE_FP8=1", "-Xcompiler", "-fPIC", "-std=c++17", "--use_fast_math",
                                "-ccbin", "/usr/bin/gcc", "--run", "-D", "BLOCK=128", "-o", "x"]) == \
        ("-O3", "-DUSE_FP8=1", "-std=c++17", "--use_fast_math", "-DBLOCK=128")


# -- the kernel corpus: static and exact verdicts agree ------------------------------------
MANIFEST = tomllib.loads((KERNELS / "manifest.toml").read_text())
FULL = os.environ.get("AICOMPAT_FULL_CORPUS") == "1"


def _cells(entry):
    """Every target with AICOMPAT_FULL_CORPUS=1; else each kernel's verdict boundaries:
    the newest failing target, the oldest accepting one and one that compiles empty."""
    if FULL:
        return list(MANIFEST["targets"])
    order = MANIFEST["targets"]
    picks = [entry["fail"][-1:], entry["ok"][:1], entry["empty"][:1]]
    return sorted({t for p in picks for t in p}, key=order.index)


def test_static_and_exact_verdicts_agree_on_the_kernel_corpus(matrix, tmp_path):
    features = load_features(matrix)
    ver = verify.Verifier(verify.Options(NVCC, timeout=240, max_compiles=100_000, cache_dir=str(tmp_path)), [])
    cells = disagree = 0
    problems = []
    for key, entry in MANIFEST["kernel"].items():
        text = (KERNELS / entry["file"]).read_text()
        src = CudaSource(text, features)
        targets = _cells(entry)
        outs = exact.per_target(ver, matrix, text, targets, (), KERNELS, KERNELS)
        truth = {t: v for v in ("ok", "fail", "empty") for t in entry[v]}
        for t in targets:
            cells += 1
            static, nvcc = src.verdict(t).status, outs[t].status
            if static != nvcc or nvcc != truth[t]:
                disagree += 1
                problems.append(f"{key} {t}: static {static}, exact {nvcc} ({outs[t].error}), manifest {truth[t]}")
    print(f"\nkernel corpus: static and exact agree on {cells - disagree}/{cells} (kernel, target) cells")
    assert problems == []


def test_a_changed_header_is_compiled_again_and_a_header_alone_never(tmp_path):
    (tmp_path / "tile_config.cuh").write_text("#pragma once\nconstexpr int kTile = 128;\n")
    code = '#include "tile_config.cuh"\n\n__global__ void fill(float* x) { x[threadIdx.x % kTile] = 1.f; }\n'
    assert _lint(tmp_path, "fill.cu", code, ["H100"]) == ([], [])
    before = verify.COMPILES
    assert _lint(tmp_path, "fill.cu", code, ["H100"]) == ([], [])
    assert verify.COMPILES == before
    (tmp_path / "tile_config.cuh").write_text("#pragma once\nconstexpr int kTile = 64;\n")
    assert _lint(tmp_path, "fill.cu", code, ["H100"]) == ([], [])
    assert verify.COMPILES > before
    before = verify.COMPILES
    _lint(tmp_path, "wgmma_utils.cuh", '__device__ void fence() { asm volatile("wgmma.fence.sync.aligned;"); }\n',
          ["H100"])
    assert verify.COMPILES == before


def test_compile_results_of_another_user_or_a_commit_are_never_used(tmp_path, monkeypatch):
    # issue 16 applied to exact mode's compile cache: entries are named by the key under this user's
    # cache secret, so a cuda-verify/ folder committed with the repository (or another user's) is a miss.
    from aicompat.fs import cachefs

    code = WGMMA_EXT.replace("{a}", "")
    _lint(tmp_path, "ext.py", code, ["H100"])
    monkeypatch.setattr(cachefs, "_SECRET", b"another user's secret" + b"0" * 43)
    before = verify.COMPILES
    _lint(tmp_path, "ext.py", code, ["H100"])
    assert verify.COMPILES > before


# SageAttention-style: the Hopper kernel is compiled only where the build passes -DENABLE_SM90.
GUARDED_SM90_CU = '''\
#include <cuda_runtime.h>

#ifdef ENABLE_SM90
__global__ void qk_int8_sv_f8_attn_sm90(float* out) {
  asm volatile("wgmma.fence.sync.aligned;\\n" ::: "memory");
  out[threadIdx.x] = 0.f;
}
#endif

__global__ void quant_per_block(float* out) { out[threadIdx.x] = 1.f; }
'''

DEFINE_SETUP = '''\
from setuptools import setup
from torch.utils.cpp_extension import BuildExtension, CUDAExtension

setup(name="sageattention", ext_modules=[CUDAExtension(
    name="sageattention._qattn", sources=["csrc/attn.cu"],
    extra_compile_args={"cxx": ["-O3"], "nvcc": ["-O3", "-gencode", "arch=compute_80,code=sm_80", FLAGS]})],
    cmdclass={"build_ext": BuildExtension})
'''


def test_exact_mode_compiles_with_the_build_define_flags(tmp_path):
    (tmp_path / "csrc").mkdir()
    cu = tmp_path / "csrc" / "attn.cu"
    cu.write_text(GUARDED_SM90_CU)
    for flag, want in (('"-DENABLE_SM90"', ["A100"]), ('"-DENABLE_BF16"', [])):
        (tmp_path / "setup.py").write_text(DEFINE_SETUP.replace("FLAGS", flag))
        res = _linter(["A100"], tmp_path).lint_bytes(GUARDED_SM90_CU.encode(), str(cu))
        got = [(d.line, d.targets) for d in res.diagnostics]
        assert got == ([(5, want)] if want else []), (flag, [d.message for d in res.diagnostics])
        if want:
            assert res.diagnostics[0].message.startswith(f"nvcc {NVCC.release} rejects line 5")
