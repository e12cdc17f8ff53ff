"""The torch/CUDA environment one world fixes: what ``torch.__version__``,
``torch.cuda.get_device_capability()``, ``sys.version_info`` or a probe such as
``te.is_fp8_available()`` (probes.toml) are on one fleet member with one torch
release. The generic evaluator (model/evaluate.py) asks this module, through the library
table (table.py), for names and calls of the environment and knows nothing of them itself."""

from __future__ import annotations

import operator
from dataclasses import dataclass
from typing import Any, Callable

from packaging.version import InvalidVersion, Version

from ..values import UNKNOWN, PartialStr, Seq, join
from . import probes


@dataclass(frozen=True)
class DeviceProps:
    major: int
    minor: int


class TorchVersion(str):
    """torch.__version__ compares as a version against strings and tuples."""

    def _other(self, other):
        if isinstance(other, Version):
            return other
        if isinstance(other, str):
            return Version(other)
        if isinstance(other, tuple):
            return Version(".".join(str(x) for x in other))
        raise TypeError

    def _cmp(self, other, op):
        try:
            return op(Version(str(self)), self._other(other))
        except (TypeError, InvalidVersion):
            return UNKNOWN

    def __ge__(self, o):
        return self._cmp(o, operator.ge)

    def __gt__(self, o):
        return self._cmp(o, operator.gt)

    def __le__(self, o):
        return self._cmp(o, operator.le)

    def __lt__(self, o):
        return self._cmp(o, operator.lt)


class PyVersionInfo(tuple):
    @property
    def major(self):
        return self[0]

    @property
    def minor(self):
        return self[1]


@dataclass(frozen=True)
class Env:
    """One world's environment: torch release (None: unknown), device capability,
    target Python and CUDA toolkit."""

    torch: Any
    capability: tuple
    python: tuple
    cuda: str | None


def name_value(q: str, env: Env):
    """The value of the dotted name ``q`` in ``env``; NotImplemented when it is not
    an environment name. Second item: whether it depends on the world."""
    v = probes.attribute_value(q)  # torch.version.hip and the like (probes.toml)
    if v is not NotImplemented:
        return v, False
    if q == "torch.__version__":
        return (TorchVersion(str(env.torch)) if env.torch is not None else UNKNOWN), True
    if q == "torch.version.cuda":
        return (env.cuda if env.cuda else UNKNOWN), False
    if q in ("typing.TYPE_CHECKING", "typing_extensions.TYPE_CHECKING"):
        return False, False  # only type checkers enter these blocks
    if q == "sys.version_info":
        return PyVersionInfo((env.python[0], env.python[1], 0, "final", 0)), False
    return NotImplemented, False


def call_value(q: str, env: Env, pos, kw, eval_arg: Callable):
    """The value of the call ``q(*pos, **kw)`` in ``env`` (arguments are evaluated
    with ``eval_arg`` only when needed); NotImplemented when ``q`` is no
    environment query. Second item: whether it depends on the world."""
    if probes.is_dist_version(q):  # importlib.metadata.version("torch"): the world's release
        name = eval_arg(pos[0]) if pos else UNKNOWN
        if name != "torch" or env.torch is None:
            return UNKNOWN, False
        return TorchVersion(str(env.torch)), True
    cap = env.capability
    v = probes.call_value(q, cap, env.cuda, pos, kw, eval_arg, env.torch)  # te.is_fp8_available() ... (probes.toml)
    if v is not NotImplemented:
        return v, True
    if q == "torch.cuda.get_device_capability":
        return cap, True
    if q == "torch.cuda.get_device_properties":
        return DeviceProps(*cap), True
    if q in ("torch.cuda.is_available", "torch.backends.cuda.is_built"):
        return True, False  # the target is a GPU fleet
    if q in ("packaging.version.parse", "packaging.version.Version", "pkg_resources.parse_version"):
        if len(pos) == 1:
            v = eval_arg(pos[0])
            if isinstance(v, str):
                try:
                    return Version(str(v)), False
                except InvalidVersion:
                    return UNKNOWN, False
        return UNKNOWN, False
    return NotImplemented, False


def torch_version_method(v: TorchVersion, method: str, args: list):
    """``torch.__version__`` is the release plus a local part we do not know
    ("2.5.0+cu124"): what follows the release stays unknown."""
    if method == "split" and len(args) == 1 and args[0] == ".":
        parts = str(v).split(".")
        return Seq(tuple(parts[:-1]) + (PartialStr((parts[-1], UNKNOWN)),))
    if method == "split" and len(args) == 1 and args[0] == "+":  # with or without a local part
        return join([Seq((str(v),)), Seq((str(v), PartialStr((UNKNOWN,))))])
    if method == "startswith" and len(args) == 1 and isinstance(args[0], str) and len(args[0]) <= len(str(v)):
        return str(v).startswith(args[0])
    return UNKNOWN
