"""AIC101 v-headdim-mismatch: attention whose V head dim differs from QK's
where the target cannot run it (facts: version_matrix/attention.toml)."""

from __future__ import annotations

from packaging.specifiers import SpecifierSet
from packaging.version import Version

from ..core.ruleapi import UNKNOWN, Example, Finding, Rule, Tensor, dotted
from ._shared.attention_alias import Aliases, narrowed

FA2 = "from flash_attn import flash_attn_func\n"
FA3 = "from flash_attn_interface import flash_attn_func\n"
SDPA = "import torch\nimport torch.nn.functional as F\nfrom torch.nn.attention import sdpa_kernel, SDPBackend\n"


class VHeadDimMismatch(Rule):
    code = "AIC101"
    name = "v-headdim-mismatch"
    tokens = (b"flash_attn", b"scaled_dot_product_attention", b"attn_implementation")

    VALID = [
        # transformers 5.x pads V for every flash implementation.
        Example("from transformers import DeepseekV3ForCausalLM\n"
                "m = DeepseekV3ForCausalLM.from_pretrained('x', attn_implementation='flash_attention_3')\n",
                gpus=["A100"], pins={"transformers": "5.0.0"}),
        Example("from transformers import DeepseekV3ForCausalLM\n"
                "m = DeepseekV3ForCausalLM.from_pretrained('x', attn_implementation='flash_attention_2')\n",
                gpus=["A100"], pins={"transformers": "4.55.0"}),
        Example(FA2 + "import torch\nq = torch.randn(2, 128, 8, 64)\nk = torch.randn(2, 128, 8, 64)\n"
                "v = torch.randn(2, 128, 8, 64)\nflash_attn_func(q, k, v)\n"),
        # FA3 with an allowed pair on an all-Hopper fleet.
        Example(FA3 + "import torch\nq = torch.randn(1, 64, 16, 192)\nk = torch.randn(1, 64, 16, 192)\n"
                "v = torch.randn(1, 64, 16, 128)\nout = flash_attn_func(q, k, v, causal=True)\n", gpus=["H100", "H200"]),
        # Guarded by an exact Hopper check (major == 9), so Blackwell and Ampere never reach it.
        Example(FA3 + "import torch\n\ndef attn(b, s):\n    q = torch.randn(b, s, 16, 192)\n"
                "    k = torch.randn(b, s, 16, 192)\n    v = torch.randn(b, s, 16, 128)\n"
                "    if torch.cuda.get_device_capability()[0] == 9:\n        return flash_attn_func(q, k, v)\n"
                "    return None\n", gpus=["A100", "H100", "B200"]),
        # A helper predicate and an early return.
        Example(FA3 + "import torch\n\ndef is_hopper():\n    major, minor = torch.cuda.get_device_capability()\n"
                "    return major == 9\n\ndef attn():\n    if not is_hopper():\n        raise RuntimeError('needs H100')\n"
                "    q = torch.randn(1, 8, 4, 192)\n    v = torch.randn(1, 8, 4, 128)\n"
                "    return flash_attn_func(q, q, v)\n", gpus=["A100", "H100"]),
        # try/except fallback catches the RuntimeError.
        Example(FA3 + "import torch\nq = torch.randn(1, 8, 4, 192)\nv = torch.randn(1, 8, 4, 128)\ntry:\n"
                "    out = flash_attn_func(q, q, v)\nexcept RuntimeError:\n    out = None\n", gpus=["A100"]),
        # Unforced SDPA falls back to the memory-efficient or math backend.
        Example(SDPA + "q = torch.randn(2, 8, 128, 192)\nv = torch.randn(2, 8, 128, 128)\n"
                "out = F.scaled_dot_product_attention(q, q, v)\n", gpus=["A100"]),
        # From torch 2.3 the legacy sdp_kernel() also enables cuDNN attention, which accepts V != QK.
        Example("import torch\nimport torch.nn.functional as F\nq = torch.randn(2, 8, 128, 64)\n"
                "v = torch.randn(2, 8, 128, 32)\n"
                "with torch.backends.cuda.sdp_kernel(enable_flash=True, enable_math=False, enable_mem_efficient=False):\n"
                "    F.scaled_dot_product_attention(q, q, v)\n", pins={"torch": "2.4.0"}),
        # Dims that cannot be inferred are not guessed.
        Example(FA2 + "def f(q, k, v):\n    return flash_attn_func(q, k, v)\n"),
    ]
    INVALID = [
        Example("from transformers import DeepseekV3ForCausalLM\n"
                "m = DeepseekV3ForCausalLM.from_pretrained('deepseek-ai/DeepSeek-V3', attn_implementation='flash_attention_3')\n",
                gpus=["A100", "H100"], pins={"transformers": "4.55.0"},
                findings=[
                    (2, 5, 'DeepseekV3ForCausalLM.from_pretrained: attn_implementation="flash_attention_3" gets V '
                           "head dim 128 != QK head dim 192 unpadded in transformers 4.55.0, which is Hopper-only "
                           "(FlashAttention 3); fails on sm_80 (A100)"),
                ]),
        Example(FA2 + "import torch\nq = torch.randn(2, 128, 8, 192)\nk = torch.randn(2, 128, 8, 192)\n"
                "v = torch.randn(2, 128, 8, 128)\nflash_attn_func(q, k, v)\n", gpus=["H100"],
                findings=[
                    (6, 1, "flash_attn_func: V head dim 128 != QK head dim 192 is rejected by FlashAttention 2 on "
                           'every GPU ("v must have shape (batch_size, seqlen_k, num_heads_k, head_size)"); fails '
                           "on sm_90 (H100)"),
                ]),
        Example("from flash_attn import flash_attn_func as fa\nimport torch\nHD = 192\nHDV = 128\n"
                "q = torch.empty(4, 256, 8, HD)\nv = torch.empty((4, 256, 8, HDV))\nfa(q, q, v)\n",
                findings=[
                    (7, 1, "flash_attn_func: V head dim 128 != QK head dim 192 is rejected by FlashAttention 2 on "
                           'every GPU ("v must have shape (batch_size, seqlen_k, num_heads_k, head_size)"); fails '
                           "on sm_80"),
                ]),
        Example(FA3 + "import torch\nq = torch.randn(1, 64, 16, 192)\nk = torch.randn(1, 64, 16, 192)\n"
                "v = torch.randn(1, 64, 16, 128)\nout = flash_attn_func(q, k, v)\n", gpus=["A100", "H100"],
                findings=[
                    (6, 7, "flash_attn_func: V head dim 128 != QK head dim 192 is Hopper-only (FlashAttention 3: "
                           '"Only Hopper supports different V headdim"); fails on sm_80 (A100)'),
                ]),
        # The classic wrong guard: >= (9, 0) lets Blackwell in.
        Example(FA3 + "import torch\nq = torch.randn(1, 64, 16, 192)\nv = torch.randn(1, 64, 16, 128)\n"
                "if torch.cuda.get_device_capability() >= (9, 0):\n    flash_attn_func(q, q, v)\n",
                gpus=["H100", "B200"],
                findings=[
                    (6, 5, "flash_attn_func: V head dim 128 != QK head dim 192 is Hopper-only (FlashAttention 3: "
                           '"Only Hopper supports different V headdim"); fails on sm_100 (B200)'),
                ]),
        # Not an allowed FA3 pair at all: fails on Hopper too.
        Example(FA3 + "import torch\nq = torch.randn(1, 64, 16, 128)\nv = torch.randn(1, 64, 16, 256)\n"
                "flash_attn_func(q, q, v)\n", gpus=["H100"],
                findings=[
                    (5, 1, "flash_attn_func: V head dim 256 != QK head dim 128 is not a head-dim pair "
                           'FlashAttention 3 supports ("If V headdim is different from Q/K dim, we only support '
                           'Q/K headdim in (128, 192] and V headdim in (96, 128], or (Q/K <= 64 and V <= 512)."); '
                           "fails on sm_90 (H100)"),
                ]),
        Example(SDPA + "q = torch.randn(2, 8, 128, 192).cuda()\nv = torch.randn(2, 8, 128, 128).cuda()\n"
                "with sdpa_kernel(SDPBackend.FLASH_ATTENTION):\n    F.scaled_dot_product_attention(q, q, v)\n",
                gpus=["H100"],
                findings=[
                    (7, 5, "scaled_dot_product_attention: V head dim 128 != QK head dim 192 with only the flash "
                           'backend enabled, which needs equal head dims ("Flash attention requires q,k,v to have '
                           'the same last dimension and to be less than or equal to 256."; then "No available '
                           'kernel"); fails on sm_90 (H100)'),
                ]),
        Example("import torch\nfrom torch.nn.functional import scaled_dot_product_attention as sdpa\n"
                "q = torch.randn(2, 8, 128, 64)\nv = torch.randn(2, 8, 128, 32)\n"
                "with torch.backends.cuda.sdp_kernel(enable_flash=True, enable_math=False, enable_mem_efficient=False):\n"
                "    sdpa(q, q, v)\n", pins={"torch": ">=2.1,<2.3"},
                findings=[
                    (6, 5, "scaled_dot_product_attention: V head dim 32 != QK head dim 64 with only the flash "
                           'backend enabled, which needs equal head dims ("Flash attention requires q,k,v to have '
                           'the same last dimension and to be less than or equal to 256."; then "No available '
                           'kernel"); fails on sm_80'),
                ]),
    ]

    _VLLM = ("import torch\nfrom vllm.vllm_flash_attn import flash_attn_varlen_func\n\n"
             "q = torch.randn(4096, 16, 192, dtype=torch.bfloat16)\nv = torch.randn(4096, 16, 128, dtype=torch.bfloat16)\n"
             "cu = torch.tensor([0, 4096], dtype=torch.int32)\n"
             "out = flash_attn_varlen_func(q, q, v, 4096, cu, 4096, cu_seqlens_k=cu, fa_version={v})\n")
    VALID += [Example(_VLLM.format(v=3), gpus=["H100", "H200"])]
    INVALID += [
        Example(_VLLM.format(v=3), gpus=["H100", "B200"],
                findings=[
                    (7, 7, "flash_attn_varlen_func: V head dim 128 != QK head dim 192 is Hopper-only (FlashAttention 3: "
                           '"Only Hopper supports different V headdim"); fails on sm_100 (B200)'),
                ]),
        Example(_VLLM.format(v=2), gpus=["H100"],
                findings=[
                    (7, 7, "flash_attn_varlen_func: V head dim 128 != QK head dim 192 is rejected by FlashAttention 2 "
                           'on every GPU ("v must have shape (batch_size, seqlen_k, num_heads_k, head_size)"); fails '
                           "on sm_90 (H100)"),
                ]),
    ]

    def __init__(self, matrix) -> None:
        super().__init__(matrix)
        self.facts: dict[str, dict] = {}
        self.class_names: set[str] = set()
        tails = set()
        for key, e in matrix.section("attention.toml", "vhead").items():
            for c in e["calls"]:
                self.facts[c] = {"id": key, **e}
                tails.add(c.rsplit(".", 1)[-1])
                if c.endswith(".from_pretrained"):
                    self.class_names.add(c.rsplit(".", 1)[0])
        self.aliases = Aliases(matrix)
        self.call_tails = frozenset(tails) | frozenset(q.rsplit(".", 1)[-1] for q in self.aliases.names())

    @classmethod
    def explain_facts(cls, matrix) -> str:
        lines = []
        for key, e in matrix.section("attention.toml", "vhead").items():
            rule = {"equal": "V head dim must equal QK head dim on every GPU",
                    "forced": f"only when sdpa_kernel allows nothing but {', '.join(e.get('forced_backends', []))}",
                    "pairs": "pairs " + ", ".join(f"QK {p['qk']} / V {p['v']}" for p in e.get("pairs", []))
                    + f" on {', '.join(matrix.by_capability(matrix.feature_archs(e['feature'])))} only" if e.get("feature") else "",
                    "transformers": f"attn_implementation in {e.get('implementations')} with transformers{e.get('package_range')}"
                    }[e["check"]]
            lines.append(f"- {key} ({e['library']}): {rule}")
            lines.append(f"    calls: {', '.join(e['calls'])}")
            lines.append(f"    error: {e['error']}")
            lines.append(f"    source: {e['source']}")
        return "\n".join(lines)

    def known_names(self) -> set[str]:
        return set(self.facts) | self.class_names | self.aliases.names()

    def check_call(self, site, qualname, fc):
        out = []
        aliased = self.aliases.resolve(site, qualname, fc)
        qualname = qualname or (dotted(site.node.func) or "")  # ``from .vendored import f``: named as called
        for canonical, _, worlds in aliased:  # vllm_flash_attn, sgl_kernel
            fact = self.facts.get(canonical)
            if fact is not None and worlds:
                out += narrowed(fc, worlds, lambda: self._check_fact(site, qualname, fact, fc))
        return out

    def _check_fact(self, site, qualname, fact, fc):
        if site.has_star:
            return []
        if fc.ctx.caught("RuntimeError"):
            return []  # a fallback handles the failure
        check = fact["check"]
        if check == "transformers":
            return self._transformers(site, qualname, fact, fc)
        allowed = fc.ctx.facts.get("sdpa_backends")
        if check == "forced" and allowed is None:
            return []  # unforced: a backend that accepts the shapes runs
        args = fact["args"]
        short = qualname.rsplit(".", 1)[-1]
        failing: set[str] = set()
        shown = None
        # One scenario per call of the enclosing function in this file (q and v of
        # one caller are never mixed with another's); the finding names that call.
        for caller, bindings in fc.scenarios():
            for world, (qk, v) in self._dims(site, args, fc, bindings).items():
                if qk is UNKNOWN or v is UNKNOWN or qk == v:
                    continue
                if check == "forced" and not self._only_forced(fact, allowed, world):
                    continue
                reason = self._verdict(fact, qk, v, world.arch, fc)
                if reason is not None:
                    failing.add(world.arch)
                    shown = shown or (qk, v, reason, caller)
        if not failing:
            return []
        qk, v, reason, caller = shown
        label = "K/V" if "kv" in args else "V"
        via = " (called at line {line:caller})" if caller is not None else ""
        msg = (f"{short}: {label} head dim {v} != {'Q' if 'kv' in args else 'QK'} head dim {qk}{via} {reason}; "
               f"fails on {fc.describe(failing)}")
        return [Finding(site.node, msg, frozenset(failing), refs={"caller": caller} if caller is not None else {})]

    def _transformers(self, site, qualname, fact, fc):
        """Model classes whose attention has V != QK head dims, loaded with an
        attention implementation that receives V unpadded in the pinned releases."""
        impl_expr = site.kw.get("attn_implementation")
        if impl_expr is None:
            return []
        impls = {v for v in fc.eval_in(impl_expr).values() if isinstance(v, str)}
        if not impls & set(fact["implementations"]):
            return []
        affected = [v for v in fc.target.releases.get("transformers", []) if v in SpecifierSet(fact["package_range"])]
        if not affected:
            return []  # unpinned or pinned outside the range: the newest releases pad V
        failing = {w.arch for w in fc.ctx.worlds} - self.matrix.feature_archs(fact["feature"])
        if not failing:
            return []
        qk, v = fact["dims"]
        impl = sorted(impls & set(fact["implementations"]))[0]
        span = str(affected[0]) if len(affected) == 1 else f"{affected[0]}-{affected[-1]}"
        cls = qualname.rsplit(".", 2)[-2]
        msg = (f'{cls}.from_pretrained: attn_implementation="{impl}" gets V head dim {v} != QK head dim {qk} unpadded '
               f"in transformers {span}, which is Hopper-only ({fact['library']}); fails on {fc.describe(failing)}")
        return [Finding(site.node, msg, frozenset(failing))]

    def _dims(self, site, args, fc, bindings=None):
        def expr(role):
            if role not in args:
                return None
            index, name = args[role]
            return site.arg(index, name)

        q_e, k_e = expr("q"), expr("k")
        v_e = expr("kv") if "kv" in args else expr("v")
        if q_e is None or v_e is None:
            return {}
        out = {}
        for w in sorted(fc.ctx.worlds, key=lambda w: (w.arch, str(w.torch))):
            ev = fc.evaluator(w, bindings=bindings)
            qk = _last(ev.eval(q_e))
            if qk is UNKNOWN and k_e is not None:
                qk = _last(ev.eval(k_e))
            out[w] = (qk, _last(ev.eval(v_e)))
        return out

    @staticmethod
    def _only_forced(fact, allowed, world) -> bool:
        """Are the enabled SDPA backends, in this world's torch, all ones that need equal dims?"""
        present = set()
        for b in allowed:
            added = fact.get("backend_added", {}).get(b)
            if added and world.torch is not None and world.torch < Version(added):
                continue  # this release has no such backend
            present.add(b)
        return bool(present) and present <= set(fact["forced_backends"])

    def _verdict(self, fact, qk: int, v: int, arch: str, fc) -> str | None:
        lib, check = fact["library"], fact["check"]
        if check == "equal":
            return f'is rejected by {lib} on every GPU ("{fact["error"]}")'
        if check == "forced":
            return f'with only the flash backend enabled, which needs equal head dims ("{fact["error"]}"; then "No available kernel")'
        if check == "pairs":
            ok_pair = any(p["qk"][0] <= qk <= p["qk"][1] and p["v"][0] <= v <= p["v"][1] for p in fact["pairs"])
            if not ok_pair:
                return f'is not a head-dim pair {lib} supports ("{fact["error"]}")'
            if arch not in self.matrix.feature_archs(fact["feature"]):
                said = f': "{fact["feature_error"]}"' if "feature_error" in fact else ""
                return f"is Hopper-only ({lib}{said})"
            return None
        return None


def _last(v):
    if isinstance(v, Tensor):
        d = v.last_dim()
        return d if isinstance(d, int) and not isinstance(d, bool) else UNKNOWN
    return UNKNOWN

