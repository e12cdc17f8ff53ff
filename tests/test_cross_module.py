"""The value model follows the project's own modules (issue 11): constants,
functions, classes and guards imported with relative or absolute imports from
modules of the linted tree, each failing case paired with its fixed twin; the
per-file cache is invalidated when an imported module changes; nothing outside
the tree, no symlink and no special file is read."""

import os
import textwrap
from pathlib import Path

import pytest

from aicompat import Target, lint_paths


def write(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        p = root / name
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(textwrap.dedent(text).lstrip())


def findings(path: Path, gpus=("A100", "H100"), pins=None, **kw):
    target = Target(gpus=list(gpus), pins=dict(pins or {}))
    return sorted((d.code, Path(d.path).name, d.line, d.message)
                  for d in lint_paths([path], target, use_config=False, **kw))


# -- constants and functions of a sibling module (relative imports) ---------------------------------
MLA_CONFIG = """
    QK_NOPE_HEAD_DIM = 128
    QK_ROPE_HEAD_DIM = 64
    V_HEAD_DIM = {v}
    NUM_HEADS = 16


    def qk_head_dim():
        return QK_NOPE_HEAD_DIM + QK_ROPE_HEAD_DIM
    """

MLA_ATTENTION = """
    import torch
    from flash_attn import flash_attn_func

    from . import config
    from .config import NUM_HEADS, V_HEAD_DIM, qk_head_dim


    def mla_prefill(hidden, kv_latent):
        b, s, _ = hidden.shape
        q = hidden.new_empty(b, s, NUM_HEADS, qk_head_dim())
        k = kv_latent.new_empty(b, s, NUM_HEADS, config.QK_NOPE_HEAD_DIM + config.QK_ROPE_HEAD_DIM)
        v = kv_latent.new_empty(b, s, NUM_HEADS, V_HEAD_DIM)
        return flash_attn_func(q, k, v, causal=True)
    """


@pytest.mark.parametrize("v, expected", [(128, 1), (192, 0)])
def test_head_dims_from_a_sibling_config_module(tmp_path, v, expected):
    write(tmp_path, {"mla/__init__.py": "", "mla/config.py": MLA_CONFIG.format(v=v),
                     "mla/attention.py": MLA_ATTENTION})
    found = findings(tmp_path)
    assert len(found) == expected
    if expected:
        code, name, line, message = found[0]
        assert (code, name, line) == ("AIC101", "attention.py", 13)
        assert "V head dim 128 != QK head dim 192" in message and "sm_80 (A100)" in message


def test_absolute_import_of_a_dataclass_config(tmp_path):
    write(tmp_path, {
        "deepseek/__init__.py": "",
        "deepseek/args.py": """
            from dataclasses import dataclass


            @dataclass
            class ModelArgs:
                dim: int = 2048
                n_heads: int = 16
                qk_nope_head_dim: int = 128
                qk_rope_head_dim: int = 64
                v_head_dim: int = 128
            """,
        "deepseek/model.py": """
            import torch
            from flash_attn_interface import flash_attn_func
            from torch import nn

            from deepseek.args import ModelArgs


            class MLA(nn.Module):
                def __init__(self, args: ModelArgs):
                    super().__init__()
                    self.n_heads = args.n_heads
                    self.qk_head_dim = args.qk_nope_head_dim + args.qk_rope_head_dim
                    self.v_head_dim = args.v_head_dim

                def forward(self, x):
                    b, s, _ = x.shape
                    q = x.new_empty(b, s, self.n_heads, self.qk_head_dim)
                    v = x.new_empty(b, s, self.n_heads, self.v_head_dim)
                    return flash_attn_func(q, q, v, causal=True)


            def build():
                return MLA(ModelArgs(dim=1024))
            """,
    })
    found = findings(tmp_path)
    assert [(c, n, ln) for c, n, ln, _ in found] == [("AIC101", "model.py", 19)]
    assert "sm_80 (A100)" in found[0][3] and "sm_90" not in found[0][3].split("fails on")[1]
    # The fixed twin: this model's V head dim equals the QK head dim.
    (tmp_path / "deepseek/model.py").write_text(
        (tmp_path / "deepseek/model.py").read_text().replace("ModelArgs(dim=1024)", "ModelArgs(dim=1024, v_head_dim=192)"))
    assert findings(tmp_path) == []


# -- guards kept in helper modules ------------------------------------------------------------------
UTILS = """
    import torch
    from packaging import version


    def is_hopper() -> bool:
        return torch.cuda.get_device_capability()[0] == 9


    def is_torch_greater_or_equal(v: str) -> bool:
        return version.parse(torch.__version__) >= version.parse(v)
    """


@pytest.mark.parametrize("guard, expected", [("if is_hopper():", []), ("if q.is_cuda:", [("AIC101", 11)])])
def test_capability_guard_from_a_helper_module(tmp_path, guard, expected):
    write(tmp_path, {"kernels/__init__.py": "", "kernels/utils.py": UTILS, "kernels/attn.py": f"""
        import torch
        from flash_attn_interface import flash_attn_func

        from .utils import is_hopper


        def mla_attention(b, s):
            q = torch.empty(b, s, 16, 192, device="cuda", dtype=torch.bfloat16)
            v = torch.empty(b, s, 16, 128, device="cuda", dtype=torch.bfloat16)
            {guard}
                return flash_attn_func(q, q, v, causal=True)
            return torch.nn.functional.scaled_dot_product_attention(q, q, v)
        """})
    found = findings(tmp_path)
    assert [(c, ln) for c, n, ln, m in found] == expected
    assert all(("fails on sm_80 (A100); " in m) for *_, m in found)


def test_version_guard_from_a_helper_module(tmp_path):
    body = """
        import torch
        import torch.nn.functional as F

        from .utils import is_torch_greater_or_equal


        def windowed_attention(q, k, v, window=256):
            if {cond}:
                from torch.nn.attention.flex_attention import create_block_mask, flex_attention

                def sliding(b, h, q_idx, kv_idx):
                    return (q_idx >= kv_idx) & (q_idx - kv_idx <= window)

                n = q.shape[-2]
                return flex_attention(q, k, v, block_mask=create_block_mask(sliding, None, None, n, n))
            return F.scaled_dot_product_attention(q, k, v, is_causal=True)
        """
    write(tmp_path, {"attn/__init__.py": "", "attn/utils.py": UTILS,
                     "attn/window.py": body.format(cond='is_torch_greater_or_equal("2.5")')})
    pins = {"torch": ">=2.4,<2.7"}
    assert findings(tmp_path, gpus=["A100"], pins=pins) == []
    (tmp_path / "attn/window.py").write_text(textwrap.dedent(body.format(cond="q.is_cuda")).lstrip())
    assert {(c, ln) for c, n, ln, m in findings(tmp_path, gpus=["A100"], pins=pins)} == {("AIC201", 9)}


# -- compile options in a settings module ---------------------------------------------------------
def test_compile_options_splatted_from_a_settings_module(tmp_path):
    write(tmp_path, {
        "settings.py": """
            COMPILE = {"mode": "max-autotune-no-cudagraph", "fullgraph": False}
            """,
        "train.py": """
            import torch

            from settings import COMPILE


            def main(model):
                return torch.compile(model, **COMPILE)
            """,
    })
    found = findings(tmp_path / "train.py", gpus=["A100"], pins={"torch": "2.8.0"})
    assert [(c, n, ln) for c, n, ln, _ in found] == [("AIC103", "train.py", 7)]
    (tmp_path / "settings.py").write_text('COMPILE = {"mode": "max-autotune-no-cudagraphs", "fullgraph": False}\n')
    assert findings(tmp_path / "train.py", gpus=["A100"], pins={"torch": "2.8.0"}) == []


# -- the cache follows the imported module -----------------------------------------------------------
def test_cache_is_invalidated_when_an_imported_module_changes(tmp_path):
    proj = tmp_path / "proj"
    write(proj, {"mla/__init__.py": "", "mla/config.py": MLA_CONFIG.format(v=192),
                 "mla/attention.py": MLA_ATTENTION})
    cache = tmp_path / "cache"
    assert findings(proj, cache_dir=cache) == []
    assert findings(proj, cache_dir=cache) == []  # from the cache
    (proj / "mla/config.py").write_text(textwrap.dedent(MLA_CONFIG.format(v=128)).lstrip())
    assert [c for c, *_ in findings(proj, cache_dir=cache)] == ["AIC101"]


# -- what is never followed ---------------------------------------------------------------------------
def test_a_symlink_out_of_the_tree_is_not_followed(tmp_path):
    outside = tmp_path / "outside"
    write(outside, {"config.py": MLA_CONFIG.format(v=128)})
    proj = tmp_path / "proj"
    write(proj, {"mla/__init__.py": "", "mla/attention.py": MLA_ATTENTION})
    os.symlink(outside / "config.py", proj / "mla/config.py")
    assert findings(proj / "mla/attention.py") == []  # unknown stays unknown
    (proj / "mla/config.py").unlink()
    write(proj, {"mla/config.py": MLA_CONFIG.format(v=128)})
    assert [c for c, *_ in findings(proj / "mla/attention.py")] == ["AIC101"]


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this platform")
def test_a_fifo_named_like_a_module_is_not_opened(tmp_path):
    write(tmp_path, {"mla/__init__.py": "", "mla/attention.py": MLA_ATTENTION})
    os.mkfifo(tmp_path / "mla/config.py")
    assert findings(tmp_path / "mla/attention.py") == []  # returns at once: the FIFO is never opened


def test_a_library_name_is_never_a_project_module(tmp_path):
    # A vendored ``torch`` folder in the tree is still torch to the rules.
    write(tmp_path, {"torch/__init__.py": "def compile(model, **kw):\n    return model\n", "train.py": """
        import torch


        def main(model):
            return torch.compile(model, mode="max-autotune-no-cudagraph")
        """})
    assert [c for c, *_ in findings(tmp_path / "train.py", gpus=["A100"], pins={"torch": "2.8.0"})] == ["AIC103"]


# -- library functions re-exported by a project module ------------------------------------------------
@pytest.mark.parametrize("v_dim, expected", [(128, [("AIC101", 10)]), (192, [])])
def test_library_function_re_exported_by_a_project_module(tmp_path, v_dim, expected):
    write(tmp_path, {
        "model/__init__.py": "",
        "model/ops.py": """
            try:
                from flash_attn_interface import flash_attn_func
            except ImportError:
                flash_attn_func = None
            """,
        "model/layers.py": f"""
            import torch

            from .ops import flash_attn_func


            def attention(x, heads=16):
                b, s, _ = x.shape
                q = x.new_empty(b, s, heads, 192)
                v = x.new_empty(b, s, heads, {v_dim})
                out = flash_attn_func(q, q, v, causal=True)
                return out.reshape(b, s, -1)
            """,
    })
    assert [(c, ln) for c, n, ln, m in findings(tmp_path)] == expected


# -- parameters bound by calls in the package's other modules -------------------------------------------
@pytest.mark.parametrize("v_dim, expected", [(128, [("AIC101", "flash.py", 6)]), (192, [])])
def test_helper_parameters_from_calls_in_another_module(tmp_path, v_dim, expected):
    write(tmp_path, {
        "vlm/__init__.py": "",
        "vlm/ops/__init__.py": "from .flash import varlen_attention\n",
        "vlm/ops/flash.py": """
            from flash_attn import flash_attn_varlen_func


            def varlen_attention(q, k, v, cu_seqlens, max_seqlen):
                # q, k, v: (total_tokens, heads, head_dim)
                return flash_attn_varlen_func(
                    q, k, v, cu_seqlens, cu_seqlens, max_seqlen, max_seqlen, causal=True
                )
            """,
        "vlm/models/mla.py": f"""
            import torch

            from ..ops import varlen_attention


            def prefill(hidden, cu_seqlens, max_seqlen, heads=16):
                n = hidden.shape[0]
                q = hidden.new_empty(n, heads, 192)
                v = hidden.new_empty(n, heads, {v_dim})
                return varlen_attention(q, q, v, cu_seqlens, max_seqlen)
            """,
    })
    found = findings(tmp_path / "vlm/ops/flash.py")
    assert [(c, n, ln) for c, n, ln, m in found] == expected
    if expected:
        assert "(called at line 10 of ../models/mla.py)" in found[0][3]


# -- a module with many project imports still follows the one its guard needs -------------------------
def _many_imports_package(tmp_path: Path, guarded: bool) -> Path:
    # Written the way TransformerEngine's distributed.py is: two dozen sibling imports, then a
    # version helper from .torch_version guarding the pre-2.4 autocast API. Each import tries
    # several paths (mod.py, mod/__init__.py, ...); only the modules really parsed count
    # against the per-file bound (before, the paths that held nothing used it up).
    files = {"pkg/__init__.py": "", "pkg/ops/__init__.py": "", "pkg/torch_version.py": """
        import functools

        import torch
        from packaging.version import Version as PkgVersion


        @functools.lru_cache(maxsize=None)
        def torch_version() -> tuple[int, ...]:
            return PkgVersion(str(torch.__version__)).release
        """}
    imports = []
    for i in range(20):
        files[f"pkg/ops/util{i}.py"] = f"def is_enabled():\n    return {i} % 2 == 0\n"
        imports.append(f"from .ops.util{i} import is_enabled as feature_{i}_enabled")
    body = ("    if torch_version() >= (2, 4, 0):\n        return torch.amp.autocast('cuda')\n    else:\n"
            "        return torch.cuda.amp.autocast()\n") if guarded else "    return torch.cuda.amp.autocast()\n"
    files["pkg/distributed.py"] = ("import torch\n" + "\n".join(imports) + "\nfrom .torch_version import torch_version\n"
                                   "\n\ndef autocast_ctx(x):\n"
                                   + "".join(f"    if feature_{i}_enabled():\n        x = x + {i}\n" for i in range(20)) + body)
    for name, text in files.items():
        p = tmp_path / name
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(textwrap.dedent(text).lstrip())
    return tmp_path / "pkg" / "distributed.py"


def test_many_imports_do_not_use_up_the_module_bound(tmp_path):
    unguarded = findings(_many_imports_package(tmp_path / "a", guarded=False), gpus=("H100",), select=["AIC203"])
    assert [(c, line) for c, _, line, _ in unguarded] == [("AIC203", 66)]
    # Unpinned, the call is judged against the newest torch, where its else-branch never runs.
    assert findings(_many_imports_package(tmp_path / "b", guarded=True), gpus=("H100",), select=["AIC203"]) == []


# -- a library's own repository tests its source at HEAD, not a release ------------------------------
OWN_TEST = """
    import torch
    from flash_attn import flash_attn_func


    def test_split_kv():
        q = torch.randn(2, 128, 8, 64, device="cuda", dtype=torch.float16)
        out = flash_attn_func(q, q, q, causal=True, num_splits=4)
        assert out.shape == q.shape
    """


def test_a_librarys_own_tests_are_not_judged_against_its_releases(tmp_path):
    # flash-attention's tests/test_flash_attn.py passes keywords its HEAD added before any
    # release had them; the repository holds setup.py and flash_attn/__init__.py.
    write(tmp_path / "flash-attention", {"setup.py": "from setuptools import setup\nsetup(name='flash_attn')\n",
                                         "flash_attn/__init__.py": "from .api import flash_attn_func\n",
                                         "flash_attn/api.py": "def flash_attn_func(q, k, v, causal=False, num_splits=1):\n"
                                                              "    return q\n",
                                         "tests/pyproject.toml": "[tool.pytest.ini_options]\n",
                                         "tests/test_split.py": OWN_TEST})
    assert findings(tmp_path / "flash-attention" / "tests" / "test_split.py", select=["AIC202"]) == []
    # The same test in a project that only uses the library is judged against its releases.
    write(tmp_path / "user", {"pyproject.toml": "[project]\nname = 'user'\n", "tests/test_split.py": OWN_TEST})
    got = findings(tmp_path / "user" / "tests" / "test_split.py", select=["AIC202"])
    assert [(c, line) for c, _, line, _ in got] == [("AIC202", 7)]
    assert "no flash-attn release" in got[0][3] and "'num_splits'" in got[0][3]


# -- a library's own repository: its tests' skip helpers live in the library's package --------------
VLLM_PLATFORMS = """
    import torch


    class CudaPlatform:
        def is_cuda(self):
            return True

        def is_device_capability_family(self, major):
            return torch.cuda.get_device_capability()[0] == major // 10


    current_platform = CudaPlatform()
    """

VLLM_FA_UTILS = """
    from vllm.platforms import current_platform


    def flash_attn_supports_mla():
        if current_platform.is_cuda():
            return current_platform.is_device_capability_family(90)
        return False
    """

VLLM_MLA_TEST = """
    import pytest
    import torch

    from vllm.vllm_flash_attn import flash_attn_varlen_func

    KV_LORA_RANK = 512
    QK_ROPE_HEAD_DIM = 64


    def test_mla_decode():
        from vllm.v1.attention.backends.fa_utils import flash_attn_supports_mla
{skip}
        q_pe = torch.randn(8, 16, QK_ROPE_HEAD_DIM, device="cuda", dtype=torch.bfloat16)
        cache = torch.randn(64, KV_LORA_RANK + QK_ROPE_HEAD_DIM, device="cuda", dtype=torch.bfloat16)
        out = flash_attn_varlen_func(
            q=q_pe,
            k=cache[..., KV_LORA_RANK:].unsqueeze(-2),
            v=cache[..., :KV_LORA_RANK].unsqueeze(-2),
            max_seqlen_q=1,
            max_seqlen_k=64,
            causal=True,
            fa_version=3,
        )
        assert out.isfinite().all()
    """

_VLLM_SKIP = ("        if not flash_attn_supports_mla():\n"
              "            pytest.skip(\"FA3 MLA needs Hopper\")")


def _vllm_tree(root: Path, skip: bool, own: bool) -> Path:
    files = {"vllm/__init__.py": "", "vllm/platforms/__init__.py": VLLM_PLATFORMS,
             "vllm/v1/__init__.py": "", "vllm/v1/attention/__init__.py": "",
             "vllm/v1/attention/backends/__init__.py": "",
             "vllm/v1/attention/backends/fa_utils.py": VLLM_FA_UTILS,
             "tests/kernels/test_mla.py": VLLM_MLA_TEST.replace("{skip}", _VLLM_SKIP if skip else "")}
    if own:
        files["setup.py"] = "from setuptools import setup\nsetup(name='vllm')\n"
    write(root, files)
    return root / "tests" / "kernels" / "test_mla.py"


def test_a_librarys_own_tests_follow_its_skip_helpers(tmp_path, monkeypatch):
    # Linting vLLM itself: the test's skip helper lives in vllm.*, a package the rules also
    # know as a library. Its own source is followed, so the Hopper-only check guards the call.
    # Run from the folder holding the trees: the project root, inside which files are read.
    monkeypatch.chdir(tmp_path)
    assert findings(_vllm_tree(tmp_path / "a", skip=True, own=True), select=["AIC101"]) == []
    # vLLM's helper also imports current_platform inside the function: the probe is still read
    local = _vllm_tree(tmp_path / "d", skip=True, own=True)
    (tmp_path / "d" / "vllm/v1/attention/backends/fa_utils.py").write_text(
        "def flash_attn_supports_mla():\n    from vllm.platforms import current_platform\n\n"
        "    if current_platform.is_cuda():\n        return current_platform.is_device_capability_family(90)\n"
        "    return False\n")
    assert findings(local, select=["AIC101"]) == []
    # The same test without its skip is reported on the A100.
    got = findings(_vllm_tree(tmp_path / "b", skip=False, own=True), select=["AIC101"])
    assert [(c, line) for c, _, line, _ in got] == [("AIC101", 15)]
    assert "sm_80 (A100)" in got[0][3]
    # A project that only holds a folder named vllm (no setup.py or pyproject declaring it)
    # is a user of the library: vllm.* is the release, and its modules are not read.
    got = findings(_vllm_tree(tmp_path / "c", skip=True, own=False), select=["AIC101"])
    assert [(c, line) for c, _, line, _ in got] == [("AIC101", 16)]


TE_DOC_EXAMPLE = """
    import torch
    import transformer_engine.pytorch as te
    from transformer_engine.common.recipe import DelayedScaling, Format

    recipe = DelayedScaling(fp8_format=Format.HYBRID, amax_history_len=16)
    layer = te.Linear(768, 768).cuda()
    x = torch.randn(32, 768, device="cuda")
    with te.autocast(enabled=True, recipe=recipe):
        y = layer(x)
    """


def test_a_librarys_own_examples_keep_the_library_the_rules_model(tmp_path, monkeypatch):
    # Linting TransformerEngine itself: its docs' examples build recipes from the package's
    # own source. Those classes stay the library's recipes (only functions are followed),
    # so the FP8 example is still reported on the A100.
    monkeypatch.chdir(tmp_path)
    write(tmp_path / "te", {"setup.py": "from setuptools import setup\nsetup(name='transformer_engine')\n",
                            "transformer_engine/__init__.py": "",
                            "transformer_engine/common/__init__.py": "",
                            "transformer_engine/common/recipe/__init__.py":
                                "class Format:\n    HYBRID = 'hybrid'\n\n\n"
                                "class DelayedScaling:\n    def __init__(self, fp8_format=Format.HYBRID, amax_history_len=1024):\n"
                                "        self.fp8_format = fp8_format\n",
                            "transformer_engine/pytorch/__init__.py":
                                "from contextlib import contextmanager\n\n\n@contextmanager\n"
                                "def autocast(enabled=True, recipe=None):\n    yield\n",
                            "docs/example.py": TE_DOC_EXAMPLE})
    got = findings(tmp_path / "te" / "docs" / "example.py", select=["AIC102"])
    assert [(c, line) for c, _, line, _ in got] == [("AIC102", 8)]
    assert "DelayedScaling" in got[0][3] and "sm_80 (A100)" in got[0][3]


# -- a module followed, then linted, is parsed once (issue 29 item 2) --------------------------------
def test_a_module_followed_then_linted_is_parsed_once(tmp_path, monkeypatch):
    """A worker lints the largest files first, and they import the smaller ones: a module
    parsed to be followed is not parsed again when its own turn comes, and the findings
    are those of a fresh parse."""
    import libcst as cst

    from aicompat.model import project
    from aicompat.run import linter

    write(tmp_path / "pkg", {
        "config.py": MLA_CONFIG.format(v=128),
        "caps.py": """
            import torch


            def has_fp8():
                return torch.cuda.get_device_capability() >= (8, 9)
            """,
        "ops.py": """
            import torch
            from flash_attn import flash_attn_func

            from .caps import has_fp8
            from .config import NUM_HEADS, V_HEAD_DIM, qk_head_dim


            def attend(b, s):
                q = torch.randn(b, s, NUM_HEADS, qk_head_dim(), dtype=torch.bfloat16, device="cuda")
                v = torch.randn(b, s, NUM_HEADS, V_HEAD_DIM, dtype=torch.bfloat16, device="cuda")
                return flash_attn_func(q, q, v)


            def mm(a, b, s):
                if has_fp8():
                    return torch._scaled_mm(a, b, scale_a=s, scale_b=s)
                return a @ b
            """,
    })
    parsed: list[bytes] = []
    real = cst.parse_module

    def counting(data, *a, **k):
        parsed.append(bytes(data[:60]))
        return real(data, *a, **k)

    monkeypatch.setattr(project.cst, "parse_module", counting)
    monkeypatch.setattr(linter.cst, "parse_module", counting)
    pkg = tmp_path / "pkg"
    order = [pkg / "ops.py", pkg / "caps.py", pkg / "config.py"]  # the importer first
    project._cache.clear()
    shared = findings_of(order)
    assert len(parsed) == len(set(parsed)) == 3
    assert [c for c, *_ in shared] == ["AIC101"]  # the V head dim of the config module; caps' guard holds
    monkeypatch.setattr(linter, "linted_tree", lambda *a: None)
    project._cache.clear()
    parsed.clear()
    assert findings_of(order) == shared and len(parsed) == 4  # caps.py twice (config.py is only followed)


def findings_of(paths, gpus=("A100", "H100")):
    return sorted((d.code, Path(d.path).name, d.line, d.message)
                  for d in lint_paths(list(paths), Target(gpus=list(gpus)), use_config=False))


# -- a call of the project's own function that binds to no parameter of its def -----------------------
KV_INTERFACE = """
    import torch


    def attn_with_kvcache(q, k_cache, v_cache, cache_seqlens=None, causal=False, num_splits=0,
                          q_descale=None, k_descale=None, v_descale=None, pack_gqa=None):
        return q
    """

KV_BENCH = """
    import torch

    import kv_interface


    def bench(batch, seqlen, splits):
        q = torch.randn(batch, 1, 16, 128, device="cuda", dtype=torch.bfloat16)
        k_cache = torch.randn(batch, seqlen, 16, 128, device="cuda", dtype=torch.bfloat16)
        v_cache = torch.randn_like(k_cache)
        lens = torch.full((batch,), seqlen, dtype=torch.int32, device="cuda")
        return kv_interface.attn_with_kvcache(q, k_cache, v_cache, cache_seqlens=lens, causal=True,
                                             num_splits=splits, {extra})
    """


@pytest.mark.parametrize("extra, expected", [
    ("gqa_parallel=True", "keyword 'gqa_parallel' is not a parameter of the project's own attn_with_kvcache() "
                          "(line 4 of kv_interface.py): TypeError on every target; remove it"),
    ("descale_q=None", "keyword 'descale_q' is not a parameter of the project's own attn_with_kvcache() "
                       "(line 4 of kv_interface.py): TypeError on every target; did you mean 'q_descale'?"),
    ("pack_gqa=True", None),  # the def takes it: clean
])
def test_a_keyword_the_projects_own_def_does_not_take(tmp_path, extra, expected):
    write(tmp_path, {"pyproject.toml": "[project]\nname = 'kv'\n", "kv_interface.py": KV_INTERFACE,
                     "bench_kv.py": KV_BENCH.format(extra=extra)})
    got = findings(tmp_path / "bench_kv.py", select=["AIC202"])
    assert [m.split(": ", 1)[1] for _c, _f, _l, m in got] == ([expected] if expected else [])


@pytest.mark.parametrize("interface", [
    KV_INTERFACE.replace("    def attn", "    @torch.compile\n    def attn"),  # a wrapper may take anything
    KV_INTERFACE.replace("pack_gqa=None):", "pack_gqa=None, **kwargs):"),
])
def test_a_def_that_may_take_any_keyword_is_not_judged(tmp_path, interface):
    write(tmp_path, {"pyproject.toml": "[project]\nname = 'kv'\n", "kv_interface.py": interface,
                     "bench_kv.py": KV_BENCH.format(extra="gqa_parallel=True")})
    assert findings(tmp_path / "bench_kv.py", select=["AIC202"]) == []


FA3_BENCH = """
    import torch
    from flash_attn_interface import flash_attn_func


    def run(q, k, v, scale):
        return flash_attn_func(q, k, v, causal=True, {descale}=scale)
    """


@pytest.mark.parametrize("descale, codes", [
    # unpinned: judged on the newest FA3, which renamed descale_q; each fact of the call is said
    ("descale_q", ["AIC106", "AIC202"]),
    ("q_descale", ["AIC106"]),
])
def test_every_fact_of_a_call_is_said(tmp_path, descale, codes):
    write(tmp_path, {"bench_fa3.py": FA3_BENCH.format(descale=descale)})
    got = findings(tmp_path / "bench_fa3.py", gpus=("H100", "B200"), select=["AIC202", "AIC106"])
    assert [c for c, _f, _l, _m in got] == codes
