"""Runtime probes (version_matrix/probes.toml): what ``te.is_fp8_available()``,
``torch.version.hip`` or ``current_platform.is_rocm()`` give on a member of an
NVIDIA fleet, from its compute capability alone.

The evaluator asks ``call_value`` / ``attribute_value`` for a qualified name;
``NotImplemented`` means "not a probe", ``UNKNOWN`` "a probe whose answer on
this member the facts do not settle".
"""

from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path
from typing import Any, Callable, cast

from packaging.version import InvalidVersion, Version

from ..base.data import data_dir
from ..base.errors import MatrixError
from ..matrix.prebuilt import load_toml
from ..values import UNKNOWN

_KINDS = {"table", "constant", "at_least", "equals", "same_major", "dist_version", "by_argument", "capability_number"}
_RETURNS = {"bool", "pair", "bool_or_pair"}
_SPEC = re.compile(r"^(>=|<=|==|<|>)(\d+)\.(\d+)$")
_OPS = {
    ">=": lambda a, b: a >= b, "<=": lambda a, b: a <= b, "==": lambda a, b: a == b,
    "<": lambda a, b: a < b, ">": lambda a, b: a > b,
}


def _parse_range(text: str, where: str):
    """">=10.0,<12.0" -> a predicate on a (major, minor) capability."""
    parts = []
    for piece in text.split(","):
        m = _SPEC.match(piece.strip())
        if not m:
            raise MatrixError(f"{where}: bad capability range {text!r}")
        parts.append((_OPS[m.group(1)], (int(m.group(2)), int(m.group(3)))))
    return lambda cap: all(op(cap, bound) for op, bound in parts)


capability_range = _parse_range  # also for other tables that state capability ranges (attention.toml)


class Probe:
    def __init__(self, key: str, e: dict[str, Any]) -> None:
        where = f"version_matrix/probes.toml: [probe.{key}]"
        if not isinstance(e.get("source"), str) or not e["source"].strip():
            raise MatrixError(f"{where}: missing 'source'")
        self.kind = e.get("kind")
        if self.kind not in _KINDS:
            raise MatrixError(f"{where}: kind must be one of {sorted(_KINDS)}")
        self.returns = e.get("returns", "bool")
        if self.returns not in _RETURNS:
            raise MatrixError(f"{where}: returns must be one of {sorted(_RETURNS)}")
        self.names = cast("list[str]", e.get("names"))  # checked just below
        if not isinstance(self.names, list) or not self.names:
            raise MatrixError(f"{where}: 'names' must be a non-empty list")
        self.attribute = bool(e.get("attribute", False))
        self.true = [_parse_range(s, where) for s in e.get("true", [])]
        self.false = [_parse_range(s, where) for s in e.get("false", [])]
        self.value = e.get("value")
        if self.kind == "constant" and self.value not in (True, False, "None"):
            raise MatrixError(f"{where}: a constant needs value = true, false or \"None\"")
        # kind = "by_argument": the table of the case its argument names (a string, or the
        # last name of a library constant such as ScalingMode.MXFP8_1D_SCALING)
        self.argument = e.get("argument", [0, None])
        self.cases = {}
        if self.kind == "by_argument":
            if not isinstance(e.get("cases"), dict) or not e["cases"]:
                raise MatrixError(f"{where}: by_argument needs a 'cases' table")
            for name, c in e["cases"].items():
                self.cases[name] = ([_parse_range(r, where) for r in c.get("true", [])],
                                    [_parse_range(r, where) for r in c.get("false", [])])
            self.default_case = e.get("default_case")
        # false_before_torch = {release, ranges}: False on those GPUs with a torch older than release
        # (a probe whose answer there changed between torch releases)
        self.false_before = None
        if "false_before_torch" in e:
            fb = e["false_before_torch"]
            try:
                self.false_before = (Version(fb["release"]), [_parse_range(r, where) for r in fb["ranges"]])
            except (InvalidVersion, TypeError, KeyError):
                raise MatrixError(f"{where}: false_before_torch needs release and ranges") from None
        self.cuda_min = None
        if "cuda_min" in e:
            try:
                self.cuda_min = Version(e["cuda_min"])
            except (InvalidVersion, TypeError):
                raise MatrixError(f"{where}: bad cuda_min {e['cuda_min']!r}") from None

    def answer(self, cap: tuple[int, int], cuda: str | None, args: list, kwargs: dict, torch: Any = None):
        if self.kind == "constant":
            return None if self.value == "None" else self.value
        if self.kind == "capability_number":  # 10 * major + minor (90 on an H100)
            return cap[0] * 10 + cap[1]
        if self.kind in ("at_least", "equals", "same_major"):
            want = args[0] if args else kwargs.get("capability", UNKNOWN)
            if isinstance(want, int) and not isinstance(want, bool):
                mine: Any = cap[0] * 10 + cap[1]
            elif isinstance(want, tuple) and len(want) == 2 and all(isinstance(x, int) for x in want):
                mine = cap
            else:
                return UNKNOWN
            if self.kind == "same_major":  # 100 -> 10.x; (10, 0) -> 10.x
                return cap[0] == (want // 10 if isinstance(want, int) else want[0])
            return mine >= want if self.kind == "at_least" else mine == want
        ok = self._case(cap, args) if self.kind == "by_argument" else self._table(cap, cuda, torch)
        pair = self.returns == "pair" or (self.returns == "bool_or_pair" and kwargs.get("return_reason") is True)
        if self.returns == "bool_or_pair" and kwargs.get("return_reason", False) not in (True, False):
            return UNKNOWN
        return (ok, UNKNOWN) if pair else ok

    def _case(self, cap, args):
        v = args[0] if args else self.default_case
        name = v if isinstance(v, str) else getattr(v, "name", None) or getattr(v, "qualname", None)
        case = self.cases.get(name.rsplit(".", 1)[-1]) if isinstance(name, str) else None
        if case is None:
            return UNKNOWN
        true, false = case
        return False if any(p(cap) for p in false) else True if any(p(cap) for p in true) else UNKNOWN

    def _table(self, cap, cuda, torch=None):
        if any(p(cap) for p in self.false):
            return False
        if self.false_before is not None and isinstance(torch, Version) and torch < self.false_before[0] \
                and any(p(cap) for p in self.false_before[1]):
            return False
        if self.cuda_min is not None and cuda:
            try:
                if Version(cuda) < self.cuda_min:
                    return False
            except InvalidVersion:
                pass
        if any(p(cap) for p in self.true):
            return True
        return UNKNOWN


@lru_cache(maxsize=4)
def load(directory: str | None = None) -> tuple[dict[str, Probe], dict[str, Probe]]:
    """(calls, attributes) by qualified name."""
    path = Path(directory or data_dir("version_matrix")) / "probes.toml"
    doc = load_toml(path)
    calls: dict[str, Probe] = {}
    attrs: dict[str, Probe] = {}
    for key, e in doc.get("probe", {}).items():
        p = Probe(key, e)
        for name in p.names:
            (attrs if p.attribute else calls)[name] = p
    return calls, attrs


# What the evaluator itself answers per world (libmodels/environment.py),
# besides the probes of probes.toml: a module naming none of these, nor a probe,
# cannot make a guard differ between worlds.
_BUILTIN_WORLD_TOKENS = (b"get_device_capability", b"get_device_properties", b"is_bf16_supported", b"__version__",
                         b"version_info", b"torch.version", b"cuda.is_available", b"hasattr")


def world_tokens() -> tuple[bytes, ...]:
    """Byte strings one of which a module's text holds if a guard can depend on it."""
    calls, attrs = load()
    tails = {q.rsplit(".", 1)[-1].encode() for q in (*calls, *attrs)}
    return tuple(sorted(tails)) + _BUILTIN_WORLD_TOKENS


def is_dist_version(q: str) -> bool:
    """Does ``q`` return the installed version of the distribution its argument names?"""
    p = load()[0].get(q)
    return p is not None and p.kind == "dist_version"


def call_value(q: str, cap: tuple[int, int], cuda: str | None, pos, kw, eval_arg: Callable, torch: Any = None):
    """The value of a probe call in a world with capability ``cap`` (and torch release ``torch``,
    None when unknown); NotImplemented if ``q`` is no probe."""
    p = load()[0].get(q)
    if p is None or p.kind == "dist_version":
        return NotImplemented
    args = [eval_arg(a) for a in pos] if p.kind in ("at_least", "equals", "same_major") else []
    if p.kind == "by_argument":
        index, keyword = p.argument
        given = kw.get(keyword) if keyword else None
        given = given if given is not None else pos[index] if len(pos) > index else None
        args = [eval_arg(given)] if given is not None else []
    kwargs = {k: eval_arg(v) for k, v in kw.items()}
    return p.answer(cap, cuda, args, kwargs, torch)


def attribute_value(q: str):
    p = load()[1].get(q)
    if p is None:
        return NotImplemented
    return p.answer((0, 0), None, [], {})
