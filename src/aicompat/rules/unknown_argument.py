"""AIC202 unknown-argument: a call that binds to no signature the releases in
scope have: a keyword the function never took (or not yet, or no longer), a
required argument left out, too many positionals (facts: the signatures in
version_matrix/api/, overloads unioned; hints in version_matrix/api_hints.toml).

A function with ``**kwargs`` takes any keyword; a call passing ``*args`` or
``**kwargs`` is judged only on what it spells out; a name whose signature the
table does not know (a C builtin without a stub, a dataclass) is left alone.
"""

from __future__ import annotations

import difflib

from .. import apiquery as q
from .base import Example, Finding, Rule


class UnknownArgument(Rule):
    code = "AIC202"
    name = "unknown-argument"
    tokens = (b"torch", b"flash_attn")
    call_tails = frozenset({"*"})

    VALID = [
        Example("from flash_attn import flash_attn_func\nout = flash_attn_func(q, k, v, dropout_p=0.0, causal=True)\n",
                pins={"flash-attn": "2.6.3"}),
        Example("import torch\nwith torch.amp.autocast('cuda', dtype=torch.bfloat16):\n    y = m(x)\n"),
        Example("import torch.nn.functional as F\ny = F.scaled_dot_product_attention(q, k, v, enable_gqa=True)\n",
                pins={"torch": "2.5.1"}),
        Example("import torch\nopts = dict(dim=-1)\ny = torch.softmax(x, **opts)\n"),
        Example("import torch\ny = torch.sum(x, dim=1, keepdim=True)\nz = torch.sum(x)\n"),
        Example("import torch\nlin = torch.nn.Linear(4, 8, bias=False, device='cuda')\n", pins={"torch": "2.4.0"}),
    ]
    INVALID = [
        Example("from flash_attn import flash_attn_func\nout = flash_attn_func(q, k, v, qk_headdim=128, v_headdim=64)\n",
                pins={"flash-attn": "2.6.3"}, expect="no flash-attn release"),
        Example("import torch.nn.functional as F\ny = F.scaled_dot_product_attention(q, k, v, enable_flash=True)\n",
                expect="'enable_flash'"),
        Example("import torch\nwith torch.amp.autocast(enabled=False):\n    y = m(x)\n",
                expect="missing required argument 'device_type'"),
        Example("import torch.nn.functional as F\ny = F.scaled_dot_product_attention(q, k, v, enable_gqa=True)\n",
                pins={"torch": ">=2.3,<2.6"}, expect="accepted in torch 2.5.0"),
        Example("import torch\nlin = torch.nn.Linear(4, 8, True, 'cuda', torch.float16, 3)\n",
                expect="positional"),
    ]

    def __init__(self, matrix) -> None:
        super().__init__(matrix)
        self.hints = matrix.section("api_hints.toml", "keyword")
        self.aliases = {pkg: e["names"] for pkg, e in matrix.section("api_hints.toml", "alias").items()}

    def check_call(self, site, qualname: str, fc) -> list[Finding]:
        package = fc.matrix.api_package(qualname) if qualname else None
        if package is None or "TypeError" in fc.ctx.catches or "Exception" in fc.ctx.catches:
            return []
        scope = q.scope(fc, package)
        where = q.split(scope.api, qualname) if scope else None
        if where is None or len(where[1]) != 1:
            return []
        module, (name,) = where
        api = scope.api
        m = api.module(module)
        entries = m.entries(name) if m else None
        if not entries:
            return []
        keywords = list(site.kw)
        star = any(a.star == "*" for a in site.node.args)
        dstar = any(a.star == "**" for a in site.node.args)
        failures: dict[q.Problem, list[int]] = {}
        aliases = self.aliases.get(package, {})
        for i in scope.indices:
            kind, sigs = next(((k, s) for rng, k, s in entries if i in rng and k in ("f", "b", "c")), (None, None))
            if not sigs:
                continue  # absent (AIC201) or shape unknown
            problems = []
            for s in sigs:
                kws = keywords
                if kind == "b" and aliases:  # C argument parsing also takes NumPy names (axis=, keepdims=)
                    names = {p.name for p in s.params}
                    kws = [aliases[k] if k not in names and aliases.get(k) in names else k for k in keywords]
                problems.append(q.bind(s.params, len(site.pos), kws, star, dstar))
            if all(problems):
                # Report what the closest signature objects to, not "too many positionals" for an overload.
                best = min(problems, key=lambda p: p.kind == "positional")
                failures.setdefault(best, []).append(i)
        if not failures:
            return []
        problem, failing = max(failures.items(), key=lambda kv: len(kv[1]))
        full = f"{module}.{name}"
        msg = self._message(full, problem, failing, scope, module, name)
        return [Finding(site.node, msg, extra_targets=scope.targets(failing))]

    def _message(self, full: str, problem: q.Problem, failing: list[int], scope: q.Scope, module: str, name: str) -> str:
        api, package = scope.api, scope.package
        every = f"{api.labels[0]}–{api.labels[-1]}"
        hint = self.hints.get(f"{full}:{problem.name}", {}).get("hint")
        if problem.kind == "keyword" and problem.detail.startswith("unexpected"):
            accepted = q.accepts_keyword(api, module, name, problem.name)
            if not accepted:
                msg = f"{full}: no {package} release ({every}) accepts keyword '{problem.name}'"
                if not hint:
                    near = self._near(api, module, name, problem.name, failing)
                    hint = f"did you mean {', '.join(repr(n) for n in near)}?" if near else None
            else:
                msg = (f"{full}: keyword '{problem.name}' is not accepted by {package} {api.label(failing)} "
                       f"(accepted in {package} {api.label(accepted)}); {scope.pin_text()}")
        else:
            msg = f"{full}: {problem.detail} in {package} {api.label(failing)}"
            if not scope.pinned:
                msg += f" ({scope.pin_text()})"
        return f"{msg}; {hint}" if hint else msg

    @staticmethod
    def _near(api, module: str, name: str, keyword: str, failing: list[int]) -> list[str]:
        m = api.module(module)
        params: set[str] = set()
        for rng, _, sigs in m.entries(name) or ():
            if rng & set(failing):
                for s in sigs or ():
                    params |= {p.name for p in s.params if p.kind in ("pos", "kwonly")}
        return difflib.get_close_matches(keyword, sorted(params), n=2, cutoff=0.6)
