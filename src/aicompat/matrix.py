"""The version matrix: TOML tables of GPUs, hardware features, releases and
per-rule facts, loaded and validated once per run and passed to the rules.

Every entry carries ``source``: the package release it was read from, or a
URL / repository path. A schema error names the file and the entry.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

from packaging.version import InvalidVersion, Version

from .data import data_dir
from .errors import MatrixError
from .toml_compat import tomllib

# section -> {field: (type, required)}; every entry also needs "source".
_LIST = list
SCHEMAS: dict[str, dict[str, dict[str, tuple[type, bool]]]] = {
    "gpus.toml": {
        "arch": {"capability": (_LIST, True), "generation": (str, True), "toolkit": (str, False)},
        "gpu": {"arch": (str, True)},
        "default": {"fleet": (_LIST, True)},
        "target": {"kind": (str, True), "runs_on": (_LIST, True), "ptx_forward": (bool, True), "toolkit": (str, True)},
    },
    "hardware.toml": {
        "feature": {"summary": (str, True), "archs": (_LIST, True), "targets": (_LIST, False)},
    },
    "cuda_features.toml": {
        "feature": {"summary": (str, True), "patterns": (_LIST, True), "targets": (_LIST, True), "error": (str, True),
                    "corpus": (_LIST, True), "context": (str, False)},
    },
    "cuda_macros.toml": {
        "macro": {"when": (str, True), "value": (str, True)},
        "never": {"summary": (str, True)},
        "cxx_constant": {"matches": (str, True), "value": (str, True)},
    },
    "compile.toml": {
        "release": {"default": (_LIST, True), "registered": (_LIST, True), "modes": (_LIST, True),
                    "python_max": (str, True), "python_error": (str, True), "invalid_backend_error": (str, True),
                    "mode_kwarg_error": (str, True)},
        "backend_package": {"module": (str, True), "distribution": (str, True)},
        "entry_point": {"backend": (_LIST, True), "mode": (str, False), "options": (str, False),
                        "decorator": (bool, True)},
    },
    "inductor_options.toml": {
        "release": {"error": (str, True)},
    },
    "pickle.toml": {
        "unpicklable": {"error": (str, True), "kind": (str, True), "picklable_from": (str, False),
                        "queue_picklable": (bool, False)},
        "sink": {"arg": (_LIST, False), "args": (_LIST, False), "atomic": (_LIST, False), "via": (str, False),
                 "start_method": (_LIST, False), "context": (bool, False), "object": (str, False),
                 "advice": (str, False)},
        "start_methods": {"pickling": (_LIST, True), "contexts": (_LIST, True), "setters": (_LIST, True)},
        "queue": {"methods": (_LIST, True), "arg": (_LIST, True)},
        "hook": {"follow": (str, True), "sinks": (_LIST, False)},
    },
    "dispatch.toml": {
        "dispatch": {"bases": (_LIST, True), "never_on_nvidia": (_LIST, True)},
    },
    "returns_self.toml": {
        "returns_self": {"methods": (_LIST, True)},
    },
    "exceptions.toml": {
        "exception": {"bases": (_LIST, True)},
        "alias": {"of": (str, True)},
    },
    "build.toml": {
        "torch_arch_list": {"supported": (_LIST, True), "named": (_LIST, True), "error": (str, True)},
    },
    "symbols.toml": {
        "symbol": {"package": (str, True), "kind": (str, True), "added": (str, True), "removed": (str, False),
                   "deprecated": (str, False), "replacement": (str, False), "params": (dict, False)},
    },
    "deprecations.toml": {
        "call": {"replacement": (str, True), "fix": (str, False), "target": (str, False), "package": (str, False),
                 "since": (str, False), "removed": (str, False), "message": (str, False)},
        "keyword": {"package": (str, True), "calls": (_LIST, True), "since": (str, True), "removed": (str, False),
                    "message": (str, True), "replacement": (str, True), "fix": (str, False), "value": (str, False)},
    },
    "behavior.toml": {
        "change": {"package": (str, True), "param": (str, True), "changed": (str, True), "old": (str, True),
                   "new": (str, True), "pin_old": (str, True), "pin_new": (str, True), "call": (str, False),
                   "calls": (_LIST, False), "receivers": (_LIST, False), "unless": (_LIST, False),
                   "also": (_LIST, False), "since": (str, False)},
    },
    "transformers_attn.toml": {
        "keyword": {"added": (str, True), "calls": (_LIST, True), "receivers": (_LIST, True)},
        "value": {"added": (str, True), "removed": (str, False)},
        "kernel": {"added": (str, True), "pattern": (str, True)},
    },
    "api_hints.toml": {
        "keyword": {"hint": (str, True)},
        "name": {"hint": (str, True)},
        "alias": {"names": (dict, True)},
        "runtime": {"names": (_LIST, True)},
    },
    "syntax.toml": {
        "feature": {"python": (str, True), "construct": (str, True)},
        "backport": {"package": (str, True)},
    },
    "stdlib.toml": {  # generated from typeshed by tools/build_stdlib_matrix.py
        "module": {"added": (str, False), "removed": (str, False), "names_added": (dict, False),
                   "names_removed": (dict, False)},
    },
    "releases.toml": {
        "package": {"releases": (_LIST, True), "import": (_LIST, False)},
    },
    "attention.toml": {
        "vhead": {
            "calls": (_LIST, True),
            "library": (str, True),
            "args": (dict, True),
            "check": (str, True),
            "error": (str, True),
            "pairs": (_LIST, False),
            "feature": (str, False),
            "feature_error": (str, False),
            "forced_backends": (_LIST, False),
            "backend_added": (dict, False),
            "implementations": (_LIST, False),
            "package_range": (str, False),
            "dims": (_LIST, False),
        },
        "sdpa_context": {"backends": (_LIST, False), "flags": (dict, False)},
    },
    "fp8.toml": {
        "dtype": {"added": (str, True), "kind": (str, True)},
        "op": {"feature": (str, True), "error": (str, True), "summary": (str, True), "added": (str, False),
               "exception": (str, False)},
        "compiled_cast": {"feature": (str, True), "error": (str, True), "summary": (str, True), "dtypes": (_LIST, True),
                          "exception": (str, False)},
        "te_recipe": {"feature": (str, True), "error": (str, True), "summary": (str, False), "default": (bool, False)},
        "te_autocast": {"recipe_kw": (str, True), "enabled_default": (bool, True)},
    },
}


@dataclass(frozen=True)
class Arch:
    name: str  # "sm_90"
    capability: tuple[int, int]
    generation: str

    @property
    def major(self) -> int:
        return self.capability[0]


@dataclass
class Matrix:
    files: dict[str, dict[str, Any]]
    archs: dict[str, Arch] = field(default_factory=dict)
    gpu_names: dict[str, str] = field(default_factory=dict)  # lower-case name -> arch
    default_fleet: list[str] = field(default_factory=list)
    features: dict[str, frozenset[str]] = field(default_factory=dict)
    targets: dict[str, dict[str, Any]] = field(default_factory=dict)  # compile targets (sm_90a, ...)
    symbols: dict[str, dict[str, Any]] = field(default_factory=dict)
    api_dir: Path | None = None  # version_matrix/api: generated per-release API tables
    api_roots: dict[str, str] = field(default_factory=dict)  # import root -> package
    # exception name -> the handler names that catch it (itself, its bases, their aliases)
    handlers: dict[str, frozenset[str]] = field(default_factory=dict)
    _api: dict[str, Any] = field(default_factory=dict)

    def api(self, package: str):
        """The generated API table of ``package`` (loaded on first use), or None."""
        if package not in self._api:
            from .apimatrix import load_package

            path = self.api_dir / f"{package}.toml" if self.api_dir else None
            self._api[package] = load_package(path) if path is not None and path.is_file() else None
        return self._api[package]

    def api_exports(self, module: str, name: str) -> bool:
        """Does ``from module import *`` bind ``name`` in some release (generated tables)?"""
        package = self.api_package(module)
        api = self.api(package) if package else None
        m = api.module(module) if api else None
        return bool(m and not name.startswith("_") and m.entries(name))

    def api_package(self, qualname: str) -> str | None:
        return self.api_roots.get(qualname.split(".", 1)[0])

    def symbol_exists(self, qualname: str, package_version: Version | None):
        """True/False when the table knows the symbol and the release; else None."""
        e = self.symbols.get(qualname)
        if e is None or package_version is None:
            return None
        if package_version < Version(e["added"]):
            return False
        return not ("removed" in e and package_version >= Version(e["removed"]))

    def section(self, file: str, name: str) -> dict[str, dict[str, Any]]:
        return self.files.get(file, {}).get(name, {})

    def releases(self, package: str) -> list[Version]:
        entry = self.section("releases.toml", "package").get(package)
        if not entry:
            return []
        return [Version(v) for v in entry["releases"]]

    def feature_archs(self, feature: str) -> frozenset[str]:
        try:
            return self.features[feature]
        except KeyError:
            raise MatrixError(f"version_matrix/hardware.toml: unknown feature {feature!r}") from None


def _check_entry(fname: str, section: str, key: str, entry: Any, spec: dict[str, tuple[type, bool]]) -> None:
    where = f"version_matrix/{fname}: [{section}.{key}]"
    if not isinstance(entry, dict):
        raise MatrixError(f"{where}: expected a table")
    if not isinstance(entry.get("source"), str) or not entry["source"].strip():
        raise MatrixError(f"{where}: missing 'source' (every entry records its provenance)")
    for fname_, (typ, required) in spec.items():
        if fname_ not in entry:
            if required:
                raise MatrixError(f"{where}: missing {fname_!r}")
            continue
        if not isinstance(entry[fname_], typ):
            raise MatrixError(f"{where}: {fname_!r} must be {typ.__name__}")
    unknown = set(entry) - set(spec) - {"source", "note", "verified"}
    if unknown:
        raise MatrixError(f"{where}: unknown field(s) {', '.join(sorted(unknown))}")


def load_matrix(directory: Path | None = None) -> Matrix:
    directory = directory or data_dir("version_matrix")
    files: dict[str, dict[str, Any]] = {}
    for fname, sections in SCHEMAS.items():
        path = directory / fname
        try:
            with open(path, "rb") as fh:
                doc = tomllib.load(fh)
        except FileNotFoundError:
            raise MatrixError(f"version_matrix/{fname}: file is missing") from None
        except tomllib.TOMLDecodeError as exc:
            raise MatrixError(f"version_matrix/{fname}: {exc}") from None
        for section, spec in sections.items():
            for key, entry in doc.get(section, {}).items():
                if section == "default":  # a single table, not a table of entries
                    continue
                _check_entry(fname, section, key, entry, spec)
        if "default" in sections and "default" in doc:
            _check_entry(fname, "default", "fleet", doc["default"], sections["default"])
        files[fname] = doc
    m = _index(files)
    api_dir = directory / "api"
    if (api_dir / "index.toml").is_file():
        m.api_dir = api_dir
        with open(api_dir / "index.toml", "rb") as fh:
            index = tomllib.load(fh)
        for package, e in index.get("package", {}).items():
            for root in e.get("import", []):
                m.api_roots[root] = package
    return m


def _index(files: dict[str, dict[str, Any]]) -> Matrix:
    m = Matrix(files=files)
    gp = files["gpus.toml"]
    for name, e in gp.get("arch", {}).items():
        cap = e["capability"]
        if len(cap) != 2 or not all(isinstance(x, int) for x in cap):
            raise MatrixError(f"version_matrix/gpus.toml: [arch.{name}] capability must be [major, minor]")
        m.archs[name] = Arch(name, (cap[0], cap[1]), e["generation"])
    for name, e in gp.get("gpu", {}).items():
        if e["arch"] not in m.archs:
            raise MatrixError(f"version_matrix/gpus.toml: [gpu.{name}] unknown arch {e['arch']!r}")
        m.gpu_names[name.lower()] = e["arch"]
    m.default_fleet = list(gp["default"]["fleet"])
    for name, e in gp.get("target", {}).items():
        if e["kind"] not in ("plain", "arch", "family"):
            raise MatrixError(f"version_matrix/gpus.toml: [target.{name}] kind must be plain, arch or family")
        bad = [a for a in e["runs_on"] if a not in m.archs]
        if bad:
            raise MatrixError(f"version_matrix/gpus.toml: [target.{name}] unknown arch(s) {bad}")
        m.targets[name] = e
    for name, e in files["cuda_features.toml"].get("feature", {}).items():
        where = f"version_matrix/cuda_features.toml: [feature.{name}]"
        bad = [t for t in e["targets"] if t not in m.targets]
        if bad:
            raise MatrixError(f"{where} unknown compile target(s) {bad}")
        for pat in e["patterns"] + ([e["context"]] if "context" in e else []):
            try:
                re.compile(pat)
            except re.error as exc:
                raise MatrixError(f"{where} bad pattern {pat!r}: {exc}") from None
    for key, spans in files["inductor_options.toml"].get("keys", {}).items():
        if not isinstance(spans, list) or len(spans) % 2 or not all(isinstance(v, str) for v in spans):
            raise MatrixError(f"version_matrix/inductor_options.toml: [keys] {key!r} needs [first, last] release pairs")
    for name, e in files["symbols.toml"].get("symbol", {}).items():
        where = f"version_matrix/symbols.toml: [symbol.{name}]"
        if e["package"] not in files["releases.toml"].get("package", {}):
            raise MatrixError(f"{where} unknown package {e['package']!r} (add it to releases.toml)")
        versions = [e["added"]] + [e[k] for k in ("removed", "deprecated") if k in e]
        for pname, p in e.get("params", {}).items():
            if not isinstance(p, dict) or "added" not in p:
                raise MatrixError(f"{where} param {pname!r} needs a table with 'added'")
            versions += [p["added"]] + ([p["removed"]] if "removed" in p else [])
        for v in versions:
            try:
                Version(v)
            except (InvalidVersion, TypeError):
                raise MatrixError(f"{where} bad version {v!r}") from None
        m.symbols[name] = e
    for name, e in files["hardware.toml"].get("feature", {}).items():
        bad = [a for a in e["archs"] if a not in m.archs]
        if bad:
            raise MatrixError(f"version_matrix/hardware.toml: [feature.{name}] unknown arch(s) {bad}")
        m.features[name] = frozenset(e["archs"])
        badt = [t for t in e.get("targets", []) if t not in m.targets]
        if badt:
            raise MatrixError(f"version_matrix/hardware.toml: [feature.{name}] unknown compile target(s) {badt}")
    for pkg, e in files["releases.toml"].get("package", {}).items():
        for v in e["releases"]:
            try:
                Version(v)
            except InvalidVersion:
                raise MatrixError(f"version_matrix/releases.toml: [package.{pkg}] bad version {v!r}") from None
    exc = files["exceptions.toml"]
    aliases: dict[str, set[str]] = {}
    for name, e in exc.get("alias", {}).items():
        aliases.setdefault(e["of"], set()).add(name)
    for name, e in exc.get("exception", {}).items():
        names = {name, *e["bases"]}
        m.handlers[name] = frozenset(names.union(*(aliases.get(n, set()) for n in names)))
    for fname, section, key in (
        ("attention.toml", "vhead", "feature"),
        ("fp8.toml", "op", "feature"),
        ("fp8.toml", "compiled_cast", "feature"),
        ("fp8.toml", "te_recipe", "feature"),
    ):
        for name, e in files[fname].get(section, {}).items():
            if key in e and e[key] not in m.features:
                raise MatrixError(f"version_matrix/{fname}: [{section}.{name}] unknown feature {e[key]!r}")
    return m


@lru_cache(maxsize=1)
def default_matrix() -> Matrix:
    """The shipped matrix, loaded once per process."""
    return load_matrix()
