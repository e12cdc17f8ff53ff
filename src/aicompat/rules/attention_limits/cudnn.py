"""SDPA forced onto its cuDNN backend (AIC106): the head dims check_cudnn_tensor_shapes
refuses in each torch release read, on each GPU, with the cuDNN that release's Linux wheel
pins (facts: version_matrix/attention.toml [limit.sdpa_cudnn_head_dim]). A release without
a span is not judged; a GPU outside the span's `gpus` is left to the backend-range entry."""

from __future__ import annotations

from ...core.ruleapi import UNKNOWN, Finding, Tensor
from .._shared.attention_spans import matches, span_of
from .heads import only_backend, q_spans, trains, world_span


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


def sdpa_cudnn_gate(site, qualname, e, fc):
    """SDPA with only the cuDNN backend enabled in a release whose cuDNN backend is off unless an
    environment variable is set (the file does not name it), or refuses inputs that require grad
    (where the file trains)."""
    if fc.ctx.facts.get("sdpa_backends") is None:
        return None
    failing, shown = set(), None
    training = trains(fc) and not fc.ctx.facts.get("no_grad")
    for w in fc.ctx.worlds:
        rel, span = world_span(e, w, fc)
        arch = fc.matrix.archs.get(w.arch)
        if span is None or arch is None or not only_backend(e, fc, rel) or not _in_range(e["backend"], rel, arch, fc):
            continue
        why = "training" if training and "training" in span else "env" if span["env"] not in fc.text else None
        if why is not None:
            failing.add(w.arch)
            shown = shown or (rel, span, why)
    if not failing:
        return None
    rel, span, why = shown
    short = qualname.rsplit(".", 1)[-1]
    if why == "training":
        msg = (f"{short}: the cuDNN backend of torch {rel} refuses inputs that require grad, and no other SDPA "
               f"backend is enabled: \"{span['training']}\"; then \"{e['error']}\"; fails on {fc.describe(failing)} "
               f"where this trains. Also allow SDPBackend.FLASH_ATTENTION or SDPBackend.EFFICIENT_ATTENTION, or use "
               f"torch >= {e['fixed_in']}")
    else:
        msg = (f"{short}: the cuDNN backend of torch {rel} runs only when the environment sets {span['env']}=1, "
               f"which this file does not, and no other SDPA backend is enabled: \"{span['said']}\"; then "
               f"\"{e['error']}\"; fails on {fc.describe(failing)} unless the environment sets it. Set "
               f"os.environ[\"{span['env']}\"] = \"1\" before the first attention call, also allow "
               f"SDPBackend.EFFICIENT_ATTENTION or SDPBackend.MATH, or use torch >= {e['fixed_in']}")
    return Finding(site.node, msg, frozenset(failing))


def _in_range(backend: str, rel, arch, fc) -> bool:
    """Does the backend's GPU range in this torch release take the GPU? (Outside it the
    backend-range entry, kind sdpa_capability, reports the call.)"""
    for e in fc.matrix.section("attention.toml", "limit").values():
        span = span_of(e, rel) if e["kind"] == "sdpa_capability" else None
        if span is not None and backend in span["ranges"]:
            lo, hi = (tuple(int(x) for x in c.split(".")) for c in span["ranges"][backend])
            return lo <= tuple(arch.capability) <= hi
    return True
