"""aicompat: will this PyTorch/CUDA code work on your GPUs and library versions?"""

from .base.version import __version__
from .run.api import lint_paths, lint_source
from .base.diagnostics import Diagnostic
from .matrix.target import Target

__all__ = ["Diagnostic", "Target", "lint_paths", "lint_source", "__version__"]
