"""AIC202's check of the attention implementation a transformers model class is loaded with:
``MistralForCausalLM.from_pretrained(path, attn_implementation="sdpa")`` raises ValueError in a
release where the class does not declare that implementation (``_supports_sdpa`` and kin,
version_matrix/model_classes/transformers.toml, read from each release's wheel). The failure
is the release's own check, on every GPU, when the model is built: a versioned-API fact.

Judged only where the class is named (imported from transformers, also through a dict or a
helper's parameter, as the value model resolves it) and the implementation is a string the
value model knows; an Auto class with a hub id cannot be resolved offline and is left alone.
A request the release does not accept at all is the value check's finding, not this one; a
default request never raises (it falls back to eager), and a call under ``except ValueError``
is handled by its caller.
"""

from __future__ import annotations

import re
from typing import Any

import libcst as cst
from packaging.version import Version

from ..core.ruleapi import DictValue, Finding, Module, api_query

PACKAGE = "transformers"


class _Table:
    """The generated table, indexed: release labels, class -> entries, checks per implementation."""

    def __init__(self, doc: dict[str, Any]) -> None:
        self.labels: list[str] = doc["read"][PACKAGE]["releases"]
        self.versions = [Version(v) for v in self.labels]
        self.at = {v: i for i, v in enumerate(self.labels)}
        self.classes: dict[str, list[tuple[dict, set[int]]]] = {}
        for e in doc.get("model", {}).values():
            common = self.span(e["releases"])
            for name in e["classes"]:
                self.classes.setdefault(name, []).append((e, common))
            for name, rng in (e.get("other_classes") or {}).items():
                self.classes.setdefault(name, []).append((e, self.span(rng)))
        self.checks: dict[str, list[tuple[set[int], dict]]] = {}
        for e in doc.get("check", {}).values():
            self.checks.setdefault(e["implementation"], []).append((self.span(e["releases"]), e))
        self.dispatch = [(self.span(e["releases"]), e) for e in doc.get("dispatch", {}).values()]

    def span(self, text: str) -> set[int]:
        """"4.37.0-4.54.1,4.56.0-5.24.0" -> the indices of the releases read in those spans."""
        out: set[int] = set()
        for part in filter(None, text.split(",")):
            a, b = part.split("-")
            out |= set(range(self.at[a], self.at[b] + 1))
        return out

    def declares(self, name: str, impl: str, i: int) -> bool | None:
        """Does class ``name`` declare ``impl`` in release ``i``? None: not known (not in that
        release, a computed flag, two models with the class that disagree)."""
        found = set()
        for e, present in self.classes.get(name, ()):
            if i not in present:
                continue
            own = (e.get("classes_differ") or {}).get(name, {})
            if impl in own:  # the class's own spans, where they differ from its model's
                yes, unknown = own[impl], own.get(f"{impl}_unknown", "")
            else:
                yes, unknown = e.get(impl, ""), (e.get("unknown") or {}).get(impl, "")
            found.add(None if i in self.span(unknown) else i in self.span(yes))
        return found.pop() if len(found) == 1 else None

    def check(self, impl: str, i: int) -> dict | None:
        """The check of ``impl`` in release ``i``, where an explicit request raises when the model is
        built (not one whose raise needs more: 4.55's sdpa, ``not is_init_check``)."""
        if not any(i in s and d["explicit"] == "raises" for s, d in self.dispatch):
            return None
        return next((e for s, e in self.checks.get(impl, ()) if i in s and not e.get("when")), None)


class ModelAttnSupport:
    def __init__(self, matrix) -> None:
        table = matrix.files.get("transformers_attn.toml", {})
        kw = table["keyword"]["attn_implementation"]
        self.calls = set(kw["calls"])
        self.keyword_added = Version(kw["added"])  # before it, only use_flash_attention_2=True asks for one
        self.values = table.get("value", {})
        self.flags = table.get("flag", {})
        self.matrix = matrix
        self._table: _Table | None = None

    def table(self) -> _Table | None:
        if self._table is None:
            doc = self.matrix.model_classes(PACKAGE)
            self._table = _Table(doc) if doc else None
        return self._table

    def check(self, site, qualname: str, fc, notes: list[str]) -> list[Finding]:
        func = site.node.func
        if not isinstance(func, cst.Attribute) or func.attr.value not in self.calls:
            return []
        tail = func.attr.value
        named = qualname.rsplit(".", 2)[-2] if qualname.count(".") >= 2 else ""
        if qualname and (not qualname.startswith(PACKAGE + ".") or named.startswith("Auto")):
            return []  # another library, or an Auto class: the checkpoint picks the model class
        t = self.table()  # loaded here, on the first call that may name a model class
        if t is None or named and named not in t.classes:
            return []
        keywords = ("attn_implementation", *self.flags)
        splats = [a for a in site.node.args if a.star == "**"]
        if not (splats or any(k in site.kw for k in keywords)) or fc.ctx.caught("ValueError"):
            return []
        got = api_query.judged_releases(fc, PACKAGE, t.versions)
        if got is None:
            return []
        indices, pinned = got
        out = []
        requests, every = self._requests(site, func.value, keywords, splats, fc)
        for (cls, impl, keyword), (node, archs) in sorted(requests.items(), key=lambda kv: kv[0]):
            failing = [i for i in indices if self._refused(t, cls, impl, keyword, i)]
            if failing:
                where = archs if archs != every else frozenset()  # a choice made by the GPU: there only
                out.append(self._finding(node, t, cls, tail, impl, keyword, failing, indices, pinned, where, fc))
                if not pinned:
                    note = (f"no {PACKAGE} pin: AIC202 judged the model classes' attention implementations on "
                            f"{PACKAGE} {t.labels[-1]}, the newest release aicompat read")
                    if note not in notes:
                        notes.append(note)
        return out

    def _requests(self, site, receiver, keywords, splats, fc) -> tuple[dict, frozenset]:
        """(class name, implementation, keyword) -> (the node that passes it: a keyword argument, or
        a ``**`` dict the value model knows; the GPUs of the worlds where the call makes it), and
        the GPUs of every world that reaches the call."""
        found: dict[tuple[str, str, str], tuple[Any, frozenset]] = {}
        reached: set[str] = set()
        for _caller, bindings in fc.scenarios():
            for w in fc.ctx.worlds:
                if not fc.reachable(w, bindings):
                    continue
                reached.add(w.arch)
                cls = fc.value_of(receiver, w, bindings)
                if not isinstance(cls, Module) or not cls.name.startswith(PACKAGE + "."):
                    continue
                passed = []
                for k in keywords:
                    arg = next((a for a in site.node.args if a.keyword is not None and a.keyword.value == k), None)
                    if arg is not None:
                        passed.append((k, fc.value_of(arg.value, w, bindings), arg))
                for arg in splats:
                    d = fc.value_of(arg.value, w, bindings)
                    if isinstance(d, DictValue):
                        passed += [(k, d.get(k), arg) for k in keywords if d.get(k, None) is not None]
                for k, value, node in passed:
                    if k in self.flags:
                        value = self.flags[k]["means"] if value is True else None
                    if isinstance(value, str):  # a Union (one of several) is not judged
                        key = (cls.name.rsplit(".", 1)[-1], value, k)
                        first, archs = found.get(key, (node, frozenset()))
                        found[key] = (first, archs | {w.arch})
        return found, frozenset(reached)

    def _refused(self, t: _Table, cls: str, impl: str, keyword: str, i: int) -> bool:
        v = t.versions[i]
        e = self.flags.get(keyword) or self.values.get(impl)
        if e is None or v < Version(e["added"]) or "removed" in e and v >= Version(e["removed"]):
            return False  # the release takes no such request (the value check's finding) or takes any
        return t.check(impl, i) is not None and t.declares(cls, impl, i) is False

    def _finding(self, node, t: _Table, cls: str, call: str, impl: str, keyword: str, failing: list[int],
                 indices: list[int], pinned: bool | str, archs: frozenset, fc) -> Finding:
        shown = f'{keyword}="{impl}"' if keyword == "attn_implementation" else f"{keyword}=True"
        first = failing[0]
        check = t.check(impl, first)
        assert check is not None  # a failing release has the check
        error = _first_sentence(check["error"].replace("{cls}", cls).replace("{version}", impl.rsplit("_", 1)[-1]))
        rels = api_query.span([t.versions[i] for i in failing])
        label = api_query.span([t.versions[i] for i in indices]) if pinned else t.labels[-1]
        # the fix: the release from which the class declares it for good, or what it declares here
        later = None
        for i in range(len(t.labels) - 1, failing[-1], -1):
            if not t.declares(cls, impl, i):
                break
            later = i
        fix = [f"{PACKAGE}>={t.labels[later]} (where {cls} declares {impl})"] if later is not None else []
        if t.versions[first] >= self.keyword_added:
            others = [o for o in ("sdpa", "flash_attention_2", "flex_attention") if o != impl and o in self.values
                      and Version(self.values[o]["added"]) <= t.versions[first] and t.declares(cls, o, first)]
            fix.append("attn_implementation=" + " or ".join(f'"{o}"' for o in ["eager", *others]))
        else:
            fix.append(f"drop {shown} (eager attention)")
        chosen = f", where the code picks it on {fc.describe(archs)}" if archs else ""
        msg = (f"{cls}.{call}: {shown} raises ValueError in {PACKAGE} {rels}{chosen}: \"{error}\" "
               f"({api_query.pin_text(PACKAGE, label, pinned)}); use {', or '.join(fix)}")
        return Finding(node, msg, archs, extra_targets=tuple(f"{PACKAGE}=={t.labels[i]}" for i in failing))


def _first_sentence(text: str) -> str:
    m = re.match(r"(.+?\.)(\s|$)", text)
    return m.group(1) if m else text
