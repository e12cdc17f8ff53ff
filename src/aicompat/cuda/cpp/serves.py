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


def _unit(path: Path, build: dict, toolkit, features, reads: list | None) -> CudaSource | None:
    """The source with its in-tree includes inlined, as its build compiles it (``build``: the
    preprocessor Context fields of its -D flags), read once per process."""
    try:
        st = path.stat()
    except OSError:
        return None
    key = (str(path), st.st_mtime_ns, st.st_size, _frozen(build), toolkit, id(features))
    if key not in _units:
        ctx = default_context(path, toolkit=toolkit)
        ctx = dataclasses.replace(ctx, translation_unit=True, **build)
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
            defines: dict[str, str] | None = None, reads: list | None = None, built: tuple = (),
            build_of=None) -> Blocker | None:
    """A feature of ``sources`` (paths, or inline source texts) that every target in ``targets``
    fails to compile, or None (some target compiles every source read, or none could be read).
    A source that also fails one of the ``built`` targets (those the build makes) proves no
    design: the build fails as it is (AIC301's to say), so it is no evidence. ``build_of(path)``:
    the preprocessor Context fields of the -D flags that path's build passes (a dict), where
    known; else ``defines`` are some of them and other macros stay open."""
    if not targets:
        return None
    some = {"some_defines": dict(defines)} if defines else {}
    for s in sources[:MAX_SOURCES]:
        if isinstance(s, Path):
            if s.suffix != ".cu":
                continue  # a header is compiled through its includers; .cpp is the host compiler's
            fields = (build_of(s) if build_of is not None else None) or some
            src = _unit(s, fields, toolkit, features, reads)
        else:
            src = CudaSource(s, features)
            src.context = Context(toolkit=toolkit, translation_unit=True, **some)
        if src is None or not src.occurrences:
            continue
        first = None
        for t in targets:
            # Only code certainly compiled counts: a feature under a macro the build may define
            # (#ifndef DISABLE_SM90 with the -D flags not all known) may be compiled out there.
            live = src.preprocessed(t).live
            certain = [o for o in src.verdict(t).failing if live.get(o.line, True) is True]
            if not certain:
                break
            first = first or certain[0]
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


def _frozen(fields: dict) -> tuple:
    """Context fields as a hashable key (dicts and sets as sorted items)."""
    out = []
    for k, v in sorted(fields.items()):
        if isinstance(v, dict):
            v = ("dict", tuple(sorted(v.items())))
        elif isinstance(v, (set, frozenset)):
            v = ("set", tuple(sorted(v)))
        out.append((k, v))
    return tuple(out)

