"""A header is judged in the translation units that include it (issue 28 item 2), also when
the build's include dirs are computed at build time: `#include <fmha/barrier.cuh>` is placed by
the one file of the tree whose path ends with it. Failing case and clean twin."""
import textwrap
from pathlib import Path

from aicompat import Target, lint_paths

SETUP = """\
    import os
    from pathlib import Path
    from setuptools import setup
    from torch.utils.cpp_extension import BuildExtension, CUDAExtension

    this_dir = Path(__file__).parent
    cc_flag = [{gencode}]


    def extra_includes():
        return [p for p in os.environ.get("EXTRA_INC", "").split(":") if p]


    def nvcc_flags():
        return ["-O3", "-std=c++17", "--use_fast_math"] + cc_flag


    setup(
        name="fmha_ext",
        ext_modules=[
            CUDAExtension(
                name="fmha_ext._C",
                sources=["csrc/ops/fmha_api.cpp", "csrc/ops/fmha_fwd.cu"],
                include_dirs=[os.environ.get("FMHA_INCLUDE", str(this_dir / "csrc" / "include")), *extra_includes()],
                extra_compile_args={{"cxx": ["-O3"], "nvcc": nvcc_flags()}},
            )
        ],
        cmdclass={{"build_ext": BuildExtension}},
    )
"""

BARRIER = """\
    #pragma once
    #include <cstdint>
    namespace fmha {
    __device__ __forceinline__ void cluster_arrive() {
      asm volatile("barrier.cluster.arrive.release.aligned;\\n" ::: "memory");
    }
    __device__ __forceinline__ uint32_t cluster_id_y() {
      uint32_t r;
      asm volatile("mov.u32 %0, %%clusterid.y;\\n" : "=r"(r));
      return r;
    }
    }  // namespace fmha
"""

KERNEL = """\
    #include <fmha/barrier.cuh>

    __global__ void fmha_fwd_kernel(float* out) {
      fmha::cluster_arrive();
      out[threadIdx.x] = (float)fmha::cluster_id_y();
    }
"""


def project(root: Path, gencode: str) -> None:
    files = {"setup.py": SETUP.format(gencode=gencode), "csrc/include/fmha/barrier.cuh": BARRIER,
             "csrc/ops/fmha_fwd.cu": KERNEL, "csrc/ops/fmha_api.cpp": "int fmha_api() { return 0; }\n"}
    for name, text in files.items():
        p = root / name
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(textwrap.dedent(text))


def aic301(root: Path) -> list:
    diags = lint_paths([root], target=Target(gpus=["A100", "H100"]), use_config=False, select=["AIC301"])
    return [(Path(d.path).relative_to(root).as_posix(), d.line, d.message) for d in diags]


def test_header_of_an_sm90a_sm100a_extension_is_not_judged_for_the_a100(tmp_path):
    project(tmp_path, '"-gencode", "arch=compute_90a,code=sm_90a", "-gencode", "arch=compute_100a,code=sm_100a"')
    assert aic301(tmp_path) == []


def test_header_of_an_extension_that_also_builds_sm80_fails_there(tmp_path):
    project(tmp_path, '"-gencode", "arch=compute_80,code=sm_80", "-gencode", "arch=compute_90a,code=sm_90a"')
    found = aic301(tmp_path)
    assert [(p, line) for p, line, _m in found] == [("csrc/include/fmha/barrier.cuh", 5),
                                                    ("csrc/include/fmha/barrier.cuh", 9)]
    assert all("included by csrc/ops/fmha_fwd.cu" in m and "sm_80 (A100)" in m for _p, _l, m in found)
