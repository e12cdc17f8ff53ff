"""What exact mode (cuda/exact/verify.py) says about one CUDA source: per compile target for a
Python call that builds known targets, per GPU for a .cu file whose code may come from
any of several targets. Only verdicts nvcc really gave count; the rest stays static."""

from __future__ import annotations

import os
import re
from dataclasses import replace
from pathlib import Path

from . import sealed
from .torch_headers import torch_include_dirs  # noqa: F401 (the rule asks it here)
from .verify import DROPPED, Job, Outcome, Verifier, settle, split_defines

DECIDED = ("ok", "fail", "empty")

# torch/utils/cpp_extension.py (torch 2.13) COMMON_NVCC_FLAGS, passed to every CUDA source
# load/load_inline build; load_inline also prepends '#include <torch/types.h>', <cuda.h> and
# <cuda_runtime.h> to cuda_sources, which exact mode leaves out (compiling torch's headers costs
# ~20 s a target; a source that needs them and does not include them is "could not verify").
TORCH_NVCC_FLAGS = ("-D__CUDA_NO_HALF_OPERATORS__", "-D__CUDA_NO_HALF_CONVERSIONS__",
                    "-D__CUDA_NO_BFLOAT16_CONVERSIONS__", "-D__CUDA_NO_HALF2_OPERATORS__",
                    "--expt-relaxed-constexpr")


def tree_of(folder: Path) -> Path:
    """The tree a source's in-tree headers are read from (sealed.py inlines them; nothing outside
    it is read): the repository above ``folder`` (the nearest folder with .git), else the nearest
    project folder (pyproject.toml), else ``folder``."""
    for d in (folder, *folder.parents):
        if os.path.lexists(d / ".git"):
            return d
    for d in (folder, *folder.parents):
        if (d / "pyproject.toml").is_file():
            return d
    return folder


def jobs_for(text: str, targets, flags, source_dir: Path | None, root: Path | None,
             extra_includes: tuple[str, ...] = ()) -> list[Job]:
    """One job per target for ``text``: the sealed unit (its in-tree headers inlined, nothing
    that reads outside the tree; sealed.py), the flags that may go on nvcc's command line, and
    the other -D definitions written at the top of the unit."""
    line_flags, defines = split_defines([f for f in flags if f != DROPPED])
    unit = sealed.seal(text, source_dir, root, (), defines)
    refused = unit.refused
    if DROPPED in flags:
        refused = ("a -D/-U flag of the build cannot be passed to nvcc safely (its name is not a macro name, or "
                   "its value spans lines)")
    body = unit.text if unit.text is not None else text
    return [Job(body, t, line_flags, tuple(extra_includes), refused) for t in targets]


def per_target(ver: Verifier, matrix, text: str, targets, flags=(), source_dir=None, root=None,
               extra_includes=()) -> dict[str, Outcome]:
    """Settled outcome for each target."""
    targets = sorted(set(targets))
    outs = ver.run(jobs_for(text, targets, flags, source_dir, root, extra_includes), matrix)
    return settle(dict(zip(targets, outs)))


def per_gpu(ver: Verifier, matrix, text: str, cands: dict[str, list[str]], static_ok: set[str], flags=(),
            source_dir=None, root=None) -> tuple[dict[str, tuple[str, str, Outcome]], dict[str, Outcome]]:
    """For each arch, (verdict, target, outcome): 'ok' as soon as one of its candidate targets
    compiles with code (tried first: those the static table accepts, then the newest), 'fail'
    or 'empty' only when nvcc gave every candidate a verdict. Archs with an unverified
    candidate and no success are left out (their static verdict stands). Also every outcome."""
    order = {a: sorted(c, key=lambda t: (t not in static_ok, -_num(t), t)) for a, c in cands.items()}
    seen: dict[str, Outcome] = {}
    pending = {a: list(ts) for a, ts in order.items()}
    while True:
        want = []
        for a, ts in pending.items():
            if any(seen.get(t) is not None and seen[t].status == "ok" for t in order[a]):
                continue
            nxt = next((t for t in ts if t not in seen), None)
            if nxt is not None and nxt not in want:
                want.append(nxt)
        if not want:
            break
        outs = ver.run(jobs_for(text, want, flags, source_dir, root), matrix)
        seen.update(zip(want, outs))
    seen = settle(seen)
    result = {}
    for a, ts in order.items():
        got = [(t, seen[t]) for t in ts if t in seen]
        ok = next(((t, o) for t, o in got if o.status == "ok"), None)
        if ok:
            result[a] = ("ok", ok[0], ok[1])
            continue
        if len(got) < len(ts) or any(o.status not in DECIDED for _, o in got):
            continue
        # The error of the arch's own target reads best (an older one fails on something earlier).
        fails = [(t, o) for t, o in got if o.status == "fail"]
        mine = next(((t, o) for t, o in fails if t == a), fails[0] if fails else None)
        if mine is not None:
            result[a] = ("fail", mine[0], mine[1])
        else:
            t, o = got[-1]
            result[a] = ("empty", t, o)
    return result, seen


def first_unverified(outcomes) -> Outcome | None:
    return next((o for o in outcomes if o.status == "unverified" and o.stage == "could not verify"), None)


def _num(target: str) -> int:
    return int("".join(ch for ch in target[3:] if ch.isdigit()))


# Triton's inline_asm_elementwise(asm, constraints, ...) takes PTX with LLVM-style operands
# ($0, $1) and constraints ("=r,r"); exact mode compiles it inside a one-statement CUDA kernel.
_CTYPES = {"r": "unsigned int", "l": "unsigned long long", "h": "unsigned short", "f": "float", "d": "double"}


def triton_unit(asm: str, constraints: str) -> str | None:
    """A CUDA translation unit running ``asm`` once, or None for constraints it cannot model."""
    outs, ins = [], []
    for i, c in enumerate(x.strip() for x in constraints.split(",")):
        out = c.startswith("=")
        kind = c.lstrip("=&")
        if kind not in _CTYPES:
            return None
        (outs if out else ins).append((i, _CTYPES[kind], kind))
    body = asm.replace("%", "%%")
    body = re.sub(r"\$(\d+)", r"%\1", body).replace("$$", "$")
    lit = body.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
    decl = " ".join(f"{t} v{i} = ({t})p[{i}];" for i, t, _ in outs + ins)
    o = ", ".join(f'"={k}"(v{i})' for i, _, k in outs)
    n = ", ".join(f'"{k}"(v{i})' for i, _, k in ins)
    store = " ".join(f"p[{i}] = (unsigned long long)v{i};" for i, _, _ in outs)
    return (f"__global__ void aicompat_triton_asm(unsigned long long* p) {{\n"
            f"  {decl}\n"
            f"  // the inline_asm_elementwise asm:\n"
            f'  asm volatile("{lit}" : {o} : {n});\n'
            f"  {store}\n}}\n")


def triton_line(asm: str, outcome: Outcome) -> Outcome:
    """The outcome with its line in the asm text: the line naming the rejected instruction, else line 1."""
    if outcome.line is None:
        return outcome
    lines = asm.split("\n")
    at = next((i for i, ln in enumerate(lines, 1) if outcome.token and outcome.token in ln), None)
    if at is None and outcome.token:
        head = outcome.token.split(".")[0]
        at = next((i for i, ln in enumerate(lines, 1) if re.search(rf"\b{re.escape(head)}\b", ln)), None)
    return replace(outcome, line=at or 1)
