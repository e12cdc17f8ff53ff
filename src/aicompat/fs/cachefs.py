"""The cache's file system side, for a cache folder the linted tree may control.

The default cache sits inside the repository, so a pull request can commit
anything there: symlinks to files outside the tree (``.gitignore`` ->
``~/.bashrc``, a whole entry folder -> ``/etc``), FIFOs, devices, forged
entries. So every folder below the cache root is checked to be a real folder
(not a symlink) before it is used, files are created with ``O_EXCL |
O_NOFOLLOW`` (never through a link, never truncating what is there) and moved
into place with ``os.replace`` (which replaces a link, not its target), and
reads do not follow a final symlink or block on a FIFO.

Entries are bound to this machine's user by an HMAC under a random secret kept
outside every tree, in the user's cache home (``$XDG_CACHE_HOME/aicompat``,
else ``~/.cache/aicompat``, created 0700/0600): an entry committed to a
repository was made with another secret, or none, and is simply a miss.
"""

from __future__ import annotations

import os
import secrets
import stat
import tempfile
from pathlib import Path

from .confine import read_regular

_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_SECRET: bytes | None = None


def _real_dir(path: Path) -> bool:
    try:
        return stat.S_ISDIR(os.lstat(path).st_mode)
    except OSError:
        return False


def real_dirs(root: Path, parts: list[str], create: bool) -> Path | None:
    """``root/parts...`` when it and every folder on the way from ``root`` are real
    folders (created where ``create`` and missing), else None. Folders above
    ``root`` are the user's choice and may be links."""
    if create and not os.path.lexists(root):
        os.makedirs(root.parent, exist_ok=True)
        try:
            os.mkdir(root)
        except FileExistsError:
            pass
    path = root
    for part in [None, *parts]:
        if part is not None:
            path = path / part
            if create:
                try:
                    os.mkdir(path)
                except FileExistsError:
                    pass
        if not _real_dir(path):
            return None
    return path


def create_new(path: Path, data: bytes, mode: int = 0o644) -> bool:
    """Write a file that does not exist yet; False (and nothing written) when
    anything, a link included, is already there."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW | getattr(os, "O_BINARY", 0), mode)
    except OSError:
        return False
    with os.fdopen(fd, "wb") as fh:
        fh.write(data)
    return True


def replace_file(folder: Path, name: str, data: bytes, mode: int = 0o644, sync: bool = False,
                 prefix: str = ".tmp-") -> None:
    """Write ``folder/name`` whole: a new temporary file, then a rename over the name (which
    replaces a link there, never its target); ``sync`` flushes it to disk first (a user's file)."""
    fd, tmp = tempfile.mkstemp(dir=folder, prefix=prefix)  # O_EXCL: never an existing file or link
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            if sync:
                fh.flush()
                os.fsync(fh.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, Path(folder) / name)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def _secret_home() -> Path:
    base = os.environ.get("XDG_CACHE_HOME", "")
    if not base or not os.path.isabs(base):
        base = os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "aicompat"


def _read_secret(path: Path) -> bytes | None:
    try:
        st = os.lstat(path)
    except OSError:
        return None
    if not stat.S_ISREG(st.st_mode):
        return None
    if os.name == "posix" and (st.st_mode & 0o077 or st.st_uid != os.getuid()):
        return None  # readable by others, or someone else's: not a secret
    data = read_regular(path, 256)
    if data is None:
        return None
    data = data.strip()
    return data if len(data) == 64 else None


def machine_secret() -> bytes:
    """This user's cache secret, created on first use. Where it cannot be kept
    (a read-only home), a secret for this process only: the cache then serves
    nothing across runs, but still nothing it did not write itself."""
    global _SECRET
    if _SECRET is not None:
        return _SECRET
    home = _secret_home()
    path = home / "secret"
    found = _read_secret(path)
    if found is None and not os.path.lexists(path):
        try:
            os.makedirs(home, mode=0o700, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=home, prefix=".secret-")  # 0600
            try:
                with os.fdopen(fd, "wb") as fh:
                    fh.write(secrets.token_hex(32).encode() + b"\n")
                try:
                    os.link(tmp, path)  # atomic, and never over a secret another run made first
                except FileExistsError:
                    pass
                except OSError:  # no hard links here
                    if not os.path.lexists(path):
                        os.replace(tmp, path)
            finally:
                if os.path.lexists(tmp):
                    os.unlink(tmp)
        except OSError:
            pass
        found = _read_secret(path)
    _SECRET = found or secrets.token_hex(32).encode()
    return _SECRET


def ensure_root(root: Path) -> None:
    """Create the cache folder with a .gitignore and a CACHEDIR.TAG (also used by exact mode's
    compile results, cuda/exact/verify.py); never through a link, never over what is there."""
    if real_dirs(root, [], create=True) is None:
        raise OSError("the cache folder is not a folder")
    # Keep the cache out of version control without touching the
    # project's own .gitignore (ruff does the same).
    create_new(root / ".gitignore", b"# Automatically created by aicompat.\n*\n")
    create_new(root / "CACHEDIR.TAG", b"Signature: 8a477f597d28d172789f06886806bc55\n"
                                      b"# This file is a cache directory tag created by aicompat.\n")
