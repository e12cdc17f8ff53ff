"""The files a CUDA source includes, found inside the linted tree.

``#include "x.cuh"`` is looked up beside the including file, then in the
include directories; ``#include <x.cuh>`` only in the include directories.
Only regular files inside ``root`` are read (no symlinks, devices or FIFOs),
each at most MAX_BYTES, and each once per run (cuda/cpp/runcache.py): headers of a
kernel repository are included by dozens of sources. Nothing outside the tree (CUDA's
own headers, CUTLASS when it is not vendored) is read: what those define is
not known from here.
"""

from __future__ import annotations

import os
import re
import stat
from pathlib import Path

from ...fs import deps
from ...fs.confine import read_regular, within
from . import runcache

MAX_BYTES = 1_000_000

_INCLUDE = re.compile(r'^[ \t]*#[ \t]*include[ \t]*([<"])([^>"\n]+)[>"]', re.M)


def directives(text: str) -> list[tuple[int, str, bool]]:
    """(line, name, quoted) of every ``#include`` in ``text``."""
    out = []
    for m in _INCLUDE.finditer(text):
        out.append((text.count("\n", 0, m.start()) + 1, m.group(2).strip(), m.group(1) == '"'))
    return out


def inside(path: Path, root: Path) -> bool:
    try:
        path.relative_to(root)
    except ValueError:
        return False
    return True


def regular_file(path: Path) -> os.stat_result | None:
    """The stat of a regular, non-symlink file of at most MAX_BYTES, else None."""
    try:
        st = os.lstat(path)
    except OSError:
        return None
    if not stat.S_ISREG(st.st_mode) or st.st_size > MAX_BYTES:
        return None
    return st


def resolve(name: str, quoted: bool, from_dir: Path, include_dirs, root: Path) -> Path | None:
    """The in-tree file ``#include`` names, or None (outside the tree, absent, not a regular file)."""
    if os.path.isabs(name) or "\0" in name:
        return None
    dirs = ([from_dir] if quoted else []) + [Path(d) for d in include_dirs]
    for d in dirs:
        cand = Path(os.path.normpath(d / name))
        # Inside the tree by its real path too: a folder link (inc -> /etc) or a VCS folder is not.
        if inside(cand, root) and within(cand, root) is not None and regular_file(cand) is not None:
            return cand
    return None


def read(path: Path) -> str | None:
    """The text of an in-tree file, read once per run per (path, size, mtime)."""
    st = regular_file(path)
    if st is None:
        return None
    key = (str(path), st.st_size, st.st_mtime_ns)
    texts: dict[tuple[str, int, int], str | None] = runcache.table("texts")
    digests: dict[tuple[str, int, int], str] = runcache.table("text_digests")
    if key not in texts:
        data = read_regular(path, MAX_BYTES)  # not through a link swapped in since, never a FIFO
        texts[key] = data.decode("utf-8", "replace") if data is not None else None
        digests[key] = deps.digest(data)
    else:  # every file that includes it depends on it, not only the first (fs/deps.py)
        deps.note_digest(path, digests.get(key, deps.ABSENT))
    return texts[key]
