"""AIC204 behavior-change: a call that leaves out a parameter whose default
changed inside the releases in scope (the pins allow releases on both sides of it)
(facts: version_matrix/behavior.toml, each change read in the releases on both
sides). The fix is to say what you mean: pass the parameter.
"""

from __future__ import annotations

from fnmatch import fnmatchcase

from packaging.version import Version

from ...core.ruleapi import Example, Finding, Rule
from ...core.ruleapi import api_query as q
from .._shared import saved_objects
from . import result_shape


class BehaviorChange(Rule):
    code = "AIC204"
    worlds_monotone = True
    name = "behavior-change"
    tokens = (b"import torch", b"from torch", b"from_pretrained", b"from_config", b"TrainingArguments")
    call_tails = frozenset({"*"})

    VALID = [
        Example("import torch\nsd = torch.load('ckpt.pt', weights_only=True)\n", pins={"torch": ">=2.4,<2.8"}),
        Example("import torch\nsd = torch.load('ckpt.pt')\n", pins={"torch": "2.7.1"}),
        Example("import torch, pickle\nsd = torch.load('ckpt.pt', pickle_module=pickle)\n", pins={"torch": "2.4.0"}),
        Example("import torch\nep = torch.export.export(m, (x,), strict=False)\n", pins={"torch": "2.5.1"}),
        Example("from transformers import AutoTokenizer\ntok = AutoTokenizer.from_pretrained('gpt2')\n",
                pins={"transformers": "4.57.1"}),
        Example("import torch\nsd = torch.load('ckpt.pt')\n"),
        # Pins entirely on one side of a change do not cross it: the code behaves as it always has.
        Example("import torch\nsd = torch.load('ckpt.pt', map_location='cpu')\n", pins={"torch": "2.4.0"}),
        Example("import torch\nep = torch.export.export(m, (x,))\n", pins={"torch": "2.5.1"}),
        Example("from transformers import AutoModelForCausalLM\nm = AutoModelForCausalLM.from_pretrained('gpt2')\n",
                pins={"transformers": "4.57.1"}),
    ]
    INVALID = [
        Example("import torch\nsd = torch.load('ckpt.pt')\n", pins={"torch": ">=2.4,<2.8"},
                findings=[
                    (2, 6, "torch.load: the default of weights_only changed from False (any pickle is loaded) to "
                           "True (tensors and allow-listed types only; other pickles raise UnpicklingError) in "
                           "torch 2.6.0; the pins allow torch 2.4.0–2.7.1, both sides; pass weights_only=False to "
                           "keep the old behaviour or weights_only=True for the new one"),
                ]),
        Example("import torch\nep = torch.export.export(m, (x,))\n", pins={"torch": ">=2.7,<2.9"},
                findings=[
                    (2, 6, "torch.export.export: the default of strict changed from True (TorchDynamo tracing) to "
                           "False (Python-level tracing, non-strict) in torch 2.8.0; the pins allow torch "
                           "2.7.0–2.8.0, both sides; pass strict=True to keep the old behaviour or strict=False for "
                           "the new one"),
                ]),
        Example("from transformers import AutoModelForCausalLM\nm = AutoModelForCausalLM.from_pretrained('gpt2')\n",
                pins={"transformers": ">=4.57,<=5.0.0"},
                findings=[
                    (2, 5, "transformers.AutoModelForCausalLM.from_pretrained: the default of dtype changed from "
                           "torch.float32 to \"auto\" (the checkpoint's dtype) in transformers 5.0.0; the pins "
                           "allow transformers 4.57.1–5.0.0, both sides; pass dtype=torch.float32 (torch_dtype= "
                           'before 4.56) to keep the old behaviour or dtype="auto" for the new one'),
                ]),
        Example("from transformers import AutoTokenizer\ntok = AutoTokenizer.from_pretrained('gpt2')\n",
                pins={"transformers": ">=4.44,<4.47"},
                findings=[
                    (2, 7, "transformers.AutoTokenizer.from_pretrained: the default of "
                           "clean_up_tokenization_spaces changed from True to False (unless the checkpoint's "
                           "tokenizer_config.json sets it) in transformers 4.45.1; the pins allow transformers "
                           "4.44.0–4.46.3, both sides; pass clean_up_tokenization_spaces=True to keep the old "
                           "behaviour or clean_up_tokenization_spaces=False for the new one"),
                ]),
    ]

    _SCALED = ("import torch\n\n\n"
               "def fp8_matmul(a, b, sa, sb):\n"
               "    {line}\n"
               "    return out\n")
    VALID += [
        Example(_SCALED.format(line="out = torch._scaled_mm(a, b, scale_a=sa, scale_b=sb, out_dtype=torch.bfloat16)"),
                pins={"torch": "2.6.0"}),
        Example(_SCALED.format(line="out, amax = torch._scaled_mm(a, b, scale_a=sa, scale_b=sb, "
                                    "out_dtype=torch.bfloat16)"), pins={"torch": "2.4.1"}),
    ]
    INVALID += [
        Example(_SCALED.format(line="out, amax = torch._scaled_mm(a, b, scale_a=sa, scale_b=sb, "
                                    "out_dtype=torch.bfloat16)"), pins={"torch": ">=2.4,<2.6"},
                findings=[
                    (5, 17, "torch._scaled_mm: returns one tensor from torch 2.5.0 (a tuple (out, amax) before); "
                            "unpacking it into 2 names fails or takes rows of the result on torch 2.5.0–2.5.1, which "
                            "the pins allow; take the one result (out = _scaled_mm(...))"),
                ]),
    ]

    # A load of a file the same code saves: quiet where every save writes only what the
    # weights-only unpickler loads (a state_dict() of a torch module and optimizer), since
    # either default loads it the same; reported where one saves an object it refuses.
    _SAVED = ("import torch\n\nCKPT = 'last.pt'\n\n\n"
              "def save(model, opt):\n"
              "    torch.save({'model': model.state_dict(), 'optimizer': %s}, CKPT)\n\n\n"
              "def resume(model):\n"
              "    model.load_state_dict(torch.load(CKPT)['model'])\n\n\n"
              "net = torch.nn.Linear(8, 8)\n"
              "save(net, torch.optim.SGD(net.parameters(), lr=0.1))\n"
              "resume(net)\n")
    VALID += [Example(_SAVED % "opt.state_dict()", pins={"torch": ">=2.4,<2.8"})]
    INVALID += [
        Example(_SAVED % "opt", pins={"torch": ">=2.4,<2.8"},
                findings=[
                    (11, 27, "torch.load: the default of weights_only changed from False (any pickle is loaded) to "
                             "True (tensors and allow-listed types only; other pickles raise UnpicklingError) in "
                             "torch 2.6.0; the pins allow torch 2.4.0–2.7.1, both sides; pass weights_only=False "
                             "to keep the old behaviour or weights_only=True for the new one"),
                ]),
    ]

    def __init__(self, matrix) -> None:
        super().__init__(matrix)
        self.by_call: dict[str, list[dict]] = {}
        self.by_tail: dict[str, list[dict]] = {}
        for e in matrix.section("behavior.toml", "change").values():
            if "call" in e:
                self.by_call.setdefault(e["call"], []).append(e)
            for tail in e.get("calls", []):
                self.by_tail.setdefault(tail, []).append(e)
        self.returns = {e["call"]: e for e in matrix.section("behavior.toml", "returns").values()}
        self.loads = matrix.section("pickle.toml", "weights_only")

    def check_call(self, site, qualname: str, fc) -> list[Finding]:
        if not qualname:
            return []
        parts = qualname.split(".")
        if qualname not in self.returns and qualname not in self.by_call \
                and not (len(parts) >= 3 and parts[-1] in self.by_tail):
            return []  # nothing recorded for this name (asked before the arguments: splats cost)
        if site.has_star:
            return []
        if qualname in self.returns:  # a result whose shape changed (torch._scaled_mm in 2.5.0)
            found = result_shape.check(site, qualname, self.returns[qualname], fc)
            if found is not None:
                return [found]
        entries = list(self.by_call.get(qualname, ()))
        parts = qualname.split(".")
        if len(parts) >= 3 and parts[-1] in self.by_tail:
            for e in self.by_tail[parts[-1]]:
                if parts[0] == e["package"].replace("-", "_") and any(
                        fnmatchcase(parts[-2], pat) for pat in e.get("receivers", ["*"])):
                    entries.append(e)
        out = []
        for e in entries:
            names = {e["param"], *e.get("also", [])}
            if names & set(site.kw) or set(e.get("unless", [])) & set(site.kw):
                continue
            releases = q.releases_in_scope(fc, e["package"])
            if not releases:
                continue  # unpinned: the newest release, after every recorded change
            changed = Version(e["changed"])
            since = Version(e["since"]) if "since" in e else None
            before = [v for v in releases if v < changed and (since is None or v >= since)]
            after = [v for v in releases if v >= changed]
            if not before or not after:
                continue  # the pins stay on one side of the change: the code behaves as it always has
            if "same_if_saved" in e and self._loads_the_same(site, self.loads[e["same_if_saved"]], fc):
                continue
            package = e["package"]
            where = f"the pins allow {package} {q.span(releases)}, both sides"
            msg = (f"{qualname}: the default of {e['param']} changed from {e['old']} to {e['new']} in "
                   f"{package} {changed}; {where}; pass {e['pin_old']} to keep the old behaviour or "
                   f"{e['pin_new']} for the new one")
            out.append(Finding(site.node, msg, extra_targets=tuple(f"{package}=={v}" for v in releases),
                               severity="warning"))
        return out

    @staticmethod
    def _loads_the_same(site, e: dict, fc) -> bool:
        """Does the code save the file this load reads, only ever with what the weights-only
        unpickler loads (then either default loads it the same)?"""
        path_expr = site.arg(*e["arg"])
        if path_expr is None:
            return False
        where = saved_objects.storage(fc.value_everywhere(path_expr), path_expr, fc.loc[0], fc, e)
        return where is not None and saved_objects.loads_weights_only(fc, e, where)
