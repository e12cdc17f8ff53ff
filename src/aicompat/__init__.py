"""aicompat: will this PyTorch/CUDA code work on your GPUs and library versions?"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .base.version import __version__

if TYPE_CHECKING:
    from .base.diagnostics import Diagnostic
    from .matrix.target import Target
    from .run.api import lint_paths, lint_source

# The API is imported on first use (PEP 562): ``aicompat --version``, ``rules`` and ``explain``
# import this package too, and must not pay for the engine, the rules and libcst.
_LAZY = {"Diagnostic": ".base.diagnostics", "Target": ".matrix.target", "lint_paths": ".run.api",
         "lint_source": ".run.api"}


def __getattr__(name: str):
    where = _LAZY.get(name)
    if where is None:
        raise AttributeError(f"module 'aicompat' has no attribute {name!r}")
    from importlib import import_module

    value = getattr(import_module(where, __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))


__all__ = ["Diagnostic", "Target", "lint_paths", "lint_source", "__version__"]
