"""CMake commands that read the file tree: include, add_subdirectory and
file(GLOB/READ...), only inside the project root (cmake_eval.py runs them)."""

from __future__ import annotations

import os
from pathlib import Path

from .cond import UNK

MAX_GLOB = 5000


class FileCommands:
    """Mixed into cmake_eval.Interpreter (``args``, ``run_file``, ``root``)."""

    def cmd_include(self, c, scope, path, certain) -> None:
        alts = self.args(c, scope)
        if len(alts) != 1 or not alts[0]:
            return
        name = alts[0][0]
        if UNK in name:
            return
        here = Path(scope.get("CMAKE_CURRENT_SOURCE_DIR", (str(path.parent),))[0])
        cands = [Path(name)] if os.path.isabs(name) else [here / name, path.parent / name]
        for p in cands:
            p = Path(os.path.normpath(p))
            if p.suffix == ".cmake" or p.name == "CMakeLists.txt":
                if _inside(p, self.root) and p.is_file():
                    self.run_file(p, scope, certain)
                    return

    def cmd_add_subdirectory(self, c, scope, path, certain) -> None:
        alts = self.args(c, scope)
        if len(alts) != 1 or not alts[0] or UNK in alts[0][0]:
            return
        here = Path(scope.get("CMAKE_CURRENT_SOURCE_DIR", (str(path.parent),))[0])
        d = Path(os.path.normpath(here / alts[0][0]))
        f = d / "CMakeLists.txt"
        if _inside(f, self.root) and f.is_file():
            sub = dict(scope)
            sub["CMAKE_CURRENT_SOURCE_DIR"] = (str(d),)
            self.run_file(f, sub, certain)

    def cmd_file(self, c, scope, path, certain) -> None:
        alts = self.args(c, scope)
        w = alts[0]
        if len(w) < 2:
            return
        op = w[0].upper()
        if op not in ("GLOB", "GLOB_RECURSE"):
            if op in ("READ", "STRINGS", "MD5", "SHA256", "RELATIVE_PATH", "TO_CMAKE_PATH", "REAL_PATH") and len(w) >= 3:
                scope[w[2] if op != "RELATIVE_PATH" else w[1]] = (UNK,)
            return
        var = w[1]
        if len(alts) != 1:
            scope[var] = (UNK,)
            return
        here = Path(scope.get("CMAKE_CURRENT_SOURCE_DIR", (str(path.parent),))[0])
        found: list[str] = []
        rel = None
        rest = w[2:]
        k = 0
        while k < len(rest):
            p = rest[k]
            if p == "RELATIVE" and k + 1 < len(rest):
                rel = rest[k + 1]
                k += 2
                continue
            if p in ("CONFIGURE_DEPENDS", "FOLLOW_SYMLINKS", "LIST_DIRECTORIES") or p in ("true", "false"):
                k += 1
                continue
            if UNK in p:
                scope[var] = (UNK,)
                return
            base = Path(p) if os.path.isabs(p) else here / p
            if not _inside(Path(os.path.normpath(base.parent)), self.root):
                k += 1
                continue
            pattern = base.name
            parent = Path(os.path.normpath(base.parent))
            try:
                it = parent.rglob(pattern) if op == "GLOB_RECURSE" else parent.glob(pattern)
                for n, f in enumerate(sorted(it)):
                    if n > MAX_GLOB:
                        scope[var] = (UNK,)
                        return
                    found.append(os.path.relpath(f, rel) if rel else str(f))
            except (OSError, ValueError):
                scope[var] = (UNK,)
                return
            k += 1
        scope[var] = (";".join(found),)


def _read(path: Path) -> str | None:
    from ..cpp.includes import read

    return read(path)


def _inside(p: Path, root: Path) -> bool:
    try:
        p.resolve().relative_to(root.resolve())
    except (ValueError, OSError, RuntimeError):
        return False
    return True
