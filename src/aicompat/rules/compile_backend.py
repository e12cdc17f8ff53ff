"""AIC103 compile-backend: ``torch.compile`` calls that the pinned torch rejects
(facts: version_matrix/compile.toml, read from each release's wheel)."""

from __future__ import annotations

import difflib
import re

import libcst as cst
from packaging.version import Version

from ..core.ruleapi import DictValue, Example, Finding, Rule, options
from ..cuda import api as cuda_api

BOTH_ERROR = "Either mode or options can be specified, but both can't be specified at the same time."

_T = "import torch\n"


class CompileBackend(Rule):
    code = "AIC103"
    name = "compile-backend"
    tokens = (b"compile", b"_dynamo")

    VALID = [
        Example(_T + "m = torch.compile(model, backend='inductor', mode='max-autotune')\n", pins={"torch": "2.4.0"}),
        Example(_T + "def my_backend(gm, inputs):\n    return gm.forward\nm = torch.compile(model, backend=my_backend)\n",
                pins={"torch": "2.4.0"}),
        Example(_T + "import sys\nif sys.version_info < (3, 12):\n    f = torch.compile(f)\n", python="3.12",
                pins={"torch": "2.3.0"}),
        Example(_T + "try:\n    m = torch.compile(model, backend='tvm')\nexcept RuntimeError:\n    m = model\n",
                pins={"torch": "2.4.0"}),
        Example("import torch\nimport torch_tensorrt\nm = torch.compile(model, backend='tensorrt')\n",
                pins={"torch": "2.4.0"}),
        Example(_T + "m = torch.compile(model, mode='lite')\n", pins={"torch": "2.10.0"}),
    ]
    INVALID = [
        Example(_T + "m = torch.compile(model, backend='nvfuser')\n", pins={"torch": "2.4.0"},
                findings=[
                    (2, 34, 'torch.compile: backend="nvfuser" is not registered in torch 2.4.0: "Invalid backend: '
                            "'nvfuser', see `torch._dynamo.list_backends()` for available backends.\"; registered "
                            "by default: cudagraphs, inductor, onnxrt, openxla, tvm"),
                ]),
        Example(_T + "@torch.compile(mode='fast')\ndef f(x):\n    return x\n", pins={"torch": "2.13.0"},
                findings=[
                    (2, 21, 'torch.compile: mode="fast" is not a mode of torch 2.13.0: "Unrecognized mode=fast, '
                            "should be one of: default, lite, reduce-overhead, max-autotune-no-cudagraphs, "
                            'max-autotune"'),
                ]),
        Example(_T + "m = torch.compile(model, mode='max-autotune', options={'trace.enabled': True})\n",
                pins={"torch": "2.4.0"},
                findings=[
                    (2, 5, 'torch.compile: mode= and options= together: "Either mode or options can be specified, '
                           "but both can't be specified at the same time.\"; pass the mode's settings in options "
                           "instead"),
                ]),
        Example(_T + "@torch.compile\ndef f(x):\n    return x\n", python="3.12", pins={"torch": ">=2.2,<2.5"},
                findings=[
                    (2, 2, "torch.compile: torch 2.2.0, 2.2.1, 2.2.2, 2.3.0, 2.3.1 does not support Python 3.12: "
                           '"Dynamo is not supported on Python 3.12+"; use torch>=2.4.0 or an older Python'),
                ]),
        Example(_T + "m = torch.compile(model, backend='cudagraphs', mode='reduce-overhead')\n",
                pins={"torch": "2.4.0"},
                findings=[
                    (2, 53, 'torch.compile: backend="cudagraphs" takes no mode= in torch 2.4.0: at the first call '
                            'it raises "TypeError: CudagraphsBackend.__call__() got an unexpected keyword argument '
                            "'mode'\"; drop mode=, or use backend=\"inductor\", mode=\"reduce-overhead\""),
                ]),
        Example(_T + "m = torch.compile(model, backend='tensorrt')\n", pins={"torch": "2.13.0"},
                findings=[
                    (2, 34, 'torch.compile: backend="tensorrt" needs the torch-tensorrt package (torch_tensorrt), '
                            "which the pins do not include and this module does not import; pin it, or use "
                            'backend="inductor"'),
                ]),
        # A typo of a real mode: the message ends with the mode meant.
        Example(_T + "COMPILE = {'mode': 'max-autotune-no-cudagraph', 'fullgraph': True}\n\n\ndef build(model):\n"
                "    return torch.compile(model, **COMPILE)\n", pins={"torch": "2.13.0"},
                findings=[
                    (6, 35, 'torch.compile: mode="max-autotune-no-cudagraph" is not a mode of torch 2.13.0: '
                            '"Unrecognized mode=max-autotune-no-cudagraph, should be one of: default, lite, '
                            'reduce-overhead, max-autotune-no-cudagraphs, max-autotune"; use '
                            'mode="max-autotune-no-cudagraphs"'),
                ]),
        Example(_T + "m = torch.compile(model, mode='lite')\n", pins={"torch": ">=2.8,<2.11"},
                findings=[
                    (2, 31, 'torch.compile: mode="lite" is not a mode of torch 2.8.0, 2.9.0, 2.9.1: "Unrecognized '
                            "mode=lite, should be one of: default, reduce-overhead, max-autotune-no-cudagraphs, "
                            'max-autotune"'),
                ]),
        Example(_T + "opt = torch._dynamo.optimize('ipex')(model)\n", pins={"torch": "2.13.0"},
                findings=[
                    (2, 30, 'torch._dynamo.optimize: backend="ipex" is not registered in torch 2.13.0: "Invalid '
                            "backend: 'ipex', see `torch._dynamo.list_backends()` for available backends.\"; "
                            "registered by default: cudagraphs, inductor, openxla, tvm"),
                ]),
    ]

    def __init__(self, matrix) -> None:
        super().__init__(matrix)
        rel = matrix.section("compile.toml", "release")
        self.releases = sorted(((Version(k), v) for k, v in rel.items()), key=lambda kv: kv[0])
        self.packages = matrix.section("compile.toml", "backend_package")
        self.option_keys = matrix.section("inductor_options.toml", "keys")
        self.option_errors = {Version(k): e["error"] for k, e in matrix.section("inductor_options.toml", "release").items()}
        self.option_releases = sorted(self.option_errors)
        self.public_keys = [k for k in self.option_keys if not k.startswith("_")]
        self.entry_points = matrix.section("compile.toml", "entry_point")
        self.call_tails = frozenset(q.rsplit(".", 1)[-1] for q in self.entry_points)

    def known_names(self) -> set[str]:
        return set(self.entry_points)

    @classmethod
    def explain_facts(cls, matrix) -> str:
        lines = []
        for k, e in matrix.section("compile.toml", "release").items():
            lines.append(f"- torch {k}: default backends {', '.join(e['default'])}; modes {', '.join(e['modes'])}; "
                         f"Python < {e['python_max']}")
        return "\n".join(lines)

    def _facts(self, version: Version | None):
        """The table entry for a release (the newest one when torch is not pinned;
        None before the first release, where torch.compile does not exist)."""
        if version is None:
            return self.releases[-1]
        best = None
        for v, e in self.releases:
            if v <= version:
                best = (v, e)
        return best

    def _versions(self, fc, worlds=None) -> list[tuple[Version | None, Version, dict]]:
        seen, out = set(), []
        for w in sorted(fc.ctx.worlds if worlds is None else worlds, key=lambda w: str(w.torch)):
            if w.torch in seen:
                continue
            seen.add(w.torch)
            f = self._facts(w.torch)
            if f is not None:
                out.append((w.torch, f[0], f[1]))
        return out

    # -- calls and decorators -------------------------------------------------------
    def check_call(self, site, qualname, fc):
        entry = self.entry_points.get(qualname)
        if entry is None or site.has_star:
            return []
        if fc.ctx.caught("RuntimeError"):
            return []  # InvalidBackend and the Python check raise RuntimeError subclasses
        index, keyword = entry["backend"]
        backend_expr = site.arg(index if index >= 0 else None, keyword)
        mode_expr = site.kw.get(entry["mode"]) if "mode" in entry else None
        options_expr = site.kw.get(entry["options"]) if "options" in entry else None
        label = qualname
        missing = self._absent(site.node, qualname, fc)
        if missing:
            return missing
        out = self._python(site.node, label, fc)
        backend = "inductor"
        if backend_expr is not None:
            r = cuda_api.resolve_text(backend_expr, fc)
            if r is None:
                return out  # a callable or a value we cannot see: fine
            backend = r.text
            out += self._backend(backend_expr, label, backend, fc)
        if options_expr is not None and backend == "inductor":
            out += self._options(options_expr, label, fc)
        if mode_expr is not None and options_expr is not None:
            out.append(self._everywhere(site.node, f'{label}: mode= and options= together: "{BOTH_ERROR}"; '
                                                   f"pass the mode's settings in options instead", fc))
        elif mode_expr is not None:
            mr = cuda_api.resolve_text(mode_expr, fc)
            if mr is not None:
                out += self._mode(mode_expr, label, backend, mr.text, fc)
        return out

    def check_decorator(self, node: cst.Decorator, fc) -> list[Finding]:
        """A bare ``@torch.compile`` still runs the Python-version check."""
        qualname = fc.resolve(node.decorator)
        entry = self.entry_points.get(qualname)
        if entry is None or not entry["decorator"] or fc.ctx.caught("RuntimeError"):
            return []
        return self._absent(node.decorator, qualname, fc) or self._python(node.decorator, qualname, fc)

    def _absent(self, node, qualname, fc) -> list[Finding]:
        """Pinned releases from before the entry point existed (version_matrix/symbols.toml)."""
        if fc.ctx.caught("AttributeError") or qualname not in self.matrix.symbols:
            return []
        old = sorted({w.torch for w in fc.ctx.worlds if self.matrix.symbol_exists(qualname, w.torch) is False})
        if not old:
            return []
        added = self.matrix.symbols[qualname]["added"]
        module, name = qualname.rsplit(".", 1)
        msg = (f"{qualname}: not in torch {_span(old)} (added in {added}): \"AttributeError: module '{module}' has "
               f"no attribute '{name}'\"; pin torch>={added} or guard with hasattr({module}, '{name}')")
        return [self._everywhere(node, msg, fc, old)]

    # -- the checks ----------------------------------------------------------------------
    def _everywhere(self, node, msg, fc, versions=()) -> Finding:
        return Finding(node, msg, frozenset(w.arch for w in fc.ctx.worlds),
                       extra_targets=tuple(f"torch=={v}" for v in versions))

    def _python(self, node, label, fc):
        py = fc.target.python
        bad = [(v, e) for v, _rel, e in self._versions(fc) if _pyver(py) >= _pyver(e["python_max"])]
        if not bad:
            return []
        first_ok = next((v for v, e in self.releases if _pyver(py) < _pyver(e["python_max"])), None)
        versions = [v for v, _ in bad if v is not None]
        fix = f"use torch>={first_ok} or an older Python" if first_ok else "use an older Python"
        where = _span(versions) if versions else "the newest torch"
        msg = (f'{label}: torch {where} does not support Python {py[0]}.{py[1]}: "{bad[0][1]["python_error"]}"; {fix}')
        return [self._everywhere(node, msg, fc, versions)]

    def _backend(self, node, label, backend, fc):
        out = []
        pkg = self.packages.get(backend)
        versions = self._versions(fc)
        if pkg is not None:
            have = pkg["module"] in fc.index.imported_roots or pkg["distribution"] in fc.target.pins
            registered_somewhere = any(backend in e["registered"] for _, _, e in versions)
            if not have and (registered_somewhere or backend in ("tensorrt", "torch_tensorrt")):
                msg = (f'{label}: backend="{backend}" needs the {pkg["distribution"]} package ({pkg["module"]}), '
                       f"which the pins do not include and this module does not import; pin it, or use "
                       f'backend="inductor"')
                return [self._everywhere(node, msg, fc)]
            if have:
                return []
        bad = [(v, e) for v, _rel, e in versions if backend not in e["registered"]]
        if not bad:
            return []
        e = bad[-1][1]
        closest = difflib.get_close_matches(backend, e["default"], n=2)
        hint = f'did you mean "{closest[0]}"? ' if closest else ""
        error = e["invalid_backend_error"]
        if closest and "invalid_backend_suggest" in e:  # torch names the close matches itself (2.14+)
            error, hint = e["invalid_backend_suggest"].replace("{suggestions}", ", ".join(map(repr, closest))), ""
        error = error.replace("{name!r}", repr(backend))
        pinned = [v for v, _ in bad if v is not None]
        where = f"torch {_span(pinned)}" if pinned else "the newest torch"
        out.append(self._everywhere(node, f'{label}: backend="{backend}" is not registered in {where}: "{error}"; '
                                          f"{hint}registered by default: {', '.join(e['default'])}", fc, pinned))
        return out

    def _options(self, expr, label, fc) -> list[Finding]:
        """Option keys inductor does not know in a pinned release (version_matrix/inductor_options.toml).

        The keys are those of the dict the value model says ``options=`` may be, in each
        world and under each way the enclosing function is called (a dict a caller passes,
        one a helper returns, one per branch); a finding sits on the key where the dict
        is written at the call, else on the argument."""
        at: dict[str, cst.BaseExpression] = {}  # key -> its node, for a dict written at the call
        if isinstance(expr, cst.Dict):
            for el in expr.elements:
                if isinstance(el, cst.DictElement):
                    r = cuda_api.resolve_text(el.key, fc)
                    if r is not None:
                        at.setdefault(r.text, el.key)
        worlds_of: dict[str, set] = {}  # key -> worlds it reaches the call in
        scenarios = fc.scenarios()
        for w in sorted(fc.ctx.worlds, key=lambda w: (w.arch, str(w.torch))):
            for _call, bindings in scenarios:
                for v in options(fc.value_of(expr, w, bindings)):
                    if isinstance(v, DictValue):
                        for k, _ in v.items:
                            if isinstance(k, str):
                                worlds_of.setdefault(k, set()).add(w)
        out = []
        for text, worlds in worlds_of.items():
            key = text.replace("-", "_")
            spans = self.option_keys.get(key, [])
            bad = []
            for torch_v, rel_v, _e in self._versions(fc, worlds):
                table = next((v for v in reversed(self.option_releases) if v <= rel_v), None)
                if table is None:
                    continue
                have = any(Version(spans[i]) <= table <= Version(spans[i + 1]) for i in range(0, len(spans), 2))
                if not have:
                    bad.append((torch_v, table))
            if not bad:
                continue
            pinned = [v for v, _ in bad if v is not None]
            where = f"torch {_span(pinned)}" if pinned else "the newest torch"
            hint = self._option_hint(key, text, spans, bad[-1][1])
            error = _option_error(self.option_errors[bad[-1][1]], text)
            out.append(self._everywhere(at.get(text, expr), f'{label}: option "{text}" is not an inductor option in '
                                        f'{where}: "{error}"{hint}', fc, pinned))
        return out

    def _option_hint(self, key: str, text: str, spans: list, table: Version) -> str:
        """The fix: the releases that accept the key, else the closest key of the failing release."""
        if spans:
            ranges = ", ".join(spans[i] if spans[i] == spans[i + 1] else f"{spans[i]}-{spans[i + 1]}"
                               for i in range(0, len(spans), 2))
            return f'; "{text}" is accepted by torch {ranges}'
        present = [k for k in self.public_keys
                   if any(Version(sp[i]) <= table <= Version(sp[i + 1])
                          for sp in [self.option_keys[k]] for i in range(0, len(sp), 2))]
        close = difflib.get_close_matches(key, present, n=1)
        return f'; did you mean "{close[0]}"?' if close else ""

    def _mode(self, node, label, backend, mode, fc):
        versions = self._versions(fc)
        if backend == "inductor":
            bad = [(v, e) for v, _rel, e in versions if mode not in e["modes"]]
            if not bad:
                return []
            e = bad[-1][1]
            pinned = [v for v, _ in bad if v is not None]
            where = f"torch {_span(pinned)}" if pinned else "the newest torch"
            msg = (f'{label}: mode="{mode}" is not a mode of {where}: "Unrecognized mode={mode}, should be one of: '
                   f'{", ".join(e["modes"])}"')
            # The mode every release in scope has that is nearest the typo (max-autotune-no-cudagraph ->
            # max-autotune-no-cudagraphs), else the release's own list is all the fix there is.
            common = [m for m in e["modes"] if all(m in x["modes"] for _v, x in bad)]
            near = difflib.get_close_matches(mode, common, n=1, cutoff=0.75)
            if near:
                msg += f'; use mode="{near[0]}"'
            return [self._everywhere(node, msg, fc, pinned)]
        if backend == "cudagraphs":
            bad = [(v, e) for v, _rel, e in versions if e["mode_kwarg_error"]]
            if not bad:
                return []
            pinned = [v for v, _ in bad if v is not None]
            where = f"torch {_span(pinned)}" if pinned else "the newest torch"
            msg = (f'{label}: backend="cudagraphs" takes no mode= in {where}: at the first call it raises '
                   f'"{bad[-1][1]["mode_kwarg_error"]}"; drop mode=, or use backend="inductor", mode="reduce-overhead"')
            return [self._everywhere(node, msg, fc, pinned)]
        return []


def _option_error(template: str, key: str) -> str:
    """apply_options' f-string as written in the release, for one key; the list of every
    known option it ends with (hundreds of names) is shortened to [...]."""
    return re.sub(r"\{[^{}]*\}", "[...]", template.replace("{key}", key))


def _pyver(v) -> tuple[int, int]:
    if isinstance(v, tuple):
        return v
    major, minor = str(v).split(".")[:2]
    return int(major), int(minor)


def _span(versions) -> str:
    vs = [str(v) for v in versions]
    if len(vs) <= 5:  # "and 1 more" would be longer than the name it hides
        return ", ".join(vs)
    return ", ".join(vs[:4]) + f" and {len(vs) - 4} more"
