"""Build the fused-kernels extension in place before launching the job."""
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent


def build_extension():
    env = dict(os.environ)
    env["TORCH_CUDA_ARCH_LIST"] = "9.0"
    env["MAX_JOBS"] = "8"
    subprocess.run([sys.executable, "setup.py", "build_ext", "--inplace"], cwd=ROOT / "csrc", env=env, check=True)


if __name__ == "__main__":
    build_extension()
