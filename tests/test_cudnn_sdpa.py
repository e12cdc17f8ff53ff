"""SDPA's cuDNN backend (AIC106, attention.toml [limit.sdpa_cudnn_head_dim]): the wheel reader
tools/read_cudnn_sdpa.py on a library g++ builds with the same shape as torch's check, the
METADATA pins it parses, the helper context managers the engine follows, and the data's spans."""
import importlib.util
import shutil
import subprocess
from pathlib import Path

import libcst as cst
import pytest

from aicompat import Target, lint_source
from aicompat.matrix import default_matrix
from aicompat.model.with_helpers import inner_context_call

ROOT = Path(__file__).resolve().parent.parent
spec = importlib.util.spec_from_file_location("read_cudnn_sdpa", ROOT / "tools" / "read_cudnn_sdpa.py")
reader = importlib.util.module_from_spec(spec)
spec.loader.exec_module(reader)

# The shape of sdp_utils.cpp's check (torch 2.11-2.13): a runtime cuDNN version against
# 9.10, the device's (major, minor), a head-dim limit of 128 or a wider one.
_CHECK = r"""
#include <cstdio>
struct Props { char pad[0x168]; int major; int minor; };
extern "C" long cudnn_runtime();
extern "C" Props *device_props();
namespace sdp {
struct sdp_params { long d_qk; long d_v; };
namespace {
bool check_cudnn_tensor_shapes(sdp_params const &p, bool debug) {
  long v = cudnn_runtime();
  if (v < 8903) { if (debug) std::puts("SDPA fprop requires cudnn 8.9.3 or higher"); return false; }
  int limit = 128;
  Props *d = device_props();
  if (v >= 91000 && d->major == 9 && d->minor == 0) limit = 192;
  if (p.d_qk > limit || p.d_v > limit) { if (debug) std::printf("head_dim should be no more than %d\n", limit); return false; }
  return true;
}
}
bool can_use(sdp_params const &p, bool debug) { return check_cudnn_tensor_shapes(p, debug); }
}
"""


@pytest.mark.skipif(shutil.which("g++") is None or shutil.which("objdump") is None, reason="needs g++ and binutils")
def test_reader_finds_the_check_and_its_comparisons(tmp_path):
    src = tmp_path / "check.cpp"
    src.write_text(_CHECK)
    so = tmp_path / "libcheck.so"
    subprocess.run(["g++", "-O2", "-fPIC", "-shared", "-fno-inline", str(src), "-o", str(so)], check=True,
                   capture_output=True, timeout=120)
    lines = "\n".join(reader.skeleton(so))
    assert "$0x22c6" in lines and "$0x16377" in lines  # 8902 and 90999: cuDNN 8.9.3 / 9.10 thresholds
    assert "0x168(" in lines  # the device's (major, minor)
    assert "$0x80," in lines  # the default limit (128); gcc may compute the wider one without an immediate
    assert any("SDPA fprop requires cudnn 8.9.3" in t for t in reader.texts(so))


def test_reader_says_when_the_check_is_absent(tmp_path):
    so = tmp_path / "empty.so"
    if shutil.which("g++") is None:
        pytest.skip("needs g++")
    (tmp_path / "e.cpp").write_text("int f() { return 1; }\n")
    subprocess.run(["g++", "-shared", "-fPIC", str(tmp_path / "e.cpp"), "-o", str(so)], check=True, timeout=120)
    assert reader.skeleton(so) == [f"no {reader.FUNCTION} in the symbol table"]


@pytest.mark.parametrize("line, pin", [
    ("Requires-Dist: nvidia-cudnn-cu13==9.26.0.51; platform_system == \"Linux\"", "nvidia-cudnn-cu13==9.26.0.51"),
    ("Requires-Dist: nvidia-cudnn-cu12 (==9.1.0.70) ; platform_system == \"Linux\"", "nvidia-cudnn-cu12==9.1.0.70"),
    ("Requires-Dist: filelock", None),
])
def test_pinned_cudnn_from_metadata(line, pin):
    assert reader.pinned_cudnn("Metadata-Version: 2.1\n" + line + "\n") == pin


def _fn(src: str) -> cst.FunctionDef:
    return cst.parse_module(src).body[-1]


def test_helper_shapes_followed():
    resolve = lambda node: "contextlib.contextmanager" if isinstance(node, cst.Attribute) else None  # noqa: E731
    ret = _fn("def only():\n    '''cuDNN only.'''\n    return sdpa_kernel(SDPBackend.CUDNN_ATTENTION)\n")
    gen = _fn("import contextlib\n@contextlib.contextmanager\ndef only():\n"
              "    with sdpa_kernel([SDPBackend.CUDNN_ATTENTION]):\n        yield\n")
    assert cst.Module([]).code_for_node(inner_context_call(ret, resolve).func) == "sdpa_kernel"
    assert cst.Module([]).code_for_node(inner_context_call(gen, resolve).func) == "sdpa_kernel"
    # two statements, a generator without the decorator, a decorator of another kind: not followed
    assert inner_context_call(_fn("def f():\n    x = 1\n    return sdpa_kernel(x)\n"), resolve) is None
    assert inner_context_call(_fn("def f():\n    with sdpa_kernel(b):\n        yield\n"), resolve) is None
    assert inner_context_call(_fn("@functools.cache\ndef f():\n    return sdpa_kernel(b)\n"), lambda n: "functools.cache") \
        is None
    # the helper's parameter is the caller's value: not read from the module
    assert inner_context_call(_fn("def f(backends):\n    return sdpa_kernel(backends)\n"), resolve) is None
    assert inner_context_call(_fn("def f(debug=False):\n    return sdpa_kernel(SDPBackend.MATH)\n"), resolve) is not None


_PARAM_HELPER = """import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel


def backends(chosen):
    return sdpa_kernel(chosen)


q = torch.randn(2, 8, 1024, 160, device='cuda', dtype=torch.float16)
with backends([SDPBackend.CUDNN_ATTENTION]):
    out = F.scaled_dot_product_attention(q, q, q)
"""


def test_helper_passing_its_argument_stays_unknown():
    """The backends a helper's parameter carries are not followed: nothing is said."""
    diags = lint_source(_PARAM_HELPER, Target(gpus=["A100"]), path="attn.py")
    assert [d for d in diags if d.code == "AIC106"] == []
    direct = _PARAM_HELPER.replace("with backends([SDPBackend.CUDNN_ATTENTION]):",
                                   "with sdpa_kernel([SDPBackend.CUDNN_ATTENTION]):")
    assert [d.line for d in lint_source(direct, Target(gpus=["A100"]), path="attn.py") if d.code == "AIC106"] == [12]


def test_spans_name_known_releases_and_pins():
    m = default_matrix()
    e = m.section("attention.toml", "limit")["sdpa_cudnn_head_dim"]
    known = set(m.releases("torch"))
    seen = []
    for span in e["spans"]:
        assert span["cudnn"].startswith(("nvidia-cudnn-cu12==", "nvidia-cudnn-cu13=="))
        for r in span["releases"]:
            assert any(str(k) == r for k in known), r
            seen.append(r)
    assert len(seen) == len(set(seen))  # one span per release
