"""Python API: what the CLI does, as functions returning diagnostics."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from .cache import Cache, run_fingerprint
from .config import Settings, build_settings
from .diagnostics import Diagnostic
from .files import discover, display_path
from .fix import digest
from .linter import FileResult, Linter, unreadable
from .matrix import Matrix, default_matrix
from .parallel import LinterSpec, lint_one, lint_parallel, lint_serial, too_large, use_pool
from .target import Target


@dataclass
class RunResult:
    diagnostics: list[Diagnostic]
    files: list[FileResult] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)
    settings: Settings | None = None
    cache_hits: int = 0
    workers: int = 1  # processes that parsed files (1: this one)
    root: str | None = None  # the project root: files outside it are not read for the checked code, nor fixed

    @property
    def suppressed(self) -> list[Diagnostic]:
        return [d for f in self.files for d in f.suppressed]


def run(paths: list[str], settings: Settings, matrix: Matrix, select: list[str] | None = None,
        ignore: list[str] | None = None, prefilter: bool = True, stdin: tuple[bytes, str] | None = None, *,
        jobs: int = 1, timeout: float | None = None, cache_dir: Path | None = None, fixes: bool = False) -> RunResult:
    """Lint ``paths``; with ``stdin=(data, display name)`` lint that text instead.

    ``jobs`` > 1 parses on that many worker processes (when there is enough to
    parse to pay for starting them); ``timeout`` limits each file's analysis
    and files over 2 MB are not parsed (AIC002); ``cache_dir`` reuses results of unchanged files (standard input
    is never cached: an editor buffer is rarely linted twice unchanged); ``fixes``: the caller applies
    the findings' fixes, which the cache does not keep, so files whose findings had one are checked again.
    Files the checked code names are read only inside the project root (the config file's folder, else
    the current folder; confine.py)."""
    project_root = str((settings.config_file.parent if settings.config_file else Path.cwd()).resolve())
    spec = LinterSpec(settings.target, matrix, tuple(s.upper() for s in (select if select else settings.select)),
                      tuple(s.upper() for s in (ignore or []) + settings.ignore), prefilter, project_root)
    linter = spec.build()
    if stdin is not None:
        result = linter.precheck(stdin[0], stdin[1]) or too_large(stdin[0], stdin[1]) or \
            lint_one(linter, stdin[0], stdin[1], timeout)
        return RunResult(sorted(result.diagnostics, key=Diagnostic.sort_key), [result], [], settings, root=project_root)
    root = settings.config_file.parent if settings.config_file else None
    unusable: list[tuple[Path, str]] = []
    files, missing = discover(paths, settings.exclude, root, unusable)
    cache = None
    if cache_dir is not None:
        cache = Cache(cache_dir, run_fingerprint(settings.target.as_json(), list(spec.select), list(spec.ignore),
                                                 prefilter), project_root)
    results: list[FileResult | None] = [None] * len(files)
    work: list[tuple[int, str, bytes]] = []
    keys: dict[int, str] = {}
    digests: dict[int, str] = {}
    for i, f in enumerate(files):
        display = display_path(f)
        try:
            data = f.read_bytes()
        except OSError as exc:
            results[i] = unreadable(display, exc)
            continue
        results[i] = linter.precheck(data, display)  # most files of a tree end here, unparsed and uncached
        if results[i] is not None:
            continue
        results[i] = too_large(data, display)
        if results[i] is not None:
            continue
        if cache is not None:
            keys[i] = cache.key(display, data)
            results[i] = cache.get(keys[i], display, fixes)
            if results[i] is not None:
                continue
        work.append((i, display, data))
        if fixes:
            digests[i] = digest(data)
    workers = min(jobs, len(work)) if use_pool(work, jobs) else 1
    done = lint_parallel(spec, work, jobs, timeout, linter=linter) if workers > 1 else lint_serial(linter, work, timeout)
    for i, res in done.items():
        results[i] = res
        res.digest = digests.get(i)
        if cache is not None:
            cache.put(keys[i], res)
    final = [r for r in results if r is not None]
    # The link itself is named, not where it points (nowhere, or in a loop).
    final += [FileResult(f"{display_path(p.parent)}/{p.name}".removeprefix("./"), skipped=why) for p, why in unusable]
    diags = sorted((d for r in final for d in r.diagnostics), key=Diagnostic.sort_key)
    return RunResult(diags, final, missing, settings, cache.hits if cache else 0, workers, project_root)


def lint_source(code: str, target: Target | None = None, path: str = "<source>", select: list[str] | None = None,
                ignore: list[str] | None = None, matrix: Matrix | None = None) -> list[Diagnostic]:
    """Lint one module's source text against ``target`` (no config files read)."""
    matrix = matrix or default_matrix()
    settings = build_settings(matrix, cli=target or Target(), no_config=True)
    linter = Linter(settings.target, matrix, select=select, ignore=ignore)
    return linter.lint_bytes(code.encode("utf-8"), path).diagnostics


def lint_paths(paths: list[str | Path], target: Target | None = None, use_config: bool = True,
               select: list[str] | None = None, ignore: list[str] | None = None,
               matrix: Matrix | None = None, jobs: int = 1, timeout: float | None = None,
               cache_dir: str | Path | None = None) -> list[Diagnostic]:
    """Lint files and folders; ``target`` overrides config like CLI flags do.

    Unlike the CLI, this runs in the calling process and keeps no cache
    unless asked (``jobs``, ``cache_dir``): a library should not start
    processes or write files its caller did not ask for."""
    matrix = matrix or default_matrix()
    str_paths = [str(p) for p in paths] or ["."]
    settings = build_settings(matrix, start=Path(str_paths[0]), cli=target or Target(), no_config=not use_config)
    return run(str_paths, settings, matrix, select, ignore, jobs=jobs, timeout=timeout,
               cache_dir=Path(cache_dir) if cache_dir is not None else None).diagnostics
