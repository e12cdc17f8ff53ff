"""Target sources and their precedence; bad configuration is a one-line error, exit 2."""
import json
import textwrap
from pathlib import Path

import pytest
from conftest import run_cli

from aicompat.base.errors import ConfigError
from aicompat.matrix.target import Target
from aicompat.run.config import build_settings

FP8 = "import torch\ny = torch._scaled_mm(a, b, scale_a=s, scale_b=s)\nDT = torch.float8_e8m0fnu\n"


def project(tmp_path: Path, pyproject: str = "", files: dict | None = None) -> Path:
    if pyproject:
        (tmp_path / "pyproject.toml").write_text(textwrap.dedent(pyproject))
    (tmp_path / "app.py").write_text(FP8)
    for name, text in (files or {}).items():
        (tmp_path / name).write_text(text)
    return tmp_path


def target_json(tmp_path, *args):
    r = run_cli("lint", "--format", "json", *args, str(tmp_path), cwd=tmp_path)
    assert r.returncode in (0, 1), r.stderr
    return json.loads(r.stdout)


def test_default_fleet_is_portable_and_said(tmp_path):
    project(tmp_path)
    r = run_cli("lint", "--no-config", str(tmp_path / "app.py"), cwd=tmp_path)
    assert "portable default fleet sm_80, sm_86, sm_89, sm_90, sm_100, sm_120" in r.stdout
    doc = target_json(tmp_path, "--no-config")
    assert doc["target"]["gpus"]["source"] == "default"
    assert [m["arch"] for m in doc["target"]["gpus"]["members"]] == ["sm_80", "sm_86", "sm_89", "sm_90", "sm_100", "sm_120"]
    assert doc["notes"]


def test_tool_config_then_cli_override(tmp_path):
    project(tmp_path, """
        [project]
        name = "x"
        requires-python = ">=3.10"
        dependencies = ["torch>=2.5,<2.8"]
        [tool.aicompat]
        gpus = ["A100", "H100"]
        cuda = "12.4"
    """)
    doc = target_json(tmp_path)
    t = doc["target"]
    assert [m["label"] for m in t["gpus"]["members"]] == ["A100", "H100"]
    assert t["gpus"]["source"] == "pyproject.toml [tool.aicompat]"
    assert t["python"] == {"value": "3.10", "source": "pyproject.toml [project].requires-python"}
    assert t["pins"]["torch"]["releases"] == ["2.5.0", "2.5.1", "2.6.0", "2.7.0", "2.7.1"]
    assert t["cuda"]["value"] == "12.4"
    msgs = [d["message"] for d in doc["diagnostics"]]
    assert any("_scaled_mm" in m and "sm_80 (A100)" in m for m in msgs)
    assert any("not in torch 2.5.0, 2.5.1, 2.6.0" in m for m in msgs)
    # CLI flags win over the file.
    doc = target_json(tmp_path, "--gpu", "H100", "--pin", "torch==2.7.0", "--python", "3.12")
    t = doc["target"]
    assert [m["label"] for m in t["gpus"]["members"]] == ["H100"] and t["gpus"]["source"] == "--gpu"
    assert t["pins"]["torch"] == {"spec": "==2.7.0", "releases": ["2.7.0"], "source": "--pin"}
    assert t["python"]["value"] == "3.12"
    assert doc["diagnostics"] == []


def test_requirements_files_pin_packages(tmp_path):
    project(tmp_path, "[project]\nname = 'x'\n", {"requirements.txt": "# pins\ntorch==2.6.0  # gpu\n-e .\nnumpy\n"})
    t = target_json(tmp_path)["target"]
    assert t["pins"]["torch"]["releases"] == ["2.6.0"]
    assert t["pins"]["torch"]["source"] == "requirements.txt:2"
    assert "numpy" not in t["pins"]  # unpinned: constrains nothing


def test_no_config_ignores_files(tmp_path):
    project(tmp_path, "[tool.aicompat]\ngpus = ['H100']\n")
    t = target_json(tmp_path, "--no-config")["target"]
    assert t["gpus"]["source"] == "default"


def test_pins_table_form(matrix, tmp_path):
    project(tmp_path, "[tool.aicompat]\npins = { torch = '2.4.0', flash-attn = '>=2.6' }\n")
    s = build_settings(matrix, start=tmp_path)
    assert [str(v) for v in s.target.releases["torch"]] == ["2.4.0"]
    assert str(s.target.releases["flash-attn"][0]) == "2.6.0.post1"  # there is no 2.6.0 on PyPI


@pytest.mark.parametrize("pyproject,needle", [
    ("[tool.aicompat]\ngpu = ['H100']\n", "[tool.aicompat] unknown key 'gpu'"),
    ("[tool.aicompat]\ngpus = ['H1000']\n", "unknown GPU or arch 'H1000'"),
    ("[tool.aicompat]\ngpus = ['sm_99']\n", "unknown GPU or arch 'sm_99'"),
    ("[tool.aicompat]\npython = '3'\n", "[tool.aicompat] python: bad Python version '3'"),
    ("[tool.aicompat]\ncuda = 'twelve'\n", "[tool.aicompat] cuda: bad CUDA version"),
    ("[tool.aicompat]\npins = ['torch=2.4']\n", "[tool.aicompat] pins: bad requirement 'torch=2.4'"),
    ("[tool.aicompat]\npins = { torch = '>=banana' }\n", "pins.torch: bad version specifier"),
    ("[tool.aicompat]\npins = ['torch>=9.0']\n", "matches no known torch release"),
    ("[tool.aicompat\n", "not valid TOML"),
    # As strict as --select: a typo must not turn every check off and print "All checks passed".
    ("[tool.aicompat]\nselect = ['AIC9']\n", "[tool.aicompat] select: unknown rule code 'AIC9'"),
    ("[tool.aicompat]\nignore = ['AIC101', 'AIC1O2']\n", "[tool.aicompat] ignore: unknown rule code 'AIC1O2'"),
    ("[tool.aicompat]\nselect = ['']\n", "[tool.aicompat] select: unknown rule code ''"),
])
def test_bad_config_is_one_line_exit_2(tmp_path, pyproject, needle):
    project(tmp_path, pyproject)
    r = run_cli("lint", str(tmp_path), cwd=tmp_path)
    assert r.returncode == 2
    err = r.stderr.strip()
    assert len(err.splitlines()) == 1, err
    assert "pyproject.toml" in err and needle in err, err
    assert "Traceback" not in r.stderr


@pytest.mark.parametrize("args,needle", [
    (["--gpu", "X9000"], "--gpu: unknown GPU or arch 'X9000'"),
    (["--python", "2.7"], "--python: bad Python version"),
    (["--pin", "torch=="], "--pin: bad requirement"),
    (["--cuda", "13"], "--cuda: bad CUDA version"),
    (["--select", "AIC999"], "unknown rule code 'AIC999'"),
    # Archs in capability order, not as strings (sm_100 before sm_75).
    (["--gpu", "sm_99"], "(archs: sm_70, sm_75, sm_80, sm_86, sm_87, sm_88, sm_89, sm_90, sm_100, sm_103, sm_110, sm_120, "
                         "sm_121; or a GPU name such as H100)"),
])
def test_bad_flags_exit_2(tmp_path, args, needle):
    project(tmp_path)
    r = run_cli("lint", "--no-config", *args, str(tmp_path), cwd=tmp_path)
    assert r.returncode == 2 and needle in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr


def test_gpu_auto_without_gpus_is_a_clear_error(tmp_path):
    project(tmp_path)
    r = run_cli("lint", "--no-config", "--gpu", "auto", str(tmp_path), cwd=tmp_path, env={"PATH": "/nonexistent"})
    assert r.returncode == 2 and "--gpu auto: no local NVIDIA GPU found" in r.stderr


def test_gpu_names_and_archs_resolve(matrix):
    names = {"A100": "sm_80", "A10": "sm_86", "A40": "sm_86", "RTX 3090": "sm_86", "L4": "sm_89", "L40S": "sm_89",
             "RTX 4090": "sm_89", "H100": "sm_90", "H200": "sm_90", "GH200": "sm_90", "B200": "sm_100",
             "GB200": "sm_100", "B300": "sm_103", "GB300": "sm_103", "RTX 5090": "sm_120",
             "RTX PRO 6000": "sm_120", "DGX Spark": "sm_121", "h100": "sm_90", "sm_75": "sm_75", "9.0": "sm_90",
             "sm_121": "sm_121"}
    s = build_settings(matrix, cli=Target(gpus=list(names)), no_config=True)
    assert {m.label: m.arch for m in s.target.members} == {
        (k if not (k.startswith("sm_") or k == "9.0") else v): v for k, v in names.items()
    }


def test_api_target_errors_raise(matrix):
    with pytest.raises(ConfigError):
        build_settings(matrix, cli=Target(gpus=["nope"]), no_config=True)


def test_a_pin_of_no_known_release_is_said_and_checked_against_the_nearest(matrix, tmp_path):
    # flash-attn 2.5.9 exists on PyPI only as 2.5.9.post1: before, `--pin flash-attn==2.5.9` matched no
    # table entry and every flash-attn check was skipped ("All checks passed" on code that fails).
    code = ("from flash_attn import flash_attn_func\n\n\ndef attend(q, k, v):\n"
            "    return flash_attn_func(q, k, v, qk_headdim=128)\n")
    (tmp_path / "attn.py").write_text(code)
    cases = {
        "flash-attn==2.5.9": "flash-attn==2.5.9: 2.5.9 is no flash-attn release aicompat knows",
        "torch==2.99": "2.99 is newer than any torch release aicompat knows; its API is checked as of 2.15.0",
        "torch==2.4.3": "checked against the nearest: 2.4.1, 2.5.0",
        "einops==0.8.0": "einops==0.8.0: aicompat does not model einops, so this pin changes no finding",
        # triton's releases are modelled (its module inventory): a pin of none of them is said.
        "triton==3.6.5": "triton==3.6.5: 3.6.5 is no triton release aicompat knows",
    }
    for pin, note in cases.items():
        r = run_cli("lint", "--no-config", "--no-cache", "--gpu", "A100", "--pin", pin, "--format", "json",
                    str(tmp_path / "attn.py"), cwd=tmp_path)
        doc = json.loads(r.stdout)
        assert any(note in n for n in doc["notes"]), (pin, doc["notes"])
        assert [d["code"] for d in doc["diagnostics"]] == ["AIC202"], pin
    s = build_settings(matrix, cli=Target(gpus=["A100"]), no_config=True, cli_pins=["flash-attn==2.5.9"])
    assert [str(v) for v in s.target.releases["flash-attn"]] == ["2.5.9.post1"]
    # A known release: no note.
    s = build_settings(matrix, cli=Target(gpus=["A100"]), no_config=True, cli_pins=["flash-attn==2.6.3",
                                                                                  "torch==2.8.0"])
    assert s.notes == []


def test_config_select_prefix_and_ignore_still_work(tmp_path):
    """The fixed twin of the unknown-code cases: real prefixes and codes keep working."""
    project(tmp_path, "[tool.aicompat]\ngpus = ['A100']\nselect = ['AIC1']\n")
    r = run_cli("lint", "--no-cache", str(tmp_path), cwd=tmp_path)
    assert r.returncode == 1 and "AIC102" in r.stdout, r.stdout + r.stderr
    project(tmp_path, "[tool.aicompat]\ngpus = ['A100']\nignore = ['AIC102']\n")
    r = run_cli("lint", "--no-cache", str(tmp_path), cwd=tmp_path)
    assert r.returncode == 0 and "AIC102" not in r.stdout, r.stdout + r.stderr


@pytest.mark.parametrize("gpu, label", [("V100", "V100"), ("sm_70", "sm_70"), ("7.0", "sm_70")])
def test_v100_is_a_fleet_member(tmp_path, gpu, label):
    """Issue 27 item 6: a Volta fleet is checked for all that needs no CUDA 13.0 compile target
    (here the FP8 matmul, by its capability), never refused."""
    project(tmp_path)
    r = run_cli("lint", "--no-config", "--no-cache", "--gpu", gpu, str(tmp_path), cwd=tmp_path)
    shown = f"sm_70 ({label})" if label != "sm_70" else "sm_70"
    assert r.returncode == 1 and f"fails on {shown}" in r.stdout, r.stdout + r.stderr


def test_v100_in_config_is_judged_and_t4_twin_too(tmp_path):
    project(tmp_path, "[tool.aicompat]\ngpus = ['A100', 'Tesla V100']\n")
    r = run_cli("lint", "--no-cache", str(tmp_path), cwd=tmp_path)
    assert r.returncode == 1 and "fails on sm_80 (A100), sm_70 (Tesla V100)" in r.stdout, r.stdout + r.stderr
    project(tmp_path, "[tool.aicompat]\ngpus = ['A100', 'T4']\n")
    r = run_cli("lint", "--no-cache", str(tmp_path), cwd=tmp_path)
    assert r.returncode == 1 and "fails on sm_80 (A100), sm_75 (T4)" in r.stdout, r.stdout + r.stderr


def test_unbuildable_arch_is_what_nvcc_says(tmp_path):
    """The recorded refusal is the local nvcc's own (skipped without an nvcc of that version)."""
    import shutil
    import subprocess

    from aicompat.matrix import default_matrix

    e = default_matrix().unbuildable["sm_70"]
    nvcc = shutil.which("nvcc")
    if nvcc is None:
        pytest.skip("no nvcc")
    version = subprocess.run([nvcc, "--version"], capture_output=True, text=True).stdout
    if f"release {e['toolkit']}," not in version:
        pytest.skip(f"nvcc is not CUDA {e['toolkit']}")
    (tmp_path / "k.cu").write_text("__global__ void k() {}\n")
    r = subprocess.run([nvcc, "-gencode", "arch=compute_70,code=sm_70", "-c", "k.cu", "-o", "k.o"], cwd=tmp_path,
                       capture_output=True, text=True)
    assert r.returncode != 0 and e["nvcc"] in r.stderr, r.stderr
