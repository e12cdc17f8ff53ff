"""Reading only what belongs to the linted tree.

The code aicompat checks is untrusted (a pull request from anyone), and so is
everything it names: ``open("/etc/passwd").read()``, ``"../../secret"``, a
``kernel.cu`` symlinked to a device or to a file outside the repository, a
``requirements.txt`` that is a FIFO. A path it reads because the checked code or
the checked tree names it is read only when it is a regular file (not a
symlink, device or FIFO) inside the project root, outside version-control
folders (``.git/config`` may hold a CI token), and at most a bounded size; the
read itself does not follow a symlink or block on a FIFO swapped in after the
check. Anything else is simply not read: unknown, as if absent.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from . import deps

_VCS = {".git", ".hg", ".svn"}
MAX_BYTES = 2_000_000


def within(path: str | os.PathLike, root: str | os.PathLike) -> str | None:
    """``path`` made absolute (relative paths are relative to the current folder),
    when it and every folder it passes through resolve inside ``root`` and it is
    not in a version-control folder; else None."""
    try:
        p = os.path.normpath(os.path.abspath(os.fspath(path)))
        real_root = os.path.realpath(os.fspath(root))
        real = os.path.realpath(p)
    except (OSError, ValueError, TypeError):  # ValueError: a NUL in the name
        return None
    inside = (real == real_root or real.startswith(real_root.rstrip(os.sep) + os.sep)) and \
        not _VCS & set(Path(os.path.relpath(real, real_root)).parts)
    deps.note_decision(real, real_root, inside)  # a result depends on it (fs/deps.py)
    return p if inside else None


def regular_inside(path: str | os.PathLike, root: str | os.PathLike | None,
                   max_bytes: int = MAX_BYTES) -> os.stat_result | None:
    """The stat of ``path`` when it is a regular file (itself not a symlink) of at
    most ``max_bytes`` inside ``root``; None otherwise. ``root`` None: no tree is
    known, so nothing is read."""
    if root is None:
        return None
    p = within(path, root)
    if p is None:
        return None
    try:
        st = os.lstat(p)
    except OSError:
        return None
    if not stat.S_ISREG(st.st_mode) or st.st_size > max_bytes:
        return None
    return st


def read_inside(path: str | os.PathLike, root: str | os.PathLike | None, max_bytes: int = MAX_BYTES) -> bytes | None:
    """The bytes of ``path`` under the rules of ``regular_inside``, else None."""
    if regular_inside(path, root, max_bytes) is None:
        deps.note_read(path, None, max_bytes)  # nothing (or too much) to read is what the result was made of too
        return None
    return read_regular(path, max_bytes)


def read_regular(path: str | os.PathLike, max_bytes: int) -> bytes | None:
    """At most ``max_bytes`` of a regular file, opened without following a final
    symlink and without blocking on a FIFO; None when it is anything else or longer."""
    data = _read_regular(path, max_bytes)
    deps.note_read(path, data, max_bytes)  # while a file is linted, what it was made from (fs/deps.py)
    return data


def _read_regular(path: str | os.PathLike, max_bytes: int) -> bytes | None:
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0)
    try:
        fd = os.open(path, flags)
    except (OSError, ValueError):
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        with os.fdopen(fd, "rb") as fh:
            fd = -1
            data = fh.read(max_bytes + 1)
    except OSError:
        return None
    finally:
        if fd >= 0:
            os.close(fd)
    return data if len(data) <= max_bytes else None


def tree_of(file: str, root: str | None) -> str | None:
    """The tree a checked file may read from: the project root when the file is
    inside it; else (a file linted from elsewhere, or no root given) the folder
    holding its top-level package (its own folder for a script), as for imports."""
    if not file or file.startswith("<"):
        return None
    try:
        here = os.path.dirname(os.path.realpath(file))
    except (OSError, ValueError):
        return None
    if root is not None:
        real_root = os.path.realpath(root)
        if here == real_root or here.startswith(real_root.rstrip(os.sep) + os.sep):
            return real_root
    while os.path.isfile(os.path.join(here, "__init__.py")) and os.path.dirname(here) != here:
        here = os.path.dirname(here)
    return here
