"""CMake option() values are configurations (issue 28 item 3): a subproject added only
`if(<option>)` is built with its parent's flags when the user turns the option on, so it is
read through the parent, not on its own with CMake's default architectures. Each failing case
has its clean twin."""
import textwrap
from pathlib import Path

from aicompat import Target, lint_paths

PARENT = """\
    cmake_minimum_required(VERSION 3.24)
    project(moe_kernels LANGUAGES CXX CUDA)

    # the 'a' suffix enables wgmma/TMA on Hopper
    set(KERNELS_CUDA_ARCH "90a" CACHE STRING "arch for -gencode")
    set(CMAKE_CUDA_ARCHITECTURES OFF)
    set(CMAKE_CUDA_FLAGS "${{CMAKE_CUDA_FLAGS}} {gencode} --use_fast_math")

    add_library(moe_kernels SHARED csrc/moe.cu)

    option(KERNELS_BUILD_TESTS "Build the gtest unit tests" OFF)
    if(KERNELS_BUILD_TESTS)
      enable_testing()
      add_subdirectory(tests/cpp)
    endif()
"""

TESTS = """\
    find_package(GTest REQUIRED)
    add_executable(test_wgmma_tile test_wgmma_tile.cu)
    target_link_libraries(test_wgmma_tile PRIVATE GTest::gtest CUDA::cudart)
"""

KERNEL = """\
    #include <cuda_runtime.h>

    __device__ __forceinline__ void fence_operands() {
      asm volatile("wgmma.fence.sync.aligned;\\n" ::: "memory");
    }

    __global__ void tile_kernel(float* out) {
      fence_operands();
      out[threadIdx.x] = 1.f;
    }
"""


def project(root: Path, gencode: str) -> None:
    files = {
        "CMakeLists.txt": PARENT.format(gencode=gencode),
        "csrc/moe.cu": "__global__ void moe(float* x) { x[0] = 0.f; }\n",
        "tests/cpp/CMakeLists.txt": TESTS,
        "tests/cpp/test_wgmma_tile.cu": KERNEL,
    }
    for name, text in files.items():
        p = root / name
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(textwrap.dedent(text))


def aic301(root: Path, gpus) -> list:
    diags = lint_paths([root], target=Target(gpus=list(gpus)), use_config=False, select=["AIC301"])
    return [(Path(d.path).relative_to(root).as_posix(), d.line, d.message) for d in diags]


def test_tests_enabled_by_an_option_are_built_with_the_parents_sm90a_flags(tmp_path):
    project(tmp_path, "-gencode arch=compute_${KERNELS_CUDA_ARCH},code=sm_${KERNELS_CUDA_ARCH}")
    assert aic301(tmp_path, ["A100", "H100"]) == []


def test_tests_enabled_by_an_option_with_an_sm80_gencode_fail_on_the_a100(tmp_path):
    project(tmp_path, "-gencode arch=compute_80,code=sm_80 -gencode arch=compute_90a,code=sm_90a")
    found = aic301(tmp_path, ["A100", "H100"])
    assert [(p, line) for p, line, _m in found] == [("tests/cpp/test_wgmma_tile.cu", 4)]
    assert "sm_80" in found[0][2] and "CMakeLists.txt" in found[0][2]
