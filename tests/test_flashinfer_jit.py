"""FlashInfer's JIT front-end (version_matrix/cuda_jit.toml [jit.flashinfer], cuda/build/jit_specs.py):
each module is built at run time, on the GPU it runs on, from ``gen_jit_spec(name, sources,
extra_cuda_cflags=...)``. A source built with a fixed per-arch flag list (``sm90a_nvcc_flags``)
is compiled only on the GPUs that can run that code; one built with
``current_compilation_context.get_nvcc_flags_list(supported_major_versions=[...])`` for the
running GPU's own target (sm_XYa from 9.0 on, sm_120f on 12.0) on those majors only. Layout and
names as in flashinfer 0.6.18 (flashinfer/jit/core.py, env.py, gemm/core.py, fp4_quantization.py,
fused_moe.py). nvcc 13.0 here: tcgen05.alloc is rejected for sm_90a ("not supported on .target
'sm_90a'"), wgmma.fence for sm_80 and sm_100a. Each failing case has its clean twin."""
import textwrap
from pathlib import Path

from aicompat import Target, lint_paths

CORE = '''\
from ..compilation_context import CompilationContext


def gen_jit_spec(name, sources, extra_cflags=None, extra_cuda_cflags=None, extra_ldflags=None,
                 extra_include_paths=None, needs_device_linking=False):
    cuda_cflags = ["-use_fast_math", "-DFLASHINFER_ENABLE_F16", "-DFLASHINFER_ENABLE_BF16"]
    if extra_cuda_cflags is not None:
        cuda_cflags += extra_cuda_cflags
    return JitSpecNvcc(name=name, sources=sources, extra_cuda_cflags=cuda_cflags)


common_nvcc_flags = [
    "-DFLASHINFER_ENABLE_FP8_E8M0",
    "-DFLASHINFER_ENABLE_FP4_E2M1",
]
sm90a_nvcc_flags = [
    "-gencode=arch=compute_90a,code=sm_90a",
    "-DCUTE_SM90_EXTENDED_MMA_SHAPES_ENABLED",
] + common_nvcc_flags
sm100a_nvcc_flags = ["-gencode=arch=compute_100a,code=sm_100a"] + common_nvcc_flags

current_compilation_context = CompilationContext()
'''

ENV = '''\
import pathlib

_package_root = pathlib.Path(__file__).resolve().parents[1]
FLASHINFER_INCLUDE_DIR = _package_root / "data" / "include"
FLASHINFER_CSRC_DIR = _package_root / "data" / "csrc"
'''

GEMM = '''\
from . import env as jit_env
from .core import JitSpec, current_compilation_context, gen_jit_spec, sm90a_nvcc_flags


def gen_group_gemm_module() -> JitSpec:
    return gen_jit_spec(
        "group_gemm",
        [
            jit_env.FLASHINFER_CSRC_DIR / "group_gemm_tma.cu",
            jit_env.FLASHINFER_CSRC_DIR / "group_gemm_binding.cu",
        ],
        extra_cuda_cflags=FLAGS,
    )
'''

RUNNING = "current_compilation_context.get_nvcc_flags_list(supported_major_versions=MAJORS)"

# A Hopper grouped GEMM in FlashInfer's layout: the kernel in include/, its launcher in csrc/.
KERNEL_CUH = """\
#pragma once
#include <cuda_runtime.h>

namespace flashinfer {
namespace group_gemm {

__global__ void group_gemm_tma_kernel(float* out) {
  asm volatile("wgmma.fence.sync.aligned;\\n" ::: "memory");
  out[threadIdx.x] = 0.f;
}

}  // namespace group_gemm
}  // namespace flashinfer
"""

LAUNCHER_CU = """\
#include "flashinfer/gemm/group_gemm_tma.cuh"

void run_group_gemm(float* out, cudaStream_t stream) {
  flashinfer::group_gemm::group_gemm_tma_kernel<<<1, 128, 0, stream>>>(out);
}
"""

FLEET = ("A100", "H100", "B200")


def tree(tmp_path: Path, flags: str, kernel: str = KERNEL_CUH, gemm: str = GEMM) -> Path:
    files = {
        "pyproject.toml": "[project]\nname = 'flashinfer-python'\n",
        "flashinfer/compilation_context.py": "class CompilationContext:\n    pass\n",
        "flashinfer/jit/__init__.py": "",
        "flashinfer/jit/core.py": CORE,
        "flashinfer/jit/env.py": ENV,
        "flashinfer/jit/gemm.py": gemm.replace("FLAGS", flags),
        "include/flashinfer/gemm/group_gemm_tma.cuh": kernel,
        "csrc/group_gemm_tma.cu": LAUNCHER_CU,
        "csrc/group_gemm_binding.cu": "#include <cuda_runtime.h>\n",
    }
    for name, text in files.items():
        p = tmp_path / name
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(textwrap.dedent(text))
    return tmp_path


def run(root: Path, gpus=FLEET):
    diags = lint_paths([root / "csrc", root / "include"], target=Target(gpus=list(gpus)), use_config=False,
                       select=["AIC301"])
    return [(Path(d.path).relative_to(root).as_posix(), d.line, d.column, d.targets, d.message) for d in diags]


def short(found):
    return [(p, line, t) for p, line, _c, t, _m in found]


HEADER = "include/flashinfer/gemm/group_gemm_tma.cuh"


def test_hopper_module_is_built_only_on_hopper(tmp_path):
    # sm90a_nvcc_flags: FlashInfer requests the module on Hopper only; no other GPU compiles it.
    assert run(tree(tmp_path, "sm90a_nvcc_flags + ['-DCUTLASS_ENABLE_GDC_FOR_SM90=1']")) == []


def test_same_kernel_for_the_running_gpu_of_hopper_and_blackwell_fails_on_b200(tmp_path):
    found = run(tree(tmp_path, RUNNING.replace("MAJORS", "[9, 10]")))
    assert short(found) == [(HEADER, 8, ["B200"])]
    assert found[0][4] == (
        "'wgmma.fence.sync.aligned' (wgmma) is rejected by sm_100a (included by csrc/group_gemm_tma.cu, which: "
        "flashinfer's JIT (flashinfer/jit/gemm.py line 6 (gen_group_gemm_module)) compiles it for sm_100a on the "
        "GPU it runs on): \"Instruction 'wgmma.fence' not supported on .target 'sm_100a'\"; fails on sm_100 (B200). "
        "Accepted by sm_90a: guard it and provide a fallback")


def test_running_gpu_of_hopper_only_is_clean(tmp_path):
    assert run(tree(tmp_path, RUNNING.replace("MAJORS", "[9]"))) == []


def test_no_arch_flags_means_every_gpu_it_runs_on(tmp_path):
    # cpp_ext.py build_cuda_cflags: without a -gencode of its own the module gets the running GPU's.
    assert short(run(tree(tmp_path, "['-lineinfo']"))) == [(HEADER, 8, ["A100", "B200"])]


# A Blackwell-only instruction in a source JIT-built for sm_90a is reported on the H100.
TCGEN05_CUH = KERNEL_CUH.replace(
    'asm volatile("wgmma.fence.sync.aligned;\\n" ::: "memory");',
    'asm volatile("tcgen05.relinquish_alloc_permit.cta_group::1.sync.aligned;\\n" ::: "memory");')


def test_blackwell_instruction_in_a_hopper_module_fails_on_h100(tmp_path):
    found = run(tree(tmp_path, "sm90a_nvcc_flags", kernel=TCGEN05_CUH))
    assert short(found) == [(HEADER, 8, ["H100"])]
    assert "is rejected by sm_90a (included by csrc/group_gemm_tma.cu" in found[0][4]


def test_blackwell_instruction_in_a_blackwell_module_is_clean(tmp_path):
    assert run(tree(tmp_path, RUNNING.replace("MAJORS", "[10]"), kernel=TCGEN05_CUH)) == []


# One generator, called per arch with that arch's flag list (fp4_quantization.py's shape).
PER_ARCH_GEMM = '''\
from . import env as jit_env
from .core import JitSpec, gen_jit_spec, sm90a_nvcc_flags, sm100a_nvcc_flags


def gen_group_gemm_module(nvcc_flags, device_arch: str) -> JitSpec:
    return gen_jit_spec(
        f"group_gemm_{device_arch}",
        [
            jit_env.FLASHINFER_CSRC_DIR / "group_gemm_tma.cu",
        ],
        extra_cuda_cflags=nvcc_flags + ["-DENABLE_BF16"],
    )


def gen_group_gemm_sm90_module() -> JitSpec:
    return gen_group_gemm_module(sm90a_nvcc_flags, "90")


def gen_group_gemm_sm100_module() -> JitSpec:
    return gen_group_gemm_module(FLAGS, "100")
'''


def test_generator_called_with_the_blackwell_flags_fails_on_b200(tmp_path):
    found = run(tree(tmp_path, "sm100a_nvcc_flags", gemm=PER_ARCH_GEMM))
    assert short(found) == [(HEADER, 8, ["B200"])]


def test_generator_called_with_hopper_flags_only_is_clean(tmp_path):
    assert run(tree(tmp_path, "sm90a_nvcc_flags", gemm=PER_ARCH_GEMM)) == []


# The spec's -D flags are all the macros nvcc gets (besides gen_jit_spec's own): fused_moe.py
# passes -DENABLE_FP8_BLOCK_SCALE only to its Hopper module.
GUARDED_CUH = KERNEL_CUH.replace(
    '  asm volatile("wgmma.fence.sync.aligned;\\n" ::: "memory");\n',
    '#ifdef ENABLE_FP8_BLOCK_SCALE\n  asm volatile("wgmma.fence.sync.aligned;\\n" ::: "memory");\n#endif\n')


def test_define_not_passed_to_the_blackwell_module_leaves_the_wgmma_out(tmp_path):
    flags = RUNNING.replace("MAJORS", "[10]") + " + ['-DENABLE_BF16']"
    assert run(tree(tmp_path, flags, kernel=GUARDED_CUH)) == []


def test_define_passed_to_the_blackwell_module_puts_the_wgmma_in(tmp_path):
    flags = RUNNING.replace("MAJORS", "[10]") + " + ['-DENABLE_BF16', '-DENABLE_FP8_BLOCK_SCALE']"
    assert short(run(tree(tmp_path, flags, kernel=GUARDED_CUH))) == [(HEADER, 9, ["B200"])]


def test_flags_not_known_are_not_judged(tmp_path):
    assert run(tree(tmp_path, "_arch_flags()")) == []


# Cake modules compile csrc/cake_router_gemm/*.cu themselves with nvcc -arch=sm_100a / sm_103a and
# raise on any other GPU (flashinfer/jit/cake_router_gemm.py _target_arch).
CAKE_CU = """\
__global__ void router_gemm_kernel(float* out) {
  asm volatile("griddepcontrol.wait;" ::: "memory");
  out[threadIdx.x] = 0.f;
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
}
"""


def test_cake_sources_are_built_only_on_blackwell(tmp_path):
    root = tree(tmp_path, "sm90a_nvcc_flags")
    (root / "csrc" / "cake_router_gemm").mkdir()
    (root / "csrc" / "cake_router_gemm" / "cake_router_gemm_m9_k7168_device.cu").write_text(CAKE_CU)
    assert run(root) == []
    # The same kernel outside the Cake folder has no build aicompat can see: griddepcontrol fails on
    # the A100 only if the build targets it, which is not known; sm_90 accepts it, so nothing is reported...
    (root / "csrc" / "router_gemm_device.cu").write_text(CAKE_CU)
    assert run(root) == []
    # ...except on a fleet none of whose GPUs has it.
    assert short(run(root, ["A100"])) == [("csrc/router_gemm_device.cu", 2, ["A100"]),
                                          ("csrc/router_gemm_device.cu", 4, ["A100"])]


APPENDED_GEMM = '''\
from . import env as jit_env
from .core import JitSpec, current_compilation_context, gen_jit_spec


def gen_group_gemm_module(head_dim: int) -> JitSpec:
    nvcc_flags = current_compilation_context.get_nvcc_flags_list(supported_major_versions=[10])
    nvcc_flags.append(f"-I{jit_env.FLASHINFER_CSRC_DIR / 'group_gemm'}")
    nvcc_flags.append(f"-DHEAD_DIM={head_dim}")
    FLAGS
    return gen_jit_spec(
        "group_gemm",
        [jit_env.FLASHINFER_CSRC_DIR / "group_gemm_tma.cu"],
        extra_cuda_cflags=nvcc_flags,
    )
'''


def test_define_appended_to_the_flag_list_is_read(tmp_path):
    # xqa.py's shape: the list grows by .append, also with f-strings (-I, -D with a computed value).
    gemm = APPENDED_GEMM.replace("FLAGS", 'nvcc_flags.append("-DENABLE_FP8_BLOCK_SCALE")')
    assert short(run(tree(tmp_path, "", kernel=GUARDED_CUH, gemm=gemm))) == [(HEADER, 9, ["B200"])]


def test_without_the_appended_define_the_wgmma_is_out(tmp_path):
    assert run(tree(tmp_path, "", kernel=GUARDED_CUH, gemm=APPENDED_GEMM.replace("FLAGS", "pass"))) == []
