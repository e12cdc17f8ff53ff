"""A CUDA program whose main() returns before any launch unless the GPU is of one
architecture (CUTLASS's examples and CuTe tutorials) never runs its kernels on the
others: no run-time warning (CuTe's trap, an emptied kernel) for them. The build
still compiles every target, so compile failures stay. Each case has its twin."""
import textwrap
from pathlib import Path

from aicompat import Target, lint_paths
from aicompat.cuda.cpp.host_gate import gates, turned_away

# Written like cutlass/examples/cute/tutorial/hopper/wgmma_sm90.cu (flash-attn 2.8.3.post2 sdist).
CUTE_TUTORIAL = """\
    #include <cstdio>
    #include <cute/tensor.hpp>
    #include <cute/atom/mma_atom.hpp>
    using namespace cute;

    template <class TiledMma>
    __global__ void gemm_device(float* C, TiledMma mma) {
      C[threadIdx.x] = 0.f;
    }

    void gemm_nt(float* C, cudaStream_t stream) {
      TiledMMA tiled_mma = make_tiled_mma(SM90_64x64x16_F16F16F16_SS<GMMA::Major::MN, GMMA::Major::MN>{});
      gemm_device<<<1, 128, 0, stream>>>(C, tiled_mma);
    }

    int main(int argc, char** argv)
    {
      cudaDeviceProp props;
      cudaError_t error = cudaGetDeviceProperties(&props, 0);
      if (error != cudaSuccess) {
        std::printf("cudaGetDeviceProperties() returned an error: %s {\\n", cudaGetErrorString(error));
        return -1;
      }

      if (props.major != 9) {
        std::printf("This example requires NVIDIA's Hopper Architecture GPU with compute capability 90a\\n");
        // Return 0 so tests pass if run on unsupported architectures or CUDA Toolkits.
        return 0;
      }

      float* C = nullptr;
      gemm_nt(C, 0);
      return 0;
    }
"""


# A real build for the file: CMake with no CUDA_ARCHITECTURES builds for its default archs,
# taken to be the fleet's (a file with no visible build is judged only for what fails everywhere).
def _cmake(root: Path, *sources: str) -> None:
    if not (root / "setup.py").exists():
        (root / "CMakeLists.txt").write_text("cmake_minimum_required(VERSION 3.24)\nproject(kernels LANGUAGES CXX CUDA)\n"
                                             f"add_library(kernels STATIC {' '.join(sources)})\n")


def lint(tmp_path: Path, text: str, *gpus):
    p = tmp_path / "examples" / "wgmma_sm90.cu"
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(textwrap.dedent(text))
    _cmake(tmp_path, "examples/wgmma_sm90.cu")
    diags = lint_paths([p], target=Target(gpus=list(gpus)), use_config=False, select=["AIC301"])
    return [(d.line, d.targets, d.message) for d in diags]


def test_main_that_turns_other_gpus_away_runs_no_trap_there(tmp_path):
    assert lint(tmp_path, CUTE_TUTORIAL, "A100", "H100") == []


def test_without_the_device_check_the_trap_is_reported(tmp_path):
    text = CUTE_TUTORIAL.replace("if (props.major != 9) {", "if (argc > 8) {")
    found = lint(tmp_path, text, "A100", "H100")
    assert [(ln, t) for ln, t, _m in found] == [(12, ["A100"])]
    assert "compiles to CUTE_INVALID_CONTROL_PATH, a trap at run time" in found[0][2]


def test_a_check_after_the_launch_does_not_gate_it(tmp_path):
    text = CUTE_TUTORIAL.replace("  float* C = nullptr;\n  gemm_nt(C, 0);\n", "").replace(
        "  if (props.major != 9) {", "  gemm_nt(nullptr, 0);\n  if (props.major != 9) {")
    assert [(ln, t) for ln, t, _m in lint(tmp_path, text, "A100", "H100")] == [(12, ["A100"])]


def test_compile_failures_stay_whatever_main_checks(tmp_path):
    # The build compiles gemm_device for sm_80 too: ptxas rejects the wgmma there.
    text = CUTE_TUTORIAL.replace("  C[threadIdx.x] = 0.f;",
                                 '  asm volatile("wgmma.fence.sync.aligned;\\n" ::: "memory");\n  C[threadIdx.x] = 0.f;')
    assert [(ln, t) for ln, t, _m in lint(tmp_path, text, "A100", "H100") if "rejected" in _m] == [(8, ["A100"])]


def test_gate_conditions_per_capability():
    # gates() reads masked text (cxx.mask blanks string contents, like the brace in the first message).
    text = textwrap.dedent(CUTE_TUTORIAL).replace("%s {", "%s").replace(
        "props.major != 9", "(props.major != 10) || (props.major == 10 && props.minor > 1)")
    conds = gates(text)
    assert conds == ["(props.major != 10) || (props.major == 10 && props.minor > 1)"]
    assert [turned_away(conds, c) for c in [(8, 0), (9, 0), (10, 0), (10, 3), (12, 0)]] == [
        True, True, False, True, True]
    # What else the condition names is unknown: only a condition true for sure turns a GPU away.
    assert not turned_away(["props.major != 9 && use_fallback"], (8, 0))
    assert turned_away(["props.major < 9 || __CUDACC_VER_MAJOR__ < 12"], (8, 0))
