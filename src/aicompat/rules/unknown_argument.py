"""AIC202 unknown-argument: a call that binds to no signature the releases in
scope have: a keyword the function never took (or not yet, or no longer), a
required argument left out, too many positionals (facts: the signatures in
version_matrix/api/, overloads unioned; hints in version_matrix/api_hints.toml).

A function with ``**kwargs`` takes any keyword; a call passing ``*args`` or
``**kwargs`` is judged only on what it spells out and the keys the value model
knows the dict has (each dict it may be, in turn); a name whose signature the
table does not know (a C builtin without a stub, a dataclass) is left alone.
"""

from __future__ import annotations

import difflib
import re
from fnmatch import fnmatchcase
from typing import cast

import libcst as cst
from packaging.specifiers import SpecifierSet
from packaging.version import Version

from ..core.ruleapi import DictValue, Example, Finding, Rule, options
from ..core.ruleapi import api_query as q
from ._shared import transformers_kwargs as tk
from .model_attn_support import ModelAttnSupport

_TRITON_SOFTMAX = ("import triton\nimport triton.language as tl\n\n\n@triton.jit\n"
                   "def softmax(out_ptr, in_ptr, n, BLOCK: tl.constexpr):\n"
                   "    row = tl.program_id({pid})\n    cols = tl.arange(0, BLOCK)\n"
                   "    x = tl.load(in_ptr + row * n + cols, mask=cols < n, other=0.0, {cache})\n"
                   "    den = tl.sum(tl.exp(x), axis=0, {keep})\n"
                   "    tl.store(out_ptr + row * n + cols, tl.exp(x) / den, mask=cols < n)\n")


class UnknownArgument(Rule):
    code = "AIC202"
    worlds_monotone = True
    name = "unknown-argument"
    tokens = (b"import torch", b"from torch", b"flash_attn", b"attn_implementation", b"from_pretrained",
              b"transformer_engine", b"import triton", b"from triton")
    call_tails = frozenset({"*"})

    VALID = [
        Example("from flash_attn import flash_attn_func\nout = flash_attn_func(q, k, v, dropout_p=0.0, causal=True)\n",
                pins={"flash-attn": "2.6.3"}),
        Example("import torch\nwith torch.amp.autocast('cuda', dtype=torch.bfloat16):\n    y = m(x)\n"),
        # vLLM 0.33.0 gemma3n.py: finfo() is the default dtype's (its C parser's no-argument form)
        Example("import torch\n\nEPS = torch.tensor(torch.finfo().min)\n"),
        Example("import torch.nn.functional as F\ny = F.scaled_dot_product_attention(q, k, v, enable_gqa=True)\n",
                pins={"torch": "2.5.1"}),
        Example("import torch\nopts = dict(dim=-1)\ny = torch.softmax(x, **opts)\n"),
        Example("import torch\ny = torch.sum(x, dim=1, keepdim=True)\nz = torch.sum(x)\n"),
        Example("import torch\nlin = torch.nn.Linear(4, 8, bias=False, device='cuda')\n", pins={"torch": "2.4.0"}),
        Example("from transformers import AutoModelForCausalLM\n"
                "m = AutoModelForCausalLM.from_pretrained('x', attn_implementation='flash_attention_3')\n",
                pins={"transformers": "4.57.1"}),
        Example("from transformers import AutoModel\n"
                "m = AutoModel.from_pretrained('x', attn_implementation='kernels-community/flash-attn2')\n",
                pins={"transformers": ">=4.54,<4.58"}),
        Example("from transformers import AutoModelForCausalLM, BitsAndBytesConfig\n"
                "m = AutoModelForCausalLM.from_pretrained('x', quantization_config=BitsAndBytesConfig(load_in_8bit=True))\n",
                pins={"transformers": "5.0.0"}),
        # the twin of the model-class finding below: Mistral declares sdpa from 4.37.0
        Example("from transformers import LlamaForCausalLM, MistralForCausalLM\n\n"
                "MODELS = {\"llama\": LlamaForCausalLM, \"mistral\": MistralForCausalLM}\n\n\n"
                "def load(kind, path, attn=\"sdpa\"):\n"
                "    return MODELS[kind].from_pretrained(path, attn_implementation=attn)\n\n\n"
                "model = load(\"mistral\", \"mistralai/Mistral-7B-v0.1\")\n",
                pins={"transformers": "4.37.0"}),
        # Transformer Engine: a recipe's dataclass fields are its keywords (the twin of the finding below)
        Example("from transformer_engine.common.recipe import DelayedScaling, Format\n"
                "r = DelayedScaling(fp8_format=Format.HYBRID, amax_history_len=16, amax_compute_algo=\"max\")\n",
                pins={"transformer-engine": "2.4.0"}),
        Example("import torch\nimport transformer_engine.pytorch as te\n"
                "proj = te.Linear(1024, 1024, bias=True, params_dtype=torch.bfloat16)\n",
                pins={"transformer-engine": "2.4.0"}),
    ]
    VALID += [
        Example(_TRITON_SOFTMAX.format(pid="axis=0", cache='cache_modifier=".ca"', keep="keep_dims=True")),
    ]
    INVALID = [
        # torch's keyword names in a Triton kernel (the newest triton judged: no pin)
        Example(_TRITON_SOFTMAX.format(pid="dim=0", cache='cache="evict_last"', keep="keepdim=True"),
                findings=[
                    (7, 11, "triton.language.program_id: no triton release (2.0.0–3.9.0) accepts keyword 'dim'; "
                            "did you mean 'axis'?"),
                    (9, 9, "triton.language.load: no triton release (2.0.0–3.9.0) accepts keyword 'cache'; did "
                           "you mean 'cache_modifier'?"),
                    (10, 11, "triton.language.sum: no triton release (2.0.0–3.9.0) accepts keyword 'keepdim'; did "
                             "you mean 'keep_dims'?"),
                ]),
        Example("from flash_attn import flash_attn_func\nout = flash_attn_func(q, k, v, qk_headdim=128, v_headdim=64)\n",
                pins={"flash-attn": "2.6.3"},
                findings=[
                    (2, 7, "flash_attn.flash_attn_func: no flash-attn release (2.0.0.post1–2.8.3.post2) accepts "
                           "keyword 'qk_headdim'; head dims come from the tensor shapes: q, k (batch, seqlen, "
                           "nheads, headdim) and v (batch, seqlen, nheads_k, headdim_v); also 'v_headdim' (no "
                           "release accepts it)"),
                ]),
        Example("import torch.nn.functional as F\ny = F.scaled_dot_product_attention(q, k, v, enable_flash=True)\n",
                findings=[
                    (2, 5, "torch.nn.functional.scaled_dot_product_attention: no torch release (2.0.0–2.15.0) "
                           "accepts keyword 'enable_flash'; SDPA takes no backend switches; choose kernels with "
                           "`with torch.nn.attention.sdpa_kernel(SDPBackend.FLASH_ATTENTION):` (torch >= 2.3) or "
                           "torch.backends.cuda.sdp_kernel(enable_flash=True) before 2.3"),
                ]),
        Example("import torch\nwith torch.amp.autocast(enabled=False):\n    y = m(x)\n",
                findings=[
                    (2, 6, "torch.amp.autocast: missing required argument 'device_type' in torch 2.15.0 (torch "
                           "unpinned: judged on the newest release 2.15.0); pass the device type first: "
                           'torch.amp.autocast("cuda", ...)'),
                ]),
        Example("import torch.nn.functional as F\ny = F.scaled_dot_product_attention(q, k, v, enable_gqa=True)\n",
                pins={"torch": ">=2.3,<2.6"},
                findings=[
                    (2, 5, "torch.nn.functional.scaled_dot_product_attention: keyword 'enable_gqa' is not accepted "
                           "by torch 2.3.0–2.4.1 (accepted in torch 2.5.0–2.15.0); pins allow torch 2.3.0–2.5.1"),
                ]),
        Example("import torch\nlin = torch.nn.Linear(4, 8, True, 'cuda', torch.float16, 3)\n",
                findings=[
                    (2, 7, "torch.nn.Linear: takes at most 5 positional arguments, 6 given in torch 2.15.0 (torch "
                           "unpinned: judged on the newest release 2.15.0)"),
                ]),
        Example("from transformers import AutoModelForCausalLM\n"
                "m = AutoModelForCausalLM.from_pretrained('x', attn_implementation='flash_attention_3')\n",
                pins={"transformers": "4.45.0"},
                findings=[
                    (2, 47, "AutoModelForCausalLM.from_pretrained: attn_implementation='flash_attention_3' is not "
                            "accepted by transformers 4.45.0 (accepted from 4.53.0 on); 4.45.0 takes 'eager', "
                            "'flash_attention_2', 'sdpa'"),
                ]),
        Example("from transformers import AutoModel\nm = AutoModel.from_pretrained('x', attn_implementation='flash2')\n",
                pins={"transformers": "4.57.1"},
                findings=[
                    (2, 36, "AutoModel.from_pretrained: attn_implementation='flash2' is not a value any "
                            "transformers release accepts (an implementation name or a Hub kernel 'org/repo')"),
                ]),
        Example("from transformers import AutoModelForCausalLM\n"
                "m = AutoModelForCausalLM.from_pretrained('x', load_in_8bit=True)\n",
                pins={"transformers": "5.0.0"},
                findings=[
                    (2, 47, "AutoModelForCausalLM.from_pretrained: transformers 5.0.0 does not read load_in_8bit (read "
                            "in 4.30.0–4.57.6): it is handed to the model class, whose __init__ raises TypeError "
                            "(unexpected keyword argument 'load_in_8bit'); use "
                            "quantization_config=BitsAndBytesConfig(load_in_8bit=True)"),
                ]),
        # a model class that does not declare the implementation in the pinned release
        Example("from transformers import LlamaForCausalLM, MistralForCausalLM\n\n"
                "MODELS = {\"llama\": LlamaForCausalLM, \"mistral\": MistralForCausalLM}\n\n\n"
                "def load(kind, path, attn=\"sdpa\"):\n"
                "    return MODELS[kind].from_pretrained(path, attn_implementation=attn)\n\n\n"
                "model = load(\"mistral\", \"mistralai/Mistral-7B-v0.1\")\n",
                pins={"transformers": "4.36.2"},
                findings=[
                    (7, 47, "MistralForCausalLM.from_pretrained: attn_implementation=\"sdpa\" raises ValueError in "
                            "transformers 4.36.2: \"MistralForCausalLM does not support an attention implementation "
                            "through torch.nn.functional.scaled_dot_product_attention yet.\" (pins allow transformers "
                            "4.36.2); use transformers>=4.37.0 (where MistralForCausalLM declares sdpa), or "
                            "attn_implementation=\"eager\" or \"flash_attention_2\""),
                ]),
        # TE removed DelayedScaling's `interval` in 2.2; its recipes are pydantic dataclasses
        Example("from transformer_engine.common.recipe import DelayedScaling, Format\n"
                "r = DelayedScaling(fp8_format=Format.HYBRID, amax_history_len=16, interval=1)\n",
                pins={"transformer-engine": "2.4.0"},
                findings=[
                    (2, 5, "transformer_engine.common.recipe.DelayedScaling: keyword 'interval' is not accepted by "
                           "transformer-engine 2.4.0 (accepted in transformer-engine 1.9.0–2.1.0); pins allow "
                           "transformer-engine 2.4.0; a pydantic dataclass: pydantic >= 1.10 drops a keyword that "
                           "names no field without a word (the setting has no effect), pydantic < 1.10 raises "
                           "TypeError; the releases that took it warned it was \"deprecated and unused\": drop it"),
                ]),
    ]

    def __init__(self, matrix) -> None:
        super().__init__(matrix)
        self.hints = matrix.section("api_hints.toml", "keyword")
        self.aliases = {pkg: e["names"] for pkg, e in matrix.section("api_hints.toml", "alias").items()}
        # another library's spelling of a keyword the package spells its own way (torch's dim=, triton's axis=)
        self.synonyms = {pkg: e["names"] for pkg, e in matrix.section("api_hints.toml", "synonym").items()}
        # what a class whose __init__ a decorator wrote (a pydantic dataclass) does with an unknown keyword
        self.generated = matrix.section("api_hints.toml", "generated_init")
        # signatures a C-implemented callable accepts at run time that the release's stubs omit
        self.no_args = {name: SpecifierSet(e["releases"])
                        for name, e in matrix.section("api_hints.toml", "no_argument_call").items()}
        self.tk = tk.Table(matrix)
        # an attention implementation the named model class does not declare in the release
        self.model_attn = ModelAttnSupport(matrix)

    def check_call(self, site, qualname: str, fc) -> list[Finding]:
        if qualname.startswith("transformers."):
            refused: list[Finding] = []
            out: list[Finding] = []
            if "TypeError" not in fc.ctx.catches and "Exception" not in fc.ctx.catches:
                refused = self._attn_implementation(site, qualname, fc) if "attn_implementation" in site.kw else []
                if qualname.endswith(".from_pretrained") and (site.kw or site.has_star):
                    out = self._unread(site, qualname, fc)
            # a value the release refuses outright is said once; else one the model class does not declare
            return refused + out if refused else out + self.model_attn.check(site, qualname, fc, self.notes)
        if not qualname:  # ``MODELS[kind].from_pretrained(...)``: the value model may name the class
            found = self.model_attn.check(site, qualname, fc, self.notes)
            if found:
                return found
        if qualname and "TypeError" not in fc.ctx.catches and "Exception" not in fc.ctx.catches:
            own = self._own_function(site, qualname, fc)
            if own is not None:
                return own
        package = fc.matrix.api_package(qualname) if qualname else None
        if package is None or "TypeError" in fc.ctx.catches or "Exception" in fc.ctx.catches:
            return []
        scope = q.scope(fc, package)
        where = q.split(scope.api, qualname) if scope else None
        if where is None or len(where[1]) != 1:
            return []
        module, (name,) = where
        assert scope is not None  # ``where`` is None when it is
        q.unpinned_note(scope, self.notes)
        api = scope.api
        m = api.module(module)
        entries = m.entries(name) if m else None
        if not entries:
            return []
        star = any(a.star == "*" for a in site.node.args)
        dstar = any(a.star == "**" for a in site.node.args)
        passed = self._keyword_sets(site, fc, package, api)
        failures: dict[q.Problem, list[int]] = {}
        aliases = self.aliases.get(package, {})
        for i in scope.indices:
            kind, sigs = next(((k, s) for rng, k, s in entries if i in rng and k in ("f", "b", "c")), (None, None))
            if not sigs:
                continue  # absent (AIC201) or shape unknown
            if not site.pos and not site.kw and not star and not dstar \
                    and api.releases[i] in self.no_args.get(f"{module}.{name}", ()):
                continue  # ``torch.finfo()``: its argument parser's no-argument form
            problems: list[q.Problem | None] = []
            for keywords in passed.get(i, passed.get(None, [list(site.kw)])):
                problems = []
                for s in sigs:
                    kws = keywords
                    if kind == "b" and aliases:  # C argument parsing also takes NumPy names (axis=, keepdims=)
                        names = {p.name for p in s.params}
                        kws = [aliases[k] if k not in names and aliases.get(k) in names else k for k in keywords]
                    problems.append(q.bind(s.params, len(site.pos), kws, star, dstar))
                if all(problems):
                    break  # one way the call may be made fails in this release
            if problems and all(problems):
                # Report what the closest signature objects to, not "too many positionals" for an overload.
                best = min(cast("list[q.Problem]", problems), key=lambda p: p.kind == "positional")  # all(problems)
                failures.setdefault(best, []).append(i)
        if not failures:
            return []
        problem, failing = max(failures.items(), key=lambda kv: len(kv[1]))
        full = f"{module}.{name}"
        msg = self._message(full, problem, failing, scope, module, name, tuple(site.kw))
        return [Finding(site.node, msg, extra_targets=scope.targets(failing))]

    def _own_function(self, site, qualname: str, fc) -> list[Finding] | None:
        """A call of a plain function the project itself defines (followed by the value model,
        model/project.py): its own ``def`` is the signature, the same on every target. None:
        not such a call (a method, a class, a decorated function: a wrapper may take anything)."""
        if not fc.path or fc.path.startswith("<") or "." not in qualname:
            return None
        found = fc.project.find(fc.path, qualname, signature=True)
        if found is None or len(found[1]) != 1:
            return None
        env, (name,) = found
        fn = env.lookup(name)
        if not isinstance(fn, cst.FunctionDef) or fn.decorators or fn.asynchronous:
            return None
        star = any(a.star == "*" for a in site.node.args)
        dstar = any(a.star == "**" for a in site.node.args)
        explicit = [a.keyword.value for a in site.node.args if a.keyword is not None]
        params = _def_params(fn)
        problem = q.bind(params, len([a for a in site.node.args if not a.star and a.keyword is None]),
                         explicit, star, dstar)
        if problem is None or problem.kind != "keyword" or not problem.detail.startswith("unexpected"):
            return []  # only a keyword the def never takes is certain (positions and splats may vary)
        taken = [p.name for p in params if p.kind in ("pos", "kwonly")]
        others = [k for k in explicit if k != problem.name and k not in taken]
        also = f"; also {', '.join(repr(k) for k in others)}" if others else ""
        # the same words in another order first (descale_q -> q_descale), else the closest spelling
        same = [t for t in taken if sorted(t.split("_")) == sorted(problem.name.split("_"))]
        near = same or difflib.get_close_matches(problem.name, taken, n=1, cutoff=0.6)
        use = f"did you mean '{near[0]}'?" if near else "remove it"
        where = fc.project.locate(fn)
        msg = (f"{qualname}: keyword '{problem.name}' is not a parameter of the project's own {name}()"
               f"{f' (line {where})' if where else ''}{also}: TypeError on every target; {use}")
        return [Finding(site.node, msg)]

    def _keyword_sets(self, site, fc, package: str, api) -> dict:
        """The keyword lists the call may pass, by release index (None: every release).

        A ``**`` argument the engine could not splice (a dict that differs by branch:
        ``kw["enable_gqa"] = True`` under an ``if``) passes the keys of each dict the
        value model says it may be; torch's releases are read in their own worlds, so
        a dict built under a version guard is judged only where the guard holds."""
        splats = [a.value for a in site.node.args if a.star == "**"]
        if not site.has_star or not splats:
            return {None: [list(site.kw)]}
        out: dict = {}
        scenarios = fc.scenarios()
        for w in fc.ctx.worlds:
            i = api.index_of(w.torch) if package == "torch" and w.torch is not None else None
            sets = out.setdefault(i, [])
            for _call, bindings in scenarios:
                combos = [list(site.kw)]
                for expr in splats:
                    dicts = [v for v in options(fc.value_of(expr, w, bindings)) if isinstance(v, DictValue)]
                    keys = [[k for k, _ in d.items if isinstance(k, str)] for d in dicts] or [[]]
                    combos = [c + [k for k in ks if k not in c] for c in combos for ks in keys][:16]
                for c in combos:
                    if c not in sets:
                        sets.append(c)
        return out

    def _message(self, full: str, problem: q.Problem, failing: list[int], scope: q.Scope, module: str, name: str,
                 keywords: tuple[str, ...] = ()) -> str:
        api, package = scope.api, scope.package
        every = f"{api.labels[0]}–{api.labels[-1]}"
        hint = self.hints.get(f"{full}:{problem.name}", {}).get("hint")
        also = ""
        if problem.kind == "keyword" and problem.detail.startswith("unexpected"):
            # the call's other keywords those releases do not take either: each is the same fault
            more = []
            for k in keywords:
                taken = q.accepts_keyword(api, module, name, k)
                if k != problem.name and set(failing) - taken:
                    more.append(f"'{k}' (accepted in {package} {api.label(taken)})" if taken else
                                f"'{k}' (no release accepts it)")
            also = f"; also {', '.join(more)}" if more else ""
            accepted = q.accepts_keyword(api, module, name, problem.name)
            if not accepted:
                msg = f"{full}: no {package} release ({every}) accepts keyword '{problem.name}'"
                if not hint:
                    hint = self._suggest(api, package, module, name, problem.name, failing)
            else:
                msg = (f"{full}: keyword '{problem.name}' is not accepted by {package} {api.label(failing)} "
                       f"(accepted in {package} {api.label(accepted)}); {scope.pin_text()}")
            m = api.module(module)
            generator = m.init_generator(name, failing) if m is not None else None
            if generator in self.generated:
                msg += f"; {self.generated[generator]['unknown_keyword']}"
        else:
            msg = f"{full}: {problem.detail} in {package} {api.label(failing)}"
            if scope.pinned is not True:  # unpinned, or chosen by the torch release that requires it
                msg += f" ({scope.pin_text()})"
        return (f"{msg}; {hint}" if hint else msg) + also

    def _attn_implementation(self, site, qualname: str, fc) -> list[Finding]:
        """``from_pretrained(..., attn_implementation="flash_attention_3")`` on a transformers that lacks it."""
        table = fc.matrix.files.get("transformers_attn.toml", {})
        kw = table["keyword"]["attn_implementation"]
        parts = qualname.split(".")
        if parts[-1] not in kw["calls"] or not any(fnmatchcase(parts[-2], pat) for pat in kw["receivers"]):
            return []
        releases = sorted(fc.target.releases.get("transformers") or [])
        if not releases:
            return []  # unpinned: the newest release, which takes every value recorded here
        value = site.kw["attn_implementation"]
        # The keyword argument, or the ``**kwargs`` splat that passes it.
        node = next((a for a in site.node.args if a.keyword is not None and a.keyword.value == "attn_implementation"),
                    value)
        kw_added = Version(kw["added"])
        call = f"{parts[-2]}.{parts[-1]}"
        too_old = [v for v in releases if v < kw_added]
        if too_old:
            return [Finding(node, f"{call}: transformers {q.span(too_old)} has no attn_implementation keyword "
                                  f"(accepted from {kw_added}); the pins allow {q.span(releases)}",
                            extra_targets=tuple(f"transformers=={v}" for v in too_old))]
        for text in self._texts(value, fc):
            found = self._judge_attn(text, node, call, releases, table)
            if found:
                return found
        return []

    @staticmethod
    def _texts(value, fc) -> list[str]:
        """The strings the keyword may pass: a literal, else what the value model gives it on
        any path (``CFG["attn_implementation"]`` of a module-level dict, a default parameter)."""
        if isinstance(value, cst.SimpleString) and value.prefix == "":
            text = value.evaluated_value
            return [text] if isinstance(text, str) else []
        out: list[str] = []
        for v in fc.eval_in(value, may=True).values():
            out += [o for o in options(v) if isinstance(o, str) and o not in out]
        return out

    def _judge_attn(self, text: str, node, call: str, releases, table) -> list[Finding]:
        entry = table.get("value", {}).get(text)
        if entry is not None:
            lo, hi = Version(entry["added"]), Version(entry["removed"]) if "removed" in entry else None
        else:
            kinds = [e for e in table.get("kernel", {}).values() if re.match(e["pattern"], text)]
            if not kinds:
                known = sorted(table.get("value", {}))
                near = difflib.get_close_matches(text, known, n=1, cutoff=0.6)
                hint = f"; did you mean {near[0]!r}?" if near else ""
                return [Finding(node, f"{call}: attn_implementation={text!r} is not a value any transformers release "
                                      f"accepts (an implementation name or a Hub kernel 'org/repo'){hint}",
                                extra_targets=tuple(f"transformers=={v}" for v in releases))]
            lo, hi = min(Version(e["added"]) for e in kinds), None
        failing = [v for v in releases if v < lo or (hi is not None and v >= hi)]
        if not failing:
            return []
        valid = sorted(n for n, e in table.get("value", {}).items()
                       if Version(e["added"]) <= failing[0] and ("removed" not in e or failing[0] < Version(e["removed"])))
        span = f"{lo}" + (f" to {hi} (removed)" if hi else " on")
        msg = (f"{call}: attn_implementation={text!r} is not accepted by transformers {q.span(failing)} "
               f"(accepted from {span}); {failing[0]} takes {', '.join(repr(v) for v in valid)}")
        return [Finding(node, msg, extra_targets=tuple(f"transformers=={v}" for v in failing))]

    def _unread(self, site, qualname: str, fc) -> list[Finding]:
        """``from_pretrained(use_auth_token=...)`` on a transformers that no longer reads the keyword:
        it reaches the model class's ``__init__`` (version_matrix/transformers_kwargs.toml)."""
        keywords = tk.passed(site, fc)
        if "trust_remote_code" in keywords and (keywords["trust_remote_code"] is None
                                                or tk.literal(keywords["trust_remote_code"]) is not False):
            return []  # the model class is the checkpoint's own code: what its __init__ takes is unknown
        table = self.tk
        out: list[Finding] = []
        got = None
        for name in keywords:
            kw = table.keywords.get(name)
            cls = tk.receiver(qualname, kw) if kw is not None else None
            if kw is None or cls is None:
                continue
            got = got or table.judged(fc, self.notes)
            if got is None:
                return []
            indices, pinned = got
            lack = [i for i in indices if i not in kw.read and i not in kw.dropped
                    and cls not in table.kwargs_classes.get(table.labels[i], ())]
            if not lack:
                continue
            newest = table.labels[max(lack)]
            # behind an Auto class, the checkpoint picks the class: a few take **kwargs
            others = sorted(table.kwargs_classes.get(newest, ())) if cls.startswith("Auto") else []
            unless = (f", unless it takes **kwargs (in {newest} only {', '.join(others)} "
                      f"{'do' if len(others) > 1 else 'does'})") if others else ""
            read = f"read in {table.label(kw.read)}" if kw.read else "never read"
            pin = "" if pinned else f"; transformers unpinned: judged on the newest release {table.labels[-1]}"
            # not read yet: the fix is the release that reads it; no longer read: its replacement
            early = bool(kw.read) and max(lack) < min(kw.read)
            instead = f"pin transformers>={table.labels[min(kw.read)]}" if early else f"use {kw.replacement}"
            msg = (f"{cls}.from_pretrained: transformers {table.label(lack)} does not read {name} ({read}): it is "
                   f"handed to the model class, whose __init__ raises TypeError (unexpected keyword argument "
                   f"'{name}'){unless}; {instead}{pin}")
            node = tk.at(site, name)
            value = keywords[name]
            fix = tk.keyword_fix(node, value, kw.fix, kw.fix_value, fc, site) \
                if isinstance(node, cst.Arg) and kw.fix and value is not None and not early else None
            out.append(Finding(node, msg, extra_targets=tuple(f"transformers=={table.labels[i]}" for i in lack),
                               fix=fix))
        return out

    def _suggest(self, api, package: str, module: str, name: str, keyword: str, failing: list[int]) -> str | None:
        """``did you mean 'axis'?`` from the parameters of the failing releases; else from those of
        any release, saying which take it (``keep_dims``: triton 3.x only)."""
        near = self._near(api, package, module, name, keyword, set(failing))
        if near:
            return f"did you mean {', '.join(repr(n) for n in near)}?"
        near = self._near(api, package, module, name, keyword, set(range(len(api.releases))))
        if not near:
            return None
        taken = q.accepts_keyword(api, module, name, near[0])
        return f"did you mean {near[0]!r}? ({package} {api.label(taken)} only)"

    def _near(self, api, package: str, module: str, name: str, keyword: str, releases: set[int]) -> list[str]:
        """Parameters of ``module.name`` in ``releases`` that ``keyword`` may mean: the package's
        own spelling of it (api_hints.toml [synonym]), close spellings, and names it begins
        (``cache`` -> ``cache_modifier``)."""
        m = api.module(module)
        params: set[str] = set()
        for rng, _, sigs in m.entries(name) or ():
            if rng & releases:
                for s in sigs or ():
                    params |= {p.name for p in s.params if p.kind in ("pos", "kwonly")}
        out = [p for p in [self.synonyms.get(package, {}).get(keyword)] if p in params]
        out += [p for p in difflib.get_close_matches(keyword, sorted(params), n=2, cutoff=0.6) if p not in out]
        out += [p for p in sorted(params) if p.startswith(keyword + "_") and p not in out]
        return out[:2]


def _def_params(fn: cst.FunctionDef) -> list[q.Param]:
    """A ``def``'s parameters in the signature tables' terms (matrix/api_tables.Param)."""
    ps = fn.params
    out = [q.Param(p.name.value, "posonly", p.default is not None) for p in ps.posonly_params]
    out += [q.Param(p.name.value, "pos", p.default is not None) for p in ps.params]
    if isinstance(ps.star_arg, cst.Param):
        out.append(q.Param(ps.star_arg.name.value, "var", False))
    out += [q.Param(p.name.value, "kwonly", p.default is not None) for p in ps.kwonly_params]
    if ps.star_kwarg is not None:
        out.append(q.Param(ps.star_kwarg.name.value, "varkw", False))
    return out
