"""Per-file results kept between runs, under ``.aicompat_cache/`` (like ruff's).

An entry is found by a key over everything that can change a file's result:
its display path and content, and a run fingerprint (tool version, a hash of
aicompat's own code and of the shipped rules/matrix data, the effective
target, select/ignore and the prefilter switch). A file whose key matches is
not parsed again.

Entries are one small JSON file each, written to a temporary name and moved
into place with ``os.replace``, so concurrent runs never see half an entry.
The cache folder is untrusted input (by default it sits in the repository,
where a pull request can commit entries and links): an entry counts only with
a valid HMAC under this user's secret (fs/cachefs.py), every field is checked for
type and shape, the files it says the result depends on (``reads``) are
checked only when they are regular files inside the project, and fixes are
never stored (``--fix``/``--diff`` recompute a file whose findings had one).
Anything that does not read back as exactly what was written (truncated,
corrupt, another version's layout, a key mismatch, a bad MAC) is a miss and is
recomputed; the cache is never trusted over the source. Results that say the
run was incomplete (internal errors, timeouts) are not stored.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import re
from dataclasses import asdict, fields
from pathlib import Path

from ..base.data import data_dir
from ..base.diagnostics import Diagnostic
from ..base.version import __version__
from ..fs.cachefs import ensure_root, machine_secret, real_dirs, replace_file
from ..fs.confine import read_inside, read_regular
from .linter import FileResult

FORMAT = 3  # bump when the entry layout changes
_NOT_CACHED = {"AIC000", "AIC002"}
_DIAG_FIELDS = {f.name for f in fields(Diagnostic)} - {"fix"}  # fixes are never stored
_ENTRY_FIELDS = {"mac", "key", "path", "parsed", "skipped", "reads", "notes", "fixable", "diagnostics", "suppressed"}
MAX_ENTRY_BYTES = 16_000_000
_CODE = re.compile(r"AIC\d{3}\Z")


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
        h = hashlib.blake2b(digest_size=16)
        h.update(__version__.encode())
        _tree_digest(h, Path(__file__).resolve().parent.parent, "*.py")  # the package (this file is in run/)
        for name in ("rules", "version_matrix"):
            _tree_digest(h, data_dir(name), "*.toml")
        _CODE_DIGEST = h.hexdigest()
    return _CODE_DIGEST


def run_fingerprint(target_json: dict, select: list[str], ignore: list[str], prefilter: bool) -> str:
    doc = {"code": code_digest(), "target": target_json, "select": sorted(select), "ignore": sorted(ignore),
           "prefilter": prefilter, "format": FORMAT}
    return hashlib.blake2b(json.dumps(doc, sort_keys=True, default=str).encode(), digest_size=16).hexdigest()


def _file_digest(path: str, root: str | None) -> str | None:
    """The digest of a file a result depends on, when it is a regular file inside the project."""
    data = read_inside(path, root)
    return None if data is None else hashlib.blake2b(data, digest_size=16).hexdigest()


def _canonical(doc: dict) -> bytes:
    return json.dumps(doc, sort_keys=True, separators=(",", ":"), ensure_ascii=True).encode()


class Cache:
    def __init__(self, directory: Path, fingerprint: str, project_root: str | Path | None = None) -> None:
        self.root = Path(directory)
        self.sub = f"v{FORMAT}-{__version__}"
        self.dir = self.root / self.sub
        self.fingerprint = fingerprint
        self.project_root = str(project_root) if project_root is not None else None
        self.hits = self.misses = 0
        self._secret = machine_secret()

    def key(self, display: str, data: bytes) -> str:
        h = hashlib.blake2b(digest_size=20)
        h.update(self.fingerprint.encode())
        h.update(b"\0" + display.encode("utf-8", "surrogateescape") + b"\0")
        h.update(data)
        return h.hexdigest()

    def _mac(self, doc: dict) -> str:
        return hmac.new(self._secret, _canonical(doc), hashlib.sha256).hexdigest()

    def get(self, key: str, display: str, fixes: bool = False) -> FileResult | None:
        """The stored result for ``key``, or None (a miss). ``fixes``: the caller
        applies fixes, which are never stored, so a result that had one is a miss."""
        try:
            res = self._get(key, display, fixes)
        except (OSError, ValueError, KeyError, TypeError, AttributeError, RecursionError):
            res = None
        if res is None:
            self.misses += 1
        else:
            self.hits += 1
        return res

    def _get(self, key: str, display: str, fixes: bool) -> FileResult | None:
        folder = real_dirs(self.root, [self.sub, key[:2]], create=False)
        raw = read_regular(folder / f"{key}.json", MAX_ENTRY_BYTES) if folder is not None else None
        if raw is None:
            return None
        doc = json.loads(raw)
        if not isinstance(doc, dict) or set(doc) != _ENTRY_FIELDS or not isinstance(doc["mac"], str):
            return None
        mac = doc.pop("mac")
        if not hmac.compare_digest(mac, self._mac(doc)):
            return None  # written by another machine or user, or by hand: not ours
        if doc["key"] != key or doc["path"] != display:
            return None
        parsed, skipped, reads, fixable = doc["parsed"], doc["skipped"], doc["reads"], doc["fixable"]
        if not (isinstance(parsed, bool) and isinstance(fixable, bool) and (skipped is None or isinstance(skipped, str))):
            return None
        if not isinstance(reads, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in reads.items()):
            return None
        if fixes and fixable:
            return None
        for dep, digest in reads.items():  # a .cu the file loads by name changed (or is no longer ours to read): stale
            if _file_digest(dep, self.project_root) != digest:
                return None
        diags = [_diag(d, display) for d in _list(doc["diagnostics"])]
        suppressed = [_diag(d, display) for d in _list(doc["suppressed"])]
        notes = doc["notes"]
        if not isinstance(notes, list) or not all(isinstance(n, str) for n in notes):
            return None
        res = FileResult(display, diags, suppressed, parsed, skipped)
        res.reads = list(reads)
        res.notes = list(notes)
        return res

    def put(self, key: str, res: FileResult) -> None:
        if any(d.code in _NOT_CACHED for d in res.diagnostics):
            return
        reads = {dep: _file_digest(dep, self.project_root) for dep in res.reads}
        if None in reads.values():
            return
        doc = {"key": key, "path": res.path, "parsed": res.parsed, "skipped": res.skipped, "reads": reads,
               "notes": res.notes,
               "fixable": any(d.fix is not None for d in res.diagnostics + res.suppressed),
               "diagnostics": [_stored(d) for d in res.diagnostics],
               "suppressed": [_stored(d) for d in res.suppressed]}
        doc["mac"] = self._mac(doc)
        try:
            self._ensure_root()
            folder = real_dirs(self.root, [self.sub, key[:2]], create=True)
            if folder is not None:  # a link in the cache folder: not written through
                replace_file(folder, f"{key}.json", json.dumps(doc).encode())
        except (OSError, ValueError):
            pass  # a read-only or full disk makes the cache useless, not the run

    def _ensure_root(self) -> None:
        ensure_root(self.root)


def _stored(d: Diagnostic) -> dict:
    out = asdict(d)
    del out["fix"]
    return out


def _list(v) -> list:
    if not isinstance(v, list):
        raise ValueError("expected a list")
    return v


def _int(v) -> bool:
    return isinstance(v, int) and not isinstance(v, bool) and 0 <= v < 1 << 31


def _diag(d, display: str) -> Diagnostic:
    if not isinstance(d, dict) or set(d) != _DIAG_FIELDS:
        raise ValueError("bad diagnostic")
    ok = (d["path"] == display and all(_int(d[k]) for k in ("line", "column", "end_line", "end_column"))
          and isinstance(d["code"], str) and _CODE.match(d["code"]) and isinstance(d["rule"], str)
          and d["severity"] in ("error", "warning") and isinstance(d["message"], str)
          and isinstance(d["targets"], list) and all(isinstance(t, str) for t in d["targets"])
          and all(d[k] is None or _int(d[k]) for k in ("cell", "cell_line", "file_line", "file_column",
                                                        "file_end_line", "file_end_column")))
    if not ok:
        raise ValueError("bad diagnostic")
    return Diagnostic(**d)
