"""The rule API: what a rule is, what it returns, and what it may ask.

A leaf module: it imports the standard library, LibCST and the value model's
abstract values, and neither the engine nor any rule. The engine drives rules
only through what is declared here, so a new rule is one rule module plus its
data (version_matrix/) and docs (rules/*.toml), and no engine edit.

A rule reacts to what it declares (``call_tails``, ``attr_tails``,
``node_types``, the optional ``check_*`` hooks) and asks the file through
:class:`FileContextProtocol`. Rules can also *provide* context that the engine
carries without knowing what it means (see ``Rule``: ``with_context``,
``function_marks``, ``attr_exists``); these provider hooks are consulted on
every registered rule, selected or not, so that deselecting one rule never
changes what another rule sees.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar, NamedTuple, Protocol

import libcst as cst

# What the rules use of the layers below, re-exported: a rule module imports only this one,
# the matrix, the CUDA analyzer's public API (cuda/api.py) and rules/_shared
# (tests/test_layers.py checks it).
from ..base.notes import counted
from ..fs.confine import read_inside, tree_of
from ..fs.files import is_makefile
from ..libmodels import argparse_args
from ..libmodels.probes import capability_range
from ..libmodels.torch_shapes import Layer
from ..model import api_query
from ..model.api_query import span
from ..model.evaluate import truth
from ..model.guard_forms import enabled_worlds, off_switch
from ..syntax.index import Qual, dotted
from ..syntax.walk import walk
from ..values import (
    UNKNOWN,  # what attr_exists returns when it does not know
    ClassValue,
    DictValue,
    Function,
    Instance,
    LibObject,
    Module,
    PathValue,
    Seq,
    Tensor,
    options,
)

__all__ = [
    # the contract
    "CallSite", "ContextProvider", "Example", "Fact", "FileContextProtocol", "Finding", "GuardContextProtocol", "Rule",
    "TextFinding",
    # the value model, as rules ask it
    "UNKNOWN", "ClassValue", "DictValue", "Function", "Instance", "LibObject", "Module", "PathValue", "Seq", "Tensor", "options",
    "truth", "enabled_worlds", "off_switch", "api_query", "span", "capability_range", "Layer", "argparse_args",
    # names and files
    "Qual", "dotted", "is_makefile", "read_inside", "tree_of",
    # a read-only walk of a subtree with a CSTVisitor (a loop, not LibCST's recursive visit)
    "walk",
    # a run-level note counted over the run's files
    "counted",
]


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
    node: cst.CSTNode | None  # None only for a finding on a file that did not parse (``on_parse_error``)
    message: str
    archs: frozenset[str] = frozenset()  # fleet archs the finding fails on
    extra_targets: tuple[str, ...] = ()  # non-GPU targets it fails on (releases)
    severity: str = "error"
    line_delta: int = 0  # report this many lines below the node (a line inside a CUDA string)
    col_delta: int = 0  # and this many columns right of where the node's text starts on that line
    refs: dict = field(default_factory=dict)  # name -> node; "{line:name}" in the message becomes its line
    fix: str | None = None  # source text that replaces ``node`` and fixes the finding (--fix)


class TextFinding(NamedTuple):
    """A finding of a file rule (``check_cuda_file``, ``check_build_file``): a text file has no
    LibCST node, so the finding says its 1-based line and column itself."""

    line: int
    column: int
    message: str
    archs: frozenset[str]  # fleet archs it fails on
    severity: str = "error"


@dataclass
class CallSite:
    """One call, its arguments split once for every rule that reacts to it. With a
    ``*``/``**`` argument the engine splices it in (the value model's constants) when
    a rule first reads ``pos``, ``kw`` or ``has_star``: read them after cheaper tests."""

    node: cst.Call
    pos: list[cst.BaseExpression]
    kw: dict[str, cst.BaseExpression]
    has_star: bool

    def arg(self, index: int | None, name: str | None) -> cst.BaseExpression | None:
        if name is not None and name in self.kw:
            return self.kw[name]
        if index is not None and index < len(self.pos):
            return self.pos[index]
        return None


class GuardContextProtocol(Protocol):
    """``fc.ctx``: where the current node can run."""

    worlds: frozenset[Any]  # the (arch, torch release) worlds control can reach here
    catches: frozenset[str]  # exception names enclosing ``try`` handlers name
    facts: Mapping[str, Any]  # what enclosing ``with`` items and function marks contributed (rule-defined keys)

    def caught(self, exc: str) -> bool:
        """Would an enclosing handler catch an ``exc`` raised here?"""
        ...

    def narrowed(self, worlds: frozenset[Any]) -> GuardContextProtocol: ...

    def fact_worlds(self, key: str) -> frozenset[Any]:
        """The worlds here in which fact ``key`` holds."""
        ...


class FileContextProtocol(Protocol):
    """What rules may ask about the file being checked (the engine's FileContext)."""

    path: str
    text: str
    module: cst.Module
    index: Any  # the module index: ``bindings``, ``star_modules``, ``imported_roots``
    target: Any  # the ResolvedTarget: ``python``, ``cuda``, ``archs``, ``pins``, ``releases``, ``worlds()``
    matrix: Any  # the version matrix: ``section()``, ``feature_archs()``, ``api()``, ``symbols``, ...
    ctx: GuardContextProtocol
    state: dict[str, Any]  # per-file memo a rule keeps between calls
    reads: list  # other files a rule read (a .cu loaded by name): the cache checks them too
    scopes: list[dict[str, Any]]
    current_class: cst.ClassDef | None
    model: Any  # the file's structure (model/structure.py FileModel): scopes, calls, definitions
    project: Any  # the project's own modules the value model follows into (model/project.py Project)
    def_stack: list[cst.CSTNode]  # enclosing function and class definitions, innermost last
    stmt_stack: list[cst.CSTNode]  # enclosing statements, innermost last
    postponed_annotations: bool  # ``from __future__ import annotations``: no annotation runs (PEP 563)

    @property
    def loc(self) -> tuple[cst.CSTNode, cst.CSTNode | None]:
        """The innermost definition (or the module) and statement the traversal is at."""
        ...

    def value_of(self, expr: cst.BaseExpression, world: Any, bindings: Any = None) -> Any:
        """The abstract value of ``expr`` here in one world (and one scenario's bindings)."""
        ...

    def value_everywhere(self, expr: cst.BaseExpression) -> Any:
        """The value of ``expr`` when it is the same in every world that reaches here, else UNKNOWN."""
        ...

    def value_if_env_unset(self, expr: cst.BaseExpression) -> tuple[Any, frozenset[str]]:
        """``value_everywhere`` where the environment variables ``expr`` reads with a default
        (``os.getenv("X", "9.0")``) are unset, with their names; (UNKNOWN, empty) if it reads none."""
        ...

    def scenarios(self) -> list[tuple[Any, Any]]:
        """The ways the current function runs: ``(call node, bindings)`` per call site, caller
        scenario, ``@pytest.mark.parametrize`` row or loop item; ``[(None, None)]`` when nothing
        calls it."""
        ...

    def scenarios_complete(self) -> bool:
        """Do the scenarios show every way the current function runs (only this file calls it)?"""
        ...

    def reachable(self, world: Any, bindings: Any = None) -> bool:
        """Can the current statement run in ``world`` under ``bindings`` (one scenario)?"""
        ...

    def lookup(self, name: str) -> Any:
        """The binding of a name in the innermost scope that has one (module index last)."""
        ...

    def resolve(self, node: cst.BaseExpression) -> str | None:
        """Qualified name of a Name/Attribute chain through imports and aliases."""
        ...

    def evaluator(self, world: Any, *, may: bool = False) -> Any:
        """The symbolic evaluator for one world (``.eval(expr)`` -> an abstract value). With
        ``may``: where paths merge (branches, call sites, returns) it keeps the values known on
        some path and drops the unknown ones, so a value that is X on one path and unknown on
        another is X, not UNKNOWN: what the value may be. For a rule whose finding holds on
        any path that reaches it with X (pickling X fails), never for "it is X"; the
        conditions that decide which branches run are asked as without it."""
        ...

    def eval_in(self, expr: cst.BaseExpression, worlds: Iterable[Any] | None = None,
                may: bool = False) -> dict[Any, Any]:
        """The abstract value of ``expr`` in each world (default: the worlds that reach here);
        ``may`` as for ``evaluator``."""
        ...

    def split(self, test: cst.BaseExpression) -> tuple[frozenset[Any], frozenset[Any]]:
        """Worlds where ``test`` may be true, and where it may be false."""
        ...

    def describe(self, archs: Iterable[str]) -> str:
        """``sm_80 (A100), sm_90 (H100)``: archs as the user named them."""
        ...

    def later(self, check: Callable[[], list[Finding]]) -> None:
        """Run ``check()`` once the whole module is walked, for a finding that needs what the
        module does anywhere (a setting assigned after the call, in a function not yet
        entered). It runs in the guard context and statement of the check that handed it,
        and its findings belong there; resolve names before handing it (scopes are the
        module's by then). Only from a check the engine runs for real: not from a
        ``worlds_monotone`` rule, whose first try in every world is a trial."""
        ...


@dataclass(frozen=True)
class Fact:
    """A fact rules share through ``fc.ctx.facts`` (a ``with`` body's or a function mark's): its
    key, what it holds, and the ContextProvider in rules/_shared that provides it."""

    key: str
    holds: str
    provider: str


class ContextProvider:
    """Provides shared facts (rules/_shared/facts.py), asked wherever code runs, whatever rules are
    selected: ``with_context(call, qualname, fc) -> dict | None`` and ``function_marks() ->
    dict[str, str]`` as on Rule (below). A provider reports nothing; rules read what it says."""

    FACTS: ClassVar[tuple[Fact, ...]] = ()

    def __init__(self, matrix) -> None:
        self.matrix = matrix
        self.target = None

    def function_marks(self) -> dict[str, str]:
        return {}


class Rule:
    """One rule: a code, the names it reacts to, VALID / INVALID examples.

    Checks (called by the engine where the guards leave a world; each returns
    a list of Findings): ``check_call``, ``check_attribute``, and optionally
    ``check_node`` (for each node of a type in ``node_types(target)``),
    ``check_assign(node: cst.Assign, fc)`` (every ``=`` statement, whatever its
    targets: ``d[k] = v``, ``torch.backends.cuda.matmul.allow_tf32 = True``,
    ``a, b = ...``; not ``x: T = v`` nor ``x += v``), ``check_dict``,
    ``check_decorator``, ``check_import``; non-Python files:
    ``check_cuda_file(text, path, target, cuda, reads)`` and
    ``check_build_file(text, path, target, cuda, reads)``, which return
    TextFindings and add every other file they read to ``reads`` (the cache
    checks those too).

    Optional hooks, present only on the rules that define them:

    - ``on_parse_error(data, line) -> Finding | None``: a file LibCST could not
      parse (``line``: where the parser stopped); a rule that can name the
      cause (syntax newer than the parser) answers with a Finding whose
      ``node`` is None, reported at that line instead of a parse error.

    Context providers (asked of every registered rule, selected or not):

    - ``attr_exists(qualname, world)``: True/False/UNKNOWN, for ``hasattr``
      guards. It answers by the world's releases alone (``world.torch``,
      ``world.releases``), never its GPU: the value model shares an answer built
      on it between worlds that differ only in the GPU (model/evaluate.py RELEASE).
    - ``newer_syntax(data, line, python) -> bool``: do the lines around ``line``
      hold syntax newer than ``python`` (a (major, minor) tuple)? The linter
      asks before it takes CPython's refusal of a file as a parse error.
    - ``with_context(call, qualname, fc) -> dict | None``: what ``with call:``
      means for the code in its body; the dict is merged into ``fc.ctx.facts``
      there (a later item overrides an earlier one, as nesting does).
    - ``function_marks() -> dict[str, str]``: qualified callables that mark a
      function (``{"pkg.jit": "jitted"}``), as its decorator (``@pkg.jit``,
      ``@pkg.jit(...)``) or by being handed it (``pkg.jit(fn)``,
      ``pkg.jit(...)(fn)``); ``fc.ctx.facts[mark]`` is True in that function's
      body and in functions nested in it, or, where only calls made under a
      guard mark it, the worlds of those calls (``fc.ctx.fact_worlds(mark)``).
    """

    code: ClassVar[str]
    name: ClassVar[str]
    # Byte strings of which a file must contain at least one to be parsed for this rule.
    tokens: ClassVar[tuple[bytes, ...]] = ()
    # Last components of the call names this rule reacts to (cheap pre-check). Not ClassVar:
    # a rule whose tails come from its tables sets them on the instance in __init__.
    call_tails: frozenset[str] = frozenset()
    attr_tails: frozenset[str] = frozenset()
    # True when fewer worlds in ``fc.ctx.worlds`` can only take findings away (the rule
    # judges each world it is given and reports the failing ones): the engine then runs
    # it first with every world of the target, deciding the guards around the node only
    # when that finds something (most calls are fine everywhere; their guards need no answer).
    worlds_monotone: ClassVar[bool] = False
    # Set by the registry from rules/policy.toml [callers_choice]: inside a function no code of
    # the file calls, True judges it with its parameters at their defaults (a branch that only
    # a caller's non-default argument turns on is the caller's choice); False judges every
    # branch its parameters may take (the engine's open worlds, guards.Ctx.projected).
    callers_choice: ClassVar[bool] = False
    # Hooks (method names) the engine runs wherever their node sits, dead code included,
    # without deciding the guards around it first: the rule asks ``fc.ctx.worlds`` itself
    # where the answer matters (a recorder keeps ``fc.ctx`` with each record and asks it
    # when the record is used), so a guard nobody needs is never evaluated.
    reach_own: ClassVar[frozenset[str]] = frozenset()
    VALID: ClassVar[list[Example]] = []
    INVALID: ClassVar[list[Example]] = []

    def __init__(self, matrix) -> None:
        self.matrix = matrix
        self.target: Any = None  # the ResolvedTarget, set by the Linter
        # Exact mode's compiler for this run (cuda/exact/verify.py Verifier: nvcc, its compile
        # budget and cache), set by the Linter when the target asks for it (--cuda-verify), else
        # None. The run starts and closes it; a rule only asks it (``run``) and passes its
        # ``notes`` on as its own.
        self.verifier: Any = None
        # Run-level notes (a tool missing, a budget spent), said once per run however many
        # files hit them: the linter takes them after each file and the run deduplicates.
        self.notes: list[str] = []

    @classmethod
    def prefilter_patterns(cls, target, matrix) -> tuple[bytes, ...]:
        """Regular expressions (bytes) of which a file must match one to be parsed for
        this rule on ``target``; by default the escaped ``tokens``. A rule whose
        triggers depend on the target (the Python version) narrows them here."""
        return tuple(re.escape(t) for t in cls.tokens)

    @classmethod
    def prefilter_check(cls, target, matrix) -> Callable[[bytes], bool] | None:
        """A second prefilter test, ``(bytes) -> bool``, for what one regex cannot
        say cheaply (a standard-library name *and* an import of its package); None
        when the patterns say it all. Run only when no pattern matched."""
        return None

    @classmethod
    def explain_facts(cls, matrix) -> str:
        """The matrix facts behind this rule, for ``aicompat explain``."""
        return ""

    def known_names(self) -> set[str]:
        """Fully qualified names this rule knows; used for ``from x import *``."""
        return set()

    def function_marks(self) -> dict[str, str]:
        return {}

    def check_call(self, site: CallSite, qualname: str, fc: FileContextProtocol) -> list[Finding]:
        return []

    def check_attribute(self, node: cst.Attribute, qualname: str, fc: FileContextProtocol) -> list[Finding]:
        return []
