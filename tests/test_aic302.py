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
