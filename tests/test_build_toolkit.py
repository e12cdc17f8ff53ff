"""AIC302 and the toolkit: arch flags the configured nvcc refuses (targets CUDA 13.0 dropped, names
no toolkit has), wherever a build names them, and arch lists setup.py builds with code (loops,
helpers, environment defaults, lists with a part not known)."""
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from aicompat import Target, lint_paths
from aicompat.cuda.api import Build, parse_nvcc_flags, refusal
from aicompat.matrix import default_matrix

ROOT = Path(__file__).resolve().parent.parent


def aic302(root, gpus, cuda=None):
    diags = lint_paths([root], target=Target(gpus=list(gpus), cuda=cuda), use_config=False, select=["AIC302"])
    return sorted((Path(d.path).name, d.line, d.message) for d in diags)


def tree(tmp_path, files):
    for name, text in files.items():
        p = tmp_path / name
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(textwrap.dedent(text))
    (tmp_path / "csrc").mkdir(exist_ok=True)
    (tmp_path / "csrc" / "k.cu").write_text("__global__ void k(float *x) { x[threadIdx.x] = 0.f; }\n")
    return tmp_path


SETUP = '''\
    from setuptools import setup
    from torch.utils.cpp_extension import BuildExtension, CUDAExtension

    NVCC_FLAGS = ["-O3", "--use_fast_math"]
    for cc in [{ccs}]:
        NVCC_FLAGS += ["-gencode", f"arch=compute_{{cc}},code=sm_{{cc}}"]

    setup(
        name="fused_kernels",
        ext_modules=[
            CUDAExtension(
                "fused_kernels._C",
                ["csrc/k.cu"],
                extra_compile_args={{"cxx": ["-O3"], "nvcc": NVCC_FLAGS}},
            )
        ],
        cmdclass={{"build_ext": BuildExtension}},
    )
'''

CMAKE = '''\
    cmake_minimum_required(VERSION 3.24)
    project(fused LANGUAGES CXX CUDA)
    set(CMAKE_CUDA_ARCHITECTURES "{archs}")
    add_library(fused SHARED csrc/k.cu)
'''

MAKEFILE = '''\
    NVCC ?= nvcc
    GENCODE = {gencode}
    NVCCFLAGS = -O3 $(GENCODE)

    build/k.o: csrc/k.cu
    \t@mkdir -p build
    \t$(NVCC) $(NVCCFLAGS) -c -o $@ $<
'''

BUILD_SH = '''\
    #!/usr/bin/env bash
    set -euo pipefail
    export TORCH_CUDA_ARCH_LIST="{torch}"
    pip install --no-build-isolation -e .
'''

FLEET = ["A100", "H100", "B200"]


def _project(tmp_path, nums):
    """A project naming the targets ``nums`` in every kind of build file."""
    gencode = " ".join(f"-gencode arch=compute_{n},code=sm_{n}" for n in nums)
    return tree(tmp_path, {
        "setup.py": SETUP.format(ccs=", ".join(f'"{n}"' for n in nums)),
        "CMakeLists.txt": CMAKE.format(archs=";".join(nums)),
        "Makefile": MAKEFILE.format(gencode=gencode),
        "scripts/build.sh": BUILD_SH.format(torch=";".join(f"{n[:-1]}.{n[-1]}" for n in nums)),
    })


def test_targets_cuda_13_dropped_are_reported_in_every_build_file(tmp_path):
    root = _project(tmp_path, ["70", "80", "90", "100"])
    found = aic302(root, FLEET, cuda="13.0")
    said = "\"nvcc fatal   : Unsupported gpu architecture 'compute_70'\""
    assert found == [
        ("CMakeLists.txt", 3, f"CMAKE_CUDA_ARCHITECTURES 70;80;90;100: CUDA 13.0 cannot build sm_70 (dropped in "
                              f"CUDA 13.0): {said}; drop 70, or build with a toolkit before CUDA 13.0"),
        ("Makefile", 7, "nvcc -gencode arch=compute_70,code=sm_70 -gencode arch=compute_80,code=sm_80 -gencode "
                        "arch=compute_90,code=sm_90 -gencode arch=compute_100,code=sm_100: CUDA 13.0 cannot build "
                        f"sm_70 (dropped in CUDA 13.0): {said}; drop compute_70, or build with a toolkit before "
                        "CUDA 13.0"),
        ("build.sh", 3, f"TORCH_CUDA_ARCH_LIST='7.0;8.0;9.0;10.0': CUDA 13.0 cannot build sm_70 (dropped in CUDA "
                        f"13.0): {said}; drop 7.0, or build with a toolkit before CUDA 13.0"),
        ("setup.py", 14, f"CUDAExtension extra_compile_args: CUDA 13.0 cannot build sm_70 (dropped in CUDA 13.0): "
                         f"{said}; drop compute_70, or build with a toolkit before CUDA 13.0"),
    ]


def test_targets_cuda_12_8_still_builds_are_clean(tmp_path):
    assert aic302(_project(tmp_path, ["70", "80", "90", "100"]), FLEET, cuda="12.8") == []


def test_the_fleets_targets_are_clean_on_cuda_13(tmp_path):
    assert aic302(_project(tmp_path, ["80", "90", "100"]), FLEET, cuda="13.0") == []


def test_an_unknown_toolkit_drops_nothing(tmp_path):
    """No --cuda: which toolkit builds is not known, so a target only some toolkits refuse is not judged."""
    assert aic302(_project(tmp_path, ["70", "80", "90", "100"]), FLEET) == []


def test_project_declared_cuda_is_the_toolkit(tmp_path):
    root = _project(tmp_path, ["61", "80", "90", "100"])
    (root / "pyproject.toml").write_text('[tool.aicompat]\ngpus = ["A100", "H100", "B200"]\ncuda = "13.0"\n')
    diags = lint_paths([root], target=Target(), select=["AIC302"])
    assert {Path(d.path).name for d in diags} == {"CMakeLists.txt", "Makefile", "build.sh", "setup.py"}
    assert all("'compute_61'" in d.message and "dropped in CUDA 13.0" in d.message for d in diags)


@pytest.mark.parametrize("bad,said,use", [
    ("-gencode arch=compute_80a,code=sm_80", "Unsupported gpu architecture 'compute_80a'", "use compute_80"),
    ("-gencode arch=compute_90f,code=sm_90f", "Unsupported gpu architecture 'compute_90f'", "use compute_90"),
    ("-gencode arch=compute_80,code=sm_80a", "Unsupported gpu architecture 'sm_80a'", "use sm_80"),
    ("-arch=sm_90f", "Unsupported gpu architecture 'sm_90f'", "use sm_90"),
    ("-arch=compute_80 -code=sm_80a", "Value 'sm_80a' is not defined for option 'gpu-code'", "use sm_80"),
])
def test_names_no_toolkit_has_are_invalid_in_makefiles_and_setup_py(tmp_path, bad, said, use):
    setup = SETUP.replace('NVCC_FLAGS += ["-gencode", f"arch=compute_{{cc}},code=sm_{{cc}}"]',
                          'NVCC_FLAGS += ["-gencode", f"arch=compute_{{cc}},code=sm_{{cc}}"]\n'
                          f'    NVCC_FLAGS += {bad.split()!r}')
    root = tree(tmp_path, {"Makefile": MAKEFILE.format(gencode=f"-gencode arch=compute_90,code=sm_90 {bad}"),
                           "setup.py": setup.format(ccs='"90", "100"')})
    for cuda in (None, "13.0", "12.8"):  # no toolkit has the name: judged with or without --cuda
        found = [m for _f, _l, m in aic302(root, ["H100", "B200"], cuda)]
        invalid = [m for m in found if "is no compile target" in m]
        assert len(invalid) == 2, (cuda, found)
        assert all(f'"nvcc fatal   : {said}"' in m and m.endswith(use) for m in invalid)


def test_valid_spellings_are_clean(tmp_path):
    root = tree(tmp_path, {
        "Makefile": MAKEFILE.format(gencode="-gencode arch=compute_90a,code=sm_90a -gencode arch=compute_100f,"
                                            "code=sm_100f -gencode arch=compute_100,code=compute_100"),
        "setup.py": SETUP.format(ccs='"80", "90", "100"'),
    })
    assert aic302(root, ["H100", "B200"], "13.0") == []


def test_cmake_suffix_no_toolkit_has(tmp_path):
    root = tree(tmp_path, {"CMakeLists.txt": CMAKE.format(archs="80a-real;90")})
    assert aic302(root, ["A100", "H100"]) == [
        ("CMakeLists.txt", 3, "CMAKE_CUDA_ARCHITECTURES 80a-real;90: compute_80a is no compile target (no CUDA "
                              "toolkit up to 13.0 has it): \"nvcc fatal   : Unsupported gpu architecture "
                              "'compute_80a'\"; use 80")]
    tree(tmp_path, {"CMakeLists.txt": CMAKE.format(archs="80-real;90")})
    assert aic302(root, ["A100", "H100"]) == []


def test_family_target_before_its_toolkit(tmp_path):
    root = tree(tmp_path, {"Makefile": MAKEFILE.format(gencode="-gencode arch=compute_100f,code=sm_100f")})
    assert aic302(root, ["B200"], "12.8") == [
        ("Makefile", 7, "nvcc -gencode arch=compute_100f,code=sm_100f: CUDA 12.8 cannot build sm_100f (first "
                        "supported by CUDA 12.9): \"nvcc fatal   : Unsupported gpu architecture 'compute_100f'\"; "
                        "build with CUDA 12.9 or newer, or drop compute_100f")]
    assert aic302(root, ["B200"], "12.9") == []


def test_gencode_loop_leaving_the_fleet_without_code(tmp_path):
    root = tree(tmp_path, {"setup.py": SETUP.format(ccs='"75", "80", "86", "89"')})
    assert aic302(root, ["H100", "B200"], "13.0") == [
        ("setup.py", 14, "CUDAExtension extra_compile_args builds sm_75, sm_80, sm_86, sm_89: no code for sm_90 "
                         "(H100), sm_100 (B200), which then fails with \"no kernel image is available for execution "
                         "on the device\"; use -gencode=arch=compute_90,code=sm_90 "
                         "-gencode=arch=compute_100,code=sm_100")]
    tree(tmp_path, {"setup.py": SETUP.format(ccs='"75", "80", "86", "89", "90", "100"')})
    assert aic302(root, ["H100", "B200"], "13.0") == []


COMPREHENSION = '''\
    from setuptools import setup
    from torch.utils.cpp_extension import BuildExtension, CUDAExtension

    CUDA_ARCHS = ("80", "90")
    ARCH_FLAGS = [f"-gencode=arch=compute_{cc},code=sm_{cc}" for cc in CUDA_ARCHS]

    setup(
        name="fused_kernels",
        ext_modules=[CUDAExtension("fused_kernels._C", ["csrc/k.cu"],
                                   extra_compile_args={"cxx": ["-O3"], "nvcc": ["-O3", *ARCH_FLAGS]})],
        cmdclass={"build_ext": BuildExtension},
    )
'''


def test_list_comprehension(tmp_path):
    root = tree(tmp_path, {"setup.py": COMPREHENSION})
    found = aic302(root, ["H100", "B200"])
    assert [(f, line, m.split(":")[0]) for f, line, m in found] == [
        ("setup.py", 10, "CUDAExtension extra_compile_args builds sm_80, sm_90")]
    tree(tmp_path, {"setup.py": COMPREHENSION.replace('("80", "90")', '("80", "90", "100")')})
    assert aic302(root, ["H100", "B200"]) == []


ENV_DEFAULT = '''\
    import os

    from setuptools import setup
    from torch.utils.cpp_extension import BuildExtension, CUDAExtension

    # Build for the datacenter fleet unless the caller says otherwise.
    os.environ["TORCH_CUDA_ARCH_LIST"] = os.getenv("TORCH_CUDA_ARCH_LIST", "{default}")

    setup(
        name="fused_kernels",
        ext_modules=[CUDAExtension("fused_kernels._C", ["csrc/k.cu"], extra_compile_args={{"nvcc": ["-O3"]}})],
        cmdclass={{"build_ext": BuildExtension}},
    )
'''


def test_arch_list_default_when_the_variable_is_unset(tmp_path):
    root = tree(tmp_path, {"setup.py": ENV_DEFAULT.format(default="9.0")})
    assert aic302(root, ["H100", "B200"]) == [
        ("setup.py", 7, "TORCH_CUDA_ARCH_LIST='9.0' (when TORCH_CUDA_ARCH_LIST is unset) builds sm_90: no code for "
                        "sm_100 (B200), which then fails with \"no kernel image is available for execution on the "
                        "device\"; use TORCH_CUDA_ARCH_LIST=\"9.0;10.0+PTX\"")]
    tree(tmp_path, {"setup.py": ENV_DEFAULT.format(default="9.0;10.0")})
    assert aic302(root, ["H100", "B200"]) == []


HELPER = '''\
    import os

    from setuptools import setup
    from torch.utils.cpp_extension import BuildExtension, CUDAExtension


    def nvcc_flags():
        archs = os.environ.get("FUSED_CUDA_ARCHS", "{default}").split(";")
        flags = ["-O3", "--use_fast_math", "-lineinfo"]
        for arch in archs:
            flags.extend(["-gencode", f"arch=compute_{{arch}},code=sm_{{arch}}"])
        return flags


    setup(
        name="fused_kernels",
        ext_modules=[CUDAExtension("fused_kernels._C", ["csrc/k.cu"],
                                   extra_compile_args={{"cxx": ["-O3"], "nvcc": nvcc_flags()}})],
        cmdclass={{"build_ext": BuildExtension}},
    )
'''


def test_flags_of_a_helper_reading_an_environment_default(tmp_path):
    root = tree(tmp_path, {"setup.py": HELPER.format(default="70;80;90")})
    found = aic302(root, ["A100", "H100", "B200"], "13.0")
    assert [(f, line) for f, line, _m in found] == [("setup.py", 18)] * 2
    assert all(m.startswith("CUDAExtension extra_compile_args (when FUSED_CUDA_ARCHS is unset)") for *_, m in found)
    assert "builds sm_70, sm_80, sm_90: no code for sm_100 (B200)" in found[0][2] + found[1][2]
    assert "CUDA 13.0 cannot build sm_70 (dropped in CUDA 13.0)" in found[0][2] + found[1][2]
    tree(tmp_path, {"setup.py": HELPER.format(default="80;90;100")})
    assert aic302(root, ["A100", "H100", "B200"], "13.0") == []


EMPTY = '''\
    import os

    from setuptools import setup
    from torch.utils.cpp_extension import BuildExtension, CUDAExtension

    os.environ["TORCH_CUDA_ARCH_LIST"] = ""
    NVCC_FLAGS = ["-O3"{gencode}]

    setup(
        name="fused_kernels",
        ext_modules=[CUDAExtension("fused_kernels._C", ["csrc/k.cu"],
                                   extra_compile_args={{"cxx": ["-O3"], "nvcc": NVCC_FLAGS}})],
        cmdclass={{"build_ext": BuildExtension}},
    )
'''


def test_empty_arch_list_beside_explicit_gencode_flags(tmp_path):
    """torch 2.13.0 cpp_extension.py _get_cuda_arch_flags: a flag with 'arch' in the nvcc list makes
    it add none (L2661), and "" reads as unset (L2696): nothing here "builds nothing"."""
    gencode = ', "-gencode=arch=compute_90a,code=sm_90a", "-gencode=arch=compute_100a,code=sm_100a"'
    assert aic302(tree(tmp_path, {"setup.py": EMPTY.format(gencode=gencode)}), ["H100", "B200"]) == []
    # The explicit flags are still judged.
    tree(tmp_path, {"setup.py": EMPTY.format(gencode=', "-gencode=arch=compute_90a,code=sm_90a"')})
    assert [m.split(":")[0] for _f, _l, m in aic302(tmp_path, ["H100", "B200"])] == [
        "CUDAExtension extra_compile_args builds sm_90a"]


def test_empty_arch_list_alone_is_the_build_machines_gpus(tmp_path):
    """"" alone is unset to torch (L2696): it builds for the GPUs the build machine sees, which no
    file says; not judged (and never "builds nothing")."""
    root = tree(tmp_path, {"setup.py": EMPTY.format(gencode=""),
                           "scripts/build.sh": BUILD_SH.format(torch="")})
    assert aic302(root, ["H100", "B200"]) == []


PARTIAL = '''\
    import os

    from setuptools import setup
    from torch.utils.cpp_extension import BuildExtension, CUDAExtension

    NVCC_FLAGS = [
        "-O3",
        "-gencode", "arch={first},code=sm_80",
        "-gencode", "arch=compute_90,code=sm_90",
        os.environ["FUSED_EXTRA_NVCC_FLAG"],
    ]

    setup(
        name="fused_kernels",
        ext_modules=[CUDAExtension("fused_kernels._C", ["csrc/k.cu"],
                                   extra_compile_args={{"cxx": ["-O3"], "nvcc": NVCC_FLAGS}})],
        cmdclass={{"build_ext": BuildExtension}},
    )
'''


def test_partly_unknown_list_with_an_invalid_known_flag(tmp_path):
    root = tree(tmp_path, {"setup.py": PARTIAL.format(first="compute_80a")})
    assert aic302(root, ["A100", "H100", "B200"]) == [
        ("setup.py", 16, "CUDAExtension extra_compile_args: compute_80a is no compile target (no CUDA toolkit up "
                         "to 13.0 has it): \"nvcc fatal   : Unsupported gpu architecture 'compute_80a'\"; use "
                         "compute_80")]


def test_partly_unknown_list_of_valid_flags_is_clean(tmp_path):
    """The unknown flag may add the B200's code: the GPUs a partial list leaves without code are not judged."""
    assert aic302(tree(tmp_path, {"setup.py": PARTIAL.format(first="compute_80")}), ["A100", "H100", "B200"]) == []


def test_shell_command_with_a_word_not_known(tmp_path):
    script = ("#!/bin/sh\nnvcc -O3 $EXTRA_FLAGS -gencode arch=compute_90,code=sm_90 "
              "-gencode arch=compute_{n},code=sm_{n} -c csrc/k.cu -o k.o\n")
    root = tree(tmp_path, {"build.sh": script.format(n="61")})
    found = aic302(root, ["H100"], "13.0")
    assert [(f, line) for f, line, _m in found] == [("build.sh", 2)]
    assert "CUDA 13.0 cannot build sm_61 (dropped in CUDA 13.0)" in found[0][2]
    tree(tmp_path, {"build.sh": script.format(n="100")})
    assert aic302(root, ["H100"], "13.0") == []


def test_nvcc_checks_code_then_arch_then_each_gencode():
    """The first target nvcc refuses is the one it names (nvcc 13.0, build.toml [nvcc_refusal."13.0"])."""
    m = default_matrix()
    cases = [
        (["-arch=sm_70", "-gencode", "arch=compute_61,code=sm_61"], "Unsupported gpu architecture 'sm_70'"),
        (["-gencode", "arch=compute_90,code=sm_61", "-gencode", "arch=compute_52,code=sm_52"],
         "Unsupported gpu architecture 'sm_61'"),
        (["-arch=compute_70", "-code=sm_70"], "Value 'sm_70' is not defined for option 'gpu-code'"),
        (["-arch=compute_70", "-code=sm_90"], "Unsupported gpu architecture 'compute_70'"),
        (["-arch=sm_70", "-arch=sm_90"], None),  # the last -arch wins
    ]
    for flags, said in cases:
        r = refusal(parse_nvcc_flags(flags, m, "13.0"), "13.0", m)
        assert (r.error if r else None) == (f"nvcc fatal   : {said}" if said else None), flags
    assert refusal(Build(), "13.0", m) is None


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="needs the local nvcc")
def test_target_tables_match_the_local_nvcc():
    r = subprocess.run([sys.executable, str(ROOT / "tools" / "check_nvcc_targets.py")], capture_output=True,
                       text=True, timeout=600)
    assert r.returncode == 0, r.stdout + r.stderr


def test_arch_list_beside_explicit_flags_is_not_read(tmp_path):
    """torch 2.13.0 _get_cuda_arch_flags returns [] when the extension's nvcc list has a flag with
    'arch' (L2661): TORCH_CUDA_ARCH_LIST="9.0" set by this setup.py builds nothing of its own."""
    setup = EMPTY.replace('os.environ["TORCH_CUDA_ARCH_LIST"] = ""', 'os.environ["TORCH_CUDA_ARCH_LIST"] = "9.0"')
    gencode = ', "-gencode=arch=compute_90a,code=sm_90a", "-gencode=arch=compute_100a,code=sm_100a"'
    assert aic302(tree(tmp_path, {"setup.py": setup.format(gencode=gencode)}), ["H100", "B200"]) == []
    # Without arch flags of its own, the extension is built for the list: no code for the B200.
    tree(tmp_path, {"setup.py": setup.format(gencode=', "--use_fast_math"')})
    assert [(f, line, m.split(":")[0]) for f, line, m in aic302(tmp_path, ["H100", "B200"])] == [
        ("setup.py", 6, "TORCH_CUDA_ARCH_LIST='9.0' builds sm_90")]


NVCC_FROM_PY = '''\
    import os
    import subprocess


    def build(src, out):
        extra = os.environ["KERNEL_NVCC_FLAGS"]
        cmd = ["nvcc", "-O3", extra, "-gencode", "arch=compute_{n},code=sm_{n}", "-c", src, "-o", out]
        subprocess.check_call(cmd)
'''


def test_nvcc_from_python_with_a_word_not_known(tmp_path):
    root = tree(tmp_path, {"build_kernels.py": NVCC_FROM_PY.format(n="61")})
    found = aic302(root, ["H100", "B200"], "13.0")
    assert [(f, line) for f, line, _m in found] == [("build_kernels.py", 8)]
    assert "CUDA 13.0 cannot build sm_61 (dropped in CUDA 13.0)" in found[0][2]
    tree(tmp_path, {"build_kernels.py": NVCC_FROM_PY.format(n="90")})  # extra may add the B200's code
    assert aic302(root, ["H100", "B200"], "13.0") == []
