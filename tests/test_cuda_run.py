"""One run's CUDA state belongs to that run (cuda/session.py): its caches start empty, so a
second run in the same process (the pylint plugin, the Python API called again) sees the files
as they are now; exact mode's Verifier is made by the run, handed to the rule, and stopped
with the run."""

import shutil
from pathlib import Path

import pytest
from test_build_context import SAGE_SETUP, SM90_KERNEL, WGMMA_CUH, write

from aicompat import Target, lint_paths
from aicompat.cuda.exact import verify
from aicompat.matrix import default_matrix
from aicompat.run.config import build_settings
from aicompat.run.linter import Linter

# The extension builds only sm_90a: the header it includes is judged for that build, where wgmma is fine.
SM90A_SETUP = SAGE_SETUP.replace('"nvcc": NVCC_FLAGS', '"nvcc": NVCC_SM90').replace(
    "ext_modules = [", 'NVCC_SM90 = ["-O3", "-gencode", "arch=compute_90a,code=sm_90a"]\n    ext_modules = [')
CU = "csrc/qattn/qk_int_sv_f8_cuda_sm90.cu"


def _found(root: Path, gpus=("A100", "H100")):
    diags = lint_paths([root], target=Target(gpus=list(gpus)), use_config=False, select=["AIC301"])
    return [(Path(d.path).relative_to(root).as_posix(), d.line, d.targets) for d in diags]


def test_a_second_run_sees_the_include_the_first_run_saw_removed(tmp_path):
    write(tmp_path, {"setup.py": SM90A_SETUP, "csrc/wgmma.cuh": WGMMA_CUH, CU: SM90_KERNEL})
    fleet = ["A100", "B200"]
    assert _found(tmp_path, fleet) == []  # included only by the sm_90a build
    # The .cu no longer includes the header: no build of it is visible, and no target of the A100
    # or the B200 has wgmma (whatever its build, it fails).
    (tmp_path / CU).write_text(SM90_KERNEL.replace('#include "../wgmma.cuh"\n', "#include <cuda.h>\n"))
    expected = [("csrc/wgmma.cuh", 6, fleet)]
    assert _found(tmp_path, fleet) == expected  # before: [], the include graph of the first run
    other = tmp_path.parent / (tmp_path.name + "-fresh")
    shutil.copytree(tmp_path, other)
    assert _found(other, fleet) == expected  # what a fresh process says


def _linter(verify: bool) -> Linter:
    matrix = default_matrix()
    settings = build_settings(matrix, cli=Target(gpus=["H100"], cuda_verify=verify), no_config=True)
    return Linter(settings.target, matrix)


def test_the_run_hands_its_verifier_to_the_rules():
    linter = _linter(True)
    assert linter.cuda.verifier is not None
    assert {id(r.verifier) for r in linter.rules} == {id(linter.cuda.verifier)}
    assert {r.verifier for r in _linter(False).rules} == {None}


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="needs nvcc")
def test_the_run_stops_exact_mode(tmp_path, monkeypatch):
    made, folders = [], []

    # the run makes its Verifier from cuda/exact/verify.py when exact mode is on (session.py imports it then)
    class Recorded(verify.Verifier):
        def __init__(self, *a, **k):
            super().__init__(*a, **k)
            made.append(self)

        def close(self):
            folders.append(self._tmp.name if self._tmp is not None else None)
            super().close()

    monkeypatch.setattr(verify, "Verifier", Recorded)
    (tmp_path / "k.cu").write_text("__global__ void k(float* x) { x[0] = 1.f; }\n")
    lint_paths([tmp_path], target=Target(gpus=["H100"], cuda_verify=True), use_config=False, select=["AIC301"])
    assert len(made) == 1
    ver = made[0]
    assert ver.compiles >= 1  # it compiled k.cu
    assert folders and folders[0] is not None and not Path(folders[0]).exists()  # its private folder is gone
    assert not ver._procs  # and no compiler is left running
