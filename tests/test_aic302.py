"""AIC302 build-arch-flags on Python, CMake, Dockerfile and shell sources."""
import json
import textwrap

import pytest
from conftest import lint, run_cli


def aic302(code, gpus, cuda=None):
    return [d for d in lint(code, gpus=gpus, cuda=cuda, select=["AIC302"])]


@pytest.mark.parametrize("value,gpus,failing", [
    ("8.0;9.0+PTX", ["A100", "H100", "B200"], []),          # PTX 9.0 JITs on Blackwell
    ("8.0;9.0", ["A100", "H100", "B200"], ["B200"]),
    ("9.0a", ["H100", "B200"], ["B200"]),                   # 'a' carries no forward PTX
    ("Ampere", ["A100", "RTX 3090", "L4"], []),             # 8.0;8.6+PTX covers sm_89 by JIT
    ("8.0", ["A100", "RTX 3090"], []),                      # sm_80 cubin runs on sm_86
    ("8.6", ["A100"], ["A100"]),                            # but not the other way round
    ("12.0", ["RTX 5090", "DGX Spark"], []),
    ("10.0", ["B200", "B300"], []),
])
def test_torch_arch_list_coverage(value, gpus, failing):
    d = aic302(f"import os\nos.environ['TORCH_CUDA_ARCH_LIST'] = {value!r}\n", gpus)
    assert sorted({t for x in d for t in x.targets}) == sorted(failing)


def test_rejected_values():
    for bad in ("10.0f", "sm_90", "compute_90"):
        d = aic302(f"import os\nos.environ['TORCH_CUDA_ARCH_LIST'] = '9.0;{bad}'\n", ["H100"])
        assert any(f"Unknown CUDA arch ({bad})" in x.message for x in d), bad


def test_toolkit_too_old():
    d = aic302("import os\nos.environ['TORCH_CUDA_ARCH_LIST'] = '9.0;10.0'\n", ["H100", "B200"], cuda="12.4")
    assert any("CUDA 12.4 cannot build sm_100 (first supported by CUDA 12.8)" in x.message for x in d)
    assert aic302("import os\nos.environ['TORCH_CUDA_ARCH_LIST'] = '9.0;10.0'\n", ["H100", "B200"], cuda="12.8") == []


def test_cuda_extension_nvcc_flags_and_fix():
    code = textwrap.dedent("""
        from torch.utils.cpp_extension import CUDAExtension
        NVCC = ["-O3", "-gencode=arch=compute_90a,code=sm_90a"]
        ext = CUDAExtension("k", ["k.cu"], extra_compile_args={"cxx": ["-O3"], "nvcc": NVCC})
    """)
    d = aic302(code, ["H100", "B200"])
    assert d and d[0].targets == ["B200"]
    assert "-gencode=arch=compute_90a,code=sm_90a -gencode=arch=compute_100a,code=sm_100a" in d[0].message


def test_flags_without_arch_are_left_to_torch():
    assert aic302("from torch.utils.cpp_extension import load_inline\n"
                  "load_inline('k', '', cuda_sources=S, extra_cuda_cflags=['-O3', '--use_fast_math'])\n",
                  ["H100"]) == []


def test_build_files(tmp_path):
    (tmp_path / "CMakeLists.txt").write_text('project(k LANGUAGES CXX CUDA)\nset(CMAKE_CUDA_ARCHITECTURES "90a")\n')
    (tmp_path / "Dockerfile").write_text("FROM nvcr.io/nvidia/pytorch:25.01-py3\nENV TORCH_CUDA_ARCH_LIST=\"8.0 9.0\"\n"
                                         "RUN pip install .\n")
    (tmp_path / "build.sh").write_text("#!/bin/sh\nexport TORCH_CUDA_ARCH_LIST='10.0f'\npython setup.py install\n")
    r = run_cli("lint", "--no-config", "--gpu", "H100", "--gpu", "B200", "--format", "json", str(tmp_path),
                cwd=tmp_path)
    got = sorted((d["path"], d["line"], d["code"]) for d in json.loads(r.stdout)["diagnostics"])
    assert ("CMakeLists.txt", 2, "AIC302") in got
    assert ("Dockerfile", 2, "AIC302") in got
    assert ("build.sh", 2, "AIC302") in got
    msgs = " ".join(d["message"] for d in json.loads(r.stdout)["diagnostics"])
    assert "Unknown CUDA arch (10.0f)" in msgs and "no code for sm_100 (B200)" in msgs


def _build_script(arch_list):
    return textwrap.dedent(f'''\
        """Build the extension in place before launching the job."""
        import os
        import subprocess
        import sys


        def build_extension(root):
            env = os.environ.copy()
            env["TORCH_CUDA_ARCH_LIST"] = {arch_list!r}
            env["MAX_JOBS"] = "8"
            subprocess.check_call([sys.executable, "setup.py", "build_ext", "--inplace"], cwd=root, env=env)
    ''')


def test_arch_list_in_an_env_dict_handed_to_a_build_process():
    got = [(d.line, d.column, d.message) for d in aic302(_build_script("9.0"), ["A100", "H100"])]
    assert got == [(11, 97, "TORCH_CUDA_ARCH_LIST='9.0' builds sm_90: no code for sm_80 (A100), which then fails with "
                            "\"no kernel image is available for execution on the device\"; use "
                            "TORCH_CUDA_ARCH_LIST=\"8.0;9.0+PTX\"")]


def test_env_dict_that_covers_the_fleet_is_clean():
    assert aic302(_build_script("8.0;9.0"), ["A100", "H100"]) == []


def test_env_dict_literal_is_reported_once_where_it_is_written():
    code = textwrap.dedent("""\
        import os
        import subprocess

        BUILD_ENV = {**os.environ, "TORCH_CUDA_ARCH_LIST": "9.0"}
        subprocess.run(["python", "setup.py", "develop"], env=BUILD_ENV)
    """)
    assert [(d.line, d.column) for d in aic302(code, ["A100", "H100"])] == [(4, 52)]


def test_setdefault_through_a_constant():
    code = "import os\nARCH_VAR = 'TORCH_CUDA_ARCH_LIST'\nos.environ.setdefault(ARCH_VAR, '9.0a')\n"
    assert [(d.line, d.targets) for d in aic302(code, ["H100", "B200"])] == [(3, ["B200"])]
    assert aic302(code.replace("'9.0a'", "'9.0a;10.0a'"), ["H100", "B200"]) == []


_LOADER = textwrap.dedent('''\
    from torch.utils.cpp_extension import load_inline


    class FusedOps:
        def __init__(self, source):
            self.source = source
            self.cflags = {flags}

        def build(self):
            return load_inline("fused", "", cuda_sources=self.source, extra_cuda_cflags=self.cflags)
''')


def test_nvcc_flags_kept_on_self():
    code = _LOADER.replace("{flags}", '["-O3", "-gencode=arch=compute_90a,code=sm_90a"]')
    got = [(d.line, d.column, d.message) for d in aic302(code, ["H100", "B200"])]
    assert got == [(10, 85, "load_inline extra_cuda_cflags builds sm_90a: no code for sm_100 (B200), which then fails "
                            "with \"no kernel image is available for execution on the device\"; use "
                            "-gencode=arch=compute_90a,code=sm_90a -gencode=arch=compute_100a,code=sm_100a")]


def test_nvcc_flags_kept_on_self_for_every_arch_are_clean():
    code = _LOADER.replace("{flags}", '["-O3", "-gencode=arch=compute_90a,code=sm_90a",\n'
                                      '                       "-gencode=arch=compute_100a,code=sm_100a"]')
    assert aic302(code, ["H100", "B200"]) == []


def test_nvcc_flags_from_the_running_gpu_are_not_judged():
    code = "import torch\n" + _LOADER.replace(
        "{flags}", '["-gencode=arch=compute_90a,code=sm_90a", f"-arch=sm_{torch.cuda.get_device_capability()[0]}0a"]')
    assert aic302(code, ["H100", "B200"]) == []


def test_extra_compile_args_built_by_dict_call():
    code = textwrap.dedent("""\
        from torch.utils.cpp_extension import CUDAExtension

        def make_ext(name, sources):
            args = dict(cxx=["-O3"], nvcc=["-O3", "-gencode=arch=compute_80,code=sm_80"])
            return CUDAExtension(name, sources, extra_compile_args=args)
    """)
    assert [(d.line, d.targets) for d in aic302(code, ["A100", "H100"])] == [(5, ["H100"])]


# -- nvcc command lines (issue 12 item 3) ------------------------------------------

BUILD_SH = """\
#!/usr/bin/env bash
# Builds the cubin the loader opens. (nvcc -arch=sm_90 also works: just a comment.)
set -euo pipefail
ARCH=${ARCH_OVERRIDE:-sm_100}
NVCC_ARCH=sm_100
mkdir -p build
nvcc -O3 -lineinfo -arch=$NVCC_ARCH -cubin -o build/attn.cubin csrc/attn.cu
"""

MAKEFILE = """\
NVCC ?= nvcc
ARCH := -arch=sm_100
NVCCFLAGS = -O3 -std=c++17 $(ARCH)

all: build/attn.cubin

build/%.cubin: csrc/%.cu
\t@mkdir -p build
\t$(NVCC) $(NVCCFLAGS) -cubin -o $@ $<
"""


def _files(tmp_path, files, gpus):
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    r = run_cli("lint", "--no-config", "--no-cache", "--format", "json", *[a for g in gpus for a in ("--gpu", g)],
                "--select", "AIC302", *files, cwd=tmp_path)
    return [(d["path"], d["line"], d["column"], d["message"]) for d in json.loads(r.stdout)["diagnostics"]]


def test_nvcc_cubin_in_a_shell_script_and_a_makefile(tmp_path):
    found = _files(tmp_path, {"build.sh": BUILD_SH, "Makefile": MAKEFILE}, ["H100", "B200"])
    msg = ('nvcc -arch=sm_100 builds sm_100: no code for sm_90 (H100), which then fails with "no kernel image is '
           'available for execution on the device"; build a fatbin instead (-fatbin) with '
           '-gencode=arch=compute_90,code=sm_90 -gencode=arch=compute_100,code=sm_100')
    assert found == [("Makefile", 9, 2, msg.replace("nvcc -arch", "nvcc -arch", 1)), ("build.sh", 7, 1, msg)]


def test_nvcc_fatbin_for_the_fleet_is_clean(tmp_path):
    fat = "-fatbin -gencode arch=compute_90,code=sm_90 -gencode arch=compute_100,code=sm_100"
    files = {"build.sh": BUILD_SH.replace("-arch=$NVCC_ARCH -cubin", fat).replace(".cubin", ".fatbin"),
             "Makefile": MAKEFILE.replace("$(NVCCFLAGS) -cubin", "-O3 " + fat)}
    assert _files(tmp_path, files, ["H100", "B200"]) == []


def test_nvcc_flags_the_script_does_not_fix_are_not_judged(tmp_path):
    assert _files(tmp_path, {"build.sh": BUILD_SH.replace("-arch=$NVCC_ARCH", "-arch=$ARCH")}, ["H100"]) == []


NVCC_PY = '''\
import os
import subprocess
from pathlib import Path

HERE = Path(__file__).parent


def compile_kernel(src, out, arch="sm_100"):
    cmd = ["nvcc", "-O3", f"-arch={arch}", "-cubin", "-o", str(out), str(src)]
    subprocess.check_call(cmd)


def build_all():
    compile_kernel(HERE / "attn.cu", HERE / "attn.cubin")
    os.system("nvcc -gencode arch=compute_90a,code=sm_90a -c -o gemm.o gemm.cu")
'''


def test_nvcc_run_from_python():
    found = aic302(NVCC_PY, ["H100", "B200"])
    assert [(d.line, d.message.split(":")[0], sorted(d.targets)) for d in found] == [
        (10, "nvcc -arch=sm_100 builds sm_100", ["H100"]),
        (15, "nvcc -gencode arch=compute_90a,code=sm_90a builds sm_90a", ["B200"])]
    fixed = NVCC_PY.replace('arch="sm_100"', 'arch="sm_90"').replace(
        '"-cubin", ', '"-fatbin", "-gencode", "arch=compute_100,code=sm_100", ').replace(
        "-gencode arch=compute_90a,code=sm_90a -c", "-gencode arch=compute_90a,code=sm_90a "
                                                   "-gencode arch=compute_100a,code=sm_100a -c")
    assert aic302(fixed, ["H100", "B200"]) == []


LOADER_PY = '''\
from pathlib import Path

import cupy

KERNELS = Path(__file__).resolve().parent / "kernels"


class Attention:
    def __init__(self):
        self.module = cupy.RawModule(path=str(KERNELS / "attn.cubin"))
        self.fwd = self.module.get_function("attn_fwd")
'''


def test_cubin_loaded_by_path_is_judged_by_the_script_that_builds_it(tmp_path):
    (tmp_path / "setup.py").write_text("from setuptools import setup\nsetup(name='attn')\n")
    (tmp_path / "scripts").mkdir()
    (tmp_path / "scripts" / "build_kernels.sh").write_text(
        "#!/bin/sh\nset -e\nnvcc -O3 -arch=sm_100 -cubin -o attn/kernels/attn.cubin csrc/attn.cu\n")
    (tmp_path / "attn" / "kernels").mkdir(parents=True)
    (tmp_path / "attn" / "model.py").write_text(LOADER_PY)
    r = run_cli("lint", "--no-config", "--gpu", "H100", "--gpu", "B200", "--format", "json", "--select", "AIC302",
                "attn/model.py", cwd=tmp_path)
    found = [(d["line"], d["column"], d["message"]) for d in json.loads(r.stdout)["diagnostics"]]
    assert found == [(10, 43, "cupy.RawModule: attn.cubin (built by scripts/build_kernels.sh line 3: nvcc "
                              "-arch=sm_100) builds sm_100: no code for sm_90 (H100), which then fails with \"no "
                              "kernel image is available for execution on the device\"; build a fatbin instead "
                              "(-fatbin) with -gencode=arch=compute_90,code=sm_90 "
                              "-gencode=arch=compute_100,code=sm_100")]
    # The fixed script (a fatbin for both) makes the loader clean: the cache sees the script change.
    (tmp_path / "scripts" / "build_kernels.sh").write_text(
        "#!/bin/sh\nset -e\nnvcc -O3 -fatbin -gencode arch=compute_90,code=sm_90 -gencode arch=compute_100,code=sm_100"
        " -o attn/kernels/attn.cubin csrc/attn.cu\n")
    r = run_cli("lint", "--no-config", "--gpu", "H100", "--gpu", "B200", "--format", "json", "--select", "AIC302",
                "attn/model.py", cwd=tmp_path)
    assert json.loads(r.stdout)["diagnostics"] == []


# -- a build that leaves a GPU out by design ---------------------------------------------------
# A Hopper-only kernel library: its decode kernel issues wgmma (sm_90a only) in inline PTX, and
# its combine kernel waits on the previous grid (griddepcontrol, sm_90+). No compile target that
# runs on an A100 compiles them, so "add sm_80" would fail the build: no finding, a note.
_HOPPER_DECODE = """\
#include <cuda_runtime.h>
#include "wgmma_utils.cuh"

__global__ void decode_kernel(float* out, const float* q, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    wgmma_fence();
    if (i < n) out[i] = q[i];
}
"""
_WGMMA_HEADER = """\
#pragma once
__device__ __forceinline__ void wgmma_fence() {
    asm volatile("wgmma.fence.sync.aligned;\\n" ::: "memory");
}
"""
_GENERIC_DECODE = """\
#include <cuda_runtime.h>

__global__ void decode_kernel(float* out, const float* q, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = q[i] * 2.0f;
}
"""
_SETUP = '''\
import os
from setuptools import setup
from torch.utils.cpp_extension import BuildExtension, CUDAExtension


def arch_flags():
    flags = []
    if os.getenv("MLA_DISABLE_SM90", "0") != "1":
        flags += ["-gencode", "arch=compute_90a,code=sm_90a"]
    return flags


SOURCES = ["csrc/api.cpp", "csrc/decode.cu"]

setup(
    name="mla_kernels",
    ext_modules=[
        CUDAExtension(
            name="mla_kernels._C",
            sources=SOURCES,
            extra_compile_args={"cxx": ["-O3"], "nvcc": ["-O3", "--use_fast_math"] + arch_flags()},
        )
    ],
    cmdclass={"build_ext": BuildExtension},
)
'''


def _kernel_project(root, decode):
    (root / "csrc").mkdir()
    (root / "csrc" / "api.cpp").write_text("#include <torch/extension.h>\n")
    (root / "csrc" / "decode.cu").write_text(decode)
    (root / "csrc" / "wgmma_utils.cuh").write_text(_WGMMA_HEADER)


def _lint_dir(root, *gpus):
    args = [a for g in gpus for a in ("--gpu", g)]
    r = run_cli("lint", "--no-config", *args, "--select", "AIC302", "--format", "json", ".", cwd=root)
    out = json.loads(r.stdout)
    return [(d["path"], d["line"], d["message"]) for d in out["diagnostics"]], out.get("notes", [])


def test_setup_py_whose_sources_cannot_target_a_gpu_is_single_arch_by_design(tmp_path):
    _kernel_project(tmp_path, _HOPPER_DECODE)
    (tmp_path / "setup.py").write_text(_SETUP)
    found, notes = _lint_dir(tmp_path, "A100", "H100")
    assert found == []
    note = [n for n in notes if n.startswith("AIC302:")]
    assert len(note) == 1 and "no code for sm_80 (A100) by design: csrc/wgmma_utils.cuh:3 uses wgmma" in note[0], notes


def test_setup_py_whose_sources_build_anywhere_is_still_reported(tmp_path):
    _kernel_project(tmp_path, _GENERIC_DECODE)  # no arch-specific feature: sm_90a was a choice, not a need
    (tmp_path / "setup.py").write_text(_SETUP)
    found, notes = _lint_dir(tmp_path, "A100", "H100")
    assert [(p, line) for p, line, _m in found] == [("setup.py", 21)]  # extra_compile_args=
    assert "no code for sm_80 (A100)" in found[0][2]
    assert not any(n.startswith("AIC302:") for n in notes)


def test_each_gpu_left_out_is_judged_on_its_own_targets(tmp_path):
    # wgmma is sm_90a's alone: no sm_100 target compiles it either, so the B200 is left out by
    # design too (a note each); the generic twin above is reported.
    _kernel_project(tmp_path, _HOPPER_DECODE)
    (tmp_path / "setup.py").write_text(_SETUP)
    found, notes = _lint_dir(tmp_path, "A100", "H100", "B200")
    assert found == []
    assert sum(n.startswith("AIC302:") for n in notes) == 2


_CMAKE_ROOT = """\
cmake_minimum_required(VERSION 3.26)
project(mla LANGUAGES CXX CUDA)

set(MLA_CUDA_ARCH "90a" CACHE STRING "CUDA architecture for -gencode")
set(CMAKE_CUDA_ARCHITECTURES OFF)
set(CMAKE_CUDA_FLAGS "${CMAKE_CUDA_FLAGS} -gencode arch=compute_${MLA_CUDA_ARCH},code=sm_${MLA_CUDA_ARCH}")

add_subdirectory(csrc)
"""
_CMAKE_SUB = """\
add_library(mla_kernels SHARED decode.cu)
target_include_directories(mla_kernels PRIVATE ${CMAKE_CURRENT_SOURCE_DIR})
"""


@pytest.mark.parametrize("decode,reported", [(_HOPPER_DECODE, False), (_GENERIC_DECODE, True)])
def test_cmake_flags_of_a_subdirectory_target(tmp_path, decode, reported):
    _kernel_project(tmp_path, decode)
    (tmp_path / "CMakeLists.txt").write_text(_CMAKE_ROOT)
    (tmp_path / "csrc" / "CMakeLists.txt").write_text(_CMAKE_SUB)
    found, notes = _lint_dir(tmp_path, "A100", "H100")
    assert [(p, line) for p, line, _m in found] == ([("CMakeLists.txt", 6)] if reported else [])
    assert any("by design: csrc/wgmma_utils.cuh:3" in n for n in notes) != reported


_SETUP_ENV = '''\
import os
import setuptools
from torch.utils.cpp_extension import BuildExtension, CUDAExtension

if __name__ == "__main__":
    nvcc_flags = ["-O3", "--extended-lambda"]
    sources = ["csrc/api.cpp"]
    sources.extend(["csrc/decode.cu"])
    # Prefer Hopper: the kernels use its features
    os.environ["TORCH_CUDA_ARCH_LIST"] = os.getenv("TORCH_CUDA_ARCH_LIST", "9.0")
    setuptools.setup(
        name="ep_kernels",
        ext_modules=[CUDAExtension(name="ep_kernels._C", sources=sources,
                                   extra_compile_args={"cxx": ["-O3"], "nvcc": nvcc_flags})],
        cmdclass={"build_ext": BuildExtension},
    )
'''
_ELECT_DECODE = """\
#include <cuda_runtime.h>

__device__ __forceinline__ unsigned elect_one() {
#ifndef DISABLE_SM90_FEATURES
    unsigned pred = 0;
    asm volatile("{\\n.reg .b32 rx;\\n.reg .pred px;\\nelect.sync rx|px, %1;\\n@px mov.s32 %0, 1;\\n}\\n"
                 : "+r"(pred) : "r"(0xffffffff));
    return pred;
#else
    return threadIdx.x % 32 == 0;
#endif
}

__global__ void decode_kernel(float* out, const float* q, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (elect_one() && i < n) out[i] = q[i];
}
"""


@pytest.mark.parametrize("decode,reported", [(_ELECT_DECODE, False), (_GENERIC_DECODE, True)])
def test_setup_py_that_sets_its_own_arch_list(tmp_path, decode, reported):
    # The arch list the setup.py sets for its own extensions: judged with their sources. elect.sync
    # is sm_90+ unless -DDISABLE_SM90_FEATURES, which this build does not pass.
    _kernel_project(tmp_path, decode)
    (tmp_path / "setup.py").write_text(_SETUP_ENV)
    found, notes = _lint_dir(tmp_path, "A100", "H100")
    assert [(p, line) for p, line, _m in found] == ([("setup.py", 10)] if reported else [])
    assert any("by design: csrc/decode.cu:6 uses elect" in n for n in notes) != reported, notes


_KNOB_MAKEFILE = """\
# GPU selection: make GPU_TARGET=A100 (or H100, B200)
GPU_TARGET=H100
COMP_LEVEL=fast
NVCCFLAGS=-std=c++20 -Iinclude

ifeq ($(COMP_LEVEL),fast)
NVCCFLAGS+= -O0
else ifeq ($(COMP_LEVEL),debug)
NVCCFLAGS+= -g -G
endif

ifeq ($(GPU_TARGET),A100)
NVCCFLAGS+= -gencode arch={a100},code=sm_80
else ifeq ($(GPU_TARGET),H100)
NVCCFLAGS+= -gencode arch=compute_90a,code=sm_90a
else ifeq ($(GPU_TARGET),B200)
NVCCFLAGS+= -gencode arch=compute_100a,code=sm_100a
endif

unit_tests: tests.cu
\tnvcc $(NVCCFLAGS) tests.cu -o unit_tests
"""


def test_a_makefile_knob_gives_each_gpu_its_configuration(tmp_path):
    # GPU_TARGET is compared with three values: `make GPU_TARGET=A100` overrides the file's H100
    # (GNU Make 9.5), so the A100 and the B200 each have a configuration that builds for them.
    (tmp_path / "Makefile").write_text(_KNOB_MAKEFILE.format(a100="compute_80"))
    (tmp_path / "tests.cu").write_text(_GENERIC_DECODE)
    assert _lint_dir(tmp_path, "A100", "H100", "B200")[0] == []


def test_a_makefile_knob_branch_nvcc_refuses_is_reported_in_its_configuration(tmp_path):
    (tmp_path / "Makefile").write_text(_KNOB_MAKEFILE.format(a100="compute_80a"))
    (tmp_path / "tests.cu").write_text(_GENERIC_DECODE)
    found = _lint_dir(tmp_path, "A100", "H100", "B200")[0]
    assert [(p, line) for p, line, _m in found] == [("Makefile", 21)]
    assert "compute_80a is no compile target" in found[0][2] and "GPU_TARGET=A100)" in found[0][2]


def test_a_makefile_variable_compared_once_is_the_files_own(tmp_path):
    # One value compared: a switch the file sets, not a choice it offers; the H100 build is all there is.
    text = "GPU_TARGET=H100\nNVCCFLAGS=-O3\nifeq ($(GPU_TARGET),H100)\nNVCCFLAGS+= -gencode arch=compute_90a,code=sm_90a\n" \
           "endif\n\nunit_tests: tests.cu\n\tnvcc $(NVCCFLAGS) tests.cu -o unit_tests\n"
    (tmp_path / "Makefile").write_text(text)
    (tmp_path / "tests.cu").write_text(_GENERIC_DECODE)
    found = _lint_dir(tmp_path, "A100", "H100")[0]
    assert [(p, line) for p, line, _m in found] == [("Makefile", 8)] and "no code for sm_80 (A100)" in found[0][2]
