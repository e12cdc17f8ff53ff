"""What the CUDA analyzer remembers during one run: in-tree texts read, the builds found under
a root, the walks of a tree for torch's JIT, per-header preprocessor facts.

The run makes one ``RunCache`` per linter (run/linter.py, through cuda/session.py) and makes
it current while it checks a file (``active``); the modules below ask ``table(name)``. Outside
a run nothing is kept between calls. A cache that outlives its run answers the next run in
the same process (the pylint plugin, the Python API called twice) from files since changed:
the include graph is keyed by the tree's build sources, not by what the headers include.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar


class RunCache:
    """The tables of one run, by name."""

    def __init__(self) -> None:
        self.tables: dict[str, dict] = {}

    @contextmanager
    def active(self) -> Iterator[RunCache]:
        """This run's tables answer ``table`` inside the block (nested blocks allowed)."""
        token = _CURRENT.set(self)
        try:
            yield self
        finally:
            _CURRENT.reset(token)


_CURRENT: ContextVar[RunCache | None] = ContextVar("aicompat_cuda_run_cache", default=None)


def table(name: str) -> dict:
    """The current run's table ``name``; outside a run a new empty one (nothing is kept)."""
    run = _CURRENT.get()
    if run is None:
        return {}
    return run.tables.setdefault(name, {})
