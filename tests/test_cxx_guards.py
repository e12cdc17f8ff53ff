"""C++ guards of inline PTX per compile target (cuda/cpp/constants.py, cxx.py) and operand forms
of the PTX table (cuda/cpp/ptx.py ``shape``), through AIC301 on realistic .cu files.

Each claim is what nvcc 13.0 (V13.0.88) does; test_claims_hold_for_nvcc compiles the same files
when nvcc is on PATH:
- the discarded branch of ``if constexpr`` is never instantiated, so its asm never reaches
  ptxas: a namespace constant, a static member, a constexpr function and a template argument
  derived from ``__CUDA_ARCH__`` are guards;
- a plain ``if`` on such a constant is not a guard the language gives: nvcc folds it away with
  the optimizer on, but with ``-G`` the static-member form still reaches ptxas, which rejects
  wgmma on sm_80 (so it stays reported);
- a helper emitted only where a live caller reaches it.
"""
import shutil
import subprocess
import textwrap

import pytest

from aicompat import Target, lint_paths

# A CUTLASS-like epilogue: the arch constant sits in a namespace, under #if defined(__CUDA_ARCH__).
NS_CONSTANT = """\
#include <cstdint>
#define GEMM_DEVICE __forceinline__ __device__

namespace gemm {
namespace arch {
#if defined(__CUDA_ARCH__)
constexpr bool kHasWgmma = __CUDA_ARCH__ >= 900;
#else
constexpr bool kHasWgmma = false;
#endif
}  // namespace arch

template <int kStages>
GEMM_DEVICE void warpgroup_arrive(float* acc) {
  if constexpr (arch::kHasWgmma) {
    asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
  } else {
    acc[kStages] = 0.f;
  }
}
}  // namespace gemm

__global__ void gemm_mainloop(float* out) {
  gemm::warpgroup_arrive<2>(out);
  out[threadIdx.x] += 1.f;
}
"""

# Traits with a static member; the kernel template reads it through the class's name.
STATIC_MEMBER = """\
struct ArchTraits {
#if defined(__CUDA_ARCH__)
  static constexpr bool kHasTma = (__CUDA_ARCH__ >= 900);
#else
  static constexpr bool kHasTma = false;
#endif
};

template <typename T>
__global__ void copy_tile(T* out) {
  if constexpr (ArchTraits::kHasTma) {
    asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
  } else {
    out[threadIdx.x] = T(0);
  }
}
template __global__ void copy_tile<float>(float*);
"""

# A C++17 constexpr function of __CUDA_ARCH__ (host and device, as nvcc requires without
# --expt-relaxed-constexpr; the host pass sees the #else).
CONSTEXPR_FUNCTION = """\
__host__ __device__ constexpr bool has_wgmma() {
#if defined(__CUDA_ARCH__)
  return __CUDA_ARCH__ >= 900;
#else
  return false;
#endif
}

template <typename T>
__device__ __forceinline__ void fence_operands(T* acc) {
  if constexpr (has_wgmma()) {
    asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
  } else {
    acc[1] = T(0);
  }
}

__global__ void attention_fwd(float* acc) { fence_operands(acc); }
"""

# A template parameter bound from the arch at the one call that instantiates it.
TEMPLATE_ARGUMENT = """\
namespace flash {
template <bool kSm90, int kHeadDim>
struct Mainloop {
  __device__ static void step(float* acc) {
    if constexpr (kSm90) {
      asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
    } else {
      acc[kHeadDim - 1] = 0.f;
    }
  }
};
}  // namespace flash

__global__ void decode(float* acc) {
#if defined(__CUDA_ARCH__)
  flash::Mainloop<(__CUDA_ARCH__ >= 900), 128>::step(acc);
#endif
}
"""

# The failing twins: a plain `if` (the optimizer may fold it; -G keeps the asm) and a second
# instantiation that takes the wgmma branch on every target.
PLAIN_IF = STATIC_MEMBER.replace("if constexpr (ArchTraits::kHasTma)", "if (ArchTraits::kHasTma)")
BOTH_INSTANTIATED = TEMPLATE_ARGUMENT.replace(
    "  flash::Mainloop<(__CUDA_ARCH__ >= 900), 128>::step(acc);\n",
    "  flash::Mainloop<(__CUDA_ARCH__ >= 900), 128>::step(acc);\n  flash::Mainloop<true, 64>::step(acc);\n")
# A qualifier that names a template parameter (any class may bind it): not evaluated.
THROUGH_TEMPLATE_PARAMETER = STATIC_MEMBER.replace("template <typename T>", "template <typename T, class Traits>") \
    .replace("ArchTraits::kHasTma)", "Traits::kHasTma)").replace("copy_tile<float>(float*)",
                                                                 "copy_tile<float, ArchTraits>(float*)")

# Helpers with unguarded sm_90 asm (stmatrix, wgmma): emitted only where a live caller reaches them.
HELPERS = """\
#include <cstdint>
#define CUTE_DEVICE __forceinline__ __device__

namespace epi {
CUTE_DEVICE void stsm_x4(uint32_t smem, uint32_t a, uint32_t b, uint32_t c, uint32_t d) {
  asm volatile("stmatrix.sync.aligned.x4.m8n8.shared.b16 [%0], {%1, %2, %3, %4};"
               :: "r"(smem), "r"(a), "r"(b), "r"(c), "r"(d));
}
static __device__ void wg_fence() { asm volatile("wgmma.fence.sync.aligned;" ::: "memory"); }
}  // namespace epi

template <int kTile>
__global__ void store_tile(float* out, uint32_t smem) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  epi::wg_fence();
  epi::stsm_x4(smem, 1u, 2u, 3u, 4u);
#else
  out[threadIdx.x % kTile] = 0.f;
#endif
}
template __global__ void store_tile<64>(float*, uint32_t);
"""
HELPERS_ALSO_UNGUARDED = HELPERS + """\
__global__ void store_tile_any(uint32_t smem) { epi::stsm_x4(smem, 0u, 0u, 0u, 0u); }
"""
# The caller's guard is an if constexpr on the arch constant.
HELPERS_UNDER_IF_CONSTEXPR = NS_CONSTANT.replace(
    "namespace gemm {\n", "namespace gemm {\n__device__ __forceinline__ void fence_all() {\n"
    "  asm volatile(\"wgmma.fence.sync.aligned;\" ::: \"memory\");\n}\n", 1).replace(
    '    asm volatile("wgmma.fence.sync.aligned;" ::: "memory");\n  } else {',
    "    fence_all();\n  } else {")


def _aic301(tmp_path, name, text, gpus):
    # A CMake build with CMake's default architectures (the fleet's): the feature is judged on
    # every target of every fleet GPU, as a build for all of them makes it.
    (tmp_path / ".git").mkdir(exist_ok=True)
    p = tmp_path / name
    p.write_text(text)
    (tmp_path / "CMakeLists.txt").write_text("cmake_minimum_required(VERSION 3.24)\nproject(kernels LANGUAGES CXX CUDA)\n"
                                             f"add_library(kernels SHARED {name})\n")
    return [(d.line, d.message.split(" (")[0], d.severity) for d in
            lint_paths([p], Target(gpus=list(gpus)), use_config=False, select=["AIC301"])]


def _line(text, marker):
    return next(i for i, t in enumerate(text.split("\n"), 1) if marker in t)


@pytest.mark.parametrize("name, text", [
    ("ns_constant.cu", NS_CONSTANT), ("static_member.cu", STATIC_MEMBER),
    ("constexpr_function.cu", CONSTEXPR_FUNCTION), ("template_argument.cu", TEMPLATE_ARGUMENT),
    ("helpers_guarded.cu", HELPERS), ("helpers_if_constexpr.cu", HELPERS_UNDER_IF_CONSTEXPR),
])
def test_arch_guards_keep_sm90_asm_off_the_a100(tmp_path, name, text):
    assert _aic301(tmp_path, name, text, ["A100", "H100"]) == []


@pytest.mark.parametrize("name, text, marker", [
    ("plain_if.cu", PLAIN_IF, "wgmma.fence"),
    ("both_instantiated.cu", BOTH_INSTANTIATED, "wgmma.fence"),
    ("through_parameter.cu", THROUGH_TEMPLATE_PARAMETER, "wgmma.fence"),
    ("helpers_unguarded.cu", HELPERS_ALSO_UNGUARDED, "stmatrix"),
])
def test_what_is_no_guard_stays_reported_on_the_a100(tmp_path, name, text, marker):
    got = _aic301(tmp_path, name, text, ["A100", "H100"])
    assert [(ln, sev) for ln, _m, sev in got] == [(_line(text, marker), "error")], got


def test_guarded_helper_findings_name_the_instruction(tmp_path):
    got = _aic301(tmp_path, "helpers_unguarded.cu", HELPERS_ALSO_UNGUARDED, ["A100"])
    assert got == [(6, "'stmatrix.sync.aligned.x4.m8n8.shared.b16'", "error")]


# -- PTX operand forms ---------------------------------------------------------------

MAX3 = """\
// Online softmax: the running max of three partial maxima.
__device__ __forceinline__ float max3(float a, float b, float c) {
  float d;
  asm("max.f32 %0, %1, %2, %3;" : "=f"(d) : "f"(a), "f"(b), "f"(c));
  return d;
}
__global__ void row_max(const float* x, float* out) {
  out[threadIdx.x] = max3(x[0], x[1], x[2]);
}
"""
MAX2 = MAX3.replace('asm("max.f32 %0, %1, %2, %3;" : "=f"(d) : "f"(a), "f"(b), "f"(c));',
                    'asm("max.f32 %0, %1, %2;" : "=f"(d) : "f"(a), "f"(b));\n  d = fmaxf(d, c);')

STBULK = """\
#include <cstdint>
// Zero a shared-memory staging buffer before the TMA writes into it (sm_100).
__device__ __forceinline__ void zero_smem(void* smem, SIZE_T bytes) {
  uint32_t addr = static_cast<uint32_t>(__cvta_generic_to_shared(smem));
  asm volatile("st.bulk.weak.shared::cta [%0], %1, 0;" :: "r"(addr), "CONSTRAINT"(bytes) : "memory");
}
__global__ void prologue(float* out) {
  extern __shared__ float stage[];
  zero_smem(stage, 4096);
  __syncthreads();
  out[threadIdx.x] = stage[threadIdx.x];
}
"""
STBULK64 = STBULK.replace("SIZE_T", "uint64_t").replace("CONSTRAINT", "l")
STBULK32 = STBULK.replace("SIZE_T", "uint32_t").replace("CONSTRAINT", "r")


def test_three_input_max_needs_sm100(tmp_path):
    got = _aic301(tmp_path, "max3.cu", MAX3, ["H100", "B200"])
    assert [(ln, m) for ln, m, _s in got] == [(4, "'max.f32'")]
    assert _aic301(tmp_path, "max2.cu", MAX2, ["H100", "B200"]) == []
    assert _aic301(tmp_path, "max3_b200.cu", MAX3, ["B200"]) == []


def test_st_bulk_size_is_64_bit(tmp_path):
    assert _aic301(tmp_path, "zero64.cu", STBULK64, ["B200"]) == []
    got = _aic301(tmp_path, "zero32.cu", STBULK32, ["B200"])
    assert [(ln, m) for ln, m, _s in got] == [(5, "'st.bulk.weak.shared::cta'")]


def test_integer_max_has_no_three_input_form(matrix):
    from aicompat.cuda.cpp.scan import CudaSource, load_features

    k = load_features(matrix)
    src = 'asm("max.s32 %0, %1, %2, %3;" : "=r"(d) : "r"(a), "r"(b), "r"(c));\n'
    assert CudaSource(src, k).verdict("sm_100a").status == "fail"
    two = 'asm("max.s32 %0, %1, %2;" : "=r"(d) : "r"(a), "r"(b));\n'
    assert CudaSource(two, k).verdict("sm_80").status == "ok"


# -- the same claims, checked with nvcc ----------------------------------------------

_NVCC = shutil.which("nvcc")


@pytest.mark.skipif(_NVCC is None, reason="nvcc not on PATH")
@pytest.mark.parametrize("name, text, target, flags, ok", [
    ("ns_constant", NS_CONSTANT, "sm_80", [], True),
    ("static_member", STATIC_MEMBER, "sm_80", ["-G"], True),
    ("constexpr_function", CONSTEXPR_FUNCTION, "sm_80", ["-G"], True),
    ("template_argument", TEMPLATE_ARGUMENT, "sm_80", ["-G"], True),
    ("template_argument_sm90a", TEMPLATE_ARGUMENT, "sm_90a", [], True),
    ("plain_if", PLAIN_IF, "sm_80", ["-G"], False),
    ("both_instantiated", BOTH_INSTANTIATED, "sm_80", [], False),
    ("helpers_guarded", HELPERS, "sm_80", [], True),
    ("helpers_if_constexpr", HELPERS_UNDER_IF_CONSTEXPR, "sm_80", [], True),
    ("helpers_unguarded", HELPERS_ALSO_UNGUARDED, "sm_80", [], False),
    ("max3_sm90", MAX3, "sm_90", [], False),
    ("max3_sm100", MAX3, "sm_100", [], True),
    ("max2_sm90", MAX2, "sm_90", [], True),
    ("stbulk64", STBULK64, "sm_100", [], True),
    ("stbulk32", STBULK32, "sm_100", [], False),
])
def test_claims_hold_for_nvcc(tmp_path, name, text, target, flags, ok):
    src = tmp_path / f"{name}.cu"
    src.write_text(textwrap.dedent(text))
    num = target[3:]
    cmd = [_NVCC, "-cubin", "-gencode", f"arch=compute_{num},code=sm_{num}", str(src), "-o", str(tmp_path / "k.cubin"),
           *flags]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert (r.returncode == 0) is ok, r.stderr[-2000:]


# SageAttention's expect_bytes<bytes>(): the tx count is an immediate ("n"), not a register.
EXPECT_TX_IMM = """\
#include <cstdint>
template <uint32_t bytes>
__device__ __forceinline__ void expect_bytes(uint64_t* bar) {
    uint32_t bar_ptr = static_cast<uint32_t>(__cvta_generic_to_shared(bar));
    asm volatile ("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\\n"
        :: "r"(bar_ptr), "n"(bytes));
}
__global__ void kern(float* out) {
    __shared__ uint64_t bar;
    expect_bytes<128>(&bar);
    out[0] = 1.f;
}
"""


def test_an_immediate_operand_meets_the_register_form_of_its_slot(tmp_path):
    # ptxas 13.0 for sm_80: "Feature 'mbarrier.arrive.expect_tx' requires .target sm_90 or higher"
    assert [ln for ln, _m, _s in _aic301(tmp_path, "tx.cu", EXPECT_TX_IMM, ["A100", "H100"])] == [5]
    assert _aic301(tmp_path, "tx_h100.cu", EXPECT_TX_IMM, ["H100"]) == []
