"""AIC103 compile-backend against per-release facts read from torch wheels."""
import pytest
from conftest import lint


def aic103(code, pins=None, python="3.11"):
    return [d for d in lint("import torch\n" + code, pins=pins, python=python, select=["AIC103"])]


@pytest.mark.parametrize("backend,torch,flagged", [
    ("inductor", "2.0.0", False),
    ("ipex", "2.0.0", True),            # needs intel_extension_for_pytorch
    ("ipex", "2.1.0", True),            # no longer registered
    ("onnxrt", "2.8.0", True),          # registered, but needs onnxruntime
    ("onnxrt", "2.9.0", True),          # a placeholder from 2.9
    ("aot_eager", "2.13.0", False),     # a debug backend, still registered
    ("openxla", "2.13.0", True),        # needs torch_xla
    ("cudagraphs", "2.13.0", False),
    ("nvprims_nvfuser", "2.0.0", False),
    ("nvprims_nvfuser", "2.1.0", True),
])
def test_backend_per_release(backend, torch, flagged):
    d = aic103(f"m = torch.compile(model, backend={backend!r})\n", pins={"torch": torch}, python="3.10")
    assert bool(d) == flagged, [x.message for x in d]


def test_backend_package_pinned_or_imported_is_fine():
    assert aic103("import torch_xla\nm = torch.compile(model, backend='openxla')\n", pins={"torch": "2.13.0"}) == []


def test_suggests_the_closest_name():
    d = aic103("m = torch.compile(model, backend='inductr')\n", pins={"torch": "2.13.0"})
    assert 'did you mean "inductor"?' in d[0].message


def test_range_names_the_failing_releases():
    d = aic103("m = torch.compile(model, mode='lite')\n", pins={"torch": ">=2.9,<2.11"})
    assert d[0].targets[-2:] == ["torch==2.9.0", "torch==2.9.1"]


@pytest.mark.parametrize("torch,python,flagged", [
    ("2.0.1", "3.10", False), ("2.0.1", "3.11", True), ("2.3.1", "3.12", True), ("2.4.0", "3.12", False),
    ("2.9.0", "3.14", True), ("2.10.0", "3.14", False),
])
def test_python_window(torch, python, flagged):
    d = aic103("f = torch.compile(f)\n", pins={"torch": torch}, python=python)
    assert bool(d) == flagged


def test_guarded_and_callable_forms_are_clean():
    code = ("import sys\nif sys.version_info >= (3, 12):\n    f = f\nelse:\n    f = torch.compile(f, backend=my_backend)\n")
    assert aic103(code, pins={"torch": "2.3.0"}, python="3.12") == []


def test_before_torch_compile_existed():
    d = aic103("m = torch.compile(model)\n", pins={"torch": "1.13.1"}, python="3.10")
    assert len(d) == 1 and "added in 2.0.0" in d[0].message and d[0].targets[-1] == "torch==1.13.1"
    assert aic103("if hasattr(torch, 'compile'):\n    m = torch.compile(model)\n", pins={"torch": "1.13.1"},
                  python="3.10") == []


def test_inductor_option_keys_per_release():
    ok = "m = torch.compile(model, options={'triton.cudagraphs': True, 'max-autotune': True})\n"
    assert aic103(ok, pins={"torch": "2.4.0"}) == []
    d = aic103("m = torch.compile(model, options={'triton.cudagraph': True})\n", pins={"torch": "2.4.0"})
    assert len(d) == 1 and 'did you mean "triton.cudagraphs"?' in d[0].message
    assert 'Unexpected optimization option triton.cudagraph' in d[0].message


SERVE = '''
from torch import nn

DECODE_OPTIONS = {{"{key}": True, "epilogue_fusion": True}}


class Server:
    def __init__(self, model: nn.Module, compile_options: dict):
        self.model = torch.compile(model, fullgraph=True, options=compile_options)


def compile_kwargs(extra):
    return {{"dynamic": False, "options": {{"max_autotune": True, **extra}}}}


def warm_up(model):
    return torch.compile(model, **compile_kwargs({{"{key}": True}}))


server = Server(nn.Linear(8, 8), DECODE_OPTIONS)
'''


def test_option_keys_through_a_parameter_and_a_helper_splat():
    d = aic103(SERVE.format(key="triton.cudagraph"), pins={"torch": "2.6.0"})
    # Both calls are reported on their own line: the one whose options arrive through
    # __init__'s parameter, and the one whose options a helper builds and ** splats.
    assert [(x.line, 'option "triton.cudagraph"' in x.message) for x in d] == [(10, True), (18, True)]
    assert aic103(SERVE.format(key="triton.cudagraphs"), pins={"torch": "2.6.0"}) == []


def test_invalid_backend_message_is_the_releases_own():
    """2.14 names torch's own close matches (exc.py InvalidBackend, read by tools/build_compile_table.py);
    2.0 has no InvalidBackend and raises KeyError. No annotation of the data leaks into the message."""
    near = aic103("m = torch.compile(model, backend='inducter')\n", pins={"torch": "2.14.0"})[0].message
    assert ("\"Invalid backend: 'inducter', did you mean: 'inductor'? See `torch._dynamo.list_backends()` for "
            "available backends.\"; registered by default: cudagraphs, inductor, openxla, tvm") in near
    far = aic103("m = torch.compile(model, backend='nvfuser')\n", pins={"torch": "2.14.0"})[0].message
    assert "\"Invalid backend: 'nvfuser'. See `torch._dynamo.list_backends()` for available backends.\"" in far
    old = aic103("m = torch.compile(model, backend='nvfuser')\n", pins={"torch": "2.0.0"}, python="3.10")[0].message
    assert "\"KeyError: 'nvfuser'\"; did you mean" in old


def test_unknown_option_quotes_the_releases_error(monkeypatch):
    """The message is inductor_options.toml's error of the release, not a copy in the rule."""
    from aicompat.matrix import default_matrix

    rel = default_matrix().section("inductor_options.toml", "release")
    monkeypatch.setitem(rel["2.4.0"], "error", "Unknown key {key}; see {sorted(config)}")
    msg = aic103("m = torch.compile(model, options={'max_autotun': True})\n", pins={"torch": "2.4.0"})[0].message
    assert '"Unknown key max_autotun; see [...]"; did you mean "max_autotune"?' in msg


GUARD_FILTER = '''
import torch


def compile_collectives(fn, cfg):
    opts = {"guard_filter_fn": torch.compiler.skip_guard_on_globals_unsafe} if cfg.get("drop_guards") else {}
    return torch.compile(fn, fullgraph=True, options=opts)


def compile_step(step):
    return torch.compile(step, options={"guard_filter_fn": lambda entries: [False for _ in entries]})
'''


def test_keys_torch_compile_takes_before_the_backend():
    # torch/__init__.py compile() pops "guard_filter_fn" from options from 2.8.0 (vLLM's tests pass it):
    # accepted there whatever the backend; 2.7.0's apply_options refuses it, and the message names the
    # releases that accept it instead of suggesting the same name.
    assert [d for d in lint(GUARD_FILTER, pins={"torch": "2.13.0"}, select=["AIC103"])] == []
    old = [d.message for d in lint(GUARD_FILTER, pins={"torch": "2.7.0"}, select=["AIC103"])]
    assert len(old) == 2 and all('"guard_filter_fn" is accepted by torch 2.8.0-2.15.0' in m for m in old), old


def test_close_match_comes_from_the_failing_release():
    d = aic103("m = torch.compile(model, options={'max_autotune_gem': True})\n", pins={"torch": "2.7.0"})
    assert d[0].message.endswith('did you mean "max_autotune_gemm"?'), d[0].message
