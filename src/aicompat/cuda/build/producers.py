"""Which script of the project writes a compiled module a Python file loads by name
(``cupy.RawModule(path="attn.cubin")``): the nvcc command with ``-o .../attn.cubin`` in a
shell script or Makefile of the loading file's folder, its ancestors up to the project
root, or their immediate subfolders (scripts/, tools/). Bounded; never executes anything."""

from __future__ import annotations

import fnmatch
import os
from pathlib import Path

from ...fs.files import is_makefile
from ..cpp.includes import read
from .build_files import build_files
from .context import project_root
from .makefile import recipe_commands
from .shell import commands, is_nvcc

_OUTPUT = ("-o", "--output-file")


def producer(path: Path, name: str, reads: list | None = None) -> tuple[list, str] | None:
    """(nvcc words, "build.sh line 7") of the first command that writes ``name``, or None."""
    try:
        path = Path(os.path.abspath(path))
        root = project_root(path)
        for f in build_files(path, root):
            text = read(f)
            if text is None or "nvcc" not in text:
                continue
            if reads is not None and str(f) not in reads:
                reads.append(str(f))
            docker = f.name.startswith(("Dockerfile", "Containerfile"))
            cmds = recipe_commands(text) if is_makefile(f.name) else commands(text, dockerfile=docker)
            for cmd in cmds:
                words = [w.text for w in cmd]
                if _writes(words, name):
                    try:
                        rel = f.relative_to(root).as_posix()
                    except ValueError:
                        rel = f.name
                    return words, f"built by {rel} line {cmd[0].line}"
    except (OSError, ValueError, RecursionError):
        return None
    return None


def _writes(words: list, name: str) -> bool:
    if not is_nvcc(words):
        return False
    for i, w in enumerate(words[:-1]):
        out = words[i + 1] if w in _OUTPUT else None
        if w is not None and w.startswith(("-o", "--output-file=")) and w not in _OUTPUT:
            out = w.split("=", 1)[1] if "=" in w else w[2:]
        if out and fnmatch.fnmatchcase(name, out.rsplit("/", 1)[-1].replace("%", "*")):
            return True
    return False
