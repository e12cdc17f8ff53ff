"""Linting the files that need a parse: in this process, or on worker processes.

The per-file work (parse, traversal, rules) is CPU-bound Python, so threads
would not help; worker processes do. Each worker builds its linter once from
a ``LinterSpec`` handed over when the worker starts (inherited on fork,
pickled once on spawn), then receives one file at a time over its own pipe:
where to read it and the digest of the bytes the parent checked (``Queued``),
so the parent holds no queued file's bytes. One file at a time lets the
parent know which file each worker is on and since when, so a file that runs
past the time limit is reported (AIC002) and its worker replaced, and a
worker that dies (a crash in native parser code) costs one file (AIC000),
not the run. Results come back by index; the caller keeps path order, so
output does not depend on scheduling. The parent has a memory limit of its
own too (``limit_own_memory``, the command line only).

The command line parses every file on a worker, never in its own process:
a worker has a memory limit (``MEMORY_LIMIT``, on its address space) and is
ended at the time limit even inside LibCST's native parser, so a hostile
file costs one AIC000/AIC002, not the run. The time limit counts CPU seconds
(cpu_limit.py): a worker's alarm and RLIMIT_CPU, the parent's wall-clock cap
(10 times it, at least 5 s) as the last resort. The Python API with ``jobs=1``
lints in the caller's process (a library starts no processes it was not
asked for); there the limit is the CPU alarm alone (POSIX, main thread),
which interrupts Python code but not a call into native code.
"""

from __future__ import annotations

import errno
import gc
import multiprocessing as mp
import os
import signal
import sys
import threading
import time
from collections import deque
from dataclasses import dataclass
from multiprocessing.connection import wait

from ..core.engine import internal_error
from ..fs.capped import read_capped
from ..matrix import Matrix
from ..matrix.target import ResolvedTarget
from ..report.fix import digest
from .cpu_limit import FileTimeout, cpu_backstop, killed_by_cpu_limit, limit_reason, per_file_limit, wall_cap
from .linter import MAX_FILE_BYTES, FileResult, Linter, limit_result, unreadable
from .own_memory import soft_before

# Below this much source to parse, one process is faster than starting
# workers. Measured on a 2-CPU x86_64 VM (bench/RESULTS.md): two forked
# workers cost ~20 ms to start, feed and stop, and parse + analysis runs at
# ~0.3 MB/s per process, so two workers break even at ~15 KB of source and
# are clearly ahead from ~64 KB (31 transformers files, 131 KB: 477 ms in one
# process, 313 ms on two). A spawned worker (macOS, Windows) re-imports
# aicompat and LibCST first (~1-2 s here), so it needs much more to parse.
MIN_PARALLEL_BYTES = {"fork": 64 * 1024, "spawn": 2 * 1024 * 1024}
MIN_PARALLEL_FILES = 2
# MAX_FILE_BYTES (2 MB, run/linter.py): see too_large(); the default of --max-file-size / max-file-size
# A notebook's file is mostly outputs (plots as base64): its code is held to the size limit,
# the file itself to this many times it (bench/RESULTS.md, "Size limit").
NOTEBOOK_FILE_FACTOR = 10
# Address space a worker may add to what it had when it started (on Linux,
# RLIMIT_AS). The largest file allowed (2 MB) needs ~1.2 GB in LibCST and the
# analysis; a file that wants more is reported (AIC002) instead of taking the
# machine's memory (a 90-byte file once asked for 5.5 GB).
MEMORY_LIMIT = 3 << 30


def available_cpus() -> int:
    """The CPUs this process may run on (a container's or taskset's limit, not the host's count)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


default_jobs = available_cpus


def bound_jobs(jobs: int) -> int:
    """More workers than CPUs only cost memory (the work is CPU-bound), and a
    repository's config must not start one process per file."""
    return max(1, min(jobs, available_cpus()))


@dataclass(frozen=True)
class LinterSpec:
    """Everything a worker needs to build the same linter as the parent."""

    target: ResolvedTarget
    matrix: Matrix
    select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()
    prefilter: bool = True
    root: str | None = None  # the project root: files the checked code names are read only inside it
    max_bytes: int = MAX_FILE_BYTES  # the size limit per file (a notebook's: of its code)

    def build(self) -> Linter:
        linter = Linter(self.target, self.matrix, select=list(self.select), ignore=list(self.ignore),
                        prefilter=self.prefilter, root=self.root)
        linter.max_bytes = self.max_bytes
        return linter


@dataclass(frozen=True)
class Queued:
    """A file to lint, read again where it is linted (a worker, or lint_serial): the
    parent holds no queued file's bytes (900 files of 1.9 MB held 1.7 GB there)."""

    path: str
    size: int  # of the bytes the parent checked (largest first)
    digest: str  # of those bytes: only they are linted (and cached, and fixed)


Work = tuple[int, str, bytes | Queued]  # (index, display path, the bytes or where to read them)


def _size(source: bytes | Queued) -> int:
    return source.size if isinstance(source, Queued) else len(source)


def load(source: bytes | Queued, display: str, max_bytes: int) -> bytes | FileResult:
    """The bytes to lint, or the result of a file that is no longer the one the parent
    checked (changed, grown, replaced by a FIFO or a link to elsewhere: not linted)."""
    if not isinstance(source, Queued):
        return source
    try:
        data = read_capped(source.path, file_cap(display, max_bytes))
    except OSError as exc:
        return unreadable(display, exc)
    if isinstance(data, int) or len(data) != source.size or digest(data) != source.digest:
        return unreadable(display, OSError(errno.EAGAIN, "it changed while it was being checked; check it again"))
    return data


def _lint_item(linter: Linter, source: bytes | Queued, display: str, timeout: float | None = None,
               in_process: bool = False) -> FileResult:
    data = load(source, display, linter.max_bytes)
    if isinstance(data, FileResult):
        return data
    res = lint_one(linter, data, display, timeout) if in_process else _guarded(linter, data, display)
    if isinstance(source, Queued):
        res.digest = source.digest  # the bytes checked were the parent's
    return res


def memory_limit(max_bytes: int = MAX_FILE_BYTES) -> int:
    """A worker's memory limit: MEMORY_LIMIT, grown in proportion for a raised size limit
    (LibCST's memory grows with the source: 0.8 GB for 1.4 MB, 4.3 GB for 5 MB)."""
    return int(MEMORY_LIMIT * max(1.0, max_bytes / MAX_FILE_BYTES))



def timeout_result(display: str, seconds: float, wall: bool = False) -> FileResult:
    return limit_result(display, limit_reason(seconds, wall))


def file_cap(display: str, max_bytes: int = MAX_FILE_BYTES) -> int:
    """The most bytes read of a file: ``max_bytes``, for a notebook NOTEBOOK_FILE_FACTOR times it."""
    return max_bytes * NOTEBOOK_FILE_FACTOR if display.endswith(".ipynb") else max_bytes


def too_large(data: bytes | int, display: str, max_bytes: int = MAX_FILE_BYTES) -> FileResult | None:
    """LibCST needs several hundred bytes of memory per byte of source and
    parses in native code no timer can interrupt (a 1.4 MB module: 0.8 GB
    and 14 s here; a generated 5 MB one: 4.3 GB and 150 s), so files above
    the limit are reported instead of parsed. ``data``: the bytes, or the size.
    A notebook's code is held to ``max_bytes`` once it is extracted (run/linter.py)."""
    size = data if isinstance(data, int) else len(data)
    cap = file_cap(display, max_bytes)
    if size <= cap:
        return None
    what = "notebook file" if cap != max_bytes else "file"
    return limit_result(display, f"{size / 1e6:.3g} MB is over the {cap / 1e6:.3g} MB limit per {what} "
                                 "(--max-file-size)")


def timed(fn, timeout: float | None, *args):
    """``fn(*args)`` under the per-file CPU-time limit where a timer is possible
    (this process's main thread); raises FileTimeout when it runs past it."""
    with per_file_limit(timeout):
        return fn(*args)


def memory_result(display: str, limit: int | None = None) -> FileResult:
    limit = MEMORY_LIMIT if limit is None else limit
    return limit_result(display, f"analysis needed more than the {limit / 2**30:g} GiB memory limit per file")


def _guarded(linter: Linter, data: bytes, display: str) -> FileResult:
    try:
        return linter.lint_bytes(data, display)
    except MemoryError:
        return memory_result(display, memory_limit(linter.max_bytes))
    except Exception as exc:  # an engine bug in one file must not end the run
        res = FileResult(display)
        res.diagnostics.append(internal_error(display, 1, 1, f"{type(exc).__name__}: {exc}"))
        return res


def lint_one(linter: Linter, data: bytes, display: str, timeout: float | None) -> FileResult:
    """Lint one file in this process, under the CPU-time limit where a timer is possible."""
    try:
        with per_file_limit(timeout):
            return _guarded(linter, data, display)
    except FileTimeout as exc:  # also if it fired between the lint's return and the timer's reset
        assert timeout  # raised only under a limit
        return timeout_result(display, timeout, exc.wall)


def lint_serial(spec_or_linter, work: list[Work], timeout: float | None) -> dict[int, FileResult]:
    if isinstance(spec_or_linter, LinterSpec):  # a linter of its own: its run ends here
        linter = spec_or_linter.build()
        try:
            return lint_serial(linter, work, timeout)
        finally:
            linter.close()
    return {i: _lint_item(spec_or_linter, source, display, timeout, in_process=True) for i, display, source in work}


def use_pool(work: list[Work], jobs: int) -> bool:
    """Whether worker processes pay for themselves on ``work``."""
    if jobs < 2 or len(work) < MIN_PARALLEL_FILES:
        return False
    return sum(_size(w[2]) for w in work) >= MIN_PARALLEL_BYTES[_context().get_start_method()]


def _context():
    # fork: a worker starts in milliseconds with everything already imported
    # and the spec inherited. Only on Linux: macOS and Windows default to
    # spawn for good reasons (system frameworks are not fork-safe).
    if sys.platform.startswith("linux") and "fork" in mp.get_all_start_methods():
        return mp.get_context("fork")
    return mp.get_context("spawn")


def _limit_memory(limit: int, inherited: int | None = None) -> None:
    """Cap this worker's address space at what it has now plus ``limit``:
    an allocation past it fails (MemoryError in Python, an abort in native
    code) in this worker only. Linux only (/proc); elsewhere the time limit
    still holds. ``inherited``: the soft limit before the parent set its own
    (limit_own_memory), which the worker's replaces."""
    try:
        import resource

        with open("/proc/self/statm") as fh:
            size = int(fh.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
        soft, hard = resource.getrlimit(resource.RLIMIT_AS)
        soft = soft if inherited is None else inherited
        cap = size + limit
        if hard != resource.RLIM_INFINITY:
            cap = min(cap, hard)
        if soft == resource.RLIM_INFINITY or soft > cap:
            resource.setrlimit(resource.RLIMIT_AS, (cap, hard))
    except (ImportError, OSError, ValueError):
        pass


def _die_with_parent() -> None:
    """Linux: the kernel kills this worker when the parent dies, however it
    dies (SIGKILL included), so no worker outlives an interrupted run."""
    if not sys.platform.startswith("linux"):
        return
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


def _watch_size(peak) -> None:
    """Keep the worker's largest address-space size in ``peak`` (a shared value): when it dies
    by SIGSEGV, the parent can tell running out of memory from a crash."""
    if peak is None or not os.path.exists("/proc/self/statm"):
        return
    page = os.sysconf("SC_PAGE_SIZE")

    def loop():
        while True:
            try:
                with open("/proc/self/statm") as fh:
                    size = int(fh.read().split()[0]) * page
            except (OSError, ValueError, IndexError):
                return
            if size > peak.value:
                peak.value = size
            time.sleep(0.1)

    threading.Thread(target=loop, daemon=True).start()


def _worker(conn, spec: LinterSpec, parent: int | None = None, peak=None, inherited: int | None = None,
            timeout: float | None = None) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle
    signal.signal(signal.SIGTERM, signal.SIG_DFL)  # not the CLI's handler, inherited on fork
    _die_with_parent()
    if parent is not None and os.getppid() != parent:
        return  # the parent died before the line above took effect
    limit = memory_limit(spec.max_bytes)
    _limit_memory(limit, inherited)
    _watch_size(peak)
    linter = spec.build()
    # What the worker holds before its first file (the parent's tables, inherited on fork,
    # the linter's) lives as long as it does: kept out of every garbage collection, each of
    # which walked it again after every file.
    gc.freeze()
    try:
        _serve(conn, linter, limit, timeout)
    finally:
        linter.close()  # the worker's run ends: exact mode's compilers and private folder with it


def _serve(conn, linter: Linter, limit: int, timeout: float | None = None) -> None:
    """Lint each file the parent sends until it sends None or the pipe closes, each under
    the CPU-time limit: the alarm where Python code runs, RLIMIT_CPU where it does not."""
    while True:
        try:
            msg = conn.recv()
        except (EOFError, OSError):
            return
        if msg is None:
            return
        i, display, source = msg
        cpu_backstop(timeout)
        res = _lint_item(linter, source, display, timeout, in_process=True)
        try:
            conn.send((i, res))
        except MemoryError:  # the result itself did not fit: report the file, not a dead worker
            conn.send((i, memory_result(display, limit)))


class _Worker:
    def __init__(self, ctx, spec: LinterSpec, timeout: float | None = None) -> None:
        self.conn, child = ctx.Pipe()
        self.peak = ctx.Value("q", 0, lock=False)  # the worker's largest address space, in bytes
        inherited = soft_before()
        self.proc = ctx.Process(target=_worker, args=(child, spec, os.getpid(), self.peak, inherited, timeout),
                                daemon=True)
        self.proc.start()
        child.close()
        self.current: tuple[int, str] | None = None
        self.started = 0.0

    def give(self, item: Work) -> None:
        self.current = (item[0], item[1])
        self.started = time.monotonic()
        self.conn.send(item)

    def kill(self) -> int | None:
        if self.proc.is_alive():
            self.proc.kill()
        self.proc.join(5)
        self.conn.close()
        return self.proc.exitcode

    def stop(self) -> None:
        try:
            self.conn.send(None)
        except OSError:
            pass
        self.proc.join(2)
        if self.proc.is_alive():
            self.proc.kill()
            self.proc.join(2)
        self.conn.close()


POLL = 0.5  # seconds between looks at the interrupt flag while the workers work


def lint_parallel(spec: LinterSpec, work: list[Work], jobs: int, timeout: float | None,
                  ctx=None, linter: Linter | None = None) -> dict[int, FileResult]:
    """Lint ``work`` ((index, display path, bytes or Queued) items) on ``jobs`` worker processes.
    Each worker holds its file to ``timeout`` CPU seconds itself; this process ends a worker
    only at the wall-clock cap (cpu_limit.wall_cap) or when it has died."""
    ctx = ctx or _context()
    # Largest first, so a big file does not start last and leave one CPU busy
    # after the others are done.
    queue = deque(sorted(work, key=lambda w: -_size(w[2])))
    results: dict[int, FileResult] = {}
    if linter is not None and ctx.get_start_method() == "fork" and len(queue) > 1:
        # The first file a process lints fills lazily built tables (LibCST's
        # and the walker's per-type caches, rule facts); linting a small
        # built-in module here first lets every forked worker inherit them
        # instead of each building its own. Never a file of the tree: this
        # process must survive whatever the tree holds.
        warm_up(linter)
    workers: list[_Worker] = []
    wall = wall_cap(timeout) if timeout else None
    # Ctrl-C's KeyboardInterrupt is raised wherever this process is, a finalizer of a
    # garbage collection included, where the interpreter swallows it ("Exception
    # ignored") and the run went on waiting for its workers: it is also kept as a flag,
    # which the wait below looks at every POLL seconds.
    interrupted: list[bool] = []
    previous = None
    if threading.current_thread() is threading.main_thread():
        def on_int(signum, frame):
            interrupted.append(True)
            raise KeyboardInterrupt

        previous = signal.signal(signal.SIGINT, on_int)
    try:
        for _ in range(min(jobs, len(queue))):
            w = _Worker(ctx, spec, timeout)
            workers.append(w)
            w.give(queue.popleft())
        while True:
            busy = [w for w in workers if w.current is not None]
            if not busy:
                break
            wait_for = POLL
            if wall:
                wait_for = min(POLL, max(0.0, min(w.started for w in busy) + wall - time.monotonic()))
            ready = wait([w.conn for w in busy], wait_for)
            if interrupted:
                raise KeyboardInterrupt
            for w in busy:
                if w.conn in ready:
                    try:
                        i, res = w.conn.recv()
                    except (EOFError, OSError):  # the worker died mid-file
                        assert w.current is not None  # w is busy
                        i, display = w.current
                        code = w.kill()
                        if timeout and killed_by_cpu_limit(code):  # RLIMIT_CPU, in native code
                            results[i] = timeout_result(display, timeout)
                        else:
                            results[i] = _crashed(display, code, memory_limit(spec.max_bytes), w.peak.value)
                        w = _replace(workers, w, ctx, spec, timeout)
                    else:
                        results[i] = res
                elif wall and time.monotonic() - w.started >= wall:
                    assert w.current is not None and timeout  # w is busy; wall is set only with a limit
                    i, display = w.current
                    w.kill()
                    results[i] = timeout_result(display, timeout, wall=True)
                    w = _replace(workers, w, ctx, spec, timeout)
                else:
                    continue
                w.current = None
                if queue:
                    w.give(queue.popleft())
    except BaseException:  # Ctrl-C, SIGTERM: stop the workers now, mid-file or not
        for w in workers:
            w.kill()
        workers = []
        raise
    finally:
        for w in workers:
            w.stop()
        if previous is not None:
            signal.signal(signal.SIGINT, previous)
    return results


WARM_UP = b"""import torch
from flash_attn import flash_attn_func


class Attention(torch.nn.Module):
    def __init__(self, dim: int = 128) -> None:
        super().__init__()
        self.proj = torch.nn.Linear(dim, dim)

    def forward(self, q, k, v, *, causal=True):
        if torch.cuda.get_device_capability()[0] >= 9:
            return flash_attn_func(q, k, v, causal=causal)
        return torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=causal)
"""


def warm_up(linter: Linter) -> None:
    try:
        linter.lint_bytes(WARM_UP, "<warm-up>.py")
    except Exception:  # only a speed-up: never a reason to fail the run
        pass


def _replace(workers: list[_Worker], old: _Worker, ctx, spec: LinterSpec, timeout: float | None = None) -> _Worker:
    new = _Worker(ctx, spec, timeout)
    workers[workers.index(old)] = new
    return new


def _crashed(display: str, exitcode: int | None, limit: int | None = None, peak: int = 0) -> FileResult:
    if limit is not None and exitcode is not None and -exitcode in (signal.SIGSEGV, signal.SIGBUS) \
            and peak >= 0.9 * limit:
        # Under RLIMIT_AS the stack cannot grow once the address space is spent: the worker
        # dies by SIGSEGV instead of raising MemoryError (TransformerEngine's 142 KB
        # dot_product_attention/utils.py needs 4.3 GB here and did so at the 3 GiB limit);
        # a crash well below the limit stays AIC000.
        return limit_result(display, f"analysis reached the {limit / 2**30:g} GiB memory limit per file (the "
                                     f"worker died with SIGSEGV at {peak / 2**30:.1f} GiB; --max-file-size "
                                     f"raises the limit)")
    how = f"signal {-exitcode}" if exitcode is not None and exitcode < 0 else f"exit code {exitcode}"
    res = FileResult(display)
    res.diagnostics.append(internal_error(display, 1, 1, f"the worker process checking this file died ({how})"))
    return res
