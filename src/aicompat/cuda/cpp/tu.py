"""A translation unit as nvcc sees it: a source with its in-tree ``#include``s inlined.

A header's device helpers are emitted only where a live kernel of the including
source reaches them (cuda/cpp/cxx.py, "emitted only if called"), so a header is judged
through the unit that includes it, not alone. Each in-tree file is inlined once (at
its first ``#include``, as ``#pragma once`` and include guards make it); includes
outside the tree stay as they are. Bounded by MAX_BYTES and MAX_FILES: past them the
unit is not built and the header keeps its own verdict.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from . import includes

MAX_BYTES = 4_000_000
MAX_FILES = 400


@dataclass
class Unit:
    text: str
    where: list[tuple[Path, int]]  # TU line (0-based index) -> (file, line in that file)


def inline(path: Path, root: Path, include_dirs) -> Unit | None:
    """The unit of ``path``, or None when a bound is reached or the source cannot be read."""
    out: list[str] = []
    where: list[tuple[Path, int]] = []
    seen: set[Path] = set()
    size = [0]

    def add(f: Path, depth: int) -> bool:
        text = includes.read(f)
        if text is None or depth > 64:
            return False
        seen.add(f)
        size[0] += len(text)
        if size[0] > MAX_BYTES or len(seen) > MAX_FILES:
            return False
        found = {line: (name, quoted) for line, name, quoted in includes.directives(text)}
        for n, line in enumerate(text.split("\n"), 1):
            if n in found:
                name, quoted = found[n]
                p = includes.resolve(name, quoted, f.parent, include_dirs, root)
                if p is not None:
                    if p not in seen and not add(p, depth + 1):
                        return False
                    if p in seen:
                        out.append("")  # the directive itself, already inlined
                        where.append((f, n))
                        continue
            out.append(line)
            where.append((f, n))
        return True

    if not add(path, 0):
        return None
    return Unit("\n".join(out), where)
