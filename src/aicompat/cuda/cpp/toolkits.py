"""Which nvcc versions can compile for a target, when the build does not say.

A target needs a toolkit at least as new as the one that introduced it
(version_matrix/gpus.toml [target.*] toolkit: sm_100f needs CUDA 12.9), so in a
file built for it ``#if __CUDACC_VER_MAJOR__ > 12 || (__CUDACC_VER_MAJOR__ == 12 &&
__CUDACC_VER_MINOR__ >= 9)`` holds even though the version itself is not known
(DeepGEMM's tcgen05.cuh picks its sm_100f-only spelling that way). The candidates
are the versions at and around every constant the source compares the version
with, from the target's minimum on: a line is decided only where all agree.
"""

from __future__ import annotations

import re

_CMP = re.compile(r"__CUDACC_VER_(MAJOR|MINOR)__\s*(?:==|!=|>=|<=|>|<)\s*(\d+)|"
                  r"(\d+)\s*(?:==|!=|>=|<=|>|<)\s*__CUDACC_VER_(MAJOR|MINOR)__")
MAX_CANDIDATES = 24


def candidates(text: str, minimum: tuple[int, int], newest: tuple[int, int]) -> list[tuple[int, int]]:
    """Toolkits from ``minimum`` to one major past ``newest`` that can tell the source's
    version tests apart; [] when it makes none (or too many to try)."""
    majors = {minimum[0], newest[0], newest[0] + 1}
    minors = {0, 9, minimum[1]}
    seen = False
    for m in _CMP.finditer(text):
        seen = True
        kind, num = (m.group(1), m.group(2)) if m.group(1) else (m.group(4), m.group(3))
        c = int(num)
        (majors if kind == "MAJOR" else minors).update({c - 1, c, c + 1})
    if not seen:
        return []
    out = sorted((ma, mi) for ma in majors for mi in minors
                 if 0 <= mi <= 9 and minimum <= (ma, mi) <= (newest[0] + 1, 9))
    return out if len(out) <= MAX_CANDIDATES else []
