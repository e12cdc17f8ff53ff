"""The command line's own memory limit, apart from the workers' (parallel.py): main()
undoes it on the way out whatever ran, so this holds no more than the limit itself."""

from __future__ import annotations

import os

# The parent's own limit while limit_own_memory holds: (bytes added, the soft limit before).
_OWN: tuple[int, int] | None = None


def limit_own_memory(limit: int) -> None:
    """The command line's own process gets a memory limit too, in the workers' spirit:
    its address space may grow by ``limit`` (memory_limit) over what it has now. It
    holds no file's bytes but one at a time, so what grows is only what the files found;
    past the limit an allocation fails (MemoryError: one line and exit 3, cli.py), not
    the machine. A soft limit the user set is left as it is. Undone by restore_own_memory."""
    global _OWN
    try:
        import resource

        with open("/proc/self/statm") as fh:
            size = int(fh.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
        soft, hard = resource.getrlimit(resource.RLIMIT_AS)
        if soft != resource.RLIM_INFINITY or _OWN is not None:
            return
        cap = size + limit if hard == resource.RLIM_INFINITY else min(size + limit, hard)
        resource.setrlimit(resource.RLIMIT_AS, (cap, hard))
        _OWN = (limit, soft)
    except (ImportError, OSError, ValueError):
        pass


def own_memory_limit() -> int | None:
    """The bytes limit_own_memory let this process add, or None (no limit of aicompat's)."""
    return _OWN[0] if _OWN is not None else None


def restore_own_memory() -> None:
    global _OWN
    if _OWN is None:
        return
    try:
        import resource

        resource.setrlimit(resource.RLIMIT_AS, (_OWN[1], resource.getrlimit(resource.RLIMIT_AS)[1]))
    except (ImportError, OSError, ValueError):
        pass
    _OWN = None


def soft_before() -> int | None:
    """The soft limit before limit_own_memory set its own, which a worker's replaces; None without one."""
    return _OWN[1] if _OWN is not None else None
