"""AIC201/AIC202 on Transformer Engine code, judged with the pinned TE release
(version_matrix/api/transformer-engine.toml, read statically from every release's
source: TE imports only where its CUDA build loads).

A training step as real code writes it: a config dict holding the recipe choice, a
helper that builds the recipe, a module class of TE layers, the step under TE's
autocast. Each failing case has its fixed twin, clean on the same target."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import lint

from aicompat.matrix import default_matrix
from aicompat.matrix.api_tables import load_package
from aicompat.matrix.target import Target
from aicompat.run.config import build_settings
from aicompat.run.linter import Linter

TABLE = Path(__file__).resolve().parent.parent / "version_matrix" / "api" / "transformer-engine.toml"

TRAIN = '''import torch
import transformer_engine.pytorch as te
from transformer_engine.common import recipe
from transformer_engine.common.recipe import DelayedScaling, Format

CONFIG = {{
    "hidden": 1024,
    "fp8": {{"recipe": "{recipe}", "format": "{format}", "amax_history_len": 16}},
}}


def build_recipe(cfg):
    fp8 = cfg["fp8"]
    fmt = Format.HYBRID if fp8["format"] == "hybrid" else {e4m3}
    if fp8["recipe"] == "block"{guard}:
        return {block}
    return DelayedScaling({delayed})


class Block(torch.nn.Module):
    def __init__(self, hidden):
        super().__init__()
        self.norm_mlp = te.LayerNormMLP(hidden, 4 * hidden, {mlp})
        self.proj = te.Linear(hidden, hidden, bias=True, params_dtype=torch.bfloat16)

    def forward(self, x):
        return self.proj(self.norm_mlp(x))


def train_step(model, batch, optimizer, cfg):
    fp8_recipe = build_recipe(cfg)
    with {autocast}:
        loss = model(batch).float().pow(2).mean()
    loss.backward()
    optimizer.step()
    return loss


if __name__ == "__main__":
    model = Block(CONFIG["hidden"]).cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    train_step(model, torch.randn(8, CONFIG["hidden"], device="cuda"), opt, CONFIG)
'''

BASE = dict(recipe="delayed", format="hybrid", e4m3="Format.E4M3", guard="", block="recipe.MXFP8BlockScaling()",
            delayed='fp8_format=fmt, amax_history_len=fp8["amax_history_len"], amax_compute_algo="max"',
            mlp='activation="gelu"', autocast="te.fp8_autocast(enabled=True, fp8_recipe=fp8_recipe)")


def found(te: str, gpus=("B200",), **parts):
    """Every finding on the training step, TE pinned to ``te`` (torch pinned too: its own pin note aside)."""
    code = TRAIN.format(**{**BASE, **parts})
    return [(d.code, d.line, d.column, d.message) for d in lint(code, gpus=gpus, pins={"transformer-engine": te,
                                                                                            "torch": "2.7.0"})]


def test_the_training_step_is_clean_on_releases_that_have_what_it_calls():
    for te in ("1.9.0", "1.9.0.post1", "2.4.0", "2.8.0"):  # (from 2.9.0 fp8_autocast warns: AIC203)
        assert found(te) == [], te


CASES = [
    # (the part changed, its failing form, its fixed form, the TE pin, config, the finding)
    ("e4m3", "Format.E4M3FN", "Format.E4M3", "2.4.0", {"format": "e4m3"},
     ("AIC201", 14, 59, "transformer_engine.common.recipe.Format.E4M3FN does not exist in any transformer-engine "
                        "release (1.9.0–2.20.2); did you mean transformer_engine.common.recipe.Format.E4M3?")),
    ("delayed", 'fp8_format=fmt, margin=0, interval=1', "fp8_format=fmt, margin=0", "2.4.0", {},
     ("AIC202", 17, 12, "transformer_engine.common.recipe.DelayedScaling: keyword 'interval' is not accepted by "
                        "transformer-engine 2.4.0 (accepted in transformer-engine 1.9.0–2.1.0); pins allow "
                        "transformer-engine 2.4.0; a pydantic dataclass: pydantic >= 1.10 drops a keyword that names "
                        "no field without a word (the setting has no effect), pydantic < 1.10 raises TypeError; the "
                        "releases that took it warned it was \"deprecated and unused\": drop it")),
    # NeMo nemo/collections/diffusion/models/flux/model.py get_fp8_context (HEAD of the mirror): both keywords
    # are gone from 2.4.0, and pydantic drops both, FP8 wgrad included
    ("delayed", "fp8_format=fmt, margin=0, interval=1, override_linear_precision=(False, False, True)",
     "fp8_format=fmt, margin=0", "2.4.0", {},
     ("AIC202", 17, 12, "transformer_engine.common.recipe.DelayedScaling: keyword 'interval' is not accepted by "
                        "transformer-engine 2.4.0 (accepted in transformer-engine 1.9.0–2.1.0); pins allow "
                        "transformer-engine 2.4.0; a pydantic dataclass: pydantic >= 1.10 drops a keyword that names "
                        "no field without a word (the setting has no effect), pydantic < 1.10 raises TypeError; the "
                        "releases that took it warned it was \"deprecated and unused\": drop it; also "
                        "'override_linear_precision' (accepted in transformer-engine 1.9.0–1.13.0)")),
    ("mlp", 'activation_fn="gelu"', 'activation="gelu"', "2.4.0", {},
     ("AIC202", 23, 25, "transformer_engine.pytorch.LayerNormMLP: no transformer-engine release (1.9.0–2.20.2) "
                        "accepts keyword 'activation_fn'; did you mean 'activation'?")),
    ("autocast", "te.autocast(enabled=True, recipe=fp8_recipe)",
     "te.fp8_autocast(enabled=True, fp8_recipe=fp8_recipe)", "2.4.0", {},
     ("AIC201", 32, 10, "transformer_engine.pytorch.autocast is not in transformer-engine 2.4.0 (added in 2.9.0); "
                        "pins allow transformer-engine 2.4.0; before 2.9.0 use transformer_engine.pytorch.fp8_autocast, "
                        "the name it replaces")),
    ("autocast", "te.fp8_autocast(enabled=True, recipe=fp8_recipe)",
     "te.fp8_autocast(enabled=True, fp8_recipe=fp8_recipe)", "2.4.0", {},
     ("AIC202", 32, 10, "transformer_engine.pytorch.fp8_autocast: no transformer-engine release (1.9.0–2.20.2) "
                        "accepts keyword 'recipe'; did you mean 'fp8_recipe'?")),
    ("block", "recipe.MXFP8BlockScaling()", "recipe.DelayedScaling()", "1.13.0", {"recipe": "block"},
     ("AIC201", 16, 16, "transformer_engine.common.recipe.MXFP8BlockScaling is not in transformer-engine 1.13.0 "
                        "(added in 2.1.0); pins allow transformer-engine 1.13.0")),
    ("block", "recipe.Float8CurrentScaling()", "recipe.DelayedScaling()", "2.1.0", {"recipe": "block"},
     ("AIC201", 16, 16, "transformer_engine.common.recipe.Float8CurrentScaling is not in transformer-engine 2.1.0 "
                        "(added in 2.2.0); pins allow transformer-engine 2.1.0")),
    ("block", "recipe.NVFP4BlockScaling()", "recipe.MXFP8BlockScaling()", "2.7.0", {"recipe": "block"},
     ("AIC201", 16, 16, "transformer_engine.common.recipe.NVFP4BlockScaling is not in transformer-engine 2.7.0 "
                        "(added in 2.8.0); pins allow transformer-engine 2.7.0")),
]


@pytest.mark.parametrize("part, bad, good, te, config, finding", CASES, ids=[c[1] for c in CASES])
def test_each_hallucination_or_version_error_and_its_fixed_twin(part, bad, good, te, config, finding):
    assert found(te, **{part: bad}, **config) == [finding]
    assert found(te, **{part: good}, **config) == []


def test_the_release_that_has_it_is_the_other_fix():
    # the failing forms above, pinned to a release that has the name or keyword
    assert found("2.9.0", autocast="te.autocast(enabled=True, recipe=fp8_recipe)") == []
    assert found("2.4.0", block="recipe.MXFP8BlockScaling()", recipe="block") == []
    assert found("2.2.0", block="recipe.Float8CurrentScaling()", recipe="block") == []
    assert found("2.8.0", block="recipe.NVFP4BlockScaling()", recipe="block") == []
    assert found("2.1.0", delayed="fp8_format=fmt, margin=0, interval=1") == []


def test_a_hasattr_guard_judges_only_the_releases_it_lets_through():
    # TE 1.13 has no MXFP8BlockScaling: behind the feature test the call never runs there
    assert found("1.13.0", block="recipe.MXFP8BlockScaling()", recipe="block",
                 guard=' and hasattr(recipe, "MXFP8BlockScaling")') == []
    # the new name where the release has it, the old one before (2.4.0), and the fallback not judged
    # where it never runs (2.9.0 on: fp8_autocast warns there, AIC203)
    code = ("import transformer_engine.pytorch as te\n\n{flag}\n\ndef fp8_context(r):\n"
            "    if {test}:\n        return te.autocast(recipe=r)\n    return te.fp8_autocast(fp8_recipe=r)\n")
    for flag, test in (("", 'hasattr(te, "autocast")'), ('HAS_AUTOCAST = hasattr(te, "autocast")\n', "HAS_AUTOCAST")):
        for te in ("2.4.0", "2.9.0", "2.20.2"):
            assert lint(code.format(flag=flag, test=test), pins={"transformer-engine": te}) == [], (test, te)
    unguarded = code.format(flag="", test="True")
    assert [(d.code, d.line) for d in lint(unguarded, pins={"transformer-engine": "2.4.0"})] == [("AIC201", 7)]
    # the fallback alone runs on 2.20.2, where fp8_autocast warns (AIC203)
    fallback_only = code.format(flag="", test="False")
    assert [(d.code, d.line) for d in lint(fallback_only, pins={"transformer-engine": "2.20.2"})] == [("AIC203", 8)]


def test_unpinned_te_is_judged_on_the_newest_release_and_said_once(tmp_path):
    code = TRAIN.format(**{**BASE, "delayed": "fp8_format=fmt, interval=1",
                           "autocast": "te.autocast(enabled=True, recipe=fp8_recipe)"})
    settings = build_settings(default_matrix(), start=tmp_path, cli=Target(gpus=["B200"], pins={"torch": "2.7.0"}),
                              no_config=True)
    res = Linter(settings.target, default_matrix()).lint_bytes(code.encode(), str(tmp_path / "train.py"))
    assert [(d.code, d.line) for d in res.diagnostics] == [("AIC202", 17)]
    assert "transformer-engine unpinned: judged on the newest release 2.20.2" in res.diagnostics[0].message
    assert [n for n in res.notes if "transformer-engine" in n] == [
        "no transformer-engine pin: the API rules judged transformer-engine 2.20.2, the newest release aicompat knows "
        "(pin the one you run: --pin transformer-engine==X.Y, or transformer-engine in [project] dependencies or a "
        "requirements file)"]


def test_the_table_reads_every_release_and_says_how():
    api = load_package(TABLE)
    releases = default_matrix().releases("transformer-engine")
    assert api.releases == releases and len(releases) == 30
    assert "TE needs a GPU build to import" in TABLE.read_text()
    for label, f in zip(api.labels, api.files):
        # a release tag and its commit, or a PyPI wheel and its sha256
        assert f.startswith(f"{label}: git v") and len(f.split()[-1]) == 40 or \
            (f.endswith(".whl sha256:" + f.split("sha256:")[-1]) and f"-{label}-" in f), f
    recipe = api.module("transformer_engine.common.recipe")

    def first(mod, name):
        have = set().union(*(rng for rng, _, _ in api.module(mod).entries(name)))
        return api.labels[min(have)], api.labels[max(have)]

    # checked against the tags' recipe/__init__.py: interval went at v2.2, the recipes came one by one
    assert first("transformer_engine.common.recipe", "MXFP8BlockScaling")[0] == "2.1.0"
    assert first("transformer_engine.common.recipe", "Float8CurrentScaling")[0] == "2.2.0"
    assert first("transformer_engine.common.recipe", "Float8BlockScaling")[0] == "2.3.0"
    assert first("transformer_engine.common.recipe", "NVFP4BlockScaling")[0] == "2.8.0"
    assert first("transformer_engine.common.recipe.Format", "E2M1")[0] == "2.8.0"
    assert first("transformer_engine.pytorch", "autocast")[0] == "2.9.0"
    assert first("transformer_engine.pytorch", "quantized_model_init")[0] == "2.9.0"
    assert first("transformer_engine.pytorch", "fp8_autocast") == ("1.9.0", "2.20.2")
    assert api.module("transformer_engine.common.recipe.Format").is_class
    assert recipe.init_generator("DelayedScaling", [0, 29]) == "pydantic.dataclasses.dataclass"
