"""The project's declared dependencies, read statically, each pin with where it came from.

Read, relative to the project root (each file a regular file inside it, fs/confine.py):

- ``requirements*.txt`` and ``constraints*.txt`` at the root, ``*.txt`` in a
  ``requirements/`` folder (vLLM's layout), and every file they include with
  ``-r``/``--requirement`` or ``-c``/``--constraint`` (relative to the including file);
- pyproject.toml ``[project].dependencies`` and ``[project.optional-dependencies]``;
- setup.cfg ``[options] install_requires`` and ``[options.extras_require]``;
- setup.py's ``setup(install_requires=..., extras_require=...)`` when they are literals or
  module-level names bound to literals: read with ``ast``, never executed.

Each top-level source is one way to install the project (a requirements file with its
includes, the pyproject, setup.cfg, setup.py). run/config.py intersects the pins of a package
across them; when they disagree (vLLM's cuda.txt and rubin-prerelease.txt pin different
torch releases) they are alternatives, and every release one of them allows is checked.
"""

from __future__ import annotations

import ast
import configparser
import os
from dataclasses import dataclass
from pathlib import Path

from packaging.requirements import InvalidRequirement, Requirement
from packaging.specifiers import SpecifierSet
from packaging.utils import canonicalize_name

from ..fs.confine import read_inside

MAX_REQUIREMENTS_BYTES = 1_000_000
MAX_SETUP_BYTES = 1_000_000
MAX_INCLUDED_FILES = 200  # -r/-c files followed per run: a loop or a generated tree stops here
MARKERS = ("pyproject.toml", "setup.py", "setup.cfg", "requirements.txt", "requirements", "constraints.txt")


@dataclass(frozen=True)
class Pin:
    name: str  # canonical
    spec: SpecifierSet
    where: str  # "requirements/cuda.txt:7 (-r from requirements/dev.txt)", "setup.py install_requires"
    group: str  # the top-level source it belongs to: pins of one group are one install
    # An extra (``[project.optional-dependencies].npu``) or an environment marker: one of several
    # environments, checked each on its own, never intersected with the others; None: every install.
    alternative: str | None = None


def project_root(start: Path) -> Path | None:
    """The nearest folder at or above ``start`` that declares a project (a pyproject.toml,
    setup.py, setup.cfg, requirements.txt, requirements/ or constraints.txt), not above
    the repository's top (a folder holding ``.git``)."""
    start = start.resolve()
    if not start.is_dir():
        start = start.parent
    for d in (start, *start.parents):
        if any((d / m).exists() for m in MARKERS):
            return d
        if (d / ".git").exists():
            return None
    return None


def run_root(paths: list[str]) -> Path:
    """The project a run without a config file reads in (fs/confine): the nearest folder at
    or above what it lints (the linted paths' common folder) that declares a project
    (MARKERS) or is a repository's top (``.git``); where none does, the top of the
    package that folder lies in (itself, for a folder of scripts). It never depends on
    the folder the run starts from, so a warm run from inside the tree finds the
    entries a run from its top wrote (issue 29 item 3)."""
    try:
        real = [Path(os.path.realpath(p)) for p in paths] or [Path.cwd().resolve()]
        start = Path(os.path.commonpath([str(p if p.is_dir() else p.parent) for p in real]))
    except (OSError, ValueError):  # paths on different drives (Windows), or unreadable
        return Path.cwd().resolve()
    for d in (start, *start.parents):
        if any((d / m).exists() for m in MARKERS) or os.path.lexists(d / ".git"):
            return d
    while (start / "__init__.py").is_file() and start.parent != start:
        start = start.parent
    return start


def declared_pins(root: Path, pyproject: dict | None) -> list[Pin]:
    out: list[Pin] = []
    seen: set[Path] = set()
    budget = [MAX_INCLUDED_FILES]
    tops = sorted(root.glob("requirements*.txt")) + sorted(root.glob("constraints*.txt"))
    folder = root / "requirements"
    if folder.is_dir() and not folder.is_symlink():
        tops += sorted(p for p in folder.glob("*.txt"))
    for top in tops:
        group = _rel(top, root)
        _requirements_file(top, root, group, None, out, seen, budget)
    if pyproject is not None:
        out += _pyproject(pyproject)
    out += _setup_cfg(root)
    out += _setup_py(root)
    return out


def _rel(path: Path, root: Path) -> str:
    try:
        return path.relative_to(root).as_posix()
    except ValueError:
        return path.name


def _pin(text: str, where: str, group: str, extra: str | None = None) -> Pin | None:
    try:
        req = Requirement(text)
    except InvalidRequirement:
        return None  # pip syntax aicompat does not model (a URL, an editable path): not a pin
    parts = ([f"extra {extra}"] if extra else []) + ([f"where {req.marker}"] if req.marker else [])
    return Pin(canonicalize_name(req.name), req.specifier, where, group, " ".join(parts) or None)


def _requirements_file(path: Path, root: Path, group: str, via: str | None, out: list[Pin], seen: set[Path],
                       budget: list[int]) -> None:
    try:
        real = path.resolve()
    except (OSError, RuntimeError):
        return
    if real in seen or budget[0] <= 0:
        return
    seen.add(real)
    budget[0] -= 1
    # A regular file inside the project only: a requirements.txt linked to /dev/zero or
    # a FIFO must not exhaust memory or block, an include must not leave the project.
    data = read_inside(path, root, MAX_REQUIREMENTS_BYTES)
    if data is None:
        return
    name = _rel(path, root)
    suffix = f" (included from {via})" if via else ""
    for n, raw in enumerate(data.decode("utf-8", "replace").splitlines(), 1):
        line = raw.split(" #", 1)[0].split("--hash", 1)[0].strip()
        if not line or line.startswith("#"):
            continue
        include = _include(line)
        if include is not None:
            _requirements_file(path.parent / include, root, group, f"{name}:{n}", out, seen, budget)
            continue
        if line.startswith("-") or "://" in line:
            continue  # options (--extra-index-url, -e .) and URLs are not pins
        pin = _pin(line, f"{name}:{n}{suffix}", group)
        if pin is not None:
            out.append(pin)


def _include(line: str) -> str | None:
    """The file of ``-r FILE``, ``-rFILE``, ``--requirement=FILE``, ``-c FILE``, ``--constraint FILE``."""
    for flag in ("--requirement", "--constraint", "-r", "-c"):
        if line.startswith(flag):
            rest = line[len(flag):]
            if flag.startswith("--") and rest[:1] not in ("=", " ", "\t"):
                return None
            rest = rest.lstrip("= \t")
            return rest or None
    return None


def _pyproject(doc: dict) -> list[Pin]:
    """[project] dependencies were validated by run/config.py; extras are read where well-formed."""
    out: list[Pin] = []
    project = doc.get("project", {})
    if not isinstance(project, dict):
        return out
    for dep in project.get("dependencies", []) or []:
        pin = _pin(dep, "pyproject.toml [project].dependencies", "pyproject.toml") if isinstance(dep, str) else None
        if pin is not None:
            out.append(pin)
    extras = project.get("optional-dependencies", {})
    if isinstance(extras, dict):
        for extra, deps in extras.items():
            if not isinstance(deps, list):
                continue
            for dep in deps:
                if isinstance(dep, str):
                    pin = _pin(dep, f"pyproject.toml [project.optional-dependencies].{extra}", "pyproject.toml",
                               extra)
                    if pin is not None:
                        out.append(pin)
    return out


def _setup_cfg(root: Path) -> list[Pin]:
    data = read_inside(root / "setup.cfg", root, MAX_SETUP_BYTES)
    if data is None:
        return []
    cfg = configparser.ConfigParser(interpolation=None)
    try:
        cfg.read_string(data.decode("utf-8", "replace"))
    except configparser.Error:
        return []
    out: list[Pin] = []
    if cfg.has_option("options", "install_requires"):
        out += _lines_to_pins(cfg.get("options", "install_requires"), "setup.cfg [options] install_requires")
    if cfg.has_section("options.extras_require"):
        for extra, value in cfg.items("options.extras_require"):
            out += _lines_to_pins(value, f"setup.cfg [options.extras_require] {extra}", extra)
    return out


def _lines_to_pins(value: str, where: str, extra: str | None = None) -> list[Pin]:
    out = []
    for line in value.replace(";\n", "\n").splitlines():
        line = line.split(" #", 1)[0].strip()
        pin = _pin(line, where, where.split(" ", 1)[0], extra) if line and not line.startswith("#") else None
        if pin is not None:
            out.append(pin)
    return out


def _setup_py(root: Path) -> list[Pin]:
    """``setup(install_requires=[...], extras_require={...})``, the arguments literals or
    names bound once at module level to literals; anything computed is not read."""
    data = read_inside(root / "setup.py", root, MAX_SETUP_BYTES)
    if data is None:
        return []
    try:
        tree = ast.parse(data)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return []
    bound: dict[str, ast.expr | None] = {}
    for stmt in tree.body:
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
            name = stmt.targets[0].id
            bound[name] = stmt.value if name not in bound else None  # bound twice: not a constant
    out: list[Pin] = []
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and _is_setup(node.func)):
            continue
        for kw in node.keywords:
            if kw.arg == "install_requires":
                for text in _strings(_literal(kw.value, bound)):
                    pin = _pin(text, "setup.py install_requires", "setup.py")
                    if pin is not None:
                        out.append(pin)
            elif kw.arg == "extras_require":
                extras = _literal(kw.value, bound)
                if isinstance(extras, dict):
                    for extra, deps in extras.items():
                        for text in _strings(deps):
                            pin = _pin(text, f"setup.py extras_require[{extra!r}]", "setup.py", extra)
                            if pin is not None:
                                out.append(pin)
    return out


def _is_setup(func: ast.expr) -> bool:
    return (isinstance(func, ast.Name) and func.id == "setup") or \
        (isinstance(func, ast.Attribute) and func.attr == "setup" and isinstance(func.value, ast.Name)
         and func.value.id in ("setuptools", "distutils"))


def _literal(expr, bound: dict):
    if isinstance(expr, ast.Name):
        expr = bound.get(expr.id)
    if expr is None:
        return None
    try:
        return ast.literal_eval(expr)
    except (ValueError, TypeError, SyntaxError, RecursionError, MemoryError):
        return None


def _strings(value) -> list[str]:
    if isinstance(value, str):
        return [ln.strip() for ln in value.splitlines() if ln.strip()]
    if isinstance(value, (list, tuple)) and all(isinstance(v, str) for v in value):
        return list(value)
    return []
