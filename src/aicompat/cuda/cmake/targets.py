"""CMake commands that make targets and set how their sources compile: add_library
and friends, target_sources, CUDA_ARCHITECTURES properties, compile options and
definitions (cmake_eval.py runs them; the build context reads the records)."""

from __future__ import annotations

import os
import re
from pathlib import Path

from .cond import UNK
from .parse import split_list
from .records import Setting, Target

_GENEX_LANG = re.compile(r"\$<\$<COMPILE_LANGUAGE:(\w+)>:(.*)>$", re.S)


class TargetCommands:
    """Mixed into cmake_eval.Interpreter (``args``, ``model``, ``recorded``)."""

    def add_target(self, c, scope, path) -> None:
        alts = self.args(c, scope)
        w = alts[0]
        if not w or UNK in w[0]:
            return
        t = self.model.targets.setdefault(w[0], Target(w[0], path=path, line=c.line))
        t.scope = scope
        words = w[1:]
        if "SOURCES" in words:  # vLLM-style define_extension_target(NAME ... SOURCES ... ARCHITECTURES ...)
            words = _keyword_values(words, "SOURCES", _KEYWORDS)
            archs = _keyword_values(w[1:], "ARCHITECTURES", _KEYWORDS)
            if archs:
                t.archs = (";".join(archs),)
        for s in words:
            p = self.source_path(s, scope, path)
            if p is not None:
                t.sources.append(p)
        if t.archs is None and "CMAKE_CUDA_ARCHITECTURES" in scope:
            t.archs = scope["CMAKE_CUDA_ARCHITECTURES"]

    def cmd_target_sources(self, c, scope, path, certain) -> None:
        w = self.args(c, scope)[0]
        if not w or w[0] not in self.model.targets:
            return
        t = self.model.targets[w[0]]
        for s in w[1:]:
            if s not in ("PRIVATE", "PUBLIC", "INTERFACE"):
                p = self.source_path(s, scope, path)
                if p is not None:
                    t.sources.append(p)

    def source_path(self, s: str, scope: dict, path: Path) -> Path | None:
        if UNK in s or s.upper() in _KEYWORDS or not s or s.startswith("$<"):
            return None
        here = Path(scope.get("CMAKE_CURRENT_SOURCE_DIR", (str(path.parent),))[0])
        return Path(os.path.normpath(Path(s) if os.path.isabs(s) else here / s))

    def cmd_set_target_properties(self, c, scope, path, certain) -> None:
        alts = self.args(c, scope)
        w = alts[0]
        if "PROPERTIES" not in w:
            return
        k = w.index("PROPERTIES")
        names, props = w[:k], w[k + 1:]
        for j in range(0, len(props) - 1, 2):
            key, val = props[j], props[j + 1]
            if key == "CUDA_ARCHITECTURES":
                vals = tuple(dict.fromkeys(words[k + 1:][j + 1] for words in alts if len(words) > k + j + 2 - 1))
                for n in names:
                    t = self.model.targets.setdefault(n, Target(n, path=path, line=c.line))
                    t.archs = vals
                self._arch_setting(c, val, "CUDA_ARCHITECTURES", path, certain, len(alts) == 1, ";".join(names))

    def _arch_setting(self, c, val, what, path, certain, single, subject) -> None:
        arg = next((a for a in c.args if a.text == "CUDA_ARCHITECTURES"), None)
        if single and UNK not in val:
            line, col = (arg.line, arg.col) if arg else (c.line, c.col)
            self.model.settings.append(Setting(path, line, col, what, split_list(val), certain, subject))

    def cmd_set_property(self, c, scope, path, certain) -> None:
        alts = self.args(c, scope)
        w = alts[0]
        if not w or "PROPERTY" not in w:
            return
        kind = w[0].upper()
        k = w.index("PROPERTY")
        names = [x for x in w[1:k] if x != "APPEND" and x != "APPEND_STRING"]
        if "DIRECTORY" in names:
            names = names[:names.index("DIRECTORY")]
        prop = w[k + 1] if k + 1 < len(w) else ""
        vals = tuple(tuple(words[words.index("PROPERTY") + 2:]) for words in alts if "PROPERTY" in words)
        if kind == "SOURCE" and prop in ("COMPILE_OPTIONS", "COMPILE_FLAGS"):
            for n in names:
                p = self.source_path(n, scope, path)
                if p is not None:
                    self.model.source_options.setdefault(p, []).append(self.recorded(_flags(vals), path, c.line))
        elif kind == "TARGET" and prop == "CUDA_ARCHITECTURES":
            for n in names:
                t = self.model.targets.setdefault(n, Target(n, path=path, line=c.line))
                t.archs = tuple(";".join(v) for v in vals)
        elif kind == "TARGET" and prop == "COMPILE_OPTIONS":
            for n in names:
                t = self.model.targets.setdefault(n, Target(n, path=path, line=c.line))
                t.options.append(self.recorded(_flags(vals), path, c.line))

    def cmd_set_source_files_properties(self, c, scope, path, certain) -> None:
        alts = self.args(c, scope)
        w = alts[0]
        if "PROPERTIES" not in w:
            return
        k = w.index("PROPERTIES")
        names = w[:k]
        for kw in ("DIRECTORY", "TARGET_DIRECTORY"):
            if kw in names:
                names = names[:names.index(kw)]
        props = w[k + 1:]
        for j in range(0, len(props) - 1, 2):
            if props[j] in ("COMPILE_OPTIONS", "COMPILE_FLAGS"):
                vals = tuple((words[k + 1 + j + 1],) for words in alts if len(words) > k + 1 + j + 1)
                for n in names:
                    p = self.source_path(n, scope, path)
                    if p is not None:
                        self.model.source_options.setdefault(p, []).append(self.recorded(_flags(vals), path, c.line))

    def cmd_target_compile_options(self, c, scope, path, certain) -> None:
        alts = self.args(c, scope)
        w = alts[0]
        if not w:
            return
        t = self.model.targets.setdefault(w[0], Target(w[0], path=path, line=c.line))
        vals = tuple(tuple(x for x in words[1:] if x not in ("PRIVATE", "PUBLIC", "INTERFACE", "BEFORE"))
                     for words in alts)
        rec = self.recorded(_flags(vals), path, c.line)
        t.options.append(rec)
        if len(rec.alts) == 1 and any("arch" in f and UNK not in f for f in rec.alts[0]):
            self.model.settings.append(Setting(path, c.line, c.col, "target_compile_options", list(rec.alts[0]),
                                               certain, w[0]))

    def cmd_add_compile_options(self, c, scope, path, certain) -> None:
        alts = self.args(c, scope)
        add = [" ".join(_flags((tuple(w),))[0]) for w in alts]
        base = scope.get("CMAKE_CUDA_FLAGS", ("",))
        scope["CMAKE_CUDA_FLAGS"] = tuple(dict.fromkeys(f"{b} {a}" for b in base for a in add))


    def cmd_target_compile_definitions(self, c, scope, path, certain) -> None:
        alts = self.args(c, scope)
        w = alts[0]
        if not w:
            return
        t = self.model.targets.setdefault(w[0], Target(w[0], path=path, line=c.line))
        vals = tuple(tuple(x for x in words[1:] if x not in ("PRIVATE", "PUBLIC", "INTERFACE")) for words in alts)
        t.options.append(self.recorded(_definitions(vals), path, c.line))

    def cmd_add_compile_definitions(self, c, scope, path, certain) -> None:
        alts = self.args(c, scope)
        add = [" ".join(_definitions((tuple(w),))[0]) for w in alts]
        base = scope.get("CMAKE_CUDA_FLAGS", ("",))
        scope["CMAKE_CUDA_FLAGS"] = tuple(dict.fromkeys(f"{b} {a}" for b in base for a in add))

    # add_definitions(-DFOO) takes compile flags, as add_compile_options does.
    cmd_add_definitions = cmd_add_compile_options


def _definitions(vals: tuple) -> tuple[tuple[str, ...], ...]:
    """COMPILE_DEFINITIONS items (``FOO``, ``BAR=1``, CUDA generator expressions) as -D flags."""
    return tuple(tuple(f if f == UNK or f.startswith("-D") else f"-D{f}" for f in flags) for flags in _flags(vals))


def _flags(vals: tuple) -> tuple[tuple[str, ...], ...]:
    """Compile options as nvcc flags: generator expressions for CUDA unwrapped, for
    other languages dropped; COMPILE_FLAGS strings split on spaces."""
    out = []
    for v in vals:
        flags: list[str] = []
        for item in v:
            m = _GENEX_LANG.match(item)
            if m:
                if m.group(1) != "CUDA":
                    continue
                item = m.group(2)
            elif item.startswith("$<"):
                flags.append(UNK + item)  # not known here; its text says whether it may carry a -D
                continue
            flags.extend(item.split())
        out.append(tuple(flags))
    return tuple(dict.fromkeys(out))


_KEYWORDS = {"DESTINATION", "LANGUAGE", "SOURCES", "ARCHITECTURES", "COMPILE_FLAGS", "INCLUDE_DIRECTORIES",
             "LIBRARIES", "USE_SABI", "WITH_SOABI", "STATIC", "SHARED", "MODULE", "OBJECT", "INTERFACE",
             "EXCLUDE_FROM_ALL", "IMPORTED", "GLOBAL", "ALIAS", "WIN32", "MACOSX_BUNDLE", "NO_EXTRAS", "THIN_LTO",
             "OPT_SIZE", "NB_STATIC", "NB_SHARED", "STABLE_ABI", "NOMINSIZE", "NB_DOMAIN", "PROTECT_STACK", "LTO",
             "NOSTRIP", "NB_SUPPRESS_WARNINGS", "DEVICE_LINK"}


def _keyword_values(words: list[str], key: str, keywords: set[str]) -> list[str]:
    if key not in words:
        return []
    out = []
    for w in words[words.index(key) + 1:]:
        if w in keywords:
            break
        out.append(w)
    return out


_TARGET_COMMANDS = {"add_library", "add_executable", "cuda_add_library", "cuda_add_executable", "pybind11_add_module",
                    "python_add_library", "nanobind_add_module", "define_gpu_extension_target",
                    "define_extension_target"}
