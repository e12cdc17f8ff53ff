"""The rule registry: the rules are discovered, the codes are data.

Every module or package under ``aicompat.rules`` (but ``_shared`` and this one) is imported
and each :class:`Rule` subclass it defines with a ``code`` is a rule; they run in the order
of their codes. Every code ever assigned, its name and its pylint message id live in
``rules/codes.toml``; a rule whose code or name is not there is an error at import, so a
code cannot be taken twice or renamed by accident.

AIC0xx engine (parse errors, per-file limits), AIC1xx hardware-gated Python APIs,
AIC2xx versioned APIs, AIC3xx CUDA source and build flags, AIC4xx Python language versions.
Adding a rule is one module here, its data under version_matrix/, its docs under
rules/AICxxx.toml and its line in rules/codes.toml (``tools/new_rule.py`` writes them).
"""

from __future__ import annotations

import importlib
import pkgutil

from ..base.data import data_dir
from ..base.toml_compat import tomllib
from ..core.ruleapi import ContextProvider, Rule
from ._shared import facts


def _codes() -> dict[str, dict]:
    with open(data_dir("rules") / "codes.toml", "rb") as fh:
        return tomllib.load(fh)


def _discover(table: dict[str, dict]) -> list[type[Rule]]:
    here = __name__.rsplit(".", 1)[0]
    found: list[type[Rule]] = []
    for info in pkgutil.iter_modules(importlib.import_module(here).__path__):
        if info.name.startswith("_") or info.name == "registry":
            continue
        module = importlib.import_module(f"{here}.{info.name}")
        for obj in vars(module).values():
            if isinstance(obj, type) and issubclass(obj, Rule) and obj is not Rule and \
                    obj.__module__ == module.__name__ and getattr(obj, "code", None):
                entry = table.get(obj.code)
                if entry is None or entry.get("name") != obj.name:
                    raise ImportError(f"{module.__name__}.{obj.__name__}: {obj.code} {obj.name!r} is not in "
                                      "rules/codes.toml (add its line; a code and its name are never reused)")
                found.append(obj)
    codes = [c.code for c in found]
    if len(set(codes)) != len(codes):
        raise ImportError(f"two rule classes share a code: {sorted(c for c in codes if codes.count(c) > 1)}")
    return sorted(found, key=lambda c: c.code)


def _policy() -> dict[str, dict]:
    with open(data_dir("rules") / "policy.toml", "rb") as fh:
        return tomllib.load(fh)


_TABLE = _codes()
RULE_CLASSES: list[type[Rule]] = _discover(_TABLE)
_POLICY = _policy()
# Which rules take a caller's non-default argument as the caller's choice (rules/policy.toml).
CALLERS_CHOICE = frozenset(_POLICY["callers_choice"]["codes"])
for _cls in RULE_CLASSES:
    _cls.callers_choice = _cls.code in CALLERS_CHOICE
# Every code and name ever assigned, implemented or not; never reuse one.
CODES: dict[str, str] = {code: e["name"] for code, e in _TABLE.items() if e.get("listed", True)}
# pylint message ids' two digits, per code (AIC000 included).
MESSAGE_NUMBERS: dict[str, str] = {code: e["pylint"] for code, e in _TABLE.items()}
# AIC001-AIC004 are the engine's: parse errors, per-file limits, suppression comments.
IMPLEMENTED = {"AIC001", "AIC002", "AIC003", "AIC004"} | {c.code for c in RULE_CLASSES}
# Codes that run only where a selection names them whole (``--extend-select AIC004``).
OPT_IN = frozenset(code for code, e in _TABLE.items() if e.get("opt_in"))
# Codes whose findings do not fail the run unless selected by name or family (``tier = "info"``).
INFORMATIONAL = frozenset(code for code, e in _TABLE.items() if e.get("tier") == "info")
# The providers of the facts rules share (rules/_shared/facts.py), asked whatever is selected.
PROVIDERS: list[type[ContextProvider]] = [obj for obj in vars(facts).values() if isinstance(obj, type)
                                          and issubclass(obj, ContextProvider) and obj is not ContextProvider]
SHARED_FACTS = {f.key: f for f in facts.FACTS}


def unknown_code(codes) -> str | None:
    """The first of ``codes`` (codes or prefixes, as ``--select`` and ``[tool.aicompat]
    select`` take them) that names no rule, else None. An empty one names nothing."""
    for code in codes:
        c = code.strip().upper()
        if not c or not any(known.startswith(c) for known in CODES):
            return code
    return None


__all__ = ["CODES", "IMPLEMENTED", "MESSAGE_NUMBERS", "OPT_IN", "INFORMATIONAL", "PROVIDERS", "RULE_CLASSES", "SHARED_FACTS", "unknown_code"]
