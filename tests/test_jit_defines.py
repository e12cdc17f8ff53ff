"""-D/-U flags of torch's JIT (cpp_extension.load/load_inline extra_cuda_cflags) and of CuPy's
options reach the preprocessor that judges the source's #if guards, as setup.py/CMake -D do
(issue 14). torch 2.13.0 cpp_extension.py: nvcc gets common_cflags (-DTORCH_EXTENSION_NAME,
-DTORCH_API_INCLUDE_EXTENSION_H) + COMMON_NVCC_FLAGS + extra_cuda_cflags; extra_cflags go to the
host compiler only (build.toml [torch_jit_defines]). nvcc 13.0 here: the quant kernel below builds
for sm_80 with -DQUANT_NO_FP8_CVT and fails in ptxas without it ("Feature 'cvt with
.e4m3x2/.e5m2x2' requires .target sm_89 or higher"). Each failing case has its clean twin."""
import textwrap
from pathlib import Path

from aicompat import Target, lint_paths

# A vLLM-style fp8 quantizer: hardware e4m3 packing, with a software path behind a build switch.
QUANT_CU = r"""
#include <cuda_fp16.h>

__device__ __forceinline__ unsigned short pack_e4m3x2(float lo, float hi) {
  unsigned short out;
#GUARD
  asm("cvt.rn.satfinite.e4m3x2.f32 %0, %2, %1;" : "=h"(out) : "f"(lo), "f"(hi));
#else
  out = 0;  // software path
#endif
  return out;
}

__global__ void quant_kernel(const float* x, unsigned short* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (2 * i + 1 < n) y[i] = pack_e4m3x2(x[2 * i], x[2 * i + 1]);
}
"""

LOADER = '''\
import torch
from torch.utils.cpp_extension import load_inline

_CUDA_SRC = r"""QUANT_CU
void quant(torch::Tensor x, torch::Tensor y) {
  int n = x.numel();
  quant_kernel<<<(n / 2 + 255) / 256, 256>>>(x.data_ptr<float>(), (unsigned short*)y.data_ptr(), n);
}
"""

_COMMON_FLAGS = ["-O3", "--use_fast_math", "-std=c++17"]


def _nvcc_flags():
    flags = list(_COMMON_FLAGS)
    EXTRA
    return flags


_ext = load_inline(
    name="quant_ext",
    cpp_sources="void quant(torch::Tensor x, torch::Tensor y);",
    cuda_sources=_CUDA_SRC,
    functions=["quant"],
    extra_cuda_cflags=_nvcc_flags(),HOST
)
'''


def loader(guard: str = "#ifndef QUANT_NO_FP8_CVT", extra: str = "", host: str = "") -> str:
    return (LOADER.replace("QUANT_CU", QUANT_CU.replace("#GUARD", guard))
            .replace("EXTRA", extra or "pass").replace("HOST", host))


def run(tmp_path: Path, text: str, gpus=("A100", "H100"), name="quant_ext.py"):
    p = tmp_path / name
    p.write_text(textwrap.dedent(text))
    diags = lint_paths([p], target=Target(gpus=list(gpus)), use_config=False, select=["AIC301"])
    return [(d.line, d.column, d.targets, d.message) for d in diags]


CVT_ON_A100 = ("load_inline: 'cvt.rn.satfinite.e4m3x2.f32' (cvt e4m3x2, CUDA line 7) is rejected when built for "
               "sm_80 (no arch flags: built for the GPU it runs on): \"Feature 'cvt with .e4m3x2/.e5m2x2' requires "
               ".target sm_89 or higher\"; fails on sm_80 (A100).")


def test_opt_out_define_built_in_a_helper_turns_the_instruction_off(tmp_path):
    assert run(tmp_path, loader(extra='flags.append("-DQUANT_NO_FP8_CVT")  # A100s in the fleet')) == []


def test_without_the_opt_out_define_the_instruction_fails_on_a100(tmp_path):
    found = run(tmp_path, loader())
    assert [(line, col, t) for line, col, t, _m in found] == [(10, 8, ["A100"])]
    assert found[0][3].startswith(CVT_ON_A100)


def test_define_in_extra_cflags_does_not_reach_nvcc(tmp_path):
    # torch hands extra_cflags to the host compiler only: the device pass still has the cvt.
    found = run(tmp_path, loader(host='\n    extra_cflags=["-DQUANT_NO_FP8_CVT"],'))
    assert [(line, t) for line, _c, t, _m in found] == [(10, ["A100"])]


def test_undefined_again_with_u(tmp_path):
    extra = 'flags += ["-DQUANT_NO_FP8_CVT", "-UQUANT_NO_FP8_CVT"]'
    assert [(line, t) for line, _c, t, _m in run(tmp_path, loader(extra=extra))] == [(10, ["A100"])]


def test_opt_in_define_not_passed_leaves_the_instruction_out(tmp_path):
    # Every flag is known: a macro neither torch, its headers nor the flags define is undefined.
    assert run(tmp_path, loader(guard="#if defined(QUANT_HW_FP8_CVT)")) == []


def test_opt_in_define_passed_puts_the_instruction_in(tmp_path):
    found = run(tmp_path, loader(guard="#if defined(QUANT_HW_FP8_CVT)", extra='flags.append("-DQUANT_HW_FP8_CVT")'))
    assert [(line, t) for line, _c, t, _m in found] == [(10, ["A100"])]


def test_opt_in_define_with_a_define_not_known_stays_possible(tmp_path):
    # A -D whose name is not known here may define it: both branches stay possible (and so the cvt).
    extra = 'flags.append(f"-DQUANT_{os.environ[\'QUANT_MODE\']}")'
    text = "import os\n" + loader(guard="#if defined(QUANT_HW_FP8_CVT)", extra=extra)
    assert [(line, t) for line, _c, t, _m in run(tmp_path, text)] == [(11, ["A100"])]


def test_define_value_compared_in_the_guard(tmp_path):
    guard = "#if QUANT_MIN_ARCH >= 890"
    assert run(tmp_path, loader(guard=guard, extra='flags.append("-DQUANT_MIN_ARCH=800")')) == []
    found = run(tmp_path, loader(guard=guard, extra='flags.append("-DQUANT_MIN_ARCH=900")'))
    assert [(line, t) for line, _c, t, _m in found] == [(10, ["A100"])]


def test_torch_defines_its_extension_name(tmp_path):
    # -DTORCH_EXTENSION_NAME=quant_ext comes from torch itself.
    assert run(tmp_path, loader(guard="#ifndef TORCH_EXTENSION_NAME")) == []
    found = run(tmp_path, loader(guard="#ifdef TORCH_EXTENSION_NAME"))
    assert [(line, t) for line, _c, t, _m in found] == [(10, ["A100"])]


def test_macro_from_torch_headers_stays_possible(tmp_path):
    # load_inline prepends #include <torch/types.h>: a C10_ name may come from it.
    found = run(tmp_path, loader(guard="#ifdef C10_QUANT_HW_CVT"))
    assert [(line, t) for line, _c, t, _m in found] == [(10, ["A100"])]


LOAD_FILES = '''\
from pathlib import Path

from torch.utils.cpp_extension import load

_HERE = Path(__file__).parent
NVCC_FLAGS = ["-O3", "-std=c++17"<DEFINE>]

quant_ext = load(
    name="quant_ext",
    sources=[str(_HERE / "csrc" / "quant.cu")],
    extra_cuda_cflags=NVCC_FLAGS,
)
'''


def test_load_of_a_file_reads_the_flags_constant(tmp_path):
    (tmp_path / "csrc").mkdir()
    (tmp_path / "csrc" / "quant.cu").write_text(QUANT_CU.replace("#GUARD", "#ifndef QUANT_NO_FP8_CVT"))
    assert run(tmp_path, LOAD_FILES.replace("<DEFINE>", ', "-DQUANT_NO_FP8_CVT"')) == []
    found = run(tmp_path, LOAD_FILES.replace("<DEFINE>", ""))
    assert [(line, t) for line, _c, t, _m in found] == [(8, ["A100"])]
    assert "quant.cu line 7" in found[0][3]


def _lint_tree(tmp_path: Path, gpus=("A100", "H100")):
    diags = lint_paths([tmp_path], target=Target(gpus=list(gpus)), use_config=False, select=["AIC301"])
    return sorted((Path(d.path).relative_to(tmp_path).as_posix(), d.line, d.targets, d.message) for d in diags)


def test_the_loaded_cu_file_is_judged_with_the_loaders_flags(tmp_path):
    # The .cu file linted on its own: its build is the load() call (cuda/build/torch_jit.py).
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'quant'\n")
    (tmp_path / "csrc").mkdir()
    (tmp_path / "csrc" / "quant.cu").write_text(QUANT_CU.replace("#GUARD", "#ifndef QUANT_NO_FP8_CVT"))
    (tmp_path / "quant_ext.py").write_text(LOAD_FILES.replace("<DEFINE>", ', "-DQUANT_NO_FP8_CVT"'))
    assert _lint_tree(tmp_path) == []
    (tmp_path / "quant_ext.py").write_text(LOAD_FILES.replace("<DEFINE>", ""))
    found = _lint_tree(tmp_path)
    assert [(p, line, t) for p, line, t, _m in found] == [("csrc/quant.cu", 7, ["A100"]), ("quant_ext.py", 8, ["A100"])]
    assert found[0][3].startswith("'cvt.rn.satfinite.e4m3x2.f32' (cvt e4m3x2) is rejected by sm_80 (quant_ext.py line 8 "
                                  "(torch.utils.cpp_extension.load) has no arch flags: built for the GPU it runs on)")


def test_a_cu_file_no_loader_names_fails_on_an_a100_only_fleet_whatever_its_build(tmp_path):
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'quant'\n")
    (tmp_path / "csrc").mkdir()
    (tmp_path / "csrc" / "quant.cu").write_text(QUANT_CU.replace("#GUARD", "#ifndef QUANT_NO_FP8_CVT"))
    # No loader names it: its build is not known and may target the H100 alone (the sm_89+ cvt is fine there)...
    assert _lint_tree(tmp_path) == []
    # ...but no target of an A100 accepts it.
    found = _lint_tree(tmp_path, ["A100"])
    assert [(p, line, t) for p, line, t, _m in found] == [("csrc/quant.cu", 7, ["A100"])]
    assert "no build aicompat can see for this file" in found[0][3]


CUPY = '''\
import cupy as cp

_SRC = r"""QUANT_CU"""

_OPTIONS = ("--std=c++17",<DEFINE>)
_quant = cp.RawKernel(_SRC, "quant_kernel", options=_OPTIONS)
'''


def test_cupy_options_define_turns_the_instruction_off(tmp_path):
    text = CUPY.replace("QUANT_CU", QUANT_CU.replace("#GUARD", "#ifndef QUANT_NO_FP8_CVT"))
    assert run(tmp_path, text.replace("<DEFINE>", ' "-DQUANT_NO_FP8_CVT"')) == []
    found = run(tmp_path, text.replace("<DEFINE>", ""))
    assert [(line, col, t) for line, col, t, _m in found] == [(9, 8, ["A100"])]
