"""Shared reading of version_matrix/attention.toml [limit.*] entries: which span of
an entry a release falls in, whether a span's device check accepts a GPU, and the
value of an attention call's q in each world that reaches it."""

from __future__ import annotations

from packaging.specifiers import SpecifierSet

from ...core.ruleapi import capability_range


def span_of(e: dict, v) -> dict | None:
    """The span of ``e`` that release ``v`` falls in: a specifier, or a list of release labels
    (FA3's share one public version, 3.0.0b1, and differ only in their local label)."""
    for s in e["spans"]:
        r = s.get("releases")
        if r is None:
            return s  # one span for every release
        if v is None:
            continue
        if (isinstance(r, list) and str(v) in r) or (isinstance(r, str) and v in SpecifierSet(r)):
            return s
    return None


def releases_in_scope(fc, package: str, as_release: dict | None = None) -> list:
    """The releases of ``package`` a call is judged for: a wrapper's kernels carry the release
    ``as_release`` names; else the pinned ones, unpinned the newest, and ``[None]`` for a
    package without modelled releases (its entry then has one span for every release)."""
    if as_release and package in as_release:
        rel = as_release[package]
        return [rel] if rel is not None else []  # a vendored copy of an unknown tag: no per-release check
    pinned = sorted(fc.target.releases.get(package) or [])
    return pinned or sorted(fc.matrix.releases(package))[-1:] or [None]


def q_values(site, e: dict, fc):
    """(world, value of the call's q) for every caller scenario and world that reaches the call."""
    for w, _bindings, val in q_values_with_bindings(site, e, fc):
        yield w, val


def q_values_with_bindings(site, e: dict, fc):
    """(world, bindings, value of q): the bindings let a rule read another argument of the same scenario."""
    index, name = e["args"]["q"]
    q = site.arg(index, name)
    if q is None:
        return
    for _caller, bindings in fc.scenarios():
        for w in fc.ctx.worlds:
            if fc.reachable(w, bindings):
                yield w, bindings, fc.value_of(q, w, bindings)


def matches(ranges: list[str], arch) -> bool:
    """Is the GPU in one of these capability ranges (">=8.6,<9.0", "==9.0")?"""
    return any(capability_range(r, "attention.toml")(tuple(arch.capability)) for r in ranges)


def accepts(span: dict, arch) -> bool:
    """Does the span's device check accept this GPU?"""
    return matches(span["accept"], arch)


def accepted(span: dict) -> str:
    """The span's accepted capabilities in words: '8.0 and newer', '==9.0'."""
    return ", ".join(_words(a) for a in span["accept"])


def _words(a: str) -> str:
    """'>=8.0' -> '8.0 and newer'; '>=9.0,<10.0' -> '9.x'; anything else as written."""
    if "," in a:
        lo, hi = (p.strip() for p in a.split(",", 1))
        if lo.startswith(">=") and lo.endswith(".0") and hi.startswith("<") and hi.endswith(".0") \
                and int(hi[1:-2]) == int(lo[2:-2]) + 1:
            return lo[2:-2] + ".x"
        return a
    return a[2:] + " and newer" if a.startswith(">=") else a
