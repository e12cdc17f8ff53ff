"""--fix and --diff: apply the replacements rules attach to their findings.

Edits are spliced into the original text (so formatting and comments stay as
they were), the result must still parse, and a second run finds nothing left
to fix (the rules only offer a fix that removes their own finding).

The file is untrusted and may change under us, so a fix is applied only to
the very bytes that were checked (same digest), only to a regular file inside
the linted tree (never through a symlink), with offsets counted on LibCST's
own line breaks (``\\r\\n``, ``\\r``, ``\\n``; not the form feed, ``\\x85`` or
``\\u2028`` that ``str.splitlines`` also breaks on), in the file's own encoding
(PEP 263) and newlines, and written to a temporary file in the same folder
that is renamed over the original (keeping its mode): a failed write leaves
the file as it was. A read-only file and one with other hard links are left as
they are (the rename would override the one and split the other), with a note.
"""

from __future__ import annotations

import difflib
import hashlib
import io
import os
import re
import stat
import tokenize
from pathlib import Path

import libcst as cst

from ..base.diagnostics import Diagnostic
from ..fs.cachefs import replace_file
from ..fs.confine import read_regular, regular_inside
from .formatters import printable

_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+\Z")  # a line as LibCST counts them
MAX_BYTES = 2_000_000


def digest(data: bytes) -> str:
    return hashlib.blake2b(data, digest_size=16).hexdigest()


def apply_fixes(text: str, diags: list[Diagnostic]) -> str:
    lines = _LINE.findall(text)
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line))

    def offset(line: int, col: int) -> int | None:
        if not 1 <= line <= len(lines) or not 1 <= col <= len(lines[line - 1].rstrip("\r\n")) + 1:
            return None  # a position this text does not have: not edited
        return starts[line - 1] + col - 1

    edits = []
    for d in diags:
        if d.fix is None or d.cell is not None:
            continue
        start, end = offset(d.line, d.column), offset(d.end_line, d.end_column)
        if start is None or end is None or end < start:
            continue
        edits.append((start, end, d.fix))
    out, last = text, None
    for start, end, new in sorted(set(edits), reverse=True):
        if last is not None and end > last:
            continue  # overlapping edits: keep the later one, the next run takes the rest
        out = out[:start] + new + out[end:]
        last = start
    return out


class Source:
    """A checked file as read for fixing: its bytes, encoding and mode."""

    def __init__(self, path: str, data: bytes, encoding: str, mode: int) -> None:
        self.path, self.data, self.encoding, self.mode = path, data, encoding, mode


def read_source(path: str, tree: str | None, checked: str | None) -> Source | None:
    """The file at ``path`` when it is a regular file (not a symlink) inside ``tree``
    whose bytes still have the digest ``checked`` (those the findings were made on)."""
    st = regular_inside(path, tree, MAX_BYTES)
    data = read_regular(path, MAX_BYTES) if st is not None else None
    if data is None or checked is None or digest(data) != checked:
        return None
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
        data.decode(encoding)
    except (SyntaxError, LookupError, UnicodeDecodeError):
        return None
    assert st is not None  # data is None without it
    return Source(path, data, encoding, stat.S_IMODE(st.st_mode))


def fixed_source(path: str, diags: list[Diagnostic], tree: str | None = None,
                 checked: str | None = None) -> tuple[Source, str, str] | None:
    """(source, old text, new text) for a Python file, or None when nothing applies,
    the file is not the one checked, or the result would not parse or encode."""
    if not any(d.fix for d in diags) or not path.endswith((".py", ".pyi")):
        return None
    src = read_source(path, tree, checked)
    if src is None:
        return None
    old = src.data.decode(src.encoding)
    new = apply_fixes(old, diags)
    if new == old:
        return None
    try:
        cst.parse_module(new.encode(src.encoding))
    except (cst.ParserSyntaxError, UnicodeEncodeError, RecursionError):
        return None
    return src, old, new


class LeftAlone(Exception):
    """--fix does not rewrite this file; the message says why and what to do."""


def _left_alone(path: str) -> str | None:
    """Why ``path`` must not be rewritten, or None. The rewrite is a rename over the
    file, which a read-only mode does not stop (the folder's mode decides) and which
    gives the name a new inode, so a second hard link would keep the old text."""
    try:
        st = os.lstat(path)
    except OSError as exc:
        return f"cannot stat it: {exc.strerror or exc}"
    if st.st_nlink > 1:
        return (f"it has {st.st_nlink} hard links and a rewrite would leave the others unchanged "
                "(edit it in place by hand)")
    # By its mode too: root may write any file, but a file marked read-only is not to be changed.
    bits = stat.S_IWUSR if st.st_uid == os.geteuid() else stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH
    if not st.st_mode & bits or not os.access(path, os.W_OK):
        return "it is read-only (make it writable to fix it)"
    return None


def write_fixed(src: Source, new: str) -> bool:
    """Replace the file with ``new`` (in its encoding) if it still holds the bytes
    that were fixed: a temporary file beside it, renamed over it. Raises LeftAlone
    for a read-only or hard-linked file, which is not changed."""
    again = read_regular(src.path, MAX_BYTES)
    if again != src.data:
        return False  # changed (or replaced by something else) since it was read
    why = _left_alone(src.path)
    if why is not None:
        raise LeftAlone(why)
    folder, name = os.path.split(os.path.abspath(src.path))
    replace_file(Path(folder), name, new.encode(src.encoding), mode=src.mode, sync=True,
                 prefix=f".{name}.aicompat-")
    return True


def unified_diff(path: str, old: str, new: str) -> str:
    """A diff ``patch`` applies, printed safely: lines split where LibCST splits them (not on
    the form feed that ``str.splitlines`` also breaks on), a last line without a newline
    marked as diff(1) marks it, and the checked file's control characters other than tab
    (ESC of terminal escape sequences) shown as escapes; only a line holding them no longer
    applies as it is. ``path`` is already printable."""
    out = []
    for line in difflib.unified_diff(_LINE.findall(old), _LINE.findall(new), fromfile=f"a/{path}",
                                     tofile=f"b/{path}"):
        end = "\r\n" if line.endswith("\r\n") else "\n" if line.endswith("\n") else ""
        body = line[:len(line) - len(end)]
        if not end and body.endswith("\r"):
            end = "\n"  # a lone CR ends the line: shown (it would return the cursor over the line)
        elif not end:
            end = "\n\\ No newline at end of file\n"
        out.append("\t".join(printable(part) for part in body.split("\t")) + end)
    return "".join(out)
