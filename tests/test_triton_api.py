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
