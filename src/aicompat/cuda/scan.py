"""Arch-gated features in CUDA/PTX source, and the verdict per compile target.

A feature (``wgmma``, ``tcgen05``, ...) is recognised by the patterns in
version_matrix/cuda_features.toml: PTX mnemonics inside ``asm`` strings
(adjacent string literals are joined first, so ``"wgmma." "fence"`` counts),
CUDA C++ intrinsics and types, ``cuda::ptx`` wrappers. A feature named in a
``#define`` body counts where the macro is used. The preprocessor decides
which occurrences a compile target really compiles.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from .cxx import dead_lines
from .preprocessor import CompileTarget, Context, Preprocessed, logical_lines, preprocess, strip_comments

_ADJACENT = re.compile(r'"\s*"')
_DEFINE = re.compile(r"^\s*#\s*define\s+([A-Za-z_]\w*)")
_IDENT = re.compile(r"[A-Za-z_]\w*")
_FUNC_HEADER = re.compile(r"__global__|__device__")


@dataclass(frozen=True)
class Feature:
    name: str
    summary: str
    patterns: tuple[re.Pattern, ...]
    targets: frozenset[str]  # compile targets whose nvcc accepts it
    error: str
    context: re.Pattern | None = None  # counted only in files that also match this


@dataclass
class Occurrence:
    feature: str
    line: int  # 1-based, in the CUDA source
    token: str


@dataclass
class Verdict:
    target: str
    status: str  # "ok" | "fail" | "empty"
    failing: list[Occurrence] = field(default_factory=list)  # compiled but not accepted
    dropped: list[Occurrence] = field(default_factory=list)  # accepted but compiled out


class CudaSource:
    """One CUDA translation unit: its occurrences, and per-target verdicts."""

    def __init__(self, text: str, features: dict[str, Feature]) -> None:
        self.clean = _ADJACENT.sub("", strip_comments(text))
        self.features = {k: f for k, f in features.items() if f.context is None or f.context.search(self.clean)}
        self.occurrences: list[Occurrence] = []
        macro_features: dict[str, list[tuple[str, str]]] = {}
        define_lines: set[int] = set()
        lines = logical_lines(self.clean)
        for lineno, line in lines:
            found = self._match(line)
            dm = _DEFINE.match(line)
            if dm:
                define_lines.add(lineno)
                if found:
                    macro_features.setdefault(dm.group(1), []).extend(found)
                continue
            for feat, tok in found:
                self.occurrences.append(Occurrence(feat, lineno, tok))
        # Macros that name other feature-bearing macros (WG_FENCE -> WG_ASM("wgmma...")).
        for _ in range(3):
            for lineno, line in lines:
                dm = _DEFINE.match(line)
                if not dm:
                    continue
                for ident in set(_IDENT.findall(line)) & set(macro_features):
                    if ident != dm.group(1):
                        for ft in macro_features[ident]:
                            if ft not in macro_features.setdefault(dm.group(1), []):
                                macro_features[dm.group(1)].append(ft)
        if macro_features:
            for lineno, line in lines:
                if lineno in define_lines:
                    continue
                for ident in set(_IDENT.findall(line)) & set(macro_features):
                    for feat, tok in macro_features[ident]:
                        self.occurrences.append(Occurrence(feat, lineno, f"{ident} ({tok})"))
        self._pp: dict[str, Preprocessed] = {}

    def _match(self, line: str) -> list[tuple[str, str]]:
        out = []
        for f in self.features.values():
            for p in f.patterns:
                m = p.search(line)
                if m:
                    word = re.match(r"[\w.:]+", line[m.start():])  # the whole mnemonic: wgmma.fence.sync.aligned
                    out.append((f.name, word.group(0) if word else m.group(0)))
                    break
        return out

    def _blocks(self) -> list[tuple[int, int, str]]:
        """(open line, close line, header) of every {...} block, for finding functions."""
        if hasattr(self, "_block_cache"):
            return self._block_cache
        blocks, stack = [], []
        line, last_break = 1, 0
        text = self.clean
        for i, ch in enumerate(text):
            if ch == "\n":
                line += 1
            elif ch == "{":
                stack.append((line, text[last_break:i]))
                last_break = i + 1
            elif ch == "}":
                if stack:
                    open_line, header = stack.pop()
                    blocks.append((open_line, line, header))
                last_break = i + 1
            elif ch == ";":
                last_break = i + 1
        self._block_cache = blocks
        return blocks

    def _function_does_more(self, line: int, pp: Preprocessed) -> bool:
        """Does the function around ``line`` keep other compiled statements, so that
        dropping the feature does not leave the kernel empty?"""
        funcs = [b for b in self._blocks() if b[0] <= line <= b[1] and _FUNC_HEADER.search(b[2])]
        if not funcs:
            return True  # not inside a function we can see: do not claim it vanishes
        open_line, close_line, _ = min(funcs, key=lambda b: b[1] - b[0])
        for ln, text in logical_lines(self.clean):
            if open_line < ln < close_line and ";" in text and pp.live.get(ln, True) is not False \
                    and not text.lstrip().startswith("#"):
                return True
        return False

    # Where the source lives and how it is built (include dirs, -D flags, -rdc): set by
    # the caller; None for a string compiled from Python (a translation unit of its own).
    context: Context | None = None

    def preprocessed(self, target: str) -> Preprocessed:
        if target not in self._pp:
            self._pp[target] = preprocess(self.clean, CompileTarget(target), context=self.context)
        return self._pp[target]

    def not_emitted(self, target: str) -> set[int]:
        """Lines the preprocessor keeps but nvcc does not emit for ``target`` (cuda/cxx.py)."""
        cache = self.__dict__.setdefault("_not_emitted", {})
        if target not in cache:
            cache[target] = dead_lines(self.clean, self.preprocessed(target), self.context)
        return cache[target]

    def verdict(self, target: str) -> Verdict:
        v = Verdict(target, "ok")
        if not self.occurrences:
            return v
        pp = self.preprocessed(target)
        for occ in self.occurrences:
            feat = self.features[occ.feature]
            live = pp.live.get(occ.line, True)
            if live is not False and occ.line in self.not_emitted(target):
                continue  # a discarded if-constexpr branch or a helper no live kernel calls
            accepted = target in feat.targets
            if live is not False and not accepted:
                v.failing.append(occ)
            elif live is False and occ.line in pp.line_group and _no_alternative(pp, occ.line) \
                    and not self._function_does_more(occ.line, pp):
                v.dropped.append(occ)
        if v.failing:
            v.status = "fail"
        elif v.dropped:
            v.status = "empty"
        return v


def _no_alternative(pp: Preprocessed, line: int) -> bool:
    """Is every branch of the #if group holding ``line`` compiled out (no #else that runs)?"""
    gid, _branch = pp.line_group[line]
    return all(live is False for _start, _end, live in pp.groups.get(gid, []))


def load_features(matrix) -> dict[str, Feature]:
    out = {}
    for name, e in matrix.section("cuda_features.toml", "feature").items():
        out[name] = Feature(
            name=name,
            summary=e["summary"],
            patterns=tuple(re.compile(p) for p in e["patterns"]),
            targets=frozenset(e["targets"]),
            error=e["error"],
            context=re.compile(e["context"]) if "context" in e else None,
        )
    return out
