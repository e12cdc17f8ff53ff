"""The .cu files that the nvcc commands of Makefiles and shell scripts compile.

A command compiles a file it names (``nvcc ... -c csrc/attn.cu``, a glob such as
``$(wildcard csrc/*.cu)`` matched against the tree), or, in a Makefile recipe that names
``$<`` (``$^``), its rule's first (every) prerequisite: an explicit rule's files, or a
pattern rule's ``%.cu`` (GNU Make manual 10.5.4: a pattern without a slash matches the
file name in any folder under the Makefile's). Names are taken relative to the build
file's folder (make runs there) or to the project root (scripts run from it). A Makefile
gives one compile per configuration of its conditionals (makefile.py). Never runs anything.
"""

from __future__ import annotations

import fnmatch
import os
from dataclasses import dataclass
from pathlib import Path

from ...fs.files import SKIP_DIRS, is_makefile
from ..cpp.includes import read
from .makefile import configurations
from .shell import commands

CUDA_SOURCE = ".cu"
MAX_LISTED = 3000  # .cu files listed under one build file's folder for its patterns


@dataclass(frozen=True)
class Compile:
    """One nvcc command that compiles ``source``."""

    source: Path
    words: tuple  # the command's words (None where not known here), nvcc first
    raws: tuple  # the same words as written (after Make's expansion)
    where: str  # "Makefile line 12"
    config: str | None  # the Makefile configuration ("" when it has one); None: not told apart


def is_nvcc_word(text: str | None, raw: str) -> bool:
    """``nvcc``, ``/usr/local/cuda/bin/nvcc``, or ``$(CUDA_HOME)/bin/nvcc`` whose folder is not known."""
    name = (text if text is not None else raw).strip("'\"")
    return name.rsplit("/", 1)[-1] == "nvcc"


def compiles(files: list[Path], root: Path) -> tuple[list[Compile], list[str]]:
    """Every compile of a .cu file by the nvcc commands of ``files``; the files read."""
    out: list[Compile] = []
    reads: list[str] = []
    listed: dict[Path, list[Path]] = {}
    for f in files:
        text = read(f)
        if text is None or "nvcc" not in text:
            continue
        reads.append(str(f))
        rel = _rel(f, root)
        if is_makefile(f.name):
            for cfg in configurations(text):
                for cmd in cfg.commands:
                    rule = cfg.rules.get(cmd[0].line)
                    out.extend(_compiles_of(cmd, f, root, rel, cfg.label, rule, listed))
        else:
            docker = f.name.startswith(("Dockerfile", "Containerfile"))
            for cmd in commands(text, dockerfile=docker):
                out.extend(_compiles_of(cmd, f, root, rel, "", None, listed))
    return out, reads


def _compiles_of(cmd, f: Path, root: Path, rel: str, label, rule, listed) -> list[Compile]:
    if not cmd or not is_nvcc_word(cmd[0].text, cmd[0].raw):
        return []
    names = [w.text for w in cmd[1:] if w.text is not None and w.text.endswith(CUDA_SOURCE)]
    if rule is not None and rule.uses:
        pre = [p for p in (rule.prereqs[:1] if rule.uses == "first" else rule.prereqs) if p.endswith(CUDA_SOURCE)]
        names.extend(pre)
    if not names:
        return []
    sources: list[Path] = []
    for name in names:
        sources.extend(_match(name, f.parent, root, listed))
    words = tuple(w.text for w in cmd)
    raws = tuple(w.raw for w in cmd)
    where = f"{rel} line {cmd[0].line}"
    return [Compile(s, words, raws, where, label) for s in dict.fromkeys(sources)]


def _match(name: str, base: Path, root: Path, listed) -> list[Path]:
    """The .cu files ``name`` (a path, a shell glob, a Make pattern with %) stands for."""
    anywhere = "%" in name and "/" not in name  # a Make pattern without a slash: any folder (10.5.4)
    name = name.replace("%", "*")
    out = []
    for d in dict.fromkeys((base, root)):
        if not any(c in name for c in "*?["):
            p = Path(os.path.normpath(d / name))
            if p.is_file():
                out.append(p)
            continue
        for p in _cu_files(d, listed):
            if fnmatch.fnmatchcase(p.name if anywhere else p.relative_to(d).as_posix(), name):
                out.append(p)
    return out


def _cu_files(d: Path, listed: dict) -> list[Path]:
    if d not in listed:
        found: list[Path] = []
        for top, dirs, names in os.walk(d):
            dirs[:] = sorted(x for x in dirs if x not in SKIP_DIRS and not x.startswith("."))
            found.extend(Path(top) / n for n in sorted(names) if n.endswith(CUDA_SOURCE))
            if len(found) >= MAX_LISTED:
                break
        listed[d] = found[:MAX_LISTED]
    return listed[d]


def _rel(p: Path, root: Path) -> str:
    try:
        return p.relative_to(root).as_posix()
    except ValueError:
        return p.name
