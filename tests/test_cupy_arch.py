"""AIC301 and CuPy's compile target: CuPy passes its options to NVRTC and then its own
-arch=sm_<cc> of the running GPU (version_matrix/cuda_jit.toml [cupy_compile.nvrtc], read in
CuPy 12.0.0-14.2.0). NVRTC before 12.9 refuses the second -arch; from 12.9 on it builds the
GPU's number with the option's 'a'/'f' ([nvrtc_arch.*], each range run with its libnvrtc).
Which NVRTC: --cuda, else the pinned cupy-cudaXXx's major and what the pinned release was built
for, else every range modelled."""

from __future__ import annotations

from pathlib import Path

from conftest import lint

from aicompat.matrix.target import Target
from aicompat.run.api import lint_paths

WGMMA = '''SRC = r"""
extern "C" __global__ void k(float* x) {
  asm volatile("wgmma.fence.sync.aligned;");
  x[0] = 1.f;
}
"""
'''
TCGEN05 = WGMMA.replace("wgmma.fence.sync.aligned", "tcgen05.relinquish_alloc_permit.cta_group::1.sync.aligned")
PLAIN = WGMMA.replace('  asm volatile("wgmma.fence.sync.aligned;");\n', "")
H200 = {"gpus": ["H200"], "pins": {"cupy-cuda13x": "14.2.0"}, "cuda": "13.0"}


def _found(code, **target):
    return [(d.line, d.message) for d in lint(code, select=["AIC301"], **target)]


def test_the_h200_observations_of_cupy_14_2_with_nvrtc_13_0():
    """Issue 27: what ran and what failed on an H200 (sm_90) with CuPy 14.2.0 and NVRTC 13.0."""
    kernel = "import cupy\n" + WGMMA + "k = cupy.RawKernel(SRC, 'k'{opts})\n"
    # wgmma with -arch=sm_90a ran: NVRTC 13.0 builds sm_90 with the option's 'a'.
    assert _found(kernel.replace("{opts}", ", options=('-arch=sm_90a',)"), **H200) == []
    assert _found(kernel.replace("{opts}", ", options=('--gpu-architecture=sm_90a',)"), **H200) == []
    # with -arch=sm_90 or no option ptxas failed.
    for opts in (", options=('-arch=sm_90',)", ""):
        found = _found(kernel.replace("{opts}", opts), **H200)
        assert [(line, m.split(":")[0], "when built for sm_90 (" in m, "fails on sm_90 (H200)" in m)
                for line, m in found] == [(4, "cupy.RawKernel", True, True)]
    # setmaxnreg in a RawModule with -arch=sm_90a ran.
    module = ("import cupy\n" + WGMMA.replace("wgmma.fence.sync.aligned", "setmaxnreg.inc.sync.aligned.u32 232")
              + "m = cupy.RawModule(code=SRC, options=('-arch=sm_90a',))\n")
    assert _found(module, **H200) == []
    assert [line for line, _m in _found(module.replace("sm_90a", "sm_90"), **H200)] == [4]
    # A plain kernel with an sm_100 / compute_100 option ran on the H200: NVRTC builds the last -arch, sm_90.
    plain = "import cupy\n" + PLAIN + "k = cupy.RawKernel(SRC, 'k', options=(OPT,))\n"
    for opt in ("-arch=sm_100", "--gpu-architecture=compute_100"):
        assert _found(plain.replace("OPT", repr(opt)), **H200) == []
    # tcgen05 with -arch=sm_90a failed: sm_90a has no tcgen05.
    found = _found("import cupy\n" + TCGEN05 + "k = cupy.RawKernel(SRC, 'k', options=('-arch=sm_90a',))\n", **H200)
    assert [(line, "when built for sm_90a (CuPy appends -arch=sm_XY of the GPU after the options; NVRTC 13.0-13.5 "
                   "builds that number with the 'a' of '-arch=sm_90a')" in m) for line, m in found] == [(4, True)]


# A module that builds its kernels in a helper, with options picked from a dict keyed by capability.
CAPABILITY_OPTIONS = '''\
import cupy as cp
import torch

_OPTIONS = {
    (8, 0): ("-std=c++17",),
    (9, 0): ("-std=c++17", "-arch=sm_90a"),
    (10, 0): ("-std=c++17",),
}

FENCE_SRC = r"""
extern "C" __global__ void fence(float* x) {
  asm volatile("wgmma.fence.sync.aligned;");
  x[0] = 1.f;
}
"""


def compile_kernel(src, name):
    options = _OPTIONS[torch.cuda.get_device_capability()]
    return cp.RawKernel(src, name, options=options)


def fence_kernel():
    if torch.cuda.get_device_capability() < (9, 0):
        raise RuntimeError("wgmma needs Hopper")
    return compile_kernel(FENCE_SRC, "fence")
'''
FLEET = ["A100", "H100", "B200"]


def test_options_by_capability_with_nvrtc_13():
    # Hopper gets sm_90a; the B200, past the guard, builds plain sm_100, which has no wgmma.
    found = _found(CAPABILITY_OPTIONS, gpus=FLEET, cuda="13.0")
    assert found == [(20, "cupy.RawKernel: 'wgmma.fence.sync.aligned' (wgmma, CUDA line 3) is rejected by every "
                          "compile target that runs on sm_100 (B200), whatever the call's flags (not known here): "
                          "\"Instruction 'wgmma.fence' not supported on .target 'sm_100'\". No compile target for "
                          "sm_100 supports wgmma: guard it (#if on __CUDA_ARCH_FEAT_SMxx_ALL / "
                          "__CUDA_ARCH_FAMILY_SPECIFIC__) and dispatch to a fallback kernel.")]
    # The fixed twin: the kernel only on Hopper.
    fixed = CAPABILITY_OPTIONS.replace("< (9, 0)", "!= (9, 0)")
    assert _found(fixed, gpus=FLEET, cuda="13.0") == []


def test_an_a_option_on_blackwell_builds_sm_100a():
    # The dict's Blackwell entry copies Hopper's -arch=sm_90a: NVRTC 13 builds sm_100a there (no wgmma).
    code = CAPABILITY_OPTIONS.replace('(10, 0): ("-std=c++17",)', '(10, 0): ("-std=c++17", "-arch=sm_90a")')
    code = code.replace("< (9, 0)", "not in ((9, 0), (10, 0))")
    found = _found(code, gpus=FLEET, cuda="13.0")
    assert found == [(20, "cupy.RawKernel: 'wgmma.fence.sync.aligned' (wgmma, CUDA line 3) is rejected when built "
                          "for sm_100a (CuPy appends -arch=sm_XY of the GPU after the options; NVRTC 13.0-13.5 "
                          "builds that number with the 'a' of '-arch=sm_90a'): \"Instruction 'wgmma.fence' not "
                          "supported on .target 'sm_100a'\"; fails on sm_100 (B200). No compile target for sm_100 "
                          "supports it: guard it and dispatch to a fallback kernel there.")]


def test_before_nvrtc_12_9_the_second_arch_is_refused():
    """CUDA 12.8 (or no pin: the releases named): the sm_90a option fails the compile on the H100."""
    fixed = CAPABILITY_OPTIONS.replace("< (9, 0)", "!= (9, 0)")
    refused = ("cupy.RawKernel: options '-arch=sm_90a' fail to compile with NVRTC {ranges} (CuPy appends "
               "-arch=sm_XY of the GPU after the options and NVRTC before 12.9 takes one -arch only: \"nvrtc: error: "
               "--gpu-architecture (-arch) defined more than once\"); fails on sm_90 (H100). Use CUDA 12.9 or "
               "later, or drop the -arch option (CuPy builds the GPU's plain sm_XY), or build the cubin with nvcc "
               "and load it with cupy.RawModule(path=...).")
    assert _found(fixed, gpus=FLEET, cuda="12.8") == [(20, refused.format(ranges="12.0-12.8"))]
    assert _found(fixed, gpus=FLEET) == [(20, refused.format(ranges="11.7-11.8, 12.0-12.8"))]
    # per pinned release: CuPy 14 has no CUDA 11 build, cupy-cuda13x only NVRTC 13
    assert _found(fixed, gpus=FLEET, pins={"cupy": "14.2.0"}) == [(20, refused.format(ranges="12.0-12.8"))]
    assert _found(fixed, gpus=FLEET, pins={"cupy-cuda11x": "13.6.0"}) == [(20, refused.format(ranges="11.7-11.8"))]
    assert _found(fixed, gpus=FLEET, pins={"cupy-cuda13x": "13.6.0"}) == []
    assert _found(fixed, gpus=FLEET, cuda="12.9") == []


# A RawModule read from a .cu file beside the script, its options fixed for the whole fleet.
WARP_SPECIALIZED_CU = """\
extern "C" __global__ void producer(float* x) {
  asm volatile("setmaxnreg.dec.sync.aligned.u32 40;");
  x[threadIdx.x] = 0.f;
}
"""
LOADER = '''\
from pathlib import Path

import cupy as cp

NVRTC_OPTIONS = ("--std=c++17", "-arch=sm_90a")


def load_module():
    source = Path(__file__).with_name("warp_specialized.cu").read_text()
    return cp.RawModule(code=source, options=NVRTC_OPTIONS)
'''


def _lint_tree(tmp_path: Path, loader: str, gpus, **target):
    (tmp_path / "warp_specialized.cu").write_text(WARP_SPECIALIZED_CU)
    (tmp_path / "loader.py").write_text(loader)
    res = lint_paths([tmp_path / "loader.py"], Target(gpus=gpus, **target), use_config=False, select=["AIC301"])
    return [(d.line, d.column, d.message) for d in res]


def test_rawmodule_from_a_cu_file_on_a_gpu_without_an_a_target(tmp_path):
    found = _lint_tree(tmp_path, LOADER, ["A100", "H100"], pins={"cupy-cuda13x": "14.2.0"})
    assert found == [(10, 46, "cupy.RawModule: options '-arch=sm_90a' fail to compile on sm_80 (A100) with NVRTC "
                              "13.0-13.5: CuPy appends -arch=sm_XY of the GPU and NVRTC builds that number with the "
                              "option's 'a', sm_80a, a target that does not exist: \"Command-line error: invalid or "
                              "no value specified with --nv_arch flag\". Pass that option only on the GPUs it names "
                              "a target of (options chosen by the GPU's compute capability).")]
    # The fleet it is written for: the H100 runs it (setmaxnreg needs sm_90a, which the option gets).
    assert _lint_tree(tmp_path, LOADER, ["H100"], pins={"cupy-cuda13x": "14.2.0"}) == []
    # Without the option the H100 builds plain sm_90, which has no setmaxnreg.
    found = _lint_tree(tmp_path, LOADER.replace(', "-arch=sm_90a"', ""), ["H100"], pins={"cupy-cuda13x": "14.2.0"})
    assert [(line, m.startswith("cupy.RawModule: 'setmaxnreg.dec.sync.aligned.u32' (setmaxnreg, "
                                "warp_specialized.cu line 2) is rejected when built for sm_90 (no -arch option"))
            for line, _c, m in found] == [(10, True)]


# A class that compiles each kernel once and keeps it, its options given to the constructor.
KERNEL_CACHE = '''\
import cupy as cp

TMEM_SRC = r"""
extern "C" __global__ void release(unsigned* out) {
  asm volatile("tcgen05.relinquish_alloc_permit.cta_group::1.sync.aligned;");
  out[0] = 1;
}
"""


class KernelCache:
    def __init__(self, options=("-arch=sm_100a",)):
        self.options = options
        self._kernels = {}

    def get(self, name):
        if name not in self._kernels:
            self._kernels[name] = cp.RawKernel(TMEM_SRC, name, options=self.options)
        return self._kernels[name]


cache = KernelCache()
'''


def test_kernel_cache_per_pinned_release():
    # cupy-cuda12x 13.6.0: NVRTC 12.0-12.8 refuse the option; 12.9 builds sm_90a on the H100 (no tcgen05).
    found = _found(KERNEL_CACHE, gpus=["H100", "B200"], pins={"cupy-cuda12x": "13.6.0"})
    assert [(line, m.split(" (")[0]) for line, m in found] == [
        (5, "cupy.RawKernel: 'tcgen05.relinquish_alloc_permit.cta_group::1.sync.aligned'"),
        (18, "cupy.RawKernel: options '-arch=sm_100a' fail to compile with NVRTC 12.0-12.8"),
    ]
    assert "when built for sm_90a (CuPy appends -arch=sm_XY of the GPU after the options; NVRTC 12.9 builds" \
        in found[0][1] and "fails on sm_90 (H100)" in found[0][1]
    # The fixed twin: CUDA 13 on the Blackwell it is written for builds sm_100a, which has tcgen05.
    assert _found(KERNEL_CACHE, gpus=["B200"], pins={"cupy-cuda13x": "14.2.0"}) == []


def test_an_unknown_arch_option_still_reports_what_no_target_accepts():
    """Issue 27 item 1: options=(f"--gpu-architecture={arch}",) with arch unknown: tcgen05 fails on an
    H100 whatever the option says (no compile target that runs there has it)."""
    code = ("import cupy\nimport torch\n" + TCGEN05 +
            "def build(arch):\n    return cupy.RawKernel(SRC, 'k', options=(f'--gpu-architecture={arch}',))\n"
            "major, minor = torch.cuda.get_device_capability()\nkern = build(f'sm_{major}{minor}a')\n")
    found = _found(code, gpus=["H100", "B200"])
    assert [(line, "is rejected by every compile target that runs on sm_90 (H100), whatever the call's flags" in m)
            for line, m in found] == [(5, True)]
    # On the B200 alone the option is known, sm_100a: built there from NVRTC 12.9 on.
    assert _found(code, gpus=["B200"], cuda="13.0") == []


def test_what_is_not_modelled_is_judged_whatever_the_options():
    """A CuPy release not read (11.6.0), a CUDA past the ranges run (13.6) or jitify: only what no
    target of the GPU accepts."""
    wg = "import cupy\n" + WGMMA + "k = cupy.RawKernel(SRC, 'k', options=('-arch=sm_90a',)JIT)\n"
    tc = "import cupy\n" + TCGEN05 + "k = cupy.RawKernel(SRC, 'k', options=('-arch=sm_90a',)JIT)\n"
    for target in ({"pins": {"cupy": "11.6.0"}}, {"cuda": "13.6"}, {"jit": ", jitify=True"}):
        jit = target.pop("jit", "")
        assert _found(wg.replace("JIT", jit), gpus=["H100"], **target) == []
        assert [line for line, _m in _found(tc.replace("JIT", jit), gpus=["H100"], **target)] == [4]
