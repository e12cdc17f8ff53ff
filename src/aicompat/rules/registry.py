"""The rule registry. Codes and names are a contract (see rules/README.md):

AIC0xx engine (parse errors, per-file limits), AIC1xx hardware-gated Python APIs,
AIC2xx versioned APIs, AIC3xx CUDA source and build flags, AIC4xx Python
language versions.

Adding a rule: its module under rules/, its data under version_matrix/, its
docs under rules/*.toml, and one line here.
"""

from __future__ import annotations

from ..core.ruleapi import Rule
from .api_unavailable import ApiUnavailable
from .attention_limits import AttentionKernelLimits
from .behavior_change import BehaviorChange
from .build_flags import BuildArchFlags
from .compile_backend import CompileBackend
from .deprecated_api import DeprecatedApi
from .fp8 import Fp8Unsupported
from .inline_cuda import InlineCudaArch
from .pickle_cuda import PickleCudaObject
from .python_syntax import PythonSyntax
from .unknown_argument import UnknownArgument
from .v_headdim import VHeadDimMismatch
from .weights_only import LoadWeightsOnly

RULE_CLASSES: list[type[Rule]] = [VHeadDimMismatch, Fp8Unsupported, CompileBackend, PickleCudaObject, LoadWeightsOnly,
                                   AttentionKernelLimits,
                                   ApiUnavailable, UnknownArgument, DeprecatedApi, BehaviorChange, InlineCudaArch,
                                   BuildArchFlags, PythonSyntax]

# Every code and name ever assigned, implemented or not; never reuse one.
CODES: dict[str, str] = {
    "AIC001": "parse-error",
    "AIC002": "limit-exceeded",
    "AIC101": "v-headdim-mismatch",
    "AIC102": "fp8-unsupported",
    "AIC103": "compile-backend",
    "AIC104": "pickle-cuda-object",
    "AIC105": "load-weights-only",
    "AIC106": "attention-kernel-limits",
    "AIC201": "api-unavailable",
    "AIC202": "unknown-argument",
    "AIC203": "deprecated-api",
    "AIC204": "behavior-change",
    "AIC301": "inline-cuda-arch",
    "AIC302": "build-arch-flags",
    "AIC401": "python-syntax",
}
IMPLEMENTED = {"AIC001", "AIC002"} | {c.code for c in RULE_CLASSES}


def unknown_code(codes) -> str | None:
    """The first of ``codes`` (codes or prefixes, as ``--select`` and ``[tool.aicompat]
    select`` take them) that names no rule, else None. An empty one names nothing."""
    for code in codes:
        c = code.strip().upper()
        if not c or not any(known.startswith(c) for known in CODES):
            return code
    return None


__all__ = ["CODES", "IMPLEMENTED", "RULE_CLASSES", "unknown_code"]
