"""FlashInfer specs whose sources are named through a module table and a generated translation
unit, and flag lists in the shapes flashinfer 0.6.18 writes them (cuda/build/jit_specs.py, jit_values.py).

- flashinfer/jit/cake_kda_packed_t1.py: ``CAKE_KDA_PACKED_T1_VARIANT_METADATA = {"v": Meta(body=
  "x.cu", ...)}`` (a NamedTuple per variant); ``gen_cake_kda_packed_t1_module(variant, target)``
  writes ``binding.cu`` with ``write_if_different(binding, _get_binding_cu(metadata))``, an
  f-string that ``#define``s the body file and ``#include``s csrc/kda/*_binding.cuh, which
  ``#include``s that macro; the spec is built with ``sm100a_nvcc_flags``/``sm100f_nvcc_flags``.
- cake_flash_kda_packed_t1.py: ``csrc_dir / f"cake_flashkda_packed_t1_{variant}.cu"`` with
  ``variant`` checked against a module tuple.
- xqa.py: a 12-term ``+`` chain of flag lists, ``_has_sm90_target()`` around
  ``sources.append(... "xqa/mha_sm90.cu")``; mamba/checkpointing_ssu.py: ``_arch_flags() +
  (extra_cuda_cflags or [])``; gemm/core.py: ``f'-DTLLM_GEN_GEMM_CUBIN_PATH=\\\\"{path}\\\\"'``.
nvcc 13.0 here: fma.rn.ftz.f32x2 is rejected below sm_100 ("requires .target sm_100 or higher"),
wgmma.fence for sm_80 and sm_100a. Each failing case has its clean twin."""
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


common_nvcc_flags = ["-DFLASHINFER_ENABLE_FP8_E8M0", "-DFLASHINFER_ENABLE_FP4_E2M1"]
sm90a_nvcc_flags = ["-gencode=arch=compute_90a,code=sm_90a"] + common_nvcc_flags
sm100a_nvcc_flags = ["-gencode=arch=compute_100a,code=sm_100a"] + common_nvcc_flags
sm100f_nvcc_flags = ["-gencode=arch=compute_100f,code=sm_100f"] + common_nvcc_flags

current_compilation_context = CompilationContext()
'''

ENV = '''\
import pathlib

_package_root = pathlib.Path(__file__).resolve().parents[1]
FLASHINFER_INCLUDE_DIR = _package_root / "data" / "include"
FLASHINFER_CSRC_DIR = _package_root / "data" / "csrc"
FLASHINFER_GEN_SRC_DIR = pathlib.Path.home() / ".cache" / "flashinfer" / "generated"
'''

UTILS = '''\
def write_if_different(path, content):
    if path.exists() and path.read_text() == content:
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(content)
'''

KDA = '''\
from pathlib import Path
from typing import Literal, NamedTuple

from . import env as jit_env
from .core import JitSpec, current_compilation_context, gen_jit_spec, sm100a_nvcc_flags, sm100f_nvcc_flags
from .utils import write_if_different

KDAVariant = Literal["register_tile16", "cpasync_tile64"]
KDA_VARIANTS = ("register_tile16", "cpasync_tile64")
_KDA_NVCC_FLAGS = {"sm100a": sm100a_nvcc_flags, "sm100f": sm100f_nvcc_flags}
_KDA_TARGET_KIND = {"sm100a": 1000, "sm100f": 100}


class KDAVariantMetadata(NamedTuple):
    body: str
    symbol: str
    threads: int
    extra_cuda_flags: tuple[str, ...] = ("--maxrregcount=128",)


KDA_VARIANT_METADATA = {
    "register_tile16": KDAVariantMetadata(
        body="cake_kda_packed_t1_register_tile16.cu",
        symbol="kernel_packed_kda_t1_register_tile16",
        threads=128,
    ),
    "cpasync_tile64": KDAVariantMetadata(
        "cake_kda_packed_t1_cpasync_tile64.cu",
        "kernel_packed_kda_t1_cpasync",
        128,
        extra_cuda_flags=("--ftz=false", "--maxrregcount=128"),
    ),
}


def _get_csrc_dir() -> Path:
    installed = jit_env.FLASHINFER_CSRC_DIR / "kda"
    if installed.exists():
        return installed
    raise FileNotFoundError(installed)


def _get_binding_cu(metadata: KDAVariantMetadata) -> str:
    return f"""\\
#define CAKE_KDA_PACKED_T1_BODY_FILE "{metadata.body}"
#define CAKE_KDA_PACKED_T1_KERNEL {metadata.symbol}
#define CAKE_KDA_PACKED_T1_THREADS {metadata.threads}

#include "cake_kda_packed_t1_binding.cuh"
"""


def gen_cake_kda_packed_t1_module(variant: KDAVariant, target: str) -> JitSpec:
    if variant not in KDA_VARIANTS:
        raise ValueError(f"unsupported variant: {variant}")
    if target not in _KDA_NVCC_FLAGS:
        raise ValueError(f"unsupported target: {target}")
    csrc_dir = _get_csrc_dir()
    metadata = KDA_VARIANT_METADATA[variant]
    body = csrc_dir / metadata.body
    if not body.exists():
        raise FileNotFoundError(body)
    uri = f"cake_kda_packed_t1_{variant}_{target}"
    binding = jit_env.FLASHINFER_GEN_SRC_DIR / uri / "cake_kda_packed_t1_binding.cu"
    write_if_different(binding, _get_binding_cu(metadata))
    return gen_jit_spec(
        name=uri,
        sources=[binding],
        extra_cuda_cflags=[
            *SPEC_FLAGS,
            (
                "-DFLASHINFER_CAKE_KDA_PACKED_T1_TARGET_KIND="
                f"{_KDA_TARGET_KIND[target]}"
            ),
            *metadata.extra_cuda_flags,
        ],
        extra_include_paths=[csrc_dir, csrc_dir.parent, jit_env.FLASHINFER_INCLUDE_DIR],
    )
'''

TABLE_FLAGS = "_KDA_NVCC_FLAGS[target]"  # sm_100a / sm_100f only: FlashInfer's own
RUNNING_FLAGS = "current_compilation_context.get_nvcc_flags_list(supported_major_versions=[8, 9, 10])"

BINDING_CUH = """\
#pragma once
#ifndef CAKE_KDA_PACKED_T1_BODY_FILE
#error "CAKE_KDA_PACKED_T1_BODY_FILE must name one frozen body"
#endif
#include <cuda_runtime.h>

#include CAKE_KDA_PACKED_T1_BODY_FILE
"""


def body(name: str) -> str:
    return f"""\
#include <cuda_runtime.h>

__global__ void {name}(float2* state, const float2* k, const float2* v) {{
  unsigned long long acc = reinterpret_cast<unsigned long long*>(state)[threadIdx.x];
  unsigned long long a = reinterpret_cast<const unsigned long long*>(k)[threadIdx.x];
  unsigned long long b = reinterpret_cast<const unsigned long long*>(v)[threadIdx.x];
  asm volatile("fma.rn.ftz.f32x2 %0, %1, %2, %0;" : "+l"(acc) : "l"(a), "l"(b));
  reinterpret_cast<unsigned long long*>(state)[threadIdx.x] = acc;
}}
"""


FLASH_KDA = '''\
from . import env as jit_env
from .core import JitSpec, gen_jit_spec, sm100a_nvcc_flags
from .utils import write_if_different

FLASH_KDA_VARIANTS = ("tile8", "tile16")


def _get_binding_cu(variant: str) -> str:
    return f"""\\
#define FLASHKDA_PACKED_T1_BODY_FILE "cake_flashkda_packed_t1_{variant}.cu"
#include "cake_flashkda_packed_t1_binding.cuh"
"""


def gen_flash_kda_packed_t1_module(variant: str) -> JitSpec:
    if variant not in FLASH_KDA_VARIANTS:
        raise ValueError(f"unsupported variant: {variant}")
    csrc_dir = jit_env.FLASHINFER_CSRC_DIR / "kda"
    body = csrc_dir / f"cake_flashkda_packed_t1_{variant}.cu"
    if not body.exists():
        raise FileNotFoundError(body)
    binding = jit_env.FLASHINFER_GEN_SRC_DIR / f"flash_kda_{variant}" / "binding.cu"
    write_if_different(binding, _get_binding_cu(variant))
    return gen_jit_spec(
        f"flash_kda_packed_t1_{variant}",
        [binding],
        extra_cuda_cflags=SPEC_FLAGS,
        extra_include_paths=[csrc_dir],
    )
'''

FLEET = ("A100", "H100", "B200")


def tree(tmp_path: Path, modules: dict, csrc: dict) -> Path:
    files = {
        "pyproject.toml": "[project]\nname = 'flashinfer-python'\n",
        "flashinfer/compilation_context.py": "class CompilationContext:\n    pass\n",
        "flashinfer/jit/__init__.py": "",
        "flashinfer/jit/core.py": CORE,
        "flashinfer/jit/env.py": ENV,
        "flashinfer/jit/utils.py": UTILS,
        **{f"flashinfer/jit/{k}": v for k, v in modules.items()},
        **{f"csrc/{k}": v for k, v in csrc.items()},
    }
    for name, text in files.items():
        p = tmp_path / name
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(textwrap.dedent(text))
    return tmp_path


def run(root: Path, gpus=FLEET):
    diags = lint_paths([root / "csrc"], target=Target(gpus=list(gpus)), use_config=False, select=["AIC301"])
    return sorted((Path(d.path).relative_to(root).as_posix(), d.line, list(d.targets)) for d in diags)


def kda_tree(tmp_path: Path, flags: str) -> Path:
    return tree(tmp_path, {"cake_kda_packed_t1.py": KDA.replace("SPEC_FLAGS", flags)}, {
        "kda/cake_kda_packed_t1_binding.cuh": BINDING_CUH,
        "kda/cake_kda_packed_t1_register_tile16.cu": body("kernel_packed_kda_t1_register_tile16"),
        "kda/cake_kda_packed_t1_cpasync_tile64.cu": body("kernel_packed_kda_t1_cpasync"),
    })


def test_table_named_bodies_built_for_the_running_gpu_fail_below_sm100(tmp_path):
    # The bodies reach the build only through the table and the generated binding; built for the
    # running GPU on majors 8-10 they are compiled for sm_80 and sm_90a too, where ptxas rejects f32x2.
    found = run(kda_tree(tmp_path, RUNNING_FLAGS))
    assert found == [("csrc/kda/cake_kda_packed_t1_cpasync_tile64.cu", 7, ["A100", "H100"]),
                     ("csrc/kda/cake_kda_packed_t1_register_tile16.cu", 7, ["A100", "H100"])]
    msg = lint_paths([tmp_path / "csrc"], target=Target(gpus=list(FLEET)), use_config=False,
                     select=["AIC301"])[0].message
    assert "gen_cake_kda_packed_t1_module" in msg and "no build found" not in msg


def test_table_named_bodies_built_for_sm100_only_are_clean(tmp_path):
    # FlashInfer's own flags (sm100a_nvcc_flags / sm100f_nvcc_flags by target): never built for A100/H100.
    assert run(kda_tree(tmp_path, TABLE_FLAGS)) == []


def flash_kda_tree(tmp_path: Path, flags: str) -> Path:
    return tree(tmp_path, {"cake_flash_kda_packed_t1.py": FLASH_KDA.replace("SPEC_FLAGS", flags)}, {
        "kda/cake_flashkda_packed_t1_binding.cuh": BINDING_CUH.replace("CAKE_KDA_PACKED_T1", "FLASHKDA_PACKED_T1"),
        "kda/cake_flashkda_packed_t1_tile8.cu": body("kernel_kimi_kda_t1_packed"),
        "kda/cake_flashkda_packed_t1_tile16.cu": body("kernel_kimi_kda_t1_packed_tile16"),
    })


def test_fstring_over_checked_variant_built_for_every_gpu_fails(tmp_path):
    found = run(flash_kda_tree(tmp_path, "None"))
    assert found == [("csrc/kda/cake_flashkda_packed_t1_tile16.cu", 7, ["A100", "H100"]),
                     ("csrc/kda/cake_flashkda_packed_t1_tile8.cu", 7, ["A100", "H100"])]


def test_fstring_over_checked_variant_built_for_sm100a_is_clean(tmp_path):
    assert run(flash_kda_tree(tmp_path, "sm100a_nvcc_flags")) == []


XQA = '''\
import functools

from . import env as jit_env
from .core import JitSpec, gen_jit_spec
from ..compilation_context import CompilationContext

xqa_nvcc_flags = ["-DNDEBUG=1", "-DBEAM_WIDTH=1", "-DUSE_INPUT_KV=0"]


@functools.cache
def _has_sm90_target() -> bool:
    return any(major == 9 for major, _ in CompilationContext().TARGET_CUDA_ARCHS)


def gen_xqa_module(input_dtype, page_size: int, head_dim: int, use_sliding_window: bool, cubin_dir: str) -> JitSpec:
    if input_dtype == "float16":
        flag_input_dtype = ["-DINPUT_FP16=1", "-DDTYPE=__half"]
    else:
        flag_input_dtype = ["-DINPUT_FP16=0", "-DDTYPE=__nv_bfloat16"]
    flag_tokens_per_page = [f"-DTOKENS_PER_PAGE={page_size}"]
    flag_head_dim = [f"-DHEAD_ELEMS={head_dim}"]
    if use_sliding_window:
        flag_sliding_window = ["-DSLIDING_WINDOW=1"]
    else:
        flag_sliding_window = ["-DSLIDING_WINDOW=0"]
    flag_cubin = [f'-DXQA_CUBIN_PATH=\\\\"{cubin_dir}\\\\"']
    compilation_context = CompilationContext()
    nvcc_flags = compilation_context.get_nvcc_flags_list(supported_major_versions=[9, 10, 12])
    sm_nvcc_flags = nvcc_flags
    sources = [
        jit_env.FLASHINFER_CSRC_DIR / "xqa/mha.cu",
        jit_env.FLASHINFER_CSRC_DIR / "flashinfer_xqa_binding.cu",
    ]
    ADD_SM90
    return gen_jit_spec(
        f"xqa_{page_size}_{head_dim}",
        sources,
        extra_cuda_cflags=xqa_nvcc_flags
        + sm_nvcc_flags
        + flag_tokens_per_page
        + flag_head_dim
        + flag_input_dtype
        + flag_sliding_window
        + flag_cubin
        + flag_sm90_mha,
    )
'''

CHECKED = '''\
if _has_sm90_target() and head_dim <= 256:
        sources.append(jit_env.FLASHINFER_CSRC_DIR / "xqa/mha_sm90.cu")
        flag_sm90_mha = ["-DUSE_SM90_MHA=1"]
    else:
        flag_sm90_mha = ["-DUSE_SM90_MHA=0"]'''

UNCHECKED = '''\
sources.append(jit_env.FLASHINFER_CSRC_DIR / "xqa/mha_sm90.cu")
    flag_sm90_mha = ["-DUSE_SM90_MHA=1"]'''

WGMMA_CU = """\
#include <cuda_runtime.h>

__global__ void kernel_mha_sm90(float* out) {
  asm volatile("wgmma.fence.sync.aligned;\\n" ::: "memory");
  out[threadIdx.x] = 0.f;
}
"""


def xqa_tree(tmp_path: Path, add: str) -> Path:
    return tree(tmp_path, {"xqa.py": XQA.replace("ADD_SM90", add)}, {
        "xqa/mha.cu": "#include <cuda_runtime.h>\n__global__ void kernel_mha(float* o) { o[0] = 1.f; }\n",
        "xqa/mha_sm90.cu": WGMMA_CU,
        "flashinfer_xqa_binding.cu": "#include <cuda_runtime.h>\n",
    })


def test_sm90_source_added_unconditionally_is_built_for_blackwell_too(tmp_path):
    # A 9-term + chain with a quoted -D path: readable; the running GPU's target on majors 9, 10, 12.
    assert run(xqa_tree(tmp_path, UNCHECKED), ("H100", "B200")) == [("csrc/xqa/mha_sm90.cu", 4, ["B200"])]


def test_sm90_source_added_under_has_sm90_target_is_clean(tmp_path):
    # xqa.py L153: added only when a 9.x GPU is among the targets (cuda_jit.toml specs.target_checks).
    assert run(xqa_tree(tmp_path, CHECKED), ("H100", "B200")) == []


SSU = '''\
from . import env as jit_env
from .core import JitSpec, gen_jit_spec
from ..compilation_context import CompilationContext

_SUPPORTED_MAJORS = MAJOR_LIST


def _arch_flags() -> list[str]:
    ctx = CompilationContext()
    return ctx.get_nvcc_flags_list(supported_major_versions=_SUPPORTED_MAJORS)


def gen_checkpointing_ssu_module(dim: int, dstate: int, extra_cuda_cflags: list = None) -> JitSpec:
    return gen_jit_spec(
        f"checkpointing_ssu_{dim}_{dstate}",
        [jit_env.FLASHINFER_CSRC_DIR / "checkpointing_ssu.cu"],
        extra_cuda_cflags=_arch_flags() + (extra_cuda_cflags or []),
    )
'''


def ssu_tree(tmp_path: Path, majors: str) -> Path:
    return tree(tmp_path, {"checkpointing_ssu.py": SSU.replace("MAJOR_LIST", majors)},
                {"checkpointing_ssu.cu": WGMMA_CU})


def test_flags_from_a_helper_and_a_defaulted_parameter_reach_the_a100(tmp_path):
    assert run(ssu_tree(tmp_path, "[8, 9]"), ("A100", "H100")) == [("csrc/checkpointing_ssu.cu", 4, ["A100"])]


def test_flags_from_a_helper_for_hopper_only_are_clean(tmp_path):
    assert run(ssu_tree(tmp_path, "[9]"), ("A100", "H100")) == []


DSV3 = '''\
from . import env as jit_env
from .core import JitSpec, gen_jit_spec


def FUNCTION(backend: str = "default") -> JitSpec:
    if backend not in ("default", "cake"):
        raise ValueError(f"Unsupported fused routing backend: {backend}")
    return gen_jit_spec(
        "dsv3_fused_routing" if backend == "default" else "dsv3_fused_routing_cake",
        [jit_env.FLASHINFER_CSRC_DIR / "fused_moe/noAuxTcKernels.cu"],
        extra_cuda_cflags=["-DFLASHINFER_CAKE_BACKEND", "--use_fast_math"]
        if backend == "cake"
        else None,
    )
'''

ROUTING_CU = """\
#include <cuda_runtime.h>

__global__ void noaux_tc_kernel(const float* scores, int* topk) {
  asm volatile("griddepcontrol.wait;" ::: "memory");
  topk[threadIdx.x] = scores[threadIdx.x] > 0.f;
}
"""


def dsv3_tree(tmp_path: Path, function: str) -> Path:
    return tree(tmp_path, {"dsv3_optimizations.py": DSV3.replace("FUNCTION", function)},
                {"fused_moe/noAuxTcKernels.cu": ROUTING_CU})


def test_routing_module_of_another_name_is_built_for_the_a100(tmp_path):
    # ``... if backend == "cake" else None``: readable (None is no flags: the running GPU's target).
    assert run(dsv3_tree(tmp_path, "gen_routing_module"), ("A100", "H100")) == \
        [("csrc/fused_moe/noAuxTcKernels.cu", 4, ["A100"])]


def test_dsv3_routing_module_is_requested_from_capability_89_only(tmp_path):
    # fused_topk_deepseek's common_check (fused_routing_dsv3.py L94-95; cuda_jit.toml specs.requested).
    assert run(dsv3_tree(tmp_path, "gen_dsv3_fused_routing_module"), ("A100", "H100")) == []
