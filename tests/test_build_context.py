"""The build context of CUDA files (AIC301 on .cu/.cuh judged for the targets the
project's build produces) and the build settings AIC302 reads from CMake, shell
scripts and Dockerfiles. Each false case has a true twin."""
import textwrap
from pathlib import Path

from aicompat import Target, lint_paths

WGMMA_CUH = textwrap.dedent("""\
    #pragma once
    #include <cuda.h>

    namespace sage::wgmma {
    __device__ __forceinline__ void warpgroup_arrive() {
      asm volatile("wgmma.fence.sync.aligned;\\n" ::: "memory");
    }
    }  // namespace sage::wgmma
""")

SM90_KERNEL = textwrap.dedent("""\
    #include "../wgmma.cuh"

    __global__ void qk_int_sv_f8_attn_kernel(float* out) {
      sage::wgmma::warpgroup_arrive();
      out[threadIdx.x] = 0.f;
    }
""")

TCGEN05_KERNEL = textwrap.dedent("""\
    #include <cuda_runtime.h>

    __global__ void fmha_fwd_kernel(unsigned* tmem) {
      asm volatile("tcgen05.relinquish_alloc_permit.cta_group::1.sync.aligned;");
      tmem[0] = 0;
    }
""")


def write(root: Path, files: dict) -> None:
    for name, text in files.items():
        p = root / name
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(textwrap.dedent(text))


def run(root: Path, gpus, select=("AIC301", "AIC302"), cuda=None):
    diags = lint_paths([root], target=Target(gpus=list(gpus), cuda=cuda), use_config=False, select=list(select))
    return sorted((Path(d.path).relative_to(root).as_posix(), d.line, d.code, d.targets, d.message) for d in diags)


def short(found):
    return [(p, line, code, targets) for p, line, code, targets, _m in found]


# -- setup.py (SageAttention, FlashMLA) ---------------------------------------------

SAGE_SETUP = """\
    import os
    from setuptools import setup
    from torch.utils.cpp_extension import BuildExtension, CUDAExtension

    NVCC_FLAGS = ["-O3", "-std=c++17", "--use_fast_math"]
    compute_capabilities = set()
    for item in os.getenv("TORCH_CUDA_ARCH_LIST", "").replace(",", ";").split(";"):
        if item:
            compute_capabilities.add(item)
    for capability in compute_capabilities:
        num = capability.replace(".", "")
        if num == "90":
            num = "90a"
        NVCC_FLAGS += ["-gencode", f"arch=compute_{num},code=sm_{num}"]

    ext_modules = [
        CUDAExtension(
            name="sageattention._qattn_sm90",
            sources=["csrc/qattn/pybind_sm90.cpp", "csrc/qattn/qk_int_sv_f8_cuda_sm90.cu"],
            extra_compile_args={"cxx": ["-O3"], "nvcc": NVCC_FLAGS},
        ),
    ]
    setup(name="sageattention", ext_modules=ext_modules, cmdclass={"build_ext": BuildExtension})
"""


def test_shared_nvcc_flags_of_the_arch_list_build_the_sm90_extension_for_sm80(tmp_path):
    # SageAttention's setup.py: every extension gets one -gencode per TORCH_CUDA_ARCH_LIST entry,
    # so an 8.0;9.0 build compiles the unguarded wgmma of _qattn_sm90 for sm_80.
    write(tmp_path, {"setup.py": SAGE_SETUP, "csrc/wgmma.cuh": WGMMA_CUH,
                     "csrc/qattn/qk_int_sv_f8_cuda_sm90.cu": SM90_KERNEL})
    found = run(tmp_path, ["A100", "H100"])
    assert short(found) == [("csrc/wgmma.cuh", 6, "AIC301", ["A100"])]
    assert found[0][4] == (
        "'wgmma.fence.sync.aligned' (wgmma) is rejected by every compile target that runs there (included by "
        "csrc/qattn/qk_int_sv_f8_cuda_sm90.cu, which: setup.py line 17 (sageattention._qattn_sm90) builds it for "
        "every arch of TORCH_CUDA_ARCH_LIST (or of the build machine's GPUs): taken to be the fleet's): \"Instruction "
        "'wgmma.fence' not supported on .target 'sm_80'\"; fails on sm_80 (A100). Accepted by sm_90a: guard it and "
        "provide a fallback")


def test_arch_list_build_fails_only_where_every_choice_of_the_list_fails(tmp_path):
    # The arch list is the user's (or the build machine's GPUs): one wheel for H100+B200 would fail
    # to build on the sm_100 target, but a build per machine gives the H100 its sm_90a-capable list.
    # Not known which, so the H100 is not reported (build_context.py, "the user's arch list").
    write(tmp_path, {"setup.py": SAGE_SETUP, "csrc/wgmma.cuh": WGMMA_CUH,
                     "csrc/qattn/qk_int_sv_f8_cuda_sm90.cu": SM90_KERNEL})
    assert short(run(tmp_path, ["H100", "B200"], select=["AIC301"])) == [("csrc/wgmma.cuh", 6, "AIC301", ["B200"])]


def test_extension_with_its_own_sm90a_flags_is_not_built_for_sm80(tmp_path):
    setup = SAGE_SETUP.replace('"nvcc": NVCC_FLAGS', '"nvcc": NVCC_SM90').replace(
        "ext_modules = [", 'NVCC_SM90 = ["-O3", "-gencode", "arch=compute_90a,code=sm_90a"]\n    ext_modules = [')
    write(tmp_path, {"setup.py": setup, "csrc/wgmma.cuh": WGMMA_CUH,
                     "csrc/qattn/qk_int_sv_f8_cuda_sm90.cu": SM90_KERNEL})
    # (AIC302 says the sm90-only extension has no code for the A100: by design, not this rule's concern.)
    assert run(tmp_path, ["A100", "H100"], select=["AIC301"]) == []


FLASHMLA_SETUP = """\
    import os
    from setuptools import setup
    from torch.utils.cpp_extension import CUDAExtension


    def is_flag_set(flag):
        return os.getenv(flag, "FALSE").upper() in ["TRUE", "1", "Y", "YES"]


    def get_arch_flags():
        arch_flags = []
        if not is_flag_set("FLASH_MLA_DISABLE_SM100"):
            arch_flags.extend(["-gencode", "arch=compute_100a,code=sm_100a"])
        if not is_flag_set("FLASH_MLA_DISABLE_SM90"):
            arch_flags.extend(["-gencode", "arch=compute_90a,code=sm_90a"])
        return arch_flags


    setup(
        name="flash_mla",
        ext_modules=[
            CUDAExtension(
                name="flash_mla.cuda",
                sources=["csrc/api.cpp", "csrc/sm100/fmha_fwd.cu"],
                extra_compile_args={"cxx": ["-O3"], "nvcc": ["-O3", "-std=c++20"] + get_arch_flags()},
            )
        ],
    )
"""


def test_helper_built_gencode_list_reaches_the_extension(tmp_path):
    # The sm_90a gencode also compiles the unguarded tcgen05 kernel for the H100: nvcc rejects it,
    # and a target that fails fails the whole build, so no GPU gets the extension.
    write(tmp_path, {"setup.py": FLASHMLA_SETUP, "csrc/sm100/fmha_fwd.cu": TCGEN05_KERNEL})
    found = run(tmp_path, ["A100", "H100", "B200"])
    # With FLASH_MLA_DISABLE_* unset (the default build) the list is sm_100a, sm_90a: none for the A100.
    assert short(found) == [("csrc/sm100/fmha_fwd.cu", 4, "AIC301", ["A100", "H100", "B200"]),
                            ("setup.py", 25, "AIC302", ["A100"])]
    assert "is rejected by sm_90a (setup.py line 22 (flash_mla.cuda) builds it for sm_100a, sm_90a)" in found[0][4]
    assert found[1][4].startswith("CUDAExtension extra_compile_args (when FLASH_MLA_DISABLE_SM100, "
                                  "FLASH_MLA_DISABLE_SM90 are unset) builds sm_100a, sm_90a: no code for sm_80 (A100)")


def test_helper_built_gencode_list_without_sm90a_leaves_hopper_without_the_kernel(tmp_path):
    setup = FLASHMLA_SETUP.replace('"arch=compute_90a,code=sm_90a"', '"arch=compute_100a,code=sm_100a"')
    write(tmp_path, {"setup.py": setup, "csrc/sm100/fmha_fwd.cu": TCGEN05_KERNEL})
    assert run(tmp_path, ["A100", "H100", "B200"], select=["AIC301"]) == []


# -- CMake (vLLM) -------------------------------------------------------------------

VLLM_UTILS = """\
    # Helpers named as in vLLM's cmake/utils.cmake; aicompat models what they do.
    function(extract_unique_cuda_archs_ascending OUT_ARCHES CUDA_ARCH_FLAGS)
      set(${OUT_ARCHES} "" PARENT_SCOPE)
    endfunction()
    function(cuda_archs_loose_intersection OUT_CUDA_ARCHS SRC_CUDA_ARCHS TGT_CUDA_ARCHS)
      set(${OUT_CUDA_ARCHS} "" PARENT_SCOPE)
    endfunction()
    macro(set_gencode_flags_for_srcs)
    endmacro()
"""

VLLM_CMAKE = """\
    cmake_minimum_required(VERSION 3.26)
    project(vllm_extensions LANGUAGES CXX CUDA)
    include(${CMAKE_CURRENT_LIST_DIR}/cmake/utils.cmake)

    # Supported NVIDIA architectures.
    if(DEFINED CMAKE_CUDA_COMPILER_VERSION AND
       CMAKE_CUDA_COMPILER_VERSION VERSION_GREATER_EQUAL 12.8)
      set(CUDA_SUPPORTED_ARCHS "7.5;8.0;8.6;8.9;9.0;10.0;12.0")
    else()
      set(CUDA_SUPPORTED_ARCHS "7.0;7.5;8.0;8.6;8.9;9.0")
    endif()

    extract_unique_cuda_archs_ascending(CUDA_ARCHS "${CUDA_ARCH_FLAGS}")
    cuda_archs_loose_intersection(CUDA_ARCHS "${CUDA_SUPPORTED_ARCHS}" "${CUDA_ARCHS}")

    set(VLLM_EXT_SRC
      "csrc/cache_kernels.cu"
      "csrc/activation_kernels.cu")
    set_gencode_flags_for_srcs(
      SRCS "${VLLM_EXT_SRC}"
      CUDA_ARCHS "${CUDA_ARCHS}")

    # CUTLASS 3.x scaled_mm kernels: Hopper only (# set_gencode_flags_for_srcs in a comment is not read)
    cuda_archs_loose_intersection(SCALED_MM_ARCHS "9.0a;" "${CUDA_ARCHS}")
    if(${CMAKE_CUDA_COMPILER_VERSION} VERSION_GREATER_EQUAL 12.0 AND SCALED_MM_ARCHS)
      set(SRCS "csrc/quantization/w8a8/cutlass/scaled_mm_c3x.cu")
      set_gencode_flags_for_srcs(
        SRCS "${SRCS}"
        CUDA_ARCHS "${SCALED_MM_ARCHS}")
      list(APPEND VLLM_EXT_SRC "${SRCS}")
    endif()
"""


def test_vllm_per_arch_source_is_built_only_for_the_loose_intersection(tmp_path):
    write(tmp_path, {"CMakeLists.txt": VLLM_CMAKE, "cmake/utils.cmake": VLLM_UTILS,
                     "csrc/quantization/w8a8/cutlass/scaled_mm_c3x.cu": SM90_KERNEL.replace("../wgmma.cuh",
                                                                                          "wgmma.cuh"),
                     "csrc/quantization/w8a8/cutlass/wgmma.cuh": WGMMA_CUH})
    assert run(tmp_path, ["A100", "H100"]) == []


def test_vllm_source_built_for_every_cuda_arch_is_reported(tmp_path):
    cmake = VLLM_CMAKE.replace('"csrc/activation_kernels.cu")', '"csrc/activation_kernels.cu"\n'
                               '  "csrc/quantization/w8a8/cutlass/scaled_mm_c3x.cu")')
    write(tmp_path, {"CMakeLists.txt": cmake, "cmake/utils.cmake": VLLM_UTILS,
                     "csrc/quantization/w8a8/cutlass/scaled_mm_c3x.cu": SM90_KERNEL.replace("../wgmma.cuh",
                                                                                          "wgmma.cuh"),
                     "csrc/quantization/w8a8/cutlass/wgmma.cuh": WGMMA_CUH})
    found = run(tmp_path, ["A100", "H100"])
    # sm_80 and sm_90 reject the unguarded wgmma: the build fails, for the H100 too.
    assert short(found) == [("csrc/quantization/w8a8/cutlass/wgmma.cuh", 6, "AIC301", ["A100", "H100"])]
    assert ("is rejected by sm_80 (included by csrc/quantization/w8a8/cutlass/scaled_mm_c3x.cu, which: "
            "CMakeLists.txt line 20 builds it for sm_80, sm_90, sm_90a)") in found[0][4]


# -- JIT front-ends (DeepGEMM) ----------------------------------------------------------

DG_COMPILER = """\
    #pragma once
    // NVCC JIT: compile for the device that runs
    const auto arch = device_runtime->get_arch(false, nvcc_major > 12 or nvcc_minor >= 9);
    flags = fmt::format("{} -I{} --gpu-architecture=sm_{} -O3", flags, library_include_path.c_str(), arch);
"""


def test_deepgemm_jit_compiles_sm100_impls_only_on_blackwell(tmp_path):
    write(tmp_path, {"setup.py": "from setuptools import setup\nsetup(name='deep_gemm')\n",
                     "csrc/jit/compiler.hpp": DG_COMPILER,
                     "deep_gemm/include/deep_gemm/impls/sm100_fp8_gemm_1d1d.cuh": TCGEN05_KERNEL,
                     "deep_gemm/include/deep_gemm/impls/sm90_fp8_gemm_1d2d.cuh": SM90_KERNEL.replace(
                         "../wgmma.cuh", "../common/wgmma.cuh"),
                     "deep_gemm/include/deep_gemm/common/wgmma.cuh": WGMMA_CUH})
    assert run(tmp_path, ["A100", "H100", "B200"]) == []


def test_deepgemm_jit_compiles_an_sm90_impl_for_sm90a_which_rejects_tcgen05(tmp_path):
    write(tmp_path, {"setup.py": "from setuptools import setup\nsetup(name='deep_gemm')\n",
                     "csrc/jit/compiler.hpp": DG_COMPILER,
                     "deep_gemm/include/deep_gemm/impls/sm90_fp8_gemm_1d1d.cuh": TCGEN05_KERNEL})
    found = run(tmp_path, ["A100", "H100", "B200"])
    assert short(found) == [("deep_gemm/include/deep_gemm/impls/sm90_fp8_gemm_1d1d.cuh", 4, "AIC301", ["H100"])]
    assert ("is rejected by sm_90a (deep_gemm's JIT (csrc/jit/compiler.hpp) compiles sm90_* files for sm_90a, "
            "only on compute capability 9.x GPUs)") in found[0][4]


# -- no build found -----------------------------------------------------------------------

def test_no_build_found_judges_only_what_fails_whatever_the_build(tmp_path):
    # The build may target sm_90a alone (a Makefile aicompat does not read): wgmma is no fault...
    write(tmp_path, {"kernels/attn.cu": SM90_KERNEL.replace("../wgmma.cuh", "wgmma.cuh"),
                     "kernels/wgmma.cuh": WGMMA_CUH})
    assert run(tmp_path, ["A100", "H100"]) == []
    # ...but on A100+B200 no target of either GPU accepts it.
    found = run(tmp_path, ["A100", "B200"])
    assert short(found) == [("kernels/wgmma.cuh", 6, "AIC301", ["A100", "B200"])]
    assert ("is rejected by every compile target of every GPU it could be built for (no build aicompat can see "
            "for this file, so it may target any fleet GPU; reported because no compile target of any of them "
            "accepts it)") in found[0][4]


def test_arch_named_file_without_a_build_is_judged_on_its_arch_only(tmp_path):
    # sm100/ files hold Blackwell kernels: without a build they are not judged on the H100...
    write(tmp_path, {"csrc/sm100/kernel.cuh": WGMMA_CUH})
    assert run(tmp_path, ["A100", "H100"]) == []
    # ...but are on the B200, which has no wgmma.
    found = run(tmp_path, ["H100", "B200"])
    assert short(found) == [("csrc/sm100/kernel.cuh", 6, "AIC301", ["B200"])]
    assert ("from its sm100 name it is taken to be built for compute capability 10.x GPUs only, and it is "
            "reported because no compile target of theirs accepts it") in found[0][4]


def test_build_files_are_recorded_for_the_cache(tmp_path):
    from aicompat.matrix import default_matrix
    from aicompat.run.config import build_settings
    from aicompat.run.linter import Linter

    write(tmp_path, {"setup.py": SAGE_SETUP, "csrc/wgmma.cuh": WGMMA_CUH,
                     "csrc/qattn/qk_int_sv_f8_cuda_sm90.cu": SM90_KERNEL})
    m = default_matrix()
    linter = Linter(build_settings(m, cli=Target(gpus=["A100", "H100"]), no_config=True).target, m, select=["AIC301"])
    header = tmp_path / "csrc/wgmma.cuh"
    res = linter.lint_bytes(header.read_bytes(), str(header))
    assert str(tmp_path / "setup.py") in res.reads
    assert str(tmp_path / "csrc/qattn/qk_int_sv_f8_cuda_sm90.cu") in res.reads


# -- AIC302: build settings read with the CMake and shell tokenizers ------------------------

def aic302(tmp_path, name, text, gpus, cuda=None):
    write(tmp_path, {name: text})
    return [(p, line, col_msg) for p, line, _c, _t, col_msg in run(tmp_path, gpus, select=["AIC302"], cuda=cuda)]


def test_cmake_multi_value_arch_list_is_read_whole(tmp_path):
    # TransformerEngine: set(CMAKE_CUDA_ARCHITECTURES 70 80 89 90 100 120) was read as "70".
    assert aic302(tmp_path, "CMakeLists.txt", "set(CMAKE_CUDA_ARCHITECTURES 70 80 89 90 100 120)\n",
                  ["H100", "B200"]) == []


def test_cmake_multi_value_arch_list_without_blackwell(tmp_path):
    assert aic302(tmp_path, "CMakeLists.txt", "set(CMAKE_CUDA_ARCHITECTURES 70-real 80-real 89-real 90-real)\n",
                  ["H100", "B200"]) == [
        ("CMakeLists.txt", 1, "CMAKE_CUDA_ARCHITECTURES 70-real;80-real;89-real;90-real builds sm_70, sm_80, sm_89, sm_90: "
                              "no code for sm_100 (B200), which then fails with \"no kernel image is available for "
                              "execution on the device\"; use CMAKE_CUDA_ARCHITECTURES \"90-real;100\"")]


TE_ARCHS = """\
    set(CMAKE_CUDA_ARCHITECTURES 80-real 90-real 100-real)
    list(FIND CMAKE_CUDA_ARCHITECTURES "100-real" arch_100_index)
    if(NOT arch_100_index EQUAL -1)
      list(REMOVE_ITEM CMAKE_CUDA_ARCHITECTURES "100-real")
      list(APPEND CMAKE_CUDA_ARCHITECTURES "100a-real")
    endif()
"""


def test_cmake_list_find_and_remove_item_are_not_settings(tmp_path):
    assert aic302(tmp_path, "CMakeLists.txt", TE_ARCHS, ["H100", "B200"]) == []


def test_cmake_list_remove_item_leaves_blackwell_without_code(tmp_path):
    found = aic302(tmp_path, "CMakeLists.txt", TE_ARCHS.replace('      list(APPEND CMAKE_CUDA_ARCHITECTURES "100a-real")\n', ""),
                   ["H100", "B200"])
    assert [(p, line) for p, line, _m in found] == [("CMakeLists.txt", 4)]
    assert "CUDA_ARCHITECTURES 80-real;90-real builds sm_80, sm_90: no code for sm_100 (B200)" in found[0][2]


def test_cmake_comments_are_not_settings(tmp_path):
    text = ("# set(CMAKE_CUDA_ARCHITECTURES 90a)\n#[[ set(CMAKE_CUDA_ARCHITECTURES 90a)\n"
            "   set(CMAKE_CUDA_ARCHITECTURES 90a) ]]\nset(CMAKE_CUDA_ARCHITECTURES 90-real 100)  # 90a later\n")
    assert aic302(tmp_path, "CMakeLists.txt", text, ["H100", "B200"]) == []


def test_cmake_setting_outside_a_comment_is_read(tmp_path):
    text = "# Hopper only for now\nset(CMAKE_CUDA_ARCHITECTURES [[90a]])\n"
    assert [(p, line) for p, line, _m in aic302(tmp_path, "CMakeLists.txt", text, ["H100", "B200"])] == [
        ("CMakeLists.txt", 2)]


VERSIONED = """\
    set(HOPPER_ARCH 90-real)
    if(CMAKE_CUDA_COMPILER_VERSION VERSION_GREATER_EQUAL 12.8)
      set(CMAKE_CUDA_ARCHITECTURES ${HOPPER_ARCH} 100-real)
    else()
      set(CMAKE_CUDA_ARCHITECTURES ${HOPPER_ARCH})
    endif()
"""


def test_cmake_branches_on_an_unknown_toolkit_are_not_judged(tmp_path):
    assert aic302(tmp_path, "CMakeLists.txt", VERSIONED, ["H100", "B200"]) == []


def test_cmake_branch_taken_for_the_configured_toolkit_is_judged(tmp_path):
    found = aic302(tmp_path, "CMakeLists.txt", VERSIONED, ["H100", "B200"], cuda="12.4")
    assert [(p, line) for p, line, _m in found] == [("CMakeLists.txt", 5)]
    assert "CUDA_ARCHITECTURES 90-real builds sm_90: no code for sm_100 (B200)" in found[0][2]


def test_cmake_string_replace_is_unknown(tmp_path):
    text = 'set(ARCHS "90-real")\nstring(REPLACE "90" "100" ARCHS "${ARCHS}")\nset(CMAKE_CUDA_ARCHITECTURES ${ARCHS})\n'
    assert aic302(tmp_path, "CMakeLists.txt", text, ["H100", "B200"]) == []
    twin = 'set(ARCHS "90-real")\nset(CMAKE_CUDA_ARCHITECTURES ${ARCHS})\n'
    assert [(p, line) for p, line, _m in aic302(tmp_path, "CMakeLists.txt", twin, ["H100", "B200"])] == [
        ("CMakeLists.txt", 2)]


LIGER = """\
    set(KERNEL_CUDA_ARCH "90a" CACHE STRING "CUDA architecture for -gencode")
    set(CMAKE_CUDA_ARCHITECTURES OFF)
    string(REGEX REPLACE "-gencode[= ]+arch=compute_[0-9a-z]+,code=sm_[0-9a-z]+" "" CMAKE_CUDA_FLAGS "${CMAKE_CUDA_FLAGS}")
    set(CMAKE_CUDA_FLAGS "${CMAKE_CUDA_FLAGS} -gencode arch=compute_${KERNEL_CUDA_ARCH},code=sm_${KERNEL_CUDA_ARCH} --use_fast_math")
"""


def test_gencode_in_cmake_cuda_flags_is_read(tmp_path):
    # Liger's default build: sm_90a only, so no code for the B200.
    found = aic302(tmp_path, "CMakeLists.txt", LIGER, ["H100", "B200"])
    assert found == [("CMakeLists.txt", 4, "CMAKE_CUDA_FLAGS -gencode arch=compute_90a,code=sm_90a builds sm_90a: no "
                                           "code for sm_100 (B200), which then fails with \"no kernel image is "
                                           "available for execution on the device\"; use "
                                           "-gencode=arch=compute_90a,code=sm_90a "
                                           "-gencode=arch=compute_100a,code=sm_100a")]


def test_gencode_in_cmake_cuda_flags_covering_the_fleet(tmp_path):
    text = LIGER.replace("--use_fast_math", "-gencode arch=compute_100a,code=sm_100a --use_fast_math")
    assert aic302(tmp_path, "CMakeLists.txt", text, ["H100", "B200"]) == []


def test_target_properties_and_compile_options(tmp_path):
    text = ("add_library(k SHARED k.cu)\nset_target_properties(k PROPERTIES CUDA_ARCHITECTURES \"90a-real\")\n"
            "target_compile_options(k PRIVATE \"$<$<COMPILE_LANGUAGE:CUDA>:-gencode arch=compute_90a,code=sm_90a>\")\n")
    assert [(p, line) for p, line, _m in aic302(tmp_path, "CMakeLists.txt", text, ["H100", "B200"])] == [
        ("CMakeLists.txt", 2), ("CMakeLists.txt", 3)]
    ok = text.replace('"90a-real"', '"90a-real;100a-real"').replace(
        "code=sm_90a>", "code=sm_90a -gencode arch=compute_100a,code=sm_100a>")
    assert aic302(tmp_path, "CMakeLists.txt", ok, ["H100", "B200"]) == []


def test_shell_comment_is_not_an_assignment(tmp_path):
    text = ("#!/bin/bash\n# TORCH_CUDA_ARCH_LIST is read from the environment by setup.py\n"
            "echo \"TORCH_CUDA_ARCH_LIST=$TORCH_CUDA_ARCH_LIST\"\npip install -v .\n")
    assert aic302(tmp_path, "build.sh", text, ["A100", "H100"]) == []


def test_shell_export_is_an_assignment(tmp_path):
    text = "#!/bin/bash\n# Hopper build\nexport TORCH_CUDA_ARCH_LIST=\"9.0\"  # set here\npip install -v .\n"
    assert aic302(tmp_path, "build.sh", text, ["A100", "H100"]) == [
        ("build.sh", 3, "TORCH_CUDA_ARCH_LIST='9.0' builds sm_90: no code for sm_80 (A100), which then fails with "
                        "\"no kernel image is available for execution on the device\"; use "
                        "TORCH_CUDA_ARCH_LIST=\"8.0;9.0+PTX\"")]


def test_dockerfile_env_from_an_unset_build_arg_does_not_crash(tmp_path):
    # ENV TORCH_CUDA_ARCH_LIST=${VAR} raised an internal error (AIC000, exit 3).
    text = "FROM nvcr.io/nvidia/pytorch:25.01-py3\nARG CUDA_ARCHS\nENV TORCH_CUDA_ARCH_LIST=${CUDA_ARCHS}\n"
    write(tmp_path, {"Dockerfile": text})
    assert lint_paths([tmp_path], target=Target(gpus=["A100", "H100"]), use_config=False) == []


def test_dockerfile_env_from_a_build_arg_with_a_default(tmp_path):
    text = "FROM nvcr.io/nvidia/pytorch:25.01-py3\nARG CUDA_ARCHS=\"9.0\"\nENV TORCH_CUDA_ARCH_LIST=${CUDA_ARCHS}\n"
    assert [(p, line) for p, line, _m in aic302(tmp_path, "Dockerfile", text, ["A100", "H100"])] == [
        ("Dockerfile", 3)]


def test_shell_value_changed_in_an_if_is_not_known_after_it(tmp_path):
    # vLLM's Dockerfile: the DeepEP arch list grows with the CUDA version inside `if`s.
    text = ("FROM nvidia/cuda:12.9.1-devel-ubuntu22.04\nRUN DEEPEP_ARCH_LIST='9.0a 10.0a' && \\\n"
            "    if [ \"$CUDA_VERSION\" = 12.9 ]; then \\\n        DEEPEP_ARCH_LIST=\"$DEEPEP_ARCH_LIST 10.3a\"; \\\n"
            "    fi && \\\n    export TORCH_CUDA_ARCH_LIST=\"$DEEPEP_ARCH_LIST\" && \\\n    pip install deep_ep\n")
    assert aic302(tmp_path, "Dockerfile", text, ["H100", "B200"]) == []


def test_shell_position_after_a_command_substitution_spanning_lines(tmp_path):
    # vLLM's docker/Dockerfile.efa: a $(...) continued over lines, then a multi-line quoted
    # $(python3 -c "...") before the export; the finding was 2 lines above the export.
    text = ("FROM vllm/vllm-openai:latest\nARG DEEPEP_CUDA_ARCH_LIST=\"9.0a;10.0a;10.3a\"\n"
            "RUN CUDA_PKG_VERSION=$(nvcc --version \\\n        | grep release) ; \\\n"
            "    NCCL_ROOT=\"$(python3 -c \"import os; \\\nprint(os.getcwd())\")/nccl\"; \\\n"
            "    export TORCH_CUDA_ARCH_LIST=\"${DEEPEP_CUDA_ARCH_LIST}\"; \\\n    pip install deep_ep\n")
    found = aic302(tmp_path, "Dockerfile", text, ["A100", "H100"])
    assert [(p, line) for p, line, _m in found] == [("Dockerfile", 7)]
    assert text.split("\n")[6].lstrip().startswith("export TORCH_CUDA_ARCH_LIST=")


def test_shell_value_set_on_every_path_is_known(tmp_path):
    text = ("FROM nvidia/cuda:12.9.1-devel-ubuntu22.04\nRUN DEEPEP_ARCH_LIST='9.0a' && \\\n"
            "    export TORCH_CUDA_ARCH_LIST=\"$DEEPEP_ARCH_LIST\" && \\\n    pip install deep_ep\n")
    assert [(p, line) for p, line, _m in aic302(tmp_path, "Dockerfile", text, ["H100", "B200"])] == [
        ("Dockerfile", 3)]


VLLM_SM100_ONLY = VLLM_CMAKE + """\

    # Blackwell-only kernel
    cuda_archs_loose_intersection(SM100_ARCHS "10.0a" "${CUDA_ARCHS}")
    if(SM100_ARCHS)
      set(SM100_SRC "csrc/attn/attn_res_kernel.cu")
      set_gencode_flags_for_srcs(SRCS "${SM100_SRC}" CUDA_ARCHS "${SM100_ARCHS}")
      list(APPEND VLLM_EXT_SRC "${SM100_SRC}")
    endif()
"""


def test_vllm_kernel_added_only_for_an_arch_outside_the_fleet_is_not_built(tmp_path):
    write(tmp_path, {"CMakeLists.txt": VLLM_SM100_ONLY, "cmake/utils.cmake": VLLM_UTILS,
                     "csrc/attn/attn_res_kernel.cu": SM90_KERNEL.replace("../wgmma.cuh", "wgmma.cuh"),
                     "csrc/attn/wgmma.cuh": WGMMA_CUH})
    assert run(tmp_path, ["A100", "H100"], select=["AIC301"]) == []


def test_vllm_kernel_added_for_an_arch_of_the_fleet_is_judged_there(tmp_path):
    write(tmp_path, {"CMakeLists.txt": VLLM_SM100_ONLY, "cmake/utils.cmake": VLLM_UTILS,
                     "csrc/attn/attn_res_kernel.cu": SM90_KERNEL.replace("../wgmma.cuh", "wgmma.cuh"),
                     "csrc/attn/wgmma.cuh": WGMMA_CUH})
    # Without a toolkit the supported-arch list (and so the build for the B200) is unknown: silent.
    assert run(tmp_path, ["H100", "B200"], select=["AIC301"]) == []
    found = run(tmp_path, ["H100", "B200"], select=["AIC301"], cuda="12.8")
    # the sm_100a build of the file fails, and with it the extension the H100 needs too
    assert short(found) == [("csrc/attn/wgmma.cuh", 6, "AIC301", ["H100", "B200"])]
    assert "builds it for sm_100a" in found[0][4]


# -- headers judged inside the unit that includes them (FlashMLA kerutils) -------------

KERUTILS_INTRINSICS = """\
    #pragma once
    #include <cstdint>

    namespace ku {
    // Blackwell-only helpers: emitted only where a live kernel calls them.
    __device__ __forceinline__ void tmem_relinquish() {
      asm volatile("tcgen05.relinquish_alloc_permit.cta_group::1.sync.aligned;");
    }

    template <int N>
    struct UtcmmaAtom {
      __device__ static void fma(uint32_t tmem_c) {
        asm volatile("tcgen05.mma.cta_group::1.kind::f16 [%0], 0, 0, 0, 1;" :: "r"(tmem_c));
      }
    };
    }  // namespace ku
"""

FMHA_CU = """\
    #include "kerutils/sm100/intrinsics.cuh"

    struct Config {
      using Atom = ku::UtcmmaAtom<128>;
      static constexpr int kThreads = 128;
    };

    __global__ void fmha_fwd_kernel(unsigned* tmem) {
    #if defined(__CUDA_ARCH_FEAT_SM100_ALL)
      ku::tmem_relinquish();
      Config::Atom::fma(tmem[0]);
    #endif
      tmem[1] = Config::kThreads;
    }
"""


def test_header_helpers_are_judged_in_the_including_unit(tmp_path):
    # fmha_fwd.cu is built for sm_100a and sm_90a; the sm_90a pass drops the guarded calls, so
    # nvcc emits neither helper there: nothing fails (as FlashMLA builds).
    write(tmp_path, {"setup.py": FLASHMLA_SETUP, "csrc/sm100/fmha_fwd.cu": FMHA_CU,
                     "csrc/sm100/kerutils/sm100/intrinsics.cuh": KERUTILS_INTRINSICS})
    assert run(tmp_path, ["H100", "B200"], select=["AIC301"]) == []


def test_header_helpers_called_unguarded_fail_the_build(tmp_path):
    unguarded = FMHA_CU.replace("#if defined(__CUDA_ARCH_FEAT_SM100_ALL)\n", "").replace("#endif\n", "")
    write(tmp_path, {"setup.py": FLASHMLA_SETUP, "csrc/sm100/fmha_fwd.cu": unguarded,
                     "csrc/sm100/kerutils/sm100/intrinsics.cuh": KERUTILS_INTRINSICS})
    found = run(tmp_path, ["H100", "B200"], select=["AIC301"])
    assert [(p, line) for p, line, *_ in found] == [("csrc/sm100/kerutils/sm100/intrinsics.cuh", 7),
                                                     ("csrc/sm100/kerutils/sm100/intrinsics.cuh", 13)]
    assert all("is rejected by sm_90a (included by csrc/sm100/fmha_fwd.cu" in m for *_, m in found)


NVFP4_UTILS = """\
    #pragma once
    // Blackwell-only conversion, in a header shared by several units (vLLM nvfp4_utils.cuh).
    inline __device__ unsigned fp32_vec2_to_e2m1(float a, float b) {
      unsigned short out;
      asm volatile("{.reg .b8 t; cvt.rn.satfinite.e2m1x2.f32 t, %2, %1; mov.b16 %0, {t, t};}"
                   : "=h"(out) : "f"(a), "f"(b));
      return out;
    }
"""

NVFP4_ENTRY = """\
    #include "nvfp4_utils.cuh"
    #include <cstdint>

    // Host entry point: dispatches to kernels built elsewhere; no kernel of its own.
    void scaled_fp4_quant(int64_t m, int64_t n) {
      (void)m; (void)n;
    }
"""

SAGE_LIKE_SETUP = """\
    from setuptools import setup
    from torch.utils.cpp_extension import CUDAExtension

    setup(
        name="kern",
        ext_modules=[CUDAExtension(
            name="kern._C",
            sources=["csrc/quant/nvfp4_entry.cu"],
            extra_compile_args={"nvcc": ["-gencode", "arch=compute_80,code=sm_80",
                                         "-gencode", "arch=compute_90,code=sm_90"]},
        )],
    )
"""


def test_a_unit_without_kernels_emits_no_inline_helper(tmp_path):
    write(tmp_path, {"setup.py": SAGE_LIKE_SETUP, "csrc/quant/nvfp4_entry.cu": NVFP4_ENTRY,
                     "csrc/quant/nvfp4_utils.cuh": NVFP4_UTILS})
    assert run(tmp_path, ["A100", "H100"], select=["AIC301"]) == []
    # A kernel that calls the helper makes nvcc emit it for sm_80 and sm_90: rejected there.
    with_kernel = NVFP4_ENTRY + ("    __global__ void quant(const float* x, unsigned* y) "
                                 "{ y[0] = fp32_vec2_to_e2m1(x[0], x[1]); }\n")
    write(tmp_path, {"csrc/quant/nvfp4_entry.cu": with_kernel})
    found = run(tmp_path, ["A100", "H100"], select=["AIC301"])
    assert [(p, line) for p, line, *_ in found] == [("csrc/quant/nvfp4_utils.cuh", 5)]
