"""Builds aicompat can and cannot see (aicompat issue 28).

A CUDA file whose build is not visible is judged only for what fails on every compile target
of every fleet GPU it could be built for, and the run says how many such files there were.
Makefiles and shell scripts are builds: their nvcc commands (explicit and pattern rules,
commands naming the .cu), one Makefile configuration of its conditionals at a time, each with
its own targets and -D defines.
"""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

from conftest import run_cli

from aicompat import Target, lint_paths

# Written like a library's attention kernel: cluster ids on Hopper and Blackwell builds, a
# warpgroup MMA fence on the Hopper build only.
ATTN_CU = """\
    #include <cuda_runtime.h>

    __device__ __forceinline__ unsigned cluster_y() {
      unsigned r = 0;
    #if defined(LIB_HOPPER) || defined(LIB_BLACKWELL)
      asm volatile("mov.u32 %0, %clusterid.y;" : "=r"(r));
    #endif
      return r;
    }

    __global__ void attn_fwd(float* out) {
    #if defined(LIB_HOPPER)
      asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
    #endif
      out[blockIdx.x * blockDim.x + threadIdx.x] = static_cast<float>(cluster_y());
    }
"""

# One build per machine: make GPU_TARGET=H100 (the default), A100 or B200.
MAKEFILE = """\
    CUDA_HOME ?= /usr/local/cuda
    NVCC ?= $(CUDA_HOME)/bin/nvcc
    GPU_TARGET ?= H100

    NVCCFLAGS := -O3 -std=c++17 --expt-relaxed-constexpr -Xcompiler -fPIC
    ifeq ($(GPU_TARGET),H100)
      GENCODE := -gencode arch=compute_90a,code=sm_90a
      NVCCFLAGS += -DLIB_HOPPER
    else ifeq ($(GPU_TARGET),B200)
      GENCODE := -gencode arch=compute_100a,code=sm_100a
      NVCCFLAGS += -DLIB_BLACKWELL
    else ifeq ($(GPU_TARGET),A100)
      GENCODE := -gencode arch=compute_80,code=sm_80<A100_DEFINES>
    else
      $(error unknown GPU_TARGET $(GPU_TARGET))
    endif

    SRCS := $(wildcard csrc/*.cu)
    OBJS := $(SRCS:.cu=.o)

    libattn.so: $(OBJS)
    \t$(NVCC) -shared -o $@ $^

    %.o: %.cu
    \t$(NVCC) $(NVCCFLAGS) $(GENCODE) -c $< -o $@

    clean:
    \trm -f $(OBJS) libattn.so
"""

WGMMA_CU = """\
    __global__ void gemm_mainloop(float* acc) {
      asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
      acc[threadIdx.x] = 0.f;
    }
"""

TCGEN05_CU = """\
    __global__ void gemm_epilogue(float* acc) {
      asm volatile("tcgen05.relinquish_alloc_permit.cta_group::1.sync.aligned;");
      acc[threadIdx.x] = 0.f;
    }
"""


def write(root: Path, files: dict[str, str]) -> Path:
    (root / ".git").mkdir(exist_ok=True)
    for rel, text in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(textwrap.dedent(text).replace("\\t", "\t"))
    return root


def lint(root: Path, gpus=("A100", "H100"), select="AIC301"):
    diags = lint_paths([root], target=Target(gpus=list(gpus)), use_config=False, select=[select])
    return [(Path(d.path).relative_to(root).as_posix(), d.line, d.targets, d.message) for d in diags]


# -- Makefile configurations --------------------------------------------------------------

def test_a_makefile_defines_the_hopper_macro_only_with_sm90a(tmp_path):
    write(tmp_path, {"Makefile": MAKEFILE.replace("<A100_DEFINES>", ""), "csrc/attn.cu": ATTN_CU})
    assert lint(tmp_path) == []


def test_a_makefile_that_defines_the_hopper_macro_for_the_a100_too(tmp_path):
    bad = MAKEFILE.replace("<A100_DEFINES>", "\n      NVCCFLAGS += -DLIB_HOPPER")
    write(tmp_path, {"Makefile": bad, "csrc/attn.cu": ATTN_CU})
    found = lint(tmp_path)
    assert [(p, line, t) for p, line, t, _m in found] == [("csrc/attn.cu", 6, ["A100"]),
                                                          ("csrc/attn.cu", 13, ["A100"])]
    assert found[1][3].startswith(
        "'wgmma.fence.sync.aligned' (wgmma) is rejected by sm_80 (Makefile line 26 builds it for sm_80 in the "
        "Makefile configuration GPU_TARGET=A100): \"Instruction 'wgmma.fence' not supported on .target 'sm_80'\"; "
        "fails on sm_80 (A100).")
    assert "'mov.u32' (mov %clusterid.y)" in found[0][3] and "GPU_TARGET=A100" in found[0][3]


def test_a_makefile_explicit_rule_compiles_its_first_prerequisite(tmp_path):
    mk = """\
        NVCC := nvcc
        ARCH := -gencode arch=compute_90a,code=sm_90a
        build/gemm.o: kernels/gemm.cu kernels/common.cuh
        \t@mkdir -p build
        \t$(NVCC) $(ARCH) -O3 -c $< -o $@
    """
    write(tmp_path, {"Makefile": mk, "kernels/gemm.cu": WGMMA_CU, "kernels/common.cuh": "#pragma once\n"})
    assert lint(tmp_path) == []
    write(tmp_path, {"Makefile": mk.replace("ARCH := ", "ARCH := -gencode arch=compute_80,code=sm_80 ")})
    found = lint(tmp_path)
    assert [(p, line, t) for p, line, t, _m in found] == [("kernels/gemm.cu", 2, ["A100", "H100"])]
    assert "(Makefile line 5 builds it for sm_80, sm_90a)" in found[0][3]


# -- shell scripts ------------------------------------------------------------------------

def test_a_build_script_is_the_files_build(tmp_path):
    sh = """\
        #!/usr/bin/env bash
        set -euo pipefail
        ARCHS="-gencode arch=compute_90a,code=sm_90a"
        mkdir -p build
        nvcc -O3 ${ARCHS} -c csrc/gemm.cu -o build/gemm.o
    """
    write(tmp_path, {"build.sh": sh, "csrc/gemm.cu": WGMMA_CU})
    assert lint(tmp_path) == []
    write(tmp_path, {"build.sh": sh.replace('ARCHS="', 'ARCHS="-gencode arch=compute_80,code=sm_80 ')})
    found = lint(tmp_path)
    assert [(p, line, t) for p, line, t, _m in found] == [("csrc/gemm.cu", 2, ["A100", "H100"])]
    assert "(build.sh line 5 builds it for sm_80, sm_90a)" in found[0][3]


# -- no build visible ---------------------------------------------------------------------

def test_an_unbuilt_wgmma_file_is_no_fault_the_build_may_target_sm90a(tmp_path):
    write(tmp_path, {"csrc/gemm.cu": WGMMA_CU})
    assert lint(tmp_path) == []


def test_an_unbuilt_tcgen05_file_fails_on_every_target_of_an_a100_h100_fleet(tmp_path):
    write(tmp_path, {"csrc/epilogue.cu": TCGEN05_CU})
    found = lint(tmp_path)
    assert [(p, line, t) for p, line, t, _m in found] == [("csrc/epilogue.cu", 2, ["A100", "H100"])]
    assert found[0][3].startswith(
        "'tcgen05.relinquish_alloc_permit.cta_group::1.sync.aligned' (tcgen05) is rejected by every compile target "
        "of every GPU it could be built for (no build aicompat can see for this file, so it may target any fleet "
        "GPU; reported because no compile target of any of them accepts it)")


def test_the_run_counts_the_unbuilt_files_once(tmp_path):
    write(tmp_path, {"csrc/gemm.cu": WGMMA_CU, "csrc/epilogue.cu": TCGEN05_CU, "csrc/attn.cu": ATTN_CU,
                     "csrc/plain.cu": "__global__ void k(float* x) { x[0] = 1.f; }\n"})
    cache = tmp_path.parent / (tmp_path.name + "-cache")
    args = ["lint", "--no-config", "--gpu", "A100", "--gpu", "H100", "--format", "json", "--select", "AIC301",
            "-j", "2", "--cache-dir", str(cache), "csrc"]
    want = ("3 CUDA files with arch-specific code have no build aicompat can see: judged only for what fails on "
            "every compile target of every fleet GPU they could be built for")
    for _ in range(2):  # checked on workers, then read from the cache: counted alike
        doc = json.loads(run_cli(*args, cwd=tmp_path).stdout)
        notes = [n for n in doc["notes"] if "no build aicompat can see" in n]
        assert notes == [want + " (-v names them)"]
    doc = json.loads(run_cli(*args[:-1], "-v", "csrc", cwd=tmp_path).stdout)
    notes = [n for n in doc["notes"] if "no build aicompat can see" in n]
    assert notes == [want + ": csrc/attn.cu, csrc/epilogue.cu, csrc/gemm.cu"]


def test_a_built_file_is_not_counted(tmp_path):
    write(tmp_path, {"Makefile": MAKEFILE.replace("<A100_DEFINES>", ""), "csrc/attn.cu": ATTN_CU})
    r = run_cli("lint", "--no-config", "--gpu", "A100", "--gpu", "H100", "--format", "json", "--select", "AIC301",
                "--no-cache", "csrc", cwd=tmp_path)
    assert not [n for n in json.loads(r.stdout)["notes"] if "no build aicompat can see" in n]


# -- AIC302 reads one configuration at a time ---------------------------------------------

PER_GPU_MAKEFILE = """\
    NVCC ?= nvcc
    ifeq ($(GPU_TARGET),A100)
      ARCH := -gencode arch=compute_80,code=sm_80
    else
      ARCH := -gencode arch=compute_90a,code=sm_90a
    endif
    %.o: %.cu
    \t$(NVCC) $(ARCH) -O3 -c $< -o $@
"""


def test_aic302_a_per_gpu_makefile_serves_the_fleet(tmp_path):
    # Merged, the branches left ARCH at sm_90a alone: the A100 was said to have no code.
    write(tmp_path, {"Makefile": PER_GPU_MAKEFILE})
    assert lint(tmp_path, select="AIC302") == []


def test_aic302_a_gpu_no_configuration_builds_for_is_reported_with_its_configuration(tmp_path):
    write(tmp_path, {"Makefile": PER_GPU_MAKEFILE})
    found = lint(tmp_path, ("A100", "H100", "B200"), select="AIC302")
    assert [(p, line, t) for p, line, t, _m in found] == [("Makefile", 8, ["B200"]), ("Makefile", 8, ["B200"])]
    assert found[0][3].endswith("(in the Makefile configuration GPU_TARGET=A100)")
    assert found[1][3].endswith("(in the Makefile configuration GPU_TARGET other than A100)")


# A microbenchmark with an opt-in Blackwell path: off unless the build passes -D...=1.
PIPE_BENCH_CU = """\
    #include <cstdio>
    #include <cuda_runtime.h>

    #ifndef PIPE_ENABLE_REDUX_F32
    #define PIPE_ENABLE_REDUX_F32 0
    #endif

    __global__ void reduce_kernel(const float* in, float* out) {
      float v = in[threadIdx.x];
    #if PIPE_ENABLE_REDUX_F32
      float r;
      asm volatile("redux.sync.max.f32 %0, %1, 0xffffffff;" : "=f"(r) : "f"(v));
      v = r;
    #endif
      out[threadIdx.x] = v;
    }

    int main() {
      float *a, *b;
      cudaMalloc(&a, 128);
      cudaMalloc(&b, 128);
      reduce_kernel<<<1, 32>>>(a, b);
      cudaDeviceSynchronize();
      printf("ok\\n");
      return 0;
    }
"""


def _write(root: Path, files: dict) -> None:
    for name, text in files.items():
        p = root / name
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(textwrap.dedent(text))


def _aic301(root: Path, gpus) -> list:
    diags = lint_paths([root], target=Target(gpus=list(gpus)), use_config=False, select=["AIC301"])
    return [(Path(d.path).relative_to(root).as_posix(), d.line) for d in diags]


def test_unbuilt_file_macro_default_off_is_not_enabled_by_a_guessed_build(tmp_path):
    # No build defines PIPE_ENABLE_REDUX_F32: its in-file default 0 stands, the redux.f32 path is dead.
    _write(tmp_path, {"microbench/pipe_bench.cu": PIPE_BENCH_CU})
    assert _aic301(tmp_path, ["A100", "H100"]) == []


def test_unbuilt_file_with_the_path_on_unconditionally_is_reported(tmp_path):
    # redux.f32 needs sm_100a/sm_103a (ptxas 13.0: "Instruction 'redux.f32' not supported on
    # .target 'sm_90'"): no target of the A100 or the H100 accepts it, whatever the build.
    _write(tmp_path, {"microbench/pipe_bench.cu": PIPE_BENCH_CU.replace("#if PIPE_ENABLE_REDUX_F32", "#if 1")})
    assert _aic301(tmp_path, ["A100", "H100"]) == [("microbench/pipe_bench.cu", 12)]


def test_a_makefile_that_turns_the_path_on_for_sm90a_fails_on_the_h100(tmp_path):
    make = """\
        NVCC ?= nvcc
        pipe_bench: pipe_bench.cu
        \t$(NVCC) -O3 -gencode arch=compute_90a,code=sm_90a -DPIPE_ENABLE_REDUX_F32=1 -o $@ $<
    """
    _write(tmp_path, {"microbench/pipe_bench.cu": PIPE_BENCH_CU, "microbench/Makefile": make})
    assert _aic301(tmp_path, ["A100", "H100"]) == [("microbench/pipe_bench.cu", 12)]
