"""Python API: what the CLI does, as functions returning diagnostics."""

from __future__ import annotations

import os
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import cast

from ..base.deep import grow_stack
from ..base.diagnostics import Diagnostic
from ..base.notes import fold
from ..fs import gitignore
from ..fs.deps import digest as content_digest
from ..fs.files import discover, display_path
from ..matrix import Matrix, default_matrix
from ..matrix.target import Target
from ..report.fix import digest
from ..syntax.suppress import NEVER_SUPPRESSED
from .cache import Cache, run_settings
from .config import Settings, build_settings
from .declared import run_root
from .linter import FileResult, Linter, limit_result, unreadable
from .parallel import (
    MAX_FILE_BYTES,
    FileTimeout,
    LinterSpec,
    Queued,
    Work,
    bound_jobs,
    file_cap,
    lint_one,
    lint_parallel,
    lint_serial,
    read_capped,
    timed,
    timeout_result,
    too_large,
    use_pool,
)


@dataclass
class RunResult:
    diagnostics: list[Diagnostic]
    files: list[FileResult] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)
    settings: Settings | None = None
    cache_hits: int = 0
    workers: int = 1  # processes that parsed files (1: this one)
    notes: list[str] = field(default_factory=list)  # run-level notes rules left, each once (counted ones counted)
    root: str | None = None  # the project root: files outside it are not read for the checked code, nor fixed
    pruned: list[str] = field(default_factory=list)  # build/dist folders the walk skipped (-v names them)
    named_notes: list[str] = field(default_factory=list)  # the notes with what a counted note counts (-v)
    cache_misses: dict[str, int] = field(default_factory=dict)  # cause -> files (run/cache.py)
    cache_unstored: dict[str, int] = field(default_factory=dict)  # why a result was not stored -> files
    cache_details: list[str] = field(default_factory=list)  # the first misses, each with its file and cause

    @property
    def suppressed(self) -> list[Diagnostic]:
        return [d for f in self.files for d in f.suppressed]


def run(paths: list[str], settings: Settings, matrix: Matrix, select: list[str] | None = None,
        ignore: list[str] | None = None, prefilter: bool = True, stdin: tuple[bytes, str] | None = None, *,
        jobs: int = 1, timeout: float | None = None, cache_dir: Path | None = None,
        isolate: bool = False, fixes: bool = False, max_bytes: int | None = None,
        extend_select: list[str] | None = None) -> RunResult:
    """Lint ``paths``; with ``stdin=(data, display name)`` lint that text instead.

    ``jobs`` > 1 parses on that many worker processes (when there is enough to
    parse to pay for starting them; never more than the CPUs available);
    ``isolate`` parses every file on a worker, never in this process (the
    command line: a file that crashes the parser or exhausts memory then costs
    one file); ``timeout`` limits each file's analysis, the prefilter's scan
    included, and files over ``max_bytes`` (default 2 MB; a notebook: its code,
    the notebook file up to ten times it) are not read or parsed (AIC002);
    ``cache_dir`` reuses results of unchanged files (standard input is never
    cached: an editor buffer is rarely linted twice unchanged); ``fixes``: the
    caller applies the findings' fixes, which are never applied from the cache, so
    files whose findings had one are checked again; ``extend_select`` adds codes to the selection
    (an opt-in code such as AIC004 runs only where named). Files the checked code names are
    read only inside the project root (the config file's folder, else the
    current folder; fs/confine.py)."""
    grow_stack()  # legal code nests deep (base/deep.py); the workers inherit it
    project_root = str(settings.config_file.parent.resolve()) if settings.config_file else \
        str(run_root(paths) if stdin is None else Path.cwd().resolve())
    max_bytes = max_bytes or settings.max_bytes or MAX_FILE_BYTES
    chosen = list(select if select else settings.select)
    extend = list(extend_select or []) + settings.extend_select
    if extend:  # ruff's extend-select: what is chosen (every default rule when nothing is), and these
        chosen = (chosen or ["AIC"]) + extend
    spec = LinterSpec(settings.target, matrix, tuple(s.upper() for s in chosen),
                      tuple(s.upper() for s in (ignore or []) + settings.ignore), prefilter, project_root, max_bytes)
    linter = spec.build()
    try:
        jobs = bound_jobs(jobs)
        if stdin is not None:
            data, display = stdin
            result = too_large(data, display, max_bytes) or _precheck(linter, data, display, timeout)
            if result is None:
                result = (lint_parallel(spec, [(0, display, data)], 1, timeout, linter=linter)[0] if isolate
                          else lint_one(linter, data, display, timeout))
            _per_file_ignores([result], settings, project_root)
            notes = list(dict.fromkeys(result.notes))
            return RunResult(sorted(result.diagnostics, key=Diagnostic.sort_key), [result], [], settings,
                             workers=1, notes=fold(notes, False), root=project_root, named_notes=fold(notes, True))
        root = settings.config_file.parent if settings.config_file else None
        unusable: list[tuple[Path, str]] = []
        unlisted: list[tuple[Path, OSError]] = []
        pruned: list[Path] = []
        files, missing = discover(paths, settings.exclude, root, unusable, unlisted, pruned,
                                  respect_gitignore=settings.respect_gitignore)
        cache = None
        if cache_dir is not None:
            cache = Cache(cache_dir, run_settings(settings.target.as_json(), list(spec.select), list(spec.ignore),
                                                 prefilter), project_root)
        results: list[FileResult | None] = [None] * len(files)
        work: list[Work] = []
        contents: dict[int, str] = {}  # the digest of each file's bytes, for the cache
        for i, f in enumerate(files):
            display = display_path(f)
            try:
                # an int (its size, over the cap) never gets past too_large below
                data = cast(bytes, read_capped(f, file_cap(display, max_bytes)))
            except OSError as exc:
                results[i] = unreadable(display, exc)
                continue
            # The size limit comes before any scan of the text.
            results[i] = too_large(data, display, max_bytes) or _precheck(linter, data, display, timeout)
            if results[i] is not None:  # most files of a tree end here, unparsed and uncached
                continue
            if cache is not None:
                contents[i] = content_digest(data)
                results[i] = cache.get(f, display, contents[i], fixes)
                if results[i] is not None:
                    continue
            # Where to read it again, not its bytes: they would all be held here at once.
            work.append((i, display, Queued(str(f), len(data), digest(data))))
        workers = min(jobs, len(work)) if use_pool(work, jobs) else 1
        if workers > 1 or (isolate and work):
            done = lint_parallel(spec, work, workers, timeout, linter=linter)
        else:
            done = lint_serial(linter, work, timeout)
        for i, res in done.items():
            results[i] = res
            checked = res.digest  # None: not a result of the bytes the key was made of
            res.digest = checked if fixes else None
            if cache is not None and checked is not None:
                cache.put(files[i], contents[i], res)
        final = [r for r in results if r is not None]
        # The link itself is named, not where it points (nowhere, or in a loop).
        final += [FileResult(f"{display_path(p.parent)}/{p.name}".removeprefix("./"), skipped=why) for p, why in unusable]
        # A folder that cannot be listed is reported, not skipped in silence: its files were not
        # checked, so the run is incomplete (AIC002: no noqa, baseline, --ignore or --exit-zero hides it).
        final += [limit_result(display_path(p), f"cannot read folder: {exc.strerror or exc} (give it read and "
                                                "search permission, or exclude it)") for p, exc in unlisted]
        _per_file_ignores(final, settings, project_root)
        diags = sorted((d for r in final for d in r.diagnostics), key=Diagnostic.sort_key)
        # Every file's notes, checked here, on a worker or read from the cache: a counted note counts them all.
        notes = list(dict.fromkeys(n for r in final for n in r.notes))
        out = RunResult(diags, final, missing, settings, cache.hits if cache else 0, workers=workers,
                        notes=fold(notes, False), root=project_root, pruned=[display_path(p) for p in pruned],
                        named_notes=fold(notes, True))
        if cache is not None:
            out.cache_misses, out.cache_unstored, out.cache_details = \
                dict(cache.misses.most_common()), dict(cache.unstored.most_common()), list(cache.details)
        return out

    finally:
        linter.close()  # the run's end: exact mode's compilers and private folder (cuda/session.py)

def with_run_options(verify, timeout: float | None, cache_dir):
    """Exact mode's options with the run's time limit and cache folder (compile results live there)."""
    if verify is None:
        return None
    return replace(verify, timeout=timeout or verify.timeout, cache_dir=str(cache_dir) if cache_dir else None)


def _precheck(linter: Linter, data: bytes, display: str, timeout: float | None) -> FileResult | None:
    """The prefilter's scan, under the file's time limit (its scans are linear,
    but the limit is the promise)."""
    try:
        return timed(linter.precheck, timeout, data, display)
    except FileTimeout as exc:
        assert timeout is not None  # timed raises it only under a limit
        return timeout_result(display, timeout, exc.wall)


def lint_source(code: str, target: Target | None = None, path: str = "<source>", select: list[str] | None = None,
                ignore: list[str] | None = None, matrix: Matrix | None = None) -> list[Diagnostic]:
    """Lint one module's source text against ``target`` (no config files read)."""
    matrix = matrix or default_matrix()
    settings = build_settings(matrix, cli=target or Target(), no_config=True)
    linter = Linter(settings.target, matrix, select=select, ignore=ignore)
    try:
        return linter.lint_bytes(code.encode("utf-8"), path).diagnostics
    finally:
        linter.close()


def lint_paths(paths: list[str | Path], target: Target | None = None, use_config: bool = True,
               select: list[str] | None = None, ignore: list[str] | None = None,
               matrix: Matrix | None = None, jobs: int = 1, timeout: float | None = None,
               cache_dir: str | Path | None = None, max_bytes: int | None = None) -> list[Diagnostic]:
    """Lint files and folders; ``target`` overrides config like CLI flags do.

    Unlike the CLI, this runs in the calling process and keeps no cache
    unless asked (``jobs``, ``cache_dir``): a library should not start
    processes or write files its caller did not ask for."""
    matrix = matrix or default_matrix()
    str_paths = [str(p) for p in paths] or ["."]
    settings = build_settings(matrix, start=Path(str_paths[0]), cli=target or Target(), no_config=not use_config)
    settings.target.verify = with_run_options(settings.target.verify, timeout, cache_dir)
    return run(str_paths, settings, matrix, select, ignore, jobs=jobs, timeout=timeout,
               cache_dir=Path(cache_dir) if cache_dir is not None else None, max_bytes=max_bytes).diagnostics


def _per_file_ignores(results: list[FileResult], settings: Settings, project_root: str) -> None:
    """``[tool.aicompat] per-file-ignores``: a file whose path (relative to the config's folder)
    a pattern matches, gitignore-style, does not report those codes; they count as suppressed.
    AIC000/AIC002 (a file not checked) are never hidden."""
    if not settings.per_file_ignores:
        return
    rules = [(gitignore.pattern(p), codes) for p, codes in settings.per_file_ignores.items()]
    for r in results:
        rel = _relative(r.path, project_root)
        codes = [c for rx, cs in rules if rx is not None and rx.fullmatch(rel) for c in cs]
        if not codes:
            continue
        keep: list[Diagnostic] = []
        for d in r.diagnostics:
            hidden = d.code not in NEVER_SUPPRESSED and any(d.code.startswith(c) for c in codes)
            (r.suppressed if hidden else keep).append(d)
        r.diagnostics = keep


def _relative(path: str, root: str) -> str:
    try:
        return Path(os.path.abspath(path)).relative_to(root).as_posix()
    except ValueError:
        return Path(path).as_posix()
