"""What a rule is: one small class with its code, the names it reacts to,
and VALID / INVALID examples that the test suite runs (as in Fixit)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, ClassVar

import libcst as cst

if TYPE_CHECKING:  # pragma: no cover
    from ..engine import CallSite, FileContext


@dataclass
class Example:
    """A complete program and the target it is judged on.

    ``gpus``/``pins``/``python`` are target settings. ``findings`` are the
    rule's findings on it, exactly, as ``(line, column, message)`` with the
    1-based positions aicompat reports: required for INVALID examples, empty
    for VALID ones.
    """

    code: str
    gpus: list[str] = field(default_factory=lambda: ["sm_80"])
    pins: dict[str, str] = field(default_factory=dict)
    python: str = "3.11"
    findings: list[tuple[int, int, str]] = field(default_factory=list)


@dataclass
class Finding:
    node: cst.CSTNode
    message: str
    archs: frozenset[str] = frozenset()  # fleet archs the finding fails on
    extra_targets: tuple[str, ...] = ()  # non-GPU targets it fails on (releases)
    severity: str = "error"
    line_delta: int = 0  # report this many lines below the node (a line inside a CUDA string)
    refs: dict = field(default_factory=dict)  # name -> node; "{line:name}" in the message becomes its line
    fix: str | None = None  # source text that replaces ``node`` and fixes the finding (--fix)


class Rule:
    code: ClassVar[str]
    name: ClassVar[str]
    # Byte strings of which a file must contain at least one to be parsed for this rule.
    tokens: ClassVar[tuple[bytes, ...]] = ()
    # Last components of the call names this rule reacts to (cheap pre-check).
    call_tails: ClassVar[frozenset[str]] = frozenset()
    attr_tails: ClassVar[frozenset[str]] = frozenset()
    VALID: ClassVar[list[Example]] = []
    INVALID: ClassVar[list[Example]] = []

    def __init__(self, matrix) -> None:
        self.matrix = matrix
        self.target = None  # the ResolvedTarget, set by the Linter

    @classmethod
    def prefilter_patterns(cls, target, matrix) -> tuple[bytes, ...]:
        """Regular expressions (bytes) of which a file must match one to be parsed for
        this rule on ``target``; by default the escaped ``tokens``. A rule whose
        triggers depend on the target (AIC401: the Python version) narrows them here."""
        return tuple(re.escape(t) for t in cls.tokens)

    @classmethod
    def prefilter_check(cls, target, matrix):
        """A second prefilter test, ``(bytes) -> bool``, for what one regex cannot
        say cheaply (AIC401: a standard-library name *and* an import of its
        package); None when the patterns say it all. Run only when no pattern matched."""
        return None

    @classmethod
    def explain_facts(cls, matrix) -> str:
        """The matrix facts behind this rule, for ``aicompat explain``."""
        return ""

    def known_names(self) -> set[str]:
        """Fully qualified names this rule knows; used for ``from x import *``."""
        return set()

    def check_call(self, site: "CallSite", qualname: str, fc: "FileContext") -> list[Finding]:
        return []

    def check_attribute(self, node: cst.Attribute, qualname: str, fc: "FileContext") -> list[Finding]:
        return []
