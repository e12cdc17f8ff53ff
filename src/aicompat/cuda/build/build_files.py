"""The build files (Makefiles, shell scripts, Dockerfiles) that may compile a file: those of
its folder, its ancestors up to the project root, and their immediate subfolders (scripts/,
tools/). Bounded: ``MAX_DIRS`` folders listed, ``MAX_FILES`` files."""

from __future__ import annotations

import os
from pathlib import Path

from ...fs.files import SKIP_DIRS, is_build_file

MAX_DIRS = 64
MAX_FILES = 256


def build_files(path: Path, root: Path) -> list[Path]:
    dirs, d = [], path.parent
    while True:
        dirs.append(d)
        if d == root or d.parent == d or len(dirs) > 16:
            break
        d = d.parent
    out: list[Path] = []
    seen_dirs = 0
    for d in dirs:
        for sub in [d] + sorted(_children(d)):
            seen_dirs += 1
            if seen_dirs > MAX_DIRS:
                return out
            try:
                entries = sorted(os.scandir(sub), key=lambda e: e.name)
            except OSError:
                continue
            for e in entries:
                if len(out) >= MAX_FILES:
                    return out
                if e.is_file(follow_symlinks=False) and is_build_file(e.name) and not e.name.endswith(".cmake"):
                    out.append(Path(e.path))
    return list(dict.fromkeys(out))


def _children(d: Path) -> list[Path]:
    try:
        return [Path(e.path) for e in os.scandir(d) if e.is_dir(follow_symlinks=False)
                and e.name not in SKIP_DIRS and not e.name.startswith(".")][:MAX_DIRS]
    except OSError:
        return []
