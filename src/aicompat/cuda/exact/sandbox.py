"""A file-system sandbox for the compilers exact mode starts (Linux Landlock).

Exact mode hands nvcc a unit whose includes aicompat resolved itself (cuda/exact/sealed.py),
but the host preprocessor nvcc runs can still be steered to open a file: a
``_Pragma`` built by token pasting in a toolkit macro (``#pragma GCC dependency``
opens the file it names), a toolkit ``#include MACRO`` whose operand the unit
redefines. So where the kernel offers Landlock (Linux 5.13+), nvcc, ptxas and
everything they start may only read and execute the toolkit, the host compiler
and the system's headers and libraries, and write only their private temporary
folder; the checked tree, the home folder, ``/etc`` and ``/proc`` are not
readable, and (Landlock ABI 4+) no TCP connection can be made. An open that the
sandbox refuses fails whether or not the file exists, so it is no existence
oracle either.

The ruleset is built in the parent; the child only calls prctl and
landlock_restrict_self before it execs (``preexec``). Where Landlock is missing
(another OS, an old kernel, a seccomp filter that refuses it) compiles run
without it and the run says so once.
"""

from __future__ import annotations

import ctypes
import os
import re
import sys
from dataclasses import dataclass
from pathlib import Path

_CREATE, _ADD_RULE, _RESTRICT = 444, 445, 446  # the same on every Linux architecture
_PATH_BENEATH = 1
_VERSION = 1  # LANDLOCK_CREATE_RULESET_VERSION
_PR_SET_NO_NEW_PRIVS = 38

EXECUTE, WRITE_FILE, READ_FILE, READ_DIR = 1 << 0, 1 << 1, 1 << 2, 1 << 3
REFER, TRUNCATE, IOCTL_DEV = 1 << 13, 1 << 14, 1 << 15
_FILE_RIGHTS = EXECUTE | WRITE_FILE | READ_FILE | TRUNCATE | IOCTL_DEV  # the rights a rule on a file may grant
READ = EXECUTE | READ_FILE | READ_DIR
_NET_TCP = 1 | 2  # bind, connect (ABI 4)

# Besides the toolkit and the host compiler: what a C++ preprocessor, the dynamic loader
# and nvcc's driver read on a Debian/Ubuntu/Fedora system (seen with strace on nvcc 13.0).
SYSTEM_READ = ("/usr/include", "/usr/lib", "/usr/lib64", "/usr/lib32", "/usr/libexec", "/usr/bin", "/bin", "/lib",
               "/lib64", "/lib32", "/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d", "/etc/alternatives",
               "/etc/localtime", "/dev/urandom")


def _all_fs(abi: int) -> int:
    rights = (1 << 13) - 1
    if abi >= 2:
        rights |= REFER
    if abi >= 3:
        rights |= TRUNCATE
    if abi >= 5:
        rights |= IOCTL_DEV
    return rights


class _PathBeneath(ctypes.Structure):
    _pack_ = 1
    _fields_ = [("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]


class _RulesetAttr(ctypes.Structure):
    _fields_ = [("handled_access_fs", ctypes.c_uint64), ("handled_access_net", ctypes.c_uint64)]


def _libc():
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.syscall.restype = ctypes.c_long
        return libc
    except (OSError, AttributeError):
        return None


def abi() -> int:
    """The Landlock ABI version this kernel offers, 0 where there is none."""
    if not sys.platform.startswith("linux"):
        return 0
    libc = _libc()
    if libc is None:
        return 0
    n = libc.syscall(_CREATE, None, ctypes.c_size_t(0), ctypes.c_uint32(_VERSION))
    return int(n) if n > 0 else 0


@dataclass
class Sandbox:
    """A Landlock ruleset (its file descriptor, kept open for the run) and the call that applies it."""

    fd: int
    abi: int

    def preexec(self) -> None:
        """Runs in the child between fork and exec: only two system calls, nothing that allocates
        much or takes a lock another thread may hold."""
        libc = _LIBC
        if libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
            raise OSError(ctypes.get_errno(), "prctl(PR_SET_NO_NEW_PRIVS) failed")
        if libc.syscall(_RESTRICT, ctypes.c_int(self.fd), ctypes.c_uint32(0)) != 0:
            raise OSError(ctypes.get_errno(), "landlock_restrict_self failed")


_LIBC = None


def build(read: list[str], write: list[str]) -> tuple[Sandbox | None, str]:
    """A sandbox in which ``read`` (folders or files) may be read and executed and ``write``
    (folders) used freely; (None, why) where Landlock cannot be used."""
    global _LIBC
    version = abi()
    if version <= 0:
        return None, "this system has no Landlock (Linux 5.13+)"
    libc = _LIBC = _libc()
    all_fs = _all_fs(version)
    attr = _RulesetAttr(all_fs, _NET_TCP if version >= 4 else 0)
    size = ctypes.sizeof(_RulesetAttr) if version >= 4 else 8
    fd = libc.syscall(_CREATE, ctypes.byref(attr), ctypes.c_size_t(size), ctypes.c_uint32(0))
    if fd < 0:
        return None, f"Landlock refused a ruleset ({os.strerror(ctypes.get_errno())})"
    fd = int(fd)
    for paths, rights in ((read, READ), (write, all_fs)):
        for p in paths:
            try:
                pfd = os.open(p, os.O_PATH | os.O_CLOEXEC)
            except OSError:
                continue  # absent here: nothing to allow
            try:
                is_dir = os.path.isdir(f"/proc/self/fd/{pfd}") if os.path.exists("/proc/self/fd") else Path(p).is_dir()
                rule = _PathBeneath(rights if is_dir else rights & _FILE_RIGHTS & all_fs, pfd)
                if libc.syscall(_ADD_RULE, ctypes.c_int(fd), ctypes.c_int(_PATH_BENEATH), ctypes.byref(rule),
                                ctypes.c_uint32(0)) != 0:
                    os.close(fd)
                    return None, f"Landlock refused a rule for {p} ({os.strerror(ctypes.get_errno())})"
            finally:
                os.close(pfd)
    return Sandbox(fd, version), ""


def toolchain_paths(programs: list[str], toolkit_dirs: list[str], extra: tuple[str, ...] = ()) -> list[str]:
    """What the compilers may read: ``programs`` themselves (nvcc, ptxas: a wrapper script on PATH
    is allowed as a file), ``toolkit_dirs`` (where nvcc's driver says its toolkit and headers are,
    ``nvcc -dryrun``), each program's install prefix (its bin's parent; only its bin/lib/libexec/
    include where that prefix is a system folder such as /usr), the system's headers and libraries,
    and ``extra`` (torch's headers, for load_inline sources)."""
    out: list[str] = list(SYSTEM_READ)
    for exe in programs:
        try:
            real = os.path.realpath(exe)
        except (OSError, ValueError):
            continue
        out += [exe, real]
        prefix = os.path.dirname(os.path.dirname(real))
        if prefix in ("/", "/usr", "/usr/local", ""):
            base = prefix if prefix != "/" else ""
            out += [f"{base}/{d}" for d in ("bin", "lib", "lib64", "libexec", "include")]
        else:
            out.append(prefix)
    for d in toolkit_dirs:
        try:
            out.append(os.path.realpath(d))
        except (OSError, ValueError):
            continue
    out += list(extra)
    return [p for p in dict.fromkeys(out) if p not in ("/", "")]


def dryrun_dirs(text: str) -> list[str]:
    """The folders ``nvcc -dryrun`` says its driver uses (TOP, _HERE_, CICC_PATH, the -I/-isystem
    include folders): the toolkit, wherever it is installed."""
    out = []
    for m in re.finditer(r'^#\$ (?:TOP|_HERE_|CICC_PATH|NVVMIR_LIBRARY_DIR)=(\S+)', text, re.M):
        out.append(m.group(1))
    for m in re.finditer(r'^#\$ (?:INCLUDES|SYSTEM_INCLUDES)=(.*)$', text, re.M):
        out += [x for x in re.findall(r'"(?:-I)?([^"]+)"', m.group(1)) if x.startswith("/")]
    return [d for d in out if os.path.isabs(d)]
