"""What one file's result was made from, besides the file itself: the cache's dependencies.

While a file is linted (``recording()``, run/linter.py), every other file read
through the confined readers (confine.read_regular: project modules, sidecar
.cu and header files, files the code opens by name) is noted with a digest of
the bytes read, or ``ABSENT`` when there was nothing to read (a module that
does not exist yet is a dependency too: creating it changes the result). Every
decision ``confine.within`` made (is this path inside that root?) is noted as
well: the project root follows the current folder, and a result stays valid
under another root exactly when those decisions come out the same
(run/cache.py). Readers that keep what they read in a per-process memo note the
digest again on every use (``note_digest``), or the second file that uses the
memo would not depend on it.
"""

from __future__ import annotations

import hashlib
import os
import stat
from contextlib import contextmanager
from typing import Iterator

ABSENT = "-"  # not a regular file we could read (missing, a link, a FIFO, too large)


def digest(data: bytes | None) -> str:
    return ABSENT if data is None else hashlib.blake2b(data, digest_size=16).hexdigest()


def over(limit: int) -> str:
    """What a reader capped at ``limit`` bytes saw of a longer regular file: only its size
    mattered (a module too large to follow), so only its size is checked again."""
    return f">{limit}"


def longer_than(path: str | os.PathLike, limit: int) -> bool:
    """Is ``path`` a regular file (not a link) of more than ``limit`` bytes?"""
    try:
        st = os.lstat(path)
    except (OSError, ValueError):
        return False
    return stat.S_ISREG(st.st_mode) and st.st_size > limit


class Record:
    def __init__(self) -> None:
        self.reads: dict[str, str] = {}  # absolute path -> digest of what was read (ABSENT: nothing)
        self.decisions: dict[tuple[str, str], bool] = {}  # (real path, real root) -> inside?


_current: Record | None = None


@contextmanager
def recording() -> Iterator[Record]:
    """Note what is read until the block ends; nested: the outer record (a notebook's code)."""
    global _current
    if _current is not None:
        yield _current
        return
    _current = rec = Record()
    try:
        yield rec
    finally:
        _current = None


def note_read(path: str | os.PathLike, data: bytes | None, limit: int | None = None) -> None:
    """``data``: what was read, None when nothing was; ``limit``: the reader's cap (a file
    longer than it was not read for its size: ``over``)."""
    if _current is not None:
        too_long = data is None and limit is not None and longer_than(path, limit)
        note_digest(path, over(limit) if too_long and limit is not None else digest(data))


def note_digest(path: str | os.PathLike, value: str) -> None:
    if _current is not None:
        try:
            _current.reads.setdefault(os.path.abspath(os.fspath(path)), value)
        except (TypeError, ValueError):
            pass


def note_decision(real: str, real_root: str, inside: bool) -> None:
    if _current is not None:
        _current.decisions.setdefault((real, real_root), inside)
