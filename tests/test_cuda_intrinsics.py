"""C++ intrinsics that CUDA 13.0's headers declare only for some targets (cuda_features.toml:
cluster_intrinsics from crt/sm_90_rt.h, float2_math from crt/sm_100_rt.h, the bf16 FMA forms of
cuda_bf16.hpp), each proved by a corpus kernel (fixtures/kernels); and ones that need no entry
(software fallbacks in every target, checked with nvcc -cubin). Each failing case has its twin."""
import textwrap
from pathlib import Path

from aicompat import Target, lint_paths


# A real build for the file: CMake with no CUDA_ARCHITECTURES builds for its default archs,
# taken to be the fleet's (a file with no visible build is judged only for what fails everywhere).
def _cmake(root: Path, *sources: str) -> None:
    if not (root / "setup.py").exists():
        (root / "CMakeLists.txt").write_text("cmake_minimum_required(VERSION 3.24)\nproject(kernels LANGUAGES CXX CUDA)\n"
                                             f"add_library(kernels STATIC {' '.join(sources)})\n")


def lint(tmp_path: Path, text: str, *gpus):
    p = tmp_path / "csrc" / "kernels.cu"
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(textwrap.dedent(text))
    _cmake(tmp_path, "csrc/kernels.cu")
    diags = lint_paths([p], target=Target(gpus=list(gpus)), use_config=False, select=["AIC301"])
    return [(d.line, d.column, d.targets, d.severity, d.message) for d in diags]


# Written like a split-K reduction through distributed shared memory (Hopper clusters).
CLUSTER_REDUCE = """\
    #include <cuda_runtime.h>

    template <int kThreads>
    __global__ void splitk_cluster_reduce(const float* __restrict__ partials, float* __restrict__ out) {
      __shared__ float acc[kThreads];
      acc[threadIdx.x] = partials[blockIdx.x * kThreads + threadIdx.x];
      __cluster_barrier_arrive();
      __cluster_barrier_wait();
      if (__clusterRelativeBlockRank() == 0) {
        const float* peer = static_cast<const float*>(__cluster_map_shared_rank(acc, 1));
        out[blockIdx.x / 2 * kThreads + threadIdx.x] = acc[threadIdx.x] + peer[threadIdx.x];
      }
      __cluster_barrier_arrive();
      __cluster_barrier_wait();
    }

    template __global__ void splitk_cluster_reduce<128>(const float*, float*);
"""


def test_cluster_intrinsics_are_undefined_below_hopper(tmp_path):
    got = lint(tmp_path, CLUSTER_REDUCE, "A100", "H100")
    assert [(ln, col, t, sev) for ln, col, t, sev, _ in got] == [
        (7, 3, ["A100"], "error"), (8, 3, ["A100"], "error"), (9, 7, ["A100"], "error"),
        (10, 51, ["A100"], "error"), (13, 3, ["A100"], "error"), (14, 3, ["A100"], "error")]
    assert got[2][4] == (
        "'__clusterRelativeBlockRank' (cluster_intrinsics) is rejected by every compile target that runs there "
        "(CMakeLists.txt line 3 builds it for CMake's default architectures: taken to be the fleet's): \"identifier "
        "\"__clusterRelativeBlockRank\" is undefined\"; fails on sm_80 (A100). Accepted by sm_90, sm_90a, sm_100, "
        "sm_100a, sm_100f, sm_103, sm_103a, sm_103f, sm_110, sm_110a, sm_110f, sm_120, sm_120a, sm_120f, sm_121, "
        "sm_121a, sm_121f: guard it and provide a fallback")


def test_cluster_intrinsics_with_an_ampere_path_are_fine(tmp_path):
    fixed = CLUSTER_REDUCE.replace(
        "      acc[threadIdx.x] = partials[blockIdx.x * kThreads + threadIdx.x];\n",
        "      acc[threadIdx.x] = partials[blockIdx.x * kThreads + threadIdx.x];\n"
        "    #if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900\n").replace(
        "      __cluster_barrier_wait();\n    }\n",
        "      __cluster_barrier_wait();\n"
        "    #else  // no clusters: every block adds its partial in global memory\n"
        "      atomicAdd(&out[blockIdx.x / 2 * kThreads + threadIdx.x], acc[threadIdx.x]);\n"
        "    #endif\n    }\n")
    assert "#else" in fixed
    assert lint(tmp_path, fixed, "A100", "H100") == []


# Written like an RMSNorm epilogue that packs two fp32 lanes per instruction on Blackwell.
RMS_SCALE = """\
    __global__ void rms_scale(const float2* __restrict__ x, const float2* __restrict__ w, float2* __restrict__ y,
                              float inv_rms, int n2) {
      int i = blockIdx.x * blockDim.x + threadIdx.x;
      if (i >= n2) return;
      y[i] = __fmul2_rn(__fmul2_rn(x[i], make_float2(inv_rms, inv_rms)), w[i]);
    }
"""


def test_float2_math_is_undefined_below_blackwell(tmp_path):
    got = lint(tmp_path, RMS_SCALE, "H100", "B200")
    # two calls on one line, one finding each, each at its own column
    assert [(ln, col, t, sev) for ln, col, t, sev, _ in got] == [
        (5, 10, ["H100"], "error"), (5, 21, ["H100"], "error")]
    assert "\"identifier \"__fmul2_rn\" is undefined\"; fails on sm_90 (H100)" in got[0][4]


def test_float2_math_with_a_scalar_path_is_fine(tmp_path):
    fixed = RMS_SCALE.replace(
        "      y[i] = __fmul2_rn(__fmul2_rn(x[i], make_float2(inv_rms, inv_rms)), w[i]);\n",
        "    #if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 1000\n"
        "      y[i] = __fmul2_rn(__fmul2_rn(x[i], make_float2(inv_rms, inv_rms)), w[i]);\n"
        "    #else\n"
        "      y[i] = make_float2(x[i].x * inv_rms * w[i].x, x[i].y * inv_rms * w[i].y);\n"
        "    #endif\n")
    assert "#else" in fixed
    assert lint(tmp_path, fixed, "H100", "B200") == []


# Written like a fused bias + ReLU on bf16 pairs (vLLM activation kernels style).
BIAS_RELU = """\
    #include <cuda_bf16.h>

    __global__ void bias_relu_bf16(__nv_bfloat162* __restrict__ x, const __nv_bfloat162* __restrict__ bias, int n2) {
      const __nv_bfloat162 one = __float2bfloat162_rn(1.f);
      for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n2; i += gridDim.x * blockDim.x) {
        x[i] = __hfma2_relu(x[i], one, bias[i % 64]);
      }
    }
"""


def test_bf16_fma_relu_is_ampere_only(tmp_path):
    got = lint(tmp_path, BIAS_RELU, "T4", "A100")
    assert [(ln, col, t) for ln, col, t, _s, _m in got] == [(6, 12, ["T4"])]
    assert "'__hfma2_relu' (bf16x2_math)" in got[0][4]


def test_bf16_fma_relu_with_a_turing_path_is_fine(tmp_path):
    fixed = BIAS_RELU.replace(
        "        x[i] = __hfma2_relu(x[i], one, bias[i % 64]);\n",
        "    #if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800\n"
        "        x[i] = __hfma2_relu(x[i], one, bias[i % 64]);\n"
        "    #else\n"
        "        float2 v = __bfloat1622float2(x[i]), b = __bfloat1622float2(bias[i % 64]);\n"
        "        x[i] = __floats2bfloat162_rn(fmaxf(v.x + b.x, 0.f), fmaxf(v.y + b.y, 0.f));\n"
        "    #endif\n")
    assert "#else" in fixed
    assert lint(tmp_path, fixed, "T4", "A100") == []


def test_conversions_with_software_fallbacks_need_no_guard(tmp_path):
    """__nv_cvt_* to e8m0/fp6/fp4/fp8, bf16 __hmax2 and atomicAdd on __nv_bfloat162 compile for
    sm_75 ... sm_120 alike (nvcc 13.0 -cubin, cuda_features.toml's note): nothing to report."""
    code = """\
        #include <cuda_bf16.h>
        #include <cuda_fp8.h>
        #include <cuda_fp6.h>
        #include <cuda_fp4.h>

        __global__ void quantize_mx(const float2* __restrict__ x, __nv_fp8_storage_t* scale,
                                    __nv_fp6x2_storage_t* q6, __nv_fp4x2_storage_t* q4,
                                    __nv_bfloat162* amax) {
          int i = blockIdx.x * blockDim.x + threadIdx.x;
          float2 v = x[i];
          scale[i] = __nv_cvt_float_to_e8m0(fmaxf(fabsf(v.x), fabsf(v.y)), __NV_SATFINITE, cudaRoundPosInf);
          q6[i] = __nv_cvt_float2_to_fp6x2(v, __NV_E2M3, cudaRoundNearest);
          q4[i] = __nv_cvt_float2_to_fp4x2(v, __NV_E2M1, cudaRoundNearest);
          __nv_bfloat162 b = __float22bfloat162_rn(v);
          atomicAdd(amax, __hmax2(b, __hneg2(b)));
        }
    """
    assert lint(tmp_path, code, "T4", "A100", "H100", "B200") == []
