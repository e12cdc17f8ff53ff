"""The target: a GPU fleet, a Python version, pinned packages, a CUDA toolkit.

``Target`` is what a user writes (names, strings). ``resolve_target`` checks
it against the matrix and gives a ``ResolvedTarget``: fleet members with their
archs, the releases each pin allows, and the *worlds* the rules reason about.
A world is one (GPU arch, torch release) combination the code may run in;
guards narrow the set of worlds a call is reachable in.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping, Sequence

from packaging.requirements import InvalidRequirement, Requirement
from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.utils import canonicalize_name
from packaging.version import InvalidVersion, Version

from ..base.errors import ConfigError
from . import Matrix

_ARCH_RE = re.compile(r"^sm_?(\d+)$", re.I)
_PY_RE = re.compile(r"^3\.(\d+)$")
_CUDA_RE = re.compile(r"^\d+\.\d+$")


@dataclass
class Target:
    """A target as written by a user, the API or the config files."""

    gpus: list[str] | None = None
    python: str | None = None
    pins: Mapping[str, str] | None = None  # package -> "2.4.0" or ">=2.1,<2.4"
    cuda: str | None = None
    cuda_verify: bool | None = None  # exact mode: compile CUDA with the local nvcc


@dataclass(frozen=True)
class Member:
    """One fleet member: the label the user gave and the arch it runs."""

    label: str
    arch: str


# The package whose release each world fixes (World.torch): its releases are part of the
# worlds, so guards narrow them; every other package has the releases its pin allows.
WORLD_PACKAGE = "torch"


@dataclass(frozen=True)
class World:
    arch: str
    torch: Version | None  # the release of WORLD_PACKAGE
    # The open twin of a world, inside a function that no code of the file calls: there its
    # parameters are whatever a caller passes, not their defaults (core/engine.py; rules see
    # the closed world, and rules/policy.toml says which rules take a caller's choice).
    open: bool = False
    # Releases of other packages this world is asked under: the API rules ask whether a statement
    # runs with one release of a pinned package (``hasattr(recipe, "MXFP8BlockScaling")`` is
    # then known), as ``(package, release)`` pairs; the worlds the engine walks carry none.
    releases: tuple[tuple[str, Version], ...] = ()


@dataclass
class ResolvedTarget:
    members: list[Member]
    python: tuple[int, int]
    pins: dict[str, SpecifierSet]
    releases: dict[str, list[Version]]  # package -> releases the pin allows (known ones)
    cuda: str | None
    sources: dict[str, str] = field(default_factory=dict)  # part -> where it came from
    default_fleet: bool = False
    # Exact mode's options (cuda/exact/verify.py Options) or None: how CUDA rules may check, carried
    # here because every rule already receives the target; the engine never looks inside.
    verify: Any = None

    @property
    def archs(self) -> list[str]:
        seen: list[str] = []
        for m in self.members:
            if m.arch not in seen:
                seen.append(m.arch)
        return seen

    def worlds(self) -> frozenset[World]:
        torch: Sequence[Version | None] = self.releases.get(WORLD_PACKAGE) or [None]
        return frozenset(World(a, t) for a in self.archs for t in torch)

    def labels_for(self, archs: Iterable[str]) -> list[str]:
        """Fleet member labels for a set of archs, in fleet order."""
        wanted = set(archs)
        return [m.label for m in self.members if m.arch in wanted]

    def describe(self, archs: Iterable[str]) -> str:
        """``sm_80 (A100), sm_86`` for the members on these archs."""
        wanted = set(archs)
        parts = []
        for arch in self.archs:
            if arch not in wanted:
                continue
            names = [m.label for m in self.members if m.arch == arch and m.label != arch]
            parts.append(f"{arch} ({', '.join(names)})" if names else arch)
        return ", ".join(parts)

    def as_json(self) -> dict:
        return {
            "gpus": {
                "members": [{"label": m.label, "arch": m.arch} for m in self.members],
                "source": self.sources.get("gpus", "default"),
            },
            "python": {"value": f"{self.python[0]}.{self.python[1]}", "source": self.sources.get("python", "")},
            "pins": {
                name: {
                    "spec": str(spec),
                    "releases": [str(v) for v in self.releases.get(name, [])],
                    "source": self.sources.get(f"pin:{name}", ""),
                }
                for name, spec in sorted(self.pins.items())
            },
            "cuda": {"value": self.cuda, "source": self.sources.get("cuda", "")},
            **({"cuda_verify": self.verify.fingerprint()} if self.verify is not None else {}),
        }


def parse_arch(text: str, matrix: Matrix) -> str | None:
    m = _ARCH_RE.match(text.strip())
    if m:
        name = f"sm_{m.group(1)}"
        return name if name in matrix.archs else None
    return None


def resolve_gpu(text: str, matrix: Matrix) -> str | None:
    """An arch (``sm_90``, ``90``, ``9.0``) or a GPU name (``H100``) -> arch, else None."""
    t = text.strip()
    arch = parse_arch(t, matrix)
    if arch:
        return arch
    if re.fullmatch(r"\d+\.\d+", t):
        major, minor = t.split(".")
        return parse_arch(f"sm_{major}{minor}", matrix)
    return matrix.gpu_names.get(t.lower())


def parse_pin(text: str, where: str) -> tuple[str, SpecifierSet]:
    """``torch==2.4.0`` / ``torch>=2.1,<2.4`` -> (name, specifier)."""
    try:
        req = Requirement(text)
    except InvalidRequirement as exc:
        reason = str(exc).splitlines()[0] if str(exc) else "invalid"
        raise ConfigError(f"{where}: bad requirement {text!r}: {reason}") from None
    return canonicalize_name(req.name), req.specifier


def parse_spec(name: str, value: str, where: str) -> SpecifierSet:
    """A pins-table value: ``"2.4.0"`` means ``==2.4.0``; otherwise a specifier."""
    value = value.strip()
    if re.fullmatch(r"\d+(\.\d+)*([a-z0-9.+]*)", value):
        value = f"=={value}"
    try:
        return SpecifierSet(value)
    except InvalidSpecifier:
        raise ConfigError(f"{where}: bad version specifier {value!r} for {name}") from None


def parse_python(value: str, where: str) -> tuple[int, int]:
    m = _PY_RE.match(value.strip())
    if not m:
        raise ConfigError(f"{where}: bad Python version {value!r} (expected X.Y such as 3.11)")
    return 3, int(m.group(1))


def check_cuda(value: str, where: str) -> str:
    if not _CUDA_RE.match(value.strip()):
        raise ConfigError(f"{where}: bad CUDA version {value!r} (expected X.Y such as 12.8)")
    return value.strip()


def releases_for(name: str, spec: SpecifierSet, matrix: Matrix, where: str) -> list[Version]:
    """Releases a pin allows. An exact ``==X`` pin is X itself even if unknown."""
    exact = [s for s in spec if s.operator in ("==", "===") and "*" not in s.version]
    known = matrix.releases(name)
    if len(exact) == 1 and len(spec) == 1:
        try:
            pinned = Version(exact[0].version)
        except InvalidVersion:
            raise ConfigError(f"{where}: bad version {exact[0].version!r} for {name}") from None
        # PEP 440: a pin without a local label matches every local build of it (FA3's
        # 3.0.0b1 is the table's 3.0.0b1+v2.7.0 ... 3.0.0b1+v2.8.3, one per repository tag).
        local = [v for v in known if v.local and exact[0].operator == "==" and v.public == pinned.public
                 and not pinned.local]
        return local or [pinned]
    if not known:
        return []
    # A pre-release is allowed where the pin itself names one (packaging's rule).
    allowed = [v for v in known if spec.contains(v, prereleases=any(Version(s.version).is_prerelease
                                                                    for s in spec if "*" not in s.version))]
    if not allowed:
        raise ConfigError(f"{where}: {name}{spec} matches no known {name} release")
    return allowed


def resolve_members(gpus: Iterable[str], matrix: Matrix, where: str) -> list[Member]:
    members: list[Member] = []
    for g in gpus:
        if not isinstance(g, str):
            raise ConfigError(f"{where}: GPU entries must be strings, got {g!r}")
        arch = resolve_gpu(g, matrix)
        if arch is None:
            _refuse_unbuildable(g, matrix, where)
            known = ", ".join(matrix.by_capability(matrix.archs))
            raise ConfigError(f"{where}: unknown GPU or arch {g!r} (archs: {known}; or a GPU name such as H100)")
        label = arch if parse_arch(g, matrix) or re.fullmatch(r"\d+\.\d+", g.strip()) else g.strip()
        if Member(label, arch) not in members:
            members.append(Member(label, arch))
    return members


def _refuse_unbuildable(text: str, matrix: Matrix, where: str) -> None:
    """A GPU whose arch the toolkit aicompat's facts come from cannot build for (V100, sm_70,
    7.0) is known, not "unknown": say why it cannot be checked (version_matrix/gpus.toml)."""
    t = text.strip()
    m = _ARCH_RE.match(t) or re.fullmatch(r"(\d+)\.(\d+)", t)
    arch = (f"sm_{''.join(m.groups())}" if m else matrix.unbuildable_names.get(t.lower()))
    e = matrix.unbuildable.get(arch or "")
    if e is None:
        return
    oldest = min(matrix.archs, key=lambda a: matrix.archs[a].capability)
    named = f"{t} is {arch}" if t.lower() in matrix.unbuildable_names else arch
    raise ConfigError(
        f"{where}: {named} ({e['generation']}), which CUDA {e['toolkit']} cannot build for "
        f"(nvcc {e['toolkit']}: \"{' '.join(e['nvcc'].split())}\"); aicompat's facts come from CUDA {e['toolkit']} "
        f"and cover {oldest} and newer, so code for {t} cannot be checked"
    )
