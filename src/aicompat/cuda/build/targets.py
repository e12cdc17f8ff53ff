"""Which compile target's code a GPU runs, given what was built.

A build is a set of cubins (``code=sm_90a``) and PTX (``code=compute_90``).
A GPU runs a cubin whose target lists it in ``runs_on`` (version_matrix
gpus.toml [target.*]); failing that, the driver JIT-compiles forward-
compatible PTX of a lower plain arch. The verdict that matters for the GPU is
the one of the compile target whose code it runs.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from packaging.version import Version

from ..cpp.ppexpr import UNKNOWN_VALUE

_GENCODE = re.compile(r"arch\s*=\s*(compute_\d+[af]?|sm_\d+[af]?)\s*,\s*code\s*=\s*\[?([\w,\s]+)\]?")


_NAME = re.compile(r"(?:sm|compute)_(\d+)([a-z]*)")


@dataclass
class Build:
    cubins: list[str] = field(default_factory=list)  # "sm_90a"
    ptx: list[str] = field(default_factory=list)  # "sm_90" for compute_90 (named by its sm_ target)
    unknown: list[str] = field(default_factory=list)  # flags aicompat cannot interpret
    implied: dict[str, str] = field(default_factory=dict)  # PTX target -> the flag that adds it unasked
    # The targets nvcc checks, as written, in the order it checks them: ("code", "sm_70") for a
    # -code value, ("arch", "compute_70") for -arch and each -gencode's arch= and code=.
    named: list[tuple[str, str]] = field(default_factory=list)
    partial: bool = False  # the flags hold parts not known: the build may hold more targets

    def empty(self) -> bool:
        return not self.cubins and not self.ptx

    def every_target(self) -> list[str]:
        """Every target nvcc compiles (cubins, then PTX): ptxas must accept each, or the build fails."""
        return list(dict.fromkeys(self.cubins + self.ptx))


def _sm(name: str) -> str:
    return "sm_" + name.split("_", 1)[1]


def _shorthand(matrix, cuda: str | None) -> dict | None:
    """nvcc's -arch shorthand for ``cuda`` (version_matrix/build.toml), the newest known
    when the toolkit is not given; None for a toolkit older than every entry (not known)."""
    if matrix is None:
        from ...matrix import default_matrix
        matrix = default_matrix()
    table = matrix.section("build.toml", "nvcc_arch_shorthand")
    known = sorted(table, key=Version)
    if not known:
        return None
    if cuda is None:
        return table[known[-1]]
    fit = [k for k in known if Version(k) <= Version(cuda)]
    return table[fit[-1]] if fit else None


_BASE_SHORTHAND = {"real": ["cubin", "ptx"], "suffixed_plain_ptx": False}


def _option_values(tokens: list[str], names: tuple[str, ...]) -> list[str]:
    out = []
    for i, tok in enumerate(tokens):
        if tok in names:
            j = i + 1
            while j < len(tokens) and tokens[j] == "=":
                j += 1
            if j < len(tokens):
                out.extend(v for v in tokens[j].split(",") if v)
    return out


def parse_nvcc_flags(flags: list, matrix=None, cuda: str | None = None) -> Build:
    """``-gencode arch=compute_90a,code=sm_90a``, ``-arch=sm_90a``, ``--gpu-architecture=compute_90``,
    ``-arch=compute_90a -code=sm_90a``. A flag None (or UNKNOWN_VALUE) is one not known: the build is
    ``partial``, and only the -gencode targets are ``named`` (nvcc checks each; a later unknown
    -arch/-code may replace the known one)."""
    b = Build()
    # a flag of a list whose value is not known (an f-string of the running GPU, os.environ["X"])
    b.partial = any(f is None or f == UNKNOWN_VALUE for f in flags)
    joined = " ".join(UNKNOWN_VALUE if f is None else f for f in flags)
    gencode: list[tuple[str, str]] = []
    for m in _GENCODE.finditer(joined):
        gencode.append(("arch", m.group(1)))
        for code in re.split(r"[,\s]+", m.group(2).strip()):
            if not code:
                continue
            if code.startswith("sm_"):
                b.cubins.append(code)
            elif code.startswith("compute_"):
                b.ptx.append(_sm(code))
            else:
                continue
            gencode.append(("arch", code))
    tokens = joined.replace("=", " = ").split()
    archs = _option_values(tokens, ("-arch", "--gpu-architecture"))
    codes = _option_values(tokens, ("-code", "--gpu-code"))
    if not b.partial:  # nvcc checks the -code list, then the -arch that wins, then each -gencode
        b.named += [("code", c) for c in codes] + [("arch", a) for a in archs[-1:]]
    b.named += gencode
    if codes:
        # -arch names the virtual arch only; exactly the -code list is embedded.
        for code in codes:
            if code.startswith("sm_"):
                b.cubins.append(code)
            elif code.startswith("compute_"):
                b.ptx.append(_sm(code))
            else:
                b.unknown.append(f"-code={code}")
        archs = []
    # A toolkit older than the table: only the documented part (cubin + its own PTX),
    # never the extra plain PTX, which was not observed there.
    short = (_shorthand(matrix, cuda) or _BASE_SHORTHAND) if archs else None
    for val in archs[-1:]:  # a repeated -arch: the last one wins
        if not val.startswith(("sm_", "compute_")):
            b.unknown.append(f"-arch={val}")
            continue
        sm = _sm(val)
        if val.startswith("sm_") and "cubin" in short["real"]:
            b.cubins.append(sm)
        if val.startswith("compute_") or "ptx" in short["real"]:
            b.ptx.append(sm)
        plain = re.sub(r"[af]$", "", sm)
        if plain != sm and short["suffixed_plain_ptx"]:
            b.ptx.append(plain)
            b.implied.setdefault(plain, f"-arch={val} also embeds {plain.replace('sm_', 'compute_')} PTX")
    # -cubin writes only the cubin of -arch, -ptx only its own PTX (a single output file).
    if "-cubin" in tokens or "--cubin" in tokens:
        b.ptx, b.implied = [], {}
    elif "-ptx" in tokens or "--ptx" in tokens:
        b.cubins, b.implied = [], {}
        b.ptx = [p for p in b.ptx if p in {_sm(v) for v in archs[-1:]}] or b.ptx
    b.cubins = list(dict.fromkeys(b.cubins))
    b.ptx = list(dict.fromkeys(b.ptx))
    return b


def runs_cubin(target: str, arch: str, matrix) -> bool:
    t = matrix.targets.get(target)
    return bool(t) and arch in t["runs_on"]


def code_for(arch: str, build: Build, matrix) -> str | None:
    """The compile target whose code a GPU of ``arch`` runs, or None (no kernel image)."""
    exact = [c for c in build.cubins if runs_cubin(c, arch, matrix)]
    if exact:
        # The driver prefers the newest compatible cubin; arch-specific ones match exactly.
        return max(exact, key=lambda c: (_num(c), c.endswith(("a", "f"))))
    jit = [p for p in build.ptx if matrix.targets.get(p, {}).get("ptx_forward") and _num(p) <= _num(arch)]
    fam = [p for p in build.ptx if not matrix.targets.get(p, {}).get("ptx_forward", True) and runs_cubin(p, arch, matrix)]
    options = jit + fam
    if options:
        return max(options, key=_num)
    return None


def candidates(arch: str, matrix, cuda: str | None = None) -> list[str]:
    """Every compile target whose code can run on ``arch`` and the toolkit knows."""
    out = []
    for name, t in matrix.targets.items():
        if arch not in t["runs_on"]:
            continue
        if cuda and Version(t["toolkit"]) > Version(cuda):
            continue
        out.append(name)
    return sorted(out, key=lambda n: (_num(n), n))


def _num(target: str) -> int:
    return int(re.match(r"sm_(\d+)", target).group(1))


def torch_arch_tables(matrix, releases=None) -> list[tuple[str, dict]]:
    """(release, table) of what each torch release in ``releases`` accepts in TORCH_CUDA_ARCH_LIST
    (version_matrix/torch_arch_lists.toml, read from each release's cpp_extension.py), newest
    last; with no releases, the newest known release's alone (what an unpinned build gets).
    A release the table does not list takes the newest listed release not after it."""
    tables = sorted(((Version(v), t) for k, t in matrix.section("torch_arch_lists.toml", "release").items()
                     for v in t["releases"]), key=lambda vt: vt[0])
    if not tables:
        raise ValueError("version_matrix/torch_arch_lists.toml lists no release")
    if not releases:
        return [(str(tables[-1][0]), tables[-1][1])]
    out = []
    for r in sorted({Version(str(x)) for x in releases}):
        known = [vt for vt in tables if vt[0] <= r] or tables[:1]
        out.append((str(r), known[-1][1]))
    return out


def parse_torch_arch_list(value: str, matrix, releases=None) -> tuple[Build, list[str]]:
    """(build, rejected entries) the way torch.utils.cpp_extension reads TORCH_CUDA_ARCH_LIST:
    the build as the newest release in scope reads it, and every entry a release in scope
    refuses (``ValueError: Unknown CUDA arch``)."""
    tables = torch_arch_tables(matrix, releases)
    b, bad = Build(), []
    for i, (_release, rules) in enumerate(reversed(tables)):
        text = value.replace(" ", ";")
        for name, repl in rules["named"]:
            text = text.replace(name, repl)
        for item in [x for x in text.split(";") if x]:
            ptx = item.endswith("+PTX")
            arch = item[:-4] if ptx else item
            if arch not in rules["supported"]:
                if item not in bad:
                    bad.append(item)
                continue
            if i:
                continue  # the newest release's reading is the build
            sm = "sm_" + arch.replace(".", "")
            b.cubins.append(sm)
            # torch's flags: -gencode=arch=compute_XY,code=sm_XY (+PTX: code=compute_XY)
            b.named += [("arch", "compute_" + sm[3:]), ("arch", sm)]
            if ptx:
                b.ptx.append(sm)
    return b, bad


def refusing_releases(entry: str, matrix, releases=None) -> list[str]:
    """The releases in scope whose TORCH_CUDA_ARCH_LIST refuses ``entry`` (an entry after aliases)."""
    arch = entry[:-4] if entry.endswith("+PTX") else entry
    return [r for r, t in torch_arch_tables(matrix, releases) if arch not in t["supported"]]


def torch_arch_fix(archs, matrix, releases=None) -> tuple[str | None, str]:
    """(TORCH_CUDA_ARCH_LIST value, "") that every release in scope accepts and that gives every
    GPU of ``archs`` code: one entry per GPU a release can build for, the newest with +PTX (the
    driver JIT-compiles it on newer GPUs); or (None, why) when no value does."""
    tables = torch_arch_tables(matrix, releases)
    everywhere = [a for a in tables[0][1]["supported"] if all(a in t["supported"] for _r, t in tables)]
    plain = sorted((tuple(int(x) for x in a.split(".")), a) for a in everywhere if re.fullmatch(r"\d+\.\d+", a))
    cubins, ptx = [], set()
    for cap in sorted({matrix.archs[a].capability for a in archs}):
        entry = f"{cap[0]}.{cap[1]}"
        if entry in everywhere:
            cubins.append((cap, entry))
            continue
        # No release in scope builds for it: PTX of the newest entry below it, which the driver
        # JIT-compiles on the newer GPU.
        below = [p for p in plain if p[0] <= cap]
        if below:
            ptx.add(below[-1])
    entries = sorted(set(cubins) | ptx)
    if not entries:
        return None, (f"torch {tables[0][0]} accepts no entry these GPUs can run" if len(tables) == 1 else
                      f"no entry these GPUs can run is accepted by every torch release in scope "
                      f"({tables[0][0]} to {tables[-1][0]})")
    newest = entries[-1]
    items = [e + ("+PTX" if (c, e) in ptx or (c, e) == newest else "") for c, e in entries]
    value = ";".join(items)
    build, _bad = parse_torch_arch_list(value, matrix, releases)
    left = [a for a in archs if code_for(a, build, matrix) is None]
    if left:
        refused = [r for r, t in tables if any(f"{ma}.{mi}" not in t["supported"]
                                               for ma, mi in (matrix.archs[a].capability for a in left))]
        return None, (f"torch {refused[0] if refused else tables[0][0]} builds no code {', '.join(left)} runs, "
                      "and no value serves every release in scope")
    return value, ""


def parse_cmake_archs(value: str) -> Build | None:
    """CMake arch list '80;90a-real;100-virtual' (a plain number = SASS + PTX); None for
    what is not a list of numbers (native, all, all-major, variables): not judged."""
    b = Build()
    for item in [x for x in value.split(";") if x]:
        m = re.fullmatch(r"(\d+[af]?)(?:-(real|virtual))?", item.strip())
        if not m:
            return None
        sm = f"sm_{m.group(1)}"
        # CMake passes --generate-code=arch=compute_XY,code=[compute_XY,sm_XY] (-real: sm_XY only)
        b.named.append(("arch", f"compute_{m.group(1)}"))
        if m.group(2) != "virtual":
            b.cubins.append(sm)
            b.named.append(("arch", sm))
        if m.group(2) != "real":
            b.ptx.append(sm)
    return b


@dataclass(frozen=True)
class Refusal:
    """A compile target the toolkit's nvcc refuses, failing the whole build."""

    name: str  # as written: "compute_70"
    target: str  # its sm_ form: "sm_70"
    why: str  # "too_new" (``toolkit``: the first with it), "dropped" (``toolkit``: the first without), "invalid"
    toolkit: str | None
    error: str  # what nvcc says


def newest_toolkit(matrix) -> str:
    """The toolkit whose nvcc the target facts were observed with (build.toml [nvcc_refusal.*])."""
    return max(matrix.section("build.toml", "nvcc_refusal"), key=Version)


def refusal(build: Build, cuda: str | None, matrix) -> Refusal | None:
    """The first target of ``build`` nvcc refuses (in the order nvcc checks them), or None. With
    the toolkit not given (``cuda`` None) only a name no toolkit has (compute_80a, sm_90f) is
    refused; for a toolkit newer than ``newest_toolkit``, only what an older one already dropped
    or what came later."""
    newest = newest_toolkit(matrix)
    errors = matrix.section("build.toml", "nvcc_refusal")[newest]
    seen = set()
    for option, name in build.named:
        m = _NAME.fullmatch(name)
        if m is None or name in seen or int(m.group(1)) < 20:  # before sm_20: older than every fact here
            continue
        seen.add(name)
        sm = f"sm_{m.group(1)}{m.group(2)}"
        why, toolkit = _refused(sm, cuda, matrix, newest)
        if why:
            return Refusal(name, sm, why, toolkit, errors[option].format(name=name))
    return None


def _refused(sm: str, cuda: str | None, matrix, newest: str) -> tuple[str | None, str | None]:
    t = matrix.targets.get(sm)
    d = matrix.dropped_targets.get(sm)
    if t is None and d is None:
        # No toolkit up to the newest known has it; a later one may add it.
        return ("invalid", None) if cuda is None or Version(cuda) <= Version(newest) else (None, None)
    if cuda is None:
        return None, None
    added = t["toolkit"] if t is not None else d["added"]
    if Version(cuda) < Version(added):
        return "too_new", added
    if d is not None and Version(cuda) >= Version(d["removed"]):
        return "dropped", d["removed"]
    return None, None
