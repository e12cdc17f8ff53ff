"""AIC201 api-unavailable: a name that some release in scope does not have,
or that no release ever had (facts: version_matrix/api/, generated from the
releases themselves by ``aicompat matrix build``).

Judged once per attribute chain (its outermost node) and per import. A
module whose namespace a static read cannot close (``sys.modules`` games)
proves nothing about a missing name, and neither does code under ``try:``
that catches ImportError / AttributeError, or a guard that excludes the
releases concerned (``if hasattr(torch.nn.attention, "sdpa_kernel")``).

A name bound by an import reported here is not reported again where it is
used, in the releases where the import fails: there the use never runs (the
import raised first).

A function that some release in scope has only as a stub whose body raises
(torch.symeig, torch.solve, torch.lstsq, torch.eig, torch.matrix_rank: "This
function was deprecated since version 1.9 and is now removed", the table's
``raises``) is unavailable there too: each call of it is reported with the
stub's own message and the names the message says to use instead, unless the
call sits under a ``try`` that catches what it raises.

A child module reached as an attribute (``torch.nn.utils.prune.l1_unstructured``)
that a bare ``import torch`` does not load, in every release in scope as seen at
run time (the table's ``lazy``), is an AttributeError unless something imported
it first: reported only where the file imports nothing but torch and the
standard library (anything else might import it) and never imports it itself.
"""

from __future__ import annotations

import sys
from typing import cast

import libcst as cst

from ..core.ruleapi import Example, Finding, Qual, Rule, dotted, walk
from ..core.ruleapi import api_query as q
from ._shared import config_keys
from ._shared.getattr_names import by_name

_TRITON_GELU = ("import triton\nimport triton.language as tl\n\n\n@triton.jit\ndef gelu(x):\n"
                "    return 0.5 * x * (1.0 + {tanh}(0.7978845608 * x))\n")


def _caught(fc) -> bool:
    """A missing module raises ModuleNotFoundError, a missing name AttributeError (or ImportError)."""
    return fc.ctx.caught("ModuleNotFoundError") or fc.ctx.caught("AttributeError")


class ApiUnavailable(Rule):
    code = "AIC201"
    worlds_monotone = True
    name = "api-unavailable"
    tokens = (b"import torch", b"from torch", b"flash_attn", b"import triton", b"from triton",
              b"transformer_engine")  # names resolve only through imports
    attr_tails = frozenset({"*"})
    call_tails = frozenset({"*"})  # a raising stub may be any call; getattr/setattr/patch by name

    VALID = [
        Example("import torch\nfrom torch.nn.attention import sdpa_kernel, SDPBackend\n", pins={"torch": "2.4.0"}),
        Example("import torch\nx = torch.nn.functional.scaled_dot_product_attention(q, k, v)\n", pins={"torch": "2.1.0"}),
        # Annotations that never run (PEP 563 postponed; PEP 526 local variables) name nothing at run time.
        Example("from __future__ import annotations\nimport torch\n\ndef cast(x, dtype: torch.type) -> None:\n"
                "    pass\n"),
        Example("import torch\n\ndef f(x):\n    y: torch.Tensr = x\n    return y\n"),
        # vLLM 0.33.0 tests/models/multimodal/conftest.py: a shim that sets the name where it is missing
        Example("import torch.nn.functional as F\n\nif not hasattr(F, 'List'):\n    F.List = list\n"),
        Example("import torch\nif hasattr(torch.nn, 'attention'):\n    ctx = torch.nn.attention.sdpa_kernel\n",
                pins={"torch": ">=2.1,<2.5"}),
        Example("try:\n    from torch.nn.attention import sdpa_kernel\nexcept ImportError:\n    sdpa_kernel = None\n",
                pins={"torch": "2.2.0"}),
        Example("import torch\nprint(torch.__version__, torch.cuda.is_available())\n"),
        # Fixed twins of the missing modules below: guarded, or pinned to releases that ship it.
        Example("try:\n    from torch._six import inf\nexcept ImportError:\n    from math import inf\n",
                pins={"torch": "2.0.0"}),
        Example("import triton\nfrom triton.tools.experimental_descriptor import create_2d_tma_descriptor\n",
                pins={"triton": "3.2.0"}),
        Example("from flash_attn import flash_attn_func, flash_attn_with_kvcache\n", pins={"flash-attn": "2.6.3"}),
        Example("import torch\nif torch.__version__ >= '2.3':\n    from torch.nn.attention import sdpa_kernel\n",
                pins={"torch": ">=2.1,<2.5"}),
        # Fixed twins of the Triton cases below: where each release keeps tanh.
        Example(_TRITON_GELU.format(tanh="tl.extra.cuda.libdevice.tanh"), pins={"torch": "2.4.0"}),
        Example(_TRITON_GELU.format(tanh="tl.math.tanh"), pins={"triton": "2.1.0"}),
        # The submodule is imported, so the attribute exists.
        Example("import torch\nimport torch.nn.utils.prune\n\n\ndef sparsify(layer):\n"
                "    torch.nn.utils.prune.l1_unstructured(layer, name=\"weight\", amount=0.3)\n",
                pins={"torch": "2.13.0"}),
        # torch.cuda.FloatTensor and torch.uint4 are made in C++ at import; torch.supa is a device plugin.
        Example("import torch\nbuf = torch.cuda.FloatTensor(3)\npacked = torch.empty(4, dtype=torch.uint4)\n"
                "ok = hasattr(torch, \"supa\") and torch.supa.is_available()\n", pins={"torch": "2.13.0"}),
        Example("import torch._inductor.config as inductor_config\ninductor_config.freezing = True\n",
                pins={"torch": "2.1.0"}),
        Example("import torch._inductor.config as inductor_config\nif hasattr(inductor_config, \"freezing\"):\n"
                "    inductor_config.freezing = True\n", pins={"torch": "2.0.1"}),
        Example("import torch\nimport torch.nn.functional as F\nnorm = getattr(F, \"rms_norm\", None)\n"
                "if norm is not None:\n    y = F.rms_norm(x, (8,))\n", pins={"torch": "2.3.1"}),
        # Transformer Engine, read from each release's source: the fixed twins of the TE findings below
        Example("from transformer_engine.common.recipe import DelayedScaling, Format\n"
                "fp8_recipe = DelayedScaling(fp8_format=Format.E4M3, amax_history_len=16)\n"),
        Example("import transformer_engine.pytorch as te\nwith te.fp8_autocast(enabled=True, fp8_recipe=r):\n"
                "    y = model(x)\n", pins={"transformer-engine": "2.4.0"}),
        Example("from transformer_engine.common import recipe\n\n\ndef make_recipe(block):\n"
                "    if block and hasattr(recipe, \"MXFP8BlockScaling\"):\n        return recipe.MXFP8BlockScaling()\n"
                "    return recipe.DelayedScaling()\n", pins={"transformer-engine": "1.13.0"}),
        # Fixed twins of the stub and the accelerator API below: torch.linalg, a fallback that
        # catches what the stub raises, and torch.accelerator behind hasattr.
        Example("import torch\n\n\ndef principal_axes(cov):\n    evals, evecs = torch.linalg.eigh(cov)\n"
                "    return evecs\n", pins={"torch": "2.1.0"}),
        Example("import torch\n\n\ndef principal_axes(cov):\n    try:\n"
                "        evals, evecs = torch.symeig(cov, eigenvectors=True)\n    except RuntimeError:\n"
                "        evals, evecs = torch.linalg.eigh(cov)\n    return evecs\n", pins={"torch": "2.1.0"}),
        Example("import torch\n\nif hasattr(torch, 'accelerator'):\n    dev = torch.accelerator.current_accelerator()\n"
                "else:\n    dev = torch.device('cuda')\n", pins={"torch": ">=2.4,<2.8"}),
    ]
    INVALID = [
        # ColossalAI colossalai/utils/common.py before 01066152: torch._six went in torch 2.0.
        Example("from torch._six import inf\n", pins={"torch": "2.0.0"},
                findings=[(1, 6, "module torch._six is not in torch 2.0.0 (ModuleNotFoundError; last in 1.13.1); "
                                 "pins allow torch 2.0.0")]),
        Example("import triton\nfrom triton.tools.experimental_descriptor import create_2d_tma_descriptor\n",
                pins={"triton": "3.1.0"},
                findings=[(2, 6, "module triton.tools.experimental_descriptor is not in triton 3.1.0 "
                                 "(ModuleNotFoundError; present in 3.2.0–3.3.1); pins allow triton 3.1.0")]),
        Example("import torch\nwith torch.cuda.amp.disable_casts():\n    y = model(x)\n",
                findings=[
                    (2, 6, "torch.cuda.amp.disable_casts does not exist in any torch release (2.0.0–2.15.0); to "
                           'run a region without autocast use `with torch.autocast(device_type="cuda", '
                           'enabled=False):` (torch.amp.autocast("cuda", enabled=False))'),
                ]),
        Example("from torch.nn.attention import sdpa_kernel\n", pins={"torch": "2.2.2"},
                findings=[
                    (1, 32, "torch.nn.attention.sdpa_kernel is not in torch 2.2.2 (added in 2.3.0); pins allow "
                            "torch 2.2.2; before 2.3.0 use torch.backends.cuda.sdp_kernel, the name it replaces"),
                ]),
        Example("import torch.nn.functional as F\nF.flash_attention(q, k, v)\n",
                findings=[
                    (2, 1, "torch.nn.functional.flash_attention does not exist in any torch release (2.0.0–2.15.0)"),
                ]),
        Example("import torch\nfrom torch.nn.attention.flex_attention import flex_attention\n",
                pins={"torch": ">=2.3,<2.6"},
                findings=[
                    (2, 47, "torch.nn.attention.flex_attention.flex_attention is not in torch 2.3.0–2.4.1 (added "
                            "in 2.5.0); pins allow torch 2.3.0–2.5.1"),
                ]),
        # torch 2.4.0's wheel requires triton==3.0.0: tl.libdevice went in 2.1.0; tl.tanh never was.
        Example(_TRITON_GELU.format(tanh="tl.libdevice.tanh"), pins={"torch": "2.4.0"},
                findings=[
                    (7, 29, "triton.language.libdevice.tanh is not in triton 3.0.0 (removed in 2.1.0; last in 2.0.0); "
                            "triton unpinned: torch 2.4.0 requires triton 3.0.0; in triton 3.0.0 it is "
                            "triton.language.extra.cuda.libdevice.tanh or triton.language.extra.libdevice.tanh"),
                ]),
        Example(_TRITON_GELU.format(tanh="tl.tanh"), pins={"triton": "2.1.0"},
                findings=[
                    (7, 29, "triton.language.tanh does not exist in any triton release (2.0.0–3.9.0); in triton "
                            "2.1.0 it is triton.language.math.tanh"),
                ]),
        Example("from flash_attn import flash_attn_with_kvcache\n", pins={"flash-attn": "2.1.1"},
                findings=[
                    (1, 24, "flash_attn.flash_attn_with_kvcache is not in flash-attn 2.1.1 (added in 2.2.0); pins "
                            "allow flash-attn 2.1.1"),
                ]),
        Example("import torch\n\n\ndef sparsify(layer):\n"
                "    torch.nn.utils.prune.l1_unstructured(layer, name=\"weight\", amount=0.3)\n",
                pins={"torch": "2.13.0"},
                findings=[
                    (5, 5, "torch.nn.utils.prune is not loaded by `import torch` in torch 2.13.0 (AttributeError: "
                           "module 'torch.nn.utils' has no attribute 'prune'); add `import torch.nn.utils.prune`; "
                           "pins allow torch 2.13.0"),
                ]),
        # a config module refuses a key its release lacks (version_matrix/config/torch.toml)
        Example("import torch._inductor.config as inductor_config\ninductor_config.freezing = True\n",
                pins={"torch": "2.0.1"},
                findings=[
                    (2, 1, "torch._inductor.config.freezing is not a config key in torch 2.0.1 (added in 2.1.0): "
                           "setting it raises AttributeError: torch._inductor.config.freezing does not exist; pin "
                           "torch>=2.1.0; pins allow torch 2.0.1"),
                ]),
        Example("import torch\nimport torch.nn.functional as F\nnorm = getattr(F, \"rms_norm\")\n", pins={"torch": "2.3.1"},
                findings=[
                    (3, 8, "torch.nn.functional.rms_norm is not in torch 2.3.1 (added in 2.4.0); pins allow torch 2.3.1"),
                ]),
        # Transformer Engine: no FP8 format E4M3FN (that is torch's dtype name); te.autocast arrived in 2.9.0
        Example("from transformer_engine.common.recipe import DelayedScaling, Format\n"
                "fp8_recipe = DelayedScaling(fp8_format=Format.E4M3FN, amax_history_len=16)\n",
                pins={"transformer-engine": "2.4.0"},
                findings=[
                    (2, 40, "transformer_engine.common.recipe.Format.E4M3FN does not exist in any transformer-engine "
                            "release (1.9.0–2.20.2); did you mean transformer_engine.common.recipe.Format.E4M3?"),
                ]),
        Example("import transformer_engine.pytorch as te\nwith te.autocast(enabled=True, recipe=r):\n"
                "    y = model(x)\n", pins={"transformer-engine": "2.4.0"},
                findings=[
                    (2, 6, "transformer_engine.pytorch.autocast is not in transformer-engine 2.4.0 (added in 2.9.0); "
                           "pins allow transformer-engine 2.4.0; before 2.9.0 use "
                           "transformer_engine.pytorch.fp8_autocast, the name it replaces"),
                ]),
        Example("from transformer_engine.common import recipe\n\n\ndef make_recipe(block):\n"
                "    if block:\n        return recipe.MXFP8BlockScaling()\n"
                "    return recipe.DelayedScaling()\n", pins={"transformer-engine": "1.13.0"},
                findings=[
                    (6, 16, "transformer_engine.common.recipe.MXFP8BlockScaling is not in transformer-engine 1.13.0 "
                            "(added in 2.1.0); pins allow transformer-engine 1.13.0"),
                ]),
    ]

    INVALID += [
        # torch.symeig went in 1.9's deprecation cycle; from 2.0 on torch keeps a stub that raises.
        Example("import torch\n\n\ndef principal_axes(cov):\n    evals, evecs = torch.symeig(cov, eigenvectors=True)\n"
                "    return evecs\n", pins={"torch": "2.1.0"},
                findings=[(5, 20, 'torch.symeig is unavailable in torch 2.1.0: a stub whose every call raises '
                                  'RuntimeError: "This function was deprecated since version 1.9 and is now removed. The '
                                  'default behavior has changed from using the upper triangular portion of the matrix by '
                                  'de…"; use torch.linalg.eigvalsh or torch.linalg.eigh; pins allow torch 2.1.0')]),
        Example("import torch\ndev = torch.accelerator.current_accelerator()\n", pins={"torch": "2.5.1"},
                findings=[(2, 7, "torch.accelerator.current_accelerator is not in torch 2.5.1 (added in 2.6.0); pins "
                                 "allow torch 2.5.1")]),
    ]

    def __init__(self, matrix) -> None:
        super().__init__(matrix)
        # FP8 dtypes and scaled-mm ops missing from a release are AIC102's to report, with the hardware facts.
        self.owned = set(matrix.section("fp8.toml", "dtype")) | set(matrix.section("fp8.toml", "op"))
        self.hints = matrix.section("api_hints.toml", "name")
        self.runtime = {f"{pkg}.{n}" for pkg, e in matrix.section("api_hints.toml", "runtime").items()
                        for n in e["names"]}
        # a name that arrived as the replacement of a deprecated one: the old name, for the releases before it
        self.predecessors: dict[str, list[str]] = {}
        for section in (matrix.section("deprecations.toml", "call"), matrix.section("te_deprecations.toml", "call")):
            for old, e in section.items():
                if "replacement" in e:
                    self.predecessors.setdefault(e["replacement"].split("(", 1)[0], []).append(old)

    def check_attribute(self, node: cst.Attribute, qualname: str, fc) -> list[Finding]:
        done = fc.state.setdefault(self.code, set())
        _mark_inner(node.value, done)  # judge a chain once, at its outermost node
        if id(node) in done or _caught(fc) or cast(int, getattr(fc, "unevaluated", 0)):
            return []  # (an annotation that never runs names nothing at run time)
        cfg = config_keys.split(fc.matrix, qualname)
        if cfg is not None:  # a config module refuses a key it lacks, read or set
            how = "set" if _assigned(node, fc) else "read"
            found = config_keys.judge(config_keys.Use(node, cfg[0].name, cfg[1], how), fc)
            if found:
                return found
        if _assigned(node, fc) and _shimmed(node, fc):
            return []  # ``if not hasattr(F, "List"): F.List = list``: a shim for the releases without it
        return self._judge(node, qualname, fc)

    def check_call(self, site, qualname: str, fc) -> list[Finding]:
        func = site.node.func
        tail = func.value if isinstance(func, cst.Name) else func.attr.value if isinstance(func, cst.Attribute) else ""
        out = self._stub(site, qualname, fc)
        if tail in ("getattr", "setattr", "patch"):
            out += self._by_name(site, qualname, fc)
        return out

    def _by_name(self, site, qualname: str, fc) -> list[Finding]:
        """``getattr(torch.nn.functional, "rms_norm")`` as ``torch.nn.functional.rms_norm``;
        ``setattr``/``getattr``/``patch`` of a config module's keys."""
        if _caught(fc):
            return []
        if qualname.endswith(".patch"):
            mod = config_keys.is_config(fc, qualname.rsplit(".", 1)[0])
            if mod is None or fc.ctx.caught("KeyError"):
                return []
            module, prefix = config_keys.owner(fc, mod)
            out = []
            for use in config_keys.patch_uses(site, module, fc):
                out += config_keys.judge(config_keys.Use(use.node, module, prefix + use.key, "patch"), fc)
            return out
        call = by_name(site, fc)
        if call is None or call.owner is None or call.names is None:
            return []  # the object or the name unknown: not judged
        out = []
        mod = config_keys.is_config(fc, call.owner)
        if mod is not None:
            module, prefix = config_keys.owner(fc, mod)
            how = "set" if call.builtin == "setattr" else "read"
            for n, worlds in call.names.items():
                out += config_keys.judge(config_keys.Use(site.node, module, prefix + n, how), fc, worlds)
            return out
        if call.builtin == "setattr":
            return []  # setting a name a module lacks creates it
        for n in call.names:
            full = f"{call.owner}.{n}"
            if full not in self.owned:  # FP8 dtypes: AIC102's
                out += self._judge(site.node, full, fc)
        return out

    def _stub(self, site, qualname: str, fc) -> list[Finding]:
        """A call of a function that some release in scope has only as a stub that raises."""
        got = q.member(fc, qualname)
        if got is None:
            return []
        scope, module, name, m = got
        package = scope.package
        stubs = [(rng & set(scope.indices), exc, use, msg) for rng, exc, use, msg in (m.raises(name) if m else ())]
        stubs = [s for s in stubs if s[0] and not name.startswith("_")]  # a private stub: build-dependent
        if not stubs or fc.ctx.caught(stubs[-1][1]):
            return []
        hit = frozenset().union(*(s[0] for s in stubs))
        _, exc, use, msg = stubs[-1]
        text = (f"{module}.{name} is unavailable in {package} {scope.label(hit)}: a stub whose every call raises "
                f"{exc}: \"{_short(msg)}\"")
        if use:
            text += f"; use {' or '.join(use)}"
        return [Finding(site.node, f"{text}; {scope.pin_text()}", extra_targets=scope.targets(hit))]

    def attr_exists(self, qualname: str, world):
        """``hasattr(torch._inductor.config, "X")`` in one world (version_matrix/config/)."""
        return config_keys.attr_exists(self.matrix, qualname, world)

    def check_import(self, node, fc) -> list[Finding]:
        out: list[Finding] = []
        done = fc.state.setdefault(self.code, set())
        judge = (lambda *_: []) if _caught(fc) else self._judge
        if isinstance(node, cst.Import):
            for alias in node.names:
                _mark_inner(alias.name, done)  # the dotted name is an Attribute too: judged here, not again
                name = dotted(alias.name)
                if name:
                    found = judge(alias.name, name, fc) or self._module(alias.name, name, fc)
                    out += found
                    if found:
                        bound = cast(cst.Name, alias.asname.name).value if alias.asname else name.split(".", 1)[0]
                        self._record(node, bound, name, fc)
        elif not node.relative:
            base = dotted(node.module) if node.module is not None else None
            if not base:
                return []
            _mark_inner(node.module, done)
            if isinstance(node.names, cst.ImportStar):
                return judge(node.module, base, fc) or self._module(node.module, base, fc)
            for alias in node.names:
                found = judge(alias.name, f"{base}.{alias.name.value}", fc, base)
                out += found
                if found:
                    bound = cast(cst.Name, alias.asname.name).value if isinstance(alias.asname, cst.AsName) else alias.name.value
                    self._record(node, bound, f"{base}.{alias.name.value}", fc)
            if not out:  # a module the API tables do not cover: the module inventory
                out = self._module(node.module, base, fc)
        return out

    def _module(self, node, dotted_name: str, fc) -> list[Finding]:
        """A module (or a package on its way) that the releases in scope do not ship, though
        another release does (version_matrix/modules/, read from the wheels)."""
        root = dotted_name.split(".", 1)[0]
        package = fc.matrix.import_roots.get(root)
        inv = fc.matrix.module_inventory(package) if package else None
        if inv is None or _caught(fc):
            return []
        got = q.judged_releases(fc, package, inv.releases)  # (None under another package's version test)
        if got is None:
            return []
        indices = [inv.judged + i for i in got[0]]
        parts = dotted_name.split(".")
        for k in range(2, len(parts) + 1):
            mod = ".".join(parts[:k])
            lack = inv.lacking(mod, indices)
            if not lack:
                continue
            have = inv.present[mod]
            first, last = min(have), max(have)
            if all(i < first for i in lack) and last == len(inv.labels) - 1:
                why = f"added in {inv.labels[first]}; pin {package}>={inv.labels[first]}"
            elif all(i > last for i in lack):
                why = (f"last in {inv.labels[last]}" if last < inv.judged
                       else f"removed in {inv.labels[last + 1]}; last in {inv.labels[last]}")
            else:
                why = f"present in {inv.label(have)}"
            return [Finding(node, f"module {mod} is not in {package} {inv.label(lack)} (ModuleNotFoundError; {why}); "
                                  f"{q.pin_text(package, inv.label(indices), got[1])}",
                            extra_targets=tuple(f"{package}=={inv.labels[i]}" for i in sorted(lack)))]
        return []

    # -- names whose import fails -----------------------------------------------------
    def _record(self, node, bound, qualname: str, fc) -> None:
        """Remember the releases in which importing ``qualname`` (bound to ``bound`` by
        ``node``, whose ImportError nothing catches) raises."""
        lack = self._lack(qualname, fc)
        if lack is not None:
            fc.state.setdefault(self.code + ".imports", {})[(id(node), bound)] = lack

    def _lack(self, qualname: str, fc):
        """(package, indices of the releases in scope without ``qualname``), or None."""
        package = fc.matrix.api_package(qualname)
        scope = q.scope(fc, package) if package is not None else None
        where = q.split(scope.api, qualname) if scope is not None else None
        if where is None:
            return None
        assert scope is not None  # ``where`` is None when it is
        module, rest = where
        if not rest:
            if "." not in module:
                return None
            module, name = module.rsplit(".", 1)
        else:
            name = rest[0]
        return package, frozenset(q.presence(scope.api, module, name, scope.indices).lack)

    def _unreached(self, node, package: str, fc) -> frozenset:
        """The releases in which the use ``node`` cannot run: its root name is bound only by
        imports that fail there (uncaught)."""
        failed = fc.state.get(self.code + ".imports")
        root = node
        while isinstance(root, (cst.Attribute, cst.Call, cst.Subscript)):
            root = root.value if not isinstance(root, cst.Call) else root.func
        if not failed or not isinstance(root, cst.Name) or fc.model is None:
            return frozenset()
        owner, here = fc.loc
        scope, at = fc.model.scope(owner), here
        defs = None
        while scope is not None and defs is None:
            defs = scope.defs_at(root.value, at)
            scope, at = scope.parent, None  # a free name: the enclosing scope's final bindings
        out = None
        for d in defs or ():
            got = failed.get((id(d.stmt), root.value)) if d.kind == "import" and isinstance(d.node, Qual) else None
            if got is None or got[0] != package:
                return frozenset()
            out = got[1] if out is None else out & got[1]
        return out or frozenset()

    def _judge(self, node: cst.CSTNode, qualname: str, fc, from_module: str | None = None) -> list[Finding]:
        package = fc.matrix.api_package(qualname)
        if package is None:
            return []
        scope = q.scope(fc, package)
        if scope is None:
            return []
        q.unpinned_note(scope, self.notes)
        api = scope.api
        where = q.split(api, qualname)
        if where is None:
            return []
        module, rest = where
        if rest:
            name = rest[0]
        elif "." in module:  # the chain is a module: judge it in its parent
            parent, name = module.rsplit(".", 1)
            if parent not in api.modules:
                return []
            module = parent
        else:
            return []
        if name.startswith("__") and name.endswith("__"):
            return []  # __version__, __file__...: module attributes the table does not list
        found = q.presence(api, module, name, scope.indices)
        lack = found.lack - self._unreached(node, package, fc) if isinstance(node, cst.Attribute) else found.lack
        if not lack:
            return self._not_loaded(node, qualname, scope, fc) if isinstance(node, cst.Attribute) else []
        full = f"{module}.{name}"
        if full in self.owned or full in self.runtime:
            return []
        if from_module is not None and from_module.startswith(full + ".") and _only_module(api, module, name) \
                and fc.matrix.module_inventory(package) is not None:
            return []  # ``from a.gone.b import c``: the module inventory says ModuleNotFoundError (_module)
        ever = q.releases_with(api, module, name)
        m = api.module(module)
        # The same name in another module of the package in the releases that lack it here
        # (triton's tanh: tl.math.tanh in 2.1.0, tl.extra.cuda.libdevice.tanh from 3.0.0).
        moved = "; ".join(f"in {package} {api.label(rel)} it is {' or '.join(names)}"
                          for names, rel in q.elsewhere(api, module, name, lack))
        if not ever:
            if (m is not None and m.open) or name.startswith("_"):
                # Some release fills the namespace at run time; private names are
                # the ones packages create dynamically (torch's _sym_* loop).
                return []
            near = q.nearby(m, name, indices=lack)
            hint = f"; did you mean {', '.join(f'{module}.{n}' for n in near)}?" if near else ""
            if full in self.hints:
                hint = f"; {self.hints[full]['hint']}"
            elif any(n.lower() == name.lower() for n in near):
                pass  # a spelling of a name the module has (torch.Device: torch.device) before a namesake elsewhere
            elif moved:
                hint = f"; {moved}"
            elif not near and m is not None:
                public = sorted(n for n in m.all_names() if not n.startswith("_"))
                if 0 < len(public) <= 12:
                    hint = f"; {module} has {', '.join(public)}"
            msg = (f"{full} does not exist in any {package} release ({api.labels[0]}–{api.labels[-1]}){hint}")
        else:
            first, last = min(ever), max(ever)
            known = ever - (m.unsure(name) if m is not None else frozenset())
            if all(i < first for i in lack):
                # listed from `first` on no evidence: say between which releases it came
                why = (f"added in {api.labels[first]}" if first in known or not known
                       else f"added after {api.labels[first - 1]}, by {api.labels[min(known)]}")
            elif all(i > last for i in lack) and last + 1 < len(api.labels):
                why = (f"removed in {api.labels[last + 1]}; last in {api.labels[last]}" if last in known or not known
                       else f"removed after {api.labels[max(known)]}, by {api.labels[last + 1]}")
            else:
                why = f"present in {api.label(ever)}"
            msg = f"{full} is not in {package} {api.label(lack)} ({why}); {scope.pin_text()}"
            before = self._predecessor(api, full, lack, first) if all(i < first for i in lack) else ""
            msg += before or (f"; {moved}" if moved else "")
        return [Finding(node, msg, extra_targets=scope.targets(lack))]


    def _predecessor(self, api, full: str, lack, first: int) -> str:
        """``; before 2.9.0 use transformer_engine.pytorch.fp8_autocast, the name it replaces``: the
        deprecated name ``full`` replaces (deprecations.toml, te_deprecations.toml), where every
        release that lacks ``full`` has it; one of the same module first."""
        home = full.rsplit(".", 1)[0]
        for old in sorted(self.predecessors.get(full, ()), key=lambda o: (o.rsplit(".", 1)[0] != home, len(o), o)):
            where = q.split(api, old)
            if where is None or len(where[1]) != 1:
                continue
            if not q.presence(api, where[0], where[1][0], lack).lack:
                return f"; before {api.labels[first]} use {old}, the name it replaces"
        return ""

    def _not_loaded(self, node, qualname: str, scope, fc) -> list[Finding]:
        parts = qualname.split(".")
        for k in range(1, len(parts)):
            parent, child = ".".join(parts[:k]), parts[k]
            m = scope.api.module(parent)
            if m is None:
                return []
            lazy = m.lazy(child)
            if not lazy or not set(scope.indices) <= lazy:
                continue
            imported = _file_imports(fc)
            if imported is None or any(i == f"{parent}.{child}" or i.startswith(f"{parent}.{child}.")
                                       for i in imported):
                return []
            full = f"{parent}.{child}"
            return [Finding(node, f"{full} is not loaded by `import {parts[0]}` in {scope.package} {scope.label()} "
                                  f"(AttributeError: module '{parent}' has no attribute '{child}'); add "
                                  f"`import {full}`; {scope.pin_text()}", extra_targets=scope.targets(lazy & set(scope.indices)))]
        return []


def _only_module(api, module: str, name: str) -> bool:
    """Is ``module.name`` a child module in every release that has it?"""
    m = api.module(module)
    entries = (m.entries(name) if m is not None else None) or []
    return bool(entries) and all(kind == "m" for _, kind, _ in entries)


def _short(text: str, limit: int = 160) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _file_imports(fc) -> set[str] | None:
    """Modules the file imports (``from a import b`` gives a and a.b); None when it imports
    anything but torch and the standard library, or anything relative: those may load more."""
    memo = fc.state.setdefault("AIC201.file_imports", {})
    if "v" in memo:
        return memo["v"]
    stdlib: frozenset[str] = getattr(sys, "stdlib_module_names", frozenset())
    out: set[str] | None = set()
    for n in _imports(fc.module):
        if n is None or n.split(".")[0] not in stdlib | {"torch", "__future__"}:
            out = None
            break
        assert out is not None  # a set until the break
        out.add(n)
    memo["v"] = out
    return out


def _imports(module: cst.Module):
    found: list[str | None] = []

    class V(cst.CSTVisitor):
        def visit_Import(self, node: cst.Import) -> None:
            found.extend(dotted(a.name) for a in node.names)

        def visit_ImportFrom(self, node: cst.ImportFrom) -> None:
            base = dotted(node.module) if node.module is not None and not node.relative else None
            found.append(base)
            if base and not isinstance(node.names, cst.ImportStar):
                found.extend(f"{base}.{a.name.value}" for a in node.names if isinstance(a.name, cst.Name))

    walk(module, V())
    return found


def _assigned(node: cst.Attribute, fc) -> bool:
    """Is ``node`` the target of the assignment it sits in (not read there)?"""
    stmt = fc.loc[1]  # the small statement (``Assign``), or its line
    smalls = stmt.body if isinstance(stmt, cst.SimpleStatementLine) else (stmt,)
    for small in smalls:
        if isinstance(small, cst.Assign) and any(t.target is node for t in small.targets):
            return True
        if isinstance(small, cst.AnnAssign) and small.target is node:
            return True
    return False


def _shimmed(node: cst.Attribute, fc) -> bool:
    """Is ``node`` set under ``if not hasattr(<its object>, "<its name>"):``? Elsewhere, setting a
    name a release lacks (``torch.backends.mkldnn.allow_tf32 = True``) silently sets nothing it reads."""
    code = fc.module.code_for_node
    want = (code(node.value), node.attr.value)
    for stmt in getattr(fc, "stmt_stack", ()):
        test = stmt.test if isinstance(stmt, cst.If) else None
        if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not) \
                and isinstance(test.expression, cst.Call) and isinstance(test.expression.func, cst.Name) \
                and test.expression.func.value == "hasattr" and len(test.expression.args) == 2:
            obj, name = (a.value for a in test.expression.args)
            if isinstance(name, cst.SimpleString) and (code(obj), name.evaluated_value) == want:
                return True
    return False


def _mark_inner(node, done: set[int]) -> None:
    """Mark ``node`` and the Attribute nodes inside it as judged."""
    while isinstance(node, cst.Attribute):
        done.add(id(node))
        node = node.value
