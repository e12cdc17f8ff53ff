"""A CMake project's configurations: each value of its option()s is one (issue 28 item 3).

The user picks option values with ``-D<name>=ON|OFF`` when configuring, so the project
builds one way or the other, never both merged. Evaluated here (eval.py), bounded: the
default configuration (every option at its default) plus, for each option an
``if()``/``elseif()`` tests, the configuration that flips it alone. Combinations of flips
are not built (2**n). Past MAX_FLIPS options (or the step budget) the remaining tested
options keep both values in every configuration, their branches merged as one evaluation
did before configurations were told apart. A ``CACHE STRING`` variable is its default in
every configuration (the user may override it; that is not modelled).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from ..cpp import runcache
from .eval import MAX_STEPS, evaluate
from .records import Model

MAX_FLIPS = 8
MAX_TOTAL_STEPS = 4 * MAX_STEPS  # all configurations of one project together


@dataclass(frozen=True)
class Configuration:
    label: str  # said in findings: "with ATTN_HOPPER=OFF"; "" when the project has only one
    model: Model
    default: bool  # every flipped option at its default


def configurations(path: Path, root: Path, fleet_caps: list[str] | None = None,
                   cuda: str | None = None) -> list[Configuration]:
    """The configurations of the CMake file ``path`` (default first), once per run while the
    files they read are unchanged (cuda/cpp/runcache.py)."""
    cache = runcache.table("cmake_configurations")
    key = (str(path), str(root), tuple(fleet_caps) if fleet_caps is not None else None, cuda)
    got = cache.get(key)
    if got is not None and all(_stamp(f) == s for f, s in got[1]):
        return got[0]
    cfgs = _configurations(path, root, fleet_caps, cuda)
    reads = sorted({r for c in cfgs for r in c.model.reads} | {str(path)})
    if len(cache) > 64:
        cache.clear()
    cache[key] = (cfgs, [(r, _stamp(r)) for r in reads])
    return cfgs


def _configurations(path: Path, root: Path, fleet_caps, cuda) -> list[Configuration]:
    base = evaluate(path, root, fleet_caps, cuda)
    tested = list(base.tested)
    if not tested:
        return [Configuration("", base, True)]
    budget = MAX_TOTAL_STEPS // max(base.steps, 1) - 1  # each flip costs about one evaluation
    flips = tested[:max(0, min(MAX_FLIPS, budget))]
    merged = {n: (base.options[n], _other(base.options[n])) for n in tested[len(flips):]}
    if merged:
        base = evaluate(path, root, fleet_caps, cuda, merged)
    if not flips:
        return [Configuration("", base, True)]
    said = ", ".join(f"{n}={base.options[n]}" for n in flips)
    label = f"with {said} (the default)" if len(flips) <= 2 else "with its options at their defaults"
    out = [Configuration(label, base, True)]
    for n in flips:
        v = _other(base.options[n])
        out.append(Configuration(f"with {n}={v}", evaluate(path, root, fleet_caps, cuda, {**merged, n: (v,)}),
                                 False))
    return out


def _other(value: str) -> str:
    return "OFF" if value == "ON" else "ON"


def _stamp(p: str):
    try:
        st = os.stat(p)
        return (st.st_size, st.st_mtime_ns)
    except OSError:
        return None
