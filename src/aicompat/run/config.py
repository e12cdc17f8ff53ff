"""Where the target comes from, each source overriding the one before:

1. built-in defaults (portable fleet, the running Python),
2. the project's declared dependencies (run/declared.py: requirements files and folders with
   their -r/-c includes, constraints.txt, [project] dependencies and optional-dependencies,
   setup.cfg, setup.py read statically) and ``requires-python`` of the nearest pyproject,
3. ``[tool.aicompat]`` in the nearest pyproject.toml,
4. command-line flags or the Python API's ``Target``.

Every part of the resolved target remembers which of these it came from.
"""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence, cast

from packaging.requirements import InvalidRequirement, Requirement
from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.utils import canonicalize_name
from packaging.version import Version

from ..base.errors import ConfigError
from ..base.toml_compat import tomllib
from ..fs.files import MAX_EXCLUDE_CHARS, MAX_EXCLUDE_PATTERNS, MAX_EXCLUDE_TOTAL
from ..matrix import Matrix
from ..matrix.target import (
    ResolvedTarget,
    Target,
    check_cuda,
    parse_pin,
    parse_python,
    parse_spec,
    releases_for,
    resolve_members,
)
from ..rules.registry import unknown_code
from .declared import Pin, declared_pins, project_root
from .defaults import MAX_FILE_SIZE_MB, MAX_TIMEOUT

# jobs, timeout and cache-dir say how to run, not what to check; the rest is the target.
TOOL_KEYS = {"gpus", "python", "pins", "cuda", "exclude", "select", "extend-select", "ignore", "jobs", "timeout", "cache-dir",
             "cuda-verify", "max-file-size", "allow-incomplete",
             "respect-gitignore", "per-file-ignores"}


@dataclass
class Settings:
    target: ResolvedTarget
    exclude: list[str] = field(default_factory=list)
    select: list[str] = field(default_factory=list)
    extend_select: list[str] = field(default_factory=list)  # added to select (or to every default rule)
    ignore: list[str] = field(default_factory=list)
    config_file: Path | None = None
    notes: list[str] = field(default_factory=list)
    jobs: int | None = None  # None: the CLI's default (one per CPU)
    timeout: float | None = None
    cache_dir: Path | None = None  # relative paths in the config are relative to its folder
    max_bytes: int | None = None  # None: the default size limit per file (2 MB)
    allow_incomplete: bool = False  # True: AIC000/AIC002 do not make the exit status 3
    respect_gitignore: bool = True  # False: folders and files .gitignore ignores are walked too
    # pattern (gitignore syntax, relative to the config's folder) -> codes or prefixes not reported there
    per_file_ignores: dict[str, list[str]] = field(default_factory=dict)


def verify_options(timeout: float | None = None, cache_dir: Path | None = None):
    """Exact mode's options (the local nvcc, found once per run), and a note when there is no nvcc."""
    from ..cuda.exact.verify import Options, probe

    toolkit, why = probe()
    opts = Options(toolkit, timeout=timeout or 60.0, cache_dir=str(cache_dir) if cache_dir else None, missing=why)
    note = f"--cuda-verify: {why}: nothing was compiled; CUDA verdicts are the static ones" if toolkit is None else ""
    return opts, note


def find_pyproject(start: Path) -> Path | None:
    """The nearest pyproject.toml at or above ``start``, not above the top of its
    repository (the nearest folder holding ``.git``, a folder or a worktree's file):
    a clone at /tmp/x/repo must not take /tmp/x/pyproject.toml (its exclude, its
    requirements, its cache folder). Outside any repository, the nearest one."""
    start = start.resolve()
    if start.is_file():
        start = start.parent
    for d in (start, *start.parents):
        p = d / "pyproject.toml"
        if p.is_file():
            return p
        if os.path.lexists(d / ".git"):
            return None
    return None


MAX_PYPROJECT_BYTES = 4_000_000


def _load_toml(path: Path) -> dict[str, Any]:
    try:
        # A checked-out pyproject.toml may be a link to a device or a FIFO: read only a regular
        # file of sane size, without blocking (issue 16).
        st = os.stat(path)
        if not stat.S_ISREG(st.st_mode) or st.st_size > MAX_PYPROJECT_BYTES:
            raise ConfigError(f"{path}: not a regular file of at most {MAX_PYPROJECT_BYTES // 1_000_000} MB")
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
        with os.fdopen(fd, "rb") as fh:
            if not stat.S_ISREG(os.fstat(fh.fileno()).st_mode):
                raise ConfigError(f"{path}: not a regular file")
            return tomllib.loads(fh.read(MAX_PYPROJECT_BYTES + 1).decode("utf-8"))
    except UnicodeDecodeError:
        raise ConfigError(f"{path}: not UTF-8") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: not valid TOML: {exc}") from None
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read: {exc.strerror}") from None


def _requires_python_floor(spec_text: str, where: str) -> tuple[int, int] | None:
    try:
        spec = SpecifierSet(spec_text)
    except InvalidSpecifier:
        raise ConfigError(f"{where}: bad requires-python {spec_text!r}") from None
    for minor in range(0, 30):
        for probe in (f"3.{minor}", f"3.{minor}.999"):
            if spec.contains(Version(probe), prereleases=True):
                return 3, minor
    return None


def _which_absolute(name: str) -> str | None:
    """``shutil.which`` over the absolute PATH entries only: an empty or relative
    entry ("::", ".") would run ``./nvidia-smi`` from the checked-out repository."""
    dirs = [d for d in os.environ.get("PATH", os.defpath).split(os.pathsep) if d and os.path.isabs(d)]
    return shutil.which(name, path=os.pathsep.join(dirs)) if dirs else None


def local_gpus() -> list[str]:
    """Compute capabilities of the visible GPUs, as ``sm_XY`` (``--gpu auto``)."""
    exe = _which_absolute("nvidia-smi")
    if not exe:
        raise ConfigError("--gpu auto: no local NVIDIA GPU found (nvidia-smi is not on PATH); name the fleet with --gpu")
    try:
        res = subprocess.run(
            [exe, "--query-gpu=compute_cap", "--format=csv,noheader"],
            capture_output=True, text=True, timeout=20, check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise ConfigError(f"--gpu auto: nvidia-smi failed: {exc}") from None
    caps = [ln.strip() for ln in res.stdout.splitlines() if ln.strip()]
    if res.returncode != 0 or not caps:
        raise ConfigError("--gpu auto: nvidia-smi reports no GPU; name the fleet with --gpu")
    return ["sm_" + c.replace(".", "") for c in caps]


def _bounded_exclude(patterns: list[str], where: str) -> None:
    """A checked repository's config must not make the walk unbounded (fs/files.py)."""
    if len(patterns) > MAX_EXCLUDE_PATTERNS:
        raise ConfigError(f"{where}: {len(patterns):,} patterns is over the limit of {MAX_EXCLUDE_PATTERNS:,}; "
                          "exclude whole folders instead")
    for i, p in enumerate(patterns):
        if len(p) > MAX_EXCLUDE_CHARS:
            raise ConfigError(f"{where}[{i}]: a pattern of {len(p):,} characters is over the limit of "
                              f"{MAX_EXCLUDE_CHARS:,}; shorten it")
    total = sum(map(len, patterns))
    if total > MAX_EXCLUDE_TOTAL:
        raise ConfigError(f"{where}: {total:,} characters of patterns in all is over the limit of "
                          f"{MAX_EXCLUDE_TOTAL:,}; exclude whole folders instead")


def build_settings(
    matrix: Matrix,
    start: Path | None = None,
    cli: Target | None = None,
    cli_pins: list[str] | None = None,
    no_config: bool = False,
) -> Settings:
    """Resolve the effective target for files under ``start``."""
    cli = cli or Target()
    sources: dict[str, str] = {}
    pins: dict[str, SpecifierSet] = {}
    python = (sys.version_info[0], sys.version_info[1])
    sources["python"] = "running interpreter"
    gpus: list[str] = list(matrix.default_fleet)
    sources["gpus"] = "default"
    cuda: str | None = None
    settings_extra: dict[str, list[str]] = {"exclude": [], "select": [], "extend-select": [], "ignore": []}
    pyproject = None if no_config else find_pyproject(start or Path.cwd())
    tool: dict[str, Any] = {}
    verify = False
    refused_notes: list[str] = []

    doc: dict[str, Any] | None = None
    if pyproject is not None:
        doc = _load_toml(pyproject)
        project = doc.get("project", {})
        if not isinstance(project, dict):
            raise ConfigError(f"{pyproject}: [project] must be a table")
        deps = project.get("dependencies", []) or []
        if not isinstance(deps, list) or not all(isinstance(d, str) for d in deps):
            raise ConfigError(f"{pyproject}: [project].dependencies: expected a list of requirement strings")
        for i, dep in enumerate(deps):
            try:
                Requirement(dep)
            except InvalidRequirement:
                raise ConfigError(f"{pyproject}: [project].dependencies[{i}]: bad requirement {dep!r}") from None
    # The project's declared pins (run/declared.py): next to pyproject.toml, else in the nearest
    # folder that declares a project (a root requirements.txt, setup.py, ...).
    declared_root = pyproject.parent if pyproject is not None else (
        None if no_config else project_root(start or Path.cwd()))
    declared = declared_pins(declared_root, doc) if declared_root is not None else []
    alternatives = _merge_declared(declared, pins, sources)

    if pyproject is not None:
        assert doc is not None
        project = doc.get("project", {})
        if "requires-python" in project:
            floor = _requires_python_floor(str(project["requires-python"]), f"{pyproject}: [project].requires-python")
            if floor:
                python = floor
                sources["python"] = "pyproject.toml [project].requires-python"
        tools = doc.get("tool", {})
        if not isinstance(tools, dict):
            raise ConfigError(f"{pyproject}: [tool] must be a table")
        tool = tools.get("aicompat", {}) or {}
        if not isinstance(tool, dict):
            raise ConfigError(f"{pyproject}: [tool.aicompat] must be a table")
        unknown = sorted(set(tool) - TOOL_KEYS)
        if unknown:
            raise ConfigError(
                f"{pyproject}: [tool.aicompat] unknown key {unknown[0]!r} (known: {', '.join(sorted(TOOL_KEYS))})"
            )
        src = "pyproject.toml [tool.aicompat]"
        if "gpus" in tool:
            if not isinstance(tool["gpus"], list) or not tool["gpus"]:
                raise ConfigError(f"{pyproject}: [tool.aicompat] gpus: expected a non-empty list of GPU names or archs")
            gpus = list(tool["gpus"])
            sources["gpus"] = src
        if "python" in tool:
            if not isinstance(tool["python"], str):  # TOML reads python = 3.10 as the float 3.1
                raise ConfigError(f"{pyproject}: [tool.aicompat] python: expected a quoted version, got "
                                  f"{tool['python']!r} (TOML reads an unquoted 3.10 as the number 3.1); "
                                  'quote it: python = "3.10"')
            python = parse_python(tool["python"], f"{pyproject}: [tool.aicompat] python")
            sources["python"] = src
        if "cuda" in tool:
            if not isinstance(tool["cuda"], str):  # cuda = 12.10 would be the number 12.1
                raise ConfigError(f"{pyproject}: [tool.aicompat] cuda: expected a quoted version, got "
                                  f"{tool['cuda']!r} (TOML reads an unquoted 12.10 as the number 12.1); "
                                  'quote it: cuda = "12.8"')
            cuda = check_cuda(tool["cuda"], f"{pyproject}: [tool.aicompat] cuda")
            sources["cuda"] = src
        if "pins" in tool:
            raw = tool["pins"]
            if isinstance(raw, list):
                if not all(isinstance(x, str) for x in raw):
                    raise ConfigError(f"{pyproject}: [tool.aicompat] pins: expected a list of requirement strings")
                for item in raw:
                    name, spec = parse_pin(str(item), f"{pyproject}: [tool.aicompat] pins")
                    pins[name] = spec
                    sources[f"pin:{name}"] = src
            elif isinstance(raw, dict):
                for name, val in raw.items():
                    key: str = canonicalize_name(name)  # reused below for the list keys
                    pins[key] = parse_spec(key, str(val), f"{pyproject}: [tool.aicompat] pins.{name}")
                    sources[f"pin:{key}"] = src
            else:
                raise ConfigError(f"{pyproject}: [tool.aicompat] pins: expected a list of requirements or a table")
        if "cuda-verify" in tool:
            # Exact mode runs nvcc on the checked code: the person running aicompat decides, never
            # the tree being checked (a pull request could switch it on for itself).
            refused_notes.append(f"{pyproject}: [tool.aicompat] cuda-verify is ignored: exact mode runs nvcc on "
                                 "the checked code, so only the command line (--cuda-verify) or the environment "
                                 "(AICOMPAT_CUDA_VERIFY=1) turns it on")
        for key in ("exclude", "select", "extend-select", "ignore"):
            if key in tool:
                if not isinstance(tool[key], list) or not all(isinstance(x, str) for x in tool[key]):
                    raise ConfigError(f"{pyproject}: [tool.aicompat] {key}: expected a list of strings")
                # As strict as --select/--ignore: a typo must not switch every check off (or none).
                if key == "exclude":
                    _bounded_exclude(tool[key], f"{pyproject}: [tool.aicompat] exclude")
                bad = None if key == "exclude" else unknown_code(tool[key])
                if bad is not None:
                    raise ConfigError(f"{pyproject}: [tool.aicompat] {key}: unknown rule code {bad!r} "
                                      "(see 'aicompat rules')")
                settings_extra[key] = list(tool[key])

    run_opts: dict[str, Any] = {}
    if "jobs" in tool:
        if not isinstance(tool["jobs"], int) or isinstance(tool["jobs"], bool) or tool["jobs"] < 1:
            raise ConfigError(f"{pyproject}: [tool.aicompat] jobs: expected a whole number >= 1")
        run_opts["jobs"] = tool["jobs"]
    if "timeout" in tool:
        t = tool["timeout"]
        if not isinstance(t, (int, float)) or isinstance(t, bool) or not 0 < t <= MAX_TIMEOUT:  # also nan, inf
            raise ConfigError(f"{pyproject}: [tool.aicompat] timeout: expected seconds > 0 and <= {MAX_TIMEOUT:g}")
        run_opts["timeout"] = float(t)
    if "max-file-size" in tool:
        mb = tool["max-file-size"]
        if not isinstance(mb, (int, float)) or isinstance(mb, bool) or not 0 < mb <= MAX_FILE_SIZE_MB:  # also nan
            raise ConfigError(f"{pyproject}: [tool.aicompat] max-file-size: expected megabytes > 0 and "
                              f"<= {MAX_FILE_SIZE_MB:g}")
        run_opts["max_bytes"] = int(mb * 1_000_000)
    if "allow-incomplete" in tool:
        if not isinstance(tool["allow-incomplete"], bool):
            raise ConfigError(f"{pyproject}: [tool.aicompat] allow-incomplete: expected true or false")
        run_opts["allow_incomplete"] = tool["allow-incomplete"]
    if "per-file-ignores" in tool:
        run_opts["per_file_ignores"] = _per_file_ignores(tool["per-file-ignores"], f"{pyproject}: [tool.aicompat]")
    if "respect-gitignore" in tool:
        if not isinstance(tool["respect-gitignore"], bool):
            raise ConfigError(f"{pyproject}: [tool.aicompat] respect-gitignore: expected true or false")
        run_opts["respect_gitignore"] = tool["respect-gitignore"]
    if "cache-dir" in tool:
        if not isinstance(tool["cache-dir"], str) or not tool["cache-dir"].strip():
            raise ConfigError(f"{pyproject}: [tool.aicompat] cache-dir: expected a path")
        assert pyproject is not None  # tool is only read from it
        run_opts["cache_dir"] = pyproject.parent / tool["cache-dir"]

    # Command line / API: the last word.
    if cli.gpus:
        gpus = local_gpus() if [g.lower() for g in cli.gpus] == ["auto"] else list(cli.gpus)
        sources["gpus"] = "--gpu" if cli.gpus != ["auto"] else "--gpu auto (nvidia-smi)"
    if cli.python:
        python = parse_python(cli.python, "--python")
        sources["python"] = "--python"
    if cli.cuda:
        cuda = check_cuda(cli.cuda, "--cuda")
        sources["cuda"] = "--cuda"
    for name, val in (cli.pins or {}).items():
        key = canonicalize_name(name)
        pins[key] = parse_spec(key, val, f"pins[{name!r}]")
        sources[f"pin:{key}"] = "api"
    if cli.cuda_verify is not None:
        verify = cli.cuda_verify
    for text in cli_pins or []:
        name, spec = parse_pin(text, "--pin")
        pins[name] = spec
        sources[f"pin:{name}"] = "--pin"

    where_gpus = "--gpu" if sources["gpus"].startswith("--gpu") else f"{pyproject}: [tool.aicompat] gpus"
    members = resolve_members(gpus, matrix, where_gpus)
    _rename_pins(pins, sources, alternatives, matrix)
    releases = {}
    declared_notes: list[str] = []
    for name, spec in list(pins.items()):
        where = sources.get(f"pin:{name}", "")
        if _explicit(where):  # aicompat's own config
            if where.startswith("pyproject.toml [tool"):
                where = f"{pyproject}: [tool.aicompat] pins"
            releases[name] = releases_for(name, spec, matrix, where)
            continue
        # The project's own declared pins: a pin that matches no release aicompat knows,
        # or files that disagree, are said in a note, never an error (not aicompat's config).
        got, note, either = _declared_releases(name, alternatives.get(name) or [(spec, where)], matrix)
        if got is None:
            del pins[name]
            sources.pop(f"pin:{name}", None)
        else:
            releases[name] = got
            if either:  # no one specifier says "any of these sources": the releases do
                pins[name] = SpecifierSet()
        if note:
            declared_notes.append(note)
    pin_notes = declared_notes + _pin_notes(pins, releases, sources, matrix) + _unpinned_torch(releases, matrix)
    target = ResolvedTarget(
        members=members,
        python=python,
        pins=pins,
        releases=releases,
        cuda=cuda,
        sources=sources,
        default_fleet=sources["gpus"] == "default",
    )
    notes = refused_notes + pin_notes
    if verify:
        target.verify, missing = verify_options(run_opts.get("timeout"))
        if missing:
            notes.append(missing)
    if target.default_fleet:
        notes.append(
            "no GPU fleet configured: checked against the portable default fleet "
            f"{', '.join(target.archs)} (set --gpu or [tool.aicompat] gpus)"
        )
    return Settings(
        target=target,
        exclude=settings_extra["exclude"],
        select=settings_extra["select"],
        extend_select=settings_extra["extend-select"],
        ignore=settings_extra["ignore"],
        config_file=pyproject,
        notes=notes,
        **run_opts,
    )


def _per_file_ignores(value, where: str) -> dict[str, list[str]]:
    """``{"tests/**" = ["AIC204"], "bench/*.py" = ["AIC1"]}``, checked as strictly as ``ignore``."""
    if not isinstance(value, dict):
        raise ConfigError(f"{where} per-file-ignores: expected a table of pattern = [codes]")
    if len(value) > MAX_EXCLUDE_PATTERNS:
        raise ConfigError(f"{where} per-file-ignores: more than {MAX_EXCLUDE_PATTERNS} patterns")
    out = {}
    for pattern, codes in value.items():
        if not isinstance(codes, list) or not all(isinstance(c, str) for c in codes):
            raise ConfigError(f"{where} per-file-ignores: {pattern!r}: expected a list of codes")
        if len(pattern) > MAX_EXCLUDE_CHARS:
            raise ConfigError(f"{where} per-file-ignores: a pattern over {MAX_EXCLUDE_CHARS} characters")
        bad = unknown_code(codes)
        if bad is not None:
            raise ConfigError(f"{where} per-file-ignores: {pattern!r}: unknown rule code {bad!r} (see 'aicompat rules')")
        out[pattern] = [c.strip().upper() for c in codes]
    return out


def _unpinned_torch(releases: dict, matrix) -> list[str]:
    """Without a torch pin the API rules judge the newest torch aicompat knows: said, so a
    clean run is not read as "clean on the torch we use"."""
    if "torch" in releases:
        return []
    final = [v for v in matrix.releases("torch") if not v.is_prerelease]
    if not final:
        return []
    return [f"no torch pin: the API rules judged torch {max(final)}, the newest release aicompat knows (pin the "
            "one you run: --pin torch==X.Y, or torch in [project] dependencies or a requirements file)"]


def _pin_notes(pins: dict, releases: dict, sources: dict, matrix) -> list[str]:
    """Say what a pin changes: an exact pin of a release aicompat does not know is checked
    against the nearest known ones (``flash-attn==2.5.9``: PyPI has only 2.5.9.post1;
    ``torch==2.99``: newer than any), never against nothing; an explicit pin of a package
    aicompat does not model (``triton==3.6.0``) changes nothing, and the note says so.
    ``releases`` is updated in place."""
    modelled = set(matrix.section("releases.toml", "package")) | set(matrix.api_roots.values())
    notes = []
    for name, spec in pins.items():
        src = sources.get(f"pin:{name}", "")
        # A project's dependencies and requirements files list every package; only a pin
        # given to aicompat itself (--pin, [tool.aicompat] pins, the API) earns the note.
        explicit = src in ("--pin", "api") or src.startswith("pyproject.toml [tool.aicompat]")
        known = sorted(matrix.releases(name))
        if name not in modelled:
            if explicit:
                notes.append(f"{name}{spec}: aicompat does not model {name}, so this pin changes no finding")
            continue
        if not known:
            continue
        unknown = [v for v in releases.get(name, []) if v not in known]
        if not unknown:
            continue
        chosen: list = []
        for v in unknown:
            same = [k for k in known if k.release == v.release]  # 2.5.9 -> 2.5.9.post1
            if same or known[0] < v < known[-1]:
                near = same or [max(k for k in known if k < v), min(k for k in known if k > v)]
                chosen.extend(k for k in near if k not in chosen)
                notes.append(f"{name}{spec}: {v} is no {name} release aicompat knows; checked against the "
                             f"nearest: {', '.join(str(k) for k in near)}")
            elif v > known[-1]:
                # Kept: version tests see it; the API tables answer as for their newest release.
                chosen.append(v)
                notes.append(f"{name}{spec}: {v} is newer than any {name} release aicompat knows; its API is "
                             f"checked as of {known[-1]}, the newest known")
            else:
                chosen.append(v)
                notes.append(f"{name}{spec}: {v} is older than any {name} release aicompat knows ({known[0]}): "
                             f"only version tests apply to it, its API tables say nothing")
        releases[name] = sorted({*(v for v in releases[name] if v in known), *chosen})
    return notes


def _merge_declared(declared: list[Pin], pins: dict[str, SpecifierSet], sources: dict[str, str]) -> dict:
    """Each package's declared pins, intersected across every source that names it; when
    they disagree (no release satisfies them all), each source's pins are an alternative,
    returned as name -> [(spec, where)] (one entry per source)."""
    by_name: dict[str, list[Pin]] = {}
    for p in declared:
        by_name.setdefault(p.name, []).append(p)
    alternatives: dict[str, Sequence[tuple[SpecifierSet | None, str]]] = {}  # None: separate installs
    for name, found in by_name.items():
        found = [p for p in found if str(p.spec)]  # an unpinned dependency constrains nothing
        if not found:
            continue
        spec = SpecifierSet()
        for p in found:
            spec &= p.spec
        pins[name] = spec
        sources[f"pin:{name}"] = ", ".join(dict.fromkeys(p.where for p in found))
        groups: dict[str, list[Pin]] = {}
        for p in found:
            groups.setdefault(p.group, []).append(p)
        alt = []
        for group in groups.values():
            g = SpecifierSet()
            for p in group:
                g &= p.spec
            alt.append((g, ", ".join(dict.fromkeys(p.where for p in group))))
        alternatives[name] = [(spec, sources[f"pin:{name}"])] + (alt if len(alt) > 1 else [])
        envs = _environments(found)
        if envs:
            # cast: mypy cannot add these lists under the declared type
            alternatives[name] = cast("list[tuple[SpecifierSet | None, str]]", [(None, sources[f"pin:{name}"])] + envs)
    return alternatives


def _environments(found: list) -> list[tuple[SpecifierSet, str]]:
    """Extras and environment markers are separate installs (a ``cuda`` and an ``npu`` extra
    are never installed together): (spec, where) per environment, per requirement source: the
    pins every install from that source has, alone (an install with no extra) and with each
    environment's own; [] when no pin of the package is an alternative (the caller intersects)."""
    if all(p.alternative is None for p in found):
        return []
    groups: dict[str, list] = {}
    for p in found:
        groups.setdefault(p.group, []).append(p)
    out = []
    for pins in groups.values():
        base = [p for p in pins if p.alternative is None]
        alts: dict[str, list] = {}
        for p in pins:
            if p.alternative is not None:
                alts.setdefault(p.alternative, []).append(p)
        common = SpecifierSet()
        for p in base:
            common &= p.spec
        if base:
            out.append((common, "every install (" + ", ".join(dict.fromkeys(p.where for p in base)) + ")"))
        for alt, own in alts.items():
            spec = common
            for p in own:
                spec &= p.spec
            out.append((spec, f"{alt} (" + ", ".join(dict.fromkeys(p.where for p in own)) + ")"))
    return out if len(out) > 1 else []


def _rename_pins(pins: dict, sources: dict, alternatives: dict, matrix) -> None:
    """A pin of a package under its earlier name (``sgl-kernel==0.3.16``; releases.toml
    ``renamed_from``) pins the one release line it shares with the current name; a pin of one
    of its parts built at the same version (``transformer_engine_cu12==2.4.0``; ``components``)
    pins that line too, together with any pin of the package itself."""
    for new, entry in matrix.section("releases.toml", "package").items():
        for old in entry.get("renamed_from", []) + entry.get("components", []):
            if old not in pins:
                continue
            if new in pins:
                if old not in entry.get("components", []):
                    continue
                mine, theirs = sources.get(f"pin:{new}", ""), sources.pop(f"pin:{old}", "")
                spec = pins.pop(old)
                if _explicit(theirs) and not _explicit(mine):
                    pins[new], sources[f"pin:{new}"] = spec, theirs  # aicompat's own pin is the last word
                    alternatives.pop(new, None)
                elif _explicit(mine) == _explicit(theirs):
                    pins[new] = pins[new] & spec  # installed together: both hold
                    sources[f"pin:{new}"] = ", ".join(dict.fromkeys(w for w in (mine, theirs) if w))
                    alternatives.pop(new, None)  # the intersection is the one source now
                alternatives.pop(old, None)
                continue
            pins[new] = pins.pop(old)
            if f"pin:{old}" in sources:
                sources[f"pin:{new}"] = sources.pop(f"pin:{old}")
            if old in alternatives:
                alternatives[new] = alternatives.pop(old)


def _explicit(where: str) -> bool:
    """A pin given to aicompat itself (--pin, the API, [tool.aicompat] pins), not the project's."""
    return where in ("--pin", "api") or where.startswith("pyproject.toml [tool")


def _declared_releases(name: str, options: list[tuple[SpecifierSet, str]], matrix) -> tuple[list | None, str, bool]:
    """The releases a declared pin allows: the intersection of every source (``options[0]``)
    when some release satisfies it, else every release one of the sources allows.
    (None, note, False) when nothing is left: the package is then checked unpinned. The
    flag says the releases are the sources' union."""
    def allowed(spec, where):
        try:
            return releases_for(name, spec, matrix, where)
        except ConfigError:
            return None

    if not matrix.releases(name):
        return [], "", False  # a package aicompat does not model: its pins change nothing, say nothing
    separate = options[0][0] is None  # extras or markers: separate installs, never intersected
    both = None if separate else allowed(*options[0])
    if both and not _contradicts(options[0][0]):
        return both, "", False
    union: list = []
    used = []
    for spec, where in options[1:]:
        got = allowed(spec, where)
        if got:
            union.extend(v for v in got if v not in union)
            rng = str(got[0]) if len(got) == 1 else f"{min(got)} to {max(got)}"
            used.append(f"{where}: {name}{spec or ' unpinned'}, {rng}" if separate else f"{where} ({spec})")
    if not union:
        return None, (f"{name}: the project's pins ({options[0][1]}: {options[0][0]}) match no {name} release "
                      "aicompat knows; checked as if unpinned"), False
    if separate:
        return sorted(union), (f"{name}: the project's extras and markers are separate installs, each checked "
                               "(a finding names the release it fails on): " + "; ".join(used)), True
    return sorted(union), (f"{name}: the project's requirement sources disagree, so each is checked: "
                           + "; ".join(used)), True


def _contradicts(spec: SpecifierSet) -> bool:
    """Two different exact pins (``==2.14.0`` and ``==2.16.0.dev1``): nothing satisfies both."""
    exact = {s.version for s in spec if s.operator in ("==", "===") and "*" not in s.version}
    return len(exact) > 1
