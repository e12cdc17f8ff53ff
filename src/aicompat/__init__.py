"""aicompat: will this PyTorch/CUDA code work on your GPUs and library versions?"""

from .base.diagnostics import Diagnostic
from .base.version import __version__
from .matrix.target import Target
from .run.api import lint_paths, lint_source

__all__ = ["Diagnostic", "Target", "lint_paths", "lint_source", "__version__"]
