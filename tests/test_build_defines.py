"""The build's -D flags reach the preprocessor: a kernel behind ``#ifdef ENABLE_SM90`` is
compiled where the build passes -DENABLE_SM90 and is dead where the build's flags are all
known and do not (issue 14). Each case that fails has its clean twin. nvcc 13.0 behaviour
relied on (this machine): ``nvcc -c -arch=sm_80 -DENABLE_SM90 k.cu`` fails in ptxas on the
guarded wgmma, ``nvcc -c -arch=sm_80 k.cu`` builds, and ``-Xcompiler -DENABLE_SM90`` fails like
-D (``nvcc --dryrun``: the option reaches the ``gcc -E`` of the device pass)."""
import textwrap
from pathlib import Path

from aicompat import Target, lint_paths
from aicompat.cuda.build.setup_py import extensions, nvcc_defines

SM90_ATTN = """\
    #include <cuda_fp16.h>
    #include <cuda_runtime.h>

    #ifdef ENABLE_SM90
    __global__ void qk_int8_sv_f8_accum_f32_attn_sm90(float* out) {
      asm volatile("wgmma.fence.sync.aligned;\\n" ::: "memory");
      out[threadIdx.x] = 0.f;
    }
    #endif

    __global__ void quant_per_block_int8(const half* in, signed char* out) {
      out[threadIdx.x] = static_cast<signed char>(__half2float(in[threadIdx.x]));
    }
"""

# SageAttention-style setup.py: shared NVCC_FLAGS, one -gencode per TORCH_CUDA_ARCH_LIST entry.
SAGE_SETUP = """\
    import os
    from setuptools import setup
    from torch.utils.cpp_extension import BuildExtension, CUDAExtension

    NVCC_FLAGS = [
        "-O3",
        "-std=c++17",
        "--use_fast_math",
        "--threads=8",
        "-Xptxas=-v",
    ]
    NVCC_FLAGS += FEATURE_FLAGS
    for capability in os.getenv("TORCH_CUDA_ARCH_LIST", "8.0;9.0").split(";"):
        num = capability.replace(".", "")
        NVCC_FLAGS += ["-gencode", f"arch=compute_{num},code=sm_{num}"]

    ext_modules = [
        CUDAExtension(
            name="sageattention._qattn",
            sources=["csrc/qattn/pybind.cpp", "csrc/qattn/attn_cuda.cu"],
            extra_compile_args={"cxx": ["-O3", "-std=c++17"], "nvcc": NVCC_FLAGS},
            DEFINE_MACROS
        ),
    ]
    setup(name="sageattention", ext_modules=ext_modules, cmdclass={"build_ext": BuildExtension})
"""


def sage(features: str = "[]", macros: str = "") -> str:
    s = SAGE_SETUP.replace("NVCC_FLAGS += FEATURE_FLAGS", f"NVCC_FLAGS += {features}")
    return s.replace("DEFINE_MACROS", f"define_macros={macros}," if macros else "")


def write(root: Path, files: dict) -> None:
    for name, text in files.items():
        p = root / name
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(textwrap.dedent(text))


def run(root: Path, gpus, select=("AIC301",)):
    diags = lint_paths([root], target=Target(gpus=list(gpus)), use_config=False, select=list(select))
    return sorted((Path(d.path).relative_to(root).as_posix(), d.line, d.code, d.targets, d.message) for d in diags)


def short(found):
    return [(p, line, code, targets) for p, line, code, targets, _m in found]


# The guarded wgmma as a device helper in a header (SageAttention's csrc/wgmma.cuh shape).
WGMMA_HELPER = SM90_ATTN.split("__global__ void quant")[0].replace(
    "__global__ void qk_int8_sv_f8_accum_f32_attn_sm90(float* out)",
    "__device__ __forceinline__ void warpgroup_arrive(float* out)")

FAILS_ON_A100 = [("csrc/qattn/attn_cuda.cu", 6, "AIC301", ["A100"])]


# -- setup.py --------------------------------------------------------------------------------

def test_nvcc_define_flag_makes_the_guarded_kernel_live(tmp_path):
    write(tmp_path, {"setup.py": sage('["-DENABLE_SM90"]'), "csrc/qattn/attn_cuda.cu": SM90_ATTN})
    found = run(tmp_path, ["A100", "H100"])
    assert short(found) == FAILS_ON_A100
    assert "'wgmma.fence.sync.aligned' (wgmma) is rejected by every compile target that runs there" in found[0][4]


def test_without_the_define_flag_the_guarded_kernel_is_dead(tmp_path):
    write(tmp_path, {"setup.py": sage(), "csrc/qattn/attn_cuda.cu": SM90_ATTN})
    assert run(tmp_path, ["A100", "H100"]) == []


def test_define_macros_reach_nvcc(tmp_path):
    # torch passes define_macros to nvcc as well (pp_opts), not only to the host compiler.
    write(tmp_path, {"setup.py": sage(macros='[("ENABLE_SM90", None), ("Py_LIMITED_API", "0x03090000")]'),
                     "csrc/qattn/attn_cuda.cu": SM90_ATTN})
    assert short(run(tmp_path, ["A100", "H100"])) == FAILS_ON_A100


def test_define_macros_without_the_macro_leave_it_dead(tmp_path):
    write(tmp_path, {"setup.py": sage(macros='[("ENABLE_BF16", None)]'), "csrc/qattn/attn_cuda.cu": SM90_ATTN})
    assert run(tmp_path, ["A100", "H100"]) == []


def test_xcompiler_define_reaches_the_device_pass(tmp_path):
    write(tmp_path, {"setup.py": sage('["-Xcompiler", "-DENABLE_SM90"]'), "csrc/qattn/attn_cuda.cu": SM90_ATTN})
    assert short(run(tmp_path, ["A100", "H100"])) == FAILS_ON_A100


def test_undefined_again_with_u(tmp_path):
    write(tmp_path, {"setup.py": sage('["-DENABLE_SM90", "-UENABLE_SM90"]'), "csrc/qattn/attn_cuda.cu": SM90_ATTN})
    assert run(tmp_path, ["A100", "H100"]) == []


def test_flags_from_the_environment_leave_the_macro_unknown(tmp_path):
    # NVCC_APPEND_FLAGS may hold -DENABLE_SM90: not known, so the kernel stays possible.
    write(tmp_path, {"setup.py": sage('os.getenv("NVCC_APPEND_FLAGS", "").split()'),
                     "csrc/qattn/attn_cuda.cu": SM90_ATTN})
    assert short(run(tmp_path, ["A100", "H100"])) == FAILS_ON_A100


def test_fstring_define_is_a_define_of_unknown_value(tmp_path):
    # f"-D_GLIBCXX_USE_CXX11_ABI={ABI}" defines a macro; it hides no other one.
    write(tmp_path, {"setup.py": sage('[f"-D_GLIBCXX_USE_CXX11_ABI={int(True)}"]'),
                     "csrc/qattn/attn_cuda.cu": SM90_ATTN})
    assert run(tmp_path, ["A100", "H100"]) == []


def test_header_behind_the_define_is_judged_in_its_unit(tmp_path):
    header = WGMMA_HELPER
    unit = """\
        #include "wgmma.cuh"

        __global__ void attn(float* out) {
        #ifdef ENABLE_SM90
          warpgroup_arrive(out);
        #endif
          out[0] = 1.f;
        }
    """
    files = {"csrc/qattn/wgmma.cuh": header, "csrc/qattn/attn_cuda.cu": unit}
    write(tmp_path, {"setup.py": sage('["-DENABLE_SM90"]'), **files})
    assert short(run(tmp_path, ["A100", "H100"])) == [("csrc/qattn/wgmma.cuh", 6, "AIC301", ["A100"])]
    write(tmp_path, {"setup.py": sage()})
    assert run(tmp_path, ["A100", "H100"]) == []


def test_torch_adds_its_own_defines(tmp_path):
    # BuildExtension passes -DTORCH_EXTENSION_NAME=_qattn and -D__CUDA_NO_HALF_OPERATORS__ (build.toml).
    src = SM90_ATTN.replace("#ifdef ENABLE_SM90", "#if defined(TORCH_EXTENSION_NAME) && !defined(__CUDA_NO_HALF_OPERATORS__)")
    write(tmp_path, {"setup.py": sage(), "csrc/qattn/attn_cuda.cu": src})
    assert run(tmp_path, ["A100", "H100"]) == []
    write(tmp_path, {"csrc/qattn/attn_cuda.cu": src.replace("!defined", "defined")})
    assert short(run(tmp_path, ["A100", "H100"])) == FAILS_ON_A100


def test_reader_defines_and_whether_they_are_all_known(tmp_path):
    setup = tmp_path / "setup.py"
    text = textwrap.dedent(sage('["-DENABLE_SM90", "-D", "NUM_THREADS=128"]', '[("ENABLE_FP8", "1")]'))
    (ext,) = extensions(setup, text)
    assert ext.defines == {"ENABLE_FP8": "1", "ENABLE_SM90": "1", "NUM_THREADS": "128"}
    assert ext.defines_known
    (ext,) = extensions(setup, textwrap.dedent(sage("EXTRA_FLAGS")))
    assert not ext.defines_known
    assert nvcc_defines(["--define-macro=A=2", "-Xcompiler=-fPIC,-DB", "-DC=", "-UA"]) == {"B": "1", "C": ""}


# -- CMake (vLLM-style) ---------------------------------------------------------------------------

SM90_OPT_OUT = SM90_ATTN.replace("#ifdef ENABLE_SM90", "#ifndef DISABLE_SM90_KERNELS")

VLLM_CMAKE = """\
    cmake_minimum_required(VERSION 3.26)
    project(vllm_extensions LANGUAGES CXX CUDA)

    set(CMAKE_CUDA_ARCHITECTURES 80 90)
    set(VLLM_EXT_SRC
      "csrc/cache_kernels.cu"
      "csrc/qattn/attn_cuda.cu")
    DIRECTORY_DEFINES
    add_library(_C MODULE ${VLLM_EXT_SRC})
    TARGET_DEFINES
"""


def vllm(directory: str = "", target: str = "") -> str:
    return VLLM_CMAKE.replace("DIRECTORY_DEFINES", directory).replace("TARGET_DEFINES", target)


CACHE_KERNELS = "__global__ void reshape_and_cache(float* k) { k[threadIdx.x] = 0.f; }\n"
BOTH_FAIL = [("csrc/qattn/attn_cuda.cu", 6, "AIC301", ["A100", "H100"])]


def cmake_run(tmp_path, cmake: str):
    write(tmp_path, {"CMakeLists.txt": cmake, "csrc/cache_kernels.cu": CACHE_KERNELS,
                     "csrc/qattn/attn_cuda.cu": SM90_OPT_OUT})
    return short(run(tmp_path, ["A100", "H100"]))


def test_cmake_kernel_without_the_opt_out_definition_fails_the_build(tmp_path):
    # sm_80 of the 80;90 build rejects the wgmma: the build fails, for the H100 too.
    assert cmake_run(tmp_path, vllm()) == BOTH_FAIL


def test_cmake_target_compile_definitions_reach_the_preprocessor(tmp_path):
    cmake = vllm(target='target_compile_definitions(_C PRIVATE "-DTORCH_EXTENSION_NAME=_C" DISABLE_SM90_KERNELS)')
    assert cmake_run(tmp_path, cmake) == []


def test_cmake_cuda_only_generator_expression_definition(tmp_path):
    cuda = "target_compile_definitions(_C PRIVATE $<$<COMPILE_LANGUAGE:CUDA>:DISABLE_SM90_KERNELS>)"
    assert cmake_run(tmp_path, vllm(target=cuda)) == []
    # The same definition for the C++ compiler only does not reach nvcc.
    assert cmake_run(tmp_path, vllm(target=cuda.replace("CUDA>", "CXX>"))) == BOTH_FAIL


def test_cmake_add_compile_definitions_and_add_definitions(tmp_path):
    assert cmake_run(tmp_path, vllm(directory="add_compile_definitions(DISABLE_SM90_KERNELS=1)")) == []
    assert cmake_run(tmp_path, vllm(directory="add_definitions(-DDISABLE_SM90_KERNELS)")) == []
    assert cmake_run(tmp_path, vllm(directory="add_compile_definitions(ENABLE_FP8)")) == BOTH_FAIL


def test_cmake_define_in_cmake_cuda_flags(tmp_path):
    flags = 'set(CMAKE_CUDA_FLAGS "${CMAKE_CUDA_FLAGS} --expt-relaxed-constexpr -DDISABLE_SM90_KERNELS")'
    assert cmake_run(tmp_path, vllm(directory=flags)) == []
    assert cmake_run(tmp_path, vllm(directory=flags.replace("-DDISABLE", "-UDISABLE"))) == BOTH_FAIL


# -- JIT front-ends: SGLang's load_jit passes -DSGL_CUDA_ARCH of the running GPU -------------------

SGL_UTILS_PY = """\
    import os
    from contextlib import contextmanager


    @contextmanager
    def _jit_compile_context():
        env_key = "TVM_FFI_CUDA_ARCH_LIST"
        os.environ[env_key] = get_jit_cuda_arch().target_name
        yield
"""

SGL_UTILS_CUH = """\
    #pragma once
    #include <cuda_runtime.h>

    #define SGL_DEVICE __forceinline__ __device__

    #if !defined(USE_ROCM)
    #if !defined(SGL_CUDA_ARCH)
    #error "SGL_CUDA_ARCH is not defined. JIT compilation must inject -DSGL_CUDA_ARCH via load_jit()."
    #endif
    #define SGL_ARCH_HOPPER_OR_GREATER (SGL_CUDA_ARCH >= 900)
    #else  // USE_ROCM
    #define SGL_ARCH_HOPPER_OR_GREATER 0
    #endif

    template <bool kUsePDL>
    SGL_DEVICE void PDLWaitPrimary() {
    #if SGL_ARCH_HOPPER_OR_GREATER
      if constexpr (kUsePDL) {
        asm volatile("griddepcontrol.wait;" ::: "memory");
      }
    #endif
    }
"""

SGL_KERNEL = """\
    #include <sgl_kernel/utils.cuh>

    template <bool kUsePDL>
    __global__ void fused_add_rmsnorm_kernel(float* out) {
      PDLWaitPrimary<kUsePDL>();
      out[threadIdx.x] = 0.f;
    }

    template __global__ void fused_add_rmsnorm_kernel<true>(float*);
"""


def sgl_tree(tmp_path, guard: str = "#if SGL_ARCH_HOPPER_OR_GREATER"):
    write(tmp_path, {"setup.py": "from setuptools import setup\nsetup(name='sglang')\n",
                     "sglang/jit_kernel/utils.py": SGL_UTILS_PY,
                     "sglang/jit_kernel/include/sgl_kernel/utils.cuh": SGL_UTILS_CUH.replace(
                         "#if SGL_ARCH_HOPPER_OR_GREATER", guard),
                     "sglang/jit_kernel/csrc/elementwise/fused_add_rmsnorm.cuh": SGL_KERNEL})
    return short(run(tmp_path, ["A100", "H100"]))


def test_sglang_jit_arch_define_guards_hopper_instructions(tmp_path):
    # SGL_CUDA_ARCH comes from load_jit (cuda_jit.toml defines); USE_ROCM is never set for NVIDIA
    # builds (cuda_macros.toml [never]); an emptied device helper is no empty kernel.
    assert sgl_tree(tmp_path) == []


def test_sglang_jit_unguarded_hopper_instruction_fails_on_ampere(tmp_path):
    assert sgl_tree(tmp_path, "#if 1") == [("sglang/jit_kernel/include/sgl_kernel/utils.cuh", 19, "AIC301", ["A100"])]


def test_header_macro_defined_by_its_includer_before_the_include(tmp_path):
    # The build's -D flags are all known, but ENABLE_SM90 comes from the includer's own #define:
    # the header alone must not call it undefined.
    header = WGMMA_HELPER
    unit = """\
        #define ENABLE_SM90
        #include "wgmma.cuh"

        __global__ void attn(float* out) {
          warpgroup_arrive(out);
        }
    """
    write(tmp_path, {"setup.py": sage(), "csrc/qattn/wgmma.cuh": header, "csrc/qattn/attn_cuda.cu": unit})
    assert short(run(tmp_path, ["A100", "H100"])) == [("csrc/qattn/wgmma.cuh", 6, "AIC301", ["A100"])]
