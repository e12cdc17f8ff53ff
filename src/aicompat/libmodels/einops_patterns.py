"""einops patterns (``"b s (h d) -> b h s d"``): parsing one side, and the
output dims a pattern gives from input dims and named axis sizes.

A group on the input side with one axis of unknown size is decomposed by
exact division (``symbolic.div_exact``); anything else unknown stays UNKNOWN.
"""

from __future__ import annotations

import re

from aicompat.values import UNKNOWN
from aicompat.values.symbolic import div_exact, is_dim, product

_TOKEN = re.compile(r"\.\.\.|\(|\)|[A-Za-z_][A-Za-z0-9_]*|\d+|\S")


def parse_side(side: str) -> list | None:
    """One side of a pattern as (grouped, names) pairs: ``b (h d) ... 1`` is
    [(False, ["b"]), (True, ["h", "d"]), (False, ["..."]), (False, ["1"])];
    None when it does not parse."""
    out: list = []
    group: list | None = None
    for tok in _TOKEN.findall(side):
        if tok == "(":
            if group is not None:
                return None
            group = []
        elif tok == ")":
            if group is None:
                return None
            out.append((True, group))
            group = None
        elif tok == "..." or tok.isidentifier() or tok.isdigit():
            if group is not None:
                group.append(tok)
            else:
                out.append((False, [tok]))
        else:
            return None
    return None if group is not None else out


def einops_shape(shape, left, right, axes: dict) -> tuple | None:
    """Output dims of an einops pattern given input dims and named axis sizes."""
    n_items = len(left)
    has_ell = any("..." in names for _, names in left)
    if shape is None:
        if has_ell:
            return None
        shape = (UNKNOWN,) * n_items
    n_ell = len(shape) - (n_items - 1) if has_ell else 0
    if (has_ell and n_ell < 0) or (not has_ell and n_items != len(shape)):
        return None
    sizes = dict(axes)
    ell_dims: tuple = ()
    pos = 0
    for grouped, names in left:
        if names == ["..."] and not grouped:
            ell_dims = tuple(shape[pos:pos + n_ell])
            pos += n_ell
            continue
        d = shape[pos]
        pos += 1
        if not grouped:
            name = names[0]
            sizes[name] = d if d is not UNKNOWN or name not in sizes else sizes[name]
            continue
        _decompose(d, names, sizes)
    out: list = []
    for grouped, names in right:
        if names == ["..."] and not grouped:
            out.extend(ell_dims)
            continue
        dims = []
        for name in names:
            if name == "...":
                dims.append(product(ell_dims))
            elif name.isdigit():
                dims.append(int(name))
            elif name in sizes:
                dims.append(sizes[name])
            else:
                dims.append(UNKNOWN)  # an axis einops would reject: not ours to judge
        out.append(product(dims))
    return tuple(out)


def _decompose(d, names, sizes: dict) -> None:
    """Sizes of the axes in one input group whose product is ``d``: at most one
    unknown axis, found by exact division."""
    known = [int(n) if n.isdigit() else sizes.get(n, UNKNOWN) for n in names]
    missing = [n for n, k in zip(names, known) if k is UNKNOWN]
    if len(missing) == 1 and d is not UNKNOWN:
        q = div_exact(d, product(k for k in known if k is not UNKNOWN)) if is_dim(d) else None
        sizes[missing[0]] = UNKNOWN if q is None else q
        return
    for n in missing:
        sizes[n] = UNKNOWN
