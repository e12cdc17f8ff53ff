"""Head-dim limits that depend on the release, the GPU, the SDPA backends left enabled
and whether the code trains (AIC106): SDPA's flash backend forced by ``sdpa_kernel``
(its forward maximum, and its training filter on sm_86-sm_89), and FlashAttention 2's
own backward (head dims above 192 on compute capability 8.0 or 9.0 only, per tag).
Facts: version_matrix/attention.toml [limit.*] of kind sdpa_head_dim and
backward_head_dim, [training.signals]."""

from __future__ import annotations

import libcst as cst
from packaging.version import Version

from ...core.ruleapi import UNKNOWN, Finding, Tensor, walk
from .._shared.attention_spans import accepts, matches, q_values_with_bindings, span_of


def release(e: dict, world, fc):
    """The release of the entry's package in this world: the world's torch, or for another
    package its pinned releases' oldest; unpinned, the newest the matrix knows."""
    if e["package"] == "torch" and world.torch is not None:
        return world.torch
    pinned = sorted(fc.target.releases.get(e["package"]) or [])
    known = sorted(fc.matrix.releases(e["package"]))
    return pinned[0] if pinned else (known[-1] if known else None)


def world_span(e: dict, world, fc):
    """The entry's release in this world and its span there (None where no span applies)."""
    rel = release(e, world, fc)
    return rel, (span_of(e, rel) if rel is not None else None)


def q_spans(site, e: dict, fc):
    """(world, bindings, value of q, release, span) per scenario whose release has a span."""
    for w, bindings, val in q_values_with_bindings(site, e, fc):
        rel, span = world_span(e, w, fc)
        if span is not None:
            yield w, bindings, val, rel, span


def only_backend(e: dict, fc, rel) -> bool:
    """Are the SDPA backends the enclosing ``sdpa_kernel`` leaves, in release ``rel``,
    the entry's backend alone? (Unforced SDPA, or any other backend left on, may run.)"""
    allowed = fc.ctx.facts.get("sdpa_backends")
    if allowed is None:
        return False
    present = set()
    for b in allowed:
        added = e.get("backend_added", {}).get(b)
        if added and rel is not None and rel < Version(added):
            continue  # this release has no such backend
        present.add(b)
    return present == {e.get("backend") or e.get("sdpa_backend")}


def sdpa_capability(site, qualname, e, fc):
    """SDPA with only backends enabled whose GPU range (per torch release) leaves this GPU out."""
    allowed = fc.ctx.facts.get("sdpa_backends")
    if allowed is None:
        return None  # unforced: the math fallback runs on every GPU
    failing, shown = set(), None
    for w in fc.ctx.worlds:
        rel, span = world_span(e, w, fc)
        arch = fc.matrix.archs.get(w.arch)
        if span is None or arch is None:
            continue
        present = [b for b in allowed if not (b in e.get("backend_added", {})
                                               and rel < Version(e["backend_added"][b]))]
        ranges = span["ranges"]
        # any backend without a range here (math, or one not read) may run
        if not present or any(b not in ranges for b in present):
            continue
        cap = tuple(arch.capability)
        if all(not (_cap(ranges[b][0]) <= cap <= _cap(ranges[b][1])) for b in present):
            failing.add(w.arch)
            shown = shown or (rel, span, sorted(present))
    if not failing:
        return None
    rel, span, present = shown
    later = _later_release_takes(e, present, [fc.matrix.archs[a] for a in failing if a in fc.matrix.archs])
    said = "; ".join(e["errors"][b].format(lo=_sm(span["ranges"][b][0]), hi=_sm(span["ranges"][b][1]))
                     for b in present)
    short = qualname.rsplit(".", 1)[-1]
    names = ", ".join(f"SDPBackend.{b}" for b in present)
    msg = (f"{short}: in torch {rel} the SDPA backends left enabled ({names}) leave this GPU out: "
           f"\"{said}\"; then \"{e['error']}\"; fails on {fc.describe(failing)}. Also allow SDPBackend.MATH"
           + (f", or use torch >= {e['fixed_in']}" if later else ""))
    return Finding(site.node, msg, frozenset(failing))


def _later_release_takes(e: dict, backends, archs) -> bool:
    """Does the span of ``fixed_in`` give every failing GPU to one of these backends? (No torch
    release takes sm_75 for flash or cuDNN: a newer torch is no fix there.)"""
    span = span_of(e, Version(e["fixed_in"])) if e.get("fixed_in") else None
    if span is None:
        return False
    ranges = span["ranges"]
    return all(any(b in ranges and _cap(ranges[b][0]) <= tuple(a.capability) <= _cap(ranges[b][1]) for b in backends)
               for a in archs)


def _cap(s: str) -> tuple:
    major, minor = s.split(".")
    return int(major), int(minor)


def _sm(s: str) -> str:
    """'12.1' -> '121', as torch's messages write an SM version."""
    return s.replace(".", "")


def _int_dim(val):
    d = val.last_dim() if isinstance(val, Tensor) else UNKNOWN
    return d if isinstance(d, int) and not isinstance(d, bool) else None


def sdpa_head_dim(site, qualname, e, fc):
    """SDPA with only the flash backend enabled and a head dim its filter refuses."""
    if fc.ctx.facts.get("sdpa_backends") is None:
        return None  # unforced: the math fallback runs any head dim
    failing, shown = set(), None
    for w, _b, val, rel, span in q_spans(site, e, fc):
        d = _int_dim(val)
        if d is None or not only_backend(e, fc, rel):
            continue
        step = span.get("multiple_of")
        if d > span["max"] or (step and d % step):
            failing.add(w.arch)
            shown = shown or (d, rel, span)
    if not failing:
        return None
    d, rel, span = shown
    short = qualname.rsplit(".", 1)[-1]
    why = f"is more than the flash backend of torch {rel} accepts ({span['max']})" if d > span["max"] else \
        f"is not a multiple of {span['multiple_of']}, which the flash backend of torch {rel} needs"
    msg = (f"{short}: head dim {d} {why}, and no other SDPA backend is enabled: \"{span['error']}\"; then "
           f"\"{e['error']}\"; fails on {fc.describe(failing)}. Also allow SDPBackend.EFFICIENT_ATTENTION or "
           f"SDPBackend.MATH")
    return Finding(site.node, msg, frozenset(failing))


def backward_head_dim(site, qualname, e, fc, refused_outright):
    """A head dim (and dropout) the backward refuses on some GPUs, where the code trains.
    ``refused_outright(world)``: the GPU is refused by another entry of the call (reported there)."""
    if not trains(fc) or fc.ctx.facts.get("no_grad"):
        return None
    short = qualname.rsplit(".", 1)[-1]
    drop = e.get("dropout_arg", {}).get(short)
    drop_expr = site.arg(*drop) if drop else None
    failing, shown = set(), None
    for w, bindings, val, rel, span in q_spans(site, e, fc):
        arch = fc.matrix.archs.get(w.arch)
        d = _int_dim(val)
        if arch is None or d is None or refused_outright(w):
            continue
        if e.get("sdpa_backend") and not only_backend(e, fc, rel):
            continue
        on = matches(span["on"], arch) if "on" in span else not accepts(span, arch)
        if not on or d <= span["above"]:
            continue
        dropout = 0.0 if drop_expr is None else fc.value_of(drop_expr, w, bindings)
        if d <= span.get("max_without_dropout", d) or _positive(dropout):
            failing.add(w.arch)
            shown = shown or (d, rel, span, d > span.get("max_without_dropout", d))  # did dropout matter
    if not failing:
        return None
    d, rel, span, with_dropout = shown
    said = f": \"{span['error']}\"" if "error" in span else ""
    dims = f"head dim {d}" + (" and dropout" if with_dropout else "")
    if e.get("sdpa_backend"):
        msg = (f"{short}: training with {dims} is refused by the flash backend of torch {rel}, and no other SDPA "
               f"backend is enabled{said}; then \"{e['error']}\"; fails on {fc.describe(failing)}. Also allow "
               f"SDPBackend.EFFICIENT_ATTENTION or SDPBackend.MATH")
    else:
        only = " and ".join(a.lstrip("=") for a in span["accept"])
        msg = (f"{short}: the backward of {e['library']} ({e['package']} {rel}) takes {dims} only on compute "
               f"capability {only}{said}; fails on {fc.describe(failing)}. flash-attn >= 2.7.3 has no such check")
    return Finding(site.node, msg, frozenset(failing))


def _positive(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and v > 0


def trains(fc) -> bool:
    """Does the file clearly train: a ``.backward()`` or ``torch.autograd.grad`` call, or
    ``requires_grad=True`` / ``.requires_grad_()`` / ``x.requires_grad = True``?"""
    if "attention_trains" not in fc.state:
        signals = next(iter(fc.matrix.section("attention.toml", "training").values()), None)
        found = False
        if signals is not None:
            v = _Training(fc, signals)
            walk(fc.module, v)
            found = v.found
        fc.state["attention_trains"] = found
    return fc.state["attention_trains"]


class _Training(cst.CSTVisitor):
    def __init__(self, fc, signals: dict) -> None:
        super().__init__()
        self.fc, self.s, self.found = fc, signals, False

    def visit_Call(self, node: cst.Call) -> bool:
        f = node.func
        if isinstance(f, cst.Attribute) and f.attr.value in self.s["methods"]:
            # ``x.requires_grad_(False)`` turns gradients off: not a sign of training
            self.found = not any(isinstance(a.value, cst.Name) and a.value.value == "False" for a in node.args)
        elif (self.fc.resolve(f) or "") in self.s["calls"]:
            self.found = True
        elif any(a.keyword is not None and a.keyword.value in self.s["keywords"] and _true(a.value) for a in node.args):
            self.found = True
        return not self.found

    def visit_Assign(self, node: cst.Assign) -> bool:
        if _true(node.value) and any(isinstance(t.target, cst.Attribute) and t.target.attr.value in self.s["keywords"]
                                     for t in node.targets):
            self.found = True
        return not self.found


def _true(node) -> bool:
    return isinstance(node, cst.Name) and node.value == "True"
