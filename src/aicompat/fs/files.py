"""Paths -> the files to lint. Folders are walked in sorted order, skipping
the usual virtualenv/VCS/build folders and the configured ``exclude`` globs."""

from __future__ import annotations

import errno
import fnmatch
import os
import re
import stat
from pathlib import Path

from . import gitignore
from .confine import within

SOURCE_SUFFIXES = {".py", ".pyi", ".ipynb", ".cu", ".cuh", ".ptx"}
CUDA_SUFFIXES = (".cu", ".cuh", ".ptx")
BUILD_SUFFIXES = (".cmake", ".sh", ".bash", ".dockerfile")
BUILD_NAMES = ("CMakeLists.txt", "Dockerfile", "Containerfile")


MAKEFILE_NAMES = ("Makefile", "makefile", "GNUmakefile")


def is_makefile(name: str) -> bool:
    base = name.rsplit("/", 1)[-1]
    return base in MAKEFILE_NAMES or base.endswith(".mk")


def is_build_file(name: str) -> bool:
    base = name.rsplit("/", 1)[-1]
    return base.endswith(BUILD_SUFFIXES) or base in BUILD_NAMES or base.startswith("Dockerfile.") or is_makefile(base)
SKIP_DIRS = {
    ".git", ".hg", ".svn", ".venv", "venv", ".tox", ".nox", "__pycache__", "node_modules",
    ".mypy_cache", ".pytest_cache", ".ruff_cache", ".aicompat_cache", "site-packages", "build", "dist",
    "__pypackages__", ".eggs",
}
# Skipped folders that may hold a project's own code (a package named build): -v names them.
MAYBE_SOURCE_DIRS = {"build", "dist"}


# A checked repository's pyproject.toml is untrusted: run/config.py holds ``exclude`` to
# these limits, and the patterns are compiled once into one matcher (fnmatch per
# pattern and path part took 170 s for 40,000 patterns, past fnmatch's cache of 32,768).
MAX_EXCLUDE_PATTERNS = 1000
MAX_EXCLUDE_CHARS = 1000  # one pattern
MAX_EXCLUDE_TOTAL = 50_000  # all patterns: compiling costs ~10 us a character at worst ("*a*a...")


class ExcludeMatcher:
    """``rel`` is excluded when a pattern (its trailing ``/`` dropped) matches, as
    ``fnmatch.fnmatch`` does, the whole path or one of its parts, or is a folder
    above it: plain names are looked up, globs share one regular expression."""

    def __init__(self, patterns: list[str]) -> None:
        pats = [p.rstrip("/") for p in patterns]
        self.empty = not pats
        self._names: set[str] = set()
        globs: list[str] = []
        for p in pats:
            n = os.path.normcase(p)  # what fnmatch.fnmatch does to both sides
            if any(c in n for c in "*?["):
                globs.append(fnmatch.translate(n))
            else:
                self._names.add(n)
        self._globs = _any_of(globs)
        self._above = re.compile("(?:" + "|".join(re.escape(p) for p in pats) + ")/") if pats else None
        self._parts: dict[str, bool] = {}  # a part's answer: the same names recur in every path

    def _matches(self, name: str) -> bool:
        n = os.path.normcase(name)
        return n in self._names or self._globs(n)

    def _part(self, part: str) -> bool:
        got = self._parts.get(part)
        if got is None:
            got = self._parts[part] = self._matches(part)
        return got

    def __call__(self, rel: str) -> bool:
        if self.empty:
            return False
        above = self._above is not None and self._above.match(rel)  # set whenever not empty
        return bool(above) or self._matches(rel) or any(self._part(p) for p in rel.split("/"))


def _any_of(translated: list[str]):
    """Whether a name fully matches one of fnmatch's translated patterns (each ends
    in ``\\Z``, so one ``|`` of them, matched from the start, asks the same)."""
    if not translated:
        return lambda name: False
    try:
        one = re.compile("|".join(translated))
    except re.error:  # group names that clash in some fnmatch: one expression each
        each = [re.compile(t) for t in translated]
        return lambda name: any(r.match(name) for r in each)
    return lambda name: one.match(name) is not None


def display_path(path: Path) -> str:
    try:
        return path.resolve().relative_to(Path.cwd().resolve()).as_posix()
    except (ValueError, OSError, RuntimeError):  # RuntimeError: a symlink loop (Python < 3.13)
        return path.as_posix()


def _unusable(p: Path) -> str | None:
    """Why ``p`` cannot be linted (not a regular file), or None. Reading a
    FIFO or a device would block or never end; a symlink loop or a dangling
    link has nothing to read."""
    try:
        st = p.stat()
    except OSError as exc:
        if p.is_symlink():
            return "symlink loop" if exc.errno == errno.ELOOP else "dangling symlink"
        return f"cannot stat: {exc.strerror or exc}"
    if not stat.S_ISREG(st.st_mode):
        return "not a regular file"
    return None


def _walk(top: str, on_error):
    """``os.walk(top, followlinks=False)`` without recursion (os.walk recurses on
    Python < 3.12: a tree 1,100 folders deep ended the run); a folder that cannot
    be listed goes to ``on_error(path, exc)``. The caller may prune ``dirnames``."""
    stack = [top]
    while stack:
        d = stack.pop()
        try:
            with os.scandir(d) as it:
                entries = list(it)
        except OSError as exc:
            on_error(d, exc)
            continue
        if entries and not os.access(d, os.X_OK):  # listed (mode r--) but its files cannot be opened or stat'ed
            on_error(d, PermissionError(errno.EACCES, "Permission denied: it can be listed, not searched", d))
            continue
        dirnames: list[str] = []
        filenames: list[str] = []
        for e in entries:
            try:
                is_dir = e.is_dir()
            except OSError:
                is_dir = False
            (dirnames if is_dir else filenames).append(e.name)
        yield d, dirnames, filenames
        for name in reversed(dirnames):
            sub = os.path.join(d, name)
            if not os.path.islink(sub):
                stack.append(sub)


def _link_out(f: Path, top: Path, root: Path) -> str | None:
    """A link met while walking a folder is followed only to a file inside that
    folder or the project: a checked-in ``k.cu -> /proc/self/environ`` must not
    bring an outside file's text into the output."""
    if not f.is_symlink() or within(f, top) is not None or within(f, root) is not None:
        return None
    return "symlink to outside the linted tree"


def discover(paths: list[str], exclude: list[str], root: Path | None = None,
             skipped: list[tuple[Path, str]] | None = None,
             unreadable: list[tuple[Path, OSError]] | None = None,
             pruned: list[Path] | None = None, respect_gitignore: bool = True) -> tuple[list[Path], list[str]]:
    """Files to lint, and paths that do not exist; files that exist but cannot
    be read as source (FIFOs, symlink loops, dangling links) go to ``skipped``
    with the reason, folders that cannot be listed to ``unreadable``, skipped
    ``build``/``dist`` folders (which may be source) to ``pruned``. In a git work
    tree, what its ``.gitignore`` files ignore is not walked (fs/gitignore.py); a file
    named on the command line is checked whatever they say."""
    out: list[Path] = []
    missing: list[str] = []
    seen: set[Path] = set()
    root = (root or Path.cwd()).resolve()
    skipped = [] if skipped is None else skipped
    unreadable = [] if unreadable is None else unreadable
    excluded = ExcludeMatcher(exclude)

    def rel(p: Path) -> str:
        try:
            return p.resolve().relative_to(root).as_posix()
        except (ValueError, OSError, RuntimeError):
            return p.as_posix()

    for raw in paths:
        p = Path(raw)
        try:
            is_file = p.is_file()
            is_dir = not is_file and p.is_dir()
        except OSError as exc:  # named inside a folder that cannot be searched: not checked, said
            unreadable.append((p, exc))
            continue
        if is_file:
            if p.resolve() not in seen:
                seen.add(p.resolve())
                out.append(p)
            continue
        if not is_dir:
            why = _unusable(p) if os.path.lexists(p) else None
            if why:
                skipped.append((p, why))
            else:
                missing.append(raw)
            continue
        # Paths below the top are relative to it by their names (links to folders are
        # not followed): resolving each one costs a stat per level, and a tree 1,100
        # levels deep then took a minute.
        top, top_rel = str(p), rel(p)
        git = gitignore.Walk(p, root) if respect_gitignore else None
        for dirpath, dirnames, filenames in _walk(top, lambda d, exc: unreadable.append((Path(d), exc))):
            d = Path(dirpath)
            if git is not None:
                git.enter(dirpath, root)
            below = dirpath[len(top):].strip("/")
            prefix = "/".join(x for x in (top_rel if top_rel != "." else "", below) if x)
            prefix = prefix + "/" if prefix else ""
            if pruned is not None:
                pruned.extend(d / n for n in sorted(dirnames) if n in MAYBE_SOURCE_DIRS)
            dirnames[:] = sorted(
                n for n in dirnames if n not in SKIP_DIRS and not n.endswith(".egg-info")
                and not excluded(prefix + n) and not (git is not None and git.skips(dirpath, n, True))
            )
            for name in sorted(filenames):
                f = d / name
                if (f.suffix not in SOURCE_SUFFIXES and not is_build_file(name)) or excluded(prefix + name):
                    continue
                if git is not None and git.skips(dirpath, name, False):
                    continue
                why = _unusable(f) or _link_out(f, p, root)
                if why:
                    skipped.append((f, why))
                    continue
                key = f.resolve()
                if key not in seen:
                    seen.add(key)
                    out.append(f)
    return out, missing
