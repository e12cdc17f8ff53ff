"""Each value of a CMake option() is its own configuration (issue 28 item 3): the project is
evaluated with every option at its default and with each tested option flipped alone, a
finding names the configuration it fails in, and a macro the project's CMake defines only in
another configuration (next to that configuration's CUDA_ARCHITECTURES) is undefined in this
one. Every failing case has its clean twin."""
import textwrap
from pathlib import Path

from aicompat import Target, lint_paths
from aicompat.cuda.cmake.configs import MAX_FLIPS, configurations
from aicompat.cuda.cpp.preprocessor import CompileTarget, Context, preprocess

ATTN = """\
    cmake_minimum_required(VERSION 3.24)
    project(attn LANGUAGES CXX CUDA)

    option(ATTN_HOPPER "Build the Hopper (sm_90a) kernels" ON)

    add_library(attn SHARED csrc/attn.cu)
    if(ATTN_HOPPER)
      set_target_properties(attn PROPERTIES CUDA_ARCHITECTURES "90a")
      target_compile_definitions(attn PRIVATE LIB_HOPPER)
    else()
      set_target_properties(attn PROPERTIES CUDA_ARCHITECTURES "80")
    {else_defines}endif()
"""

ATTN_CU = """\
    #include <cuda_runtime.h>

    __global__ void attn_kernel(float* out) {
    #if defined(LIB_HOPPER)
      asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
    #endif
      out[threadIdx.x] = 0.f;
    }
"""


def write(root: Path, files: dict) -> None:
    for name, text in files.items():
        p = root / name
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(textwrap.dedent(text))


def lint(root: Path, gpus, select=("AIC301", "AIC302")) -> list:
    diags = lint_paths([root], target=Target(gpus=list(gpus)), use_config=False, select=list(select))
    return [(Path(d.path).relative_to(root).as_posix(), d.line, d.code, d.message) for d in diags]


def attn(root: Path, else_defines: str = "", cu: str = ATTN_CU, extra: dict | None = None) -> None:
    write(root, {"CMakeLists.txt": ATTN.format(else_defines=else_defines), "csrc/attn.cu": cu, **(extra or {})})


def test_hopper_code_defined_only_with_the_sm90a_configuration_is_clean_on_a100_and_h100(tmp_path):
    attn(tmp_path)
    assert lint(tmp_path, ["A100", "H100"]) == []


def test_hopper_macro_also_defined_in_the_sm80_configuration_fails_on_the_a100_naming_it(tmp_path):
    attn(tmp_path, else_defines="  target_compile_definitions(attn PRIVATE LIB_HOPPER)\n")
    found = lint(tmp_path, ["A100", "H100"])
    assert [(p, line, code) for p, line, code, _m in found] == [("csrc/attn.cu", 5, "AIC301")]
    msg = found[0][3]
    assert "CMakeLists.txt line 6 builds it for sm_80, compute_80 with ATTN_HOPPER=OFF" in msg
    assert "sm_80 (A100)" in msg


HEADER_CU = """\
    #include "wgmma_fence.cuh"

    __global__ void attn_kernel(float* out) {
      fence();
      out[threadIdx.x] = 0.f;
    }
"""

HEADER = """\
    #pragma once
    __device__ __forceinline__ void fence() {
    #ifdef LIB_HOPPER
      asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
    #endif
    }
"""


def test_a_header_guarded_by_the_hopper_macro_is_judged_in_its_includers_configurations(tmp_path):
    attn(tmp_path, cu=HEADER_CU, extra={"csrc/wgmma_fence.cuh": HEADER})
    assert lint(tmp_path, ["A100", "H100"]) == []


def test_a_header_guarded_by_the_hopper_macro_fails_where_the_sm80_configuration_defines_it(tmp_path):
    attn(tmp_path, else_defines="  target_compile_definitions(attn PRIVATE LIB_HOPPER)\n", cu=HEADER_CU,
         extra={"csrc/wgmma_fence.cuh": HEADER})
    found = lint(tmp_path, ["A100", "H100"])
    assert [(p, line) for p, line, _c, _m in found] == [("csrc/wgmma_fence.cuh", 4)]
    assert "ATTN_HOPPER=OFF" in found[0][3]


CACHE_ARCH = """\
    cmake_minimum_required(VERSION 3.24)
    project(gemm LANGUAGES CXX CUDA)

    set(KERNEL_ARCH "{arch}" CACHE STRING "the arch the kernels are built for")
    option(GEMM_FAST_MATH "Build with --use_fast_math" OFF)

    set(CMAKE_CUDA_ARCHITECTURES OFF)
    set(CMAKE_CUDA_FLAGS "${{CMAKE_CUDA_FLAGS}} -gencode arch=compute_${{KERNEL_ARCH}},code=sm_${{KERNEL_ARCH}}")
    if(GEMM_FAST_MATH)
      string(APPEND CMAKE_CUDA_FLAGS " --use_fast_math")
    endif()

    add_library(gemm SHARED csrc/gemm.cu)
"""

GEMM_CU = """\
    __global__ void gemm_kernel(float* out) {
      asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
      out[threadIdx.x] = 1.f;
    }
"""


def test_a_cache_string_arch_is_its_default_in_every_configuration(tmp_path):
    write(tmp_path, {"CMakeLists.txt": CACHE_ARCH.format(arch="90a"), "csrc/gemm.cu": GEMM_CU})
    assert lint(tmp_path, ["H100"]) == []


def test_a_cache_string_arch_without_the_a_suffix_fails_in_every_configuration(tmp_path):
    write(tmp_path, {"CMakeLists.txt": CACHE_ARCH.format(arch="90"), "csrc/gemm.cu": GEMM_CU})
    found = lint(tmp_path, ["H100"])
    assert [(p, line, code) for p, line, code, _m in found] == [("csrc/gemm.cu", 2, "AIC301")]
    # Both configurations build it alike: the finding names none.
    assert "GEMM_FAST_MATH" not in found[0][3] and "rejected by sm_90" in found[0][3]


PARENT = """\
    cmake_minimum_required(VERSION 3.24)
    project(moe LANGUAGES CXX CUDA)

    set(CMAKE_CUDA_ARCHITECTURES {archs})
    add_library(moe SHARED csrc/moe.cu)

    option(MOE_BUILD_TESTS "Build the kernel tests" ON)
    if(MOE_BUILD_TESTS)
      add_subdirectory(tests)
    endif()
"""

MOE_CU = "__global__ void moe(float* x) { x[0] = 0.f; }\n"

TESTS = """\
    add_executable(test_fence test_fence.cu)
    target_link_libraries(test_fence PRIVATE moe)
"""


def test_tests_added_by_a_default_on_option_are_built_for_the_parents_archs(tmp_path):
    write(tmp_path, {"CMakeLists.txt": PARENT.format(archs='"90a"'), "csrc/moe.cu": MOE_CU,
                     "tests/CMakeLists.txt": TESTS, "tests/test_fence.cu": GEMM_CU})
    assert lint(tmp_path, ["H100"]) == []


def test_tests_added_by_a_default_on_option_fail_with_the_parents_sm80_naming_the_configuration(tmp_path):
    write(tmp_path, {"CMakeLists.txt": PARENT.format(archs='"80;90a"'), "csrc/moe.cu": MOE_CU,
                     "tests/CMakeLists.txt": TESTS, "tests/test_fence.cu": GEMM_CU})
    found = lint(tmp_path, ["A100", "H100"], select=["AIC301"])
    assert [(p, line) for p, line, _c, _m in found] == [("tests/test_fence.cu", 2)]
    assert "with MOE_BUILD_TESTS=ON (the default)" in found[0][3] and "sm_80 (A100)" in found[0][3]


ARCH_OPTION = """\
    cmake_minimum_required(VERSION 3.24)
    project(attn LANGUAGES CXX CUDA)
    option(ATTN_HOPPER "Build for Hopper only" ON)
    if(ATTN_HOPPER)
      set(CMAKE_CUDA_ARCHITECTURES "90a")
    else()
      set(CMAKE_CUDA_ARCHITECTURES "{other}")
    endif()
    add_library(attn SHARED csrc/attn.cu)
"""


def test_aic302_an_arch_list_per_configuration_serves_the_gpus_some_configuration_builds_for(tmp_path):
    write(tmp_path, {"CMakeLists.txt": ARCH_OPTION.format(other="80"), "csrc/attn.cu": ATTN_CU})
    assert lint(tmp_path, ["A100", "H100"], select=["AIC302"]) == []


def test_aic302_a_gpu_no_configuration_builds_for_is_reported_in_each(tmp_path):
    write(tmp_path, {"CMakeLists.txt": ARCH_OPTION.format(other="90"), "csrc/attn.cu": ATTN_CU})
    found = lint(tmp_path, ["A100", "H100"], select=["AIC302"])
    assert [(p, line) for p, line, _c, _m in found] == [("CMakeLists.txt", 5), ("CMakeLists.txt", 7)]
    assert "no code for sm_80 (A100)" in found[0][3]
    assert found[0][3].endswith("(in the CMake configuration with ATTN_HOPPER=ON (the default))")
    assert found[1][3].endswith("(in the CMake configuration with ATTN_HOPPER=OFF)")


def test_options_past_the_bound_keep_both_values_in_every_configuration(tmp_path):
    names = [f"OPT_{i}" for i in range(MAX_FLIPS + 2)]
    text = "project(p LANGUAGES CUDA)\n" + "".join(
        f'option({n} "" OFF)\nif({n})\n  set(FLAGS_{n} "-D{n}")\nendif()\n' for n in names)
    (tmp_path / "CMakeLists.txt").write_text(text)
    cfgs = configurations(tmp_path / "CMakeLists.txt", tmp_path)
    assert [c.label for c in cfgs][1:] == [f"with {n}=ON" for n in names[:MAX_FLIPS]]
    # The options past the bound take both values (an if() on them is undecided, its
    # branches merged: eval._merge), in every configuration.
    for c in cfgs:
        assert all(c.model.final_scope[f"FLAGS_{n}"] == ("-D" + n,) for n in names[MAX_FLIPS:])
    assert "FLAGS_OPT_0" not in cfgs[0].model.final_scope and cfgs[1].model.final_scope["FLAGS_OPT_0"] == ("-DOPT_0",)


def test_preprocessor_names_known_undefined_on_top_of_some_defines():
    src = "#ifdef LIB_HOPPER\nA\n#endif\n#ifdef OTHER\nB\n#endif\n#ifdef GIVEN\nC\n#endif\n"
    ctx = Context(some_defines={"GIVEN": "1"}, undefined=frozenset({"LIB_HOPPER"}))
    live = preprocess(src, CompileTarget("sm_80"), context=ctx).live
    assert (live[2], live[5], live[8]) == (False, None, True)
    live = preprocess(src, CompileTarget("sm_80"), context=Context(some_defines={"GIVEN": "1"})).live
    assert (live[2], live[5], live[8]) == (None, None, True)


def test_a_definition_not_known_here_keeps_the_projects_macros_open_in_its_configuration(tmp_path):
    # -D from the environment may define LIB_HOPPER in the sm_80 configuration: unknown stays unknown.
    attn(tmp_path, else_defines='  set(EXTRA_DEFS "$ENV{ATTN_EXTRA_DEFS}")\n'
                                "  add_library(extra SHARED csrc/extra.cu)\n"
                                "  target_compile_definitions(extra PRIVATE ${EXTRA_DEFS})\n",
         extra={"csrc/extra.cu": MOE_CU})
    found = lint(tmp_path, ["A100", "H100"], select=["AIC301"])
    assert [(p, line) for p, line, _c, _m in found] == [("csrc/attn.cu", 5)]
    assert "with ATTN_HOPPER=OFF" in found[0][3]
