"""The realistic corpus (tests/realistic, issue 11): each failing case reports exactly
its expected (code, line) findings and its fixed twin none of those codes.

Cases the engine does not follow yet are strict xfails, listed here by name, so
that when the engine learns a form the xfail fails and the name is removed.
bench/bench_realistic.py reports the same numbers as recall per form."""

from pathlib import Path

import pytest

from aicompat import Target, lint_paths
from aicompat.toml_compat import tomllib

CORPUS = Path(__file__).resolve().parent / "realistic"

# fail_<name>.py whose expected findings are not all reported (value not followed through the form).
KNOWN_MISSES: set[str] = set()

# ok_<name>.py that is reported although the fix is correct (guard or value not followed).
KNOWN_FALSE_ALARMS: set[str] = set()


def _cases():
    with open(CORPUS / "cases.toml", "rb") as f:
        return tomllib.load(f)["case"]


CASES = _cases()


def _name(case):
    return case["file"].removeprefix("fail_").removesuffix(".py")


def _findings(path, case):
    target = Target(gpus=list(case["gpus"]), pins=dict(case.get("pins", {})))
    return {(d.code, d.line) for d in lint_paths([path], target, use_config=False)}


def _params(known, why):
    return [
        pytest.param(c, id=_name(c), marks=[pytest.mark.xfail(strict=True, reason=f"{why}: {c['form']}")]
                     if _name(c) in known else [])
        for c in CASES
    ]


def test_corpus_shape():
    names = [_name(c) for c in CASES]
    assert len(names) == len(set(names)) >= 30
    for c in CASES:
        assert (CORPUS / c["file"]).is_file() and (CORPUS / c["twin"]).is_file()
        assert c["twin"] == "ok_" + c["file"].removeprefix("fail_")
        assert c["expect"] and c["gpus"] and c["form"] and c["source"]
    # every known miss / false alarm names a case, so a renamed case cannot hide in the sets
    assert KNOWN_MISSES <= set(names) and KNOWN_FALSE_ALARMS <= set(names)


@pytest.mark.parametrize("case", _params(KNOWN_MISSES, "form not followed yet"))
def test_failing_case_reports_exactly_expected(case):
    expected = {(e["code"], e["line"]) for e in case["expect"]}
    assert _findings(CORPUS / case["file"], case) == expected


@pytest.mark.parametrize("case", _params(KNOWN_FALSE_ALARMS, "false alarm on the fixed twin"))
def test_fixed_twin_is_clean(case):
    codes = {e["code"] for e in case["expect"]}
    assert {f for f in _findings(CORPUS / case["twin"], case) if f[0] in codes} == set()
