"""Build-time settings for the project's CUDA extensions (imported by setup.py)."""
import os

# newest target GPU: H100; the fleet still has A100s
CC_MAJOR = 9
CC_MINOR = 0

os.environ["TORCH_CUDA_ARCH_LIST"] = f"8.0;{CC_MAJOR}.{CC_MINOR}+PTX"
os.environ.setdefault("MAX_JOBS", str(os.cpu_count() or 4))
