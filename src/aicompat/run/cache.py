"""Per-file results kept between runs, under ``.aicompat_cache/`` (like ruff's).

One entry per file, found by the file's real path (not the path as displayed:
a run from another folder finds it too). It holds what the result was made
from, and counts only while all of it is unchanged:
- the file's content (its digest);
- the run's settings, part by part (aicompat's version and a hash of its own
  code and shipped data, each part of the effective target, one per pin,
  select/ignore, the prefilter switch), so a miss names the part that changed;
- every other file the result was made from (fs/deps.py): project modules
  followed, .cu files and headers, build files, files opened by name, with the
  digest of the bytes read, or "absent" for a module looked for and not found;
- the answers of the project-root confinement (is this path inside the tree?):
  the root follows the current folder, and the entry stays valid under another
  root exactly when every answer comes out the same.
A hit is not parsed; the display path is put back into its findings.

A miss is never silent: each is counted by cause (``misses``; -v prints them),
and a result that is not stored leaves a small record saying why, so the next
run's miss names it too.

Entries are one small JSON file each, written to a temporary name and moved
into place with ``os.replace``, so concurrent runs never see half an entry.
The cache folder is untrusted input (by default it sits in the repository,
where a pull request can commit entries and links): an entry counts only with
a valid HMAC under this user's secret (fs/cachefs.py), every field is checked for
type and shape, the files it says the result depends on are read back only when
they are regular files inside the file's tree (fs/confine.py) or its build's
project, and a stored fix is only ever shown (the ``[*]`` marker, ``--show-fixes``,
``--statistics``), never applied: ``--fix``/``--diff`` recompute a file whose
findings had one, from the bytes they then rewrite. Anything that does not read back as exactly what was written
(truncated, corrupt, another version's layout, a bad MAC) is a miss and is
recomputed; the cache is never trusted over the source. Results that say the
run was incomplete (internal errors, timeouts) are not stored.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import re
from collections import Counter
from dataclasses import asdict, fields
from pathlib import Path

from ..base.data import data_dir
from ..base.diagnostics import Diagnostic
from ..base.version import __version__
from ..fs.cachefs import ensure_root, machine_secret, real_dirs, replace_file
from ..fs.confine import read_regular, tree_of, within
from ..fs.deps import digest, longer_than
from .linter import FileResult

FORMAT = 5  # bump when the entry layout changes
_NOT_CACHED = {"AIC000", "AIC002"}
_DIAG_FIELDS = {f.name for f in fields(Diagnostic)}
_HEAD = {"mac", "file", "digest", "settings"}
_ENTRY_FIELDS = _HEAD | {"tree", "reads", "decisions", "parsed", "skipped", "notes", "fixable", "diagnostics",
                         "suppressed"}
_UNSTORED_FIELDS = _HEAD | {"unstored"}  # a result not stored, and why
MAX_ENTRY_BYTES = 16_000_000
MAX_DEP_BYTES = 16_000_000  # a dependency is read back whole to compare its digest
_CODE = re.compile(r"AIC\d{3}\Z")
_HEX = re.compile(r"[0-9a-f]{32}\Z")
DETAILS = 50  # misses named one by one under -v (the counts cover them all)


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


def _h(value) -> str:
    return hashlib.blake2b(json.dumps(value, sort_keys=True, default=str).encode(), digest_size=16).hexdigest()


def run_settings(target_json: dict, select: list[str], ignore: list[str], prefilter: bool) -> dict[str, str]:
    """The run's settings part by part (name -> digest): a miss names the parts that changed."""
    parts = {"aicompat": code_digest(), "select": _h(sorted(select)), "ignore": _h(sorted(ignore)),
             "prefilter": _h(prefilter)}
    for name, value in target_json.items():
        if name == "pins":
            parts.update({f"pin {pin}": _h(v) for pin, v in value.items()})
        else:
            parts[name] = _h(value)
    return parts


def run_fingerprint(target_json: dict, select: list[str], ignore: list[str], prefilter: bool) -> str:
    """One digest of all the settings (exact mode's results are keyed by it)."""
    return _h(run_settings(target_json, select, ignore, prefilter))


def _canonical(doc: dict) -> bytes:
    return json.dumps(doc, sort_keys=True, separators=(",", ":"), ensure_ascii=True).encode()


def _real(path: str | os.PathLike) -> str:
    return os.path.realpath(os.fspath(path))


class _Miss(Exception):
    """Why an entry does not count: ``cause`` is counted, ``detail`` names what (-v)."""

    def __init__(self, cause: str, detail: str = "") -> None:
        super().__init__(cause)
        self.cause, self.detail = cause, detail


class Cache:
    def __init__(self, directory: Path, settings: dict[str, str], project_root: str | Path | None = None) -> None:
        self.root = Path(directory)
        self.sub = f"v{FORMAT}-{__version__}"
        self.dir = self.root / self.sub
        self.settings = dict(settings)
        self.project_root = str(project_root) if project_root is not None else None
        self.hits = 0
        self.misses: Counter[str] = Counter()  # cause -> files
        self.unstored: Counter[str] = Counter()  # why a result was not stored -> files
        self.details: list[str] = []  # the first DETAILS misses, each with its file and what changed
        self._secret = machine_secret()
        self._digests: dict[tuple[str, str], str] = {}  # a dependency's digest, read back once per run
        self._roots: dict[str, tuple[str, ...]] = {}
        self._trees: dict[str, str | None] = {}  # per folder: where its files' dependencies may be read

    # -- keys and trees --------------------------------------------------------------------------

    @staticmethod
    def key(real: str) -> str:
        return hashlib.blake2b(f"{FORMAT}\0{real}".encode("utf-8", "surrogateescape"), digest_size=20).hexdigest()

    def tree(self, real: str) -> str | None:
        """The tree the linter read other files from for the file at the real path ``real``
        (fs/confine.tree_of; it depends on the file's folder only)."""
        folder = os.path.dirname(real)
        if folder not in self._trees:
            self._trees[folder] = tree_of(real, self.project_root)
        return self._trees[folder]

    def _dep_roots(self, real: str) -> tuple[str, ...]:
        """Where a dependency of the file may be read back: its tree, and the project its
        build is found in (cuda/build/context.py): the folders the linter read it under."""
        folder = os.path.dirname(real)
        hit = self._roots.get(folder)
        if hit is None:
            from ..cuda.build.context import project_root as build_root
            from ..cuda.exact import tree_of as header_tree

            roots = {self.tree(real)}
            try:
                roots.add(str(build_root(Path(real))))
                roots.add(str(header_tree(Path(folder))))
            except (OSError, ValueError, RuntimeError):
                pass
            hit = self._roots[folder] = tuple(sorted(r for r in roots if r))
        return hit

    def _mac(self, doc: dict) -> str:
        return hmac.new(self._secret, _canonical(doc), hashlib.sha256).hexdigest()

    # -- reading ---------------------------------------------------------------------------------

    def get(self, file: str | os.PathLike, display: str, content: str, fixes: bool = False) -> FileResult | None:
        """The stored result for ``file`` (``content``: the digest of its bytes, fs/deps.digest), or None (a miss, counted
        by cause). ``fixes``: the caller applies fixes, which are never applied from an entry,
        so a result that had one is a miss."""
        try:
            res = self._get(file, display, content, fixes)
        except _Miss as miss:
            self._miss(miss.cause, display, miss.detail)
            return None
        except (OSError, ValueError, KeyError, TypeError, AttributeError, RecursionError):
            self._miss("unreadable entry", display)
            return None
        self.hits += 1
        return res

    def _miss(self, cause: str, display: str, detail: str = "") -> None:
        self.misses[cause] += 1
        if cause != "no entry" and len(self.details) < DETAILS:
            self.details.append(f"{display}: {cause}{': ' + detail if detail else ''}")

    def _get(self, file, display: str, content: str, fixes: bool) -> FileResult:
        real = _real(file)
        key = self.key(real)
        folder = real_dirs(self.root, [self.sub, key[:2]], create=False)
        raw = read_regular(folder / f"{key}.json", MAX_ENTRY_BYTES) if folder is not None else None
        if raw is None:
            raise _Miss("no entry")
        doc = json.loads(raw)
        if not isinstance(doc, dict) or set(doc) not in (_ENTRY_FIELDS, _UNSTORED_FIELDS) \
                or not isinstance(doc["mac"], str):
            raise _Miss("unreadable entry")
        mac = doc.pop("mac")
        if not hmac.compare_digest(mac, self._mac(doc)):
            raise _Miss("unreadable entry")  # written by another machine or user, or by hand: not ours
        if doc["file"] != real or not isinstance(doc["settings"], dict):
            raise _Miss("unreadable entry")
        changed = sorted(k for k in set(doc["settings"]) | set(self.settings)
                         if doc["settings"].get(k) != self.settings.get(k))
        if changed:
            raise _Miss(f"settings changed ({', '.join(changed[:3])}{', ...' if len(changed) > 3 else ''})")
        if doc["digest"] != content:
            raise _Miss("the file changed")
        if "unstored" in doc:
            raise _Miss("not stored last run", str(doc["unstored"]))
        parsed, skipped, reads, fixable = doc["parsed"], doc["skipped"], doc["reads"], doc["fixable"]
        if not (isinstance(parsed, bool) and isinstance(fixable, bool) and (skipped is None or isinstance(skipped, str))):
            raise _Miss("unreadable entry")
        if not isinstance(reads, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in reads.items()):
            raise _Miss("unreadable entry")
        if fixes and fixable:
            raise _Miss("its findings have fixes", "fixes are applied only from a fresh check")
        tree = self.tree(real)
        for dep, want in reads.items():  # a module it follows, a .cu it loads, a build file changed: stale
            got = self._dep_digest(dep, real, want)
            if got is None:  # not inside the folders it may be read from now (the root followed the cwd)
                raise _Miss("the project root changed", f"{_shown(dep)} is not inside {_shown(tree or '-')}")
            if got != want:
                raise _Miss("a dependency changed", _shown(dep))
        if tree != doc["tree"]:
            for path, inside in _list(doc["decisions"]):
                if not (isinstance(path, str) and isinstance(inside, bool)):
                    raise _Miss("unreadable entry")
                if tree is None or (within(path, tree) is not None) != inside:
                    raise _Miss("the project root changed", f"{_shown(path)} is {'no longer ' if inside else ''}"
                                                            f"inside {_shown(tree or '-')}")
        diags = [_diag(d, display) for d in _list(doc["diagnostics"])]
        suppressed = [_diag(d, display) for d in _list(doc["suppressed"])]
        notes = doc["notes"]
        if not isinstance(notes, list) or not all(isinstance(n, str) for n in notes):
            raise _Miss("unreadable entry")
        res = FileResult(display, diags, suppressed, parsed, skipped)
        res.reads = list(reads)
        res.notes = list(notes)
        return res

    def _dep_digest(self, dep: str, real: str, want: str) -> str | None:
        """The digest of a dependency now, read back only inside the file's tree or its build's
        project (a regular file, no link, no FIFO); None: not ours to read. ``want``: what the
        entry holds (a file too large to read was noted by its size only: fs/deps.over)."""
        hit = self._digests.get((dep, want))
        if hit is not None:
            return hit
        if not any(within(dep, root) is not None for root in self._dep_roots(real)):
            return None
        if want.startswith(">") and want[1:].isdigit():
            got = want if longer_than(dep, int(want[1:])) else "shorter"
        else:
            got = digest(read_regular(dep, MAX_DEP_BYTES))
        self._digests[(dep, want)] = got
        return got

    # -- writing ---------------------------------------------------------------------------------

    def put(self, file: str | os.PathLike, content: str, res: FileResult) -> None:
        """Store ``res``, the result for ``file`` whose bytes had the digest ``content``."""
        real = _real(file)
        head = {"file": real, "digest": content, "settings": self.settings}
        why = self._unstorable(res)
        if why is None:
            reads = dict(res.deps)
            for dep in res.reads:  # named by a rule (build files): read back now
                path = os.path.abspath(dep)
                if path not in reads:
                    reads[path] = digest(read_regular(path, MAX_DEP_BYTES))
            tree = self.tree(real)
            real_tree = _real(tree) if tree else None
            doc = {**head, "tree": tree, "reads": reads,
                   "decisions": sorted([p, inside] for (p, r), inside in res.decisions.items() if r == real_tree),
                   "parsed": res.parsed, "skipped": res.skipped, "notes": res.notes,
                   "fixable": any(d.fix is not None for d in res.diagnostics + res.suppressed),
                   "diagnostics": [_stored(d) for d in res.diagnostics],
                   "suppressed": [_stored(d) for d in res.suppressed]}
        else:
            self.unstored[why] += 1
            doc = {**head, "unstored": why}  # the next run's miss says why
        doc["mac"] = self._mac(doc)
        key = self.key(real)
        try:
            self._ensure_root()
            folder = real_dirs(self.root, [self.sub, key[:2]], create=True)
            if folder is None:  # a link in the cache folder: not written through
                if why is None:
                    self.unstored["the cache folder holds a link"] += 1
            else:
                replace_file(folder, f"{key}.json", json.dumps(doc).encode())
        except (OSError, ValueError) as exc:
            # a read-only or full disk makes the cache useless, not the run
            self.unstored[f"the cache folder cannot be written ({getattr(exc, 'strerror', None) or exc})"] += 1

    @staticmethod
    def _unstorable(res: FileResult) -> str | None:
        codes = sorted({d.code for d in res.diagnostics if d.code in _NOT_CACHED})
        return f"the result was incomplete ({', '.join(codes)})" if codes else None

    def _ensure_root(self) -> None:
        ensure_root(self.root)



def describe(misses: dict[str, int], unstored: dict[str, int]) -> str:
    """``; 12 misses: 9 no entry, 3 a dependency changed; 1 not stored: ...`` (-v): every
    file checked again is counted by cause, every result not kept by why."""
    total = sum(misses.values())
    out = f"; {total} miss{'es' if total != 1 else ''}" if total else "; no misses"
    if total:
        out += ": " + ", ".join(f"{n} {cause}" for cause, n in misses.items())
    if unstored:
        out += f"; {sum(unstored.values())} not stored: " + ", ".join(f"{n} {why}" for why, n in unstored.items())
    return out


def _shown(path: str) -> str:
    try:
        rel = os.path.relpath(path)
    except ValueError:
        return path
    return path if rel.startswith("..") else rel


def _stored(d: Diagnostic) -> dict:
    out = asdict(d)  # its fix too: shown ([*], --show-fixes), never applied from here
    out["path"] = ""  # the path as displayed depends on the current folder: put back on a hit
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
    ok = (d["path"] == "" and all(_int(d[k]) for k in ("line", "column", "end_line", "end_column"))
          and isinstance(d["code"], str) and _CODE.match(d["code"]) and isinstance(d["rule"], str)
          and d["severity"] in ("error", "warning") and isinstance(d["message"], str)
          and isinstance(d["targets"], list) and all(isinstance(t, str) for t in d["targets"])
          and (d["fix"] is None or isinstance(d["fix"], str))
          and all(d[k] is None or _int(d[k]) for k in ("cell", "cell_line", "file_line", "file_column",
                                                        "file_end_line", "file_end_column")))
    if not ok:
        raise ValueError("bad diagnostic")
    return Diagnostic(**dict(d, path=display))
