"""AIC401 python-syntax: syntax and standard-library names the target Python
does not have (facts: version_matrix/syntax.toml, from What's New and the PEPs;
version_matrix/stdlib.toml, generated from typeshed).

Syntax is judged without runtime guards: a ``match`` statement under
``if sys.version_info >= (3, 10):`` still stops the whole file from compiling
on 3.9. Standard-library names are judged where they run: code that a
``sys.version_info`` test, ``TYPE_CHECKING``, or a ``try`` catching
ImportError (imports), AttributeError (attributes) or NameError (builtins)
keeps from failing is not reported.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import libcst as cst

from ..index import dotted
from .base import Example, Finding, Rule
from .syntax_features import DETECTORS, SIGNATURES

Version = tuple[int, int]


def _ver(text: str) -> Version:
    major, minor = text.split(".")[:2]
    return int(major), int(minor)


def _show(v: Version) -> str:
    return f"{v[0]}.{v[1]}"


@dataclass
class Plan:
    """What can fail on one target Python: computed once per (matrix, Python)."""

    python: Version
    features: dict[str, tuple[Version, str]] = field(default_factory=dict)  # key -> (first Python, construct)
    node_types: dict[type, object] = field(default_factory=dict)
    modules: dict[str, tuple[str, Version]] = field(default_factory=dict)  # module -> ("added"|"removed", version)
    names: dict[str, dict[str, tuple[str, Version]]] = field(default_factory=dict)  # module -> name -> (kind, v)
    patterns: tuple[bytes, ...] = ()


_PLANS: dict[tuple[int, Version], tuple[object, Plan]] = {}


def plan_for(matrix, python: Version) -> Plan:
    key = (id(matrix), python)
    hit = _PLANS.get(key)
    if hit is not None and hit[0] is matrix:
        return hit[1]
    plan = Plan(python)
    for k, e in matrix.section("syntax.toml", "feature").items():
        v = _ver(e["python"])
        if v > python:
            plan.features[k] = (v, e["construct"])
    for tp, (_detector, keys) in DETECTORS.items():
        if any(k in plan.features for k in keys):
            plan.node_types[tp] = _detector
    words: set[str] = set()
    for mod, e in matrix.section("stdlib.toml", "module").items():
        if "added" in e and _ver(e["added"]) > python:
            plan.modules[mod] = ("added", _ver(e["added"]))
        elif "removed" in e and _ver(e["removed"]) <= python:
            plan.modules[mod] = ("removed", _ver(e["removed"]))
        if mod in plan.modules:
            words.add(mod.rsplit(".", 1)[-1])  # every way to import a module spells its last component
            continue
        for kind, table in (("added", e.get("names_added", {})), ("removed", e.get("names_removed", {}))):
            for v_text, names in table.items():
                v = _ver(v_text)
                if (kind == "added" and v > python) or (kind == "removed" and v <= python):
                    for n in names:
                        plan.names.setdefault(mod, {})[n] = (kind, v)
                        words.add(n)
    pats = {p for k in plan.features for p in SIGNATURES[k]}
    if words:
        pats.add(rb"\b(?:" + _trie_regex(sorted(w.encode() for w in words)) + rb")\b")
    plan.patterns = tuple(sorted(pats))
    _PLANS[key] = (matrix, plan)
    return plan


def _trie_regex(words: list[bytes]) -> bytes:
    """An alternation of many words as a prefix tree: the regex engine then
    tries one branch per letter instead of every word at every position."""
    trie: dict = {}
    for w in words:
        node = trie
        for ch in w:
            node = node.setdefault(ch, {})
        node[None] = {}

    def emit(node: dict) -> bytes:
        end = None in node
        branches = [re.escape(bytes([ch])) + emit(child) for ch, child in sorted((k, v) for k, v in node.items()
                                                                               if k is not None)]
        if not branches:
            return b""
        body = branches[0] if len(branches) == 1 else b"(?:" + b"|".join(branches) + b")"
        if end:
            body = b"(?:" + body + b")?"
        return body

    return emit(trie)


_T = "import sys\n"


class PythonSyntax(Rule):
    code = "AIC401"
    name = "python-syntax"
    tokens = ()  # per target: see prefilter_patterns

    VALID = [
        Example("if (n := len(a)) > 3:\n    pass\n", python="3.8"),
        Example("match command:\n    case 'go':\n        pass\n", python="3.10"),
        Example(_T + "if sys.version_info >= (3, 11):\n    import tomllib\nelse:\n    import tomli as tomllib\n",
                python="3.10"),
        Example("try:\n    import tomllib\nexcept ModuleNotFoundError:\n    import tomli as tomllib\n", python="3.10"),
        Example("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from typing import Self\n", python="3.10"),
        Example("import itertools\nif hasattr(itertools, 'batched'):\n    f = itertools.batched\n", python="3.11"),
        Example("x = f\"{d['a']}\"\ny = f'{n:#x}'\n", python="3.8"),
        Example("with (a, b):\n    pass\n", python="3.8"),
        Example("from itertools import *\nbatched = None\n", python="3.11"),
    ]
    INVALID = [
        Example("match command:\n    case 'go':\n        pass\n", python="3.9",
                expect="match statement needs Python 3.10; target is Python 3.9"),
        Example(_T + "if sys.version_info >= (3, 10):\n    match x:\n        case 1:\n            pass\n", python="3.9",
                expect="match statement needs Python 3.10"),
        Example("import tomllib\n", python="3.10",
                expect="tomllib is new in Python 3.11; target is Python 3.10 (use tomli as a fallback"),
        Example("from typing import Self\n", python="3.10", expect="typing.Self is new in Python 3.11"),
        Example("import itertools as it\nfor b in it.batched(xs, 2):\n    pass\n", python="3.11",
                expect="itertools.batched is new in Python 3.12"),
        Example("from itertools import *\nfor b in batched(xs, 2):\n    pass\n", python="3.11",
                expect="itertools.batched is new in Python 3.12"),
        Example("try:\n    pass\nexcept* ValueError:\n    pass\n", python="3.10", expect="except*"),
        Example("type Vec = list[float]\n", python="3.11", expect="type statement (type X = ...) needs Python 3.12; target is Python 3.11"),
        Example("x = f\"{d[\"a\"]}\"\n", python="3.11", expect="needs Python 3.12"),
        Example("import imp\n", python="3.12", expect="imp was removed in Python 3.12"),
        Example("def f(a, /, b):\n    pass\n", python="3.7", expect="positional-only"),
    ]

    def __init__(self, matrix) -> None:
        super().__init__(matrix)
        self.backports = {k: e["package"] for k, e in matrix.section("syntax.toml", "backport").items()}
        every = set()
        for e in matrix.section("stdlib.toml", "module").values():
            for table in (e.get("names_added", {}), e.get("names_removed", {})):
                for names in table.values():
                    every.update(names)
        self._known = {f"{mod}.{n}" for mod, e in matrix.section("stdlib.toml", "module").items()
                       for table in (e.get("names_added", {}), e.get("names_removed", {}))
                       for names in table.values() for n in names}
        self.attr_tails = frozenset(every)
        self.call_tails = frozenset(every)  # bare names: builtins and ``from m import *``

    @classmethod
    def prefilter_patterns(cls, target, matrix) -> tuple[bytes, ...]:
        return plan_for(matrix, target.python).patterns

    @classmethod
    def explain_facts(cls, matrix) -> str:
        lines = [f"- {e['construct']}: Python {e['python']}"
                 for e in sorted(matrix.section("syntax.toml", "feature").values(), key=lambda e: _ver(e["python"]))]
        mods = matrix.section("stdlib.toml", "module")
        n_names = sum(len(ns) for e in mods.values() for t in (e.get("names_added", {}), e.get("names_removed", {}))
                      for ns in t.values())
        lines.append(f"- standard library: {len(mods)} modules with changes after 3.8, {n_names} versioned names "
                     f"(version_matrix/stdlib.toml, generated from typeshed)")
        return "\n".join(lines)

    def known_names(self) -> set[str]:
        return set(self._known)

    def node_types(self, target) -> dict:
        return plan_for(self.matrix, target.python).node_types

    # -- syntax --------------------------------------------------------------------
    def check_node(self, node: cst.CSTNode, fc) -> list[Finding]:
        plan = plan_for(self.matrix, fc.target.python)
        detector = plan.node_types.get(type(node))
        if detector is None:
            return []
        inner = fc.state.setdefault("AIC401.walrus", {})
        out = []
        for key, at in detector(node, fc.module.code_for_node):
            if key in ("walrus_in_index", "walrus_in_set"):
                inner[id(at)] = key  # reported when the assignment expression itself is visited
                continue
            if key == "walrus":
                key = next((k for k in (inner.get(id(at)), "walrus") if k in plan.features), None)
                if key is None:
                    continue
            f = plan.features.get(key)
            if f is None:
                continue
            out.append(self._finding(at, f"{f[1]} needs Python {_show(f[0])}; target is Python {_show(plan.python)}",
                                     fc))
        return out

    def _finding(self, node, message, fc) -> Finding:
        py = fc.target.python
        return Finding(node, message, frozenset(fc.target.archs), extra_targets=(f"python=={_show(py)}",))

    # -- standard library ------------------------------------------------------------
    def check_import(self, node: cst.Import | cst.ImportFrom, fc) -> list[Finding]:
        if fc.ctx.caught("ImportError"):
            return []
        plan = plan_for(self.matrix, fc.target.python)
        out = []
        if isinstance(node, cst.Import):
            for alias in node.names:
                full = dotted(alias.name)
                hit = self._module_hit(full, plan) if full else None
                if hit:
                    out.append(self._finding(alias.name, self._module_message(hit, plan), fc))
            return out
        if node.relative or node.module is None:
            return out
        module = dotted(node.module)
        if module is None:
            return out
        hit = self._module_hit(module, plan)
        if hit:
            return [self._finding(node.module, self._module_message(hit, plan), fc)]
        if isinstance(node.names, cst.ImportStar):
            return out
        for alias in node.names:
            if not isinstance(alias.name, cst.Name):
                continue
            name = alias.name.value
            sub = f"{module}.{name}"
            if sub in plan.modules:
                out.append(self._finding(alias.name, self._module_message(sub, plan), fc))
            elif name in plan.names.get(module, {}):
                out.append(self._finding(alias.name, self._name_message(module, name, plan), fc))
        return out

    def check_attribute(self, node: cst.Attribute, qualname: str, fc) -> list[Finding]:
        if fc.ctx.caught("AttributeError"):
            return []
        plan = plan_for(self.matrix, fc.target.python)
        module, _, name = qualname.rpartition(".")
        if name in plan.names.get(module, {}):
            return [self._finding(node, self._name_message(module, name, plan), fc)]
        return []

    def check_call(self, site, qualname: str, fc) -> list[Finding]:
        """Bare names: ``from itertools import *`` then ``batched(...)``, and new builtins (``anext``)."""
        func = site.node.func
        if not isinstance(func, cst.Name) or fc.lookup(func.value) is not None or fc.ctx.caught("NameError"):
            return []
        plan = plan_for(self.matrix, fc.target.python)
        name = func.value
        module, _, tail = qualname.rpartition(".") if qualname else ("builtins", "", name)
        if tail != name or name not in plan.names.get(module, {}):
            return []
        if module == "builtins" and _bound_somewhere(name, fc.text):
            return []
        return [self._finding(func, self._name_message(module, name, plan), fc)]

    def attr_exists(self, qualname: str, world):
        """``hasattr(itertools, "batched")`` on the target Python (guards read this)."""
        from ..evaluate import UNKNOWN

        target = getattr(self, "target", None)
        module, _, name = qualname.rpartition(".")
        if target is None or not module:
            return UNKNOWN
        plan = plan_for(self.matrix, target.python)
        hit = plan.names.get(module, {}).get(name)
        if hit is not None:
            return False
        if name in self.attr_tails and f"{module}.{name}" in self._known:
            return True  # a versioned name the target has
        return UNKNOWN

    # -- messages ----------------------------------------------------------------------
    def _module_hit(self, full: str, plan: Plan) -> str | None:
        parts = full.split(".")
        for i in range(1, len(parts) + 1):
            m = ".".join(parts[:i])
            if m in plan.modules:
                return m
        return None

    def _module_message(self, module: str, plan: Plan) -> str:
        kind, v = plan.modules[module]
        target = f"target is Python {_show(plan.python)}"
        if kind == "removed":
            return f"{module} was removed in Python {_show(v)}; {target} (guard the import or use a replacement)"
        pkg = self.backports.get(module)
        hint = (f"use {pkg} as a fallback under try/except ImportError" if pkg
                else "guard it with sys.version_info or try/except ImportError")
        return f"{module} is new in Python {_show(v)}; {target} ({hint})"

    def _name_message(self, module: str, name: str, plan: Plan) -> str:
        kind, v = plan.names[module][name]
        label = name if module == "builtins" else f"{module}.{name}"
        target = f"target is Python {_show(plan.python)}"
        if kind == "removed":
            return f"{label} was removed in Python {_show(v)}; {target}"
        pkg = self.backports.get(module)
        hint = f"import it from {pkg}" if pkg else "guard it with sys.version_info or hasattr"
        return f"{label} is new in Python {_show(v)}; {target} ({hint})"


def _bound_somewhere(name: str, text: str) -> bool:
    """Is a builtin's name defined by the module itself (``def anext``, ``anext = ...``)?"""
    n = re.escape(name)
    return re.search(rf"\b(?:def|class|as|for|global|nonlocal)\s+{n}\b|\b{n}\s*(?::=|=(?!=)|:)|"
                     rf"\bimport\b[^\n]*\b{n}\b", text) is not None


def newer_syntax_at(data: bytes, line: int, matrix, python: Version) -> tuple[str, Version, str] | None:
    """When LibCST cannot parse a file (an older LibCST than the syntax), name the
    construct on the lines around the failure if it is newer than the target:
    (feature, first Python, construct). None when no signature of a newer
    feature matches there; the file is then an AIC001 parse error."""
    plan = plan_for(matrix, python)
    if not plan.features:
        return None
    lines = data.splitlines(keepends=True)
    window = b"".join(lines[max(line - 3, 0):line + 2])
    best = None
    for key, (v, construct) in plan.features.items():
        if any(re.search(p, window) for p in SIGNATURES[key]) and (best is None or v > best[1]):
            best = (key, v, construct)
    return best
