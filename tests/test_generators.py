"""tools/build_inductor_options.py and tools/build_compile_table.py: the readers on
small sources written like torch's, and the shipped tables against the real wheels
where this machine has some (CI has no network: those tests skip)."""
import importlib.util
import os
import sys
import zipfile
from pathlib import Path

import pytest

from aicompat.base.toml_compat import tomllib

ROOT = Path(__file__).resolve().parent.parent
TOOLS = ROOT / "tools"


def _tool(name):
    if str(TOOLS) not in sys.path:
        sys.path.insert(0, str(TOOLS))
    spec = importlib.util.spec_from_file_location(name, TOOLS / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


inductor = _tool("build_inductor_options")
compile_table = _tool("build_compile_table")
wheels = _tool("torch_wheels")


# -- the readers ------------------------------------------------------------------------

CONFIG = '''\
import os
from torch.utils._config_module import inherit_fields_from, install_config_module

debug = False
max_autotune: bool = os.environ.get("TORCHINDUCTOR_MAX_AUTOTUNE") == "1"
_profile_var = ""
if os.environ.get("X"):
    fx_graph_cache = True
else:
    fx_graph_cache = False

def decide_compile_threads():
    threads = 1
    return threads

class triton:
    cudagraphs = False
    autotune_pointwise: bool = True

class cutlass:
    cutlass_dir = ""

@inherit_fields_from(cutlass)
class cuda(cutlass):
    arch = None

install_config_module(sys.modules[__name__])
'''


def test_config_keys_are_module_and_class_assignments():
    assert inductor.config_keys(CONFIG) == {
        "debug", "max_autotune", "_profile_var", "fx_graph_cache", "triton.cudagraphs",
        "triton.autotune_pointwise", "cutlass.cutlass_dir", "cuda.arch", "cuda.cutlass_dir"}


INIT_OLD = '''\
class _TorchCompileInductorWrapper:
    def apply_options(self, options):
        if not options:
            return

        from torch._inductor import config
        current_config: Dict[str, Any] = config.shallow_copy_dict()

        for key, val in options.items():
            attr_name = key.replace("-", "_")
            if attr_name not in current_config:
                raise RuntimeError(
                    f"Unexpected optimization option {key}, known options are {list(current_config.keys())}"
                )
'''


def test_apply_options_says_where_it_rejects_a_key():
    ao = inductor.apply_options(INIT_OLD)
    assert ao["error"] == "Unexpected optimization option {key}, known options are {list(current_config.keys())}"
    assert (ao["def"], ao["check"], ao["raise_line"], ao["msg_lines"]) == (2, 11, 12, "L13")
    assert ao["keys_from"] == "current_config: Dict[str, Any] = config.shallow_copy_dict()"


def test_spans_split_where_a_key_leaves_and_returns():
    rel = ["2.0.0", "2.1.0", "2.2.0", "2.3.0"]
    assert inductor.spans([True, False, True, True], rel) == ["2.0.0", "2.0.0", "2.2.0", "2.3.0"]
    assert inductor.spans([False, True, True, False], rel) == ["2.1.0", "2.2.0"]


DEBUGGING = '''\
from .registry import register_debug_backend as register_backend

@register_backend
def eager(gm, fake_tensor_inputs, **kwargs):
    return gm.forward

@register_backend(name="ts")
def torchscript(gm, fake_tensor_inputs):
    return torch.jit.script(gm)

aot_eager = aot_autograd(fw_compiler=boxed_nop)
register_backend(name="aot_eager", compiler_fn=aot_eager)
'''

TORCHXLA = '''\
from .registry import register_backend, register_experimental_backend

@register_experimental_backend
def openxla_eval(model, fake_tensor_inputs):
    return xla_backend_helper(model, fake_tensor_inputs)

if is_onnxrt_backend_supported():
    register_backend(name="onnxrt", compiler_fn=torch_compile_backend)
else:
    register_backend(name="onnxrt", compiler_fn=information_displaying_backend)

def later():
    register_backend(name="not_at_import", compiler_fn=later)
'''


def test_registrations_follow_the_import_alias_for_tags():
    assert compile_table.registrations(DEBUGGING) == {"eager": ("debug",), "ts": ("debug",), "aot_eager": ("debug",)}
    assert compile_table.registrations(TORCHXLA) == {"openxla_eval": ("experimental",), "onnxrt": ()}


EXC_214 = '''\
class InvalidBackend(TorchDynamoException):
    def __init__(self, name: str, suggestions: list[str] | None = None) -> None:
        msg = f"Invalid backend: {name!r}"
        msg += (
            f", did you mean: {', '.join(map(repr, suggestions))}?"
            if suggestions
            else "."
        )
        msg += " See `torch._dynamo.list_backends()` for available backends."
        super().__init__(msg)
'''

EXC_213 = '''\
class InvalidBackend(TorchDynamoException):
    def __init__(self, name: str) -> None:
        super().__init__(
            f"Invalid backend: {name!r}, see `torch._dynamo.list_backends()` for available backends."
        )
'''


def _fake_wheel(tmp_path, version, files):
    path = tmp_path / f"torch-{version}-cp311-none-macosx_11_0_arm64.whl"
    with zipfile.ZipFile(path, "w") as zf:
        for name, text in files.items():
            zf.writestr(name, text)
    return wheels.Wheel(path)


def test_invalid_backend_message_with_and_without_close_matches(tmp_path):
    with _fake_wheel(tmp_path, "2.14.0", {compile_table.EXC: EXC_214}) as w:
        plain, suggest, line = compile_table.invalid_backend(w)
    assert plain == "Invalid backend: {name!r}. See `torch._dynamo.list_backends()` for available backends."
    assert suggest == ("Invalid backend: {name!r}, did you mean: {suggestions}? See `torch._dynamo.list_backends()` "
                       "for available backends.")
    assert line == 1
    with _fake_wheel(tmp_path, "2.13.0", {compile_table.EXC: EXC_213}) as w:
        assert compile_table.invalid_backend(w) == (
            "Invalid backend: {name!r}, see `torch._dynamo.list_backends()` for available backends.", None, 1)
    with _fake_wheel(tmp_path, "2.0.0", {compile_table.EXC: "class Unsupported(Exception):\n    pass\n"}) as w:
        assert compile_table.invalid_backend(w) == (None, None, None)  # 2.0: KeyError, from the hand file


def test_modes_from_the_dict_or_from_apply_mode(tmp_path):
    inductor_init = ('def list_mode_options(mode=None, dynamic=None):\n'
                     '    mode_options: dict[str, dict[str, bool]] = {\n'
                     '        "default": {},\n        "lite": lite_mode_options,\n'
                     '        "reduce-overhead": {"triton.cudagraphs": True},\n    }\n'
                     '    return mode_options[mode] if mode else mode_options\n')
    with _fake_wheel(tmp_path, "2.10.0", {compile_table.INDUCTOR_INIT: inductor_init}) as w:
        assert compile_table.modes(w) == (["default", "lite", "reduce-overhead"],
                                          "torch/_inductor/__init__.py L1 list_mode_options")
    apply_mode = ('class _TorchCompileInductorWrapper:\n    def apply_mode(self, mode):\n'
                  '        if mode is None or mode == "default":\n            pass\n'
                  '        elif mode == "reduce-overhead":\n            self.apply_options({})\n'
                  '        elif mode == "max-autotune":\n            self.apply_options({})\n')
    with _fake_wheel(tmp_path, "2.0.0", {compile_table.INIT: apply_mode}) as w:
        assert compile_table.modes(w)[0] == ["default", "reduce-overhead", "max-autotune"]


def test_shipped_tables_say_they_are_generated():
    for name, tool in (("inductor_options.toml", "build_inductor_options.py"), ("compile.toml", "build_compile_table.py")):
        text = (ROOT / "version_matrix" / name).read_text()
        assert f"# GENERATED by tools/{tool}" in text


# -- against the real wheels ------------------------------------------------------------

def _wheel_dirs():
    env = os.environ.get("AICOMPAT_TORCH_WHEELS")
    return [Path(p) for p in env.split(os.pathsep)] if env else [Path("/tmp/whl")]


def _local_wheels(limit=2):
    """Up to ``limit`` of the releases the tables cover whose wheels are on this machine,
    the oldest and the newest first (set AICOMPAT_TORCH_WHEELS to a folder of them)."""
    found = []
    for v in wheels.RELEASES:
        for d in _wheel_dirs():
            w = wheels.find_wheel(v, d) if d.is_dir() else None
            if w is not None:
                found.append(w)
                break
    return (found[:1] + found[-1:] if len(found) > 1 else found)[:limit]


LOCAL = _local_wheels()
needs_wheels = pytest.mark.skipif(not LOCAL, reason="no torch macOS arm64 wheel on this machine (download one with "
                                  "pip, see version_matrix/README.md, and set AICOMPAT_TORCH_WHEELS)")


def _committed(name):
    with open(ROOT / "version_matrix" / name, "rb") as fh:
        return tomllib.load(fh)


@needs_wheels
@pytest.mark.parametrize("path", LOCAL, ids=lambda p: p.name)
def test_inductor_entry_is_what_the_wheel_says(path):
    doc = _committed("inductor_options.toml")
    with wheels.Wheel(path) as w:
        keys, entry = inductor.release_facts(w, inductor.load_hand())
    assert doc["release"][w.version] == entry
    releases = list(doc["release"])
    table = {k for k, spans in doc["keys"].items()
             if any(releases.index(spans[i]) <= releases.index(w.version) <= releases.index(spans[i + 1])
                    for i in range(0, len(spans), 2))}
    assert table == keys


@needs_wheels
@pytest.mark.parametrize("path", LOCAL, ids=lambda p: p.name)
def test_compile_entry_is_what_the_wheel_says(path):
    doc = _committed("compile.toml")
    with wheels.Wheel(path) as w:
        entry = compile_table.release_entry(w, compile_table.load_hand())
    assert doc["release"][w.version] == entry
