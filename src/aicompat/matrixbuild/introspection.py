"""Stored runtime introspections of a package's releases, and what the matrix builder does with them.

``version_matrix/introspect/<package>-<release>.toml`` is written by
``tools/torch_introspect.py`` in a throwaway environment that has the release installed
(aicompat itself never imports torch). Where a release has one, the runtime decides: its
names replace the static reading's, and its signatures replace the static ones wherever it
found one (``-`` as the source means it found none, and the static signature stays). Every
difference that settles is returned as a line, so the builder can report it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from pathlib import Path

from ..base.toml_compat import tomllib
from .apiscan import Namespace, Sym, stub_raise


@dataclass
class RuntimeName:
    kind: str
    source: str  # i, p, s, d, k, or - (no signature found)
    sigs: tuple[str, ...] | None


@dataclass
class Introspection:
    release: str
    meta: dict
    modules: dict[str, dict[str, RuntimeName]] = field(default_factory=dict)
    # warnings issued from C++ (TORCH_WARN_DEPRECATION), found in the release's libraries
    deprecated: dict[str, dict[str, str]] = field(default_factory=dict)
    # functions whose body only raises, and what calling one raised: {module: {name: (class, message)}}
    raises: dict[str, dict[str, tuple[str, str]]] = field(default_factory=dict)

    @property
    def provenance(self) -> str:
        m = self.meta
        return (f"{m.get('wheel')} sha256:{m.get('sha256')} imported as {m.get('package', 'torch')} {m.get('version')} "
                f"on Python {m.get('python')} ({m.get('platform')})"
                + (f" beside torch {m['torch']}" if "torch" in m else ""))

    def lazy(self) -> frozenset[str] | None:
        """Child modules of covered modules that a bare ``import torch`` leaves unreachable; None
        where the introspection did not record them."""
        return frozenset(self.meta["lazy"]) if "lazy" in self.meta else None


def parse_line(line: str) -> tuple[str, RuntimeName]:
    """``NAME KIND SRC [(sig) | (sig)]``."""
    name, kind, rest = (line.split(" ", 2) + [""])[:3]
    source, _, sigs_text = rest.partition(" ")
    sigs = tuple(s.strip()[1:-1] for s in sigs_text.split(" | ")) if sigs_text else None
    return name, RuntimeName(kind, source or "-", sigs)


def load(path: Path) -> Introspection:
    data = tomllib.loads(path.read_text())
    meta = data.get("meta", {})
    out = Introspection(str(meta.get("release", "")), meta)
    for mod, body in data.get("module", {}).items():
        names = {}
        for line in body.get("names", "").splitlines():
            if line.strip():
                n, rn = parse_line(line)
                names[n] = rn
        out.modules[mod] = names
        dep = {}
        for line in body.get("deprecated", "").splitlines():
            if line.strip():
                n, _, msg = line.partition(" ")
                dep[n] = msg
        if dep:
            out.deprecated[mod] = dep
        stubs = {}
        for line in body.get("raises", "").splitlines():
            if line.strip():
                n, exc, msg = line.split(" ", 2)
                stubs[n] = (exc, json.loads(msg))
        if stubs:
            out.raises[mod] = stubs
    return out


def find(directory: Path, package: str, release: str) -> Introspection | None:
    path = directory / f"{package}-{release}.toml"
    return load(path) if path.is_file() else None


def stored(directory: Path, package: str) -> dict[str, Introspection]:
    """Every stored introspection of ``package``, by release."""
    out = {}
    for path in sorted(directory.glob(f"{package}-*.toml")):
        intro = load(path)
        out[intro.release] = intro
    return out


def add_cxx_names(snap: dict[str, Namespace | None], package: str, release: str, path: Path) -> int:
    """Names a package creates in C++ at import (torch.cuda.FloatTensor, torch.uint4), which no
    static reading sees: added to a release read statically from ``path`` (cxx_names.toml),
    each group within its ``first``/``last`` releases. Returns how many were added."""
    from packaging.version import Version

    if not path.is_file():
        return 0
    added = 0
    for group in tomllib.loads(path.read_text()).get(package, {}).values():
        v = Version(release)
        if v < Version(group["first"]) or ("last" in group and v > Version(group["last"])):
            continue
        ns = snap.get(group["module"])
        if ns is None:
            continue
        for name in group["names"]:
            if name not in ns.names:
                ns.names[name] = Sym(group["kind"])
                added += 1
    return added


def static_names(statics: list) -> list[dict[str, frozenset[str]]]:
    """The names each release's static reading binds per module, taken before ``between``
    adds to them (for a release read only statically the snapshot is the same object)."""
    return [{mod: frozenset(ns.names) for mod, ns in s.items() if ns is not None} for s in statics]


def between(i: int, snaps: list, statics: list, intros: list,
            seen: list[dict[str, frozenset[str]]] | None = None) -> tuple[int, int]:
    """Release ``i`` read statically, between two introspected releases ``a < i < b``: what the
    static reading gets wrong the same way in both is put right in ``i`` too. A name both showed
    at run time that the static reading misses in all three is added (names torch creates in C++,
    names of torch._C its stub lacks); a name the static reading has in all three that neither
    showed is dropped (the stub's own imports and stub-only classes); a child module both left
    unreachable after ``import torch`` is lazy. A name only one of them showed, that the static
    reading misses in ``i``, came or went between them: where the static reading of a release
    between them has it (``seen``: the static names of every release), it came with the first
    such release and went after the last, so ``i`` before that first (or after that last) does
    not get it; where none has it (torch.uint4: not in 2.0.1, in 2.4.1, created in C++), whether
    ``i`` has it is not known: it is added without a signature, so that no rule claims it
    missing there, and marked unsure (the table says so, and AIC201 says "added after 2.0.1, by
    2.4.1" rather than naming a release). Signatures the static reading gives alike in all three
    and both runtimes correct alike are corrected in ``i``. Returns (added, dropped)."""
    if intros[i] is not None:
        return 0, 0
    a = next((j for j in range(i - 1, -1, -1) if intros[j] is not None), None)
    b = next((j for j in range(i + 1, len(intros)) if intros[j] is not None), None)
    if a is None or b is None:
        return 0, 0
    added = dropped = 0
    lazy_a, lazy_b = intros[a].lazy(), intros[b].lazy()
    for mod, ns in snaps[i].items():
        rt_a, rt_b = intros[a].modules.get(mod), intros[b].modules.get(mod)
        st_a, st_b = statics[a].get(mod), statics[b].get(mod)
        if ns is None or rt_a is None or rt_b is None or st_a is None or st_b is None:
            continue
        for n in sorted(set(rt_a) | set(rt_b)):
            if _dunder(n) or n in ns.names or n in st_a.names or n in st_b.names:
                continue
            ra, rb = rt_a.get(n), rt_b.get(n)
            unsure = False
            if ra is None or rb is None:  # came (only b has it) or went (only a has it) between them
                where = [j for j in range(a + 1, b) if seen is not None and n in seen[j].get(mod, ())]
                if where and (i < where[0] if ra is None else i > where[-1]):
                    continue  # the static reading says it is not there yet (or no longer)
                unsure = not where
            same = ra is not None and rb is not None and ra.sigs == rb.sigs and "-" not in (ra.source, rb.source)
            stub_a, stub_b = intros[a].raises.get(mod, {}).get(n), intros[b].raises.get(mod, {}).get(n)
            ns.names[n] = Sym((rb or ra).kind, rb.sigs if same else None,
                              raises=stub_raise(*stub_a) if stub_a is not None and stub_a == stub_b else None)
            if unsure:
                ns.unsure = ns.unsure | {n}
            added += 1
        for n, sym in list(ns.names.items()):
            # Both runtimes show the same signatures, and the static reading here is the one a
            # neighbour's runtime refuted (torch 2.1.0's F.one_hot(tensor, ...) from _C/_nn.pyi,
            # as 2.1.2's stub says; 2.0.1 and 2.1.2 both take input=): the runtimes' signatures.
            ra, rb, sa, sb = rt_a.get(n), rt_b.get(n), st_a.names.get(n), st_b.names.get(n)
            refuted = any(st is not None and st.sigs == sym.sigs for st in (sa, sb))
            if (ra is not None and rb is not None and "-" not in (ra.source, rb.source)
                    and ra.sigs == rb.sigs and refuted and sym.sigs != ra.sigs):
                ns.names[n] = replace(sym, kind=rb.kind, sigs=rb.sigs)
        dep_a, dep_b = intros[a].deprecated.get(mod, {}), intros[b].deprecated.get(mod, {})
        for n, msg in dep_a.items():
            sym = ns.names.get(n)
            if sym is not None and sym.deprecated is None and dep_b.get(n) == msg:
                ns.names[n] = replace(sym, deprecated=msg)
        for n in sorted(ns.names):
            if not _dunder(n) and n not in rt_a and n not in rt_b and n in st_a.names and n in st_b.names:
                del ns.names[n]
                dropped += 1
        if lazy_a is not None and lazy_b is not None:
            ns.lazy = frozenset(n for n in ns.names if f"{mod}.{n}" in lazy_a and f"{mod}.{n}" in lazy_b)
    return added, dropped


def _dunder(name: str) -> bool:
    return name.startswith("__") and name.endswith("__")


def merge(snap: dict[str, Namespace | None], intro: Introspection) -> tuple[dict[str, Namespace | None], list[str]]:
    """The static snapshot with the runtime deciding; and one line per difference it settled."""
    out: dict[str, Namespace | None] = dict(snap)
    report: list[str] = []
    lazy = intro.lazy()
    for mod in sorted(set(snap) | set(intro.modules)):
        runtime = intro.modules.get(mod)
        static = snap.get(mod)
        if runtime is None:
            continue  # not importable where it was introspected: the static reading stays
        if static is None:
            report.append(f"{mod}: module only at run time (added)")
            static = Namespace()
        ns = Namespace(open=False, all=static.all)
        for name in sorted(set(runtime) | {n for n in static.names if _dunder(n)}):
            rt = runtime.get(name)
            st = static.names.get(name)
            if rt is None:  # a dunder the static reading binds (__all__, __version__): kept
                ns.names[name] = st
                continue
            if st is None and not _dunder(name):
                report.append(f"{mod}.{name}: only at run time (added, {_kind(rt.kind)})")
            sigs = rt.sigs if rt.source != "-" else (st.sigs if st is not None else None)
            if st is not None and rt.source != "-" and st.sigs != rt.sigs and rt.kind != "m":
                report.append(f"{mod}.{name}: signatures {_sigs(st.sigs)} in the static reading, "
                              f"{_sigs(rt.sigs)} at run time ({rt.source}; the run time's kept)")
            cxx = intro.deprecated.get(mod, {}).get(name)
            # the runtime's reading of a stub (it called it), else the source's
            stub = intro.raises.get(mod, {}).get(name)
            raises = stub_raise(*stub) if stub is not None else (st.raises if st is not None and rt.kind == "f" else None)
            ns.names[name] = Sym(rt.kind, sigs, (st.deprecated if st is not None else None) or cxx, raises=raises)
        for name in sorted(set(static.names) - set(runtime)):
            if _dunder(name):
                continue
            if static.all and name in static.all:
                # listed in __all__ and served on first use by the module's __getattr__
                # (torch 2.13's cpp_extension.BuildExtension): dir() shows it only after
                ns.names[name] = static.names[name]
                report.append(f"{mod}.{name}: only in the static reading, listed in __all__ (kept)")
                continue
            report.append(f"{mod}.{name}: only in the static reading (dropped, {_kind(static.names[name].kind)})")
        if lazy is not None:
            ns.lazy = frozenset(n for n in runtime if f"{mod}.{n}" in lazy)
        out[mod] = ns
    return out, report


_KINDS = {"f": "function", "b": "C function", "c": "class", "m": "module", "a": "attribute"}


def _kind(k: str) -> str:
    return _KINDS.get(k, k)


def _sigs(sigs) -> str:
    return "none" if sigs is None else " | ".join(f"({s})" for s in sigs)


# -- comparing a table with the runtime ---------------------------------------------------------
@dataclass
class Agreement:
    names_runtime: int = 0
    names_table: int = 0
    only_runtime: list[str] = field(default_factory=list)
    only_table: list[str] = field(default_factory=list)
    sigs_compared: int = 0
    sigs_differ: list[str] = field(default_factory=list)
    keywords_differ: list[str] = field(default_factory=list)  # the keywords some signature takes differ

    @property
    def names_agree(self) -> float:
        union = self.names_runtime + len(self.only_table)
        return 1.0 if not union else (union - len(self.only_runtime) - len(self.only_table)) / union

    @property
    def sigs_agree(self) -> float:
        return 1.0 if not self.sigs_compared else 1 - len(self.sigs_differ) / self.sigs_compared


def compare(api, index: int, intro: Introspection, ignore: frozenset[str] = frozenset()) -> Agreement:
    """How release ``index`` of a loaded table (apimatrix.PackageApi) agrees with the runtime:
    names of every module both know (dunders aside), and the signatures of every callable
    the runtime found signatures for."""
    out = Agreement()
    for mod, runtime in sorted(intro.modules.items()):
        m = api.module(mod)
        table: dict[str, tuple] = {}
        if m is not None and index in m.present:
            for name in m.all_names():
                for rng, kind, sigs in m.entries(name) or ():
                    if index in rng:
                        table[name] = (kind, None if sigs is None else tuple(s.text for s in sigs))
        rt_names = {n for n in runtime if not _dunder(n)}
        tb_names = {n for n in table if not _dunder(n)}
        out.names_runtime += len(rt_names)
        out.names_table += len(tb_names)
        out.only_runtime += sorted(f"{mod}.{n}" for n in rt_names - tb_names if f"{mod}.{n}" not in ignore)
        out.only_table += sorted(f"{mod}.{n}" for n in tb_names - rt_names)
        for n in sorted(rt_names & tb_names):
            rt = runtime[n]
            if rt.source == "-" or rt.kind == "m":
                continue
            out.sigs_compared += 1
            if table[n][1] != rt.sigs:
                out.sigs_differ.append(f"{mod}.{n}")
                if _keywords(table[n][1]) != _keywords(rt.sigs):
                    out.keywords_differ.append(f"{mod}.{n}")
    return out


def _keywords(sigs) -> tuple[frozenset[str], bool] | None:
    """The keywords any of ``sigs`` accepts, and whether one takes ``**kwargs``: what decides
    AIC202's unknown-keyword finding."""
    if sigs is None:
        return None
    from ..matrix.api_tables import Signature

    names: set[str] = set()
    varkw = False
    for text in sigs:
        for p in Signature(text).params:
            if p.kind in ("pos", "kwonly"):
                names.add(p.name)
            varkw = varkw or p.kind == "varkw"
    return frozenset(names), varkw
