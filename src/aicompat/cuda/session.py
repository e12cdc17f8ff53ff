"""What one run of the CUDA analyzer holds: its caches (cuda/cpp/runcache.py) and, when the
target asks for exact mode (--cuda-verify), the nvcc Verifier (cuda/exact/verify.py), with its
compile budget, its private folder and the compilers it starts. The run makes one per linter
(run/linter.py), hands the Verifier to the rules (``Rule.verifier``) and closes it at the end."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .cpp.runcache import RunCache

if TYPE_CHECKING:
    from .exact.verify import Options, Verifier


class CudaRun:
    def __init__(self, verify: Options | None) -> None:
        self.cache = RunCache()
        self.notes: list[str] = []  # the Verifier's run-level notes; the rule that asked passes them on
        self.verifier: Verifier | None = None
        if verify is not None:  # exact mode only: a lint without it never loads nvcc's side
            from .exact.verify import Verifier

            self.verifier = Verifier(verify, self.notes)

    def active(self):
        """The block in which the CUDA analyzer's modules use this run's caches."""
        return self.cache.active()

    def close(self) -> None:
        """Stop any compiler still running and remove exact mode's private folder."""
        if self.verifier is not None:
            self.verifier.close()
