"""Every rule's VALID and INVALID examples, written beside the rule, run here (as in Fixit):
an INVALID example states its findings exactly (line, column, message), a VALID one has none."""
import pytest
from conftest import lint

from aicompat.rules.registry import RULE_CLASSES

CASES = [
    pytest.param(cls, kind, i, ex, id=f"{cls.code}-{kind}-{i}")
    for cls in RULE_CLASSES
    for kind in ("VALID", "INVALID")
    for i, ex in enumerate(getattr(cls, kind))
]


def own_diagnostics(cls, ex):
    """The example's findings of this rule, and parse errors (an example must parse)."""
    return [d for d in lint(ex.code, gpus=ex.gpus, pins=ex.pins, python=ex.python) if d.code in (cls.code, "AIC001")]


@pytest.mark.parametrize("cls,kind,i,ex", CASES)
def test_example(cls, kind, i, ex):
    diags = own_diagnostics(cls, ex)
    got = [(d.code, d.line, d.column, d.message) for d in diags]
    if kind == "VALID":
        assert not ex.findings, "a VALID example expects no findings"
        assert got == [], f"unexpected: {got}"
        return
    assert ex.findings, "an INVALID example states its findings: findings=[(line, column, message), ...]"
    assert got == [(cls.code, line, column, message) for line, column, message in ex.findings]
    for d in diags:
        assert "\n" not in d.message
        assert d.targets, "a finding names the targets it fails on"


def test_every_rule_has_examples():
    for cls in RULE_CLASSES:
        assert len(cls.VALID) >= 3 and len(cls.INVALID) >= 3, cls.code
