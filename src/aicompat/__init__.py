"""aicompat: will this PyTorch/CUDA code work on your GPUs and library versions?"""

from .api import lint_paths, lint_source
from .diagnostics import Diagnostic
from .target import Target

__version__ = "0.1.0"
__all__ = ["Diagnostic", "Target", "lint_paths", "lint_source", "__version__"]
