"""Paths as abstract values: ``Path(__file__).with_suffix(".cu")``,
``Path(...).parent / "k.cu"``, ``os.path.join(os.path.dirname(__file__), ...)``,
for the evaluator (model/evaluate.py)."""

from __future__ import annotations

import posixpath

from . import UNKNOWN, PartialStr, PathValue
from .strings import flatten_parts, mkstr


def pathstr(v):
    if isinstance(v, PathValue):
        return v.path
    if isinstance(v, (str, PartialStr)):
        return v
    return UNKNOWN


def path_new(args: list):
    if not args:
        return PathValue(".")
    out = pathstr(args[0])
    for a in args[1:]:
        out = _pathjoin_str(out, pathstr(a))
    return PathValue(out) if out is not UNKNOWN else UNKNOWN


def _pathjoin_str(a, b):
    if a is UNKNOWN or b is UNKNOWN:
        return UNKNOWN
    if isinstance(b, str) and b.startswith("/"):
        return b
    if isinstance(a, str) and isinstance(b, str):
        return posixpath.join(a, b)
    return mkstr(flatten_parts([a, "/", b]))


def path_join(a: PathValue, b):
    out = _pathjoin_str(a.path, pathstr(b))
    return PathValue(out) if out is not UNKNOWN else UNKNOWN


def os_join(args: list):
    out = None
    for a in args:
        s = pathstr(a)
        out = s if out is None else _pathjoin_str(out, s)
    return out if out is not None else UNKNOWN


def os_path_fn(fn: str, v):
    s = pathstr(v)
    if not isinstance(s, str):
        return UNKNOWN
    if fn == "dirname":
        return posixpath.dirname(s)
    if fn == "basename":
        return posixpath.basename(s)
    if fn in ("abspath", "realpath"):
        return posixpath.normpath(s) if s.startswith("/") else UNKNOWN
    return s


def path_attr(p: PathValue, attr: str):
    s = p.path
    if not isinstance(s, str):
        return UNKNOWN
    if attr == "parent":
        return PathValue(posixpath.dirname(s) or ".")
    if attr == "name":
        return posixpath.basename(s)
    if attr == "stem":
        return posixpath.splitext(posixpath.basename(s))[0]
    if attr == "suffix":
        return posixpath.splitext(s)[1]
    return UNKNOWN


def path_method(p: PathValue, method: str, args: list):
    s = p.path
    if method == "with_suffix" and len(args) == 1 and isinstance(args[0], str) and isinstance(s, str):
        return PathValue(posixpath.splitext(s)[0] + args[0])
    if method == "with_name" and len(args) == 1 and isinstance(args[0], str) and isinstance(s, str):
        return PathValue(posixpath.join(posixpath.dirname(s), args[0]))
    if method in ("resolve", "absolute", "expanduser"):
        return p
    if method == "joinpath":
        out = s
        for a in args:
            out = _pathjoin_str(out, pathstr(a))
        return PathValue(out) if out is not UNKNOWN else UNKNOWN
    if method == "__fspath__":
        return s
    return UNKNOWN
