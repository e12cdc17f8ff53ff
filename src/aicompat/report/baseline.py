"""Baselines for adopting aicompat on an existing repo.

``--write-baseline FILE`` records today's findings by rule, path and a
fingerprint of the code (the finding's source line and message, without line
numbers), so unrelated edits that move code do not invalidate it.
``--baseline FILE`` then reports only findings that are not in it. Writing
again records only what is still found, so fixed findings drop out. Paths are
recorded relative to the project root (the folder of ``pyproject.toml``, else
the baseline file's folder), so a run from a subfolder matches the same entries.

A baseline may be committed with the pull request being checked, so it is read
like a source (a regular file, not through a symlink, never blocking on a
FIFO, at most ``MAX_BYTES``), and one that is anything else is a configuration
error naming it. It is written to a new file beside ``FILE`` renamed over it,
so a symlink at ``FILE`` is replaced, never written through.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import stat
from collections import Counter
from pathlib import Path

from ..base.diagnostics import Diagnostic
from ..base.errors import ConfigError
from ..fs.cachefs import replace_file
from ..fs.capped import read_capped
from ..fs.confine import read_regular
from ..syntax.suppress import NEVER_SUPPRESSED, source_lines
from .formatters import printable_path

_LINE_REF = re.compile(r"\bline \d+")
MAX_BYTES = 64_000_000  # about 400,000 findings; far more than any baseline --write-baseline makes


def _source_line(d: Diagnostic, cache: dict[str, list[str]]) -> str:
    if d.path not in cache:
        try:
            data = read_capped(d.path)
        except OSError:
            data = b""
        cache[d.path] = source_lines(data.decode("utf-8", "replace")) if isinstance(data, bytes) else []
    lines = cache[d.path]
    return lines[d.line - 1].strip() if d.cell is None and 0 < d.line <= len(lines) else ""


def root_for(baseline_file: str, config_file: Path | None) -> str:
    """The folder a baseline's paths are relative to."""
    return str(config_file.parent if config_file is not None else Path(os.path.abspath(baseline_file)).parent)


def project_path(path: str, root: str | None) -> str:
    """``path`` (as printed, relative to the working folder) relative to ``root``."""
    if root is None or path == "-":
        return path
    try:
        return Path(os.path.relpath(os.path.abspath(path), os.path.abspath(root))).as_posix()
    except ValueError:  # another drive (Windows)
        return path


def fingerprint(d: Diagnostic, cache: dict[str, list[str]], root: str | None = None) -> str:
    text = "\0".join([d.code, project_path(d.path, root), _LINE_REF.sub("line #", d.message), _source_line(d, cache)])
    # surrogatepass: a file name that is not UTF-8 (its bytes kept as surrogates) has a fingerprint too
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:20]


def write(path: str, diags: list[Diagnostic], root: str | None = None) -> int:
    cache: dict[str, list[str]] = {}
    entries = sorted(({"code": d.code, "path": project_path(d.path, root), "fingerprint": fingerprint(d, cache, root)}
                      for d in diags if d.code not in NEVER_SUPPRESSED),
                     key=lambda e: (e["path"], e["code"], e["fingerprint"]))
    data = (json.dumps({"aicompat_baseline": 1, "entries": entries}, indent=1) + "\n").encode("ascii")
    folder, name = os.path.split(os.path.abspath(path))
    try:
        replace_file(Path(folder), name, data, prefix=".aicompat-baseline-")
    except (OSError, ValueError) as exc:  # ValueError: a NUL in the name
        why = getattr(exc, "strerror", None) or str(exc)
        raise ConfigError(f"--write-baseline {printable_path(path)}: cannot write it ({why}); "
                          "give a file in a folder you can write") from None
    return len(entries)


def load(path: str) -> Counter:
    data = _read(path)
    try:
        doc = json.loads(data)
        return Counter((e["code"], e["path"], e["fingerprint"]) for e in doc["entries"])
    except (ValueError, KeyError, TypeError, IndexError, RecursionError) as exc:  # RecursionError: [[[[...
        why = "nested too deep" if isinstance(exc, RecursionError) else f"{type(exc).__name__}: {exc}"
        raise ConfigError(f"{printable_path(path)}: not an aicompat baseline ({why}); "
                          "write one with --write-baseline") from None


def _read(path: str) -> bytes:
    """The bytes of a baseline that is a regular file of at most MAX_BYTES, else a ConfigError
    that says why (checked before reading: a link to /dev/zero or a FIFO is never opened)."""
    shown = printable_path(path)
    try:
        st = os.lstat(path)
    except (OSError, ValueError) as exc:
        raise ConfigError(f"{shown}: cannot read the baseline ({getattr(exc, 'strerror', None) or exc}); "
                          "give the file --write-baseline wrote") from None
    if stat.S_ISLNK(st.st_mode):
        raise ConfigError(f"{shown}: the baseline is a symlink, which aicompat does not follow; "
                          "give the file itself") from None
    if not stat.S_ISREG(st.st_mode):
        raise ConfigError(f"{shown}: the baseline is not a regular file (a folder, FIFO or device); "
                          "give the file --write-baseline wrote")
    if st.st_size > MAX_BYTES:
        raise ConfigError(f"{shown}: the baseline is larger than {MAX_BYTES // 1_000_000} MB, more than "
                          "--write-baseline writes; give the file it wrote")
    data = read_regular(path, MAX_BYTES)  # no link, no FIFO, capped: it may have been swapped since
    if data is None:
        raise ConfigError(f"{shown}: the baseline could not be read as a regular file of at most "
                          f"{MAX_BYTES // 1_000_000} MB (it changed while it was read?); give the file itself")
    return data


def split(diags: list[Diagnostic], known: Counter, root: str | None = None) -> tuple[list[Diagnostic], list[Diagnostic]]:
    """(new findings, findings already in the baseline)."""
    left = Counter(known)
    cache: dict[str, list[str]] = {}
    new, old = [], []
    for d in diags:
        key = (d.code, project_path(d.path, root), fingerprint(d, cache, root))
        if d.code not in NEVER_SUPPRESSED and left[key] > 0:
            left[key] -= 1
            old.append(d)
        else:
            new.append(d)
    return new, old
