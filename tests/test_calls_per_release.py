"""The calls of issue 27 judged in every torch release the table models, against what each
release did when the call was made at run time (torch installed in a throwaway environment,
the newest patch of every minor release 2.0-2.15; see version_matrix/introspect/ for the
wheels). The patch releases not introspected (2.1.0, 2.7.0, ...) sit between two that were,
and both of those agree on each call."""

from __future__ import annotations

import pytest
from conftest import lint

from aicompat.matrix import default_matrix

RELEASES = [str(v) for v in default_matrix().releases("torch")]

CALLS = '''\
import torch
import torch.nn.functional as F


def prepare(labels, half):
    info = torch.finfo(type=torch.float16 if half else torch.float32)
    onehot = F.one_hot(input=labels, num_classes=3)
    return info.max, onehot


def evaluate(model, batch):
    with torch.inference_mode(enabled=False):
        return model(batch)
'''


def _findings(release):
    return [(d.code, d.line, d.message) for d in lint(CALLS, pins={"torch": release}) if d.code.startswith("AIC2")]


@pytest.mark.parametrize("release", RELEASES)
def test_each_release_judged_as_it_behaved(release):
    # at run time, every introspected release: finfo(type=torch.float16) returns a finfo,
    # F.one_hot(input=x, num_classes=3) a tensor, torch.inference_mode(enabled=False) raises
    # "TypeError: inference_mode.__new__() got an unexpected keyword argument 'enabled'"
    assert _findings(release) == [
        ("AIC202", 12, "torch.inference_mode: no torch release (2.0.0–2.15.0) accepts keyword 'enabled'"),
    ]


def test_the_fixed_twin_is_clean_everywhere():
    fixed = CALLS.replace("inference_mode(enabled=False)", "inference_mode(mode=False)")
    for release in RELEASES:
        assert [d for d in lint(fixed, pins={"torch": release}) if d.code.startswith("AIC2")] == [], release
