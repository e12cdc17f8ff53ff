"""FlashAttention under other names (version_matrix/attention.toml [alias.*]):
``vllm.vllm_flash_attn.flash_attn_varlen_func`` is FA2's or FA3's by its
``fa_version``, ``sgl_kernel.flash_attn.*`` FA3's, a project's vendored copy of
``flash_attn_interface`` the one whose CUDA extension it imports. A wrapper call is judged as a call
of the canonical function, with the canonical package's release its kernels match."""

from __future__ import annotations

from pathlib import Path

import libcst as cst
from packaging.version import Version

from ...core.ruleapi import dotted, read_inside, tree_of, walk
from .attention_spans import matches, releases_in_scope, span_of


class Aliases:
    def __init__(self, matrix) -> None:
        self.by_call: dict[str, dict] = {}
        for e in matrix.section("attention.toml", "alias").values():
            for call in e["calls"]:
                self.by_call[call] = e

        self.vendored = list(matrix.section("attention.toml", "vendored").values())
        # a wrapper's own device check (sgl-kernel's is_fa3_supported), per release of its package
        self.own_checks: dict[str, list[dict]] = {}
        for e in matrix.section("attention.toml", "limit").values():
            if e["kind"] == "capability":
                for call in e["calls"]:
                    if call in self.by_call:
                        self.own_checks.setdefault(call, []).append(e)

    def names(self) -> set[str]:
        return set(self.by_call)

    def resolve(self, site, qualname: str, fc) -> list[tuple[str, dict | None, frozenset]]:
        """[(canonical qualname, {package: Version} or None, worlds)]: a wrapper call is the
        canonical function in the worlds where its selector picks it (worlds where the selector
        is unknown, or picks an unmodelled version such as FA4, check nothing); any other call
        is itself in every world."""
        e = self.by_call.get(qualname)
        if e is None:
            copy = self._vendored(site, qualname, fc)
            return [copy + (fc.ctx.worlds,)] if copy else [(qualname, None, fc.ctx.worlds)]
        release = {p: Version(v) for p, v in e.get("as_release", {}).items()}
        own = self.own_checks.get(qualname)
        if own is not None:  # GPUs the wrapper refuses before its kernel runs: reported once, as that
            worlds = frozenset(w for w in fc.ctx.worlds
                               if w.arch in fc.matrix.archs and self._passes(own, fc.matrix.archs[w.arch], fc))
            return [(e["calls"][qualname], release, worlds)]
        sel = e.get("select")
        if sel is None:
            return [(e["calls"][qualname], release, fc.ctx.worlds)]
        expr = site.arg(*sel["arg"])
        groups: dict[str, set] = {}
        for w in fc.ctx.worlds:
            value = sel["default"] if expr is None else fc.value_of(expr, w)
            target = sel["by"].get(str(value)) if isinstance(value, int) and not isinstance(value, bool) else None
            if target is not None:
                groups.setdefault(target, set()).add(w)
        return [(t, release, frozenset(ws)) for t, ws in sorted(groups.items())]


    @staticmethod
    def _passes(checks: list[dict], arch, fc) -> bool:
        """Does some release in scope let this GPU past every one of the wrapper's checks?"""
        for v_checks in zip(*([span_of(e, v) for v in releases_in_scope(fc, e["package"])] for e in checks)):
            if all(s is None or matches(s["accept"], arch) for s in v_checks):
                return True
        return False

    def _vendored(self, site, qualname: str, fc):
        """(canonical qualname, releases) when the call's function lives in a project module
        named like a FlashAttention interface (``from .flash_attn_interface import
        flash_attn_func``) that imports a known CUDA extension; else None."""
        if not self.vendored:
            return None
        func = site.node.func
        if not qualname and isinstance(func, cst.Name):
            qualname = fc.index.relative.get(func.value, "")  # ``from .x import f``: ".x.f"
        mod, _, fn = qualname.rpartition(".")
        for v in self.vendored:
            if not fn or mod.rsplit(".", 1)[-1].lstrip(".") != v["module"]:
                continue
            # a top-level ``flash_attn_interface`` is the library's own module unless the project
            # holds a copy that runs another platform's kernels (MATE's, on MUSA)
            top = mod == v["module"]
            if top:
                module = _top_level_copy(fc, v["module"])  # the library's name: project.find leaves it
            else:
                try:
                    found = fc.project.find(fc.path, qualname)
                except (OSError, ValueError):
                    return None
                module = found[0].module if found is not None else None
            if module is None:
                return None
            imported = _imports(module)
            for ext in v["extensions"]:
                if ext["imports"] in imported and not (top and "platform" not in ext):
                    rel = {p: Version(r) if r else None for p, r in ext["as_release"].items()}
                    return f"{ext['canonical']}.{fn}", rel
        return None

    def foreign(self, qualname: str, aliased) -> bool:
        """Was the call resolved to kernels other than those its own name stands for (a vendored
        copy in the project), so that the limits filed under its own name do not apply?"""
        return qualname not in self.by_call and any(c != qualname for c, _, _ in aliased)


def _top_level_copy(fc, name: str):
    """The syntax tree of ``name``.py kept beside the importing file's top package (the
    folder on sys.path: the first folder up without ``__init__.py``), or in a package folder
    on the way; None when there is none (or it cannot be read)."""
    if not fc.path or str(fc.path).startswith("<"):
        return None
    here = Path(fc.path).resolve().parent
    tree = tree_of(str(fc.path), getattr(fc, "root", None))  # nothing above the checked tree is read
    for d in [here, *here.parents]:
        cand = d / f"{name}.py"
        if cand.is_file():
            data = read_inside(cand, tree)
            if data is None:
                return None
            try:
                return cst.parse_module(data.decode("utf-8", "replace"))
            except (UnicodeError, cst.ParserSyntaxError, RecursionError):
                return None
        if not (d / "__init__.py").is_file():
            return None
    return None


def narrowed(fc, worlds, check):
    """``check()`` with the call judged only in ``worlds`` (a wrapper's selector picked them)."""
    saved = fc.ctx
    fc.ctx = saved.narrowed(frozenset(worlds) & saved.worlds)
    try:
        return check()
    finally:
        fc.ctx = saved


def _imports(module: cst.Module) -> set[str]:
    """Every module a file imports, at any depth (``try: import flash_attn_3._C``)."""
    names: set[str] = set()

    class V(cst.CSTVisitor):
        def visit_Import(self, node: cst.Import) -> None:
            for a in node.names:
                d = dotted(a.name)
                if d:
                    names.add(d)

        def visit_ImportFrom(self, node: cst.ImportFrom) -> None:
            base = dotted(node.module) if node.module is not None else None
            if base and not node.relative:
                names.add(base)
                if not isinstance(node.names, cst.ImportStar):
                    names.update(f"{base}.{a.name.value}" for a in node.names if isinstance(a.name, cst.Name))

    walk(module, V())
    return names
