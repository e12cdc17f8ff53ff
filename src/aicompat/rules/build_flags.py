"""AIC302 build-arch-flags: arch lists that leave a fleet member without code it
can run, name targets the configured CUDA toolkit cannot build, or that torch
rejects (facts: version_matrix/gpus.toml [target.*], build.toml)."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

import libcst as cst

from ..core.ruleapi import DictValue, Example, Finding, Rule, TextFinding, is_makefile, walk
from ..cuda import api as cuda_api

ENV_NAME = "TORCH_CUDA_ARCH_LIST"
# Calls whose keyword carries nvcc flags: cpp_extension.load/load_inline(extra_cuda_cflags=[...]),
# CUDAExtension(extra_compile_args={"nvcc": [...]}). Not CuPy's options=(...): CuPy appends
# -arch=sm_<the running GPU> after them, and what NVRTC makes of the two is AIC301's
# (cuda_jit.toml [nvrtc_arch.*], rules/inline_cuda.py _cupy_plan).
FLAG_CALLS = {
    "torch.utils.cpp_extension.load_inline": "extra_cuda_cflags",
    "torch.utils.cpp_extension.load": "extra_cuda_cflags",
    "torch.utils.cpp_extension.CUDAExtension": "extra_compile_args",
}
# Calls that start a process with the environment ``env=`` (subprocess: Popen(args, ..., env=None, ...)
# and the helpers that pass **kwargs to it; os.exec*e/spawn*e take it as their last argument).
ENV_CALLS = {f"subprocess.{f}" for f in ("run", "Popen", "call", "check_call", "check_output")}
# Calls that run a command line given as one string (a shell).
SHELL_CALLS = {"os.system", "os.popen"}
# Calls that load a compiled module from a file built elsewhere: (position, keyword) of the path.
# cupy.RawModule(code=None, *, path=None, ...); pycuda.driver.module_from_file(filename).
LOAD_CALLS = {"cupy.RawModule": (None, "path"), "pycuda.driver.module_from_file": (0, "filename")}
# Arguments of nvcc that name what is built.
_ARCH_WORD = re.compile(r"arch|gencode|sm_\d|compute_\d|gpu-code|^-code")


class BuildArchFlags(Rule):
    code = "AIC302"
    name = "build-arch-flags"
    tokens = (b"TORCH_CUDA_ARCH_LIST", b"gencode", b"-arch", b"gpu-architecture", b"CUDA_ARCHITECTURES",
              b"extra_cuda_cflags", b"extra_compile_args")

    VALID = [
        Example("import os\nos.environ['TORCH_CUDA_ARCH_LIST'] = '8.0;9.0+PTX'\n", gpus=["A100", "H100"]),
        Example("from torch.utils.cpp_extension import load_inline\n"
                "load_inline('k', '', cuda_sources=S, extra_cuda_cflags=['-gencode=arch=compute_90a,code=sm_90a',\n"
                "            '-gencode=arch=compute_100a,code=sm_100a'])\n", gpus=["H100", "B200"]),
        Example("import os\nos.environ['TORCH_CUDA_ARCH_LIST'] = '8.0+PTX'\n", gpus=["A100", "H100", "L4"]),
        Example("import os\nos.environ.setdefault('TORCH_CUDA_ARCH_LIST', '10.0')\n", gpus=["B200"], ),
        Example("import os\nos.environ['TORCH_CUDA_ARCH_LIST'] = os.getenv('TORCH_CUDA_ARCH_LIST', '9.0;10.0')\n",
                gpus=["H100", "B200"]),
        # "" is unset to torch: it builds for the build machine's GPUs, which no file says.
        Example("import os\nos.environ['TORCH_CUDA_ARCH_LIST'] = ''\n", gpus=["H100", "B200"]),
        # Single-arch by design: wgmma compiles for sm_90a alone, so no A100 target would build (a note).
        Example("from torch.utils.cpp_extension import load_inline\n"
                "SRC = '__global__ void k() { asm volatile(\"wgmma.fence.sync.aligned;\"); }'\n"
                "load_inline('k', '', cuda_sources=SRC, extra_cuda_cflags=['-gencode=arch=compute_90a,code=sm_90a'])\n",
                gpus=["A100", "H100"]),
    ]
    INVALID = [
        Example("from torch.utils.cpp_extension import load_inline\n"
                "load_inline('k', '', cuda_sources=S, extra_cuda_cflags=['-O3', '-gencode=arch=compute_90f,code=sm_90f'])\n",
                gpus=["H100"],
                findings=[
                    (2, 56, "load_inline extra_cuda_cflags: compute_90f is no compile target (no CUDA toolkit up to "
                            "13.0 has it): \"nvcc fatal   : Unsupported gpu architecture 'compute_90f'\"; use compute_90"),
                ]),
        Example("import os\nos.environ['TORCH_CUDA_ARCH_LIST'] = os.getenv('TORCH_CUDA_ARCH_LIST', '9.0')\n",
                gpus=["H100", "B200"],
                findings=[
                    (2, 38, "TORCH_CUDA_ARCH_LIST='9.0' (when TORCH_CUDA_ARCH_LIST is unset) builds sm_90: no code "
                            "for sm_100 (B200), which then fails with \"no kernel image is available for execution "
                            "on the device\"; use TORCH_CUDA_ARCH_LIST=\"9.0;10.0+PTX\""),
                ]),
        Example("import os\nos.environ['TORCH_CUDA_ARCH_LIST'] = '10.0'\n", gpus=["H100"],
                findings=[
                    (2, 38, "TORCH_CUDA_ARCH_LIST='10.0' builds sm_100: no code for sm_90 (H100), which then fails "
                            'with "no kernel image is available for execution on the device"; use '
                            'TORCH_CUDA_ARCH_LIST="9.0+PTX"'),
                ]),
        Example("import os\nos.environ['TORCH_CUDA_ARCH_LIST'] = '9.0;10.0f'\n", gpus=["H100"],
                findings=[
                    (2, 38, "TORCH_CUDA_ARCH_LIST='9.0;10.0f': torch rejects '10.0f': \"ValueError: Unknown CUDA "
                            "arch (10.0f) or GPU not supported\"; use TORCH_CUDA_ARCH_LIST=\"9.0+PTX\" (entries are "
                            "X.Y or X.Ya, with +PTX: no 'f' targets, no sm_/compute_ prefixes)"),
                ]),
        Example("from torch.utils.cpp_extension import load_inline\n"
                "load_inline('k', '', cuda_sources=S, extra_cuda_cflags=['-gencode=arch=compute_90a,code=sm_90a'])\n",
                gpus=["H100", "B200"],
                findings=[
                    (2, 56, "load_inline extra_cuda_cflags builds sm_90a: no code for sm_100 (B200), which then "
                            'fails with "no kernel image is available for execution on the device"; use '
                            "-gencode=arch=compute_90a,code=sm_90a -gencode=arch=compute_100a,code=sm_100a"),
                ]),
        # The same build of a kernel any GPU compiles: sm_90a was a choice, not a need.
        Example("from torch.utils.cpp_extension import load_inline\n"
                "SRC = '__global__ void k(float* x) { x[threadIdx.x] *= 2.0f; }'\n"
                "load_inline('k', '', cuda_sources=SRC, extra_cuda_cflags=['-gencode=arch=compute_90a,code=sm_90a'])\n",
                gpus=["A100", "H100"],
                findings=[
                    (3, 58, "load_inline extra_cuda_cflags builds sm_90a: no code for sm_80 (A100), which then "
                            'fails with "no kernel image is available for execution on the device"; use '
                            "-gencode=arch=compute_80,code=sm_80 -gencode=arch=compute_90a,code=sm_90a"),
                ]),
        Example("import subprocess\nsubprocess.run(['python', 'setup.py', 'build_ext'],\n"
                "               env={'TORCH_CUDA_ARCH_LIST': '8.0 8.6'})\n", gpus=["A100", "RTX 4090", "H100"],
                findings=[
                    (3, 45, "TORCH_CUDA_ARCH_LIST='8.0 8.6' builds sm_80, sm_86: no code for sm_90 (H100), which "
                            'then fails with "no kernel image is available for execution on the device"; use '
                            'TORCH_CUDA_ARCH_LIST="8.0;8.9;9.0+PTX"'),
                ]),
        Example("import os\nimport subprocess\nenv = dict(os.environ)\nenv['TORCH_CUDA_ARCH_LIST'] = '9.0'\n"
                "subprocess.run(['python', 'setup.py', 'build_ext'], env=env)\n", gpus=["A100", "H100"],
                findings=[
                    (5, 57, "TORCH_CUDA_ARCH_LIST='9.0' builds sm_90: no code for sm_80 (A100), which then fails "
                            'with "no kernel image is available for execution on the device"; use '
                            'TORCH_CUDA_ARCH_LIST="8.0;9.0+PTX"'),
                ]),
    ]

    def __init__(self, matrix) -> None:
        super().__init__(matrix)
        self._features: Any = None  # the CUDA feature tables, loaded when a build's sources are first read
        calls = {*FLAG_CALLS, *ENV_CALLS, *SHELL_CALLS, *LOAD_CALLS}
        self.call_tails = frozenset({"setdefault", "putenv"} | {q.rsplit(".", 1)[-1] for q in calls})

    def known_names(self) -> set[str]:
        return set(FLAG_CALLS)

    # -- judging one build -------------------------------------------------------
    def judge(self, build: cuda_api.Build, archs, cuda: str | None, what: str,
              style: str = "nvcc", sources: Sources | None = None) -> list[tuple[str, frozenset, str]]:
        """(message, failing archs, severity) for a build against the fleet and toolkit. A
        ``partial`` build (flags not all known) is judged only on the targets it names: a GPU
        left without code needs the whole list. ``style``: how the build spells a target
        (nvcc flags, TORCH_CUDA_ARCH_LIST entries, CMake architectures), for the fix.
        ``sources``: what the build compiles, where known; a GPU none of whose targets
        compiles them is left out by design (a note, no finding)."""
        out = []
        archs = self._judged(archs)
        refused = cuda_api.refusal(build, cuda, self.matrix)
        # A name no toolkit has (compute_80a) is no build at all: what it covers is judged once it is
        # spelled right. A target this toolkit lacks is real, and what the list covers still matters.
        whole = not build.partial and (refused is None or refused.why != "invalid")
        missing = [a for a in archs if cuda_api.code_for(a, build, self.matrix) is None] if whole else []
        if missing and sources is not None and sources.items:
            missing = [a for a in missing if not self._by_design(a, cuda, what, sources, build)]
        if missing:
            out.append((f"{what} builds {_describe_build(build)}: no code for {{fleet}}, which then fails with "
                        f"\"no kernel image is available for execution on the device\"; {{fix}}",
                        frozenset(missing), "error"))
        if refused is not None:
            out.append((self._refusal_message(refused, cuda, what, style), frozenset(archs), "error"))
        return out

    def _by_design(self, arch: str, cuda: str | None, what: str, sources: Sources, build: cuda_api.Build) -> bool:
        """No compile target whose code runs on ``arch`` compiles the build's sources: giving the
        GPU code would fail the build, so its absence is the build's design (said in a note)."""
        targets = list(reversed(cuda_api.candidates(arch, self.matrix, cuda)))  # newest first: most pass there
        if self._features is None:
            self._features = cuda_api.load_features(self.matrix)
        fleet = list(self.target.archs) if self.target is not None else [arch]

        def build_of(path: Path) -> dict | None:
            """The -D flags the project's build of ``path`` passes (cuda/build/context.py), when one
            build is seen for it."""
            ctx = cuda_api.context_for(path, fleet, self.matrix, cuda)
            if sources.reads is not None:
                sources.reads.extend(r for r in ctx.reads if r not in sources.reads)
            seen = {(o.defines, o.defines_known, o.undefined): o for o in ctx.origins if o.kind in ("build", "fleet")}
            return cuda_api.define_fields(next(iter(seen.values()))) if len(seen) == 1 else None

        b = cuda_api.blocker(list(sources.items), targets, self._features, _toolkit(cuda), sources.defines,
                             sources.reads, built=tuple(dict.fromkeys([*build.cubins, *build.ptx])),
                             build_of=build_of)
        if b is None:
            return False
        gpu = self.target.describe([arch]) if self.target is not None else arch
        spot = f"{_shown(b.file)}:{b.line}" if b.file is not None else f"its inline source, line {b.line}"
        note = (f"AIC302: {what} builds no code for {gpu} by design: {spot} uses {b.feature} ({b.token!r}), which "
                f"no compile target for that GPU compiles, so adding one would fail the build; not reported")
        if note not in self.notes:
            self.notes.append(note)
        return True

    def _refusal_message(self, r, cuda: str | None, what: str, style: str) -> str:
        """A target nvcc refuses: why, nvcc's own words, and the fix (which fails the whole build)."""
        entry = _spelled(r.name, style)
        said = f"\"{r.error}\""
        if r.why == "too_new":
            return (f"{what}: CUDA {cuda} cannot build {r.target} (first supported by CUDA {r.toolkit}): {said}; "
                    f"build with CUDA {r.toolkit} or newer, or drop {entry}")
        if r.why == "dropped":
            return (f"{what}: CUDA {cuda} cannot build {r.target} (dropped in CUDA {r.toolkit}): {said}; "
                    f"drop {entry}, or build with a toolkit before CUDA {r.toolkit}")
        plain = re.sub(r"[a-z]+$", "", r.target)
        known = plain in self.matrix.targets or plain in self.matrix.dropped_targets
        use = f"use {_spelled(re.sub(r'[a-z]+$', '', r.name), style)}" if known and plain != r.target \
            else f"drop {entry}"
        return (f"{what}: {r.name} is no compile target (no CUDA toolkit up to {cuda_api.newest_toolkit(self.matrix)} "
                f"has it): {said}; {use}")

    def _judged(self, archs) -> list[str]:
        """The fleet GPUs CUDA 13.0's compile targets can serve; the others are said once (a note)."""
        note = self.matrix.unbuilt_note(archs, "AIC302", self.target.describe) if self.target is not None else None
        if note is not None and note not in self.notes:
            self.notes.append(note)
        return [a for a in archs if self.matrix.buildable(a)]

    def torch_value(self, archs, target) -> tuple[str | None, str]:
        """The TORCH_CUDA_ARCH_LIST every pinned torch release accepts that serves the fleet."""
        return cuda_api.torch_arch_fix(archs, self.matrix, _torch_releases(target))

    def fix_torch(self, archs, target=None) -> str:
        value, why = self.torch_value(archs, target)
        if value is None:
            return f"no {ENV_NAME} value works: {why}"
        return f"use {ENV_NAME}=\"{value}\""

    def _rejects(self, what: str, bad: list[str], use: str, target) -> str:
        """The message for entries torch refuses, naming the pinned releases that refuse them;
        ``use`` is fix_torch's advice for the fleet."""
        releases = _torch_releases(target)
        who = "torch"
        if releases:
            refusing = cuda_api.refusing_releases(bad[0], self.matrix, releases)
            who = f"torch {_span(refusing)}" if refusing else who
        # An entry no release takes (10.0f, sm_90) is a spelling to correct; one newer releases
        # take (10.0 under 2.5) is a release to upgrade or an arch to leave to PTX.
        hint = (" (entries are X.Y or X.Ya, with +PTX: no 'f' targets, no sm_/compute_ prefixes)"
                if cuda_api.refusing_releases(bad[0], self.matrix) else "")
        return (f"{what}: {who} rejects {', '.join(repr(b) for b in bad)}: \"ValueError: Unknown CUDA arch ({bad[0]}) "
                f"or GPU not supported\"; {use}{hint}")

    def fix_gencode(self, archs, build: cuda_api.Build | None = None) -> str:
        """One -gencode per fleet arch; arch-specific ('a') where the build used 'a' targets."""
        specific = bool(build and any(c.endswith("a") for c in build.cubins))
        parts = []
        for n in sorted({a[3:] for a in archs}, key=int):
            sfx = "a" if specific and f"sm_{n}a" in self.matrix.targets else ""
            parts.append(f"-gencode=arch=compute_{n}{sfx},code=sm_{n}{sfx}")
        return "use " + " ".join(parts)

    def _call_sources(self, site, qualname: str, flags: list, fc) -> Sources:
        """The CUDA sources a compile call names, those the value model knows: CUDAExtension's and
        load's ``sources`` files, load_inline's ``cuda_sources`` strings."""
        defines = cuda_api.nvcc_defines([f for f in flags if isinstance(f, str)])
        if qualname.endswith("load_inline"):
            arg = site.arg(2, "cuda_sources")
            parts = [e.value for e in arg.elements if isinstance(e, cst.Element)] \
                if isinstance(arg, (cst.List, cst.Tuple)) else [arg] if arg is not None else []
            texts = [cuda_api.resolve_text(p, fc) for p in parts]
            return Sources(tuple(r.text for r in texts if r is not None), defines)
        arg = site.arg(1, "sources")
        files = cuda_api.read_files(arg, fc) if arg is not None else []
        return Sources(tuple(r.file for r in files if r.file is not None), defines, fc.reads)

    def _file_sources(self, fc) -> Sources | None:
        """The CUDA sources of the CUDAExtensions the linted file itself declares (a setup.py that
        sets TORCH_CUDA_ARCH_LIST for its own build), read once per file."""
        if "CUDAExtension" not in fc.text or not fc.path or fc.path.startswith("<"):
            return None
        if "AIC302.file_sources" not in fc.state:
            path = Path(fc.path).resolve()
            exts = cuda_api.setup_extensions(path, fc.text) if path.is_file() else []
            files = tuple(dict.fromkeys(s for e in exts for s in e.sources))
            # -D flags every extension passes: the ones a by-design verdict may rely on
            common = {k: v for k, v in exts[0].defines.items() if all(e.defines.get(k) == v for e in exts)} \
                if exts else {}
            fc.state["AIC302.file_sources"] = Sources(files, common, fc.reads) if files else None
        return fc.state["AIC302.file_sources"]

    def _findings(self, node, build, bad, fc, what, kind, sources: Sources | None = None) -> list[Finding]:
        archs = sorted({w.arch for w in fc.ctx.worlds})
        out = []
        torch_fix = self.fix_torch(archs, fc.target) if kind == "torch" or bad else ""
        if bad:
            out.append(Finding(node, self._rejects(what, bad, torch_fix, fc.target), frozenset(archs)))
        fix = torch_fix if kind == "torch" else self.fix_gencode(archs, build)
        style = "torch" if kind == "torch" else "nvcc"
        for msg, failing, sev in self.judge(build, archs, fc.target.cuda, what, style, sources):
            out.append(Finding(node, msg.format(fleet=fc.describe(failing), fix=fix), failing, severity=sev))
        return out

    # -- Python ----------------------------------------------------------------------
    def check_call(self, site, qualname, fc):
        if qualname in ("os.environ.setdefault", "os.putenv") and len(site.pos) > 1:
            if fc.value_everywhere(site.pos[0]) == ENV_NAME:
                return self._in_process(self._env_value(site.pos[1], fc), fc)
            return []
        if qualname in LOAD_CALLS:
            return self._loaded_file(site, qualname, fc)
        if qualname in ENV_CALLS or qualname in SHELL_CALLS:
            found = self._nvcc_call(site, qualname, fc)
            return found + (self._process_env(site.kw.get("env"), fc) if qualname in ENV_CALLS else [])
        kw = FLAG_CALLS.get(qualname)
        if kw is None:
            return []
        expr = site.kw.get(kw)
        value = _nvcc_list(fc.value_everywhere(expr), kw) if expr is not None else ()
        flags: list | None = cuda_api.strings_of(value)
        fc.state.setdefault("AIC302.explicit", []).append(self._explicit(cuda_api.known_strings(value)))
        if expr is None:
            return []
        unset: frozenset[str] = frozenset()
        if flags is None:
            # Not known: the list a build gets with the environment variables it reads unset
            # (os.getenv("ARCHS", "80;90")), else its known flags alone (a partial build).
            default, unset = fc.value_if_env_unset(expr)
            flags = cuda_api.strings_of(_nvcc_list(default, kw)) if unset else None
            if flags is None:
                flags, unset = cuda_api.known_strings(value), frozenset()
        if not flags or not any(f and "arch" in f for f in flags):
            return []
        build = cuda_api.parse_nvcc_flags(flags, self.matrix, fc.target.cuda)
        if build.empty() and not build.named:
            return []
        short = qualname.rsplit(".", 1)[-1]
        found = self._findings(expr, build, [], fc, f"{short} {kw}{_when_unset(unset)}", "gencode",
                               self._call_sources(site, qualname, flags, fc))
        if build.partial or unset:
            return found
        literal = _flag_literal(expr, kw, cast(list, flags), fc)
        if literal is not None and any(f.archs and "no code for" in f.message for f in found):
            fix = self._flag_list_fix(literal, build, fc)
            if fix is not None:
                for f in found:
                    f.node, f.fix = literal, fix
        return found

    def _nvcc_call(self, site, qualname, fc) -> list[Finding]:
        """``subprocess.run(["nvcc", "-arch=sm_100", ...])``, ``os.system("nvcc ...")``."""
        arg = site.arg(0, "args") if qualname in ENV_CALLS else site.arg(0, "command")
        if arg is None:
            return []
        value = fc.value_everywhere(arg)
        if isinstance(value, str):
            cmds: list[list] = [[w.text for w in c] for c in cuda_api.commands(value)]  # a word None: not known
        else:
            items = cuda_api.known_strings(value)  # None where a word is not known
            cmds = [items] if items else []
        out = []
        for words in cmds:
            judged = self._nvcc_build(words, fc.target.cuda)
            if judged is None:
                continue
            build, what, fix = judged
            archs = sorted({w.arch for w in fc.ctx.worlds})
            for msg, failing, sev in self.judge(build, archs, fc.target.cuda, what):
                out.append(Finding(arg, msg.format(fleet=fc.describe(failing), fix=fix(archs)), failing,
                                   severity=sev))
        return out

    def _loaded_file(self, site, qualname, fc) -> list[Finding]:
        """``cupy.RawModule(path="attn.cubin")``: judged by the nvcc command of the project's
        scripts or Makefiles that writes that file (``-o attn.cubin``)."""
        arg = site.arg(*LOAD_CALLS[qualname])
        value = fc.value_everywhere(arg) if arg is not None else None
        name = value.replace("\\", "/").rsplit("/", 1)[-1] if isinstance(value, str) else None
        if not name or not name.endswith((".cubin", ".fatbin", ".ptx")):
            return []
        found = cuda_api.producer(Path(fc.path), name, fc.reads)
        if found is None:
            return []
        words, where = found
        judged = self._nvcc_build(words, fc.target.cuda)
        if judged is None:
            return []
        build, what, fix = judged
        archs = sorted({w.arch for w in fc.ctx.worlds})
        label = qualname.rsplit(".", 1)[-1] if qualname.startswith("pycuda") else qualname
        out = []
        for msg, failing, sev in self.judge(build, archs, fc.target.cuda, f"{label}: {name} ({where}: {what})"):
            out.append(Finding(arg, msg.format(fleet=fc.describe(failing), fix=fix(archs)), failing, severity=sev))
        return out

    def _nvcc_build(self, words: list, cuda):
        """(build, what, fix) of an nvcc command line (words None where not known), or None
        when it is no nvcc command or what it builds is not known."""
        if not cuda_api.is_nvcc(words):
            return None
        args = words[1:]
        if not any(w is not None and _ARCH_WORD.search(w) for w in args):
            return None  # no target named: nvcc's default arch, which depends on the toolkit
        # A word the file does not fix (${ARCH_FLAGS}) may name more targets: a partial build,
        # judged only on the -gencode targets it names.
        build = cuda_api.parse_nvcc_flags(args, self.matrix, cuda)
        if build.partial and not build.named or not build.partial and (build.empty() or build.unknown):
            return None
        shown = [w for w in args if w is not None and _ARCH_WORD.search(w)]
        what = f"nvcc {' '.join(shown)}"
        single = "-cubin" in args or "--cubin" in args

        def fix(archs):
            use = self.fix_gencode(archs, build)
            # A cubin holds one target ("Option '--cubin' is not allowed when compiling for multiple GPU
            # code instances", nvcc 13.0): a fatbin holds them all.
            return use.replace("use ", "build a fatbin instead (-fatbin) with ", 1) if single else use
        return build, what, fix

    def _command_findings(self, cmds, target, cuda) -> list:
        out = []
        for cmd in cmds:
            judged = self._nvcc_build([w.text for w in cmd], cuda)
            if judged is None:
                continue
            build, what, fix = judged
            for msg, failing, sev in self.judge(build, target.archs, cuda, what):
                out.append(TextFinding(cmd[0].line, cmd[0].col, msg.format(fleet=target.describe(failing),
                                                                            fix=fix(target.archs)), failing, sev))
        return out

    def _makefile_findings(self, text: str, target, cuda) -> list:
        """A Makefile, one configuration of its conditionals at a time (cuda/build/makefile.py):
        a GPU lacks code where no configuration of the command builds any for it (each machine
        may choose its own); any other finding is its configuration's, named when not all have it."""
        cfgs = cuda_api.configurations(text)
        if len(cfgs) <= 1:
            return self._command_findings(cfgs[0].commands if cfgs else [], target, cuda)
        alts: dict[tuple, list] = {}
        for cfg in cfgs:
            for cmd in cfg.commands:
                judged = self._nvcc_build([w.text for w in cmd], cuda)
                if judged is not None:
                    alts.setdefault((cmd[0].line, cmd[0].col), []).append((cfg.label, judged))
        out = []
        for (line, col), got in sorted(alts.items()):
            served = {a for _l, (b, _w, _f) in got for a in target.archs if cuda_api.code_for(a, b, self.matrix) is not None}
            found: dict[str, list] = {}
            for label, (build, what, fix) in got:
                for msg, failing, sev in self.judge(build, target.archs, cuda, what):
                    if "{fleet}, which then fails" in msg:  # no code for them
                        failing = frozenset(a for a in failing if a not in served)
                    if failing:
                        text_ = msg.format(fleet=target.describe(failing), fix=fix(target.archs))
                        found.setdefault(text_, [failing, sev, []])[2].append(label)
            for text_, (failing, sev, labels) in found.items():
                if len(labels) < len(cfgs) and labels[0]:
                    text_ = f"{text_} (in the Makefile configuration {labels[0]})"
                out.append(TextFinding(line, col, text_, failing, sev))
        return out

    def _process_env(self, expr, fc) -> list[Finding]:
        """``env=`` of a process start: the arch list in the dict the value model
        gives it (``env = dict(os.environ); env["TORCH_CUDA_ARCH_LIST"] = "9.0"``).
        A dict literal naming the list is judged where it is written (check_dict)."""
        if expr is None or isinstance(expr, cst.Dict) or _has_env_dict_literal(fc):
            return []
        env = fc.value_everywhere(expr)
        value = env.get(ENV_NAME) if isinstance(env, DictValue) else None
        return self._judge_env_text(value, expr, fc) if isinstance(value, str) else []

    def _flag_list_fix(self, expr, build: cuda_api.Build, fc) -> str | None:
        """The flag list with its arch flags replaced by one -gencode per fleet arch.

        Only for a literal list of plain strings without comments; other flags
        keep their order; PTX for the newest arch is kept when the build had PTX."""
        if not isinstance(expr, (cst.List, cst.Tuple)) or "#" in fc.module.code_for_node(expr):
            return None
        strings = []
        for el in expr.elements:
            if not (isinstance(el, cst.Element) and isinstance(el.value, cst.SimpleString)
                    and el.value.prefix in ("", "r")):
                return None
            strings.append(el.value)
        quote = strings[0].quote if strings else '"'
        values = [cast(str, s.evaluated_value) for s in strings]  # prefix "" or "r": a str
        kept, skip = [], False
        for v in values:
            if skip:
                skip = False
                continue
            if v in ("-gencode", "--generate-code", "-arch", "--gpu-architecture", "-code", "--gpu-code"):
                skip = True  # the value follows as the next element
                continue
            if v.startswith(("-gencode", "--generate-code", "-arch=", "--gpu-architecture=", "-code=", "--gpu-code=")):
                continue
            kept.append(v)
        archs = sorted({w.arch for w in fc.ctx.worlds})
        new = self.fix_gencode(archs, build)[len("use "):].split()
        if build.ptx:
            newest = max((a[3:] for a in archs), key=int)
            new.append(f"-gencode=arch=compute_{newest},code=compute_{newest}")
        items = [*kept, *new]
        if any(quote in v or "\\" in v for v in items):
            return None
        body = ", ".join(f"{quote}{v}{quote}" for v in items)
        if isinstance(expr, cst.Tuple):
            return f"({body}{',' if len(items) == 1 else ''})"
        return f"[{body}]"

    # Most ``d[k] = v`` and dict literals set no TORCH_CUDA_ARCH_LIST: the hooks ask where
    # the node runs only for those that may, so the guards around the others need no answer.
    reach_own = frozenset({"check_assign", "check_dict"})

    def check_assign(self, node: cst.Assign, fc) -> list[Finding]:
        for t in node.targets:
            tgt = t.target
            if isinstance(tgt, cst.Subscript) and fc.resolve(tgt.value) == "os.environ" and len(tgt.slice) == 1:
                if not fc.ctx.worlds:  # no world runs it
                    return []
                sl = tgt.slice[0].slice
                if isinstance(sl, cst.Index) and fc.value_everywhere(sl.value) == ENV_NAME:
                    return self._in_process(self._env_value(node.value, fc), fc)
        return []

    def check_dict(self, node: cst.Dict, fc) -> list[Finding]:
        if all(not isinstance(el, cst.DictElement) or _other_literal(el.key) for el in node.elements) \
                or not fc.ctx.worlds:
            return []
        for el in node.elements:
            if isinstance(el, cst.DictElement):
                if fc.value_everywhere(el.key) == ENV_NAME:
                    return self._env_value(el.value, fc)
        return []

    def _explicit(self, flags: list | None) -> bool | None:
        """Does an extension's nvcc list carry a flag that makes torch add no arch flags, so that it
        never reads TORCH_CUDA_ARCH_LIST (build.toml [torch_arch_env.*])? None: not known."""
        marks = {e["explicit"] for e in self.matrix.section("build.toml", "torch_arch_env").values()}
        known = [f for f in flags or [] if f is not None and "TORCH_EXTENSION_NAME" not in f]
        if any(m in f for m in marks for f in known):
            return True
        return False if flags is not None and None not in flags else None

    def _in_process(self, found: list[Finding], fc) -> list[Finding]:
        """Findings on a TORCH_CUDA_ARCH_LIST this process sets: only torch's extensions built here
        read it, and none does when each of the file's has its own arch flags (decided once the
        whole file is walked)."""
        if not found:
            return []

        def kept() -> list[Finding]:
            marks = fc.state.get("AIC302.explicit") or []
            return [] if marks and all(m is True for m in marks) else found
        fc.later(kept)
        return []

    def _env_value(self, expr, fc) -> list[Finding]:
        value = fc.value_everywhere(expr)
        if isinstance(value, str):
            return self._judge_env_text(value, expr, fc)
        # os.getenv("TORCH_CUDA_ARCH_LIST", "9.0"): the list a build gets where the variable is unset
        default, unset = fc.value_if_env_unset(expr)
        return self._judge_env_text(default, expr, fc, unset) if isinstance(default, str) else []

    def _judge_env_text(self, text: str, expr, fc, unset: frozenset[str] = frozenset()) -> list[Finding]:
        if self._read_as_unset(text):
            return []
        build, bad = cuda_api.parse_torch_arch_list(text, self.matrix, _torch_releases(fc.target))
        found = self._findings(expr, build, bad, fc, f"{ENV_NAME}={text!r}{_when_unset(unset)}", "torch",
                               self._file_sources(fc))
        if found and isinstance(expr, cst.SimpleString) and not any(c.endswith("a") for c in build.cubins):
            # The fix: the list that covers exactly the fleet and that every pinned torch accepts,
            # in the literal's own quotes; none when no one value does.
            value, _why = self.torch_value(sorted({w.arch for w in fc.ctx.worlds}), fc.target)
            if not value:
                return found
            prefix = expr.prefix
            quote = expr.quote
            for f in found:
                f.fix = f"{prefix}{quote}{value}{quote}"
        return found

    def _read_as_unset(self, text: str) -> bool:
        """TORCH_CUDA_ARCH_LIST="" is read as unset (build.toml [torch_arch_env.*]): torch then builds
        for the GPUs the build machine sees, which no file says; never "nothing"."""
        facts = self.matrix.section("build.toml", "torch_arch_env")
        return text == "" and any(e["empty_is_unset"] for e in facts.values())

    # -- CMakeLists.txt, Dockerfiles, shell scripts ---------------------------------------
    def check_build_file(self, text: str, path: str, target, cuda, reads: list | None = None):
        """Arch settings of a build file, read with the CMake or shell tokenizer."""
        name = path.rsplit("/", 1)[-1]
        if name == "CMakeLists.txt" or name.endswith(".cmake"):
            return self._check_cmake(path, target, cuda, reads)
        if is_makefile(name):
            return self._makefile_findings(text, target, cuda)
        docker = name.startswith(("Dockerfile", "Containerfile")) or name.endswith(".dockerfile")
        out = self._command_findings(cuda_api.commands(text, dockerfile=docker), target, cuda)
        archs = target.archs
        for a in cuda_api.assignments(text, dockerfile=docker):
            if a.name != ENV_NAME or a.value is None or self._read_as_unset(a.value):
                continue  # another variable, a value known only at run time, or "" (unset)
            value = a.value
            build, bad = cuda_api.parse_torch_arch_list(value, self.matrix, _torch_releases(target))
            what = f"{ENV_NAME}={value!r}"
            found = self.judge(build, archs, cuda, what, "torch")
            use = self.fix_torch(archs, target) if bad or found else ""
            if bad:
                out.append(TextFinding(a.line, a.col, self._rejects(what, bad, use, target), frozenset(archs),
                                       "error"))
            for msg, failing, sev in found:
                out.append(TextFinding(a.line, a.col, msg.format(fleet=target.describe(failing), fix=use), failing,
                                       sev))
        return out

    def _check_cmake(self, path: str, target, cuda, reads) -> list:
        """The settings the file makes on every path of each configuration of the project's
        options (cuda/cmake/configs.py): the last CMAKE_CUDA_ARCHITECTURES / CMAKE_CUDA_FLAGS
        value, each CUDA_ARCHITECTURES property and target_compile_options with arch flags. A
        GPU lacks code only where no configuration builds any for what the setting sets (each
        machine may configure its own); a finding not every configuration has names its own."""
        p = Path(os.path.abspath(path))
        cfgs = cuda_api.cmake_configurations(p, cuda_api.project_root(p), None, cuda)
        if reads is not None:
            reads.extend(r for c in cfgs for r in c.model.reads if r != str(p) and r not in reads)
        archs = target.archs
        nums = sorted({a[3:] for a in archs}, key=int)
        fix = "use CMAKE_CUDA_ARCHITECTURES \"" + ";".join(f"{n}-real" for n in nums[:-1]) + \
              (";" if len(nums) > 1 else "") + f"{nums[-1]}\""
        judged: list[list] = []  # per configuration: (setting, build, what, fix, style)
        for c in cfgs:
            last: dict[str, Any] = {}  # key -> its cmake Setting
            for s in c.model.settings:
                if s.path != p or not s.certain:
                    continue
                key = s.what if s.what.startswith("CMAKE_") else f"{s.what}:{s.line}"
                last[key] = s
            mine = []
            for s in sorted(last.values(), key=lambda s: s.line):
                style = "nvcc"
                if s.what in ("CMAKE_CUDA_ARCHITECTURES", "CUDA_ARCHITECTURES"):
                    value = ";".join(s.values)
                    build = cuda_api.parse_cmake_archs(value)
                    what = f"{s.what} {value}"
                    use, style = fix, "cmake"
                else:
                    flags = [f for f in s.values if "arch" in f or f in ("-gencode", "--generate-code")]
                    build = cuda_api.parse_nvcc_flags(s.values, self.matrix, cuda) if flags else None
                    what = f"{s.what} {' '.join(flags)}"
                    use = self.fix_gencode(archs, build)
                if build is not None and not build.empty():
                    mine.append((s, build, what, use, style))
            judged.append(mine)
        # What each setting sets (a variable, or a target's property) is served on a GPU when some
        # configuration builds code for it there, or sets it nowhere (then it is not known here).
        served: dict[tuple, set] = {}
        for mine in judged:
            here: dict[tuple, set] = {}
            for s, build, *_ in mine:
                here.setdefault((s.what, s.subject), set()).update(
                    a for a in archs if cuda_api.code_for(a, build, self.matrix) is not None)
            for k, got in here.items():
                served.setdefault(k, set()).update(got)
        for k in served:
            if any(not any((s.what, s.subject) == k for s, *_ in mine) for mine in judged):
                served[k] = set(archs)
        found: dict[tuple, list] = {}
        for c, mine in zip(cfgs, judged):
            for s, build, what, use, style in mine:
                srcs = Sources(_cmake_sources(c.model, s, p), None, reads)
                for msg, failing, sev in self.judge(build, archs, cuda, what, style, srcs):
                    if "{fleet}, which then fails" in msg and len(cfgs) > 1:  # no code for them
                        failing = frozenset(a for a in failing if a not in served[(s.what, s.subject)])
                    if failing:
                        text_ = msg.format(fleet=target.describe(failing), fix=use)
                        found.setdefault((s.line, s.col, text_), [failing, sev, []])[2].append(c.label)
        out = []
        for (line, col, text_), (failing, sev, labels) in sorted(found.items(), key=lambda kv: kv[0][:2]):
            if len(labels) < len(cfgs) and labels[0]:
                text_ = f"{text_} (in the CMake configuration {labels[0]})"
            out.append(TextFinding(line, col, text_, failing, sev))
        return out


@dataclass(frozen=True)
class Sources:
    """What a build compiles, as far as it is known: .cu paths or inline source texts, the -D
    flags it passes, and the list that records the files read (for the cache)."""

    items: tuple
    defines: dict | None = None
    reads: list | None = None


def _cmake_sources(model, setting, path: Path) -> tuple:
    """The CUDA sources a CMake setting applies to: its target's, for a target property; for a
    directory variable (CMAKE_CUDA_FLAGS), those of the targets defined in its folder and below."""
    if setting.subject:
        t = model.targets.get(setting.subject)
        targets = [t] if t is not None else []
    else:
        here = path.parent
        targets = [t for t in model.targets.values() if t.path is not None and Path(t.path).is_relative_to(here)]
    return tuple(dict.fromkeys(src for t in targets for src in t.sources if Path(src).suffix == ".cu"))


def _toolkit(cuda: str | None) -> tuple[int, int] | None:
    m = re.match(r"(\d+)\.(\d+)", cuda or "")
    return (int(m.group(1)), int(m.group(2))) if m else None


def _shown(path: Path) -> str:
    """A path as the user gave the run: relative to where aicompat runs, when inside it."""
    rel = os.path.relpath(path)
    return path.as_posix() if rel.startswith("..") else Path(rel).as_posix()


def _nvcc_list(value, kw: str):
    """The nvcc flags of a call's flag keyword: extra_compile_args={"cxx": [...], "nvcc": [...]}'s
    nvcc list, extra_cuda_cflags itself."""
    if kw == "extra_compile_args":
        return value.get("nvcc", None) if isinstance(value, DictValue) else None
    return value


def _when_unset(names: frozenset[str]) -> str:
    """Where a value is the default of environment variables: the condition it holds under."""
    if not names:
        return ""
    return f" (when {', '.join(sorted(names))} {'is' if len(names) == 1 else 'are'} unset)"


def _spelled(name: str, style: str) -> str:
    """A target as the build spells it: compute_70 (nvcc), 7.0 (TORCH_CUDA_ARCH_LIST), 70 (CMake)."""
    m = re.fullmatch(r"(?:sm|compute)_(\d+)([a-z]*)", name)
    if m is None or style == "nvcc":
        return name
    num, sfx = m.groups()
    return f"{num[:-1]}.{num[-1]}{sfx}" if style == "torch" else f"{num}{sfx}"


def _deref(expr, fc, depth: int = 0):
    """Follow a name to the literal it is bound to (``NVCC = [...]``)."""
    while isinstance(expr, cst.Name) and depth < 5:
        b = fc.lookup(expr.value)
        if not isinstance(b, cst.BaseExpression):
            return expr
        expr, depth = b, depth + 1
    return expr


def _flag_literal(expr, kw: str, flags: list[str], fc):
    """The list literal the flags come from, which --fix rewrites (``NVCC = [...]`` ...
    ``flags=NVCC``), when the call receives exactly its strings; else None."""
    lit = _deref(expr, fc)
    if kw == "extra_compile_args" and isinstance(lit, cst.Dict):
        nv = [el.value for el in lit.elements if isinstance(el, cst.DictElement)
              and fc.value_everywhere(el.key) == "nvcc"]
        lit = _deref(nv[0], fc) if nv else None
    if isinstance(lit, (cst.List, cst.Tuple)) and cuda_api.strings_of(fc.value_everywhere(lit)) == flags:
        return lit
    return None


def _has_env_dict_literal(fc) -> bool:
    """Whether a dict literal in the file names TORCH_CUDA_ARCH_LIST (judged by check_dict)."""
    if "AIC302.env_dict_literal" not in fc.state:
        seen = _EnvKey()
        if ENV_NAME in fc.text:
            walk(fc.module, seen)
        fc.state["AIC302.env_dict_literal"] = seen.found
    return fc.state["AIC302.env_dict_literal"]


class _EnvKey(cst.CSTVisitor):
    """Finds a dict element keyed by the string TORCH_CUDA_ARCH_LIST (plain isinstance checks:
    libcst.matchers costs more to import than the rest of LibCST)."""

    found = False

    def visit_DictElement(self, node: cst.DictElement) -> None:
        if isinstance(node.key, cst.SimpleString) and node.key.evaluated_value == ENV_NAME:
            self.found = True


def _describe_build(b: cuda_api.Build) -> str:
    parts = list(b.cubins) + [f"PTX {p.replace('sm_', 'compute_')}" for p in b.ptx]
    return ", ".join(parts) if parts else "nothing"


def _other_literal(key) -> bool:
    """A plain string literal other than TORCH_CUDA_ARCH_LIST (told without the value model)."""
    if not isinstance(key, cst.SimpleString):
        return False
    try:
        return key.evaluated_value != ENV_NAME
    except Exception:  # noqa: BLE001 -- a literal LibCST cannot evaluate: leave it to the value model
        return False


def _torch_releases(target) -> list | None:
    """The torch releases the pins allow, or None (unpinned: the newest release's table)."""
    return (getattr(target, "releases", None) or {}).get("torch") or None


def _span(releases: list[str]) -> str:
    return releases[0] if len(releases) == 1 else f"{releases[0]} to {releases[-1]}"
