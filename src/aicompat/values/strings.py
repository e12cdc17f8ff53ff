"""Strings as abstract values: f-strings, ``+``, ``%``/``.format`` with unknown
parts kept (an unknown part is never an empty string: the result is a
PartialStr), for the evaluator (model/evaluate.py)."""

from __future__ import annotations

from . import UNKNOWN, PartialStr, bounds


def concat(a, b):
    parts = []
    for x in (a, b):
        if isinstance(x, str):
            parts.append(x)
        elif isinstance(x, PartialStr):
            parts.extend(x.parts)
        else:
            parts.append(UNKNOWN)
    return mkstr(parts)


def flatten_parts(parts):
    out = []
    for p in parts:
        if isinstance(p, PartialStr):
            out.extend(p.parts)
        else:
            out.append(p)
    return out


def mkstr(parts):
    """A str when every part is known, else a PartialStr with adjacent known parts merged;
    a string over the size cap is some unknown string (never built)."""
    if bounds.total_len(parts) > bounds.MAX_STR:
        return PartialStr((UNKNOWN,))
    merged: list = []
    for p in parts:
        if isinstance(p, str) and merged and isinstance(merged[-1], str):
            merged[-1] += p
        elif isinstance(p, str) or p is UNKNOWN:
            merged.append(p)
        else:
            merged.append(UNKNOWN)
    if all(isinstance(p, str) for p in merged):
        return "".join(merged)
    return PartialStr(tuple(merged))


def format_value(v, spec, conversion):
    if not bounds.spec_fits(spec):
        return UNKNOWN  # f"{x:>999999999}"
    if isinstance(v, bool) or isinstance(v, (int, float, str)):
        try:
            if conversion == "r":
                v = repr(v)
            return format(v, spec or "")
        except (ValueError, TypeError):
            return UNKNOWN
    if isinstance(v, PartialStr) and not spec and not conversion:
        return v
    return UNKNOWN


def str_format(s: str, args: list, kw: dict):
    import string

    parts: list = []
    auto = 0
    try:
        for literal, field_name, spec, conv in string.Formatter().parse(s):
            parts.append(literal)
            if field_name is None:
                continue
            if field_name == "":
                v = args[auto] if auto < len(args) else UNKNOWN
                auto += 1
            elif field_name.isdigit():
                i = int(field_name)
                v = args[i] if i < len(args) else UNKNOWN
            elif field_name in kw:
                v = kw[field_name]
            else:
                v = UNKNOWN
            parts.append(format_value(v, spec, conv) if not (spec and "{" in spec) else UNKNOWN)
    except ValueError:
        return UNKNOWN
    return mkstr(flatten_parts(parts))
