"""What CuPy's NVRTC compile builds on a fleet GPU, from the call's options and the NVRTC it
runs with (version_matrix/cuda_jit.toml [cupy_compile.*], [cupy_wheel.*], [nvrtc_arch.*]).

CuPy passes the options as given and then its own ``-arch=sm_<cc>`` of the running GPU. NVRTC
before 12.9 refuses the second -arch (the compile fails whatever the kernel); from 12.9 on it
builds the last one's number, the GPU's, with the 'a'/'f' of any -arch before it. Without an
-arch option every release builds the GPU's plain sm_XY.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Mapping

from packaging.version import Version

_ARCH_OPTS = ("-arch", "--gpu-architecture")
# Options that name targets some other way (nvcc's); NVRTC's reading of them is not modelled.
_OTHER_TARGET = re.compile(r"^(-gencode|--generate-code|-code|--gpu-code)\b")
_VALUE = re.compile(r"(?:sm|compute)_(\d+)([af]?)")


@dataclass(frozen=True)
class Nvrtc:
    """One range of NVRTC releases that treats a second -arch alike."""

    name: str
    low: tuple[int, int]
    high: tuple[int, int]
    resolves: str  # "refused" | "last_number"
    error: str

    @property
    def label(self) -> str:
        lo, hi = (f"{v[0]}.{v[1]}" for v in (self.low, self.high))
        return lo if lo == hi else f"{lo}-{hi}"


def _xy(text: str) -> tuple[int, int]:
    major, minor = text.split(".")[:2]
    return int(major), int(minor)


def nvrtc_ranges(matrix) -> list[Nvrtc]:
    out = []
    for name, e in matrix.section("cuda_jit.toml", "nvrtc_arch").items():
        lo, hi = e["nvrtc"].split("-")
        out.append(Nvrtc(name, _xy(lo), _xy(hi), e["resolves"], e["error"]))
    return sorted(out, key=lambda n: n.low)


def arch_values(flags: list[str]) -> list[str] | None:
    """The targets the options' -arch / --gpu-architecture name, in order ('sm_90a',
    'compute_100'); None when an option names targets another way (-gencode, -code)."""
    out = []
    for i, f in enumerate(flags):
        if _OTHER_TARGET.match(f):
            return None
        for opt in _ARCH_OPTS:
            if f == opt and i + 1 < len(flags):
                out.append(flags[i + 1])
            elif f.startswith(opt + "="):
                out.append(f[len(opt) + 1:])
    return out


def _read_range(matrix) -> tuple[Version, Version]:
    lo, hi = matrix.section("cuda_jit.toml", "cupy_compile")["nvrtc"]["cupy"].split("-")
    return Version(lo), Version(hi)


def nvrtc_worlds(matrix, pins: Mapping, releases: Mapping, cuda: str | None) -> list[Nvrtc] | None:
    """The NVRTC ranges a CuPy call may be compiled with, given the target's pins of CuPy (any
    of its package names) and its CUDA: None when a pinned CuPy release or the CUDA is one
    that is not modelled (or they disagree)."""
    wheels = {pkg: int(e["cuda"]) for pkg, e in matrix.section("cuda_jit.toml", "cupy_wheel").items()}
    majors = set(wheels.values())
    pinned: list[Version] = []
    for pkg in ("cupy", *wheels):
        if pkg in pins:
            pinned += releases.get(pkg, [])
            if pkg in wheels:
                majors &= {wheels[pkg]}
    if pinned:
        lo, hi = _read_range(matrix)
        if any(not lo <= v <= hi for v in pinned):
            return None
        # a release runs with the CUDA majors its binary packages are built for
        have = {wheels[p] for p in wheels for v in pinned if v in matrix.releases(p)}
        majors &= have
    ranges = [n for n in nvrtc_ranges(matrix) if n.low[0] in majors]
    if cuda:
        v = _xy(cuda)
        hit = [n for n in ranges if n.low <= v <= n.high]
        return hit or None
    return ranges or None


def target_for(arch: str, values: list[str], nv: Nvrtc, targets: Mapping) -> tuple[str | None, str | None]:
    """(the target NVRTC builds on ``arch``, None) or (None, NVRTC's error) when the options
    ``values`` (non-empty) come before CuPy's own -arch; (None, None) when not modelled."""
    if nv.resolves == "refused":
        return None, nv.error
    suffixes = set()
    for v in values:
        m = _VALUE.fullmatch(v)
        if m is None:
            return None, None
        if m.group(2):
            suffixes.add(m.group(2))
    if len(suffixes) > 1:
        return None, None
    t = arch + (suffixes.pop() if suffixes else "")
    return (t, None) if t in targets else (None, nv.error)
