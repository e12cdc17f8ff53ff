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
from typing import Callable

import libcst as cst

from ...core.ruleapi import Example, Finding, Rule, dotted
from . import annotation_runtime as ann
from .features import DETECTORS, SIGNATURES, Scan

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
    node_types: dict[type, Callable | None] = field(default_factory=dict)  # None: handled by the rule
    modules: dict[str, tuple[str, Version]] = field(default_factory=dict)  # module -> ("added"|"removed", version)
    names: dict[str, dict[str, tuple[str, Version]]] = field(default_factory=dict)  # module -> name -> (kind, v)
    # The prefilter: syntax signatures; modules flagged themselves; for each module, the words
    # (its names, its submodules) that are flagged when it is imported; new builtins.
    signatures: list = field(default_factory=list)
    flagged_modules: set[bytes] = field(default_factory=set)
    words_by_module: dict[bytes, list[bytes]] = field(default_factory=dict)
    children: dict[bytes, list[bytes]] = field(default_factory=dict)  # module -> its submodules with words
    builtins: list[bytes] = field(default_factory=list)
    tails: frozenset[str] = frozenset()  # every name that can fail: the walker's attribute/call filter
    # Runtime features of annotations evaluated at definition time that the target lacks:
    # key -> (first Python, entry); generic: qualified name -> how a message shows it.
    runtime: dict[str, tuple[Version, dict]] = field(default_factory=dict)
    generic: dict[str, str] = field(default_factory=dict)
    typing_twin: dict[str, str] = field(default_factory=dict)  # qualified name -> its typing name

    def relevant(self, data: bytes) -> bool:
        """Could AIC401 flag something in this file on this target? A superset.

        A standard-library name (``batched``, ``taskgroups``) is only reachable
        through an import of its module (``import itertools as it``, ``from
        itertools import *``, ``from os import path``), so a file needs that
        import *and* the word; new builtins need a call. Literal ``in`` tests go
        first: they are far cheaper than any regex."""
        for sig in self.signatures:
            if sig.search(data):
                return True
        for name in self.builtins:
            if name in data and _word(name, rb"\s*\(").search(data):
                return True
        if not (self.flagged_modules or self.words_by_module):
            return False
        from_lists: dict[bytes, list[bytes]] = {}
        for m in _FROM_IMPORT_RX.finditer(data):
            from_lists.setdefault(m.group(1).strip(b"."), []).append(m.group(2))
        for module in _reachable_modules(data, self.children):
            if module in self.flagged_modules:
                return True
            for w in self.words_by_module.get(module, ()):
                if w not in data:
                    continue
                # Reached as alias.name, named in "from module import ...", or anywhere after "import *".
                if _word(w, rb"\b", rb"\.\s*").search(data):
                    return True
                for names in from_lists.get(module, ()):
                    if names.lstrip(b" \t(").startswith(b"*") or _word(w).search(names):
                        return True
        return False


_PLANS: dict[tuple[int, Version], tuple[object, Plan]] = {}
# Import statements, found from their keyword (a leading literal keeps the scan fast):
# "import a.b as c, d" -> "a.b as c, d"; "from a.b import x" -> "a.b".
_IMPORT_RX = re.compile(rb"import[ \t]+((?:[\w.]+(?:[ \t]+as[ \t]+\w+)?[ \t\\\r\n]*,[ \t\\\r\n]*)*[\w.]+)")
_FROM_RX = re.compile(rb"from[ \t]+([\w.]+)")
# "from a.b import x, y" / "from a import (x,\n y)" / "from a import *": the module and the names.
# "[^()]": an unclosed "(" ends at the next "(", so "from a import (" repeated is read once, not to the end each time.
_FROM_IMPORT_RX = re.compile(rb"from[ \t]+([\w.]+)[ \t]+import[ \t]*(\([^()]*\)|(?:[^\n;\\]|\\\r?\n|\\.)*)")
_WORDS: dict[tuple[bytes, bytes, bytes], re.Pattern] = {}


def _word(w: bytes, after: bytes = rb"\b", before: bytes = rb"(?<![\w\x80-\xff])") -> re.Pattern:
    rx = _WORDS.get((w, after, before))
    if rx is None:
        rx = _WORDS[(w, after, before)] = re.compile(before + re.escape(w) + after)
    return rx


def _reachable_modules(data: bytes, children: dict[bytes, list[bytes]]) -> set[bytes]:
    """Modules whose names the file can reach: those its import statements name,
    their parents (``import a.b`` binds ``a``) and, for ``from a import ...``,
    a's submodules (``from os import path``). A superset: prose that reads like
    an import only adds modules."""
    out: set[bytes] = set()
    for rx in (_IMPORT_RX, _FROM_RX):
        for m in rx.finditer(data):
            for item in m.group(1).split(b","):
                parts = item.strip(b" \t\r\n\\").split(None, 1)
                if not parts:
                    continue
                path = parts[0].strip(b".")
                pieces = path.split(b".")
                out.update(b".".join(pieces[:i]) for i in range(1, len(pieces) + 1))
                if rx is _FROM_RX:
                    out.update(children.get(path, ()))
    return out


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
    deferred = [_ver(e["python"]) for e in matrix.section("syntax.toml", "annotations").values()]
    if not any(python >= d for d in deferred):  # PEP 649: from 3.14 annotations run only when asked for
        for k, e in matrix.section("syntax.toml", "runtime").items():
            v = _ver(e["python"])
            if v > python:
                plan.runtime[k] = (v, e)
        generic = plan.runtime.get("generic_alias", (None, {}))[1]
        for q in generic.get("names", ()):
            plan.generic[q] = q.removeprefix("builtins.")
            if q in generic.get("typing", {}):
                plan.typing_twin[q] = generic["typing"][q]
        if plan.runtime:
            plan.node_types[cst.Annotation] = None
            plan.signatures.append(Scan(ann.scan([q.rsplit(".", 1)[-1] for q in plan.generic],
                                                 "union_operator" in plan.runtime)))
    words_by_module: dict[bytes, set[bytes]] = {}

    def need(word: str, module: str) -> None:
        words_by_module.setdefault(module.encode(), set()).add(word.encode())

    for mod, e in matrix.section("stdlib.toml", "module").items():
        if "added" in e and _ver(e["added"]) > python:
            plan.modules[mod] = ("added", _ver(e["added"]))
        elif "removed" in e and _ver(e["removed"]) <= python:
            plan.modules[mod] = ("removed", _ver(e["removed"]))
        if mod in plan.modules:
            plan.flagged_modules.add(mod.encode())  # import a.b / from a.b import x
            if "." in mod:  # from a import b: "a" is imported, "b" spelled
                parent, _, last = mod.rpartition(".")
                need(last, parent)
            continue
        for kind, table in (("added", e.get("names_added", {})), ("removed", e.get("names_removed", {}))):
            for v_text, names in table.items():
                v = _ver(v_text)
                if (kind == "added" and v > python) or (kind == "removed" and v <= python):
                    for n in names:
                        plan.names.setdefault(mod, {})[n] = (kind, v)
                        if mod == "builtins":
                            plan.builtins.append(n.encode())
                        else:
                            need(n, mod)
    plan.words_by_module = {m: sorted(ws) for m, ws in sorted(words_by_module.items())}
    plan.tails = frozenset(n for names in plan.names.values() for n in names)
    for m in plan.words_by_module:
        pieces = m.split(b".")
        for i in range(1, len(pieces)):
            plan.children.setdefault(b".".join(pieces[:i]), []).append(m)
    plan.builtins.sort()
    seen = set()
    for k in sorted(plan.features):
        for sig in SIGNATURES[k]:
            if sig not in seen:
                seen.add(sig)
                plan.signatures.append(sig)
    _PLANS[key] = (matrix, plan)
    return plan


_T = "import sys\n"


class PythonSyntax(Rule):
    code = "AIC401"
    worlds_monotone = True
    name = "python-syntax"
    tokens = ()  # per target: see prefilter_check

    VALID = [
        Example("if (n := len(a)) > 3:\n    pass\n", python="3.8"),
        Example("match command:\n    case 'go':\n        pass\n", python="3.10"),
        Example(_T + "if sys.version_info >= (3, 11):\n    import tomllib\nelse:\n    import tomli as tomllib\n",
                python="3.10"),
        Example("try:\n    import tomllib\nexcept ModuleNotFoundError:\n    import tomli as tomllib\n", python="3.10"),
        Example("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from typing import Self\n", python="3.10"),
        Example("import itertools\nif hasattr(itertools, 'batched'):\n    f = itertools.batched\n", python="3.11"),
        Example("x = f\"{d['a']}\"\ny = f'{n:#x}'\n", python="3.8"),
        # A '#' inside a nested string is no comment (CPython 3.8-3.11 skip quoted text in a field).
        Example("header = f\"{'#':<3} {'Memory':>10}\"\n", python="3.8"),
        Example("with (a, b):\n    pass\n", python="3.8"),
        Example("from itertools import *\nbatched = None\n", python="3.11"),
        # Annotations that never run at definition time: postponed (PEP 563), strings, a local's, guarded.
        Example("from __future__ import annotations\ndef f(x: list[int]) -> int | None:\n    pass\n", python="3.8"),
        Example("from typing import List, Optional\ndef f(x: List[int], y: 'list[int]') -> Optional[int]:\n"
                "    z: int | None = None\n    return z\n", python="3.8"),
        Example("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    def f(x: int | None) -> None: ...\n",
                python="3.9"),
        Example("def f(x: list[int]) -> int | None:\n    pass\n", python="3.14"),
    ]
    INVALID = [
        Example("match command:\n    case 'go':\n        pass\n", python="3.9",
                findings=[
                    (1, 1, "match statement needs Python 3.10; target is Python 3.9"),
                ]),
        Example(_T + "if sys.version_info >= (3, 10):\n    match x:\n        case 1:\n            pass\n", python="3.9",
                findings=[
                    (3, 5, "match statement needs Python 3.10; target is Python 3.9"),
                ]),
        Example("import tomllib\n", python="3.10",
                findings=[
                    (1, 8, "tomllib is new in Python 3.11; target is Python 3.10 (use tomli as a fallback under "
                           "try/except ImportError)"),
                ]),
        Example("from typing import Self\n", python="3.10",
                findings=[
                    (1, 20, "typing.Self is new in Python 3.11; target is Python 3.10 (import it from "
                            "typing_extensions)"),
                ]),
        Example("import itertools as it\nfor b in it.batched(xs, 2):\n    pass\n", python="3.11",
                findings=[
                    (2, 10, "itertools.batched is new in Python 3.12; target is Python 3.11 (guard it with "
                            "sys.version_info or hasattr)"),
                ]),
        Example("from itertools import *\nfor b in batched(xs, 2):\n    pass\n", python="3.11",
                findings=[
                    (2, 10, "itertools.batched is new in Python 3.12; target is Python 3.11 (guard it with "
                            "sys.version_info or hasattr)"),
                ]),
        Example("try:\n    pass\nexcept* ValueError:\n    pass\n", python="3.10",
                findings=[
                    (3, 1, "except* (exception groups) needs Python 3.11; target is Python 3.10"),
                ]),
        Example("type Vec = list[float]\n", python="3.11",
                findings=[
                    (1, 1, "type statement (type X = ...) needs Python 3.12; target is Python 3.11"),
                ]),
        Example("x = f\"{d[\"a\"]}\"\n", python="3.11",
                findings=[
                    (1, 7, "f-string reusing its own quote inside a replacement field needs Python 3.12; target is "
                           "Python 3.11"),
                ]),
        Example("x = f\"\"\"{a  # the total\n}\"\"\"\n", python="3.11",
                findings=[(1, 9, "comment inside an f-string replacement field needs Python 3.12; target is Python 3.11")]),
        Example("import imp\n", python="3.12",
                findings=[
                    (1, 8, "imp was removed in Python 3.12; target is Python 3.12 (guard the import or use a "
                           "replacement)"),
                ]),
        Example("from dataclasses import dataclass\n@dataclass\nclass Cfg:\n    sizes: list[int]\n", python="3.8",
                findings=[
                    (4, 12, "list[...] in an annotation (PEP 585) needs Python 3.9 when evaluated at definition "
                            "time; target is Python 3.8 (TypeError: ... object is not subscriptable; add `from "
                            "__future__ import annotations` or use typing.List)"),
                ]),
        Example("def find(name: str) -> int | None:\n    pass\n", python="3.9",
                findings=[
                    (1, 24, "X | Y union in an annotation (PEP 604) needs Python 3.10 when evaluated at definition "
                            "time; target is Python 3.9 (TypeError: unsupported operand type(s) for |; add `from "
                            "__future__ import annotations` or use typing.Optional/typing.Union)"),
                ]),
        Example("def f(a, /, b):\n    pass\n", python="3.7",
                findings=[
                    (1, 10, "positional-only parameter marker (/) needs Python 3.8; target is Python 3.7"),
                ]),
    ]

    def __init__(self, matrix) -> None:
        super().__init__(matrix)
        section = matrix.section("syntax.toml", "backport")
        self.backports = {k: e["package"] for k, e in section.items()}
        # A backport that covers only some names of its module (exceptiongroup: the two group types).
        self.backport_names = {k: frozenset(e["names"]) for k, e in section.items() if "names" in e}
        every = set()
        for e in matrix.section("stdlib.toml", "module").values():
            for table in (e.get("names_added", {}), e.get("names_removed", {})):
                for names in table.values():
                    every.update(names)
        self._known = {f"{mod}.{n}" for mod, e in matrix.section("stdlib.toml", "module").items()
                       for table in (e.get("names_added", {}), e.get("names_removed", {}))
                       for names in table.values() for n in names}
        self._every = frozenset(every)

    @property
    def attr_tails(self) -> frozenset[str]:  # type: ignore[override]
        """Only the names that can fail on the target reach check_attribute/check_call
        (``.format`` is everywhere; it matters only where ``locale.format`` is gone)."""
        if self.target is None:
            return self._every
        return plan_for(self.matrix, self.target.python).tails

    call_tails = attr_tails  # bare names: builtins and ``from m import *``

    @classmethod
    def prefilter_check(cls, target, matrix):
        """Per target: a 3.13 target has little to look for, so most files stay unparsed."""
        return plan_for(matrix, target.python).relevant

    @classmethod
    def explain_facts(cls, matrix) -> str:
        lines = [f"- {e['construct']}: Python {e['python']}"
                 for e in sorted(matrix.section("syntax.toml", "feature").values(), key=lambda e: _ver(e["python"]))]
        for e in matrix.section("syntax.toml", "runtime").values():
            lines.append(f"- {e['construct'].format(name='list')}: Python {e['python']} when evaluated at definition "
                         f"time ({e['error']})")
        for e in matrix.section("syntax.toml", "annotations").values():
            lines.append(f"- annotations deferred (PEP 649): from Python {e['python']}")
        mods = matrix.section("stdlib.toml", "module")
        n_names = sum(len(ns) for e in mods.values() for t in (e.get("names_added", {}), e.get("names_removed", {}))
                      for ns in t.values())
        lines.append(f"- standard library: {len(mods)} modules with changes after 3.8, {n_names} versioned names "
                     f"(version_matrix/stdlib.toml, generated from typeshed)")
        return "\n".join(lines)

    def known_names(self) -> set[str]:
        return set(self._known)

    def newer_syntax(self, data: bytes, line: int, python) -> bool:
        """Provider hook: do the lines around ``line`` hold syntax newer than ``python``
        (the linter lets LibCST try what the running CPython refuses there)?"""
        return newer_syntax_at(data, line, self.matrix, python) is not None

    def on_parse_error(self, data: bytes, line: int) -> Finding | None:
        """LibCST older than the syntax: name the newer construct on the failing lines."""
        hit = newer_syntax_at(data, line, self.matrix, self.target.python)
        if hit is None:
            return None
        _key, v, construct = hit
        py = self.target.python
        return Finding(None, f"{construct} needs Python {_show(v)}; target is Python {_show(py)}",
                       frozenset(self.target.archs), extra_targets=(f"python=={_show(py)}",))

    def node_types(self, target) -> dict:
        return plan_for(self.matrix, target.python).node_types

    # -- syntax --------------------------------------------------------------------
    def check_node(self, node: cst.CSTNode, fc) -> list[Finding]:
        plan = plan_for(self.matrix, fc.target.python)
        if isinstance(node, cst.Annotation):
            return self._annotation(node, fc, plan)
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

    def _annotation(self, node: cst.Annotation, fc, plan: Plan) -> list[Finding]:
        """PEP 585/604 in an annotation the target evaluates at definition time. A runtime
        error, not syntax: code the guards keep from running there is not reported."""
        if not ann.evaluated(node, fc):
            return []
        hit = ann.first_failure(node.annotation, plan.generic if "generic_alias" in plan.runtime else None,
                                "union_operator" in plan.runtime, lambda e: self._qualname(e, fc))
        if hit is None or fc.ctx.caught("TypeError") or not fc.ctx.worlds:
            return []
        key, at, q = hit
        v, e = plan.runtime[key]
        construct = e["construct"].format(name=plan.generic.get(q, q))
        hint = e["hint"]
        if "{typing}" in hint:
            twin = plan.typing_twin.get(q)
            hint = hint.format(typing=twin) if twin else "add `from __future__ import annotations`"
        return [self._finding(at, f"{construct} needs Python {_show(v)} when evaluated at definition time; "
                                  f"target is Python {_show(plan.python)} ({e['error']}; {hint})", fc)]

    @staticmethod
    def _qualname(expr, fc) -> str | None:
        """``list`` (a builtin the file does not rebind), else the import-resolved name."""
        if isinstance(expr, cst.Name) and fc.lookup(expr.value) is None and not _bound_in_file(expr.value, fc):
            return f"builtins.{expr.value}"
        return fc.resolve(expr) if isinstance(expr, (cst.Name, cst.Attribute)) else None

    def _finding(self, node, message, fc) -> Finding:
        py = fc.target.python
        return Finding(node, message, frozenset(fc.target.archs), extra_targets=(f"python=={_show(py)}",))

    # -- standard library ------------------------------------------------------------
    def check_import(self, node: cst.Import | cst.ImportFrom, fc) -> list[Finding]:
        if fc.ctx.caught("ModuleNotFoundError"):  # what a missing module raises; ImportError handlers catch it too
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
        if module == "builtins" and _bound_in_file(name, fc):
            return []
        return [self._finding(func, self._name_message(module, name, plan), fc)]

    def attr_exists(self, qualname: str, world):
        """``hasattr(itertools, "batched")`` on the target Python (guards read this)."""
        from ...core.ruleapi import UNKNOWN

        target = getattr(self, "target", None)
        module, _, name = qualname.rpartition(".")
        if target is None or not module:
            return UNKNOWN
        plan = plan_for(self.matrix, target.python)
        hit = plan.names.get(module, {}).get(name)
        if hit is not None:
            return False
        if name in self._every and f"{module}.{name}" in self._known:
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
        if pkg and name not in self.backport_names.get(module, (name,)):
            pkg = None
        hint = f"import it from {pkg}" if pkg else "guard it with sys.version_info or hasattr"
        return f"{label} is new in Python {_show(v)}; {target} ({hint})"


def _bound_in_file(name: str, fc) -> bool:
    """``_bound_somewhere`` once per name and file, not once per call: the file's
    text is scanned a bounded number of times however many calls it has (issue 15)."""
    memo = fc.state.setdefault("AIC401.bound", {})
    if name not in memo:
        memo[name] = _bound_somewhere(name, fc.text)
    return memo[name]


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
        if any(sig.search(window) for sig in SIGNATURES[key]) and (best is None or v > best[1]):
            best = (key, v, construct)
    return best
