"""A transformers model told to use FlashAttention (AIC106): ``attn_implementation=
"flash_attention_2"`` / ``"flash_attention_3"`` on from_pretrained / from_config,
``use_flash_attention_2=True``, ``model.set_attn_implementation(...)`` or
``config._attn_implementation = ...`` runs the installed FlashAttention's kernels at the first
forward. transformers checks no compute capability while the package is installed, so the
kernel's own device check and build decide: attention.toml [limit.*] of the entry point that
transformers_attn.toml [kernels.*] names, at the release in scope. The implementation is
followed through the value model, per world (a capability-dependent choice is judged where
it picks FlashAttention)."""

from __future__ import annotations

from fnmatch import fnmatchcase

import libcst as cst
from packaging.specifiers import SpecifierSet
from packaging.version import Version

from ...core.ruleapi import Finding, Module, dotted
from .._shared.attention_spans import accepts, releases_in_scope, span_of

_KINDS = ("capability", "build_targets")


class TransformersFlash:
    def __init__(self, matrix, limits: dict[str, list[dict]]) -> None:
        table = matrix.files.get("transformers_attn.toml", {})
        kw = table["keyword"]["attn_implementation"]
        self.calls, self.receivers = set(kw["calls"]), kw["receivers"]
        self.values = table.get("value", {})
        self.kernels = {impl: [e for e in limits.get(k["canonical"], []) if e["kind"] in _KINDS]
                        for impl, k in table.get("kernels", {}).items()}
        self.flags = table.get("flag", {})
        self.setters = table.get("setter", {})
        self.methods = {n for n, s in self.setters.items() if s["kind"] == "method"}
        self.attributes = {n for n, s in self.setters.items() if s["kind"] == "attribute"}
        self.dtype_checks = table.get("dtype_check", {})
        # models whose attention passes FA3 a V head dim != QK unpadded in some releases (AIC101's
        # [vhead.*] of check "transformers"): FA3 raises on that before any launch
        self.unpadded = [e for e in matrix.section("attention.toml", "vhead").values() if e["check"] == "transformers"]

    def tails(self) -> set[str]:
        return self.calls | self.methods

    def check_call(self, site, qualname: str, fc) -> list[Finding]:
        parts = (qualname or dotted(site.node.func) or "").split(".")
        if len(parts) < 2 or site.has_star:
            return []
        if parts[-1] in self.methods:  # a model's method: in a file that uses transformers
            expr = site.arg(0, "attn_implementation")
            if expr is None or "transformers" not in fc.index.imported_roots or not self._has(parts[-1], fc):
                return []
            return self._judge(site.node, lambda impl: f'{parts[-2]}.{parts[-1]}("{impl}")', expr, None, fc)
        if parts[0] != "transformers" or parts[-1] not in self.calls or \
                not any(fnmatchcase(parts[-2], r) for r in self.receivers):
            return []
        label = f"{parts[-2]}.{parts[-1]}"
        out = []
        expr = site.kw.get("attn_implementation")
        if expr is not None:
            out += self._judge(site.node, lambda impl: f'{label}: attn_implementation="{impl}"', expr, None, fc, site,
                               qualname)
        for flag, f in self.flags.items():
            if flag in site.kw:
                out += self._judge(site.node, lambda impl, flag=flag: f"{label}: {flag}=True", site.kw[flag],
                                   (flag, f), fc, site)
        return out

    def check_assign(self, node: cst.Assign, fc) -> list[Finding]:
        for t in node.targets:
            if isinstance(t.target, cst.Attribute) and t.target.attr.value in self.attributes:
                name = t.target.attr.value
                if "transformers" not in fc.index.imported_roots or not self._has(name, fc) or not fc.ctx.worlds:
                    return []  # (no world: code no world reaches, asked here since the rule decides it: reach_own)
                owner = dotted(t.target.value) or "config"
                return self._judge(node, lambda impl: f'{owner}.{name} = "{impl}"', node.value, None, fc)
        return []

    def _unpadded_v(self, qualname: str, impl: str, fc) -> bool:
        """Does this model class get V unpadded with ``impl`` in a transformers release in scope?"""
        return any(qualname in e["calls"] and impl in e["implementations"]
                   and any(v in SpecifierSet(e["package_range"]) for v in _transformers(fc)) for e in self.unpadded)

    def _has(self, setter: str, fc) -> bool:
        """Has a transformers release in scope this method or attribute?"""
        return any(v >= Version(self.setters[setter]["added"]) for v in _transformers(fc))

    def _impls(self, expr, flag, fc) -> dict[str, set]:
        """implementation -> the worlds (reaching here) where ``expr`` names it."""
        out: dict[str, set] = {}
        for _caller, bindings in fc.scenarios():
            for w in fc.ctx.worlds:
                if not fc.reachable(w, bindings):
                    continue
                v = fc.value_of(expr, w, bindings)
                if flag is not None:
                    v = flag[1]["means"] if v is True else None
                if isinstance(v, str):
                    out.setdefault(v, set()).add(w)
        return out

    def _accepted(self, impl: str, flag, fc) -> bool:
        """Does a transformers release in scope take the value? (One that takes none is AIC202's
        or AIC203's finding, not this one.)"""
        e = flag[1] if flag is not None else self.values.get(impl, {})
        if "added" not in e:
            return False
        lo, hi = Version(e["added"]), Version(e["removed"]) if "removed" in e else None
        return any(lo <= v and (hi is None or v < hi) for v in _transformers(fc))

    def _judge(self, node, shown, expr, flag, fc, site=None, qualname: str = "") -> list[Finding]:
        """``shown(impl)``: how the finding names the choice (the call and its argument)."""
        out = []
        for impl, worlds in sorted(self._impls(expr, flag, fc).items()):
            if site is not None and impl in self.dtype_checks:
                out += self._dtype(node, shown(impl), impl, site, worlds, fc)
            entries = self.kernels.get(impl)
            if not entries or not self._accepted(impl, flag, fc):
                continue
            refused: set[str] = set()  # GPUs a device check refuses: said there, not again as missing kernels
            for e in sorted(entries, key=lambda e: _KINDS.index(e["kind"])):
                if e.get("vhead_first") and self._unpadded_v(qualname, impl, fc):
                    continue  # the V head dim check raises first (AIC101)
                found = {a: x for a, x in _refused(e, worlds, fc).items() if a not in refused}
                if found:
                    out.append(_finding(node, shown(impl), e, found, fc))
                    refused |= set(found) if e["kind"] == "capability" else set()
        return out

    def _dtype(self, node, shown: str, impl: str, site, worlds, fc) -> list[Finding]:
        """A dtype the pinned release's check of the implementation raises on (every GPU)."""
        check = self.dtype_checks[impl]
        if (dotted(site.node.func) or "").rsplit(".", 1)[-1] not in check["calls"]:
            return []
        pinned = [v for v in fc.target.releases.get("transformers") or [] if v in SpecifierSet(check["releases"])]
        arg = site.kw.get(check["arg"])
        if not pinned or arg is None:
            return []
        dtypes = {v.name for v in (fc.value_of(arg, w) for w in worlds) if isinstance(v, Module)}
        bad = sorted(dtypes & set(check["refused"]))
        if not bad:
            return []
        span = str(pinned[0]) if len(pinned) == 1 else f"{pinned[0]}-{pinned[-1]}"
        archs = frozenset(w.arch for w in worlds)
        msg = (f"{shown} with {check['arg']}={bad[0]} raises ValueError in transformers {span}: "
               f"\"{check['error'].format(dtype=bad[0])}\"; fails on {fc.describe(archs)}. Load it with "
               f"{check['arg']}=torch.bfloat16 (or torch.float16); later releases only warn")
        return [Finding(node, msg, archs, extra_targets=tuple(f"transformers=={v}" for v in pinned))]


def _transformers(fc) -> list:
    """The transformers releases in scope: the pinned ones, unpinned the newest known."""
    return sorted(fc.target.releases.get("transformers") or []) or sorted(fc.matrix.releases("transformers"))[-1:]


def _refused(e: dict, worlds, fc) -> dict[str, tuple]:
    """arch -> (release, span) where the entry's device check or build leaves the GPU out."""
    failing: dict[str, tuple] = {}
    for v in releases_in_scope(fc, e["package"]):
        span = span_of(e, v)
        if span is None:
            continue
        runs = {a for t in span.get("targets", ()) for a in fc.matrix.targets[t]["runs_on"]}
        for w in worlds:
            arch = fc.matrix.archs.get(w.arch)
            if arch is None:
                continue
            out = not accepts(span, arch) if e["kind"] == "capability" else w.arch not in runs
            if out:
                failing.setdefault(w.arch, (v, span))
    return failing


def _finding(node, shown: str, e: dict, failing: dict, fc) -> Finding:
    v, span = next(iter(failing.values()))
    archs = frozenset(failing)
    where = fc.describe(archs)
    kernels = f"{e['library']} ({e['package']} {v})" if v is not None else e["library"]
    if e["kind"] == "capability":
        why = f"whose device check refuses {where}: \"{span.get('error', e['error'])}\""
    else:
        exits = ", and the process exits" if e.get("exits") else ""
        why = (f"whose default build has no kernel for {where} ({' and '.join(span['targets'])} machine code only): "
               f"\"{e['error']}\"{exits}")
    return Finding(node, f"{shown} runs {kernels} at the first forward, {why}; fails on {where}; use "
                         "attn_implementation=\"sdpa\" there", archs)
