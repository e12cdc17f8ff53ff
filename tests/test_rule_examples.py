"""Every rule's VALID and INVALID examples, written beside the rule, run here (as in Fixit)."""
import pytest
from conftest import lint

from aicompat.registry import RULE_CLASSES

CASES = [
    pytest.param(cls, kind, i, ex, id=f"{cls.code}-{kind}-{i}")
    for cls in RULE_CLASSES
    for kind in ("VALID", "INVALID")
    for i, ex in enumerate(getattr(cls, kind))
]


@pytest.mark.parametrize("cls,kind,i,ex", CASES)
def test_example(cls, kind, i, ex):
    diags = [d for d in lint(ex.code, gpus=ex.gpus, pins=ex.pins, python=ex.python) if d.code in (cls.code, "AIC001")]
    if kind == "VALID":
        assert diags == [], f"unexpected: {[d.message for d in diags]}"
    else:
        assert diags, "expected a finding"
        assert all(d.code == cls.code for d in diags)
        if ex.expect:
            assert any(ex.expect in d.message for d in diags), [d.message for d in diags]
        for d in diags:
            assert "\n" not in d.message
            assert d.targets, "a finding names the targets it fails on"


def test_every_rule_has_examples():
    for cls in RULE_CLASSES:
        assert len(cls.VALID) >= 3 and len(cls.INVALID) >= 3, cls.code
