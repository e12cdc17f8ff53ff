"""AIC203 deprecated-api: a call that warns it is deprecated in a release in
scope, with what to call instead (facts: the deprecations recorded in
version_matrix/api/ by the table builder, plus version_matrix/deprecations.toml
for replacements, fixes, logging-only warnings and deprecated keywords).

``--fix`` rewrites the mechanical cases when the replacement exists in every
release in scope and the call is written through the package's root name
(``torch.cuda.amp.autocast(...)`` after ``import torch``):
``torch.amp.autocast("cuda", enabled=..., dtype=...)`` (old positionals become
keywords: the new signature puts the device first), ``sdp_kernel(...)`` ->
``sdpa_kernel([...])`` with the backends the flags enabled, renamed
functions and keywords.

A deprecated attribute that is not called warns when it is read: torch 2.2+'s
``torch.has_cuda``, served by the module's ``__getattr__`` with "'has_cuda' is
deprecated, please use 'torch.backends.cuda.is_built()'" (the table's
deprecations of a name of kind ``a``, read at run time), reported where it is read.
"""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING, cast

import libcst as cst
from packaging.version import Version

from ..core.ruleapi import CallSite, Example, Finding, Qual, Rule
from ..core.ruleapi import api_query as q
from ._shared import transformers_kwargs as tk

if TYPE_CHECKING:
    from ..matrix.api_tables import ModuleApi

_SDPA_FLAGS = {"enable_flash": "FLASH_ATTENTION", "enable_mem_efficient": "EFFICIENT_ATTENTION",
               "enable_math": "MATH", "enable_cudnn": "CUDNN_ATTENTION"}


class DeprecatedApi(Rule):
    code = "AIC203"
    worlds_monotone = True
    name = "deprecated-api"
    tokens = (b"import torch", b"from torch", b"flash_attn", b"use_flash_attention_2", b"torch_dtype", b"evaluation_strategy",
              b"from_pretrained",
              b"fp8_autocast", b"transformer_engine")
    call_tails = frozenset({"*"})
    attr_tails = frozenset({"*"})

    VALID = [
        Example("import torch\nwith torch.amp.autocast('cuda', dtype=torch.bfloat16):\n    y = m(x)\n"),
        Example("import torch\nwith torch.cuda.amp.autocast():\n    y = m(x)\n", pins={"torch": "2.3.1"}),
        Example("import torch\nfrom torch.nn.attention import sdpa_kernel, SDPBackend\n"
                "with sdpa_kernel(SDPBackend.FLASH_ATTENTION):\n    y = attn(q, k, v)\n", pins={"torch": "2.5.1"}),
        Example("from transformers import AutoModelForCausalLM\n"
                "m = AutoModelForCausalLM.from_pretrained('x', attn_implementation='flash_attention_2')\n"),
        Example("from transformers import AutoModelForCausalLM\n"
                "m = AutoModelForCausalLM.from_pretrained('x', torch_dtype='auto')\n", pins={"transformers": "4.46.0"}),
        Example("import transformer_engine.pytorch as te\nwith te.fp8_model_init(enabled=True):\n"
                "    layer = te.Linear(1024, 1024)\n", pins={"transformer-engine": "2.8.0"}),
        Example("from transformers import AutoModelForCausalLM\n"
                "m = AutoModelForCausalLM.from_pretrained('x', token='hf_x')\n", pins={"transformers": "4.45.0"}),
        # the fixed twin of the deprecated attribute (last INVALID)
        Example("import torch\n\nUSE_CUDA = torch.backends.cuda.is_built() and torch.cuda.is_available()\n",
                pins={"torch": "2.4.1"}),
    ]
    INVALID = [
        Example("import torch\nwith torch.cuda.amp.autocast(dtype=torch.bfloat16):\n    y = m(x)\n",
                pins={"torch": "2.4.0"},
                findings=[
                    (2, 6, "torch.cuda.amp.autocast is deprecated since torch 2.4.0 (warns in 2.4.0: "
                           '"`torch.cuda.amp.autocast(args...)` is deprecated. Please use '
                           "`torch.amp.autocast('cuda', args...)` instead.\"); use torch.amp.autocast(\"cuda\", "
                           "...)"),
                ]),
        Example("import torch\nscaler = torch.cuda.amp.GradScaler()\n", pins={"torch": ">=2.4,<2.7"},
                findings=[
                    (2, 10, "torch.cuda.amp.GradScaler is deprecated since torch 2.4.0 (warns in 2.4.0–2.6.0: "
                            '"`torch.cuda.amp.GradScaler(args...)` is deprecated. Please use '
                            "`torch.amp.GradScaler('cuda', args...)` instead.\"); use "
                            'torch.amp.GradScaler("cuda", ...)'),
                ]),
        Example("import torch\nwith torch.backends.cuda.sdp_kernel(enable_flash=True, enable_math=False):\n"
                "    y = attn(q, k, v)\n", pins={"torch": "2.5.1"},
                findings=[
                    (2, 6, "torch.backends.cuda.sdp_kernel is deprecated since torch 2.3.0 (warns in 2.5.1: "
                           '"`torch.backends.cuda.sdp_kernel()` is deprecated. In the future, this context manager '
                           'will be removed. Please see `torch.nn.attention.sdpa_kernel()` for the ne…"); use '
                           "torch.nn.attention.sdpa_kernel([SDPBackend...])"),
                ]),
        Example("import torch\nclass F(torch.autograd.Function):\n    @staticmethod\n    @torch.cuda.amp.custom_fwd\n"
                "    def forward(ctx, x):\n        return x * 2\n", pins={"torch": "2.4.0"},
                findings=[
                    (4, 6, "torch.cuda.amp.custom_fwd is deprecated since torch 2.4.0 (warns in 2.4.0: "
                           '"`torch.cuda.amp.custom_fwd(args...)` is deprecated. Please use '
                           "`torch.amp.custom_fwd(args..., device_type='cuda')` instead.\"); use "
                           'torch.amp.custom_fwd(..., device_type="cuda")'),
                ]),
        Example("from transformers import AutoModelForCausalLM\n"
                "m = AutoModelForCausalLM.from_pretrained('x', use_flash_attention_2=True)\n",
                pins={"transformers": "4.40.0"},
                findings=[
                    (2, 47, "from_pretrained(use_flash_attention_2=...) is deprecated since transformers 4.36.0; "
                            'no longer handled from 4.53.0 (warns: "The model was loaded with '
                            "use_flash_attention_2=True, which is deprecated and may be removed in a future "
                            'release."); use attn_implementation="flash_attention_2"'),
                ]),
        Example("import transformers\nm = transformers.AutoModel.from_pretrained('x', torch_dtype=torch.bfloat16)\n",
                pins={"transformers": "4.57.1"},
                findings=[
                    (2, 49, "from_pretrained(torch_dtype=...) is deprecated since transformers 4.56.0 (warns in 4.57.1: "
                            '"`torch_dtype` is deprecated! Use `dtype` instead!"); use dtype=...'),
                ]),
        Example("import transformer_engine.pytorch as te\nwith te.fp8_model_init(enabled=True):\n"
                "    layer = te.Linear(1024, 1024)\n", pins={"transformer-engine": "2.9.0"},
                findings=[
                    (2, 6, "transformer_engine.pytorch.fp8_model_init is deprecated since transformer-engine 2.9.0 "
                           '(warns in transformer-engine 2.9.0: "fp8_model_init is deprecated and will be removed in a '
                           "future release. Use quantized_model_init(enabled=..., recipe=..., "
                           'preserve_high_precision_init_val=...) i…"); use transformer_engine.pytorch.'
                           "quantized_model_init(enabled=..., recipe=..., preserve_high_precision_init_val=...)"),
                ]),
        Example("from transformers import AutoModelForCausalLM\n"
                "m = AutoModelForCausalLM.from_pretrained('x', use_auth_token='hf_x')\n",
                pins={"transformers": "4.45.0"},
                findings=[
                    (2, 47, "from_pretrained(use_auth_token=...) is deprecated since transformers 4.31.0 (warns in "
                            "4.45.0: \"The `use_auth_token` argument is deprecated and will be removed in v5 of "
                            "Transformers. Please use `token` instead.\"); use token=..."),
                ]),
        # a deprecated attribute, read (torch 2.1+: served by torch.__getattr__ with the warning)
        Example("import torch\n\nUSE_CUDA = torch.has_cuda and torch.cuda.is_available()\n", pins={"torch": "2.4.1"},
                findings=[(3, 12, "torch.has_cuda is deprecated: reading it warns in torch 2.4.1: \"'has_cuda' is "
                                  "deprecated, please use 'torch.backends.cuda.is_built()'\"")]),
    ]

    def __init__(self, matrix) -> None:
        super().__init__(matrix)
        self.calls = matrix.section("deprecations.toml", "call")
        self.read = matrix.section("te_deprecations.toml", "call")  # per release, from the source
        self.keywords = matrix.section("deprecations.toml", "keyword")
        self._kw_tails = {t for e in self.keywords.values() for t in e["calls"]}
        self.tk = tk.Table(matrix)  # from_pretrained keywords per transformers release

    def check_call(self, site, qualname: str, fc) -> list[Finding]:
        out: list[Finding] = []
        if qualname:
            out += self._call(site, qualname, fc)
        if self._kw_tails and _tail(site.node.func) in self._kw_tails and site.kw:  # the arguments last: splats cost
            out += self._keywords(site, qualname, fc)
        if _tail(site.node.func) == "from_pretrained" and qualname.startswith("transformers.") \
                and (site.kw or site.has_star):
            out += self._read_keywords(site, qualname, fc)
        return out

    def check_attribute(self, node: cst.Attribute, qualname: str, fc) -> list[Finding]:
        """A read of a deprecated attribute (kind ``a``: a value, not a function) warns."""
        got = q.member(fc, qualname)
        if got is None:
            return []
        scope, module, name, m = got
        package = scope.package
        deps = m.deprecations(name) if m is not None else []
        if not deps:
            return []
        kinds = {i: k for rng, k, _ in m.entries(name) or () for i in rng}  # type: ignore[union-attr]
        hits = [(rng & set(scope.indices), text) for rng, text in deps
                if not _condition(text)[0] and all(kinds.get(i) == "a" for i in rng)]
        hits = [h for h in hits if h[0]]
        if not hits:
            return []
        rng = frozenset().union(*(h[0] for h in hits))
        # no "since": a release read statically may warn too without the table knowing it (torch 2.1.0)
        msg = f"{qualname} is deprecated: reading it warns in {package} {scope.label(rng)}: \"{_short(hits[-1][1])}\""
        return [Finding(node, msg, extra_targets=scope.targets(rng), severity="warning")]

    def check_decorator(self, node: cst.Decorator, fc) -> list[Finding]:
        """A bare ``@torch.cuda.amp.custom_fwd``: Python calls the deprecated function with the
        decorated one, so it warns as the called form does; reported at the decorator (no fix)."""
        qualname = fc.resolve(node.decorator)
        if not qualname:
            return []
        site = CallSite(cst.Call(func=node.decorator), [], {}, False)
        return self._call(site, qualname, fc, at=node.decorator)

    # -- deprecated functions and classes --------------------------------------------
    def _call(self, site, qualname: str, fc, at: cst.CSTNode | None = None) -> list[Finding]:
        """``at``: where a use that is not a call (a bare decorator) is reported."""
        curated = self.calls.get(qualname)
        package = fc.matrix.api_package(qualname)
        if qualname in self.read:
            return self._read_call(site, qualname, self.read[qualname], fc, at)
        if curated and "since" in curated:
            return self._curated_call(site, qualname, curated, fc, at)
        if package is None:
            return []
        scope = q.scope(fc, package)
        where = q.split(scope.api, qualname) if scope else None
        if where is None or len(where[1]) != 1:
            return []
        module, (name,) = where
        assert scope is not None  # ``where`` is None when it is
        m = scope.api.module(module)
        hits = []
        for rng, text in (m.deprecations(name) if m else []):
            cond, text = _condition(text)
            if rng & set(scope.indices) and self._matches(site, cond, scope, qualname, fc):
                hits.append((rng & set(scope.indices), text, cond))
        if not hits:
            return []
        assert m is not None  # the hits come from it
        api = scope.api
        rng, warning, cond = hits[-1]
        since = min(r for r_set, _ in m.deprecations(name) for r in r_set)
        instead = curated["replacement"] if curated else None
        called = f"{qualname}({', '.join(k + '=' + '|'.join(map(repr, v)) for k, v in cond)})" if cond else qualname
        msg = (f"{called} is deprecated since {package} {api.labels[since]} (warns in {api.label(rng)}: "
               f"\"{_short(warning)}\")")
        if instead:
            msg += f"; use {instead}"
        fix = self._fix(site, qualname, curated, scope, fc) if curated and at is None else None
        return [Finding(at or site.node, msg, extra_targets=scope.targets(rng), severity="warning", fix=fix)]

    def _read_call(self, site, qualname: str, e: dict, fc, at=None) -> list[Finding]:
        """A deprecation read from the package's source: it warns in exactly the releases
        listed; a release not listed was read without the warning, or not read at all."""
        package = e["package"]
        warns = sorted(Version(v) for v in e["releases"])
        known = fc.matrix.releases(package)
        releases = q.releases_in_scope(fc, package)
        if releases:
            hit = [v for v in releases if v in warns]
        else:  # unpinned: judged as the newest release
            hit = warns if known and known[-1] in warns else []
        # not where a guard rules the call out (the fallback of `if hasattr(te, "autocast"):`)
        hit = [v for v in hit if q.runs_with_release(fc, package, v)] if package != q.WORLD_PACKAGE else hit
        if not hit:
            return []
        # The oldest release the table knows already warns: when it began is not known.
        when = f"in {package} {warns[0]}" if known and warns[0] == known[0] else f"since {package} {warns[0]}"
        msg = f"{qualname} is deprecated {when} (warns in {package} {q.span(hit)}: \"{_short(e['message'])}\")"
        if "replacement" in e:
            msg += f"; use {e['replacement']}"
        return [Finding(at or site.node, msg, extra_targets=tuple(f"{package}=={v}" for v in hit),
                        severity="warning")]

    def _curated_call(self, site, qualname: str, e: dict, fc, at=None) -> list[Finding]:
        package = e.get("package", qualname.split(".")[0])
        releases = q.releases_in_scope(fc, package)
        since = Version(e["since"])
        removed = Version(e["removed"]) if "removed" in e else None
        hit = [v for v in releases if v >= since and (removed is None or v < removed)] if releases else []
        if releases and not hit:
            return []
        if not releases and removed is not None:
            return []  # unpinned: the newest release no longer has it (AIC201 says so)
        label = f"{package} {q.span(hit)}" if hit else f"{package} >= {since}"
        msg = f"{qualname} is deprecated since {package} {since} (warns in {label}: \"{_short(e['message'])}\")"
        msg += f"; use {e['replacement']}"
        return [Finding(at or site.node, msg,
                        extra_targets=tuple(f"{package}=={v}" for v in hit) or (f"{package}>={since}",),
                        severity="warning")]

    # -- deprecated keywords ---------------------------------------------------------------
    def _keywords(self, site, qualname: str, fc) -> list[Finding]:
        tail = _tail(site.node.func)
        out = []
        for kw, value in site.kw.items():
            e = self.keywords.get(kw)
            if e is None or tail not in e["calls"]:
                continue
            read = self.tk.keywords.get(kw) if tail == "from_pretrained" else None
            if read is not None and read.warns:
                continue  # the releases' own warning, read from their source (_read_keywords)
            package = e["package"]
            if not (qualname or "").startswith(package.replace("-", "_") + "."):
                continue
            releases = q.releases_in_scope(fc, package)
            since = Version(e["since"])
            removed = Version(e["removed"]) if "removed" in e else None
            if releases:
                hit = [v for v in releases if v >= since and (removed is None or v < removed)]
                if not hit:
                    continue  # not yet deprecated, or no longer read (AIC202 says what happens then)
                label = q.span(hit)
            elif removed is not None:
                continue  # unpinned: the newest release no longer reads it
            else:
                hit, label = [], f">= {since}"
            gone = f"; no longer handled from {removed}" if removed else ""
            msg = (f"{tail}({kw}=...) is deprecated since {package} {since}{gone} (warns: \"{_short(e['message'])}\"); "
                   f"use {e['replacement']}")
            arg = next((a for a in site.node.args if a.keyword is not None and a.keyword.value == kw), None)
            # A keyword spliced in from ``**kwargs`` is reported at the splat (the engine maps the
            # value back to it) and has no rename fix: the keyword is not written at the call.
            fix = self._keyword_fix(arg, value, e, fc, site) if arg is not None else None
            out.append(Finding(arg if arg is not None else value, msg,
                               extra_targets=tuple(f"{package}=={v}" for v in hit) or (f"{package} {label}",),
                               severity="warning", fix=fix))
        return out

    def _read_keywords(self, site, qualname: str, fc) -> list[Finding]:
        """``from_pretrained(use_auth_token=...)`` where the release warns the keyword is deprecated
        (version_matrix/transformers_kwargs.toml, read from each release's source)."""
        out = []
        got = None
        for name, value in tk.passed(site, fc).items():
            kw = self.tk.keywords.get(name)
            if kw is None or not kw.warns or tk.receiver(qualname, kw) is None or not tk.fires(kw, value):
                continue
            got = got or self.tk.judged(fc, self.notes)
            if got is None:
                return []
            hit = [i for i in got[0] if i in kw.warns]
            if not hit:
                continue
            since = self.tk.labels[min(kw.warns)]
            msg = (f"from_pretrained({name}=...) is deprecated since transformers {since} (warns in "
                   f"{self.tk.label(hit)}: \"{_short(kw.warning)}\"); use {kw.replacement}")
            if not got[1]:
                msg += f"; transformers unpinned: judged on the newest release {self.tk.labels[-1]}"
            node = tk.at(site, name)
            fix = None
            if isinstance(node, cst.Arg) and kw.fix and value is not None:
                fix = tk.keyword_fix(node, value, kw.fix, kw.fix_value, fc, site)
            out.append(Finding(node, msg, extra_targets=tuple(f"transformers=={self.tk.labels[i]}" for i in hit),
                               severity="warning", fix=fix))
        return out

    def _keyword_fix(self, arg: cst.Arg, value, e: dict, fc, site) -> str | None:
        return tk.keyword_fix(arg, value, e.get("fix", ""), e.get("value"), fc, site)

    # -- --fix for calls ---------------------------------------------------------------------
    def _fix(self, site, qualname: str, e: dict, scope: q.Scope, fc) -> str | None:
        kind, target = e.get("fix"), e.get("target")
        if not kind or not target:
            return None
        where = q.split(scope.api, target)
        if where is None or len(where[1]) != 1:
            return None
        if q.presence(scope.api, where[0], where[1][0], scope.indices).lack:
            return None  # the replacement is missing in a release in scope
        root = _root_name(site.node.func, qualname, fc)
        code = fc.module.code_for_node(site.node)
        if root is None or "#" in code or site.has_star:
            return None
        func = root + target[len(qualname.split(".")[0]):]
        args = [fc.module.code_for_node(a.value) for a in site.node.args if a.keyword is None]
        kws = [(a.keyword.value, fc.module.code_for_node(a.value)) for a in site.node.args if a.keyword is not None]
        if kind.startswith("device-first:"):
            old = self._old_params(scope, qualname)
            if old is None or len(args) > len(old):
                return None
            kws = list(zip(old, args)) + kws
            parts = [f'"{kind.split(":", 1)[1]}"'] + [f"{k}={v}" for k, v in kws]
        elif kind == "sdpa-backends":
            if args:
                return None
            on = dict.fromkeys(_SDPA_FLAGS.values(), True)
            for k, v in kws:
                if k not in _SDPA_FLAGS or v not in ("True", "False"):
                    return None
                on[_SDPA_FLAGS[k]] = v == "True"
            backend = f"{root}.nn.attention.SDPBackend"
            parts = ["[" + ", ".join(f"{backend}.{b}" for b, enabled in on.items() if enabled) + "]"]
        elif kind == "rename":
            parts = args + [f"{k}={v}" for k, v in kws]
        else:
            return None
        return f"{func}({', '.join(parts)})"

    def _matches(self, site, cond, scope: q.Scope, qualname: str, fc) -> bool:
        """Does the call pass every ``param=value`` of a conditional deprecation (an
        ``@overload`` marked ``@deprecated``) with a value it lists? An omitted or
        unknown argument does not match: the warning is not claimed."""
        if not cond:
            return True
        args = [a.value for a in site.node.args if a.keyword is None and not a.star]
        for param, values in cond:
            expr = site.kw.get(param)
            if expr is None:
                at = _position(scope, qualname, param)
                if at is None or at >= len(args):
                    return False
                expr = args[at]
            v = fc.value_everywhere(expr)
            if isinstance(v, bool) != any(isinstance(x, bool) for x in values) or v not in values:
                return False
        return True

    @staticmethod
    def _old_params(scope: q.Scope, qualname: str) -> list[str] | None:
        """Positional parameter names of the deprecated callable, the same in every release in scope."""
        # Asked only of a qualname that check_call split, in a module the API has.
        module, (name,) = cast("tuple[str, list[str]]", q.split(scope.api, qualname))
        names = None
        for rng, _, sigs in cast("ModuleApi", scope.api.module(module)).entries(name) or ():
            if not rng & set(scope.indices):
                continue
            if not sigs or len(sigs) != 1:
                return None
            pos = [p.name for p in sigs[0].params if p.kind in ("pos", "posonly")]
            if names is not None and pos != names:
                return None
            names = pos
        return names


def _root_name(func: cst.BaseExpression, qualname: str, fc) -> str | None:
    """The name the call is written through when it is the package root (``torch``), else None."""
    node = func
    depth = 0
    while isinstance(node, cst.Attribute):
        node = node.value
        depth += 1
    if not isinstance(node, cst.Name) or depth != qualname.count("."):
        return None
    binding = fc.lookup(node.value)
    if isinstance(binding, Qual) and binding.name == qualname.split(".")[0]:
        return node.value
    return None






def _position(scope: q.Scope, qualname: str, param: str) -> int | None:
    """Where ``param`` sits among the positional parameters, the same in every signature in scope."""
    # Asked only of a qualname that check_call split, in a module the API has.
    module, (name,) = cast("tuple[str, list[str]]", q.split(scope.api, qualname))
    found = set()
    for rng, _, sigs in cast("ModuleApi", scope.api.module(module)).entries(name) or ():
        if rng & set(scope.indices):
            for sig in sigs or ():
                pos = [p.name for p in sig.params if p.kind in ("pos", "posonly")]
                found.add(pos.index(param) if param in pos else None)
    return found.pop() if len(found) == 1 else None


def _condition(text: str) -> tuple[tuple, str]:
    """``[return_lse=True] msg`` -> ((("return_lse", (True,)),), msg); no condition -> ((), text)."""
    if not text.startswith("[") or "] " not in text:
        return (), text
    head, msg = text[1:].split("] ", 1)
    cond = []
    for part in head.split():
        param, _, values = part.partition("=")
        cond.append((param, tuple(_constant(v) for v in values.split("|"))))
    return tuple(cond), msg


def _constant(word: str):
    try:
        return ast.literal_eval(word)
    except (ValueError, SyntaxError):
        return word


def _short(text: str, limit: int = 160) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _tail(func) -> str | None:
    """The called name: ``f`` of ``f(...)`` and ``x.f(...)``."""
    return func.attr.value if isinstance(func, cst.Attribute) else func.value if isinstance(func, cst.Name) else None
