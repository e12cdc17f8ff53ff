"""Models of the CMake helper functions kernel projects define, run by name when
the project defines a function or macro of that name (cmake_eval.py)."""

from __future__ import annotations

import re
from pathlib import Path

from .cond import UNK, version
from .parse import split_list
from .records import MAX_ALTS
from .targets import _keyword_values


def _loose_intersection(src: list[str], tgt: list[str]) -> list[str]:
    """vLLM cmake/utils.cmake cuda_archs_loose_intersection (vllm 0.33.0, L400-522),
    step for step: exact/cross a-f suffix matches, the 'f' family fallback, TGT
    suffixes kept for plain SRC entries, then for each TGT arch the highest plain
    SRC arch <= it of the same major (any major for +PTX), with +PTX re-applied."""
    ptx = [a[:-4] for a in src if a.endswith("+PTX")]
    s = list(dict.fromkeys(a[:-4] if a.endswith("+PTX") else a for a in src))
    t = list(tgt)
    out: list[str] = []
    for a in list(s):  # L425-435
        if a[-1:] in ("a", "f"):
            base = a[:-1]
            if base in t:
                s.remove(a)
                t = [x for x in t if x not in (base, base + "a", base + "f")]
                out.append(a)
    for a in list(s):  # L437-461
        if a[-1:] in ("a", "f"):
            s.remove(a)
            base = a[:-1]
            if base + "a" in t:
                t.remove(base + "a")
                out.append(base + "a")
            elif base + "f" in t:
                t.remove(base + "f")
                out.append(base + "f")
            elif a.endswith("f"):
                major = base.split(".")[0]
                for x in list(t):
                    if x.rstrip("af").split(".")[0] == major:
                        t.remove(x)
                        out.append(x)
                        break
    for a in list(t):  # L465-477
        if a[-1:] in ("a", "f") and a[:-1] in s:
            t.remove(a)
            out.append(a)
            if a[:-1] not in t:
                s.remove(a[:-1])
    s.sort(key=_natural)  # L479
    for arch in t:  # L484-506
        best = None
        for sa in s:
            if _vle(sa, arch):
                if sa in ptx or sa.split(".")[0] == arch.split(".")[0]:
                    best = sa
            else:
                break
        if best:
            out.append(best)
    out = list(dict.fromkeys(out))
    return [a + "+PTX" if a in ptx else a for a in out]


def _natural(a: str):
    return [int(x) if x.isdigit() else x for x in re.split(r"(\d+)", a)]


def _vle(a: str, b: str) -> bool:
    va, vb = version(a) or (0,), version(b) or (0,)
    n = max(len(va), len(vb))
    return va + (0,) * (n - len(va)) <= vb + (0,) * (n - len(vb))


def _m_loose_intersection(self, c, scope, path) -> None:
    """cuda_archs_loose_intersection(OUT SRC TGT): SRC and TGT are (quoted) lists."""
    if len(c.args) < 3:
        return
    out_var = c.args[0].text
    results = []
    for sa in self.expand(c.args[1].text, scope):
        for ta in self.expand(c.args[2].text, scope):
            if UNK in sa or UNK in ta:
                results.append(UNK)
            else:
                results.append(";".join(_loose_intersection(split_list(sa), split_list(ta))))
    scope[out_var] = tuple(dict.fromkeys(results)) if len(set(results)) <= MAX_ALTS else (UNK,)


def _m_extract_archs(self, c, scope, path) -> None:
    """vLLM's extract_unique_cuda_archs_ascending(OUT flags): the archs of the
    gencode flags torch derived from TORCH_CUDA_ARCH_LIST, i.e. the fleet."""
    if not c.args:
        return
    if self.fleet_caps is None:
        scope[c.args[0].text] = (UNK,)
        return
    self.model.fleet_used = True
    scope[c.args[0].text] = (";".join(self.fleet_caps),)


def _m_clear_gencode(self, c, scope, path) -> None:
    """vLLM's clear_cuda_gencode_flags(OUT): moves the gencode flags out of CMAKE_CUDA_FLAGS."""
    if c.args:
        scope[c.args[0].text] = (UNK,)
    flags = scope.get("CMAKE_CUDA_FLAGS", ("",))
    scope["CMAKE_CUDA_FLAGS"] = tuple(re.sub(r"-gencode arch=[^ ]+ *", "", f) for f in flags)


def _m_gencode_flags_for_srcs(self, c, scope, path) -> None:
    """vLLM set_gencode_flags_for_srcs(SRCS ... CUDA_ARCHS ... [BUILD_PTX_FOR_ARCH x])
    (cmake/utils.cmake L328-369): per arch '-gencode arch=compute_N,code=sm_N', plus
    code=compute_N for '+PTX' entries, appended to each source's COMPILE_OPTIONS."""
    alts = self.args(c, scope)
    recs: dict[Path, list[tuple[str, ...]]] = {}
    for w in alts:
        w = [x for word in w for x in split_list(word)]  # cmake_parse_arguments(... ${ARGN}) splits lists
        srcs = _keyword_values(w, "SRCS", {"CUDA_ARCHS", "BUILD_PTX_FOR_ARCH"})
        archs = _keyword_values(w, "CUDA_ARCHS", {"SRCS", "BUILD_PTX_FOR_ARCH"})
        ptx_for = _keyword_values(w, "BUILD_PTX_FOR_ARCH", {"SRCS", "CUDA_ARCHS"})
        flags: list[str] = []
        for a in archs:
            if UNK in a:
                flags.append(UNK)
                continue
            n = a.replace("+PTX", "").replace(".", "")
            flags += ["-gencode", f"arch=compute_{n},code=sm_{n}"]
            if a.endswith("+PTX"):
                flags += ["-gencode", f"arch=compute_{n},code=compute_{n}"]
        if ptx_for:
            if UNK in ptx_for[0] or any(UNK in a for a in archs):
                flags.append(UNK)
            elif archs and max(version(a.replace("+PTX", "")) or (0,) for a in archs) >= (version(ptx_for[0]) or (0,)):
                n = ptx_for[0].replace(".", "")
                flags += ["-gencode", f"arch=compute_{n},code=compute_{n}"]
        for s in srcs:
            p = self.source_path(s, scope, path)
            if p is not None:
                recs.setdefault(p, []).append(tuple(flags))
    for p, fl in recs.items():
        self.model.source_options.setdefault(p, []).append(self.recorded(tuple(dict.fromkeys(fl)), path, c.line))


MODELS = {
    "cuda_archs_loose_intersection": _m_loose_intersection,
    "extract_unique_cuda_archs_ascending": _m_extract_archs,
    "clear_cuda_gencode_flags": _m_clear_gencode,
    "set_gencode_flags_for_srcs": _m_gencode_flags_for_srcs,
}
