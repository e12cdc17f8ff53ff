"""Whether a build's sources can be compiled for a GPU at all.

A build that leaves a GPU without code is single-arch by design where no compile
target whose code runs on that GPU compiles one of its sources: a feature that
target rejects sits in live code (wgmma, griddepcontrol, tcgen05 in inline PTX or
a CCCL call, unguarded). Adding the GPU's target to the arch list would then fail
the build, not fix it. Only compile failures count: a CuTe atom compiles everywhere
to a trap, and a unit that traps on one target often traps on the built one too
(a Hopper and a Blackwell path dispatched by a define), so it proves nothing.
"""

from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass
from pathlib import Path

from . import tu
from .preprocessor import Context, default_context
from .scan import CudaSource

MAX_SOURCES = 64  # a build's sources read for this; past them the rest are not looked at


@dataclass(frozen=True)
class Blocker:
    """The first source feature that no compile target of a GPU accepts."""

    file: Path | None  # None: an inline source string
    line: int  # 1-based, in ``file`` (or the string)
    feature: str
    token: str


_units: dict[tuple, CudaSource | None] = {}


def _unit(path: Path, defines: tuple, toolkit, features, reads: list | None) -> CudaSource | None:
    """The source with its in-tree includes inlined, read once per process (keyed by mtime)."""
    try:
        st = path.stat()
    except OSError:
        return None
    key = (str(path), st.st_mtime_ns, st.st_size, defines, toolkit, id(features))
    if key not in _units:
        ctx = default_context(path, toolkit=toolkit)
        # The -D flags read are some of the build's, not all: a macro no flag names stays open.
        ctx = dataclasses.replace(ctx, translation_unit=True, some_defines=dict(defines) or None)
        unit = tu.inline(path, ctx.root or path.parent, ctx.include_dirs)
        src = None
        if unit is not None:
            src = CudaSource(unit.text, features)
            src.context = ctx
            src.where = unit.where  # type: ignore[attr-defined]
        _units[key] = src
    src = _units[key]
    if src is not None and reads is not None:
        for f, _n in getattr(src, "where", ()):
            s = str(f)
            if s != str(path) and s not in reads:
                reads.append(s)
    return src


def blocker(sources: list[Path | str], targets: list[str], features, toolkit: tuple[int, int] | None = None,
            defines: dict[str, str] | None = None, reads: list | None = None, built: tuple = ()) -> Blocker | None:
    """A feature of ``sources`` (paths, or inline source texts) that every target in ``targets``
    fails to compile, or None (some target compiles every source read, or none could be read).
    A source that also fails one of the ``built`` targets (those the build makes) proves no
    design: the build fails as it is (AIC301's to say), so it is no evidence."""
    if not targets:
        return None
    defs = tuple(sorted((defines or {}).items()))
    for s in sources[:MAX_SOURCES]:
        if isinstance(s, Path):
            if s.suffix != ".cu":
                continue  # a header is compiled through its includers; .cpp is the host compiler's
            src = _unit(s, defs, toolkit, features, reads)
        else:
            src = CudaSource(s, features)
            src.context = Context(toolkit=toolkit, some_defines=dict(defs) or None, translation_unit=True)
        if src is None or not src.occurrences:
            continue
        first = None
        for t in targets:
            v = src.verdict(t)
            if v.status != "fail":
                break
            first = first or v.failing[0]
        else:
            assert first is not None  # targets is not empty and each verdict failed
            if any(src.verdict(t).status == "fail" for t in built):
                continue
            where = getattr(src, "where", None)
            if where and 0 < first.line <= len(where):
                f, line = where[first.line - 1]
                return Blocker(Path(os.path.normpath(f)), line, first.feature, first.token)
            return Blocker(s if isinstance(s, Path) else None, first.line, first.feature, first.token)
    return None
