"""SDPA forced onto its cuDNN backend (AIC106): the head dims check_cudnn_tensor_shapes
refuses in each torch release read, on each GPU, with the cuDNN that release's Linux wheel
pins (facts: version_matrix/attention.toml [limit.sdpa_cudnn_head_dim]). A release without
a span is not judged; a GPU outside the span's `gpus` is left to the backend-range entry."""

from __future__ import annotations

from ...core.ruleapi import UNKNOWN, Finding, Tensor
from .._shared.attention_spans import matches
from .heads import only_backend, q_spans, trains


def _dim(val):
    d = val.last_dim() if isinstance(val, Tensor) else UNKNOWN
    return d if isinstance(d, int) and not isinstance(d, bool) else None


def _limit(span: dict, arch, d_qk: int, d_v):
    """(the head-dim maximum on this GPU, whether the pinned cuDNN decides it), or None when
    it depends on a V head dim that is not known."""
    for rule in span.get("wider", ()):
        if matches(rule["on"], arch):
            pair = rule.get("pair")
            if pair and d_qk == pair[0]:
                if d_v is None:
                    return None
                if d_v == pair[1]:
                    return pair[0], True
            return rule["max"], True
    return span["max"], False


def sdpa_cudnn_head_dim(site, qualname, e, fc):
    """SDPA with only the cuDNN backend enabled and a head dim its shape filter refuses."""
    if fc.ctx.facts.get("sdpa_backends") is None:
        return None  # unforced: another backend takes the call
    v_expr = site.arg(*e["args"]["v"])
    failing, shown = set(), None
    for w, bindings, val, rel, span in q_spans(site, e, fc):
        arch = fc.matrix.archs.get(w.arch)
        d = _dim(val)
        if arch is None or d is None or not only_backend(e, fc, rel):
            continue
        if not matches(span["gpus"], arch):
            continue  # the backend refuses this GPU outright ([limit.sdpa_backend_range])
        # q_only: that release's check reads the q head dim alone (2.4.0)
        d_v = _dim(fc.value_of(v_expr, w, bindings)) if v_expr is not None and not span.get("q_only") else None
        got = _limit(span, arch, d, d_v)
        if got is None:
            continue
        limit, pinned = got
        too_big = next((x for x in (d, d_v) if x is not None and x > limit), None)
        odd = next((x for x in (d, d_v) if x is not None and x % span["multiple_of"]), None)
        backward = too_big is None and odd is None and _backward_refused(span.get("training"), arch, d, d_v, fc)
        if too_big is not None or odd is not None or backward:
            failing.add(w.arch)
            shown = shown or (too_big, odd, limit, pinned or backward, rel, span, w.arch, (d, d_v))
    if not failing:
        return None
    too_big, odd, limit, pinned, rel, span, arch_name, (d, d_v) = shown
    short = qualname.rsplit(".", 1)[-1]
    where = fc.describe(frozenset({arch_name}))
    with_cudnn = f" with the cuDNN its Linux wheel pins ({span['cudnn']})" if pinned else ""
    if too_big is None and odd is None:
        dims = f"head dim {d}" if d_v in (None, d) else f"head dims {d} (q) and {d_v} (v)"
        msg = (f"{short}: training with {dims} is refused by the cuDNN backend of torch {rel} on {where}"
               f"{with_cudnn}, and no other SDPA backend is enabled: \"cuDNN SDPA on SM 9.0/10.x does not support "
               f"backward with these head dimensions.\"; then \"{e['error']}\"; fails on {fc.describe(failing)}. "
               f"Also allow SDPBackend.EFFICIENT_ATTENTION or SDPBackend.MATH")
        return Finding(site.node, msg, frozenset(failing))
    if too_big is not None:
        why = f"head dim {too_big} is more than the {limit} the cuDNN backend of torch {rel} accepts on {where}{with_cudnn}"
        said = span.get("said", f"head_dim should be no more than {limit}")
    else:
        why = f"head dim {odd} is not a multiple of {span['multiple_of']}, which the cuDNN backend of torch {rel} needs"
        said = span.get("said", f"head_dim should be a multiple of {span['multiple_of']}")
    msg = (f"{short}: {why}, and no other SDPA backend is enabled: \"{said}\"; then \"{e['error']}\"; "
           f"fails on {fc.describe(failing)}. Also allow SDPBackend.EFFICIENT_ATTENTION or SDPBackend.MATH")
    return Finding(site.node, msg, frozenset(failing))


def _backward_refused(rule, arch, d: int, d_v, fc) -> bool:
    """Does the training filter refuse (d_qk, d_v) on this GPU, where the file trains? An
    unknown V head dim decides nothing unless d_qk alone rules every V out."""
    if rule is None or not matches(rule["on"], arch) or not trains(fc) or fc.ctx.facts.get("no_grad"):
        return False
    pairs = [tuple(p) for p in rule["pairs"]]
    if d_v is None:
        return d > rule["max"] and all(d != p[0] for p in pairs)
    return not (d <= rule["max"] and d_v <= rule["max"]) and (d, d_v) not in pairs
