"""tools/fatbin_archs.py reads the GPU code of objects nvcc builds for a known -gencode list."""
import importlib.util
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
spec = importlib.util.spec_from_file_location("fatbin_archs", ROOT / "tools" / "fatbin_archs.py")
fatbin_archs = importlib.util.module_from_spec(spec)
spec.loader.exec_module(fatbin_archs)

pytestmark = pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc is not on the PATH")


@pytest.mark.parametrize("gencode, expected", [
    (["arch=compute_80,code=sm_80", "arch=compute_90a,code=sm_90a", "arch=compute_100a,code=compute_100a"],
     {("elf", 80), ("elf", 90), ("ptx", 100)}),
    (["arch=compute_86,code=[sm_86,compute_86]"], {("elf", 86), ("ptx", 86)}),
])
def test_objects_built_by_nvcc(tmp_path, gencode, expected):
    src = tmp_path / "k.cu"
    src.write_text("__global__ void scale(float *x, float a) { x[threadIdx.x] *= a; }\n")
    obj = tmp_path / "k.o"
    cmd = ["nvcc", "-c", str(src), "-o", str(obj)] + [f"-gencode={g}" for g in gencode]
    subprocess.run(cmd, check=True, capture_output=True, timeout=300)
    assert set(fatbin_archs.fatbin_archs(str(obj))) == expected


def test_a_file_without_gpu_code(tmp_path):
    p = tmp_path / "plain.bin"
    p.write_bytes(b"\x7fELF" + bytes(64))
    assert fatbin_archs.fatbin_archs(str(p)) == {}
