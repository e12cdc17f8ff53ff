"""The per-file time limit (``--timeout``) counts CPU seconds, not wall seconds.

A wall-clock limit depends on the neighbours: the same file on the same tree
passed or failed (exit 0 or 3) with the load other processes put on the
machine. The CPU time this process spends on a file is its own work whatever
else runs, so that is what the limit counts:

- ``per_file_limit`` arms ``ITIMER_PROF`` (the kernel's clock of this process's
  user + system time, all its threads) and raises FileTimeout when the file
  has used its CPU seconds. The alarm interrupts Python code, not a call into
  native code (LibCST's parser), which it interrupts when that returns.
- A worker also gets ``RLIMIT_CPU`` (``cpu_backstop``), a kernel limit that
  ends the process (SIGXCPU) inside native code too; its unit is whole seconds,
  so it fires up to two seconds after the limit, where the alarm could not.
- A wall-clock cap (``wall_cap``: WALL_FACTOR times the limit, at least
  WALL_MIN) stays as the last resort, for an analysis that waits instead of
  working (a blocked read): far above what any load makes of the CPU limit, so
  it never decides a run that works (WALL_MIN: a worker's start, ~20 ms
  forked and 1-2 s spawned, is not the file's time either).

Where no timer is possible (not the main thread, no ``setitimer``: Windows) the
in-process limit is not enforced; workers are then held to the wall-clock cap.
"""

from __future__ import annotations

import gc
import math
import signal
import threading
from contextlib import contextmanager

# The wall-clock cap, in multiples of the CPU limit, and its least value in seconds.
WALL_FACTOR = 10
WALL_MIN = 5.0


def wall_cap(seconds: float) -> float:
    return max(WALL_FACTOR * seconds, WALL_MIN)


class FileTimeout(BaseException):
    """Raised by the alarm; a BaseException so no ``except Exception`` in a rule swallows it.
    ``wall``: the wall-clock cap fired, not the CPU limit."""

    def __init__(self, wall: bool = False) -> None:
        super().__init__("wall" if wall else "cpu")
        self.wall = wall


# An alarm must raise in the analysis's own code. Where Python code runs for the
# interpreter instead (finalizers and weakref callbacks of a garbage collection, a
# generator closed on release), the exception is not the analysis's: the
# interpreter prints "Exception ignored" and goes on, and the limit is lost (on
# CPython 3.11 before 3.11.8, under a hook that formats that report, the AST
# constructor the collection interrupted then failed instead: "AST constructor
# recursion depth mismatch", gh-106905). So automatic collection waits while the
# block runs (the engine already held it off for its traversal; the block adds the
# parse), and the alarm also marks the limit spent: ``check`` raises it at the
# analysis's next checkpoint and at the block's end, and the alarm fires again
# RETRY seconds on, should a finalizer outside a collection have swallowed it.
RETRY = 0.05
_spent: bool | None = None  # the limit is spent: whether it was the wall-clock cap


def _fire(which: int, wall: bool) -> None:
    global _spent
    if _spent is None:
        _spent = wall
    signal.setitimer(which, RETRY)
    raise FileTimeout(wall=_spent)


def _on_cpu(signum, frame):
    _fire(signal.ITIMER_PROF, False)


def _on_wall(signum, frame):
    _fire(signal.ITIMER_REAL, True)


def check() -> None:
    """A checkpoint: raises FileTimeout if the limit was spent and the alarm's own
    exception was swallowed (the analysis calls this between its stages)."""
    if _spent is not None:
        raise FileTimeout(wall=_spent)


def timers_possible() -> bool:
    return hasattr(signal, "setitimer") and hasattr(signal, "SIGPROF") \
        and threading.current_thread() is threading.main_thread()


@contextmanager
def per_file_limit(seconds: float | None):
    """Run the block under ``seconds`` of this process's CPU time (and WALL_FACTOR times it
    of wall time); raises FileTimeout past either. No limit: ``seconds`` None or 0, or
    no timer here (timers_possible)."""
    if not seconds or not timers_possible():
        yield
        return
    global _spent
    prev_cpu = signal.signal(signal.SIGPROF, _on_cpu)
    prev_wall = signal.signal(signal.SIGALRM, _on_wall)
    _spent = None
    collecting = gc.isenabled()
    gc.disable()
    try:
        try:
            signal.setitimer(signal.ITIMER_PROF, seconds)
            signal.setitimer(signal.ITIMER_REAL, wall_cap(seconds))
            yield
            check()  # spent where its exception was swallowed, and no checkpoint came after
        finally:
            signal.setitimer(signal.ITIMER_PROF, 0)
            signal.setitimer(signal.ITIMER_REAL, 0)
    finally:
        if collecting:
            gc.enable()
        _spent = None
        signal.signal(signal.SIGPROF, prev_cpu)
        signal.signal(signal.SIGALRM, prev_wall)


def own_cpu_seconds() -> float:
    """This process's CPU time so far (user + system, all threads): RLIMIT_CPU's clock."""
    import resource

    ru = resource.getrusage(resource.RUSAGE_SELF)
    return ru.ru_utime + ru.ru_stime


def cpu_backstop(seconds: float | None) -> None:
    """In a worker, before each file: RLIMIT_CPU at the CPU time used so far plus ``seconds``
    (rounded up, plus one whole second, so the alarm above fires first where it can); past
    it the kernel ends the worker with SIGXCPU, native code or not. No core file is written
    (RLIMIT_CORE 0). POSIX only; elsewhere nothing."""
    try:
        import resource

        if not seconds:
            soft = resource.RLIM_INFINITY
        else:
            soft = math.ceil(own_cpu_seconds() + seconds) + 1
        core_hard = resource.getrlimit(resource.RLIMIT_CORE)[1]
        resource.setrlimit(resource.RLIMIT_CORE, (0, core_hard))
        hard = resource.getrlimit(resource.RLIMIT_CPU)[1]
        if hard != resource.RLIM_INFINITY and (soft == resource.RLIM_INFINITY or soft > hard):
            soft = hard
        resource.setrlimit(resource.RLIMIT_CPU, (soft, hard))
    except (ImportError, OSError, ValueError):
        pass


def killed_by_cpu_limit(exitcode: int | None) -> bool:
    """A worker's exit code says RLIMIT_CPU ended it."""
    sig = getattr(signal, "SIGXCPU", None)
    return sig is not None and exitcode is not None and -exitcode == sig


def limit_reason(seconds: float, wall: bool = False) -> str:
    """The reason of the AIC002 a file over the limit gets."""
    if wall:
        return (f"analysis ran for more than {wall_cap(seconds):g} s of wall-clock time, the last-resort cap over the "
                f"{seconds:g} s CPU-time limit per file (--timeout), without using that CPU time: it was waiting "
                f"or the machine was overloaded")
    return f"analysis used more than the {seconds:g} s CPU-time limit per file (--timeout)"
