"""FlashAttention under other names (version_matrix/attention.toml [alias.*]):
``vllm.vllm_flash_attn.flash_attn_varlen_func`` is FA2's or FA3's by its
``fa_version``, ``sgl_kernel.flash_attn.*`` FA3's. A wrapper call is judged as a call
of the canonical function, with the canonical package's release its kernels match."""

from __future__ import annotations

from packaging.version import Version


class Aliases:
    def __init__(self, matrix) -> None:
        self.by_call: dict[str, dict] = {}
        for e in matrix.section("attention.toml", "alias").values():
            for call in e["calls"]:
                self.by_call[call] = e

    def names(self) -> set[str]:
        return set(self.by_call)

    def resolve(self, site, qualname: str, fc) -> list[tuple[str, dict | None, frozenset]]:
        """[(canonical qualname, {package: Version} or None, worlds)]: a wrapper call is the
        canonical function in the worlds where its selector picks it (worlds where the selector
        is unknown, or picks an unmodelled version such as FA4, check nothing); any other call
        is itself in every world."""
        e = self.by_call.get(qualname)
        if e is None:
            return [(qualname, None, fc.ctx.worlds)]
        release = {p: Version(v) for p, v in e.get("as_release", {}).items()}
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


def narrowed(fc, worlds, check):
    """``check()`` with the call judged only in ``worlds`` (a wrapper's selector picked them)."""
    saved = fc.ctx
    fc.ctx = saved.narrowed(frozenset(worlds) & saved.worlds)
    try:
        return check()
    finally:
        fc.ctx = saved
