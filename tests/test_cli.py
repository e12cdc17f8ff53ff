"""The CLI contract: formats, exit codes, selection, suppressions, rules/explain."""
import json
from pathlib import Path

import pytest
from conftest import ROOT, run_cli

DEMO = ROOT / "fixtures" / "demo"
BAD = ("import torch\nfrom flash_attn import flash_attn_func\n"
       "q = torch.randn(1, 8, 4, 192)\nv = torch.randn(1, 8, 4, 128)\n"
       "out = flash_attn_func(q, q, v)\n"
       "y = torch._scaled_mm(a, b, scale_a=s, scale_b=s)\n")


def write(tmp_path, text, name="m.py"):
    p = tmp_path / name
    p.write_text(text)
    return p


def test_text_format_is_ruff_like(tmp_path):
    p = write(tmp_path, BAD)
    r = run_cli("lint", "--no-config", "--gpu", "A100", str(p), cwd=tmp_path)
    assert r.returncode == 1
    lines = r.stdout.splitlines()
    assert lines[0].startswith("m.py:5:7: AIC101 flash_attn_func: V head dim 128 != QK head dim 192")
    assert lines[0].endswith("fails on sm_80 (A100); pad V to 192 and slice the output to 128 there")
    assert lines[1].startswith("m.py:6:5: AIC102 torch._scaled_mm:")
    assert "Found 2 findings" in r.stdout


def test_json_schema(tmp_path):
    p = write(tmp_path, BAD)
    r = run_cli("lint", "--no-config", "--gpu", "A100", "--gpu", "H100", "--format", "json", str(p), cwd=tmp_path)
    assert r.returncode == 1
    doc = json.loads(r.stdout)
    assert set(doc) >= {"diagnostics", "summary", "target"}
    d = doc["diagnostics"][0]
    assert set(d) == {"path", "line", "column", "end_line", "end_column", "code", "rule", "severity", "message", "targets"}
    assert (d["line"], d["column"], d["end_line"], d["end_column"]) == (5, 7, 5, 31)
    assert d["code"] == "AIC101" and d["rule"] == "v-headdim-mismatch" and d["severity"] == "error"
    assert d["targets"] == ["A100", "H100"]  # FlashAttention 2 rejects V != QK on every GPU
    assert doc["summary"]["diagnostics"] == 2 and doc["summary"]["by_code"] == {"AIC101": 1, "AIC102": 1}
    assert doc["target"]["gpus"]["source"] == "--gpu"


def test_clean_exit_zero_and_exit_zero_flag(tmp_path):
    ok = write(tmp_path, "import torch\nx = torch.randn(3)\n", "ok.py")
    r = run_cli("lint", "--no-config", str(ok), cwd=tmp_path)
    assert r.returncode == 0 and "All checks passed" in r.stdout
    bad = write(tmp_path, BAD)
    assert run_cli("lint", "--no-config", "--exit-zero", str(bad), cwd=tmp_path).returncode == 0


def test_select_and_ignore(tmp_path):
    p = write(tmp_path, BAD)
    r = run_cli("lint", "--no-config", "--gpu", "A100", "--select", "AIC102", "--format", "json", str(p), cwd=tmp_path)
    assert [d["code"] for d in json.loads(r.stdout)["diagnostics"]] == ["AIC102"]
    r = run_cli("lint", "--no-config", "--gpu", "A100", "--ignore", "AIC1", str(p), cwd=tmp_path)
    assert r.returncode == 0


def test_noqa_and_ignore_file(tmp_path):
    text = BAD.replace("out = flash_attn_func(q, q, v)", "out = flash_attn_func(q, q, v)  # noqa: AIC101")
    text = text.replace("scale_b=s)", "scale_b=s)  # noqa")
    r = run_cli("lint", "--no-config", "--gpu", "A100", str(write(tmp_path, text)), cwd=tmp_path)
    assert r.returncode == 0 and "2 suppressed" in r.stdout
    wrong_code = BAD.replace("out = flash_attn_func(q, q, v)", "out = flash_attn_func(q, q, v)  # noqa: AIC102")
    r = run_cli("lint", "--no-config", "--gpu", "A100", "--select", "AIC101", str(write(tmp_path, wrong_code)), cwd=tmp_path)
    assert r.returncode == 1
    r = run_cli("lint", "--no-config", "--gpu", "A100", str(write(tmp_path, "# aicompat: ignore-file\n" + BAD)), cwd=tmp_path)
    assert r.returncode == 0


def test_folders_exclude_and_order(tmp_path):
    (tmp_path / "pkg").mkdir()
    (tmp_path / "skipme").mkdir()
    (tmp_path / ".venv").mkdir()
    write(tmp_path / "pkg", BAD, "b.py")
    write(tmp_path / "pkg", BAD, "a.py")
    write(tmp_path / "skipme", BAD, "c.py")
    write(tmp_path / ".venv", BAD, "d.py")
    (tmp_path / "pyproject.toml").write_text("[tool.aicompat]\ngpus = ['A100']\nexclude = ['skipme']\n")
    r = run_cli("lint", "--format", "json", ".", cwd=tmp_path)
    paths = [d["path"] for d in json.loads(r.stdout)["diagnostics"]]
    assert paths == ["pkg/a.py", "pkg/a.py", "pkg/b.py", "pkg/b.py"]


def test_missing_path_is_usage_error(tmp_path):
    r = run_cli("lint", "--no-config", str(tmp_path / "nope.py"), cwd=tmp_path)
    assert r.returncode == 2 and "no such file or folder" in r.stderr


def test_demo_differs_between_sm80_and_sm90():
    def found(gpu):
        r = run_cli("lint", "--no-config", "--gpu", gpu, "--format", "json", str(DEMO), cwd=ROOT)
        return {(Path(d["path"]).name, d["code"]) for d in json.loads(r.stdout)["diagnostics"]}

    a100, h100 = found("sm_80"), found("sm_90")
    # FP8 scaled matmul: fails on sm_80 only.
    assert ("fp8_linear.py", "AIC102") in a100 - h100
    # FA2 with V != QK: fails everywhere. MXFP8: needs Blackwell datacenter, so both.
    assert {("fa2_padded_wrong.py", "AIC101"), ("te_mxfp8.py", "AIC102")} <= a100 & h100
    # FA3 under a >= (9, 0) guard: neither sm_80 (guarded out) nor sm_90 (Hopper) fails...
    assert ("mla_attention.py", "AIC101") not in a100 | h100
    # ...but Blackwell does.
    assert ("mla_attention.py", "AIC101") in found("sm_100")
    assert not any(name == "guarded_ok.py" for name, _ in a100 | h100 | found("sm_100") | found("sm_120"))


def test_rules_lists_every_code():
    r = run_cli("rules")
    assert r.returncode == 0
    for code in ("AIC001", "AIC101", "AIC102", "AIC103", "AIC401"):
        assert code in r.stdout
    from aicompat.rules.registry import CODES, IMPLEMENTED

    assert "v-headdim-mismatch" in r.stdout
    assert all(code in r.stdout for code in CODES)
    assert ("(planned)" in r.stdout) == bool(set(CODES) - IMPLEMENTED)


@pytest.mark.parametrize("code", ["AIC001", "AIC101", "AIC102"])
def test_explain_has_all_sections(code):
    r = run_cli("explain", code.lower())
    assert r.returncode == 0
    for section in ("## What it does", "## Why it matters", "## Example", "## Use instead"):
        assert section in r.stdout


def test_explain_shows_facts_and_unknown_code():
    r = run_cli("explain", "AIC101")
    assert "Only Hopper supports different V headdim" in r.stdout and "source:" in r.stdout
    assert run_cli("explain", "AIC999").returncode == 2


def test_explain_accepts_rule_names_and_lists_archs_in_capability_order():
    by_code = run_cli("explain", "AIC102")
    for name in ("fp8-unsupported", "FP8-Unsupported", "aicompat-fp8-unsupported"):  # the last: pylint's symbol
        r = run_cli("explain", name)
        assert r.returncode == 0 and r.stdout == by_code.stdout, r.stderr
    assert "- torch._scaled_mm: runs on sm_89, sm_90, sm_100, sm_103, sm_110, sm_120, sm_121;" in by_code.stdout
    r = run_cli("explain", "fp9-unsupported")
    assert r.returncode == 2 and "unknown rule 'fp9-unsupported'" in r.stderr
