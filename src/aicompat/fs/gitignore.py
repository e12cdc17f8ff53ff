"""``.gitignore`` read as git reads it, so a walk skips what the repository ignores (ruff's
default). The rules are git's own (git-scm.com/docs/gitignore, "PATTERN FORMAT"):

- blank lines and ``#`` lines say nothing; ``\\#`` and ``\\!`` start a literal pattern;
  trailing spaces are dropped unless escaped;
- ``!`` re-includes; a trailing ``/`` matches folders only;
- a ``/`` at the start or in the middle anchors the pattern to the file's folder, else it
  matches at any depth;
- ``*`` and ``?`` never match ``/``; ``[...]`` is a class; a leading ``**/`` matches in every
  folder, ``/**/`` zero or more folders, a trailing ``/**`` everything inside;
- the last matching line of a file decides, and a deeper ``.gitignore`` overrides a higher
  one; a file inside an ignored folder cannot be re-included (the walk never enters it).

Only inside a git work tree (a ``.git`` at or above the walked folder), and only files inside
the project: the user's global excludes file lives outside it, so it is not read.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from .confine import read_inside, read_regular

MAX_BYTES = 1_000_000  # a .gitignore larger than this is not read (said by the caller's -v)


class Patterns:
    """One ``.gitignore``: its folder (relative to the walk's top, "" for the top) and rules."""

    def __init__(self, base: str, text: str) -> None:
        self.base = base
        self.rules: list[tuple[re.Pattern, bool, bool]] = []  # (regex, negated, folders only)
        for raw in text.splitlines():
            rule = _compile(raw)
            if rule is not None:
                self.rules.append(rule)

    def decide(self, rel: str, is_dir: bool) -> bool | None:
        """True: ignored; False: re-included; None: no line here matches."""
        if self.base:
            if not rel.startswith(self.base + "/"):
                return None
            rel = rel[len(self.base) + 1:]
        for rx, negated, dir_only in reversed(self.rules):
            if dir_only and not is_dir:
                continue
            if rx.fullmatch(rel):
                return not negated
        return None


def _compile(raw: str) -> tuple[re.Pattern, bool, bool] | None:
    line = raw.rstrip("\n\r")
    # Trailing spaces go, unless the last one is escaped.
    stripped = line.rstrip(" ")
    if stripped.endswith("\\") and len(stripped) < len(line):
        stripped += " "
    line = stripped
    if not line or line.startswith("#"):
        return None
    negated = line.startswith("!")
    if negated:
        line = line[1:]
    dir_only = line.endswith("/") and not line.endswith("\\/")
    if dir_only:
        line = line.rstrip("/")
    if not line:
        return None
    anchored = "/" in line
    line = line.lstrip("/")
    body = _translate(line)
    if body is None:
        return None
    try:
        rx = re.compile(body if anchored else "(?:.*/)?" + body, re.S)
    except re.error:
        return None
    return rx, negated, dir_only


def pattern(text: str) -> re.Pattern | None:
    """One gitignore-style pattern as a regular expression over a relative path (no ``!``,
    no folders-only: what per-file settings match file paths with)."""
    rule = _compile(text.rstrip("/"))
    return rule[0] if rule is not None and not rule[1] else None


def _translate(pat: str) -> str | None:
    out: list[str] = []
    i, n = 0, len(pat)
    while i < n:
        c = pat[i]
        if c == "*":
            j = i
            while j < n and pat[j] == "*":
                j += 1
            stars = j - i
            lead = i == 0 or pat[i - 1] == "/"
            trail = j == n or pat[j] == "/"
            if stars == 2 and lead and trail:
                if j == n:  # "x/**": everything inside
                    out.append(".*")
                else:  # "**/x" or "a/**/b": zero or more folders
                    out.append("(?:.*/)?")
                    j += 1
            else:
                out.append("[^/]*")
            i = j
        elif c == "?":
            out.append("[^/]")
            i += 1
        elif c == "[":
            j = i + 1
            if j < n and pat[j] in "!^":
                j += 1
            if j < n and pat[j] == "]":
                j += 1
            while j < n and pat[j] != "]":
                j += 1
            if j >= n:
                out.append(re.escape(c))
                i += 1
                continue
            inner = pat[i + 1:j]
            if inner[:1] in ("!", "^"):
                inner = "^" + inner[1:]
            out.append("(?!/)[" + inner.replace("\\", "\\\\") + "]")
            i = j + 1
        elif c == "\\":
            if i + 1 < n:
                out.append(re.escape(pat[i + 1]))
            i += 2
        else:
            out.append(re.escape(c))
            i += 1
    return "".join(out)


def work_tree(folder: Path) -> Path | None:
    """The work tree ``folder`` is in: the nearest folder at or above it with a ``.git``
    (a folder, or the file a linked worktree has)."""
    try:
        here = folder.resolve()
    except (OSError, RuntimeError):
        return None
    for d in (here, *here.parents):
        if os.path.lexists(d / ".git"):
            return d
    return None


class Walk:
    """The ``.gitignore`` files in force while walking folders below ``top``: those of the
    work tree's folders from its top down to ``top`` that lie inside ``root`` (and the
    repository's ``.git/info/exclude``), then each walked folder's own."""

    def __init__(self, top: Path, root: Path) -> None:
        self.tree = work_tree(top)
        self._stacks: dict[str, list[Patterns]] = {}
        self._rels: dict[str, str] = {}  # entered folder -> its path in the work tree
        self.top = os.path.normpath(str(top))
        self._base: list[Patterns] = []
        if self.tree is None:
            return
        here = top.resolve()
        self.top_rel = here.relative_to(self.tree).as_posix() if here != self.tree else ""
        stack: list[Patterns] = []
        if self._inside(self.tree, root):  # inside .git, which read() never reads
            info = _patterns(read_regular(self.tree / ".git" / "info" / "exclude", MAX_BYTES), "")
            stack += [info] if info is not None else []
        parts = here.relative_to(self.tree).parts
        for i in range(len(parts)):  # the work tree's top down to the folder above ``top``
            d = self.tree.joinpath(*parts[:i])
            got = read(d, "/".join(parts[:i]), root) if self._inside(d, root) else None
            stack += [got] if got is not None else []
        self._base = stack

    @staticmethod
    def _inside(d: Path, root: Path) -> bool:
        return os.path.commonpath([str(d), str(root)]) == str(root)

    def enter(self, dirpath: str, root: Path) -> None:
        """Read ``dirpath``'s own ``.gitignore`` (the walk calls it before its entries)."""
        if self.tree is None:
            return
        dirpath = os.path.normpath(dirpath)
        # normpath("./src") is "src", whose dirname is "" where the walk's top is ".".
        up = os.path.dirname(dirpath) or os.curdir
        parent = self._stacks.get(up, self._base) if dirpath != self.top else self._base
        below = os.path.relpath(dirpath, self.top)
        parts = [x for x in (self.top_rel, "" if below == "." else Path(below).as_posix()) if x]
        self._rels[dirpath] = rel = "/".join(parts)
        own = read(Path(dirpath), rel, root)
        self._stacks[dirpath] = parent + [own] if own is not None else parent

    def skips(self, dirpath: str, name: str, is_dir: bool) -> bool:
        """Whether ``name`` in the entered folder ``dirpath`` is ignored."""
        if self.tree is None:
            return False
        dirpath = os.path.normpath(dirpath)
        base = self._rels.get(dirpath, "")
        return ignored(self._stacks.get(dirpath, self._base), f"{base}/{name}" if base else name, is_dir)


def read(folder: Path, base: str, root: Path) -> Patterns | None:
    """The ``.gitignore`` of ``folder``, when it is a regular file inside ``root`` (a link is
    not followed, as git does not follow one either)."""
    return _patterns(read_inside(folder / ".gitignore", root, MAX_BYTES), base)


def _patterns(data: bytes | None, base: str) -> Patterns | None:
    if data is None:
        return None
    pats = Patterns(base, data.decode("utf-8", "replace"))
    return pats if pats.rules else None


def ignored(stack: list[Patterns], rel: str, is_dir: bool) -> bool:
    """Whether the deepest ``.gitignore`` with a matching line ignores ``rel``."""
    for pats in reversed(stack):
        got = pats.decide(rel, is_dir)
        if got is not None:
            return got
    return False
