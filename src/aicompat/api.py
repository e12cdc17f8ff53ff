"""Python API: what the CLI does, as functions returning diagnostics."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from .config import Settings, build_settings
from .diagnostics import Diagnostic
from .files import discover, display_path
from .linter import FileResult, Linter
from .matrix import Matrix, default_matrix
from .target import Target


@dataclass
class RunResult:
    diagnostics: list[Diagnostic]
    files: list[FileResult] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)
    settings: Settings | None = None

    @property
    def suppressed(self) -> list[Diagnostic]:
        return [d for f in self.files for d in f.suppressed]


def run(paths: list[str], settings: Settings, matrix: Matrix, select: list[str] | None = None,
        ignore: list[str] | None = None, prefilter: bool = True, stdin: tuple[bytes, str] | None = None) -> RunResult:
    """Lint ``paths``; with ``stdin=(data, display name)`` lint that text instead."""
    linter = Linter(settings.target, matrix, select=select if select else settings.select,
                    ignore=(ignore or []) + settings.ignore, prefilter=prefilter)
    if stdin is not None:
        result = linter.lint_bytes(stdin[0], stdin[1])
        return RunResult(sorted(result.diagnostics, key=Diagnostic.sort_key), [result], [], settings)
    root = settings.config_file.parent if settings.config_file else None
    files, missing = discover(paths, settings.exclude, root)
    results = [linter.lint_path(f, display_path(f)) for f in files]
    diags = sorted((d for r in results for d in r.diagnostics), key=Diagnostic.sort_key)
    return RunResult(diags, results, missing, settings)


def lint_source(code: str, target: Target | None = None, path: str = "<source>", select: list[str] | None = None,
                ignore: list[str] | None = None, matrix: Matrix | None = None) -> list[Diagnostic]:
    """Lint one module's source text against ``target`` (no config files read)."""
    matrix = matrix or default_matrix()
    settings = build_settings(matrix, cli=target or Target(), no_config=True)
    linter = Linter(settings.target, matrix, select=select, ignore=ignore)
    return linter.lint_bytes(code.encode("utf-8"), path).diagnostics


def lint_paths(paths: list[str | Path], target: Target | None = None, use_config: bool = True,
               select: list[str] | None = None, ignore: list[str] | None = None,
               matrix: Matrix | None = None) -> list[Diagnostic]:
    """Lint files and folders; ``target`` overrides config like CLI flags do."""
    matrix = matrix or default_matrix()
    str_paths = [str(p) for p in paths] or ["."]
    settings = build_settings(matrix, start=Path(str_paths[0]), cli=target or Target(), no_config=not use_config)
    return run(str_paths, settings, matrix, select, ignore).diagnostics
