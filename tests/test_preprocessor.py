"""The CUDA preprocessor and its small C++ model (cuda/cpp/preprocessor.py, ppexpr.py, cxx.py).

Snippets follow the patterns of TransformerEngine, FlashMLA, SageAttention and
CUTLASS-based kernels (rewritten, not copied). Each behaviour is pinned to
what nvcc 13.0 does: test_claims_hold_for_nvcc compiles the same snippets
when nvcc is on PATH.
"""
import shutil
import subprocess
import textwrap
from pathlib import Path

import pytest

from aicompat import Target, lint_paths
from aicompat.cuda.cpp.cxx import dead_lines
from aicompat.cuda.cpp.ppexpr import Env, evaluate
from aicompat.cuda.cpp.preprocessor import CompileTarget, Context, default_context, preprocess


def live(src: str, target: str, marker: str, **ctx):
    """Liveness of the line holding ``marker`` for ``target``."""
    src = textwrap.dedent(src)
    pp = preprocess(src, CompileTarget(target), context=Context(**ctx) if ctx else None)
    line = next(i for i, t in enumerate(src.split("\n"), 1) if marker in t)
    return pp.live[line]


def emitted(src: str, target: str, marker: str, **ctx):
    """Does nvcc emit the line holding ``marker`` (preprocessor and C++ model)?"""
    src = textwrap.dedent(src)
    c = Context(**ctx)
    pp = preprocess(src, CompileTarget(target), context=c)
    line = next(i for i, t in enumerate(src.split("\n"), 1) if marker in t)
    if pp.live[line] is False:
        return False
    return pp.live[line] if line not in dead_lines(src, pp, c) else False


# -- #if grammar ---------------------------------------------------------------------

@pytest.mark.parametrize("expr, value", [
    ("(defined(__CUDA_ARCH__) and (__CUDA_ARCH__ >= 1000)) or defined(__CLION_IDE__)", 0),
    ("defined __CUDA_ARCH__ && not defined __CUDA_ARCH_FEAT_SM90_ALL", 1),
    ("__CUDA_ARCH__ not_eq 900 bitand 1", 1),  # != binds tighter than &
    ("(6 xor 3) == 5 and (compl 0) == -1 and (4 bitor 1) == 5", 1),
    ("1 | 2 & 0", 1),
    ("(1 | 2) & 0", 0),
    ("1 ^ 1 | 1", 1),
    ("1'000 == 1000ull && 0x10UL == 16 && 010 == 8 && 0b11 == 3", 1),
    ("'A' == 65 && '\\n' == 10 && u8'a' == 97", 1),
    ("-7 / 2 == -3 && -7 % 2 == -1", 1),
    ("__CUDA_ARCH__ >= 900 ? 2 : 3", 3),
    ("true && !false", 1),
])
def test_if_expression_grammar(expr, value):
    pp = preprocess(f"#if {expr}\nX\n#endif\n", CompileTarget("sm_80"))
    assert pp.live[2] is bool(value)


def test_function_like_macros_expand_in_if():
    src = """\
    #define ARCH_AT_LEAST(major, minor) (__CUDA_ARCH__ >= ((major) * 100 + (minor) * 10))
    #define SM_ALL(...) (defined(__CUDA_ARCH_FEAT_SM90_ALL) || __VA_ARGS__)
    #if ARCH_AT_LEAST(8, 9)
    fp8_path
    #endif
    #if SM_ALL(0)
    wgmma_path
    #endif
    """
    assert live(src, "sm_80", "fp8_path") is False
    assert live(src, "sm_89", "fp8_path") is True
    assert live(src, "sm_90", "wgmma_path") is False
    assert live(src, "sm_90a", "wgmma_path") is True


def test_unknown_stays_unknown():
    src = """\
    #if defined(ENABLE_FP8) && __CUDA_ARCH__ >= 890
    fp8_path
    #endif
    #if __has_include(<cuda_fp8.h>)
    has_header
    #endif
    #if __has_builtin(__builtin_assume)
    assume_body
    #endif
    """
    # A -D flag of the build may define ENABLE_FP8: unknown where the arch part holds.
    assert live(src, "sm_90", "fp8_path") is None
    assert live(src, "sm_80", "fp8_path") is False
    assert live(src, "sm_90", "has_header") is None  # not in the tree: maybe a system header
    assert live(src, "sm_90", "assume_body") is None


def test_bad_expressions_are_unknown_not_errors():
    for expr in ("(", "1 +", "FOO(", "1.5 > 1", "'ab'", "1 / 0", "#x", "@"):
        assert evaluate(expr, Env(), lambda n: None) is None


# -- undefined means undefined -------------------------------------------------------

_IDE_GUARD = """\
__global__ void quantize_kernel(float* out) {
#if (defined(__CUDA_ARCH__) and (__CUDA_ARCH__ >= 1000)) or defined(__CLION_IDE__)
  asm volatile("tcgen05.fence::before_thread_sync;");
#endif
  out[threadIdx.x] = 0.f;
}
"""


def test_ide_macros_are_undefined_for_nvcc():
    assert live(_IDE_GUARD, "sm_90", "tcgen05") is False
    assert live(_IDE_GUARD, "sm_100a", "tcgen05") is True
    vs = "#if defined(__VSCODE_IDE__)\n#define KU_ENABLE_SM100A\n#endif\n#ifdef KU_ENABLE_SM100A\nX\n#endif\n"
    assert live(vs, "sm_90", "X") is False


def test_build_defines_known_make_other_names_undefined():
    src = """\
    #include <cutlass/cutlass.h>
    #if defined(USE_FAST_PATH)
    fast
    #endif
    #if defined(CUTLASS_ENABLE_EXTENSIONS)
    from_cutlass
    #endif
    """
    assert live(src, "sm_90", "fast") is None  # build flags unknown
    assert live(src, "sm_90", "fast", defines={}) is False
    assert live(src, "sm_90", "fast", defines={"USE_FAST_PATH": "1"}) is True
    # A name that looks like it comes from the out-of-tree header stays unknown.
    assert live(src, "sm_90", "from_cutlass", defines={}) is None


def test_own_macro_defined_under_arch_guard_is_per_target():
    # SageAttention style: the file derives a capability macro from __CUDA_ARCH__.
    src = """\
    #if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 890
    #define FP8_CAST_ENABLED
    #endif
    __device__ __forceinline__ void cvt_fp8x2(unsigned short& out, float a, float b) {
    #ifdef FP8_CAST_ENABLED
      asm volatile("cvt.rn.satfinite.e4m3x2.f32 %0, %2, %1;" : "=h"(out) : "f"(a), "f"(b));
    #else
      out = 0;
    #endif
    }
    """
    assert live(src, "sm_80", "e4m3x2") is False
    assert live(src, "sm_89", "e4m3x2") is True
    # Defined under a branch nobody can decide: maybe defined.
    unknown = src.replace("defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 890", "defined(WITH_FP8)")
    assert live(unknown, "sm_89", "e4m3x2") is None


def test_default_value_under_ifndef_may_come_from_the_build():
    src = "#ifndef KBLOCK\n#define KBLOCK 64\n#endif\n#if KBLOCK == 64\nX\n#endif\n"
    assert live(src, "sm_90", "X") is None
    assert live(src, "sm_90", "X", defines={}) is True
    guard = "#ifndef KERNEL_CUH_\n#define KERNEL_CUH_\nX\n#endif\n"
    assert live(guard, "sm_90", "X") is True  # an include guard is the file's own


def test_cutlass_config_macros_per_target():
    src = """\
    #include <cute/tensor.hpp>
    #if defined(CUTLASS_ARCH_MMA_SM90A_ENABLED)
    wgmma_path
    #endif
    #if defined(CUTE_ARCH_TMA_SM100_ENABLED)
    tma_sm100
    #endif
    #ifdef CUTLASS_ARCH_CLC_ENABLED
    clc_path
    #endif
    """
    assert live(src, "sm_80", "wgmma_path") is False
    assert live(src, "sm_90", "wgmma_path") is False
    assert live(src, "sm_90a", "wgmma_path") is None  # toolkit unknown
    assert live(src, "sm_90a", "wgmma_path", toolkit=(13, 0)) is True
    assert live(src, "sm_90a", "tma_sm100", toolkit=(13, 0)) is False
    assert live(src, "sm_100a", "tma_sm100", toolkit=(13, 0)) is True
    assert live(src, "sm_100f", "tma_sm100", toolkit=(13, 0)) is True
    assert live(src, "sm_100", "tma_sm100", toolkit=(13, 0)) is False
    assert live(src, "sm_90a", "clc_path", toolkit=(13, 0)) is False
    assert live(src, "sm_100a", "clc_path", toolkit=(13, 0)) is True


def test_macros_from_included_headers(tmp_path):
    # FlashMLA style: a helper library in the tree derives KU_ENABLE_SM100A from
    # __CUDA_ARCH__; the kernel reaches it through <ku/ku.cuh> under csrc/ku/include.
    (tmp_path / ".git").mkdir()
    inc = tmp_path / "csrc" / "ku" / "include" / "ku"
    inc.mkdir(parents=True)
    (inc / "ku.cuh").write_text('#pragma once\n#include "device/common.h"\n')
    (inc / "device").mkdir()
    (inc / "device" / "common.h").write_text(
        "#pragma once\n#if (defined(__CUDA_ARCH__) && (__CUDA_ARCH__ >= 1000 && __CUDA_ARCH__ < 1200))\n"
        "#define KU_ENABLE_SM100A\n#endif\n#if (defined(__CLION_IDE__) || defined(__VSCODE_IDE__))\n"
        "#define KU_ENABLE_SM100A\n#endif\n")
    kernel = tmp_path / "csrc" / "sm100" / "decode.cuh"
    kernel.parent.mkdir()
    text = "#include <ku/ku.cuh>\n#ifdef KU_ENABLE_SM100A\nsm100_body\n#endif\n"
    kernel.write_text(text)
    ctx = default_context(kernel)
    assert ctx.root == tmp_path and not ctx.translation_unit
    assert preprocess(text, CompileTarget("sm_90a"), context=ctx).live[3] is False
    assert preprocess(text, CompileTarget("sm_100f"), context=ctx).live[3] is True
    # Without the header (not in the tree) the macro is unknown.
    assert preprocess(text, CompileTarget("sm_90a")).live[3] is None


# -- if constexpr --------------------------------------------------------------------

_CONSTEXPR = """\
#ifdef __CUDA_ARCH__
#define CURRENT_ARCH __CUDA_ARCH__
#else
#define CURRENT_ARCH 0
#endif
#define ARCH_IS_BLACKWELL (CURRENT_ARCH >= 1000)
__global__ void grouped_cast(float* out) {
  constexpr bool is_blackwell = ARCH_IS_BLACKWELL;
  constexpr int kArch = CURRENT_ARCH;
  if constexpr (is_blackwell) {
    asm volatile("tcgen05.fence::before_thread_sync;");
  } else {
    out[0] = 1.f;
  }
  if constexpr (kArch == 900) {
    asm volatile("setmaxnreg.inc.sync.aligned.u32 240;");
  }
}
"""


# The same dispatch on a value known only at run time: compiled for every target.
# (A plain ``if`` on a constant false is folded away by nvcc's optimizer too, so
# the failing twin must really depend on a run-time value.)
_RUNTIME_IF = _CONSTEXPR.replace("constexpr bool is_blackwell = ARCH_IS_BLACKWELL;",
                                 "const bool is_blackwell = out[1] > 0.f;").replace(
                                     "if constexpr (is_blackwell)", "if (is_blackwell)")


def test_if_constexpr_on_arch_constants():
    assert emitted(_CONSTEXPR, "sm_90a", "tcgen05") is False
    assert emitted(_CONSTEXPR, "sm_100a", "tcgen05") is True
    assert emitted(_CONSTEXPR, "sm_100a", "out[0] = 1.f") is False
    assert emitted(_CONSTEXPR, "sm_90a", "setmaxnreg") is True
    assert emitted(_CONSTEXPR, "sm_100a", "setmaxnreg") is False


def test_if_constexpr_on_what_cannot_be_evaluated_stays():
    src = _CONSTEXPR.replace("ARCH_IS_BLACKWELL;", "detail::is_arch<100>();")
    assert emitted(src, "sm_90a", "tcgen05") is True


# -- emitted only if called ----------------------------------------------------------

_HELPERS = """\
__device__ __forceinline__ void warpgroup_fence() {
  asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
}
template <int N>
__device__ void warpgroup_wait() {
  asm volatile("wgmma.wait_group.sync.aligned %0;" :: "n"(N) : "memory");
}
__device__ void exported_fence() {
  asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
}
__global__ void gemm_sm90(float* out) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  warpgroup_fence();
  warpgroup_wait<0>();
#endif
  out[0] = 0.f;
}
"""


def test_helper_whose_only_caller_is_guarded_is_not_emitted():
    assert emitted(_HELPERS, "sm_80", "wgmma.fence") is False
    assert emitted(_HELPERS, "sm_80", "wgmma.wait_group") is False
    assert emitted(_HELPERS, "sm_90a", "wgmma.fence") is True
    # An extern __device__ function is emitted with -rdc=true even unused (nvcc 13.0).
    assert emitted(_HELPERS, "sm_80", "wgmma.commit_group") is True
    assert emitted(_HELPERS, "sm_80", "wgmma.commit_group", relocatable=False) is False


def test_helper_called_by_a_live_kernel_is_emitted():
    src = _HELPERS.replace("#if defined(__CUDA_ARCH_FEAT_SM90_ALL)\n", "").replace("#endif\n", "")
    assert emitted(src, "sm_80", "wgmma.fence") is True
    # A macro that names the helper keeps it (the macro may be used by a kernel).
    via_macro = _HELPERS + "#define FENCE() warpgroup_fence()\n"
    assert emitted(via_macro, "sm_80", "wgmma.fence") is True


def test_header_helpers_are_not_judged_alone():
    assert emitted(_HELPERS, "sm_80", "wgmma.fence", translation_unit=False) is True


# -- AIC301 end to end ---------------------------------------------------------------


# A real build for the file: CMake with no CUDA_ARCHITECTURES builds for its default archs,
# taken to be the fleet's (a file with no visible build is judged only for what fails everywhere).
def _cmake(root: Path, *sources: str) -> None:
    if not (root / "setup.py").exists():
        (root / "CMakeLists.txt").write_text("cmake_minimum_required(VERSION 3.24)\nproject(kernels LANGUAGES CXX CUDA)\n"
                                             f"add_library(kernels STATIC {' '.join(sources)})\n")


def _aic301(tmp_path, name, text, gpus):
    (tmp_path / ".git").mkdir(exist_ok=True)
    p = tmp_path / name
    p.write_text(textwrap.dedent(text))
    _cmake(tmp_path, name)
    return [(d.line, d.message.split(" (")[0]) for d in
            lint_paths([p], Target(gpus=list(gpus)), use_config=False, select=["AIC301"])]


def test_aic301_alternative_tokens_guard(tmp_path):
    bad = _IDE_GUARD.replace("#if (defined(__CUDA_ARCH__) and (__CUDA_ARCH__ >= 1000)) or defined(__CLION_IDE__)\n",
                             "").replace("#endif\n", "")
    assert _aic301(tmp_path, "bad.cu", bad, ["H100", "B200"]) == [(2, "'tcgen05.fence::before_thread_sync'")]
    assert _aic301(tmp_path, "good.cu", _IDE_GUARD, ["H100", "B200"]) == []


def test_aic301_guarded_define(tmp_path):
    src = """\
    #if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 890
    #define FP8_CAST_ENABLED
    #endif
    __global__ void cast(unsigned short* out, float a, float b) {
    #ifdef FP8_CAST_ENABLED
      asm volatile("cvt.rn.satfinite.e4m3x2.f32 %0, %2, %1;" : "=h"(out[0]) : "f"(a), "f"(b));
    #else
      out[0] = 0;
    #endif
    }
    """
    assert _aic301(tmp_path, "good.cu", src, ["A100", "H100"]) == []
    bad = src.replace("#ifdef FP8_CAST_ENABLED", "#ifdef FP8_CAST_ENABLED_TYPO")
    # A name defined nowhere with unknown build flags: unknown, so the asm may be compiled.
    assert _aic301(tmp_path, "bad.cu", bad, ["A100", "H100"]) == [(6, "'cvt.rn.satfinite.e4m3x2.f32'")]


def test_aic301_if_constexpr(tmp_path):
    assert _aic301(tmp_path, "good.cu", _CONSTEXPR.replace("  if constexpr (kArch == 900) {\n    asm volatile(\"setmaxnreg.inc.sync.aligned.u32 240;\");\n  }\n", ""),
                   ["H100", "B200"]) == []
    bad = _RUNTIME_IF
    assert _aic301(tmp_path, "bad.cu", bad, ["H100", "B200"]) == [(11, "'tcgen05.fence::before_thread_sync'")]


def test_aic301_unreached_helper(tmp_path):
    assert _aic301(tmp_path, "good.cu", _HELPERS.replace("__device__ void exported_fence", "static __device__ void "
                                                         "exported_fence"), ["A100", "H100"]) == []
    bad = _HELPERS.replace("#if defined(__CUDA_ARCH_FEAT_SM90_ALL)\n", "").replace("#endif\n", "")
    # One finding per instruction: both helpers now reach the A100 through the live kernel, and the
    # extern exported_fence may be emitted (-rdc unknown).
    assert _aic301(tmp_path, "bad.cu", bad, ["A100", "H100"]) == [(2, "'wgmma.fence.sync.aligned'"),
                                                                 (6, "'wgmma.wait_group.sync.aligned'"),
                                                                 (9, "'wgmma.commit_group.sync.aligned'")]


# CuTe-style MMA atoms: a struct whose static member holds the Blackwell asm, traits that
# specialise on it, and a kernel config that names it in an alias.
_ATOMS = """\
template <int M, int N>
struct SM100_MMA_TS {
  __device__ static void fma(unsigned tmem_a, unsigned long long desc_b, unsigned tmem_c) {
    asm volatile("tcgen05.mma.cta_group::1.kind::f16 [%0], %1, %2, 0, 1;"
                 :: "r"(tmem_c), "r"(tmem_a), "l"(desc_b));
  }
};
template <class Op> struct MMA_Traits;
template <int M, int N>
struct MMA_Traits<SM100_MMA_TS<M, N>> {
  __device__ static void run() { SM100_MMA_TS<M, N>::fma(0u, 0ull, 0u); }
};
struct KernelConfig {
  using TiledMMA = MMA_Traits<SM100_MMA_TS<128, 256>>;
  static constexpr int kThreads = 128;
};
__global__ void attn(float* out) {
#if defined(__CUDA_ARCH_FEAT_SM100_ALL)
  KernelConfig::TiledMMA::run();
#endif
  out[0] = KernelConfig::kThreads;
}
"""


def test_class_members_are_emitted_only_where_the_class_is_used():
    # The kernel uses KernelConfig on every target, but its TiledMMA alias only on sm_100a.
    assert emitted(_ATOMS, "sm_90a", "tcgen05.mma") is False
    assert emitted(_ATOMS, "sm_100a", "tcgen05.mma") is True
    used = _ATOMS.replace("#if defined(__CUDA_ARCH_FEAT_SM100_ALL)\n", "").replace("#endif\n", "")
    assert emitted(used, "sm_90a", "tcgen05.mma") is True


# -- the same claims, checked with nvcc ----------------------------------------------

_NVCC = shutil.which("nvcc")


@pytest.mark.skipif(_NVCC is None, reason="nvcc not on PATH")
@pytest.mark.parametrize("name, text, target, ok", [
    ("ide_guard", _IDE_GUARD, "sm_90", True),  # __CLION_IDE__ undefined: tcgen05 compiled out
    ("constexpr", _CONSTEXPR, "sm_90a", True),
    ("runtime_if", _RUNTIME_IF, "sm_90a", False),
    ("guarded_caller", _HELPERS.replace("__device__ void exported_fence", "static __device__ void exported_fence"),
     "sm_80", True),
    ("extern_unused_rdc", _HELPERS, "sm_80", False),  # with -rdc=true below
    ("extern_unused_whole", _HELPERS, "sm_80", True),
    ("atoms_alias_unused", _ATOMS, "sm_90a", True),
    ("atoms_alias_used", _ATOMS.replace("#if defined(__CUDA_ARCH_FEAT_SM100_ALL)\n", "").replace("#endif\n", ""),
     "sm_90a", False),
])
def test_claims_hold_for_nvcc(tmp_path, name, text, target, ok):
    src = tmp_path / f"{name}.cu"
    src.write_text(textwrap.dedent(text))
    cmd = [_NVCC, "-gencode", f"arch=compute_{target[3:]},code={target}", "-c", str(src), "-o", str(tmp_path / "k.o"), "-diag-suppress", "177"]
    if name.endswith("_rdc"):
        cmd.append("-rdc=true")
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert (r.returncode == 0) is ok, r.stderr[-2000:]


def test_project_arch_predicate_from_the_table():
    # TransformerEngine style: the predicate is a template computation behind a macro;
    # cuda_macros.toml [cxx_constant] says what it computes per target.
    src = """\
    #define NVTE_CUDA_ARCH_MATCHES(...) [&] { return ptx::is_supported_arch<__VA_ARGS__>(); }()
    #define ARCH_BLACKWELL_FAMILY NVTE_CUDA_ARCH_MATCHES(ptx::FamilySpecific<100>, ptx::FamilySpecific<120>)
    __device__ __forceinline__ void cvt_fp4x2(unsigned char& out, float a, float b) {
      constexpr bool has_fp4 = ARCH_BLACKWELL_FAMILY;
      if constexpr (has_fp4) {
        asm volatile("{.reg .b8 t; cvt.rn.satfinite.e2m1x2.f32 t, %1, %2; mov.b16 %0, {t, t};}"
                     : "=h"(out) : "f"(a), "f"(b));
      } else {
        out = 0;
      }
    }
    """
    assert emitted(src, "sm_90a", "e2m1x2", translation_unit=False) is False
    assert emitted(src, "sm_100a", "e2m1x2", translation_unit=False) is True
    # Another project's macro of the same name, defined differently: not evaluated.
    other = src.replace("NVTE_CUDA_ARCH_MATCHES(ptx", "my_arch_check(ptx")
    assert emitted(other, "sm_90a", "e2m1x2", translation_unit=False) is True


def test_has_include_finds_in_tree_headers(tmp_path):
    (tmp_path / ".git").mkdir()
    (tmp_path / "csrc").mkdir()
    (tmp_path / "csrc" / "fp8_utils.cuh").write_text("#pragma once\n")
    k = tmp_path / "csrc" / "kernel.cu"
    text = '#if __has_include("fp8_utils.cuh")\nwith_utils\n#endif\n#if __has_include(<nowhere/x.h>)\nother\n#endif\n'
    k.write_text(text)
    pp = preprocess(text, CompileTarget("sm_90"), context=default_context(k))
    assert pp.live[2] is True and pp.live[5] is None


def test_cute_device_helpers_count_as_device_functions():
    src = """\
    #include <cute/tensor.hpp>
    CUTE_DEVICE void st_async_v2(void* dst, long2 v, unsigned mbar) {
      asm volatile("st.async.shared::cluster.mbarrier::complete_tx::bytes.v2.s64 [%0], {%1, %2}, [%3];"
                   :: "r"(0u), "l"(v.x), "l"(v.y), "r"(mbar));
    }
    __global__ void splitkv(float* out) {
    #if defined(__CUDA_ARCH__) && __CUDA_ARCH__ == 900
      st_async_v2(out, long2{}, 0u);
    #endif
    }
    """
    assert emitted(src, "sm_80", "st.async") is False
    assert emitted(src, "sm_90", "st.async") is True


def test_if_arithmetic_is_64_bit_and_bounded():
    # issue 16 item 5: `#if (1 << 12000000000)` built a 1.6 GB Python int. C evaluates #if in
    # intmax_t: sums wrap, and a shift by 64 or more is undefined (unknown here).
    from aicompat.cuda.cpp.preprocessor import CompileTarget, preprocess

    text = ("#if (1 << 12000000000)\na\n#endif\n#if (1 << 62) * 4 == 0\nb\n#endif\n"
            "#if 0x7fffffffffffffff + 1 < 0\nc\n#endif\n#if " + "9" * 5000 + " > 1\nd\n#endif\n")
    live = preprocess(text, CompileTarget("sm_90")).live
    assert [live[2], live[5], live[8], live[11]] == [None, True, True, None]


def test_continued_lines_are_as_live_as_the_line_they_continue(tmp_path):
    # SageAttention's numeric_conversion.cuh writes its asm blocks with `\` at each line end under
    # `#ifdef FP8_CAST_ENABLED` (defined for __CUDA_ARCH__ >= 890); the instruction on a continuation
    # line was taken as compiled everywhere.
    src = ("#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 890\n#define FP8_CAST_ENABLED\n#endif\n"
           "__global__ void cast(unsigned* out, float a, float b) {\n#ifdef FP8_CAST_ENABLED\n"
           "  asm volatile( \\\n      \"{\\n\" \\\n      \".reg .b16 lo;\\n\" \\\n"
           "      \"cvt.rn.satfinite.e4m3x2.f32 lo, %1, %2;\\n\" \\\n      \"mov.b32 %0, {lo, lo};\\n\" \\\n"
           "      \"}\" : \"=r\"(out[0]) : \"f\"(a), \"f\"(b));\n#else\n  out[0] = 0;\n#endif\n}\n")
    assert _aic301(tmp_path, "good.cu", src, ["A100", "H100"]) == []
    bad = src.replace("#ifdef FP8_CAST_ENABLED", "#if 1")
    assert _aic301(tmp_path, "bad.cu", bad, ["A100", "H100"]) == [(9, "'cvt.rn.satfinite.e4m3x2.f32'")]
