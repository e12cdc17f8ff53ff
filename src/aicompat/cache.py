"""Per-file results kept between runs, under ``.aicompat_cache/`` (like ruff's).

An entry is found by a key over everything that can change a file's result:
its display path and content, and a run fingerprint (tool version, a hash of
aicompat's own code and of the shipped rules/matrix data, the effective
target, select/ignore and the prefilter switch). A file whose key matches is
not parsed again.

Entries are one small JSON file each, written to a temporary name and moved
into place with ``os.replace``, so concurrent runs never see half an entry.
Anything that does not read back as exactly what was written (truncated,
corrupt, another version's layout, a key mismatch) is a miss and is
recomputed; the cache is never trusted over the source. Results that say the
run was incomplete (internal errors, timeouts) are not stored.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from dataclasses import asdict, fields
from pathlib import Path

from .data import data_dir
from .diagnostics import Diagnostic
from .linter import FileResult

CACHE_DIR = ".aicompat_cache"
FORMAT = 1  # bump when the entry layout changes
_NOT_CACHED = {"AIC000", "AIC002"}
_DIAG_FIELDS = {f.name for f in fields(Diagnostic)}


def _tree_digest(h, root: Path, pattern: str) -> None:
    for p in sorted(root.rglob(pattern)):
        h.update(p.relative_to(root).as_posix().encode())
        h.update(p.read_bytes())


_CODE_DIGEST: str | None = None


def code_digest() -> str:
    """aicompat's version, sources and shipped data: a change to a rule or a
    matrix entry invalidates every entry, even without a version bump."""
    global _CODE_DIGEST
    if _CODE_DIGEST is None:
        from . import __version__  # not at import time: aicompat/__init__ imports the API first

        h = hashlib.blake2b(digest_size=16)
        h.update(__version__.encode())
        _tree_digest(h, Path(__file__).resolve().parent, "*.py")
        for name in ("rules", "version_matrix"):
            _tree_digest(h, data_dir(name), "*.toml")
        _CODE_DIGEST = h.hexdigest()
    return _CODE_DIGEST


def run_fingerprint(target_json: dict, select: list[str], ignore: list[str], prefilter: bool) -> str:
    doc = {"code": code_digest(), "target": target_json, "select": sorted(select), "ignore": sorted(ignore),
           "prefilter": prefilter, "format": FORMAT}
    return hashlib.blake2b(json.dumps(doc, sort_keys=True, default=str).encode(), digest_size=16).hexdigest()


def _file_digest(path: str) -> str | None:
    try:
        with open(path, "rb") as fh:
            return hashlib.blake2b(fh.read(), digest_size=16).hexdigest()
    except OSError:
        return None


class Cache:
    def __init__(self, directory: Path, fingerprint: str) -> None:
        from . import __version__

        self.root = Path(directory)
        self.dir = self.root / f"v{FORMAT}-{__version__}"
        self.fingerprint = fingerprint
        self.hits = self.misses = 0

    def key(self, display: str, data: bytes) -> str:
        h = hashlib.blake2b(digest_size=20)
        h.update(self.fingerprint.encode())
        h.update(b"\0" + display.encode("utf-8", "surrogateescape") + b"\0")
        h.update(data)
        return h.hexdigest()

    def _path(self, key: str) -> Path:
        return self.dir / key[:2] / f"{key}.json"

    def get(self, key: str, display: str) -> FileResult | None:
        try:
            with open(self._path(key), "rb") as fh:
                doc = json.loads(fh.read())
            if doc.get("key") != key or doc.get("path") != display:
                raise ValueError("entry is for another file")
            res = FileResult(display, [_diag(d) for d in doc["diagnostics"]], [_diag(d) for d in doc["suppressed"]],
                             bool(doc["parsed"]), doc["skipped"])
            for dep, digest in doc.get("reads", {}).items():  # a .cu the file loads by name changed: stale
                if _file_digest(dep) != digest:
                    raise ValueError("a file it read has changed")
            res.reads = list(doc.get("reads", {}))
            res.notes = [str(n) for n in doc.get("notes", [])]
            if res.skipped is not None and not isinstance(res.skipped, str):
                raise ValueError("bad skipped")
        except (OSError, ValueError, KeyError, TypeError, AttributeError, RecursionError):
            self.misses += 1
            return None
        self.hits += 1
        return res

    def put(self, key: str, res: FileResult) -> None:
        if any(d.code in _NOT_CACHED for d in res.diagnostics):
            return
        reads = {dep: _file_digest(dep) for dep in res.reads}
        if None in reads.values():
            return
        doc = {"key": key, "path": res.path, "parsed": res.parsed, "skipped": res.skipped, "reads": reads,
               "notes": res.notes,
               "diagnostics": [asdict(d) for d in res.diagnostics],
               "suppressed": [asdict(d) for d in res.suppressed]}
        path = self._path(key)
        try:
            self._ensure_root()
            path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
            try:
                with os.fdopen(fd, "w", encoding="utf-8") as fh:
                    json.dump(doc, fh)
                os.replace(tmp, path)
            except BaseException:
                try:
                    os.unlink(tmp)
                except OSError:
                    pass
                raise
        except OSError:
            pass  # a read-only or full disk makes the cache useless, not the run

    def _ensure_root(self) -> None:
        ensure_root(self.root)


def ensure_root(root: Path) -> None:
    """Create the cache folder with a .gitignore and a CACHEDIR.TAG (also used by exact mode's
    compile results, cuda/verify.py)."""
    if not (root / ".gitignore").exists():
        root.mkdir(parents=True, exist_ok=True)
        # Keep the cache out of version control without touching the
        # project's own .gitignore (ruff does the same).
        with open(root / ".gitignore", "w", encoding="utf-8") as fh:
            fh.write("# Automatically created by aicompat.\n*\n")
        with open(root / "CACHEDIR.TAG", "w", encoding="utf-8") as fh:
            fh.write("Signature: 8a477f597d28d172789f06886806bc55\n"
                     "# This file is a cache directory tag created by aicompat.\n")


def _diag(d: dict) -> Diagnostic:
    if not isinstance(d, dict) or set(d) != _DIAG_FIELDS:
        raise ValueError("bad diagnostic")
    out = Diagnostic(**d)
    if not (isinstance(out.path, str) and isinstance(out.line, int) and isinstance(out.code, str)
            and isinstance(out.message, str) and isinstance(out.targets, list)):
        raise ValueError("bad diagnostic")
    return out
