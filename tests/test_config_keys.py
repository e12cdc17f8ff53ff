"""Config-module keys (version_matrix/config/torch.toml, tools/build_config_keys.py): setting,
reading, setattr/getattr and patch() of a key the pinned torch lacks (AIC201), the guards that ask
hasattr/getattr on a config module, and the generator's reading of config.py sources. Every
failing case has a fixed twin that is clean."""
import importlib.util
import sys
from pathlib import Path

from conftest import lint

from aicompat.base.toml_compat import tomllib

ROOT = Path(__file__).resolve().parent.parent


def _tool(name):
    tools = ROOT / "tools"
    if str(tools) not in sys.path:
        sys.path.insert(0, str(tools))
    spec = importlib.util.spec_from_file_location(name, tools / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def found(code, pin, select=("AIC201",)):
    return [(d.line, d.column, d.message) for d in lint(code, pins={"torch": pin}, select=list(select))]


# -- a training script that sets inductor options from a dict in a helper -----------------------
TRAIN = '''\
import torch
import torch._inductor.config as inductor_config

INDUCTOR_OPTIONS = {
    "coordinate_descent_tuning": True,
    "epilogue_fusion": True,
    {extra}
}


def configure_inductor(options):
    for key, value in options.items():
        setattr(inductor_config, key, value)


def main(model):
    configure_inductor(INDUCTOR_OPTIONS)
    return torch.compile(model, mode="max-autotune")
'''


def test_setattr_of_keys_from_a_dict_in_a_helper():
    bad = found(TRAIN.replace("{extra}", '"freezing": True,'), "2.0.1")
    assert bad == [(13, 9, "torch._inductor.config.coordinate_descent_tuning is not a config key in torch 2.0.1 "
                           "(added in 2.1.0): setting it raises AttributeError: torch._inductor.config."
                           "coordinate_descent_tuning does not exist; pin torch>=2.1.0; pins allow torch 2.0.1"),
                   (13, 9, "torch._inductor.config.freezing is not a config key in torch 2.0.1 (added in 2.1.0): "
                           "setting it raises AttributeError: torch._inductor.config.freezing does not exist; pin "
                           "torch>=2.1.0; pins allow torch 2.0.1")]
    # fixed twin: the release that has the keys
    assert found(TRAIN.replace("{extra}", '"freezing": True,'), "2.1.0") == []


def test_a_key_no_release_has_names_the_closest():
    bad = found(TRAIN.replace("{extra}", '"coordinate_decent_tuning": True,'), "2.6.0")
    assert [m for _, _, m in bad] == [
        "torch._inductor.config.coordinate_decent_tuning is not a config key in torch 2.6.0 (no torch release "
        "(2.0.0–2.15.0) has it): setting it raises AttributeError: torch._inductor.config.coordinate_decent_tuning "
        "does not exist; did you mean torch._inductor.config.coordinate_descent_tuning?; pins allow torch 2.6.0"]
    assert found(TRAIN.replace("{extra}", '"coordinate_descent_tuning": True,'), "2.6.0") == []


def test_a_key_the_value_model_cannot_tell_is_not_judged():
    code = ('import os\nimport torch._inductor.config as inductor_config\n\n'
            'setattr(inductor_config, os.environ["KNOB"], True)\n')
    assert found(code, "2.0.0") == []


# -- assignments, reads, sub-configs, import forms ------------------------------------------------
SETUP = '''\
import torch
from torch._inductor import config
import torch._dynamo


def setup_compile(limit):
    torch._dynamo.config.{limit_key} = limit
    config.triton.{trees} = True
    config.{abi} = False
    return torch._dynamo.config.{read}
'''


def test_assign_read_and_subconfig_keys():
    code = SETUP.format(limit_key="recompile_limit", trees="cudagraph_trees", abi="abi_compatible",
                        read="inline_inbuilt_nn_modules")
    bad = found(code, "2.0.0")
    assert [(ln, col) for ln, col, _ in bad] == [(7, 5), (8, 5), (9, 5), (10, 12)]
    assert bad[0][2].startswith("torch._dynamo.config.recompile_limit is not a config key in torch 2.0.0 (added in "
                                "2.7.0): setting it raises AttributeError")
    assert bad[1][2] == ("torch._inductor.config.triton.cudagraph_trees is not a config key in torch 2.0.0 (added in "
                         "2.1.0): setting it raises AttributeError: torch._inductor.config.triton.cudagraph_trees does "
                         "not exist; pin torch>=2.1.0; pins allow torch 2.0.0")
    assert bad[2][2].startswith("torch._inductor.config.abi_compatible is not a config key in torch 2.0.0 (present in "
                                "2.3.0–2.5.1)")
    assert "reading it raises AttributeError: torch._dynamo.config.inline_inbuilt_nn_modules does not exist" in bad[3][2]
    # fixed twin: the keys 2.0.0 has
    fixed = SETUP.format(limit_key="cache_size_limit", trees="cudagraphs", abi="cpp_wrapper", read="suppress_errors")
    assert found(fixed, "2.0.0") == []


def test_removed_key_unpinned_is_judged_on_the_newest_release():
    code = "import torch._inductor.config as inductor_config\ninductor_config.abi_compatible = True\n"
    assert [d.message for d in lint(code, select=["AIC201"])] == [
        "torch._inductor.config.abi_compatible is not a config key in torch 2.15.0 (removed in 2.6.0; last in "
        "2.5.1): setting it raises AttributeError: torch._inductor.config.abi_compatible does not exist; torch "
        "unpinned: judged on the newest release 2.15.0"]
    assert lint("import torch._inductor.config as inductor_config\ninductor_config.cpp_wrapper = True\n",
                select=["AIC201"]) == []


# -- patch(): KeyError before 2.6, AttributeError from 2.6 ----------------------------------------
PATCH = '''\
import torch
import torch._inductor.config


@torch._inductor.config.patch({keys})
def compile_step(model, batch):
    return torch.compile(model)(batch)


def run(model, batch):
    with torch._inductor.config.patch("{key}", True):
        return compile_step(model, batch)
'''


def test_patch_error_differs_by_release():
    code = PATCH.format(keys='{"max_autotune": True, "max_autotune_gemm_search_space": "EXHAUSTIVE"}',
                        key="max_autotune_pointwise")
    bad = found(code, ">=2.3,<2.7")
    assert [(ln, col) for ln, col, _ in bad] == [(5, 54)]  # the key where the dict is written
    assert bad[0][2] == (
        "torch._inductor.config.max_autotune_gemm_search_space is not a config key in torch 2.3.0–2.3.1 (added in "
        "2.4.0): the patch raises, when entered, KeyError: 'max_autotune_gemm_search_space'; pin torch>=2.4.0; "
        "pins allow torch 2.3.0–2.6.0")
    newer = found(PATCH.format(keys="compile_threads=1, made_up_knob=2", key="max_autotune"), ">=2.5,<2.7")
    assert newer == [(5, 50, "torch._inductor.config.made_up_knob is not a config key in torch 2.5.0–2.6.0 (no torch "
                             "release (2.0.0–2.15.0) has it): the patch raises, when entered, KeyError: "
                             "'made_up_knob' in 2.5.0–2.5.1, AttributeError: torch._inductor.config.made_up_knob does "
                             "not exist in 2.6.0; pins allow torch 2.5.0–2.6.0")]
    assert found(PATCH.format(keys="compile_threads=1", key="max_autotune"), ">=2.5,<2.7") == []


def test_patch_inside_try_that_catches_the_error_is_not_reported():
    code = ('import torch._inductor.config as c\n\ntry:\n    with c.patch(made_up_knob=1):\n        pass\n'
            'except (KeyError, AttributeError):\n    pass\n')
    assert found(code, "2.5.0") == []


# -- guards -------------------------------------------------------------------------------------
GUARDED = '''\
import torch
import torch._inductor.config as inductor_config

HAS_FREEZING = {probe}


def tune():
    if HAS_FREEZING:
        inductor_config.freezing = True
    if not hasattr(torch._dynamo.config, "inline_inbuilt_nn_modules"):
        return
    torch._dynamo.config.inline_inbuilt_nn_modules = True
'''


def test_hasattr_and_getattr_default_guard_config_keys():
    for probe in ('hasattr(inductor_config, "freezing")',
                  'getattr(inductor_config, "freezing", None) is not None'):
        assert found(GUARDED.format(probe=probe), ">=2.0,<2.5") == [], probe
    # unguarded twin
    bad = found(GUARDED.format(probe="True"), ">=2.0,<2.5")
    assert [(ln, col) for ln, col, _ in bad] == [(9, 9)]
    assert "in torch 2.0.0–2.0.1 (added in 2.1.0)" in bad[0][2]


# -- the committed table --------------------------------------------------------------------------
def _table():
    with open(ROOT / "version_matrix" / "config" / "torch.toml", "rb") as fh:
        return tomllib.load(fh)


def test_table_covers_every_torch_release_with_wheel_and_digest():
    t = _table()
    with open(ROOT / "version_matrix" / "releases.toml", "rb") as fh:
        releases = tomllib.load(fh)["package"]["torch"]["releases"]
    assert t["meta"]["releases"] == releases  # 2.0.0 ... 2.15.0, patch releases included
    for v in releases:
        e = t["release"][v]
        assert e["wheel"].startswith(f"torch-{v}-") and len(e["sha256"]) == 64
        assert e["set_error"] == "AttributeError: {module}.{name} does not exist"  # every release refuses a key
    # patch(): config._config[key] (KeyError) until 2.5.1, config.__getattr__(key) from 2.6.0
    assert t["release"]["2.5.1"]["patch_error"] == "KeyError: {name!r}"
    assert t["release"]["2.6.0"]["patch_error"] == "AttributeError: {module}.{name} does not exist"
    assert sorted(t["module"]) == ["torch._dynamo.config", "torch._export.config", "torch._functorch.config",
                                   "torch._inductor.config", "torch._inductor.config_comms", "torch.compiler.config",
                                   "torch.distributed.config", "torch.fx.experimental._config",
                                   "torch.utils.serialization.config"]


# -- the generator's reader ---------------------------------------------------------------------------
SOURCE = '''\
import os
import sys
from typing import TYPE_CHECKING
from torch.utils._config_module import Config, inherit_fields_from, install_config_module

debug = False
threads: int = 1
fn = lambda: 1
if os.environ.get("FB"):
    internal_only = True
if os.environ.get("X"):
    both = 1
else:
    both = 2
try:
    import fancy
    fancy_ok = True
except ImportError:
    fancy_ok = False
old = 1
del old
knob = Config(default=False, deprecated=True, deprecation_message="use threads instead")


def helper():
    return 1


class triton:
    cudagraphs = False

    class inner:
        depth = 2


class cutlass:
    cutlass_dir = ""
    _private = 1


@inherit_fields_from(cutlass)
class cuda:
    arch = None


if TYPE_CHECKING:
    never = 1

install_config_module(sys.modules[__name__])
'''


def test_reader_keys_unsure_names_and_deprecations():
    gen = _tool("build_config_keys")
    import ast

    assert gen._installs(ast.parse(SOURCE))
    ns = gen.read_config_module(SOURCE)
    assert sorted(ns.sure) == ["both", "cuda.arch", "cuda.cutlass_dir", "cutlass._private", "cutlass.cutlass_dir",
                               "debug", "fancy_ok", "knob", "threads", "triton.cudagraphs", "triton.inner.depth"]
    assert sorted(ns.unsure) == ["internal_only"]  # assigned only under a condition: unknown, not missing
    assert {"fn", "helper", "triton", "cutlass", "cuda", "os", "sys"} <= set(ns.names)
    assert "never" not in ns.sure and "never" not in ns.names and "old" not in ns.sure
    assert ns.deprecated == {"knob": "use threads instead"}
