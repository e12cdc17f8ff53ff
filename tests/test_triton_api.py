"""AIC201/AIC202 on Triton kernels, judged with version_matrix/api/triton.toml (every release
2.0.0-3.9.0 imported, tools/triton_introspect.py) and the triton release each torch wheel
requires (version_matrix/requires.toml): hallucinated names and keywords inside
``@triton.jit`` kernels and their helpers, under the import forms generated code uses."""

from conftest import lint

KERNEL = '''import torch
import triton
{imports}


@triton.jit
def _row_max(x):
    return tl.max(x, axis=0)


@triton.jit
def softmax_kernel(out_ptr, in_ptr, stride, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id({pid})
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(in_ptr + row * stride + cols, mask=mask, other=-float("inf"), {cache})
    num = tl.exp(x - _row_max(x))
    den = tl.sum(num, axis=0, {keep})
    tl.store(out_ptr + row * stride + cols, num / den, mask=mask)
'''
BAD = dict(imports="import triton.language as tl", pid="dim=0", cache='cache="evict_last"', keep="keepdim=True")
GOOD = dict(imports="import triton.language as tl", pid="axis=0", cache='cache_modifier=".ca"', keep="keep_dims=True")


def found(code, pins=None, rules=("AIC201", "AIC202")):
    return [(d.code, d.line, d.column, d.message) for d in lint(code, pins=pins or {}) if d.code in rules]


def test_torch_keyword_names_in_a_softmax_kernel_and_the_fixed_twin():
    got = found(KERNEL.format(**BAD), {"torch": "2.4.0"})
    assert got == [
        ("AIC202", 13, 11, "triton.language.program_id: no triton release (2.0.0–3.9.0) accepts keyword 'dim'; "
                           "did you mean 'axis'?"),
        ("AIC202", 16, 9, "triton.language.load: no triton release (2.0.0–3.9.0) accepts keyword 'cache'; "
                          "did you mean 'cache_modifier'?"),
        ("AIC202", 18, 11, "triton.language.sum: no triton release (2.0.0–3.9.0) accepts keyword 'keepdim'; "
                           "did you mean 'keep_dims'?"),
    ]
    assert found(KERNEL.format(**GOOD), {"torch": "2.4.0"}) == []


def test_keep_dims_before_triton_3_names_the_releases_that_take_it():
    # torch 2.3.1 requires triton 2.3.1, whose sum(input, axis=) has no keep_dims
    got = found(KERNEL.format(**GOOD), {"torch": "2.3.1"})
    assert got == [("AIC202", 18, 11, "triton.language.sum: keyword 'keep_dims' is not accepted by triton 2.3.1 "
                                      "(accepted in triton 3.0.0–3.9.0); triton unpinned: torch 2.3.1 requires "
                                      "triton 2.3.1")]
    fixed = KERNEL.format(**GOOD).replace("den = tl.sum(num, axis=0, keep_dims=True)", "den = tl.sum(num, axis=0)")
    assert found(fixed, {"torch": "2.3.1"}) == []


def test_other_import_forms_resolve_the_same_names():
    for imports in ("from triton import language as tl", "import triton.language as tl\nimport triton.language"):
        got = found(KERNEL.format(**dict(BAD, imports=imports)), {"torch": "2.4.0"})
        assert [(c, line) for c, line, _, _ in got] == [("AIC202", 13 + imports.count("\n")),
                                                        ("AIC202", 16 + imports.count("\n")),
                                                        ("AIC202", 18 + imports.count("\n"))], imports
    direct = ("import triton\nfrom triton.language import load, program_id as pid_of\n\n\n@triton.jit\n"
              "def copy(src, dst, n, BLOCK: triton.language.constexpr):\n"
              "    offs = pid_of(dim=0) * BLOCK + triton.language.arange(0, BLOCK)\n"
              "    triton.language.store(dst + offs, load(src + offs, mask=offs < n, cache='.cg'), mask=offs < n)\n")
    got = found(direct)
    assert [(c, line, col) for c, line, col, _ in got] == [("AIC202", 7, 12), ("AIC202", 8, 39)]
    fixed = direct.replace("dim=0", "axis=0").replace("cache=", "cache_modifier=")
    assert found(fixed) == []


def test_a_torch_pin_judges_the_triton_its_wheel_requires():
    code = ("import triton\nimport triton.language as tl\n\n\n@triton.jit\ndef gelu(x_ptr, y_ptr, n, BLOCK: tl.constexpr):\n"
            "    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)\n"
            "    x = tl.load(x_ptr + offs, mask=offs < n)\n"
            "    y = 0.5 * x * (1.0 + tl.libdevice.tanh(0.79788456 * x))\n"
            "    tl.store(y_ptr + offs, y, mask=offs < n)\n")
    # torch 2.0.1 requires triton 2.0.0, which has triton.language.libdevice
    assert found(code, {"torch": "2.0.1"}) == []
    d = [x for x in lint(code, pins={"torch": "2.4.0"}) if x.code == "AIC201"]
    assert [(x.line, x.column, x.message) for x in d] == [
        (9, 26, "triton.language.libdevice.tanh is not in triton 3.0.0 (removed in 2.1.0; last in 2.0.0); triton "
                "unpinned: torch 2.4.0 requires triton 3.0.0; in triton 3.0.0 it is "
                "triton.language.extra.cuda.libdevice.tanh or triton.language.extra.libdevice.tanh")]
    assert d[0].targets == ["triton==3.0.0"]
    fixed = code.replace("tl.libdevice.tanh", "tl.extra.cuda.libdevice.tanh")
    assert found(fixed, {"torch": "2.4.0"}) == []
    # a pin of triton itself wins over the one torch's wheel requires
    assert found(code, {"torch": "2.4.0", "triton": "2.0.0"}) == []
    # a torch range judges every triton its releases require
    d = [x for x in lint(code, pins={"torch": ">=2.3,<2.5"}) if x.code == "AIC201"]
    assert d[0].targets == ["triton==2.3.0", "triton==2.3.1", "triton==3.0.0"]
    assert "triton unpinned: torch 2.3.0–2.4.1 require triton 2.3.0–3.0.0" in d[0].message


def test_neither_pinned_judges_the_newest_triton_and_says_so():
    code = "import triton.language as tl\n\n\ndef act(x):\n    return tl.math.tanh(x)\n"
    d = found(code)
    assert len(d) == 1 and d[0][3].endswith("triton unpinned: judged on the newest release 3.9.0; in triton 3.9.0 it "
                                            "is triton.language.extra.cuda.libdevice.tanh or "
                                            "triton.language.extra.libdevice.tanh"), d
    assert found(code, {"triton": "2.1.0"}) == []


def test_hallucinated_names_with_what_the_release_has():
    code = ("import triton\nimport triton.language as tl\n\n\n@triton.jit\ndef quant(x_ptr, q_ptr, BLOCK: tl.constexpr):\n"
            "    offs = tl.arange(0, BLOCK)\n"
            "    x = tl.load(x_ptr + offs)\n"
            "    tl.store(q_ptr + offs, tl.tanh(x).to(tl.float8e4m3))\n")
    got = found(code, {"triton": "2.1.0"})
    assert got == [
        ("AIC201", 9, 28, "triton.language.tanh does not exist in any triton release (2.0.0–3.9.0); in triton 2.1.0 "
                          "it is triton.language.math.tanh"),
        ("AIC201", 9, 42, "triton.language.float8e4m3 does not exist in any triton release (2.0.0–3.9.0); did you "
                          "mean triton.language.float8e4, triton.language.float8e5, triton.language.float8e4b15?"),
    ]
    fixed = code.replace("tl.tanh(x)", "tl.math.tanh(x)").replace("tl.float8e4m3", "tl.float8e5")
    assert found(fixed, {"triton": "2.1.0"}) == []


def test_code_under_a_triton_version_test_is_not_judged():
    code = ("import triton\nimport triton.language as tl\n\n\n@triton.jit\ndef rowsum(x_ptr, out_ptr, BLOCK: tl.constexpr):\n"
            "    x = tl.load(x_ptr + tl.arange(0, BLOCK))\n"
            "    tl.store(out_ptr, tl.sum(x, axis=0))\n\n\n"
            "if triton.__version__ >= '3.0':\n"
            "    KEEP = tl.sum\nelse:\n    from triton.language.libdevice import tanh\n")
    assert found(code, {"torch": "2.4.0"}) == []
    unguarded = code.replace("if triton.__version__ >= '3.0':\n    KEEP = tl.sum\nelse:\n    ", "")
    assert [(c, line) for c, line, _, _ in found(unguarded, {"torch": "2.4.0"})] == [("AIC201", 11)]


# -- AIC102: FP8 in Triton kernels (version_matrix/fp8.toml [triton_cast], [triton_dot]) ----------
FP8_MM = '''import torch
import triton
import triton.language as tl


@triton.jit
def _to_fp8(x):
    return {cast}


@triton.jit
def fp8_mm(a_ptr, b_ptr, c_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tile = offs[:, None] * BLOCK + offs[None, :]
    a = _to_fp8(tl.load(a_ptr + tile))
    b = tl.load(b_ptr + tile).to(dtype={dtype})
    tl.store(c_ptr + tile, tl.dot(a, b))


def fp8_matmul(a, b):
    c = torch.empty_like(a, dtype=torch.float32)
{launch}
    return c
'''
LAUNCH = "    fp8_mm[(1,)](a, b, c, BLOCK=64)"
GUARDED = ("    if torch.cuda.get_device_capability(a.device) < (8, 9):\n        return a.float() @ b.float()\n"
           "    fp8_mm[(1,)](a, b, c, BLOCK=64)")


def fp8(code, gpus, pins=None):
    return [(d.line, d.column, d.message) for d in lint(code, gpus=gpus, pins=pins or {}) if d.code == "AIC102"]


def test_casts_to_fp8e4nv_in_a_kernel_fail_below_sm89_with_the_releases_error():
    code = FP8_MM.format(cast="tl.cast(x, tl.float8e4nv)", dtype="tl.float8e4nv", launch=LAUNCH)
    got = fp8(code, ["A100", "H100"], {"torch": "2.4.0"})
    why = ("Triton compiles fp8e4nv (e4m3) only for compute capability 8.9+ (triton 3.0.0) (\"fp8e4nv data type is "
           "not supported on CUDA arch < 89\"); fails on sm_80 (A100); use tl.float8e5 there (every capability), or "
           "launch the kernel only where the capability is >= (8, 9)")
    assert got == [(8, 12, f"cast to triton.language.float8e4nv in a Triton kernel: {why}"),
                   (16, 9, f"cast to triton.language.float8e4nv in a Triton kernel: {why}")]
    # 3.2.0 on: the type itself is refused when lowered, with its own message
    newest = fp8(code, ["A100", "H100"])
    assert len(newest) == 2 and "(triton 3.9.0) (\"type fp8e4nv not supported in this architecture." in newest[0][2]
    # fixed twins: launched only where the capability is 8.9+, or e5m2 everywhere
    assert fp8(FP8_MM.format(cast="tl.cast(x, tl.float8e4nv)", dtype="tl.float8e4nv", launch=GUARDED),
               ["A100", "H100"], {"torch": "2.4.0"}) == []
    assert fp8(FP8_MM.format(cast="x.to(tl.float8e5)", dtype="tl.float8e5", launch=LAUNCH),
               ["A100", "H100"], {"torch": "2.4.0"}) == []


def test_dot_on_fp8e4nv_operands_fails_on_sm89_with_triton_2_2_only():
    code = FP8_MM.format(cast="x.to(tl.float8e4nv)", dtype="tl.float8e4nv", launch=GUARDED)
    # torch 2.2.2 requires triton 2.2.0, whose dot asserts capability >= 9.0; the guard keeps sm_80 out
    assert fp8(code, ["A100", "L40S", "H100"], {"torch": "2.2.2"}) == [
        (17, 28, "triton.language.dot: triton.language.float8e4nv operands (triton 2.2.0) (\"Dot op does not support "
                 "fp8e4nv on CUDA arch < 90\"); fails on sm_89 (L40S); use tl.float8e5 operands on sm_89 with triton "
                 "2.2.0, or a triton release from 2.3.0 (torch >= 2.3)")]
    # triton 2.3.0's dot checks 8.9, as its cast does
    assert fp8(code, ["A100", "L40S", "H100"], {"torch": "2.3.0"}) == []
    # an operand whose dtype is unknown (a pointer's) is not judged
    unknown = code.replace("tl.dot(a, b)", "tl.dot(tl.load(a_ptr + tile), b)").replace(
        "b = tl.load(b_ptr + tile).to(dtype=tl.float8e4nv)", "b = tl.load(b_ptr + tile)")
    assert fp8(unknown, ["L40S", "H100"], {"torch": "2.2.2"}) == []


def test_bitcasts_and_releases_without_the_dtype_are_left_alone():
    code = FP8_MM.format(cast="x.to(tl.float8e4nv, bitcast=True)", dtype="tl.float8e5", launch=LAUNCH)
    assert fp8(code, ["A100"], {"torch": "2.4.0"}) == []
    # triton 2.1.0 has no float8e4nv: AIC201 says so, AIC102 says nothing
    code = FP8_MM.format(cast="x.to(tl.float8e4nv)", dtype="tl.float8e5", launch=LAUNCH)
    assert fp8(code, ["A100"], {"triton": "2.1.0"}) == []
    assert [(d.code, d.line) for d in lint(code, gpus=["A100"], pins={"triton": "2.1.0"}) if d.code == "AIC201"] \
        == [("AIC201", 8)]


def test_a_triton_version_test_through_a_module_flag_is_not_judged():
    # lmdeploy pytorch/kernels/cuda/pagedattention.py: the version parsed once into a module constant
    code = ("import triton\nimport triton.language as tl\nfrom packaging import version\n\n"
            "TRITON_VERSION = version.parse(triton.__version__)\nVERSION_300 = version.parse('3.0.0')\n\n"
            "if TRITON_VERSION >= VERSION_300:\n    tanh = tl.extra.cuda.libdevice.tanh\n"
            "else:\n    tanh = tl.math.tanh\n")
    assert found(code) == [] and found(code, {"torch": "2.4.0"}) == []
    # the same module without the test: tl.math.tanh fails on the newest release
    unguarded = code.replace("if TRITON_VERSION >= VERSION_300:\n    tanh = tl.extra.cuda.libdevice.tanh\nelse:\n    ",
                             "")
    assert [(c, line) for c, line, _, _ in found(unguarded)] == [("AIC201", 8)]
