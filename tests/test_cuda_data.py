"""The CUDA analyzer reads its data through the matrix loader: a table it needs that the
matrix lacks ends the run (MatrixError, exit code 2), never an empty table in its place."""

import shutil

import pytest

from aicompat.base.data import data_dir
from aicompat.base.errors import MatrixError
from aicompat.matrix import default_matrix, load_matrix
from aicompat.matrix.target import Target
from aicompat.run.config import build_settings
from aicompat.run.linter import Linter


def _matrix_without(tmp_path, section: str):
    """The shipped matrix, loaded from a copy whose cuda_macros.toml has no [section]."""
    src = data_dir("version_matrix")
    for f in src.glob("*.toml"):
        shutil.copy(f, tmp_path / f.name)
    text = (src / "cuda_macros.toml").read_text()
    kept, skip = [], False
    for line in text.splitlines():
        if line.startswith("["):
            skip = line.startswith(f"[{section}.") or line == f"[{section}]"
        if not skip:
            kept.append(line)
    (tmp_path / "cuda_macros.toml").write_text("\n".join(kept) + "\n")
    return load_matrix(tmp_path)


@pytest.mark.parametrize("section", ["never", "macro", "cxx_constant"])
def test_a_missing_macro_table_ends_the_run(tmp_path, section):
    m = _matrix_without(tmp_path, section)
    assert section not in m.files["cuda_macros.toml"]  # the loader itself accepts the file
    target = build_settings(m, cli=Target(gpus=["H100"]), no_config=True).target
    with pytest.raises(MatrixError, match=rf"cuda_macros.toml: \[{section}\] is missing"):
        Linter(target, m)


def test_the_cli_says_so_and_exits_2(tmp_path, monkeypatch, capsys):
    from aicompat import cli, matrix

    m = _matrix_without(tmp_path, "never")
    monkeypatch.setattr(matrix, "default_matrix", lambda: m)  # the CLI imports it when a lint starts
    (tmp_path / "k.cu").write_text("__global__ void k() {}\n")
    assert cli.main(["lint", str(tmp_path / "k.cu"), "--gpu", "H100", "--no-config", "--no-cache"]) == 2
    assert "cuda_macros.toml: [never] is missing" in capsys.readouterr().err


def test_the_shipped_matrix_has_them():
    from aicompat.cuda.cpp.preprocessor import macro_table

    t = macro_table(default_matrix())
    assert "__CLION_IDE__" in t.never and t.macro and t.cxx_constant
