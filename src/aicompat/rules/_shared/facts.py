"""The facts rules share, each declared once with what provides it (issue 26: no rule reads
another rule's key). The engine asks these providers wherever code runs, whatever rules are
selected; the rules read ``fc.ctx.facts[key]`` or ``fc.ctx.fact_worlds(key)``.

- ``sdpa_backends``: the SDPA backends a ``with sdpa_kernel(...)`` / ``sdp_kernel(...)`` leaves
  enabled in its body (attention.toml [sdpa_context]; the legacy flags through constants,
  ``**config`` dicts and positionally); read by AIC101 and AIC106.
- ``compiled``: a function handed to ``torch.compile`` and the like (compile.toml [entry_point]),
  as a function mark; read by AIC102.
- ``no_grad``: code under ``with torch.no_grad()`` / ``@torch.inference_mode()`` (attention.toml
  [training] no_grad), where no backward runs; read by AIC106.
"""

from __future__ import annotations

import libcst as cst

from ...core.ruleapi import UNKNOWN, ContextProvider, DictValue, Fact, Module, Seq, dotted

SDPA_BACKENDS = Fact("sdpa_backends", "frozenset of SDPBackend member names", "SdpaBackends")
COMPILED = Fact("compiled", "a function mark (fc.ctx.fact_worlds)", "Compiled")
NO_GRAD = Fact("no_grad", "True, or a function mark", "NoGrad")
FACTS = (SDPA_BACKENDS, COMPILED, NO_GRAD)


class SdpaBackends(ContextProvider):
    FACTS = (SDPA_BACKENDS,)

    def __init__(self, matrix) -> None:
        super().__init__(matrix)
        self.sdpa_contexts = matrix.section("attention.toml", "sdpa_context")

    def with_context(self, call: cst.Call, qualname: str, fc) -> dict | None:
        """``with sdpa_kernel(...)`` / ``with sdp_kernel(...)``: the backends enabled in
        the body, as ``fc.ctx.facts["sdpa_backends"]``; None when they are not literal."""
        e = self.sdpa_contexts.get(qualname)
        if e is None:
            return None
        backends = _sdpa_kernel_backends(call, e["backends"], fc) if "backends" in e \
            else _sdp_kernel_flags(call, e["flags"], e.get("params", ()), fc)
        return None if backends is None else {SDPA_BACKENDS.key: backends}


class Compiled(ContextProvider):
    FACTS = (COMPILED,)

    def function_marks(self) -> dict[str, str]:
        return dict.fromkeys(self.matrix.section("compile.toml", "entry_point"), COMPILED.key)


class NoGrad(ContextProvider):
    FACTS = (NO_GRAD,)

    def __init__(self, matrix) -> None:
        super().__init__(matrix)
        training: dict = next(iter(matrix.section("attention.toml", "training").values()), {})
        self.no_grad = frozenset(training.get("no_grad", ()))

    def with_context(self, call, qualname, fc):
        """``with torch.no_grad():``: no backward runs for the calls in the body."""
        return {NO_GRAD.key: True} if qualname in self.no_grad else None

    def function_marks(self) -> dict[str, str]:
        return dict.fromkeys(self.no_grad, NO_GRAD.key)  # @torch.no_grad() / @torch.inference_mode()


def _sdpa_kernel_backends(call: cst.Call, where, fc) -> frozenset[str] | None:
    """The SDPBackend member names a ``sdpa_kernel(backends)`` call enables."""
    index, keyword = where
    arg = None
    for i, a in enumerate(call.args):
        if a.keyword is None and i == index:
            arg = a.value
        elif a.keyword is not None and a.keyword.value == keyword:
            arg = a.value
    if arg is None:
        return None
    items = [e.value for e in arg.elements] if isinstance(arg, (cst.List, cst.Tuple)) else [arg]
    names = set()
    for e in items:
        d = fc.resolve(e) or dotted(e) or ""
        if not d or isinstance(e, cst.Name) and d == e.value:
            return _backends_value(fc.value_everywhere(arg))  # a variable: what the value model knows
        names.add(d.rsplit(".", 1)[-1])
    return frozenset(names)


def _backends_value(v) -> frozenset[str] | None:
    """The SDPBackend members of a value (``backends`` handed in by every caller as
    ``[SDPBackend.FLASH_ATTENTION]``), or None when any item is not known as one."""
    if isinstance(v, Seq):
        if v.more is not None:
            return None
        v = v.items
    items = v if isinstance(v, tuple) else (v,)
    names = set()
    for x in items:
        if not isinstance(x, Module) or ".SDPBackend." not in x.name:
            return None
        names.add(x.name.rsplit(".", 1)[-1])
    return frozenset(names) if names else None


def _sdp_kernel_flags(call: cst.Call, flags: dict[str, str], params, fc) -> frozenset[str] | None:
    """The backends a legacy ``sdp_kernel(enable_x=...)`` call leaves on: every flag defaults to
    True (attention.toml: in every release that has it); a flag is read as written, through
    names, helpers' parameters and ``**config`` dicts (the value model), positionally in the
    signature's order. None when any flag's truth is not known (or the call is not one
    sdp_kernel accepts: it raises TypeError then)."""
    given: dict[str, object] = {}
    for i, a in enumerate(call.args):
        if a.star == "**":
            d = fc.value_everywhere(a.value)
            if not isinstance(d, DictValue) or not d.exact:
                return None
            given.update(d.items)
        elif a.star:
            return None
        elif a.keyword is None:
            if i >= len(params):
                return None
            given[params[i]] = a.value
        else:
            given[a.keyword.value] = a.value
    on = set(flags.values())
    for name, value in given.items():
        if name not in flags:
            return None
        truth = _truth(value, fc)
        if truth is None:
            return None
        if not truth:
            on.discard(flags[name])
    return frozenset(on)


def _truth(value, fc) -> bool | None:
    """A flag's truth: ``True``/``False`` written there, else its known constant value."""
    if isinstance(value, cst.Name) and value.value in ("True", "False"):
        return value.value == "True"
    if isinstance(value, cst.BaseExpression):
        value = fc.value_everywhere(value)
    if value is UNKNOWN or not isinstance(value, (bool, int)):
        return None
    return bool(value)
