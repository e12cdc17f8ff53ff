"""The kernels a FlashAttention build holds (AIC106): the compile targets its default build
emits per release (attention.toml [limit.*] of kind build_targets), each running on the GPUs
gpus.toml [target.*] lists. A GPU the release's device check accepts but no target runs on
gets no kernel: the first launch fails ("no kernel image is available")."""

from __future__ import annotations

from ...core.ruleapi import Finding, Tensor
from .._shared.attention_spans import q_values_with_bindings, span_of


def build_targets(site, qualname: str, e: dict, fc, releases, refused):
    """``refused(world)``: the device check of a capability entry refuses the GPU (said there)."""
    worlds = fc.ctx.worlds
    if e.get("vhead_first"):  # a differing V head dim raises before any launch (AIC101's finding)
        v_expr = site.arg(*e["args"]["v"])
        worlds = frozenset(w for w, bindings, q in q_values_with_bindings(site, e, fc)
                           if not _differ(q, fc.value_of(v_expr, w, bindings) if v_expr is not None else None))
    failing: dict[str, tuple] = {}
    for v in releases:
        span = span_of(e, v)
        if span is None:
            continue
        runs = {a for t in span["targets"] for a in fc.matrix.targets[t]["runs_on"]}
        for w in worlds:
            if w.arch in fc.matrix.archs and w.arch not in runs and not refused(w):
                failing.setdefault(w.arch, (v, span))
    if not failing:
        return None
    v, span = next(iter(failing.values()))
    archs = frozenset(failing)
    short = qualname.rsplit(".", 1)[-1]
    label = e["package"] if v is None else f"{e['package']} {v}"
    built = " and ".join(span["targets"])
    exits = " and exits the process (its CUDA check calls exit(1))" if e.get("exits") else ""
    msg = (f"{short}: {e['library']} ({label}) has no kernel for {fc.describe(archs)}: its default build compiles "
           f"{built} machine code only, no PTX; the first launch fails with \"{e['error']}\"{exits}; fails on "
           f"{fc.describe(archs)}. {e['fix'][0].upper()}{e['fix'][1:]}")
    return Finding(site.node, msg, archs)


def _differ(q, v) -> bool:
    """Are both last dims known and different?"""
    dq = q.last_dim() if isinstance(q, Tensor) else None
    dv = v.last_dim() if isinstance(v, Tensor) else None
    known = all(isinstance(d, int) and not isinstance(d, bool) for d in (dq, dv))
    return known and dq != dv
