"""Baselines for adopting aicompat on an existing repo.

``--write-baseline FILE`` records today's findings by rule, path and a
fingerprint of the code (the finding's source line and message, without line
numbers), so unrelated edits that move code do not invalidate it.
``--baseline FILE`` then reports only findings that are not in it. Writing
again records only what is still found, so fixed findings drop out. Paths are
recorded relative to the project root (the folder of ``pyproject.toml``, else
the baseline file's folder), so a run from a subfolder matches the same entries.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections import Counter
from pathlib import Path

from .diagnostics import Diagnostic
from .errors import ConfigError
from .suppress import NEVER_SUPPRESSED, source_lines

_LINE_REF = re.compile(r"\bline \d+")


def _source_line(d: Diagnostic, cache: dict[str, list[str]]) -> str:
    if d.path not in cache:
        from .parallel import read_capped

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
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:20]


def write(path: str, diags: list[Diagnostic], root: str | None = None) -> int:
    cache: dict[str, list[str]] = {}
    entries = sorted(({"code": d.code, "path": project_path(d.path, root), "fingerprint": fingerprint(d, cache, root)}
                      for d in diags if d.code not in NEVER_SUPPRESSED),
                     key=lambda e: (e["path"], e["code"], e["fingerprint"]))
    Path(path).write_text(json.dumps({"aicompat_baseline": 1, "entries": entries}, indent=1) + "\n")
    return len(entries)


def load(path: str) -> Counter:
    try:
        doc = json.loads(Path(path).read_text())
        return Counter((e["code"], e["path"], e["fingerprint"]) for e in doc["entries"])
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise ConfigError(f"{path}: not an aicompat baseline ({exc})") from None


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
