"""What the rules use of the CUDA analyzer: its public API (a rule imports from here, not from the
modules below; tests/test_layers.py checks it)."""

from . import exact
from .build.context import context_for, groups, project_root
from .build.cupy_nvrtc import Nvrtc, arch_values, nvrtc_worlds, target_for
from .build.makefile import configurations, recipe_commands
from .build.producers import producer
from .build.pyeval import UNKNOWN_VALUE
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
from .exact.verify import Verifier, device_flags

__all__ = [
    "exact", "context_for", "groups", "project_root", "recipe_commands", "configurations", "producer", "UNKNOWN_VALUE", "nvcc_defines",
    "assignments", "commands", "is_nvcc", "Resolved", "define_flags", "read_files", "resolve_text", "string_list",
    "strings_of", "known_strings", "Build", "Refusal", "candidates", "code_for", "newest_toolkit", "parse_cmake_archs",
    "parse_nvcc_flags", "parse_torch_arch_list", "refusal", "refusing_releases", "torch_arch_fix",
    "evaluate", "cmake_configurations", "cxx", "host_gate", "tu", "Context", "default_context", "CudaSource", "Verdict", "load_features",
    "Verifier", "device_flags", "Nvrtc", "arch_values", "nvrtc_worlds", "target_for",
]
