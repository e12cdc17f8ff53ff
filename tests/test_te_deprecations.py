"""Transformer Engine's deprecations, read per release from its source by
tools/te_deprecations.py (version_matrix/te_deprecations.toml), as AIC203 reports
them: the reader on small sources written like TE's, the shipped table, and
training scripts pinned to releases on both sides of the deprecation."""
import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import lint

from aicompat.base.toml_compat import tomllib

ROOT = Path(__file__).resolve().parent.parent
spec = importlib.util.spec_from_file_location("te_deprecations", ROOT / "tools" / "te_deprecations.py")
ted = importlib.util.module_from_spec(spec)
sys.modules["te_deprecations"] = ted  # its dataclasses look their module up
spec.loader.exec_module(ted)

TABLE = tomllib.loads((ROOT / "version_matrix" / "te_deprecations.toml").read_text())["call"]
HAND = tomllib.loads((ROOT / "version_matrix" / "deprecations.toml").read_text())["call"]


# -- the reader ----------------------------------------------------------------------------
QUANTIZATION = '''\
import warnings
from contextlib import contextmanager


@contextmanager
def fp8_model_init(enabled=True, recipe=None, preserve_high_precision_init_val=False):
    """
    .. warning:: fp8_model_init is deprecated.
    """
    warnings.warn(
        "fp8_model_init is deprecated and will be removed in a future release. "
        "Use quantized_model_init(...) instead.",
        category=DeprecationWarning,
        stacklevel=2,
    )
    with quantized_model_init(enabled=enabled, recipe=recipe,
                              preserve_high_precision_init_val=preserve_high_precision_init_val):
        yield


@contextmanager
def quantized_model_init(enabled=True, recipe=None, preserve_high_precision_init_val=False):
    yield


def fp8_autocast(enabled=True, calibrating=False, fp8_recipe=None, fp8_group=None, _graph=False):
    warnings.warn("fp8_autocast is deprecated.", DeprecationWarning, stacklevel=2)
    return autocast(enabled=enabled, calibrating=calibrating, recipe=fp8_recipe,
                    amax_reduction_group=fp8_group, _graph=_graph)


class autocast:
    def __init__(self, enabled=True, calibrating=False, recipe=None, amax_reduction_group=None, _graph=False):
        self.enabled = enabled


def with_sharding_constraint_by_logical_axes(x, logical_axis_names):
    if not logical_axis_names:
        return x
    warnings.warn("TransformerEngine logical axes are deprecated", DeprecationWarning)
    return x


def checkpoint(function, *args, **kwargs):
    if len(args) > 3 and isinstance(args[0], bool):
        warnings.warn("Passing non-tensor non-keyword arguments is deprecated", DeprecationWarning)
    return function(*args, **kwargs)
'''

INIT = '''\
from .quantization import fp8_model_init, quantized_model_init, fp8_autocast, autocast, checkpoint
from .quantization import with_sharding_constraint_by_logical_axes
'''


class Tree:
    ref = "v9.9"
    origin = "a test tree"

    def __init__(self, files):
        self._files = files

    def files(self):
        yield from self._files.items()


def read(files):
    return {h.qualname: h for h in ted.read_release(Tree(files))}


def test_an_unconditional_warning_that_forwards_names_the_replacement_as_the_package_exports_it():
    hits = read({"transformer_engine/pytorch/__init__.py": INIT,
                 "transformer_engine/pytorch/quantization.py": QUANTIZATION})
    init = hits["transformer_engine.pytorch.fp8_model_init"]
    assert init.replacement == ("transformer_engine.pytorch.quantized_model_init(enabled=..., recipe=..., "
                                "preserve_high_precision_init_val=...)")
    assert init.where == "v9.9 transformer_engine/pytorch/quantization.py:10"
    assert init.message.startswith("fp8_model_init is deprecated and will be removed")
    # the private _graph= is not part of what a user is told to write
    assert hits["transformer_engine.pytorch.fp8_autocast"].replacement == (
        "transformer_engine.pytorch.autocast(enabled=..., calibrating=..., recipe=..., amax_reduction_group=...)")
    assert "transformer_engine.pytorch.quantization.fp8_model_init" in hits
    # a warning behind an early return or an `if` is about some calls only, not the function
    assert "transformer_engine.pytorch.with_sharding_constraint_by_logical_axes" not in hits
    assert "transformer_engine.pytorch.checkpoint" not in hits
    assert "transformer_engine.pytorch.quantized_model_init" not in hits


def test_star_imports_and_deprecated_classes():
    helper = ('import warnings\n__all__ = ["fp8_autocast", "autocast"]\n\n\n'
              'def fp8_autocast(enabled=False, fp8_recipe=None, mesh_resource=None):\n'
              '    warnings.warn("fp8_autocast is deprecated. Use autocast(...) instead.", DeprecationWarning)\n'
              '    return autocast(enabled=enabled, recipe=fp8_recipe, mesh_resource=mesh_resource)\n\n\n'
              'def autocast(enabled=False, recipe=None, mesh_resource=None):\n    return None\n')
    feature = ('import warnings\nfrom .disable_quantization_gemm import DisableQuantizationGEMM\n\n\n'
               'class DisableFP8GEMM(DisableQuantizationGEMM):\n'
               '    def __init__(self, *args, **kwargs):\n'
               '        warnings.warn("DisableFP8GEMM is deprecated.", DeprecationWarning, stacklevel=2)\n'
               '        super().__init__(*args, **kwargs)\n')
    hits = read({"transformer_engine/jax/__init__.py": "from .quantize import fp8_autocast, autocast\n",
                 "transformer_engine/jax/quantize/__init__.py": "from .helper import *\n",
                 "transformer_engine/jax/quantize/helper.py": helper,
                 "transformer_engine/debug/features/disable_fp8_gemm.py": feature,
                 "transformer_engine/debug/features/disable_quantization_gemm.py": "class DisableQuantizationGEMM:\n"
                                                                                    "    pass\n"})
    assert hits["transformer_engine.jax.fp8_autocast"].replacement == (
        "transformer_engine.jax.autocast(enabled=..., recipe=..., mesh_resource=...)")
    assert "transformer_engine.jax.quantize.fp8_autocast" in hits
    gemm = hits["transformer_engine.debug.features.disable_fp8_gemm.DisableFP8GEMM"]
    assert gemm.replacement == "transformer_engine.debug.features.disable_fp8_gemm.DisableQuantizationGEMM"


def test_a_post_release_is_not_read_from_the_final_releases_tag():
    assert ted.tag_of("2.9.0") == "v2.9"
    assert ted.tag_of("2.14.1") == "v2.14.1"
    assert ted.tag_of("2.6.0.post1") is None


# -- the shipped table -----------------------------------------------------------------------
def test_the_hand_entries_are_replaced_by_read_ones():
    assert not [k for k in HAND if k.startswith("transformer_engine.")]
    e = TABLE["transformer_engine.pytorch.fp8_model_init"]
    assert e["releases"][0] == "2.9.0" and "2.8.0" not in e["releases"]
    assert e["replacement"].startswith("transformer_engine.pytorch.quantized_model_init(")
    # one provenance (tag or wheel, path, line) per release that warns
    for name, e in TABLE.items():
        assert len(e["source"].split("; ")) == len(e["releases"]), name


MIRRORS = [Path("/tmp/repos/TransformerEngine"), Path("/work/.mirror/NVIDIA+TransformerEngine/repo")]
GIT = next((p for p in MIRRORS if p.is_dir() and subprocess.run(
    ["git", "-C", str(p), "rev-parse", "v2.9^{commit}"], capture_output=True).returncode == 0), None)


@pytest.mark.skipif(GIT is None, reason="no TransformerEngine clone with tags here")
def test_the_table_is_what_the_tags_say():
    for release in ("2.8.0", "2.9.0", "2.14.1"):
        got = {h.qualname for h in ted.read_release(ted.GitTree(GIT, ted.tag_of(release)))}
        assert got == {k for k, e in TABLE.items() if release in e["releases"]}, release


# -- AIC203 on training scripts ------------------------------------------------------------------
TRAIN = '''\
import argparse

import torch
import transformer_engine.pytorch as te
from transformer_engine.common import recipe


def build_model(args):
    fp8_recipe = recipe.DelayedScaling(margin=0, amax_history_len=1024, amax_compute_algo="max")
    with te.fp8_model_init(enabled=args.fp8_params, recipe=fp8_recipe):
        model = torch.nn.Sequential(
            te.LayerNormLinear(args.hidden, 4 * args.hidden, bias=True),
            te.Linear(4 * args.hidden, args.hidden, bias=True),
        )
    return model.cuda(), fp8_recipe


def train_step(model, fp8_recipe, batch, optimizer):
    with te.autocast(enabled=True, recipe=fp8_recipe):
        loss = model(batch).float().pow(2).mean()
    loss.backward()
    optimizer.step()
    return loss


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--hidden", type=int, default=1024)
    parser.add_argument("--fp8-params", action="store_true")
    model, fp8_recipe = build_model(parser.parse_args())
'''

FIXED = TRAIN.replace("te.fp8_model_init(", "te.quantized_model_init(")


def aic203(code, pin):
    return [(d.line, d.column, d.message) for d in lint(code, pins={"transformer-engine": pin}) if d.code == "AIC203"]


def test_fp8_model_init_is_reported_where_the_pinned_release_warns():
    assert aic203(TRAIN, "2.10.0") == [
        (10, 10, 'transformer_engine.pytorch.fp8_model_init is deprecated since transformer-engine 2.9.0 (warns '
                 'in transformer-engine 2.10.0: "fp8_model_init is deprecated and will be removed in a future '
                 'release. Use quantized_model_init(enabled=..., recipe=..., preserve_high_precision_init_val=...) '
                 'i…"); use transformer_engine.pytorch.quantized_model_init(enabled=..., recipe=..., '
                 'preserve_high_precision_init_val=...)'),
    ]
    assert aic203(FIXED, "2.10.0") == []


def test_fp8_model_init_is_not_reported_before_it_warns():
    assert aic203(TRAIN, "2.8.0") == []
    assert aic203(TRAIN, ">=2.4,<2.9") == []


def test_a_range_names_the_releases_that_warn():
    (found,) = aic203(TRAIN, ">=2.8,<2.11")
    assert "(warns in transformer-engine 2.9.0–2.10.0:" in found[2]


OLD_IMPORT = '''\
import transformer_engine.pytorch as te
from transformer_engine.pytorch.fp8 import fp8_autocast


def forward(layer, x, fp8_recipe):
    with fp8_autocast(enabled=True, fp8_recipe=fp8_recipe):
        return layer(x)
'''


def test_the_old_module_path_warns_too():
    (found,) = aic203(OLD_IMPORT, "2.12.0")
    assert found[:2] == (6, 10)
    assert found[2].startswith("transformer_engine.pytorch.fp8.fp8_autocast is deprecated since transformer-engine "
                               "2.9.0")
    assert found[2].endswith("; use transformer_engine.pytorch.autocast(enabled=..., calibrating=..., recipe=..., "
                             "amax_reduction_group=...)")
    assert aic203(OLD_IMPORT, "1.13.0") == []
    fixed = OLD_IMPORT.replace("from transformer_engine.pytorch.fp8 import fp8_autocast\n", "").replace(
        "fp8_autocast(enabled=True, fp8_recipe=fp8_recipe)", "te.autocast(enabled=True, recipe=fp8_recipe)")
    assert aic203(fixed, "2.12.0") == []
