"""Reading a file to lint: never whole before its size is known, never blocking on a FIFO."""

from __future__ import annotations

import errno
import os
import stat

MAX_FILE_BYTES = 2_000_000  # the default size limit per file (--max-file-size)


def read_capped(path, limit: int = MAX_FILE_BYTES) -> bytes | int:
    """The file's bytes, or its size when that is over ``limit``: a file is
    never read whole before its size is known (a 40 GB file, or one that
    grows while it is read, costs ``limit`` bytes). Like confine.read_regular,
    the open does not block on a FIFO swapped in after the walk, and anything
    but a regular file is refused. Raises OSError."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0))
    with open(fd, "rb") as fh:
        st = os.fstat(fh.fileno())
        if not stat.S_ISREG(st.st_mode):
            raise OSError(errno.EINVAL, "not a regular file", str(path))
        size = st.st_size
        if size > limit:
            return size
        data = fh.read(limit + 1)
    return len(data) if len(data) > limit else data
