"""What the rules use of the CUDA analyzer: its public API (a rule imports from here, not from the
modules below; tests/test_layers.py checks it).

Each name is imported on first use (PEP 562): a rule binds this module (``from ..cuda import api
as cuda_api``) and asks ``cuda_api.NAME`` where it needs it, so a lint of Python files that hold
no CUDA never loads the CUDA analyzer (~50 ms of regular expressions and tables). ``_WHERE``
says where each name lives; the imports under TYPE_CHECKING say the same for type checkers
(tests/test_startup.py checks the two agree)."""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from . import exact
    from .build.context import context_for, define_fields, groups, project_root
    from .build.cupy_nvrtc import Nvrtc, arch_values, nvrtc_worlds, target_for
    from .build.makefile import configurations, recipe_commands
    from .build.producers import producer
    from .build.pyeval import UNKNOWN_VALUE
    from .build.setup_py import extensions as setup_extensions
    from .build.setup_py import nvcc_defines
    from .build.shell import assignments, commands, is_nvcc
    from .build.strings import Resolved, define_flags, known_strings, read_files, resolve_text, string_list, strings_of
    from .build.targets import (
        Build,
        Refusal,
        candidates,
        code_for,
        newest_toolkit,
        parse_cmake_archs,
        parse_nvcc_flags,
        parse_torch_arch_list,
        refusal,
        refusing_releases,
        torch_arch_fix,
    )
    from .cmake.configs import configurations as cmake_configurations
    from .cmake.eval import evaluate
    from .cpp import cxx, host_gate, tu
    from .cpp.preprocessor import Context, default_context
    from .cpp.scan import CudaSource, Verdict, load_features
    from .cpp.serves import Blocker, blocker
    from .exact.verify import Verifier, device_flags

# name -> (module under aicompat.cuda, its attribute; None: the module itself)
_WHERE: dict[str, tuple[str, str | None]] = {
    "exact": (".exact", None),
    "context_for": (".build.context", "context_for"),
    "define_fields": (".build.context", "define_fields"),
    "groups": (".build.context", "groups"),
    "project_root": (".build.context", "project_root"),
    "Nvrtc": (".build.cupy_nvrtc", "Nvrtc"),
    "arch_values": (".build.cupy_nvrtc", "arch_values"),
    "nvrtc_worlds": (".build.cupy_nvrtc", "nvrtc_worlds"),
    "target_for": (".build.cupy_nvrtc", "target_for"),
    "configurations": (".build.makefile", "configurations"),
    "recipe_commands": (".build.makefile", "recipe_commands"),
    "producer": (".build.producers", "producer"),
    "UNKNOWN_VALUE": (".build.pyeval", "UNKNOWN_VALUE"),
    "nvcc_defines": (".build.setup_py", "nvcc_defines"),
    "setup_extensions": (".build.setup_py", "extensions"),
    "assignments": (".build.shell", "assignments"),
    "commands": (".build.shell", "commands"),
    "is_nvcc": (".build.shell", "is_nvcc"),
    "Resolved": (".build.strings", "Resolved"),
    "define_flags": (".build.strings", "define_flags"),
    "known_strings": (".build.strings", "known_strings"),
    "read_files": (".build.strings", "read_files"),
    "resolve_text": (".build.strings", "resolve_text"),
    "string_list": (".build.strings", "string_list"),
    "strings_of": (".build.strings", "strings_of"),
    "Build": (".build.targets", "Build"),
    "Refusal": (".build.targets", "Refusal"),
    "candidates": (".build.targets", "candidates"),
    "code_for": (".build.targets", "code_for"),
    "newest_toolkit": (".build.targets", "newest_toolkit"),
    "parse_cmake_archs": (".build.targets", "parse_cmake_archs"),
    "parse_nvcc_flags": (".build.targets", "parse_nvcc_flags"),
    "parse_torch_arch_list": (".build.targets", "parse_torch_arch_list"),
    "refusal": (".build.targets", "refusal"),
    "refusing_releases": (".build.targets", "refusing_releases"),
    "torch_arch_fix": (".build.targets", "torch_arch_fix"),
    "cmake_configurations": (".cmake.configs", "configurations"),
    "evaluate": (".cmake.eval", "evaluate"),
    "cxx": (".cpp.cxx", None),
    "host_gate": (".cpp.host_gate", None),
    "tu": (".cpp.tu", None),
    "Context": (".cpp.preprocessor", "Context"),
    "default_context": (".cpp.preprocessor", "default_context"),
    "CudaSource": (".cpp.scan", "CudaSource"),
    "Verdict": (".cpp.scan", "Verdict"),
    "load_features": (".cpp.scan", "load_features"),
    "Blocker": (".cpp.serves", "Blocker"),
    "blocker": (".cpp.serves", "blocker"),
    "Verifier": (".exact.verify", "Verifier"),
    "device_flags": (".exact.verify", "device_flags"),
}


def __getattr__(name: str):
    try:
        module, attr = _WHERE[name]
    except KeyError:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}") from None
    value = import_module(module, __package__)
    if attr is not None:
        value = getattr(value, attr)
    globals()[name] = value  # once: later lookups find it here
    return value


__all__ = [
    "exact", "context_for", "define_fields", "groups", "project_root", "recipe_commands", "configurations", "producer", "UNKNOWN_VALUE", "nvcc_defines", "setup_extensions",
    "assignments", "commands", "is_nvcc", "Resolved", "define_flags", "read_files", "resolve_text", "string_list",
    "strings_of", "known_strings", "Build", "Refusal", "candidates", "code_for", "newest_toolkit", "parse_cmake_archs",
    "parse_nvcc_flags", "parse_torch_arch_list", "refusal", "refusing_releases", "torch_arch_fix",
    "evaluate", "cmake_configurations", "cxx", "host_gate", "tu", "Context", "default_context", "CudaSource", "Verdict", "load_features", "Blocker", "blocker",
    "Verifier", "device_flags", "Nvrtc", "arch_values", "nvrtc_worlds", "target_for",
]
