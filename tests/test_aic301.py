"""AIC301 against the nvcc-checked corpus: every kernel, as a .cu file and embedded
in generated Python wrappers, is judged for every target in the manifest, and the
verdicts must equal what nvcc did (fixtures/kernels/manifest.toml)."""
import json
import textwrap

import pytest
from conftest import ROOT, lint, run_cli

from aicompat.base.toml_compat import tomllib
from aicompat.cuda.cpp.scan import CudaSource, load_features

KERNELS = ROOT / "fixtures" / "kernels"
MANIFEST = tomllib.loads((KERNELS / "manifest.toml").read_text())
TARGETS = MANIFEST["targets"]


def expected(entry, target):
    for status in ("ok", "fail", "empty"):
        if target in entry[status]:
            return status
    raise AssertionError(f"{entry['file']}: {target} missing from the manifest")


def _report(name, mismatches, total):
    fails_expected = sum(1 for m in mismatches if m[2] == "fail")
    print(f"\n{name}: {total - len(mismatches)}/{total} verdicts agree with nvcc")
    return fails_expected


def test_cu_files_agree_with_nvcc(matrix):
    features = load_features(matrix)
    tp = fp = fn = 0
    mismatches = []
    for key, entry in MANIFEST["kernel"].items():
        src = CudaSource((KERNELS / entry["file"]).read_text(), features)
        for t in TARGETS:
            want, got = expected(entry, t), src.verdict(t).status
            tp += want == "fail" and got == "fail"
            fp += want != "fail" and got == "fail"
            fn += want == "fail" and got != "fail"
            if want != got:
                mismatches.append((key, t, want, got))
    total = len(MANIFEST["kernel"]) * len(TARGETS)
    precision = tp / (tp + fp) if tp + fp else 1.0
    recall = tp / (tp + fn) if tp + fn else 1.0
    print(f"\n.cu files: {total - len(mismatches)}/{total} verdicts agree; failures: precision {precision:.3f}, "
          f"recall {recall:.3f} ({tp} true, {fp} false positives, {fn} missed)")
    assert mismatches == []


def _wrappers(text: str, target: str):
    lit = repr(text)
    num = target[3:]
    return {
        "load_inline": (f"from torch.utils.cpp_extension import load_inline\nSRC = {lit}\n"
                        f"m = load_inline('k', '', cuda_sources=[SRC],\n"
                        f"                extra_cuda_cflags=['-gencode=arch=compute_{num},code={target}'])\n"),
        "cupy": (f"import cupy\nmod = cupy.RawModule(code={lit}, options=('--gpu-architecture={target}',))\n"),
        "pycuda": (f"from pycuda.compiler import SourceModule\nmod = SourceModule({lit}, arch={target!r})\n"),
    }


def test_python_wrappers_agree_with_nvcc(matrix):
    """The same kernels embedded in load_inline / CuPy / PyCUDA calls built for each target."""
    mismatches, total = [], 0
    for key, entry in MANIFEST["kernel"].items():
        text = (KERNELS / entry["file"]).read_text()
        for t in TARGETS:
            gpu = matrix.targets[t]["runs_on"][0]  # a GPU that runs this target's cubin
            for wrapper, code in _wrappers(text, t).items():
                # CuPy with NVRTC 13.0 builds the GPU's own number with the option's 'a'/'f'
                # (cuda_jit.toml [nvrtc_arch.cuda13]): the option's own target on its first GPU.
                built = gpu + (t[-1] if t[-1] in "af" else "") if wrapper == "cupy" else t
                if built not in TARGETS:
                    continue
                want = expected(entry, built)
                total += 1
                diags = [d for d in lint(code, gpus=[gpu], cuda="13.0" if wrapper == "cupy" else None,
                                         select=["AIC301"])]
                severities = {d.severity for d in diags}
                got = "fail" if "error" in severities else "empty" if "warning" in severities else "ok"
                if got != want:
                    mismatches.append((key, t, wrapper, want, got, [d.message for d in diags][:1]))
    print(f"\nwrappers: {total - len(mismatches)}/{total} verdicts agree with nvcc")
    assert mismatches == []


def test_cu_file_on_fleet_and_line_numbers(tmp_path):
    (tmp_path / "k.cu").write_text(textwrap.dedent("""\
        // a Blackwell-only kernel
        __global__ void k(unsigned* out) {
          asm volatile("tcgen05.relinquish_alloc_permit.cta_group::1.sync.aligned;");
          out[0] = 1;
        }
    """))
    # No build is visible: only what no target of any fleet GPU accepts is reported (tcgen05 on
    # A100+H100; on H100+B200 the build may target sm_100a alone, so nothing is).
    r = run_cli("lint", "--no-config", "--gpu", "A100", "--gpu", "H100", "--format", "json", str(tmp_path),
                cwd=tmp_path)
    doc = json.loads(r.stdout)
    assert [(d["path"], d["line"], d["code"], d["targets"]) for d in doc["diagnostics"]] == [
        ("k.cu", 3, "AIC301", ["A100", "H100"])]
    assert "tcgen05.relinquish_alloc_permit" in doc["diagnostics"][0]["message"]


def test_string_resolution_forms(tmp_path):
    (tmp_path / "kern.cu").write_text('__global__ void k() { asm volatile("wgmma.fence.sync.aligned;"); }\n')
    (tmp_path / "mod.py").write_text(textwrap.dedent('''\
        import os
        from pathlib import Path
        import torch.utils.cpp_extension as ext
        HEAD = "#include <cuda_fp16.h>\\n"
        BODY = f"""
        __global__ void k() {{ asm volatile("{'wgmma'}.fence.sync.aligned;"); }}
        """
        a = ext.load_inline("a", "", cuda_sources=HEAD + BODY)
        b = ext.load_inline("b", "", cuda_sources=open(os.path.join(os.path.dirname(__file__), "kern.cu")).read())
        c = ext.load_inline("c", "", cuda_sources=(Path(__file__).parent / "kern.cu").read_text())
        d = ext.load("d", sources=["kern.cu"])
        e = ext.load_inline("e", "", cuda_sources="__global__ void k() {{ {} }}".format("x"))
    '''))
    r = run_cli("lint", "--no-config", "--gpu", "H100", "--format", "json", str(tmp_path / "mod.py"), cwd=tmp_path)
    lines = sorted(d["line"] for d in json.loads(r.stdout)["diagnostics"] if d["code"] == "AIC301")
    assert lines == [8, 9, 10, 11]


def test_arch_flags_and_env_choose_the_target():
    src = 'SRC = """\n__global__ void k() { asm volatile("wgmma.fence.sync.aligned;"); }\n"""\n'
    base = "import os\nfrom torch.utils.cpp_extension import load_inline\n" + src
    ok_flags = base + "load_inline('k', '', cuda_sources=SRC, extra_cuda_cflags=['-gencode=arch=compute_90a,code=sm_90a'])\n"
    assert lint(ok_flags, gpus=["H100"], select=["AIC301"]) == []
    env = "import os\nos.environ['TORCH_CUDA_ARCH_LIST'] = '9.0a'\n" + base.split("\n", 1)[1] + \
        "load_inline('k', '', cuda_sources=SRC)\n"
    assert lint(env, gpus=["H100"], select=["AIC301"]) == []
    # Any flag mentioning "arch" makes torch ignore TORCH_CUDA_ARCH_LIST: built for sm_90 only.
    ignored = env.replace("load_inline('k', '', cuda_sources=SRC)",
                          "load_inline('k', '', cuda_sources=SRC, extra_cuda_cflags=['-gencode=arch=compute_90,code=sm_90'])")
    d = lint(ignored, gpus=["H100"], select=["AIC301"])
    assert [x.code for x in d] == ["AIC301"] and "sm_90" in d[0].message


@pytest.mark.parametrize("name", ["guard_wrong_wgmma_arch_ge_900", "tcgen05_alloc_dealloc"])
def test_explain_lists_features(name):
    r = run_cli("explain", "AIC301")
    assert "wgmma: sm_90a" in r.stdout and "tcgen05:" in r.stdout


_WGMMA_CU = ("// warpgroup fence around a copy\n"
             "__global__ void tile(float* c) {\n"
             '  asm volatile("wgmma.fence.sync.aligned;\\n" ::: "memory");\n'
             "}\n")


def _suffix_module(flags):
    return textwrap.dedent(f'''\
        """Hopper tile kernel; the CUDA source sits next to this module."""
        from pathlib import Path

        from torch.utils.cpp_extension import load

        _ext = load(
            name="tile",
            sources=[str(Path(__file__).with_suffix(".cu"))],
            extra_cuda_cflags={flags!r},
        )
    ''')


def test_source_next_to_the_module_by_with_suffix(tmp_path):
    (tmp_path / "tile.cu").write_text(_WGMMA_CU)
    (tmp_path / "tile.py").write_text(_suffix_module(["-O3", "--use_fast_math"]))
    r = run_cli("lint", "--no-config", "--gpu", "H100", "--format", "json", "tile.py", cwd=tmp_path)
    got = [(d["line"], d["column"], d["message"]) for d in json.loads(r.stdout)["diagnostics"] if d["code"] == "AIC301"]
    # On the load() call; the message names the .cu line.
    assert got == [(6, 8, "load: 'wgmma.fence.sync.aligned' (wgmma, tile.cu line 3) is rejected when built for sm_90 "
                          "(no arch flags: built for the GPU it runs on): \"Instruction 'wgmma.fence' not supported "
                          "on .target 'sm_90'\"; fails on sm_90 (H100). Build with -gencode "
                          "arch=compute_90a,code=sm_90a.")]


def test_source_next_to_the_module_built_for_sm_90a_is_clean(tmp_path):
    (tmp_path / "tile.cu").write_text(_WGMMA_CU)
    (tmp_path / "tile.py").write_text(_suffix_module(["-O3", "-gencode=arch=compute_90a,code=sm_90a"]))
    r = run_cli("lint", "--no-config", "--gpu", "H100", "--format", "json", "tile.py", cwd=tmp_path)
    assert [d["code"] for d in json.loads(r.stdout)["diagnostics"]] == []


_CACHE_CLASS = '''\
from torch.utils.cpp_extension import load_inline

KERNEL = r"""
__global__ void tile(float* c) {
    if (threadIdx.x == 0) { asm volatile("wgmma.fence.sync.aligned;"); }
}
"""


class KernelCache:
    def __init__(self, cflags):
        self.cflags = ["-O3", *cflags]
        self._mod = None

    def get(self):
        if self._mod is None:
            self._mod = load_inline("tile", "", cuda_sources=KERNEL, extra_cuda_cflags=self.cflags)
        return self._mod


CACHE = KernelCache({arch})
'''


def test_flags_kept_on_self_choose_the_target_and_the_column_is_the_asm():
    code = _CACHE_CLASS.replace("{arch}", '["-gencode=arch=compute_90,code=sm_90"]')
    got = [(d.line, d.column, d.message) for d in lint(code, gpus=["H100"], select=["AIC301"])]
    assert got == [(5, 43, "load_inline: 'wgmma.fence.sync.aligned' (wgmma, CUDA line 3) is rejected when built for "
                           "sm_90 (its -gencode/-arch flags): \"Instruction 'wgmma.fence' not supported on .target "
                           "'sm_90'\"; fails on sm_90 (H100). Build with -gencode arch=compute_90a,code=sm_90a.")]


def test_flags_kept_on_self_for_sm_90a_are_clean():
    code = _CACHE_CLASS.replace("{arch}", '["-gencode=arch=compute_90a,code=sm_90a"]')
    assert lint(code, gpus=["H100"], select=["AIC301"]) == []


def test_flags_the_model_cannot_read_leave_the_target_unknown():
    # The arch flag comes from the environment: what is built is not known, so nothing is said.
    code = _CACHE_CLASS.replace("{arch}", '[f"-arch=sm_{os.environ[\'KERNEL_ARCH\']}"]')
    assert lint("import os\n" + code, gpus=["H100"], select=["AIC301"]) == []


def test_flags_from_the_running_gpu_are_judged_per_gpu():
    # On an H100 the f-string is -arch=sm_90a, whose compute_90 PTX rejects the unguarded wgmma.
    code = _CACHE_CLASS.replace("{arch}", '[f"-arch=sm_{torch.cuda.get_device_capability()[0]}0a"]')
    d = lint("import torch\n" + code, gpus=["H100"], select=["AIC301"])
    assert len(d) == 1 and "when built for compute_90" in d[0].message
    guarded = code.replace('asm volatile("wgmma.fence.sync.aligned;");',
                           '\n#if defined(__CUDA_ARCH_FEAT_SM90_ALL)\n asm volatile("wgmma.fence.sync.aligned;");\n#endif\n')
    assert [x for x in lint("import torch\n" + guarded, gpus=["H100"], select=["AIC301"]) if x.severity == "error"] == []


_WGMMA = 'SRC = """\n__global__ void k() { asm volatile("wgmma.fence.sync.aligned;"); }\n"""\n'


def test_arch_shorthand_with_suffix_also_builds_plain_ptx():
    """nvcc 13.0: -arch=sm_90a embeds compute_90 PTX too (tests/test_kernel_corpus.py checks it
    with the real nvcc), so an unguarded wgmma fails the whole build, on the H100 as well."""
    code = ("from torch.utils.cpp_extension import load_inline\n" + _WGMMA +
            "def build(name, flags):\n    return load_inline(name, '', cuda_sources=SRC, extra_cuda_cflags=flags)\n"
            "mod = build('k', ['-O3', '-arch=sm_90a'])\n")
    d = lint(code, gpus=["H100"], select=["AIC301"])
    assert [(x.line, x.code) for x in d] == [(3, "AIC301")]  # at the asm, inside the literal
    assert ("is rejected when built for compute_90 (its -gencode/-arch flags: -arch=sm_90a also embeds compute_90 "
            "PTX)") in d[0].message
    assert "fails on sm_90 (H100). Build with -gencode arch=compute_90a,code=sm_90a instead, which embeds no " \
           "compute_90 PTX." in d[0].message
    fixed = code.replace("'-arch=sm_90a'", "'-gencode=arch=compute_90a,code=sm_90a'")
    assert lint(fixed, gpus=["H100"], select=["AIC301"]) == []
    # -arch names only the virtual arch when -code is given: exactly sm_90a is built.
    with_code = code.replace("'-arch=sm_90a'", "'-arch=compute_90a', '-code=sm_90a'")
    assert lint(with_code, gpus=["H100"], select=["AIC301"]) == []
    # A kernel that guards on the feature macro builds under the shorthand too.
    guarded = code.replace('{ asm volatile("wgmma.fence.sync.aligned;"); }',
                           '{\n#if defined(__CUDA_ARCH_FEAT_SM90_ALL)\n asm volatile("wgmma.fence.sync.aligned;");'
                           '\n#endif\n}')
    assert [x.severity for x in lint(guarded, gpus=["H100"], select=["AIC301"])] in ([], ["warning"])


def test_one_failing_target_fails_the_whole_build():
    """TORCH_CUDA_ARCH_LIST='8.0;9.0a' builds both: nvcc stops at sm_80, so the H100 gets nothing either."""
    code = ("import os\nfrom torch.utils.cpp_extension import load_inline\n" + _WGMMA +
            "os.environ['TORCH_CUDA_ARCH_LIST'] = '8.0;9.0a'\nmod = load_inline('k', '', cuda_sources=SRC)\n")
    d = lint(code, gpus=["H100"], select=["AIC301"])
    assert len(d) == 1 and "when built for sm_80" in d[0].message and "fails on sm_90 (H100)" in d[0].message
    assert lint(code.replace("'8.0;9.0a'", "'9.0a'"), gpus=["H100"], select=["AIC301"]) == []


def test_cupy_builds_for_the_gpu_it_runs_on():
    """CuPy appends -arch=sm_<device cc> after the options: NVRTC 13.0 builds that number, with the
    'a' of an sm_90a option (an options=("-arch=sm_100",) kernel and a wgmma kernel with
    ("-arch=sm_90a",) ran on an H200); without an option, the GPU's plain target."""
    plain = 'SRC = """\nextern "C" __global__ void k(float* x) { x[0] = 1.f; }\n"""\n'
    code = "import cupy\n" + plain + "k = cupy.RawKernel(SRC, 'k', options=('-arch=sm_100',))\n"
    assert lint(code, gpus=["H100"], cuda="13.0", select=["AIC301", "AIC302"]) == []
    wg = "import cupy\n" + _WGMMA.replace("__global__", 'extern \\"C\\" __global__') + \
        "m = cupy.RawModule(code=SRC, options=('-std=c++17', '-arch=sm_90a'))\n"
    assert lint(wg, gpus=["H100"], cuda="13.0", select=["AIC301"]) == []
    d = lint(wg.replace("'-arch=sm_90a'", "'-O3'"), gpus=["H100"], cuda="13.0", select=["AIC301"])
    assert [x.code for x in d] == ["AIC301"] and "when built for sm_90 (no -arch option: CuPy builds" in d[0].message


def test_arch_list_is_read_from_the_tree_not_the_text():
    """A commented-out TORCH_CUDA_ARCH_LIST line sets nothing: torch builds for the GPU itself (sm_90)."""
    code = ("import os\nfrom torch.utils.cpp_extension import load_inline\n" + _WGMMA +
            "ARCHS = '9.0a'\n"
            "# os.environ['TORCH_CUDA_ARCH_LIST'] = '9.0a'  (left from an experiment)\n"
            "mod = load_inline('k', '', cuda_sources=SRC)\n")
    d = lint(code, gpus=["H100"], select=["AIC301"])
    assert len(d) == 1 and "when built for sm_90 (no arch flags" in d[0].message
    # Set for real, through a module constant: sm_90a only, the wgmma builds.
    fixed = code.replace("# os.environ['TORCH_CUDA_ARCH_LIST'] = '9.0a'  (left from an experiment)",
                         "os.environ['TORCH_CUDA_ARCH_LIST'] = ARCHS")
    assert lint(fixed, gpus=["H100"], select=["AIC301"]) == []
    set_default = code.replace("# os.environ['TORCH_CUDA_ARCH_LIST'] = '9.0a'  (left from an experiment)",
                               "os.environ.setdefault('TORCH_CUDA_ARCH_LIST', ARCHS)")
    assert lint(set_default, gpus=["H100"], select=["AIC301"]) == []



_JIT_BUILDER = ("import os\nfrom torch.utils.cpp_extension import load_inline\n" + _WGMMA +
                "\n\ndef _compile():\n"
                "    return load_inline('attn_kernels', '', cuda_sources=SRC, verbose=True)\n\n\n"
                "class KernelCache:\n"
                "    def __init__(self, arch_list=None):\n"
                "        self.mod = None\n\n"
                "    def get(self):\n"
                "        if self.mod is None:\n"
                "            archs = ARCHS\n"
                "            os.environ['TORCH_CUDA_ARCH_LIST'] = archs\n"
                "            self.mod = _compile()\n"
                "        return self.mod\n")


@pytest.mark.parametrize("archs, found", [("9.0", True), ("9.0a", False)])
def test_arch_list_set_below_the_call_through_a_local(archs, found):
    """The JIT call sits in a helper above the method that sets TORCH_CUDA_ARCH_LIST, through a
    local variable: the setting is read where it is (its function's scope), once the module is walked.
    '9.0' builds plain sm_90, which rejects wgmma on the H100; '9.0a' (the fixed twin) builds it."""
    code = _JIT_BUILDER.replace("archs = ARCHS", f"archs = {archs!r}")
    d = lint(code, gpus=["H100"], select=["AIC301"])
    if found:
        assert len(d) == 1 and d[0].line == 4, d  # in the CUDA string: the wgmma line
        assert "when built for sm_90 (TORCH_CUDA_ARCH_LIST='9.0')" in d[0].message
    else:
        assert d == []


_MXF4 = r'''
__device__ __forceinline__ void mma_mxf4(unsigned tmem_c, unsigned long long a, unsigned long long b,
                                         unsigned idesc, unsigned sfa, unsigned sfb, unsigned scale_c) {
  asm volatile("{\n\t.reg .pred p;\n\tsetp.ne.b32 p, %4, 0;\n\t"
#if (__CUDACC_VER_MAJOR__ > 12) || (__CUDACC_VER_MAJOR__ == 12 && __CUDACC_VER_MINOR__ >= 9)
               "tcgen05.mma.cta_group::1.kind::mxf4.block_scale.block32 [%0], %1, %2, %3, [%5], [%6], p; \n\t"
#else
               "tcgen05.mma.cta_group::1.kind::mxf4.block_scale.scale_vec::2X [%0], %1, %2, %3, [%5], [%6], p; \n\t"
#endif
               "}\n" :: "r"(tmem_c), "l"(a), "l"(b), "r"(idesc), "r"(scale_c), "r"(sfa), "r"(sfb));
}
__global__ void gemm(unsigned* t) { mma_mxf4(t[0], 0, 0, t[1], t[2], t[3], 1); }
'''


def test_a_target_bounds_the_toolkit_that_builds_it():
    """sm_100f needs CUDA 12.9 (gpus.toml), so DeepGEMM's '#if CUDA >= 12.9' picks block32 there and
    the sm_100f-rejected scale_vec::2X spelling is never compiled, even with the toolkit unknown."""
    code = ("from torch.utils.cpp_extension import load_inline\nSRC = " + repr(_MXF4) + "\n"
            "mod = load_inline('g', '', cuda_sources=SRC, extra_cuda_cflags=['-gencode=arch=compute_100f,code=sm_100f'])\n")
    assert lint(code, gpus=["B200"], select=["AIC301"]) == []
    only_old = code.replace("block32", "scale_vec::2X")
    d = lint(only_old, gpus=["B200"], select=["AIC301"])
    assert [x.code for x in d] == ["AIC301"] and "scale_vec::2X" in d[0].message


_SCATTER = r'''
template <typename T>
__device__ __forceinline__ void accumulate(T* acc, float a, float b);

template <>
__device__ __forceinline__ void accumulate<float2>(float2* acc, float a, float b) {
  atomicAdd(acc, make_float2(a, b));
}

__global__ void scatter_rows(const float* x, float2* acc, const int* idx, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) accumulate(&acc[idx[i]], x[2 * i], x[2 * i + 1]);
}
'''


def test_vector_atomic_add_needs_hopper():
    """atomicAdd(float2*, float2) is an overload of compute capability 9.0+ (nvcc 13.0: 'no instance of
    overloaded function "atomicAdd" matches the argument list' for sm_75-sm_89; fixtures/kernels)."""
    code = ("from torch.utils.cpp_extension import load_inline\n\nSRC = r'''" + _SCATTER + "'''\n\n\n"
            "def build():\n    return load_inline('scatter', '', cuda_sources=SRC)\n")
    d = lint(code, gpus=["A100", "H100"], select=["AIC301"])
    assert [(x.line, sorted(x.targets)) for x in d] == [(9, ["A100"])]  # the atomicAdd line
    assert "atomic_add_vector" in d[0].message
    # The twin: two scalar atomics below Hopper.
    fixed = code.replace("  atomicAdd(acc, make_float2(a, b));",
                         "#if __CUDA_ARCH__ >= 900\n  atomicAdd(acc, make_float2(a, b));\n#else\n"
                         "  atomicAdd(&acc->x, a);\n  atomicAdd(&acc->y, b);\n#endif")
    assert lint(fixed, gpus=["A100", "H100"], select=["AIC301"]) == []


def test_deferred_judgement_keeps_the_helpers_narrowed_worlds():
    """A JIT helper called only under a Hopper check is walked again in those worlds
    (engine _narrow_helpers): the judgement it handed to ``fc.later`` on the first walk is
    dropped with that walk's findings, so the wgmma is reported once, for the H100 alone."""
    code = ("import os\nimport torch\nfrom torch.utils.cpp_extension import load_inline\n" + _WGMMA +
            "\n\ndef _compile():\n    return load_inline('k', '', cuda_sources=SRC)\n\n\n"
            "def kernels():\n    if torch.cuda.get_device_capability() >= (9, 0):\n        return _compile()\n"
            "    return None\n\n\nos.environ['TORCH_CUDA_ARCH_LIST'] = '8.0;9.0'\n")
    d = lint(code, gpus=["A100", "H100"], select=["AIC301"])
    assert len(d) == 1 and d[0].targets == ["H100"], d
    assert "TORCH_CUDA_ARCH_LIST='8.0;9.0'" in d[0].message
    # Built for sm_90a alone (the A100 then has no code: AIC302's finding, not this rule's).
    fixed = code.replace("'8.0;9.0'", "'9.0a'")
    assert lint(fixed, gpus=["A100", "H100"], select=["AIC301"]) == []
