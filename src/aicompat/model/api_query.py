"""Questions the AIC2xx rules ask the generated API tables and module inventories.

- Which releases are in scope at a call: for the world package
  (matrix.target.WORLD_PACKAGE), the releases of the worlds that reach it
  (guards on its version or ``hasattr`` narrow them); for other
  packages, the releases the pin allows. Unpinned means the
  newest release read: that is what ``pip install`` gives.
- Where a qualified name lives: the longest module prefix the table knows.
- Whether a name exists in a release, and whether a call binds to any of the
  signatures a release has.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass, replace
from pathlib import Path

import libcst as cst
from packaging.version import Version

from ..matrix.api_tables import ModuleApi, PackageApi, Param, release_label
from ..matrix.target import WORLD_PACKAGE, World
from ..syntax.walk import walk
from .project import owns_package


@dataclass
class Scope:
    package: str
    api: PackageApi
    indices: list[int]  # releases in scope, as indices into api.releases
    pinned: bool | str  # chosen by a pin; or the text naming the world package's releases that require them

    def label(self, indices=None) -> str:
        return self.api.label(self.indices if indices is None else indices)

    def targets(self, indices) -> tuple[str, ...]:
        return tuple(f"{self.package}=={self.api.labels[i]}" for i in sorted(indices))

    def pin_text(self) -> str:
        return pin_text(self.package, self.label(), self.pinned)


def releases_in_scope(fc, package: str) -> list[Version]:
    """Releases of ``package`` that reach the current node; [] when it is unpinned.

    The world package's releases are part of the worlds, so guards narrow them;
    other packages have the releases their pin allows, or, unpinned, those the
    world package's releases in the worlds require (requires.toml: torch 2.4.0's
    wheel requires triton==3.0.0)."""
    if package == WORLD_PACKAGE:
        return sorted({w.torch for w in fc.ctx.worlds if w.torch is not None})
    return sorted(fc.target.releases.get(package) or required_by_world(fc, package)[0])


def required_by_world(fc, package: str) -> tuple[list[Version], list[Version]]:
    """The releases of ``package`` that the world package's releases in the worlds here
    require, and those world-package releases (both [] when it is unpinned or requires
    nothing of ``package``)."""
    required = fc.matrix.required(WORLD_PACKAGE, package)
    worlds = sorted({w.torch for w in fc.ctx.worlds if w.torch is not None and w.torch in required})
    return sorted({v for t in worlds for v in required[t]}), worlds


def _own_source(fc, package: str) -> bool:
    path = getattr(fc, "path", None)
    if not path or path.startswith("<"):
        return False
    state = getattr(fc, "state", None)
    key = ("own_source", package)
    if state is not None and key in state:  # asked at every call of the API: the file's answer once
        return state[key]
    home = Path(path).resolve()
    roots = {root for root, pkg in fc.matrix.api_roots.items() if pkg == package}
    roots |= {root for root, pkg in fc.matrix.import_roots.items() if pkg == package}
    got = any(owns_package(home, root) for root in sorted(roots))
    if state is not None:
        state[key] = got
    return got


def under_version_test(fc, package: str) -> bool:
    """Does the statement sit in a branch of an ``if`` that tests the package's version
    (``<root>.__version__``, ``version("<package>")``), directly or through a name bound to one
    (``TRITON_VERSION = version.parse(triton.__version__)``; ``if TRITON_VERSION >= V300:``)?"""
    stack = getattr(fc, "stmt_stack", ())
    if not stack:
        return False
    roots = {root for root, pkg in fc.matrix.api_roots.items() if pkg == package}
    roots |= {root for root, pkg in fc.matrix.import_roots.items() if pkg == package}
    marks = [f"{root}.__version__" for root in roots] + [f'"{package}"', f"'{package}'"]
    return any(isinstance(stmt, cst.If) and _names_version(stmt.test, fc, marks, 0) for stmt in stack)


def _names_version(node, fc, marks: list[str], depth: int) -> bool:
    if any(m in fc.module.code_for_node(node) for m in marks):
        return True
    if depth >= 2 or getattr(fc, "model", None) is None:
        return False
    names: list[str] = []

    class _Names(cst.CSTVisitor):
        def visit_Name(self, n: cst.Name) -> None:
            names.append(n.value)

    walk(node, _Names())
    owner, here = fc.loc
    for name in dict.fromkeys(names):
        scope, at, defs = fc.model.scope(owner), here, None
        while scope is not None and defs is None:
            defs = scope.defs_at(name, at)
            scope, at = scope.parent, None
        if any(d.kind == "expr" and _names_version(d.node, fc, marks, depth + 1) for d in defs or ()):
            return True
    return False


def _runs_with_world_release(fc, version) -> bool:
    """Unpinned, the rules judge a call against the newest release; can the current
    statement run with it on some fleet GPU, by the branches it sits in? True where
    the context cannot tell (no flow model)."""
    if not hasattr(fc, "reachable"):
        return True
    return any(fc.reachable(World(w.arch, version)) for w in fc.ctx.worlds if w.torch is None) \
        or not any(w.torch is None for w in fc.ctx.worlds)


def runs_with_release(fc, package: str, version) -> bool:
    """Can the current statement run with ``version`` of ``package`` (not the world package) on
    some world that reaches it? The guards' ``hasattr`` of the package's names is then answered
    from its table. True where the context cannot tell (no flow model)."""
    if not hasattr(fc, "reachable"):
        return True
    return any(fc.reachable(replace(w, releases=(*w.releases, (package, version)))) for w in fc.ctx.worlds) \
        or not fc.ctx.worlds


def span(versions) -> str:
    """``2.3.0–2.5.1`` (first–last) for a list of releases."""
    versions = sorted(versions)
    return str(versions[0]) if len(versions) == 1 else f"{versions[0]}–{versions[-1]}"


def judged_releases(fc, package: str, releases: list[Version]) -> tuple[list[int], bool | str] | None:
    """The releases (indices into ``releases``, a table's, oldest first) that the current node is
    judged against, and how they were chosen: True by a pin, False unpinned (the newest), or the
    text naming the world package's releases that require them (``torch 2.4.0``); None where it
    is not judged: the library's own source, or, unpinned, a branch that does not run with the
    newest release."""
    if not releases or _own_source(fc, package):
        return None  # the library's own repository: its code runs against its source, not a release
    if package != WORLD_PACKAGE and under_version_test(fc, package):
        return None  # only the world package's version tests narrow the worlds: another's branch is unknown
    how: bool | str = True
    versions = sorted(fc.target.releases.get(package) or []) if package != WORLD_PACKAGE \
        else releases_in_scope(fc, package)
    if not versions and package != WORLD_PACKAGE:
        versions, by = required_by_world(fc, package)
        if versions:
            labels = [str(v) for v in fc.matrix.releases(WORLD_PACKAGE)]
            how = f"{WORLD_PACKAGE} {release_label(labels, [labels.index(str(v)) for v in by])}"
    newest = len(releases) - 1
    if not versions:
        if package == WORLD_PACKAGE and not _runs_with_world_release(fc, releases[newest]):
            return None  # e.g. the else of `if torch_version() >= (2, 4):`: not judged against the newest
        if package != WORLD_PACKAGE and not runs_with_release(fc, package, releases[newest]):
            return None  # the else of `if hasattr(te, "autocast"):`: does not run with the newest
        return [newest], False
    # A pin newer than the table (torch==2.99) is judged as its newest release (config says so).
    at = {v: i for i, v in enumerate(releases)}
    indices = sorted({i for i in (at.get(v) if v <= releases[-1] else newest for v in versions) if i is not None})
    if package != WORLD_PACKAGE:
        # the releases the statement can run with: `if hasattr(recipe, "MXFP8BlockScaling"):` holds in some
        indices = [i for i in indices if runs_with_release(fc, package, releases[i])]
    return (indices, how) if indices else None


def pin_text(package: str, label: str, pinned: bool | str) -> str:
    """How the releases judged were chosen, for a message (``label``: theirs, or the newest;
    ``pinned`` as judged_releases says)."""
    if isinstance(pinned, str):
        verb = "requires" if "–" not in pinned and "," not in pinned else "require"
        return f"{package} unpinned: {pinned} {verb} {package} {label}"
    if not pinned:
        return f"{package} unpinned: judged on the newest release {label}"
    return f"pins allow {package} {label}"


def unpinned_note(sc: Scope, notes: list[str]) -> None:
    """Say once per run that an unpinned package was judged on its newest release, so a clean
    run is not read as clean on the release in use (the world package's is said by run/config.py)."""
    if sc.pinned or sc.package == WORLD_PACKAGE:
        return
    note = (f"no {sc.package} pin: the API rules judged {sc.package} {sc.api.labels[-1]}, the newest release "
            f"aicompat knows (pin the one you run: --pin {sc.package}==X.Y, or {sc.package} in [project] "
            "dependencies or a requirements file)")
    if note not in notes:
        notes.append(note)


def scope(fc, package: str) -> Scope | None:
    api = fc.matrix.api(package)
    got = judged_releases(fc, package, api.releases) if api is not None else None
    return Scope(package, api, got[0], got[1]) if got is not None else None


def split(api: PackageApi, qualname: str) -> tuple[str, list[str]] | None:
    """``lib.sub.mod.func`` -> ("lib.sub.mod", ["func"])."""
    parts = qualname.split(".")
    for cut in range(len(parts), 0, -1):
        mod = ".".join(parts[:cut])
        if mod in api.modules:
            return mod, parts[cut:]
    return None


def member(fc, qualname: str) -> tuple[Scope, str, str, ModuleApi | None] | None:
    """(scope, module, name, the module's table) of ``qualname``, a name one level below a module
    of its package's API tables judged here; None when it is not one."""
    package = fc.matrix.api_package(qualname) if qualname else None
    sc = scope(fc, package) if package is not None else None
    where = split(sc.api, qualname) if sc is not None else None
    if sc is None or where is None or len(where[1]) != 1:
        return None
    module, (name,) = where
    return sc, module, name, sc.api.module(module)


@dataclass
class Presence:
    have: frozenset[int]  # releases in scope that have the name
    lack: frozenset[int]  # releases in scope that lack it (module or name)
    unknown: frozenset[int]  # releases whose namespace is open


def presence(api: PackageApi, module: str, name: str, indices) -> Presence:
    m = api.module(module)
    entries = m.entries(name) if m else None
    have, lack, unknown = set(), set(), set()
    for i in indices:
        if m is None or i not in m.present:
            lack.add(i)
        elif entries and any(i in rng for rng, _, _ in entries):
            have.add(i)
        elif i in m.open:
            unknown.add(i)
        else:
            lack.add(i)
    return Presence(frozenset(have), frozenset(lack), frozenset(unknown))


def releases_with(api: PackageApi, module: str, name: str) -> frozenset[int]:
    m = api.module(module)
    entries = m.entries(name) if m else None
    out: set[int] = set()
    for rng, _, _ in entries or ():
        out |= rng
    return frozenset(out)


def nearby(m: ModuleApi | None, name: str, n: int = 3, indices=None) -> list[str]:
    """Names of ``m`` close to ``name``: those of the releases ``indices`` where any is close,
    else of any release."""
    if m is None:
        return []
    names = m.all_names()
    if indices:
        wanted = set(indices)
        here = [x for x in names if any(rng & wanted for rng, _, _ in m.entries(x) or ())]
        near = difflib.get_close_matches(name, here, n=n, cutoff=0.6)
        if near:
            return near
    return difflib.get_close_matches(name, names, n=n, cutoff=0.6)


def elsewhere(api: PackageApi, module: str, name: str, indices, most: int = 2) -> list[tuple[list[str], frozenset[int]]]:
    """Where else the table has ``name`` (not a module) in the releases ``indices``: one
    ``([qualified names], releases)`` per group of releases that have it in the same modules
    (``tanh``: triton.language.math in 2.1.0-2.3.1, triton.language.extra.cuda.libdevice from
    3.0.0), oldest first; [] where it is in none, or in more than ``most`` modules at once
    (a name that common says nothing)."""
    wanted = frozenset(indices)
    where: dict[int, list[str]] = {}
    for mod in sorted(api.modules):
        if mod == module:
            continue
        for rng, kind, _ in api.modules[mod].entries(name) or ():
            if kind != "m":
                for i in rng & wanted:
                    where.setdefault(i, []).append(f"{mod}.{name}")
    groups: dict[tuple[str, ...], set[int]] = {}
    for i, names in where.items():
        # a module below one that has the name re-exports it (torch.nn.utils.parametrizations.Module
        # is torch.nn.Module): name the upper one only
        names = [n for n in names if not any(n != o and n.startswith(o.rsplit(".", 1)[0] + ".") for o in names)]
        if len(names) > most:
            return []
        groups.setdefault(tuple(names), set()).add(i)
    return sorted(((list(k), frozenset(v)) for k, v in groups.items()), key=lambda g: min(g[1]))


# -- binding a call to a signature ------------------------------------------------------
@dataclass(frozen=True)
class Problem:
    kind: str  # "keyword", "missing", "positional", "posonly"
    name: str  # the keyword / parameter concerned ("" for positional counts)
    detail: str


def bind(params: list[Param], npos: int, keywords: list[str], star: bool, dstar: bool) -> Problem | None:
    """Why a call with ``npos`` positionals and ``keywords`` cannot bind, or None.

    ``star``/``dstar``: the call also passes ``*args``/``**kwargs``, which can
    supply any positional / keyword, so only what is certain is reported."""
    positional = [p for p in params if p.kind in ("posonly", "pos")]
    has_var = any(p.kind == "var" for p in params)
    has_varkw = any(p.kind == "varkw" for p in params)
    if npos > len(positional) and not has_var:
        return Problem("positional", "", f"takes at most {len(positional)} positional argument"
                       f"{'s' if len(positional) != 1 else ''}, {npos} given")
    by_name = {p.name: p for p in params if p.kind in ("pos", "kwonly")}
    posonly = {p.name for p in params if p.kind == "posonly"}
    for kw in keywords:
        p = by_name.get(kw)
        if p is None:
            if has_varkw:
                continue
            if kw in posonly:
                return Problem("posonly", kw, f"'{kw}' is positional-only")
            return Problem("keyword", kw, f"unexpected keyword '{kw}'")
        if p.kind == "pos" and positional.index(p) < npos:
            return Problem("keyword", kw, f"'{kw}' given both by position and by keyword")
    if dstar:
        return None
    for i, p in enumerate(positional):
        if not p.default and i >= npos and p.name not in keywords and not star:
            return Problem("missing", p.name, f"missing required argument '{p.name}'")
    for p in params:
        if p.kind == "kwonly" and not p.default and p.name not in keywords:
            return Problem("missing", p.name, f"missing required keyword argument '{p.name}'")
    return None


def accepts_keyword(api: PackageApi, module: str, name: str, keyword: str) -> frozenset[int]:
    """Releases in which some signature of ``module.name`` takes ``keyword`` by name."""
    m = api.module(module)
    out: set[int] = set()
    for rng, _, sigs in (m.entries(name) if m else None) or ():
        for sig in sigs or ():
            if any(p.name == keyword and p.kind in ("pos", "kwonly") or p.kind == "varkw" for p in sig.params):
                out |= rng
                break
    return frozenset(out)
