"""Which compile targets the project's build produces for one CUDA file.

The build descriptions are found between the file and its project root (the
nearest ancestor holding .git, pyproject.toml or setup.py): each ancestor's
setup.py (CUDAExtension sources and nvcc flags, setup_py.py), CMakeLists.txt
(with what it includes and adds, cmake_eval.py), and the JIT front-ends of
version_matrix/cuda_jit.toml. A source is answered by the builds that list it;
a header through the build sources that include it (includes.py), the union of
theirs. What each answer means for a fleet GPU is ``groups()``:

- a known build: the one target whose code the GPU runs (code_for), or nothing
  when the build has no code for it; alternatives that disagree are unknown;
- the user's arch list (TORCH_CUDA_ARCH_LIST, CMake's default): every target
  that can run on the GPU, failing only where all of them fail. Unlike a known
  build, one target that fails does not fail the build for the whole fleet:
  torch builds for TORCH_CUDA_ARCH_LIST, or without it for the archs of the build
  machine's visible GPUs (torch 2.13.0 cpp_extension.py _get_cuda_arch_flags
  L2693-2714), so one wheel for the fleet (the whole build fails) and one build
  per machine (only that machine's archs) are both possible; which one is not
  known, so only what fails for every choice is reported. CMake's default is the
  same kind of choice: CUDAARCHS from the environment, else nvcc's own default
  arch (CMake 3.25 Help/variable/CMAKE_CUDA_ARCHITECTURES.rst; sm_75 for nvcc
  13.0, ``nvcc --dryrun``);
- a JIT front-end: the running GPU's target, on the GPUs it compiles for.

A file no build is found for is still judged, on the stated assumption that it
is built for every fleet GPU -- except files named for an arch with
arch-specific features (``sm100_*.cuh``, ``sm90/``: sm_90 and later). In the
kernel repositories read for this (DeepGEMM's JIT, FlashMLA's and vLLM's
per-arch sources, TransformerEngine's arch-specific list) such a file is only
ever built or dispatched for GPUs of that arch's major version, so it is
judged on those only, and the message says so.
"""

from __future__ import annotations

import dataclasses
import os
import re
from dataclasses import dataclass, field
from pathlib import Path

from ...fs.files import SKIP_DIRS
from ..cmake.configs import configurations
from ..cmake.eval import UNK
from ..cpp import includes, runcache
from . import jit_specs, torch_jit
from .build_files import build_files
from .make_builds import Compile, compiles
from .setup_py import UNKNOWN_VALUE, Extension, extensions, nvcc_defines
from .targets import Build, candidates, code_for, parse_cmake_archs, parse_nvcc_flags, parse_torch_arch_list

ROOT_MARKERS = (".git", "pyproject.toml", "setup.py")
MAX_UP = 12
MAX_SOURCES = 3000
MAX_NODES = 20000
CUDA_EXT = (".cu", ".cuh")


@dataclass(frozen=True)
class Origin:
    """One way the file gets compiled."""

    kind: str  # "build" | "fleet" | "target" | "plain" | "unseen" | "unknown"/"none" (never judged)
    how: str  # said in the finding
    builds: tuple = ()  # kind "build": alternatives (Build)
    target: str = ""  # kind "target"
    archs: frozenset | None = None  # GPUs it is compiled for at all; None: every one
    via: str = ""  # a header's: the source that includes it (its translation unit)
    defines: tuple = ()  # (name, value) of the -D flags the build passes
    defines_known: bool = False  # those are all of them: any other macro is undefined
    undefined: tuple = ()  # names known not to be defined (the project's macros this configuration lacks)


@dataclass
class Context:
    origins: list[Origin] = field(default_factory=list)
    reads: list[str] = field(default_factory=list)


def define_fields(origin: Origin) -> dict:
    """The preprocessor Context fields (cuda/cpp/preprocessor.py) for the -D flags of ``origin``'s
    build: all of them where known, else some, and the names known not to be defined."""
    d = dict(origin.defines)
    out: dict = {"defines": d} if origin.defines_known else {"some_defines": d or None}
    return {**out, "undefined": frozenset(origin.undefined)} if origin.undefined else out


def groups(ctx: Context, arch: str, matrix, cuda: str | None) -> list[tuple[list[str], bool, Origin]]:
    """(targets, every, origin) for one fleet GPU: the file fails there when, for some
    group, its code is rejected by every one of ``targets`` (``every``: the targets
    are all the ones that can run there, the build's choice is not known)."""
    out = []
    for o in ctx.origins:
        if o.archs is not None and arch not in o.archs:
            continue
        if o.kind == "build":
            ts = {code_for(arch, b, matrix) for b in o.builds}
            if len(ts) == 1 and None not in ts:
                out.append(([ts.pop()], False, o))
            if len(o.builds) == 1:
                # Every target of the build must compile: one that fails fails the build.
                run = out[-1][0][0] if out and out[-1][2] is o else None
                out.extend(([t], False, o) for t in o.builds[0].every_target() if t != run)
        elif o.kind == "fleet":
            c = candidates(arch, matrix, cuda)
            if c:
                out.append((c, True, o))
        elif o.kind == "unseen":
            # The build is not known: it may target any GPU of its scope and not this one, so
            # only what every target of every GPU it could be built for rejects fails it.
            c = sorted({t for a in sorted(o.archs or ()) for t in candidates(a, matrix, cuda)},
                       key=lambda t: (int(re.match(r"sm_(\d+)", t).group(1)), t))
            if c:
                out.append((c, True, o))
        elif o.kind == "target":
            out.append(([o.target], False, o))
        elif o.kind == "plain" and arch in matrix.targets:
            out.append(([arch], False, o))
    return out


# -- finding the builds -------------------------------------------------------------------

def project_root(path: Path) -> Path:
    """The nearest ancestor holding .git, pyproject.toml or setup.py; without one, the
    outermost holding a CMakeLists.txt (a CMake-only tree); else the file's folder."""
    d = path.parent
    outer_cmake = None
    for _ in range(MAX_UP):
        if any((d / m).exists() for m in ROOT_MARKERS):
            return d
        if (d / "CMakeLists.txt").is_file():
            outer_cmake = d
        if d.parent == d:
            break
        d = d.parent
    return outer_cmake or path.parent


def _ancestors(path: Path, root: Path) -> list[Path]:
    out, d = [], path.parent
    for _ in range(MAX_UP + 8):
        out.append(d)
        if d == root or d.parent == d:
            break
        d = d.parent
    return out


def _cached(key, make):
    """``make()``, once per run per key (cuda/cpp/runcache.py)."""
    cache = runcache.table("build_context")
    if key not in cache:
        if len(cache) > 256:
            cache.clear()
        cache[key] = make()
    return cache[key]


def _stamp(p: Path):
    try:
        st = os.stat(p)
        return (str(p), st.st_size, st.st_mtime_ns)
    except OSError:
        return (str(p), None, None)


@dataclass
class _Project:
    """Every build found under one root: per source file, its origins."""

    sources: dict[Path, list[Origin]] = field(default_factory=dict)
    include_dirs: dict[Path, list[Path]] = field(default_factory=dict)
    jit_roots: list[tuple[Path, dict]] = field(default_factory=list)
    reads: list[str] = field(default_factory=list)


def _rel(p: Path, root: Path) -> str:
    try:
        return p.relative_to(root).as_posix()
    except ValueError:
        return p.name


def _describe(b: Build) -> str:
    parts = list(b.cubins) + [p.replace("sm_", "compute_") for p in b.ptx]
    return ", ".join(parts) or "nothing"


def _setup_origins(setup: Path, root: Path, fleet_caps, matrix, proj: _Project) -> None:
    text = includes.read(setup)
    if text is None:
        return
    proj.reads.append(str(setup))
    where = _rel(setup, root)
    for ext in extensions(setup, text):
        o = _extension_origin(ext, where, matrix)
        if o is None:
            continue
        for s in ext.sources:
            s = Path(os.path.normpath(s))
            if s.suffix in CUDA_EXT:
                proj.sources.setdefault(s, []).append(o)
                proj.include_dirs[s] = ext.include_dirs


def _extension_origin(ext: Extension, where: str, matrix) -> Origin | None:
    o = _extension_archs(ext, where, matrix)
    if o is None or o.kind == "unknown":
        return o
    return dataclasses.replace(o, defines=tuple(sorted(_torch_defines(ext, matrix).items())),
                               defines_known=ext.defines_known)


def _torch_defines(ext: Extension, matrix) -> dict[str, str]:
    """The -D flags of the extension's nvcc compiles: torch's own (build.toml), then the extension's."""
    known = matrix.section("build.toml", "torch_extension_defines") if matrix is not None else {}
    out: dict[str, str] = {}
    if known:
        rules = max(known.items(), key=lambda kv: _ver(kv[0]))[1]
        out.update({d: "1" for d in rules["defines"]})
        out[rules["name_define"]] = ext.name.split(".")[-1]
        if ext.limited_api:
            out[rules["limited_api_define"]] = UNKNOWN_VALUE
    out.update(ext.defines)
    return out


def _extension_archs(ext: Extension, where: str, matrix) -> Origin | None:
    at = f"{where} line {ext.line} ({ext.name})"
    if ext.flags is None:  # flags that cannot be read: what is built is unknown
        return Origin("unknown", f"{at} builds it with flags not known here")
    dyn_arch = [d for d in ext.flags.dynamic if re.search(r"arch|sm_|compute_|gencode", d)]
    fixed = parse_nvcc_flags(ext.flags.strings, matrix)
    if dyn_arch or ("-gencode" in ext.flags.strings and fixed.empty()):
        if ext.arch_env:
            return Origin("fleet", f"{at} builds it for every arch of TORCH_CUDA_ARCH_LIST (or of the build "
                                   f"machine's GPUs): taken to be the fleet's")
        return Origin("unknown", f"{at} builds it for archs computed at build time")
    if not fixed.empty():
        return Origin("build", f"{at} builds it for {_describe(fixed)}", builds=(fixed,))
    if ext.env_arch_list:
        b, _bad = parse_torch_arch_list(ext.env_arch_list, matrix)
        if not b.empty():
            return Origin("build", f"{at} builds it for {_describe(b)} (TORCH_CUDA_ARCH_LIST="
                                   f"{ext.env_arch_list!r})", builds=(b,))
    return Origin("fleet", f"{at} has no arch flags, so torch builds it for TORCH_CUDA_ARCH_LIST (or the build "
                           f"machine's GPUs): taken to be the fleet")


def _cmake_origins(cml: Path, root: Path, fleet_caps, cuda, proj: _Project, fleet: list[str], matrix) -> None:
    """The origins of each configuration of the project's options (cmake/configs.py), each named
    by its configuration where not every configuration builds the source alike; a GPU a
    configuration has no code for is not judged in it (each machine configures its own)."""
    cfgs = configurations(cml, root, fleet_caps, cuda)
    defined = [_defined_macros(c.model) for c in cfgs]
    ours = set().union(*(d for d in defined if d is not None))
    found: dict[Path, list[tuple[Origin, list[int]]]] = {}
    for k, (c, d) in enumerate(zip(cfgs, defined)):
        proj.reads.extend(r for r in c.model.reads if r not in proj.reads)
        # The project's own macros (its CMake defines them in another configuration) are not
        # defined in this one; imported targets' definitions are not read, so others stay open.
        undefined = tuple(sorted(ours - d)) if d is not None else ()
        for s, o in _model_origins(c.model, root, cuda, undefined).items():
            got = found.setdefault(s, [])
            same = next((ks for o2, ks in got if o2 == o), None)
            if same is not None:
                same.append(k)
            else:
                got.append((o, [k]))
    for s, got in found.items():
        for o, ks in got:
            if len(ks) < len(cfgs):
                labels = [cfgs[k].label for k in ks]
                label = " or ".join(labels[:3]) + (" (or another flip)" if len(labels) > 3 else "")
                archs = o.archs
                if o.kind == "build":
                    archs = frozenset(a for a in fleet if any(code_for(a, b, matrix) is not None for b in o.builds))
                o = dataclasses.replace(o, how=f"{o.how} {label}", archs=archs)
            proj.sources.setdefault(s, []).append(o)
    for c in cfgs:
        for s, (where_path, line) in c.model.skipped.items():
            if s.suffix in CUDA_EXT and s not in proj.sources:
                proj.sources[s] = [Origin("none", f"{_rel(where_path, root)} line {line} adds it only in an if() "
                                                  f"branch the build for this fleet does not take")]


def _defined_macros(model) -> set[str] | None:
    """Every macro the configuration's CMake defines for some compile, in any alternative; None
    when a part not known here may define others (``-D${X}``, a generator expression with -D)."""
    if not model.complete:
        return None
    lists = [a for t in model.targets.values() for r in t.options for a in r.alts]
    lists += [a for recs in model.source_options.values() for r in recs for a in r.alts]
    for sc in [t.scope for t in model.targets.values() if t.scope] + [getattr(model, "final_scope", {})]:
        lists += [tuple(g.split()) for g in sc.get("CMAKE_CUDA_FLAGS", ())]
    out: set[str] = set()
    for flags in lists:
        if any(_may_define(f) for f in flags):
            return None
        out |= set(nvcc_defines(list(flags)))
    return out


def _may_define(flag: str) -> bool:
    """A flag with a part not known here that may define a macro not named: not ``-DN=<unknown>``,
    not another option's value (``-I<unknown>``), not a generator expression without -D."""
    if UNK not in flag:
        return False
    m = re.match(r"(?:-D|--define-macro=)([A-Za-z_]\w*)(=|$)", flag)
    if m and UNK not in m.group(1):
        return False
    if flag.startswith(UNK + "$<"):
        return "-D" in flag or "TARGET_PROPERTY" in flag or "GENEX_EVAL" in flag
    return not (flag.startswith("-") and not flag.startswith(("-D", "-X", "--compiler-options", "--define")))


def _model_origins(model, root: Path, cuda, undefined: tuple) -> dict[Path, Origin]:
    """One configuration's origin for each CUDA source its targets build."""
    out: dict[Path, Origin] = {}
    by_source: dict[Path, list[tuple]] = {}
    for t in model.targets.values():
        for s in t.sources:
            by_source.setdefault(s, []).append(t)
    for s in set(by_source) | set(model.source_options):
        if s.suffix not in CUDA_EXT:
            continue
        recs = model.source_options.get(s, [])
        alts: list[tuple[str, ...]] = [()]
        lines = []
        for r in recs:
            alts = [a + b for a in alts for b in r.alts][:16]
            lines.append(r.line)
            where_path = r.path
        targets = by_source.get(s, [])
        tarch: list = [None]
        for t in targets[:1]:
            for r in t.options:
                alts = [a + b for a in alts for b in r.alts][:16]
            scope = t.scope or {}
            gflags = scope.get("CMAKE_CUDA_FLAGS", ("",))
            alts = [a + tuple(g.split()) for a in alts for g in gflags][:16]
            tarch = list(t.archs) if t.archs is not None else [None]
            lines.append(t.line)
            where_path = t.path
        if not recs and not targets:
            continue
        builds, unknown, fleet = [], False, False
        # -D flags every alternative passes (additive only: an imported target's INTERFACE
        # definitions, e.g. torch's or CUTLASS's, are not read, so the rest stay possible).
        defs = [nvcc_defines(list(a)) for a in alts if not any(UNK in f for f in a)]
        common = {k: v for k, v in defs[0].items() if all(d.get(k) == v for d in defs)} if defs else {}
        for a in alts:
            for ta in tarch:
                if any(UNK in f for f in a) or (ta is not None and UNK in ta):
                    unknown = True
                    continue
                b = parse_nvcc_flags(list(a), None, cuda)
                if ta is not None and ta.upper() not in ("OFF", "FALSE", ""):
                    cb = parse_cmake_archs(ta)
                    if cb is None:
                        unknown = True
                        continue
                    b = Build(b.cubins + cb.cubins, b.ptx + cb.ptx, implied=b.implied)
                if b.empty():
                    if ta is None:
                        fleet = True  # CMake's default architectures: taken to be the fleet's
                        continue
                    unknown = True
                    continue
                builds.append(b)
        where = f"{_rel(where_path, root)} line {min(lines) if lines else 1}"
        if unknown or (fleet and builds):
            o = Origin("unknown", f"{where} builds it for archs not known here")
        elif fleet:
            o = Origin("fleet", f"{where} builds it for CMake's default architectures: taken to be the fleet's")
        else:
            uniq = {(tuple(b.cubins), tuple(b.ptx)): b for b in builds}
            bs = tuple(uniq.values())
            desc = _describe(bs[0]) if len(bs) == 1 else " or ".join(_describe(b) for b in bs)
            o = Origin("build", f"{where} builds it for {desc}", builds=bs)
        if o.kind in ("build", "fleet"):
            o = dataclasses.replace(o, defines=tuple(sorted(common.items())),
                                    undefined=tuple(n for n in undefined if n not in common))
        out[s] = o
    return out


def _jit_fronts(path: Path, root: Path, matrix, proj_reads: list) -> list[tuple[Path, str, dict]]:
    """(folder the front-end's paths are relative to, name, entry) of the JIT
    front-ends found in the file's ancestors."""
    out = []
    for d in _ancestors(path, root):
        for name, e in matrix.section("cuda_jit.toml", "jit").items():
            marker = d / e["marker"]
            text = includes.read(marker) if marker.is_file() else None
            if text is not None and e["marker_text"] in text:
                proj_reads.append(str(marker))
                out.append((d, name, e))
    return out


def _in_jit(path: Path, base: Path, e: dict) -> bool:
    return any(includes.inside(path, base / s) for s in e["sources"])


def _jit_origin(path: Path, base: Path, name: str, e: dict, matrix, cuda, fleet: list[str]) -> Origin | None:
    """How the JIT front-end compiles its per-arch source ``path`` (None: not one)."""
    if not _in_jit(path, base, e):
        return None
    label = f"{name}'s JIT ({e['marker']})"
    for pa in e.get("per_arch", []):
        if path.name.startswith(pa["prefix"]):
            target = pa["target"]
            if cuda and pa.get("older") and _ver(cuda) < _ver(pa["older_below"]):
                target = pa["older"]
            archs = frozenset(a for a in fleet if int(a[3:]) // 10 == pa["major"])
            return Origin("target", f"{label} compiles {pa['prefix']}* files for {target}, only on "
                                    f"compute capability {pa['major']}.x GPUs", target=target, archs=archs,
                          defines=_jit_defines(e))
    return None


def _jit_running(name: str, e: dict, matrix, cuda, fleet: list[str]) -> list[Origin]:
    """Files of the front-end that no per-arch source includes: compiled for the running GPU,
    for its own target ("plain") or its arch-specific one ("arch": the per-arch target of its
    major, else sm_XYa; a GPU with neither gets no code)."""
    label = f"{name}'s JIT ({e['marker']})"
    if e.get("running") == "plain":
        return [Origin("plain", f"{label} compiles it for the running GPU's own target (sm_XY, no 'a' features)",
                       defines=_jit_defines(e))]
    if e.get("running") != "arch":
        return []
    out = []
    for arch in fleet:
        major = int(arch[3:]) // 10
        t = next((pa.get("older") if cuda and pa.get("older") and _ver(cuda) < _ver(pa["older_below"])
                  else pa["target"] for pa in e.get("per_arch", []) if pa["major"] == major), None)
        t = t or (f"{arch}a" if f"{arch}a" in matrix.targets else None)
        if t is not None:
            out.append(Origin("target", f"{label} compiles it for the running GPU's arch-specific target, {t} on "
                                        f"{arch}", target=t, archs=frozenset([arch]), defines=_jit_defines(e)))
    return out


def _jit_defines(e: dict) -> tuple:
    """The -D flags the front-end passes to every compile (cuda_jit.toml ``defines``; a value
    may name a macro nvcc defines per target, ``__CUDA_ARCH__``). Others a call adds are not read."""
    return tuple(sorted((k, str(v)) for k, v in e.get("defines", {}).items()))


def _ver(v: str) -> tuple:
    return tuple(int(x) for x in re.findall(r"\d+", v)[:2])


def _project(root: Path, dirs: list[Path], fleet: list[str], matrix, cuda) -> _Project:
    proj = _Project()
    caps = sorted({f"{matrix.archs[a].capability[0]}.{matrix.archs[a].capability[1]}" for a in fleet
                   if a in matrix.archs}, key=_ver)
    for d in reversed(dirs):  # outermost first
        setup = d / "setup.py"
        if setup.is_file():
            _setup_origins(setup, root, caps, matrix, proj)
        cml = d / "CMakeLists.txt"
        if cml.is_file() and str(cml) not in proj.reads:  # not already read through add_subdirectory
            _cmake_origins(cml, root, caps, cuda, proj, fleet, matrix)
    return proj


def _torch_jit_project(root: Path, matrix, cuda) -> _Project:
    proj = _Project()
    _torch_jit_origins(root, matrix, cuda, proj)
    return proj


def _torch_jit_origins(root: Path, matrix, cuda, proj: _Project) -> None:
    """The .cu files the project's Python compiles with torch.utils.cpp_extension.load
    (cuda/build/torch_jit.py), with the call's flags and torch's own -D (build.toml [torch_jit_defines]).
    Arch flags: that build, on every GPU (the whole build fails if one target does); none: the
    plain target of the GPU it runs on (or TORCH_CUDA_ARCH_LIST: not known here)."""
    found, reads = torch_jit.loads(root)
    proj.reads.extend(reads)
    known = matrix.section("build.toml", "torch_jit_defines") if matrix is not None else {}
    data = max(known.items(), key=lambda kv: _ver(kv[0]))[1] if known else None
    for ld in found:
        at = f"{ld.where} (torch.utils.cpp_extension.load)"
        text = includes.read(ld.path) or ""
        origins: list[Origin] = []
        if ld.alts is None:
            origins.append(Origin("unknown", f"{at} builds it with flags not known here"))
        for alt in ld.alts or []:
            flags = list(alt.flags)
            defs: dict[str, str] = {}
            if data is not None:
                defs.update({d: "1" for d in data["defines"]})
                defs[data["name_define"]] = ld.name if ld.name is not None else UNKNOWN_VALUE
            defs.update(nvcc_defines(flags))
            extra = {"defines": tuple(sorted(defs.items())), "defines_known": data is not None}
            b = parse_nvcc_flags(flags, matrix, cuda)
            if any("arch" in f for f in flags) and not b.empty():
                origins.append(Origin("build", f"{at} builds it for {_describe(b)}", builds=(b,), **extra))
            elif "TORCH_CUDA_ARCH_LIST" in text or any("arch" in f for f in flags):
                origins.append(Origin("unknown", f"{at} builds it for archs not known here"))
            else:
                origins.append(Origin("plain", f"{at} has no arch flags: built for the GPU it runs on", **extra))
        for s in ld.sources:
            proj.sources.setdefault(Path(os.path.normpath(s)), []).extend(origins)


def context_for(path: Path, fleet: list[str], matrix, cuda: str | None) -> Context:
    """The build context of the CUDA file at ``path`` for the fleet archs ``fleet``."""
    try:
        path = Path(os.path.abspath(path))
        root = project_root(path)
        return _context(path, root, list(fleet), matrix, cuda)
    except (OSError, RecursionError, ValueError):
        return _assumed(path, fleet, Context())


def _context(path: Path, root: Path, fleet: list[str], matrix, cuda) -> Context:
    dirs = _ancestors(path, root)
    build_files = [f for d in dirs for f in (d / "setup.py", d / "CMakeLists.txt") if f.is_file()]
    key = ("project", str(root), tuple(str(d) for d in dirs if (d / "setup.py").is_file() or
                                       (d / "CMakeLists.txt").is_file()),
           tuple(_stamp(f) for f in build_files), tuple(fleet), cuda)
    proj = _cached(key, lambda: _project(root, dirs, fleet, matrix, cuda))
    ctx = Context(reads=list(proj.reads))
    jits = [j for j in _jit_fronts(path, root, matrix, ctx.reads) if _in_jit(path, j[0], j[2])]
    spec_jits = [j for j in jits if "specs" in j[2]]
    if spec_jits:
        return _spec_context(ctx, path, root, spec_jits, fleet, matrix, cuda)
    if jits:
        # The JIT compiles this file at run time; a CMake target over the same files
        # (DeepGEMM's is for IDE indexing, CMakeLists.txt line 1) is not what runs.
        for base, name, e in jits:
            o = _jit_origin(path, base, name, e, matrix, cuda, fleet)
            if o is not None:
                ctx.origins.append(o)
        if ctx.origins:
            return ctx
        jit_sources: dict[Path, Origin] = {}
        for base, name, e in jits:
            for s in _jit_files(base, e):
                o = _jit_origin(s, base, name, e, matrix, cuda, fleet)
                if o is not None:
                    jit_sources[s] = o
        _through_includers(ctx, path, root, {}, jit_sources, {}, jits)
        if not ctx.origins:
            ctx.origins = [o for _b, n, e in jits for o in _jit_running(n, e, matrix, cuda, fleet)]
        return ctx if ctx.origins else _assumed(path, fleet, ctx)
    own = proj.sources.get(path)
    if own:
        ctx.origins.extend(own)
        return ctx
    loaded = _cached(("torch_jit", str(root), torch_jit.stamps(root), cuda),
                     lambda: _torch_jit_project(root, matrix, cuda))
    sources = {**loaded.sources, **proj.sources} if loaded.sources else proj.sources
    ctx.reads.extend(r for r in loaded.reads if r not in ctx.reads)
    if loaded.sources.get(path):
        ctx.origins.extend(loaded.sources[path])
        return ctx
    made = _make_project(path, root, fleet, matrix, cuda)
    ctx.reads.extend(r for r in made.reads if r not in ctx.reads)
    if made.sources.get(path):
        ctx.origins.extend(made.sources[path])
        return ctx
    if made.sources:
        sources = {**made.sources, **sources}
    # A header (or a .cu that is #included): through the sources that include it.
    _through_includers(ctx, path, root, sources, {}, proj.include_dirs, [])
    return ctx if ctx.origins else _assumed(path, fleet, ctx)


def _make_project(path: Path, root: Path, fleet: list[str], matrix, cuda) -> _Project:
    """The .cu files the nvcc commands of the Makefiles and scripts around ``path`` compile
    (make_builds.py), each with one origin per command and Makefile configuration."""
    files = _cached(("build_files", str(path.parent), str(root)), lambda: build_files(path, root))
    key = ("make", str(root), tuple(_stamp(f) for f in files), tuple(fleet), cuda)
    return _cached(key, lambda: _make_origins(files, root, fleet, matrix, cuda))


_ARCH_WORD = re.compile(r"arch|sm_|compute_|gencode", re.I)


def _make_origins(files: list[Path], root: Path, fleet: list[str], matrix, cuda) -> _Project:
    found, reads = compiles(files, root)
    proj = _Project(reads=reads)
    for c in found:
        o = _compile_origin(c, fleet, matrix, cuda)
        mine = proj.sources.setdefault(c.source, [])
        if o not in mine:
            mine.append(o)
    return proj


def _compile_origin(c: Compile, fleet: list[str], matrix, cuda) -> Origin:
    """How one nvcc command of a Makefile or script compiles its .cu file. A configuration of
    a Makefile with several is built for the fleet GPUs it has code for (one per machine)."""
    config = (f" in the Makefile configuration {c.config}" if c.config else
              " (its conditionals have too many configurations to tell apart)" if c.config is None else "")
    words, raws = c.words[1:], c.raws[1:]
    unknown = [r for w, r in zip(words, raws) if w is None]
    known = [w for w in words if w is not None]
    b = parse_nvcc_flags(known, matrix, cuda)
    if b.unknown or any(_ARCH_WORD.search(r) for r in unknown):
        return Origin("unknown", f"{c.where} builds it for archs not known here{config}")
    if b.empty():
        return Origin("unknown", f"{c.where} builds it with no arch flags (nvcc's default arch){config}")
    archs = frozenset(a for a in fleet if code_for(a, b, matrix) is not None) if c.config else None
    return Origin("build", f"{c.where} builds it for {_describe(b)}{config}", builds=(b,), archs=archs,
                  defines=tuple(sorted(nvcc_defines(known).items())), defines_known=not unknown)


def _spec_context(ctx: Context, path: Path, root: Path, jits, fleet: list[str], matrix, cuda) -> Context:
    """A file of a front-end that lists its sources in Python (FlashInfer): the specs that
    list it, or a header through the listed sources that include it."""
    sources: dict[Path, list[Origin]] = {}
    for base, name, e in jits:
        stamp = tuple(_stamp(p) for p in sorted((base / e["specs"]["dir"]).rglob("*.py"))[:jit_specs.MAX_FILES])
        got = _cached(("specs", str(base), name, stamp, tuple(fleet), cuda),
                      lambda: _spec_sources(base, name, e, fleet, matrix, cuda))
        for s, os_ in got[0].items():
            sources.setdefault(s, []).extend(os_)
        ctx.reads.extend(r for r in got[1] if r not in ctx.reads)
    for base, name, e in jits:
        for d in e["specs"].get("compiled", []):
            if includes.inside(path, base / d["dir"]):
                how = f"{name}'s JIT ({d['by']}) compiles it for {{t}} on {{a}}, only on {', '.join(d['targets'])}"
                ctx.origins = [Origin("target", how.format(t=t, a=a), target=t, archs=frozenset([a]))
                               for a, t in d["targets"].items() if a in fleet]
                ctx.origins = ctx.origins or [Origin("none", f"{name}'s JIT ({d['by']}) compiles it only on "
                                                             f"{', '.join(d['targets'])}")]
                return ctx
    own = sources.get(path)
    if own:
        ctx.origins.extend(own)
        return ctx
    _through_includers(ctx, path, root, sources, {}, {}, jits)
    return ctx if ctx.origins else _assumed(path, fleet, ctx)


def _spec_sources(base: Path, name: str, e: dict, fleet: list[str], matrix, cuda):
    """({source: [Origin]}, files read) for every spec the front-end's Python declares. A spec
    is compiled on the GPU that runs it: a fixed -gencode only on GPUs that can run that code,
    the running GPU's target (jit_specs.Alt.running) only on the majors it names."""
    reader = jit_specs.Reader(base, e)
    out: dict[Path, list[Origin]] = {}
    label = f"{name}'s JIT"
    defaults = list(e["specs"].get("flags", []))
    for spec in reader.specs():
        if not spec.sources:
            continue
        origins: list[Origin] = []
        if spec.alts is None:
            origins.append(Origin("unknown", f"{label} ({spec.where}) compiles it with flags not known here"))
        for alt in spec.alts or []:
            flags = defaults + list(alt.flags)
            fixed = parse_nvcc_flags(list(alt.flags), matrix, cuda)
            running = alt.running
            if running is None and fixed.empty():
                running = jit_specs.EVERY  # no -gencode of its own: the running GPU's (cpp_ext.py build_cuda_cflags)
            defs = nvcc_defines(flags)
            defs.update({k: UNKNOWN_VALUE for k in e["specs"].get("unknown_value", [])})
            # a generated translation unit's own #defines come before the files it includes
            defs.update({k: UNKNOWN_VALUE if v is None else v for k, v in spec.defines.items()})
            defs = tuple(sorted(defs.items()))
            # the package requests this way of building the spec only on some GPUs (cuda_jit.toml specs.requested)
            asked = [r for r in e["specs"].get("requested", []) if r["spec"] == spec.function
                     and (not r.get("define") or r["define"] in dict(defs))]
            for arch in fleet:
                if any(int(arch[3:]) not in r["capabilities"] for r in asked):
                    continue
                b = fixed
                if running is not None and int(arch[3:]) // 10 in running:
                    t = _spec_running_target(arch, e["specs"], matrix)
                    b = Build(fixed.cubins + [t], fixed.ptx, implied=fixed.implied)
                if b.empty() or code_for(arch, b, matrix) is None:
                    continue  # not built (or of no use) on this GPU
                how = f"{label} ({spec.where}) compiles it for {_describe(b)} on the GPU it runs on"
                origins.append(Origin("build", how, builds=(b,), archs=frozenset([arch]), defines=defs,
                                      defines_known=bool(e["specs"].get("complete"))))
        if not origins:
            origins.append(Origin("none", f"{label} ({spec.where}) builds it only on GPUs outside this fleet"))
        for src in spec.sources:
            majors = spec.only.get(src)
            mine = origins
            if majors is not None:  # added only when the running GPU passes the spec's target check
                mine = [o for o in origins if o.kind != "build" or any(int(a[3:]) // 10 in majors for a in o.archs)]
                mine = mine or [Origin("none", f"{label} ({spec.where}) adds it only on compute capability "
                                               f"{'/'.join(str(x) for x in sorted(majors))}.x GPUs")]
            out.setdefault(Path(os.path.normpath(src)), []).extend(mine)
    return out, reader.reads


def _spec_running_target(arch: str, e: dict, matrix) -> str:
    """The target a front-end builds for the running GPU ``arch`` (cuda_jit.toml specs.a_from,
    specs.family: FlashInfer's CompilationContext._normalize_cuda_arch)."""
    if arch in e.get("family", []) and f"{arch}f" in matrix.targets:
        return f"{arch}f"
    if int(arch[3:]) >= e.get("a_from", 1000) and f"{arch}a" in matrix.targets:
        return f"{arch}a"
    return arch


def _through_includers(ctx: Context, path: Path, root: Path, sources: dict, jit_sources: dict, inc_dirs: dict,
                       jits) -> None:
    users = _includers(path, root, sources, jit_sources, inc_dirs, jits)
    seen = set()
    for s in users[:50]:
        for o in sources[s] if s in sources else [jit_sources[s]]:
            key = (o.kind, o.how, o.target, o.archs)
            if key in seen or len(seen) >= 64:
                continue
            seen.add(key)
            ctx.origins.append(dataclasses.replace(o, how=f"included by {_rel(s, root)}, which: {o.how}", via=str(s)))
            if str(s) not in ctx.reads:
                ctx.reads.append(str(s))


_ARCH_NAME = re.compile(r"^sm_?(\d{2,3})[af]?(?:_|x?$)", re.I)


def _assumed(path: Path, fleet: list[str], ctx: Context) -> Context:
    """No build of the file is visible here (a Makefile rule not read, a script, an unusual
    CMake): it may be built for any target of any GPU of its scope, so it is judged only for
    what fails on all of them (groups). No build defines a macro for it either: code under a
    macro no known build defines is unreachable until one does (issue 28), so the -D flags are
    known to be none (a `#define N 0` default under `#ifndef N` stands; names a header outside
    the tree may define stay open: cuda/cpp/preprocessor.py known_undefined)."""
    named = None
    for part in [path.stem] + [p.name for p in path.parents][:6]:
        m = _ARCH_NAME.match(part)
        if m and int(m.group(1)) >= 90:
            named = int(m.group(1))
            break
    if named is not None:
        major = named // 10
        archs = frozenset(a for a in fleet if int(a[3:]) // 10 == major)
        ctx.origins = [Origin("unseen", f"no build aicompat can see for this file; from its sm{named} name it is "
                                        f"taken to be built for compute capability {major}.x GPUs only, and it is "
                                        f"reported because no compile target of theirs accepts it", archs=archs,
                              defines_known=True)]
    else:
        ctx.origins = [Origin("unseen", "no build aicompat can see for this file, so it may target any fleet GPU; "
                                        "reported because no compile target of any of them accepts it",
                              archs=frozenset(fleet), defines_known=True)]
    return ctx


def _jit_files(base: Path, e: dict) -> list[Path]:
    out = []
    prefixes = tuple(pa["prefix"] for pa in e.get("per_arch", []))
    if not prefixes:
        return out
    for s in e["sources"]:
        d = base / s
        if not d.is_dir():
            continue
        for n, f in enumerate(sorted(d.rglob("*.cu*"))):
            if n > MAX_SOURCES:
                break
            if f.suffix in CUDA_EXT and f.name.startswith(prefixes):
                out.append(f)
    return out


def _includers(target: Path, root: Path, sources: dict, jit_sources: dict, inc_dirs: dict, jits) -> list[Path]:
    """The build sources whose (transitive, in-tree) includes reach ``target``."""
    names = tuple(sorted(map(str, list(sources) + list(jit_sources))))
    graph = _cached(("graph", str(root), hash(names)),
                    lambda: _graph(root, list(sources)[:MAX_SOURCES] + list(jit_sources), inc_dirs, jits))
    return sorted(graph.get(target, ()), key=str)


_HEADER_EXT = (".h", ".hh", ".hpp", ".hxx", ".cuh", ".inl", ".cuinl", ".cu", ".tcc")
MAX_TREE_FILES = 50000


def _by_suffix(name: str, root: Path) -> Path | None:
    """The one in-tree file whose path ends with ``/name``, for an #include the known include
    dirs do not resolve: the build passes an -I aicompat could not read (an include dir computed
    at build time), and nvcc would find the header there. Several candidates: unknown (None)."""
    if "/" not in name or name.startswith(("../", "./")) or os.path.isabs(name):
        return None  # a bare name is too common to place in a tree (utils.h)
    index = _cached(("tree_headers", str(root)), lambda: _tree_headers(root))
    hits = index.get(name.rsplit("/", 1)[1], ())
    tail = "/" + name
    found = [h for h in hits if h.as_posix().endswith(tail)]
    return found[0] if len(found) == 1 else None


def _tree_headers(root: Path) -> dict[str, list[Path]]:
    """basename -> the in-tree C/C++/CUDA files of that name (bounded walk, vendored-tool and
    VCS folders skipped)."""
    out: dict[str, list[Path]] = {}
    n = 0
    for d, subdirs, files in os.walk(root):
        subdirs[:] = sorted(x for x in subdirs if x not in SKIP_DIRS and not x.startswith("."))
        for f in files:
            if f.endswith(_HEADER_EXT):
                out.setdefault(f, []).append(Path(d) / f)
                n += 1
        if n > MAX_TREE_FILES:
            break
    return out


def _graph(root: Path, sources: list[Path], inc_dirs: dict, jits) -> dict[Path, set[Path]]:
    """header -> the sources that include it, directly or through other headers."""
    extra = [root, root / "include", root / "csrc"] + [base / s for base, _n, e in jits for s in e["sources"]]
    edges: dict[tuple, list[Path]] = {}
    rev: dict[Path, set[Path]] = {}
    nodes = 0
    for src in sources:
        dirs = tuple(str(d) for d in (list(inc_dirs.get(src, [])) + extra + _ancestors(src, root)))
        seen = {src}
        stack = [src]
        while stack and nodes < MAX_NODES:
            f = stack.pop()
            nodes += 1
            k = (f, dirs)
            if k not in edges:
                text = includes.read(f)
                found = []
                for _line, name, quoted in includes.directives(text or ""):
                    p = includes.resolve(name, quoted, f.parent, dirs, root)
                    if p is None:
                        p = _by_suffix(name, root)
                    if p is not None:
                        found.append(p)
                edges[k] = found
            for p in edges[k]:
                if p not in seen:
                    seen.add(p)
                    stack.append(p)
                    rev.setdefault(p, set()).add(src)
    return rev
