"""Exact mode (``--cuda-verify``): compile CUDA device code with the local nvcc.

Opt-in only, and only by whoever runs aicompat (the command line or the
environment, never the checked tree's config): the analyzer otherwise never runs
a compiler. Each compile is ``nvcc -ptx -lineinfo -arch=compute_XY`` of one sealed
unit (cuda/exact/sealed.py: the source with its in-tree headers inlined, nothing in it
that opens a file outside the tree) written to a private temporary folder, then
``ptxas -arch=sm_XY`` of that PTX: device passes only, no host compiler pass,
nothing linked or run. nvcc gets no include folder of the tree, a minimal
environment (PATH, TMPDIR/HOME in the private folder, C locale), no shell of
ours, a time limit, and, where the kernel has Landlock, a file-system sandbox
(cuda/exact/sandbox.py). The checked code's build flags reach nvcc only as
``-D``/``-U`` of plain tokens and a fixed set of device options; any other
definition is written into the unit, never onto a command line (nvcc runs its
host preprocessor through /bin/sh with each ``-D`` in double quotes). A ptxas
error is mapped back to the CUDA line through the PTX's ``.loc`` directives
(-lineinfo); a front-end error names its line itself. What the compilers print is
reported only in the forms of cuda/exact/compiler_text.py, never as free text.

Results are cached in aicompat's cache folder under ``cuda-verify/``, keyed by
the unit, the target, the flags and the nvcc version; nothing is written
anywhere else, and nothing there through a link. At most ``SLOTS`` nvcc
processes run at once (across worker processes too, through lock files in the
cache folder, when there is one) and at most ``max_compiles`` per run.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import re
import shutil
import stat
import subprocess
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass
from pathlib import Path

from ...fs.cachefs import ensure_root, machine_secret, real_dirs, replace_file
from ...fs.confine import read_regular
from . import compiler_text, sandbox
from .torch_headers import torch_include_dirs

FORMAT = 2  # bump when an entry's layout or meaning changes
SLOTS = 2  # nvcc processes at once: compiles are CPU-heavy and the machine is shared
MAX_COMPILES = 256  # per run (per process with worker processes)
COMPILES = 0  # nvcc invocations made by this process (tests count cache hits with it)

_VERSION = re.compile(r"release (\d+\.\d+), (V[\w.]+)")
_FRONT = re.compile(r"^(?P<file>.*?)\((?P<line>\d+)\): (?P<kind>error|catastrophic error)\s*:?\s*(?P<msg>.*)$")
_CPP = re.compile(r"^(?P<file>[^:]*):(?P<line>\d+):\d+: (?:fatal )?error: (?P<msg>.*)$")  # the host preprocessor
_PTXAS = re.compile(r"^ptxas\s+(?P<file>.*?), line (?P<line>\d+); (?P<kind>error)\s*:\s*(?P<msg>.*)$")
_LOC = re.compile(r"^\s*\.loc\s+(\d+)\s+(\d+)\s+\d+")
_FILE = re.compile(r'^\s*\.file\s+(\d+)\s+"([^"]*)"')
_ENTRY = re.compile(r"\.entry\s+\S+\s*\([^)]*\)[^{]*\{(.*?)\n\}", re.S)
_UNSUPPORTED = re.compile(r"nvcc fatal\s*:\s*Unsupported gpu architecture '((?:sm|compute)_\w{1,8})'")
_EXTERN = re.compile(r"Unresolved extern function '([^']+)'")
# Build flags that change what device code nvcc generates and are safe to pass on, each
# with a value of plain characters; anything else (host compiler options, output paths,
# -Xcompiler, --run) is dropped.
_KEEP_FLAG = re.compile(r"^(-std=(?:c|gnu)\+\+\d\d|--std=(?:c|gnu)\+\+\d\d|--expt-relaxed-constexpr|"
                        r"--expt-extended-lambda|--extended-lambda|--use_fast_math|-use_fast_math|"
                        r"-?-(?:ftz|prec-div|prec-sqrt|fmad)=(?:true|false)|-O[0-3]|--restrict|-?-maxrregcount=\d{1,4})$")
# A -D/-U that may go on nvcc's command line: nvcc hands it to /bin/sh inside double quotes,
# so only characters no shell treats specially inside them.
_PLAIN_DEFINE = re.compile(r"-D[A-Za-z_]\w{0,200}(?:=[A-Za-z0-9_.+-]{0,200})?")
_PLAIN_UNDEF = re.compile(r"-U[A-Za-z_]\w{0,200}")
# Any other -D with a macro name (also function-like) and a one-line value: written into the unit.
_OTHER_DEFINE = re.compile(r"-D([A-Za-z_]\w{0,200}(?:\([A-Za-z_0-9, .]{0,200}\))?)(?:=(.{0,4000}))?", re.S)
DROPPED = "--aicompat-dropped-define"  # stands for a -D/-U that cannot be passed safely (never given to nvcc)
# Neither a shell nor the preprocessor may see these in a definition written into the unit.
_UNSAFE_VALUE = re.compile(r"[\n\r\0]|\\$")


def split_defines(flags) -> tuple[tuple[str, ...], tuple[tuple[str, str | None], ...]]:
    """(flags for nvcc's command line, (name, value) definitions to write into the unit)."""
    line: list[str] = []
    unit: list[tuple[str, str | None]] = []
    for f in flags:
        if f.startswith("-D") and not _PLAIN_DEFINE.fullmatch(f):
            m = _OTHER_DEFINE.fullmatch(f)
            if m:
                unit.append((m.group(1), m.group(2)))
                continue
        line.append(f)
    return tuple(line), tuple(unit)


@dataclass(frozen=True)
class Toolkit:
    nvcc: str  # absolute path
    ptxas: str
    release: str  # "13.0"
    ident: str  # "13.0, V13.0.88": part of every cache key
    path: str  # PATH for nvcc: its own folder and the host compiler's
    dirs: tuple[str, ...] = ()  # the toolkit's folders, as nvcc -dryrun names them (the sandbox reads them)
    compilers: tuple[str, ...] = ()  # the host compilers nvcc may start


@dataclass(frozen=True)
class Options:
    """What exact mode needs, carried on the ResolvedTarget (``target.verify``)."""

    toolkit: Toolkit | None  # None: nvcc was not found (the static verdicts stand)
    timeout: float = 60.0  # seconds per compile
    max_compiles: int = MAX_COMPILES
    cache_dir: str | None = None  # aicompat's cache folder; None: results kept in memory only
    missing: str = ""  # why there is no toolkit

    def fingerprint(self) -> dict:
        """What a cached per-file result depends on (not where the cache lives)."""
        return {"nvcc": self.toolkit.ident if self.toolkit else None, "max_compiles": self.max_compiles}


def probe(path_env: str | None = None, timeout: float = 30.0) -> tuple[Toolkit | None, str]:
    """The nvcc on PATH and its version, or (None, why)."""
    path_env = os.environ.get("PATH", "") if path_env is None else path_env
    nvcc = shutil.which("nvcc", path=path_env)
    if nvcc is None:
        return None, "nvcc not found on PATH"
    nvcc = os.path.abspath(nvcc)
    ptxas = shutil.which("ptxas", path=os.path.dirname(nvcc)) or shutil.which("ptxas", path=path_env)
    if ptxas is None:
        return None, f"no ptxas next to {nvcc}"
    dirs = [os.path.dirname(nvcc)]
    for cc in ("gcc", "g++", "cc", "c++"):  # nvcc preprocesses with the host compiler
        found = shutil.which(cc, path=path_env)
        if found and os.path.dirname(found) not in dirs:
            dirs.append(os.path.dirname(found))
    for d in ("/usr/bin", "/bin"):
        if d not in dirs:
            dirs.append(d)
    path = os.pathsep.join(dirs)
    compilers = tuple(c for c in (shutil.which(cc, path=path_env) for cc in ("gcc", "g++", "cc", "c++")) if c)
    try:
        with tempfile.TemporaryDirectory(prefix="aicompat-nvcc-") as tmp:
            p = subprocess.run([nvcc, "--version"], capture_output=True, text=True, timeout=timeout,
                               env=_env(path, tmp), cwd=tmp, check=False)
            # Where the toolkit really is (nvcc on PATH may be a wrapper script): the sandbox lets
            # the compilers read it. -dryrun runs nothing.
            Path(tmp, "probe.cu").write_text("")
            d = subprocess.run([nvcc, "-dryrun", "-ptx", "-arch=compute_75", "probe.cu"], capture_output=True,
                               text=True, timeout=timeout, env=_env(path, tmp), cwd=tmp, check=False)
    except (OSError, subprocess.SubprocessError) as exc:
        return None, f"{nvcc} --version failed: {exc}"
    m = _VERSION.search(p.stdout)
    if p.returncode != 0 or not m:
        return None, f"{nvcc} --version printed no CUDA release"
    return Toolkit(nvcc, os.path.abspath(ptxas), m.group(1), f"{m.group(1)}, {m.group(2)}", path,
                   tuple(sandbox.dryrun_dirs(d.stdout + d.stderr)), compilers), ""


def _env(path: str, tmp: str) -> dict[str, str]:
    return {"PATH": path, "TMPDIR": tmp, "HOME": tmp, "LC_ALL": "C"}


def device_flags(flags: list[str]) -> tuple[str, ...]:
    """The flags from a build that shape device code and are safe to pass on: the device
    options of _KEEP_FLAG, every -U of a plain name and every -D of a macro name whose value
    is one line (split_defines says which go on the command line and which into the unit).
    A -D/-U that is neither is ``DROPPED``: that source cannot be compiled as the build
    compiles it, so it is not compiled at all."""
    out: list[str] = []
    it = iter(flags)
    for f in it:
        if not isinstance(f, str):
            continue
        if f in ("-D", "-U", "-std", "--std", "-maxrregcount", "--maxrregcount"):  # the value as the next item
            nxt = next(it, None)
            if nxt is None or not isinstance(nxt, str):
                continue
            f = f"{f}{nxt}" if f in ("-D", "-U") else f"{f}={nxt}"
        if f.startswith("-D"):
            m = _OTHER_DEFINE.fullmatch(f)
            ok = m is not None and not _UNSAFE_VALUE.search(m.group(2) or "")
            out.append(f if ok else DROPPED)
        elif f.startswith("-U"):
            out.append(f if _PLAIN_UNDEF.fullmatch(f) else DROPPED)
        elif _KEEP_FLAG.match(f):
            out.append(f)
    return tuple(out)


@dataclass
class Outcome:
    """One compile of one source for one target.

    status: ok | fail (ptxas, or the front end) | empty (every kernel body is only
    ``ret;``) | unverified (could not be compiled for a reason that is not the
    target: a missing header, nvcc too old, a time limit, the compile budget)."""

    status: str
    line: int | None = None  # CUDA line of the first error
    error: str = ""  # the first error, file names and line numbers stripped
    stage: str = ""  # "ptxas" | "front end" | "" (ok/empty) | why it is unverified
    token: str = ""  # the instruction the error names, when it names one

    @property
    def front_end(self) -> bool:
        return self.status == "fail" and self.stage == "front end"


@dataclass
class Job:
    text: str  # the sealed unit (cuda/exact/sealed.py): all nvcc reads of the tree
    target: str  # sm_90a
    flags: tuple[str, ...] = ()  # for nvcc's command line: plain -D/-U and device options only
    include_dirs: tuple[str, ...] = ()  # aicompat's own environment's headers (torch's), never the tree's
    refused: str = ""  # why the source is not compiled at all (sealed.py, a dropped -D)

    def key(self, toolkit: Toolkit) -> str:
        h = hashlib.blake2b(digest_size=20)
        doc = [FORMAT, self.target, list(self.flags), list(self.include_dirs), toolkit.ident]
        h.update(json.dumps(doc).encode())
        h.update(b"\0")
        h.update(self.text.encode("utf-8", "surrogateescape"))
        return h.hexdigest()


class Verifier:
    """Compiles jobs for one run, at most ``SLOTS`` at once, through the cache."""

    def __init__(self, options: Options, notes: list[str]) -> None:
        self.options = options
        self.toolkit = options.toolkit
        self.notes = notes  # run-level notes (the rule hands them to the linter)
        self.compiles = 0
        self.memo: dict[str, Outcome] = {}
        self._procs: set[subprocess.Popen] = set()
        self._lock = threading.Lock()
        self._slots = threading.BoundedSemaphore(SLOTS)
        self.dir = Path(options.cache_dir) / "cuda-verify" if options.cache_dir else None
        self.vocabulary: frozenset[str] = frozenset()  # ptxas's words (compiler_text.ptx_vocabulary)
        self.sandbox: sandbox.Sandbox | None = None
        self._tmp: tempfile.TemporaryDirectory | None = None
        self._prepared = False

    def _prepare(self, matrix) -> None:
        """Before the first compile: ptxas's vocabulary and the sandbox (once per run)."""
        if self._prepared:
            return
        self._prepared = True
        self.vocabulary = compiler_text.ptx_vocabulary(matrix)
        tk = self.toolkit
        read = sandbox.toolchain_paths([tk.nvcc, tk.ptxas, *tk.compilers], list(tk.dirs), torch_include_dirs())
        # Every compile's folder lies in one private folder of this run: the only place the
        # compilers may write (the rest of /tmp holds other users' and the checked tree's files).
        self._tmp = tempfile.TemporaryDirectory(prefix="aicompat-nvcc-")
        self.sandbox, why = sandbox.build(read, [self._tmp.name, "/dev/null"])
        if self.sandbox is None:
            self.notes.append(f"--cuda-verify: nvcc runs without a file-system sandbox ({why}): each unit is still "
                              "sealed (no include outside the tree), but a toolkit macro could still test "
                              "whether a file exists")

    def unsupported(self, target: str, matrix) -> bool:
        """nvcc is older than the first toolkit that builds ``target`` (version_matrix gpus.toml)."""
        need = matrix.targets.get(target, {}).get("toolkit")
        if self.toolkit is None or need is None:
            return self.toolkit is None
        return _vtuple(self.toolkit.release) < _vtuple(need)

    def run(self, jobs: list[Job], matrix) -> list[Outcome]:
        """The outcome of each job, compiling those neither cached nor seen."""
        out: list[Outcome | None] = [None] * len(jobs)
        todo: dict[str, list[int]] = {}
        for i, job in enumerate(jobs):
            if self.toolkit is None:
                out[i] = Outcome("unverified", stage="nvcc missing")
                continue
            if job.refused:
                out[i] = Outcome("unverified", error=job.refused, stage="could not verify")
                continue
            if self.unsupported(job.target, matrix):
                self.notes.append(f"--cuda-verify: nvcc {self.toolkit.release} is too old to build {job.target} "
                                  f"(needs CUDA {matrix.targets[job.target]['toolkit']}): verdicts for "
                                  f"{job.target} are the static ones")
                out[i] = Outcome("unverified", stage="nvcc too old")
                continue
            key = job.key(self.toolkit)
            got = self.memo.get(key) or self._get(key)
            if got is not None:
                self.memo[key] = got
                out[i] = got
            else:
                todo.setdefault(key, []).append(i)
        if todo:
            self._prepare(matrix)
            keys = list(todo)
            budget = max(0, self.options.max_compiles - self.compiles)
            if len(keys) > budget:
                self.notes.append(f"--cuda-verify: the budget of {self.options.max_compiles} compiles per run is "
                                  "spent: the remaining CUDA sources keep their static verdicts")
                for key in keys[budget:]:
                    for i in todo[key]:
                        out[i] = Outcome("unverified", stage="compile budget spent")
                keys = keys[:budget]
            self.compiles += len(keys)
            results = self._compile_all([jobs[todo[k][0]] for k in keys])
            for key, res in zip(keys, results):
                if res.status == "unverified" and res.stage == "nvcc too old":
                    self.notes.append(f"--cuda-verify: nvcc {self.toolkit.release} does not know "
                                      f"{jobs[todo[key][0]].target}: {res.error}; the static verdict stands")
                self.memo[key] = res
                if res.stage != "time limit":
                    self._put(key, res)
                for i in todo[key]:
                    out[i] = res
        return out  # type: ignore[return-value]

    # -- compiling ---------------------------------------------------------------
    def _compile_all(self, jobs: list[Job]) -> list[Outcome]:
        if len(jobs) == 1:
            return [self._compile(jobs[0])]
        pool = ThreadPoolExecutor(max_workers=SLOTS)
        futures = []
        try:
            futures = [pool.submit(self._compile, j) for j in jobs]
            return [f.result() for f in futures]
        except BaseException:
            # A per-file time limit (SIGALRM) or ^C lands here: stop the compilers now.
            for f in futures:
                f.cancel()
            self._kill_all()
            raise
        finally:
            pool.shutdown(wait=True)

    def close(self) -> None:
        """The end of the run: no compiler outlives it, its private folder is removed."""
        self._kill_all()
        if self._tmp is not None:
            self._tmp.cleanup()
            self._tmp = None
        self._prepared = False

    def _kill_all(self) -> None:
        with self._lock:
            for p in list(self._procs):
                try:
                    p.kill()
                except OSError:
                    pass

    def _compile(self, job: Job) -> Outcome:
        with self._slots, _GlobalSlot(self.dir):
            with tempfile.TemporaryDirectory(prefix="unit-", dir=self._tmp.name if self._tmp else None) as tmp:
                return self._compile_in(job, tmp)

    def _exec(self, cmd: list[str], tmp: str) -> tuple[int | None, str]:
        global COMPILES
        COMPILES += 1
        try:
            p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                 env=_env(self.toolkit.path, tmp), cwd=tmp, text=True, errors="replace",
                                 preexec_fn=self.sandbox.preexec if self.sandbox is not None else None)
        except (OSError, subprocess.SubprocessError) as exc:
            return -1, f"cannot start {os.path.basename(cmd[0])}: {type(exc).__name__}"
        with self._lock:
            self._procs.add(p)
        try:
            out, _ = p.communicate(timeout=self.options.timeout)
            return p.returncode, out
        except subprocess.TimeoutExpired:
            p.kill()
            p.communicate()
            return None, ""
        finally:
            if p.poll() is None:
                p.kill()
                p.wait()
            with self._lock:
                self._procs.discard(p)

    def _compile_in(self, job: Job, tmp: str) -> Outcome:
        num = job.target[len("sm_"):]
        src, ptx, cubin = (os.path.join(tmp, n) for n in ("source.cu", "source.ptx", "source.cubin"))
        with open(src, "w", encoding="utf-8", errors="surrogateescape") as fh:
            fh.write(job.text)
        inc = [f"-I{d}" for d in job.include_dirs]
        rc, text = self._exec([self.toolkit.nvcc, "-ptx", "-lineinfo", f"-arch=compute_{num}", *job.flags, *inc,
                               "-o", ptx, src], tmp)
        if rc is None:
            return Outcome("unverified", error=f"nvcc took longer than {self.options.timeout:g} s",
                           stage="time limit")
        if rc != 0:
            m = _UNSUPPORTED.search(text)
            if m:
                return Outcome("unverified", error=f"Unsupported gpu architecture '{m.group(1)}'",
                               stage="nvcc too old")
            allowed = compiler_text.unit_words(job.text) | self.vocabulary
            if rc == -1 and text.startswith("cannot start"):
                return Outcome("unverified", error=text, stage="could not verify")
            if any(_PTXAS.match(ln.strip()) for ln in text.splitlines()) and os.path.exists(ptx):
                # nvcc -ptx checks its PTX with ptxas for compute_XY: a ptxas error already.
                return _ptxas_error(text, Path(ptx).read_text(encoding="utf-8", errors="replace"), allowed)
            line, err = _front_error(text, allowed)
            return Outcome("fail", line, err, "front end")
        try:
            ptx_text = Path(ptx).read_text(encoding="utf-8", errors="replace")
        except OSError:
            return Outcome("unverified", error="nvcc wrote no PTX", stage="no PTX")
        rc, text = self._exec([self.toolkit.ptxas, f"-arch=sm_{num}", "-o", cubin, ptx], tmp)
        if rc is None:
            return Outcome("unverified", error=f"ptxas took longer than {self.options.timeout:g} s",
                           stage="time limit")
        if rc != 0:
            return _ptxas_error(text, ptx_text, compiler_text.unit_words(job.text) | self.vocabulary)
        return Outcome("empty" if empty_kernel(ptx_text) else "ok")

    # -- the cache ---------------------------------------------------------------
    def _name(self, key: str) -> str:
        """An entry's file name: the key under this user's cache secret (cachefs.machine_secret),
        so a compile result committed with the repository or written by another user is never
        found (issue 16: the cache is untrusted input)."""
        return hmac.new(machine_secret(), key.encode(), hashlib.sha256).hexdigest()

    def _get(self, key: str) -> Outcome | None:
        if self.dir is None:
            return None
        name = self._name(key)
        folder = real_dirs(self.dir.parent, [self.dir.name, name[:2]], create=False)
        raw = read_regular(folder / f"{name}.json", 1_000_000) if folder is not None else None
        if raw is None:
            return None
        try:
            doc = json.loads(raw)
            if doc.get("key") != key:
                raise ValueError("another entry")
            res = Outcome(**doc["outcome"])
            if res.status not in ("ok", "fail", "empty", "unverified") or not isinstance(res.error, str):
                raise ValueError("bad entry")
        except (ValueError, KeyError, TypeError, AttributeError):
            return None
        return res

    def _put(self, key: str, res: Outcome) -> None:
        if self.dir is None:
            return
        name = self._name(key)
        try:
            ensure_root(self.dir.parent)
            folder = real_dirs(self.dir.parent, [self.dir.name, name[:2]], create=True)
            if folder is not None:  # never through a link
                replace_file(folder, f"{name}.json", json.dumps({"key": key, "outcome": asdict(res)}).encode())
        except OSError:
            pass  # a read-only cache makes exact mode slower, not wrong


class _GlobalSlot:
    """One of ``SLOTS`` lock files in the cache folder, so that worker processes of one
    run (and concurrent runs) together start at most ``SLOTS`` nvcc processes. The cache
    may be committed with the checked tree: its folders are used only when they are real
    folders (cachefs.real_dirs) and a lock file is opened only when it is a regular file,
    never through a link (O_NOFOLLOW), so a link there cannot make aicompat create or
    touch anything elsewhere."""

    def __init__(self, folder: Path | None) -> None:
        self.folder = folder
        self.fh = None

    def __enter__(self):
        if self.folder is None:
            return self
        try:
            import fcntl
        except ImportError:  # not POSIX: the per-process limit alone
            return self
        handles = []
        try:
            ensure_root(self.folder.parent)
            folder = real_dirs(self.folder.parent, [self.folder.name], create=True)
            if folder is None:
                return self
            flags = os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0) | \
                getattr(os, "O_NONBLOCK", 0)
            for i in range(SLOTS):
                fd = os.open(folder / f"slot{i}.lock", flags, 0o600)
                handles.append(os.fdopen(fd, "rb"))
                if not stat.S_ISREG(os.fstat(fd).st_mode):
                    raise OSError("not a regular file")
        except OSError:
            for h in handles:
                h.close()
            return self
        while self.fh is None:
            for h in handles:
                try:
                    fcntl.flock(h, fcntl.LOCK_EX | fcntl.LOCK_NB)
                except OSError:
                    continue
                self.fh = h
                break
            else:
                time.sleep(0.05)
        for h in handles:
            if h is not self.fh:
                h.close()
        return self

    def __exit__(self, *exc) -> None:
        if self.fh is not None:
            self.fh.close()  # closing releases the lock


def _vtuple(v: str) -> tuple[int, ...]:
    return tuple(int(x) for x in re.findall(r"\d+", v))


def _front_error(text: str, allowed) -> tuple[int | None, str]:
    """The line (in the source, when the error is there) and the first error, in the forms
    of compiler_text: the compiler's own words are never passed on."""
    for ln in text.splitlines():
        m = _FRONT.match(ln.strip()) or _CPP.match(ln.strip())
        if m and m.group("file").endswith("source.cu"):
            return int(m.group("line")), compiler_text.front_error(m.group("msg"), allowed)
    for ln in text.splitlines():
        m = _FRONT.match(ln.strip()) or _CPP.match(ln.strip())
        if m:  # in a header: the line of the source is not known
            return None, compiler_text.front_error(m.group("msg"), allowed)
    return None, compiler_text.FRONT_REJECTED


def _ptxas_error(text: str, ptx: str, allowed) -> Outcome:
    lines = ptx.splitlines()
    for ln in text.splitlines():
        m = _PTXAS.match(ln.strip())
        if m:
            msg = compiler_text.ptxas_error(m.group("msg"), allowed)
            return Outcome("fail", cuda_line(lines, int(m.group("line"))), msg, "ptxas", _named(msg))
    for ln in text.splitlines():
        if ln.startswith("ptxas fatal") and "aborted due to errors" not in ln:
            msg = compiler_text.ptxas_fatal(ln.split(":", 1)[1].strip(), allowed)
            line = None
            m = _EXTERN.search(msg)
            if m:  # the call to the missing function is where the source asked for it
                at = next((i for i, l in enumerate(lines, 1) if m.group(1) in l and ".extern" not in l), None)
                line = cuda_line(lines, at) if at else None
            return Outcome("fail", line, msg, "ptxas")
    return Outcome("fail", None, compiler_text.PTXAS_REJECTED, "ptxas")


def _named(msg: str) -> str:
    m = re.search(r"(?:Instruction|Feature|Modifier) '([^']+)'", msg)
    return m.group(1).lstrip(".") if m else ""


def cuda_line(ptx_lines: list[str], ptx_line: int) -> int | None:
    """The CUDA line of PTX line ``ptx_line``: the last ``.loc`` of the source file above it."""
    source_ids = {m.group(1) for m in map(_FILE.match, ptx_lines) if m and m.group(2).endswith("source.cu")}
    for i in range(min(ptx_line, len(ptx_lines)) - 1, -1, -1):
        m = _LOC.match(ptx_lines[i])
        if m and m.group(1) in source_ids:
            return int(m.group(2))
    return None


def empty_kernel(ptx: str) -> bool:
    """Every ``.entry`` body holds no instruction but ``ret;``: a guard compiled the kernel's
    work out (the corpus's 'empty' verdict, fixtures/kernels/README.md)."""
    bodies = _ENTRY.findall(ptx)
    if not bodies:
        return False
    for body in bodies:
        for line in body.splitlines():
            line = line.split("//", 1)[0].strip()
            if not line or line.startswith(".") or line.endswith(":") or line in ("ret;", "{", "}"):
                continue
            return False
    return True


def settle(outcomes: dict[str, Outcome]) -> dict[str, Outcome]:
    """A front-end error is the target's only where the same source passes the front end
    for another target (an arch guard, a type declared only from sm_80); where it fails
    everywhere it is a missing header or code nvcc rejects anyway: not verified."""
    passed = any(not o.front_end and o.status != "unverified" for o in outcomes.values())
    if passed:
        return outcomes
    return {t: (Outcome("unverified", o.line, o.error, "could not verify") if o.front_end else o)
            for t, o in outcomes.items()}
