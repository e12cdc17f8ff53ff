"""Pins from the layouts real projects use (issue 15 item 9): a requirements/ folder with
-r/-c includes (vLLM), constraints.txt, a root requirements.txt without pyproject.toml
(gpt-fast), [project.optional-dependencies], setup.cfg and setup.py read statically
(never executed); -v and the JSON target say where each pin came from."""

from __future__ import annotations

from pathlib import Path

import pytest
from packaging.version import Version

from aicompat.matrix import default_matrix
from aicompat.run.config import build_settings

VLLM = Path("/tmp/sdist/vllm-0.33.0")


def _target(start: Path):
    s = build_settings(default_matrix(), start=start)
    return s.target.as_json()["pins"], s.notes


def _tree(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)


def test_root_requirements_txt_without_pyproject(tmp_path):
    """gpt-fast's layout: a requirements.txt and scripts beside it, no pyproject.toml."""
    _tree(tmp_path, {".git/HEAD": "ref: refs/heads/main\n",
                     "requirements.txt": "torch==2.6.0\nsentencepiece\ntiktoken\nblobfile\nsafetensors\n",
                     "generate.py": "import torch\n"})
    pins, _ = _target(tmp_path / "generate.py")
    assert pins["torch"] == {"spec": "==2.6.0", "releases": ["2.6.0"], "source": "requirements.txt:1"}


def test_requirements_folder_with_includes_and_constraints(tmp_path):
    _tree(tmp_path, {
        "pyproject.toml": "[project]\nname = 'srv'\ndynamic = ['dependencies']\n",
        "requirements/common.txt": "transformers >= 4.56.0, < 5\nnumpy\n",
        "requirements/cuda.txt": "# CUDA build\n-r common.txt\n-c ../constraints.txt\ntorch==2.8.0\n"
                                 "flash-attn>=2.7  # prebuilt wheels\n",
        "constraints.txt": "flash-attn<2.8\n",
    })
    pins, notes = _target(tmp_path)
    assert pins["torch"]["source"] == "requirements/cuda.txt:4" and pins["torch"]["releases"] == ["2.8.0"]
    fa = pins["flash-attn"]
    assert fa["spec"] == "<2.8,>=2.7"
    assert fa["source"] == "constraints.txt:1, requirements/cuda.txt:5"  # each file read once
    assert fa["releases"] == ["2.7.0.post2", "2.7.1.post4", "2.7.2.post1", "2.7.3", "2.7.4.post1"]
    assert pins["transformers"]["source"].startswith("requirements/common.txt:1")
    assert not notes[:-1]  # only the default-fleet note


def test_optional_dependencies_and_setup_cfg(tmp_path):
    _tree(tmp_path, {
        "pyproject.toml": "[project]\nname = 'attn'\ndependencies = ['torch>=2.4,<2.7']\n"
                          "[project.optional-dependencies]\nfa = ['flash-attn==2.7.4.post1']\n",
    })
    pins, _ = _target(tmp_path)
    assert pins["flash-attn"]["source"] == "pyproject.toml [project.optional-dependencies].fa"
    assert pins["torch"]["releases"] == ["2.4.0", "2.4.1", "2.5.0", "2.5.1", "2.6.0"]
    (tmp_path / "pyproject.toml").unlink()
    _tree(tmp_path, {"setup.cfg": "[metadata]\nname = attn\n[options]\ninstall_requires =\n    torch==2.5.1\n"
                                  "    einops\n[options.extras_require]\nfa =\n    flash-attn==2.6.3\n"})
    pins, _ = _target(tmp_path)
    assert pins["torch"]["source"] == "setup.cfg [options] install_requires"
    assert pins["flash-attn"] == {"spec": "==2.6.3", "releases": ["2.6.3"],
                                  "source": "setup.cfg [options.extras_require] fa"}


SETUP_PY = '''import os
import subprocess
from setuptools import setup, find_packages

open(os.path.join(os.path.dirname(__file__), "EXECUTED"), "w").write("setup.py ran")
subprocess.check_call(["nvcc", "--version"])

REQUIRED = [
    "torch>=2.3.0,<2.5",
    "triton",
]

setup(
    name="sageattn",
    version="1.0.6",
    packages=find_packages(),
    install_requires=REQUIRED,
    extras_require={"fa": ["flash-attn==2.6.3"]},
    python_requires=">=3.9",
)
'''


def test_setup_py_is_read_not_run(tmp_path):
    _tree(tmp_path, {"setup.py": SETUP_PY})
    pins, _ = _target(tmp_path)
    assert not (tmp_path / "EXECUTED").exists()
    assert pins["torch"]["source"] == "setup.py install_requires"
    assert pins["torch"]["releases"] == ["2.3.0", "2.3.1", "2.4.0", "2.4.1"]
    assert pins["flash-attn"]["source"] == "setup.py extras_require['fa']"


def test_computed_install_requires_is_not_guessed(tmp_path):
    _tree(tmp_path, {"setup.py": "from setuptools import setup\n"
                                 "reqs = open('requirements-gpu.in').read().splitlines()\n"
                                 "setup(name='x', install_requires=reqs)\n"})
    pins, _ = _target(tmp_path)
    assert "torch" not in pins


def test_includes_stay_inside_the_project(tmp_path):
    outside = tmp_path / "outside.txt"
    outside.write_text("torch==2.1.0\n")
    _tree(tmp_path / "proj", {"pyproject.toml": "[project]\nname = 'p'\n",
                              "requirements.txt": "-r ../outside.txt\n-r requirements.txt\n"})
    pins, _ = _target(tmp_path / "proj")
    assert "torch" not in pins


def test_disagreeing_sources_are_alternatives_and_said(tmp_path):
    _tree(tmp_path, {"pyproject.toml": "[project]\nname = 'p'\n",
                     "requirements/cuda.txt": "torch==2.6.0\n",
                     "requirements/nightly.txt": "torch==2.7.0\n"})
    pins, notes = _target(tmp_path)
    assert pins["torch"]["releases"] == ["2.6.0", "2.7.0"] and pins["torch"]["spec"] == ""
    assert notes[0] == ("torch: the project's requirement sources disagree, so each is checked: "
                        "requirements/cuda.txt:1 (==2.6.0); requirements/nightly.txt:1 (==2.7.0)")


def test_a_declared_pin_matching_no_known_release_is_a_note_not_an_error(tmp_path):
    _tree(tmp_path, {"requirements.txt": "torch<1.0\n", "setup.py": "from setuptools import setup\nsetup()\n"})
    pins, notes = _target(tmp_path)
    assert "torch" not in pins
    assert notes[0].startswith("torch: the project's pins (requirements.txt:1: <1.0) match no torch release")


def test_verbose_echoes_where_each_pin_came_from(tmp_path, monkeypatch, capsys):
    from aicompat.cli import main

    _tree(tmp_path, {"requirements.txt": "-r requirements/base.txt\n",
                     "requirements/base.txt": "torch==2.6.0\nrich\n", "train.py": "import torch\n"})
    monkeypatch.chdir(tmp_path)
    assert main(["lint", "-v", "--no-cache", "--gpu", "A100", "train.py"]) == 0
    err = capsys.readouterr().err
    assert "pin torch==2.6.0: checked 2.6.0; from requirements/base.txt:1 (included from requirements.txt:1)" in err


@pytest.mark.skipif(not VLLM.is_dir(), reason="the vLLM 0.33.0 sdist is not unpacked in /tmp/sdist")
def test_vllm_sdist_gets_its_torch_pin():
    pins, notes = _target(VLLM / "vllm")
    assert "2.14.0" in pins["torch"]["releases"]
    assert "requirements/cuda.txt:7" in pins["torch"]["source"]
    assert pins["transformers"]["releases"] and "requirements/common.txt:11" in pins["transformers"]["source"]


def test_a_pin_under_a_packages_earlier_name(tmp_path):
    """sgl-kernel was renamed sglang-kernel at 0.4.0 (one release line): an older project's
    ``sgl-kernel==0.1.0`` pins that line; sglang 0.5.10.post1 writes ``sglang-kernel==0.4.1``."""
    _tree(tmp_path, {".git/HEAD": "ref: refs/heads/main\n",
                     "requirements.txt": "torch\nsgl-kernel==0.1.0\n",
                     "serve.py": "import sgl_kernel\n"})
    pins, notes = _target(tmp_path / "serve.py")
    assert pins["sglang-kernel"]["releases"] == ["0.1.0"] and "sgl-kernel" not in pins
    (tmp_path / "requirements.txt").write_text("torch\nsglang-kernel==0.4.1\n")
    pins, notes = _target(tmp_path / "serve.py")
    assert pins["sglang-kernel"]["releases"] == ["0.4.1"]


def test_transformer_engine_pinned_by_any_of_its_distribution_names(tmp_path):
    """TE's metapackage pins each part at its own version (setup.py: transformer_engine_cu12==,
    transformer_engine_torch== {__version__}); NeMo's requirements write transformer-engine[pytorch]==1.12.
    Each spelling pins the one release line; parts pinned together intersect."""
    _tree(tmp_path, {".git/HEAD": "ref: refs/heads/main\n", "train.py": "import transformer_engine.pytorch as te\n"})
    for req, want in (("transformer-engine[pytorch]==1.12", ["1.12.0"]), ("transformer_engine==2.4.0", ["2.4.0"]),
                      ("transformer_engine_cu12==2.4.0", ["2.4.0"]), ("transformer-engine-torch==2.8.0", ["2.8.0"]),
                      ("transformer-engine[pytorch]>=2.4,<2.9\ntransformer_engine_cu12==2.5.0", ["2.5.0"])):
        (tmp_path / "requirements.txt").write_text("torch\n" + req + "\n")
        pins, notes = _target(tmp_path / "train.py")
        assert [Version(v) for v in pins["transformer-engine"]["releases"]] == [Version(v) for v in want], (req, pins)
        assert not any(k.startswith("transformer-engine-") for k in pins), pins
    # aicompat's own pin is the last word over a part the project pins
    (tmp_path / "requirements.txt").write_text("torch\ntransformer_engine_cu12==2.8.0\n")
    s = build_settings(default_matrix(), start=tmp_path / "train.py", cli_pins=["transformer-engine==2.4.0"])
    assert s.target.as_json()["pins"]["transformer-engine"]["releases"] == ["2.4.0"]
    assert "transformer-engine-cu12" not in s.target.as_json()["pins"]
