"""The tensor shape model: what shape a torch operation gives, from its input
shapes and already-evaluated arguments.

Pure functions over ``values.Tensor``; dims are ``int | Sym | UNKNOWN``
(``aicompat.values.symbolic``). Each entry point returns a value, or ``NotImplemented``
for an operation it does not model (the caller makes that UNKNOWN). A dim that
cannot be computed exactly is UNKNOWN and a rank that cannot be is
``Tensor(None)``: the model never guesses a size.

Entry points: ``tensor_method``, ``attribute``, ``index``, ``matmul``,
``binary``, ``function`` and, for ``torch.nn`` layers, ``layer``/``apply_layer``;
``model_of`` says which of ``function``/``layer`` answers a call, ``dtype_of`` reads a
dtype. The value model reaches them through the library table (libmodels/table.py).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any, TypeGuard, cast

from aicompat.libmodels.einops_patterns import einops_shape, parse_side
from aicompat.values import UNKNOWN, Module, Seq, Tensor
from aicompat.values.symbolic import add, div_exact, is_dim, mul, normalize, product, provably_nonneg, proven_eq, sub

# Canonical names, as ``str(torch.float)`` prints them, and element sizes in
# bytes (torch.empty((), dtype=d).element_size(), checked by the tests).
DTYPE_SIZES = {
    "torch.float64": 8, "torch.float32": 4, "torch.float16": 2, "torch.bfloat16": 2,
    "torch.complex128": 16, "torch.complex64": 8, "torch.complex32": 4,
    "torch.int64": 8, "torch.int32": 4, "torch.int16": 2, "torch.int8": 1, "torch.uint8": 1,
    "torch.uint16": 2, "torch.uint32": 4, "torch.uint64": 8, "torch.bool": 1,
    "torch.float8_e4m3fn": 1, "torch.float8_e5m2": 1, "torch.float8_e4m3fnuz": 1, "torch.float8_e5m2fnuz": 1,
    "torch.float8_e8m0fnu": 1, "torch.float4_e2m1fn_x2": 1,  # one byte holds two packed e2m1 values
}
DTYPE_ALIASES = {
    "torch.float": "torch.float32", "torch.double": "torch.float64", "torch.half": "torch.float16",
    "torch.cfloat": "torch.complex64", "torch.cdouble": "torch.complex128", "torch.chalf": "torch.complex32",
    "torch.long": "torch.int64", "torch.int": "torch.int32", "torch.short": "torch.int16",
}
_CAST_METHODS = {
    "float": "torch.float32", "half": "torch.float16", "bfloat16": "torch.bfloat16", "double": "torch.float64",
    "int": "torch.int32", "long": "torch.int64", "short": "torch.int16", "bool": "torch.bool",
    "byte": "torch.uint8", "char": "torch.int8",
}
# Methods (and torch.* / F.* functions on their first argument) whose result has the input's shape.
SAME_SHAPE = {
    "contiguous", "clone", "detach", "detach_", "cpu", "cuda", "requires_grad_", "pin_memory", "share_memory_",
    "abs", "neg", "exp", "log", "sqrt", "rsqrt", "sin", "cos", "tanh", "sigmoid", "relu", "gelu", "silu",
    "softmax", "log_softmax", "clamp", "clamp_", "clip", "masked_fill", "masked_fill_",
    "fill_", "zero_", "normal_", "uniform_", "copy_", "mul_", "add_", "sub_", "div_", "tril", "triu",
    "nan_to_num", "sign", "square", "reciprocal", "erf", "round", "floor", "ceil", "trunc", "cumsum",
    "dropout", "layer_norm", "rms_norm", "group_norm", "normalize", "leaky_relu", "elu", "softplus", "mish",
    "hardswish", "hardsigmoid", "relu6", "softsign", "logsigmoid", "type_as", "roll", "flip", "scatter",
}
_BINARY = {"add", "sub", "mul", "div", "true_divide", "floor_divide", "maximum", "minimum", "pow", "float_power",
           "remainder", "fmod", "atan2", "eq", "ne", "lt", "le", "gt", "ge", "logical_and", "logical_or"}
_METHOD_ALIASES = {"swapaxes": "transpose", "swapdims": "transpose", "moveaxis": "movedim", "concat": "cat",
                   "concatenate": "cat", "mm": "matmul", "bmm": "matmul"}


MAX_PIECES = 64  # split/chunk/unbind into more pieces give a Seq, not a huge tuple
# Tensor methods whose result shape their arguments give in full (no input dims needed):
# ``x.view(b, s, h, d)`` has that shape whatever ``x`` was.
SHAPING_METHODS = frozenset({"view", "reshape", "new_empty", "new_zeros", "new_ones", "new_full"})


@dataclass(frozen=True)
class Slice:
    """A subscript ``lower:upper:step``; None for an omitted bound."""

    lower: Any = None
    upper: Any = None
    step: Any = None


@dataclass(frozen=True)
class Layer:
    """A ``torch.nn`` layer the model knows the shape effect of; ``params`` is
    ((name, value), ...) as constructed."""

    kind: str
    params: tuple = ()

    def param(self, name: str, default=UNKNOWN):
        for k, v in self.params:
            if k == name:
                return v
        return default


# ---------------------------------------------------------------- helpers

def _is_int(x) -> TypeGuard[int]:
    return isinstance(x, int) and not isinstance(x, bool)


def _dim(v):
    """A value as a dim: int or Sym, else UNKNOWN."""
    return normalize(v) if is_dim(v) else UNKNOWN


def _items(v) -> tuple | None:
    """The items of an exact sequence (tuple, list, exact Seq), else None."""
    if isinstance(v, (tuple, list)):
        return tuple(v)
    if isinstance(v, Seq) and v.exact and v.kind == "list":
        return v.items
    return None


def _size_arg(args) -> tuple | None:
    """A shape given as varargs (``view(2, 3)``) or one sequence (``view((2, 3))``);
    None when its length is unknown."""
    if len(args) == 1 and not is_dim(args[0]):
        items = _items(args[0])
        return None if items is None else tuple(_dim(x) for x in items)
    return tuple(_dim(x) for x in args)


def _axis(d, rank: int | None) -> int | None:
    """A dim index normalized to 0..rank-1, None when unknown or out of range."""
    if not _is_int(d) or rank is None:
        return None
    if d < 0:
        d += rank
    return d if 0 <= d < rank else None


def _bind(args, kwargs, names, defaults=None) -> dict | None:
    """Positional and keyword arguments by parameter name; None when they do not fit."""
    kwargs = dict(kwargs or {})
    if len(args) > len(names):
        return None
    out = dict(defaults or {})
    out.update(zip(names, args))
    for k, v in kwargs.items():
        if k in names[: len(args)]:
            return None
        out[k] = v
    return out


def dtype_of(v) -> str | None:
    """The canonical dtype name of a value (``Module("torch.half")``), else None."""
    name = v.name if isinstance(v, Module) else None
    if name is None:
        return None
    name = DTYPE_ALIASES.get(name, name)
    return name if name in DTYPE_SIZES else None


def _with_dtype(t: Tensor, args, kwargs) -> Tensor:
    """``.to(...)``/``.type(...)``: the first dtype among the arguments, else the input's."""
    for v in (*args, *(kwargs or {}).values()):
        dt = dtype_of(v)
        if dt is not None:
            return Tensor(t.shape, dt)
        if isinstance(v, Tensor):  # .to(other): other's dtype
            return Tensor(t.shape, v.dtype)
    return t


def _numel(shape):
    return UNKNOWN if shape is None else product(shape)


def _replace(shape: tuple, i: int, dims: tuple) -> tuple:
    return shape[:i] + dims + shape[i + 1:]


def _infer(shape: tuple, numel) -> tuple:
    """Fill one -1 in ``shape`` so its product is ``numel`` (exactly, else UNKNOWN)."""
    holes = [i for i, d in enumerate(shape) if _is_int(d) and d == -1]
    if not holes:
        return shape
    if len(holes) > 1:
        return tuple(UNKNOWN if i in holes else d for i, d in enumerate(shape))
    rest = product(d for i, d in enumerate(shape) if i != holes[0])
    q = UNKNOWN
    if numel is not UNKNOWN and rest is not UNKNOWN:
        q = div_exact(numel, rest)
        q = UNKNOWN if q is None else q
    return _replace(shape, holes[0], (q,))


def _unknown_like(t: Tensor) -> Tensor:
    return Tensor(None, t.dtype)


# ---------------------------------------------------------------- methods

def tensor_method(t: Tensor, name: str, args=(), kwargs=None):
    """The value of ``t.name(*args, **kwargs)``: a Tensor, a tuple of them, a dim,
    a shape tuple, or NotImplemented."""
    args = tuple(args)
    kwargs = dict(kwargs or {})
    name = _METHOD_ALIASES.get(name, name)
    handler = _METHODS.get(name)
    if handler is not None:
        return handler(t, args, kwargs)
    if name in _CAST_METHODS and not args:
        return Tensor(t.shape, _CAST_METHODS[name])
    if name == "to" or (name == "type" and (args or kwargs)):  # type() alone is a string
        return _with_dtype(t, args, kwargs)
    if name in SAME_SHAPE:
        return t
    if name in _BINARY and args:
        return binary(t, args[0])
    return NotImplemented


def _view(t, args, kwargs):
    if "dtype" in kwargs or (len(args) == 1 and isinstance(args[0], Module)):
        return _bitcast(t, kwargs.get("dtype", args[0] if args else None))
    if "size" in kwargs or "shape" in kwargs:
        args = (kwargs.get("size", kwargs.get("shape")),)
    shape = _size_arg(args)
    if shape is None:
        return _unknown_like(t)
    return Tensor(_infer(shape, _numel(t.shape)), t.dtype)


def _bitcast(t: Tensor, dtype_value):
    """``view(dtype)``: same shape when the element sizes agree; else the last dim scales."""
    new = dtype_of(dtype_value)
    if new is None:
        return Tensor(t.shape, None)
    if t.shape is None or not t.shape:
        return Tensor(t.shape, new)
    if t.dtype not in DTYPE_SIZES:  # the element size may differ: the last dim may scale
        return Tensor(t.shape[:-1] + (UNKNOWN,), new)
    old_size, new_size = DTYPE_SIZES[t.dtype], DTYPE_SIZES[new]
    last = t.shape[-1]
    if old_size > new_size:
        last = mul(last, old_size // new_size)
    elif old_size < new_size:
        last = _exact(last, new_size // old_size)
    return Tensor(t.shape[:-1] + (last,), new)


def _exact(a, b):
    q = div_exact(a, b) if is_dim(a) and is_dim(b) else None
    return UNKNOWN if q is None else q


def _reshape_as(t, args, kwargs):
    other = args[0] if args else kwargs.get("other")
    return Tensor(other.shape, t.dtype) if isinstance(other, Tensor) else NotImplemented


def _unflatten(t, args, kwargs):
    b = _bind(args, kwargs, ("dim", "sizes"))
    if b is None or "sizes" not in b:
        return NotImplemented
    sizes = _size_arg((b["sizes"],))
    rank = None if t.shape is None else len(t.shape)
    i = _axis(b.get("dim"), rank)
    if sizes is None or i is None:
        return _unknown_like(t)
    return Tensor(_replace(t.shape, i, _infer(sizes, t.shape[i])), t.dtype)


def _flatten(t, args, kwargs):
    b = _bind(args, kwargs, ("start_dim", "end_dim"), {"start_dim": 0, "end_dim": -1})
    if b is None:
        return NotImplemented
    if t.shape is None:
        return _unknown_like(t)
    if not t.shape:
        return Tensor((1,), t.dtype)
    s, e = _axis(b["start_dim"], len(t.shape)), _axis(b["end_dim"], len(t.shape))
    if s is None or e is None or s > e:
        return _unknown_like(t)
    return Tensor(t.shape[:s] + (product(t.shape[s:e + 1]),) + t.shape[e + 1:], t.dtype)


def _pieces(t: Tensor, i: int, sizes):
    """The pieces of ``t`` cut along dim ``i``; past MAX_PIECES a Seq of their join."""
    if len(sizes) > MAX_PIECES:
        same = len(set(sizes)) == 1
        return _unknown_count(t, i, sizes[0] if same else UNKNOWN)
    return tuple(Tensor(_replace(cast(tuple, t.shape), i, (s,)), t.dtype) for s in sizes)  # i: the rank is known


def _unknown_count(t: Tensor, i: int | None, size=UNKNOWN) -> Seq:
    """A split whose number of pieces is unknown; every piece is like ``more``."""
    # with an axis i the rank is known
    more = _unknown_like(t) if i is None else Tensor(_replace(cast(tuple, t.shape), i, (size,)), t.dtype)
    return Seq(items=(), more=more)


def _split(t, args, kwargs):
    b = _bind(args, kwargs, ("split_size", "dim"), {"dim": 0})
    if b is None:
        return NotImplemented
    if "split_size_or_sections" in b:
        b["split_size"] = b.pop("split_size_or_sections")
    if "split_size" not in b:
        return NotImplemented
    rank = None if t.shape is None else len(t.shape)
    i = _axis(b["dim"], rank)
    size = b["split_size"]
    if not is_dim(size):  # a list of section sizes
        sections = _items(size)
        if sections is None or i is None:
            return _unknown_count(t, i)
        return _pieces(t, i, tuple(_dim(s) for s in sections))
    if i is None:
        return _unknown_count(t, i, size)
    return _split_even(t, i, size)


def _split_even(t: Tensor, i: int, size):
    """``split(size, dim)``: pieces of ``size``, the last one smaller (ATen ``split``)."""
    n = cast(tuple, t.shape)[i]  # a valid axis: the rank is known
    count: int | None  # the number of pieces, None when not provable
    if _is_int(n) and _is_int(size) and size > 0:
        count = max((n + size - 1) // size, 1)
        return _pieces(t, i, (size,) * (count - 1) + (n - size * (count - 1),))
    count = div_exact(n, size) if is_dim(n) and is_dim(size) else None
    if _is_int(count) and count > 0:
        return _pieces(t, i, (size,) * count)
    return _unknown_count(t, i, size if count is not None else UNKNOWN)


def _split_with_sizes(t, args, kwargs):
    b = _bind(args, kwargs, ("split_sizes", "dim"), {"dim": 0})
    if b is None or "split_sizes" not in b:
        return NotImplemented
    return _split(t, (b["split_sizes"], b["dim"]), {})


def _chunk(t, args, kwargs):
    b = _bind(args, kwargs, ("chunks", "dim"), {"dim": 0})
    if b is None or "chunks" not in b:
        return NotImplemented
    rank = None if t.shape is None else len(t.shape)
    i, chunks = _axis(b["dim"], rank), b["chunks"]
    if i is None:
        return _unknown_count(t, i)
    n = t.shape[i]
    if _is_int(n) and _is_int(chunks) and chunks > 0:
        size = (n + chunks - 1) // chunks
        if size == 0 and n == 0:  # ATen keeps the requested count of empty chunks
            return _pieces(t, i, (0,) * chunks)
        return _split_even(t, i, size)
    each = div_exact(n, chunks) if is_dim(n) and _is_int(chunks) and chunks > 0 else None
    if each is not None:
        return _pieces(t, i, (each,) * chunks)
    return _unknown_count(t, i)


def _unbind(t, args, kwargs):
    b = _bind(args, kwargs, ("dim",), {"dim": 0})
    if b is None:
        return NotImplemented
    rank = None if t.shape is None else len(t.shape)
    i = _axis(b["dim"], rank)
    if i is None:
        return Seq(items=(), more=_unknown_like(t))
    rest = Tensor(t.shape[:i] + t.shape[i + 1:], t.dtype)
    n = t.shape[i]
    return (rest,) * n if _is_int(n) and n <= MAX_PIECES else Seq(items=(), more=rest)


def _transpose(t, args, kwargs):
    b = _bind(args, kwargs, ("dim0", "dim1"))
    if b is None or "dim0" not in b or "dim1" not in b:
        return NotImplemented
    rank = None if t.shape is None else len(t.shape)
    i, j = _axis(b["dim0"], rank), _axis(b["dim1"], rank)
    if i is None or j is None:
        return _unknown_like(t)
    s = list(t.shape)
    s[i], s[j] = s[j], s[i]
    return Tensor(tuple(s), t.dtype)


def _t(t, args, kwargs):
    if t.shape is None or len(t.shape) > 2:
        return _unknown_like(t)
    return Tensor(t.shape[::-1], t.dtype)


def _permute(t, args, kwargs):
    if "dims" in kwargs:
        args = (kwargs["dims"],)
    order = _size_arg(args)
    if t.shape is None or order is None or len(order) != len(t.shape):
        return _unknown_like(t)
    idx = [_axis(d, len(t.shape)) for d in order]
    if None in idx or len(set(idx)) != len(idx):
        return _unknown_like(t)
    return Tensor(tuple(t.shape[i] for i in idx), t.dtype)


def _movedim(t, args, kwargs):
    b = _bind(args, kwargs, ("source", "destination"))
    if b is None or "source" not in b or "destination" not in b:
        return NotImplemented
    if t.shape is None:
        return _unknown_like(t)
    rank = len(t.shape)
    src = (b["source"],) if _is_int(b["source"]) else _items(b["source"])
    dst = (b["destination"],) if _is_int(b["destination"]) else _items(b["destination"])
    if src is None or dst is None or len(src) != len(dst):
        return _unknown_like(t)
    src = [_axis(d, rank) for d in src]
    dst = [_axis(d, rank) for d in dst]
    if None in src or None in dst or len(set(src)) != len(src) or len(set(dst)) != len(dst):
        return _unknown_like(t)
    out = [None] * rank
    for s, d in zip(src, dst):
        out[d] = t.shape[s]
    rest = iter(d for k, d in enumerate(t.shape) if k not in src)
    return Tensor(tuple(next(rest) if d is None else d for d in out), t.dtype)


def _unsqueeze(t, args, kwargs):
    b = _bind(args, kwargs, ("dim",))
    if b is None or "dim" not in b:
        return NotImplemented
    rank = None if t.shape is None else len(t.shape) + 1
    i = _axis(b["dim"], rank)
    if i is None:
        return _unknown_like(t)
    return Tensor(t.shape[:i] + (1,) + t.shape[i:], t.dtype)


def _squeeze(t, args, kwargs):
    b = _bind(args, kwargs, ("dim",))
    if b is None:
        return NotImplemented
    if t.shape is None:
        return _unknown_like(t)
    rank = len(t.shape)
    if "dim" not in b or b["dim"] is None:
        which = range(rank)
    else:
        dims = (b["dim"],) if _is_int(b["dim"]) else _items(b["dim"])
        which = None if dims is None else [_axis(d, max(rank, 1)) for d in dims]
        if which is None or None in which:
            return _unknown_like(t)
    if not rank:
        return t
    out = []
    for k, d in enumerate(t.shape):
        if k in which and not _is_int(d):
            return _unknown_like(t)  # a named or unknown dim may be 1: rank unknown
        if not (k in which and d == 1):
            out.append(d)
    return Tensor(tuple(out), t.dtype)


def _expand(t, args, kwargs):
    if "size" in kwargs:
        args = (kwargs["size"],)
    sizes = _size_arg(args)
    if sizes is None or t.shape is None or len(sizes) < len(t.shape):
        return _unknown_like(t)
    lead = len(sizes) - len(t.shape)
    out = list(sizes)
    for k, d in enumerate(t.shape):
        if _is_int(out[lead + k]) and out[lead + k] == -1:
            out[lead + k] = d
    return Tensor(tuple(UNKNOWN if _is_int(d) and d < 0 else d for d in out), t.dtype)


def _expand_as(t, args, kwargs):
    other = args[0] if args else kwargs.get("other")
    return Tensor(other.shape, t.dtype) if isinstance(other, Tensor) else NotImplemented


def _repeat(t, args, kwargs):
    if "repeats" in kwargs:
        args = (kwargs["repeats"],)
    reps = _size_arg(args)
    if reps is None or t.shape is None or len(reps) < len(t.shape):
        return _unknown_like(t)
    lead = len(reps) - len(t.shape)
    return Tensor(reps[:lead] + tuple(mul(d, r) for d, r in zip(t.shape, reps[lead:])), t.dtype)


def _narrow(t, args, kwargs):
    b = _bind(args, kwargs, ("dim", "start", "length"))
    if b is None or "length" not in b or "dim" not in b:
        return NotImplemented
    rank = None if t.shape is None else len(t.shape)
    i = _axis(b["dim"], rank)
    if i is None:
        return _unknown_like(t)
    return Tensor(_replace(t.shape, i, (_dim(b["length"]),)), t.dtype)


def _repeat_interleave(t, args, kwargs):
    b = _bind(args, kwargs, ("repeats", "dim", "output_size"), {"dim": None, "output_size": None})
    if b is None or "repeats" not in b:
        return NotImplemented
    reps = b["repeats"]
    if b["dim"] is None:
        total = _dim(b["output_size"]) if b["output_size"] is not None else UNKNOWN
        if total is UNKNOWN and is_dim(reps):
            total = mul(_numel(t.shape), reps)
        return Tensor((total,), t.dtype)
    rank = None if t.shape is None else len(t.shape)
    i = _axis(b["dim"], rank)
    if i is None:
        return _unknown_like(t)
    if b["output_size"] is not None:
        size = _dim(b["output_size"])
    elif is_dim(reps):
        size = mul(t.shape[i], reps)
    elif isinstance(reps, Tensor) and reps.shape in ((), (1,)):
        size = UNKNOWN  # a one-element tensor of repeats: its value is not known here
    else:
        size = UNKNOWN
    return Tensor(_replace(t.shape, i, (size,)), t.dtype)


def _size(t, args, kwargs):
    b = _bind(args, kwargs, ("dim",), {"dim": None})
    if b is None:
        return NotImplemented
    if b["dim"] is None:
        return UNKNOWN if t.shape is None else t.shape
    i = _axis(b["dim"], None if t.shape is None else len(t.shape))
    return UNKNOWN if i is None else t.shape[i]


def _ndim(t, args, kwargs):
    return UNKNOWN if t.shape is None else len(t.shape)


def _numel_method(t, args, kwargs):
    return _numel(t.shape)


def _matmul_method(t, args, kwargs):
    return matmul(t, args[0]) if len(args) == 1 and isinstance(args[0], Tensor) else NotImplemented


def _reduce(t, args, kwargs):
    """sum/mean/amax/...: no dim reduces to a scalar; a dim (or dims) drops or keeps them."""
    b = _bind(args, kwargs, ("dim", "keepdim"), {"dim": None, "keepdim": False})
    if b is None:
        return NotImplemented
    keep = b["keepdim"]
    if b["dim"] is None:
        return Tensor((), t.dtype) if not args and "dim" not in kwargs else _unknown_like(t)
    if t.shape is None or not isinstance(keep, bool):
        return _unknown_like(t)
    dims = (b["dim"],) if _is_int(b["dim"]) else _items(b["dim"])
    which = None if dims is None else {_axis(d, len(t.shape)) for d in dims}
    if which is None or None in which:
        return _unknown_like(t)
    return Tensor(tuple(1 if k in which else d for k, d in enumerate(t.shape) if keep or k not in which), t.dtype)


def _new_factory(t, args, kwargs, fill: bool = False):
    """``t.new_empty(b, h, s, d)`` / ``t.new_full((b, h), v)``: the shape its size gives, t's dtype
    unless ``dtype=`` says otherwise (Tensor.new_empty docstring, torch 2.13.0: "By default, the
    returned Tensor has the same torch.dtype ... as this tensor"; new_full takes one size sequence)."""
    if "size" in kwargs:
        args = (kwargs["size"],)
    elif fill:
        args = args[:1]
    shape = _size_arg(args) if args else None
    dt = dtype_of(kwargs["dtype"]) if "dtype" in kwargs else t.dtype
    return Tensor(shape, dt)


_METHODS = {
    "new_empty": _new_factory, "new_zeros": _new_factory, "new_ones": _new_factory,
    "new_full": lambda t, a, k: _new_factory(t, a, k, fill=True),
    "view": _view, "reshape": _view, "view_as": _reshape_as, "reshape_as": _reshape_as,
    "unflatten": _unflatten, "flatten": _flatten, "split": _split, "split_with_sizes": _split_with_sizes,
    "chunk": _chunk, "unbind": _unbind, "transpose": _transpose, "t": _t, "permute": _permute,
    "movedim": _movedim, "unsqueeze": _unsqueeze, "squeeze": _squeeze, "expand": _expand,
    "expand_as": _expand_as, "repeat": _repeat, "narrow": _narrow, "repeat_interleave": _repeat_interleave,
    "size": _size, "dim": _ndim, "ndimension": _ndim, "numel": _numel_method, "matmul": _matmul_method,
    "sum": _reduce, "mean": _reduce, "amax": _reduce, "amin": _reduce, "prod": _reduce, "std": _reduce,
    "var": _reduce, "norm": _reduce,
}


# ---------------------------------------------------------------- attributes and subscripts

def attribute(t: Tensor, name: str):
    """``t.shape``, ``t.ndim``, ``t.T``, ``t.mT``, ``t.dtype``; NotImplemented otherwise."""
    if name == "shape":
        return UNKNOWN if t.shape is None else t.shape
    if name == "ndim":
        return _ndim(t, (), {})
    if name == "dtype":
        return Module(t.dtype) if t.dtype else UNKNOWN
    if name in ("T", "H"):
        return _unknown_like(t) if t.shape is None else Tensor(t.shape[::-1], t.dtype)
    if name in ("mT", "mH"):
        if t.shape is None or len(t.shape) < 2:
            return _unknown_like(t)
        return Tensor(t.shape[:-2] + (t.shape[-1], t.shape[-2]), t.dtype)
    return NotImplemented


def _slice_len(n, s: Slice):
    """The length of ``n``-long dim sliced by ``s`` (Python slice semantics)."""
    lo, hi, step = s.lower, s.upper, 1 if s.step is None else s.step
    if not _is_int(step) or step <= 0:
        return UNKNOWN
    if all(x is None or _is_int(x) for x in (lo, hi)) and _is_int(n):
        return len(range(*slice(lo, hi, step).indices(n)))
    if step != 1 or not is_dim(n):
        return UNKNOWN
    # Named bounds: exact only where the clamp is provably a no-op (symbols are sizes, >= 0).
    start = _bound(n, 0 if lo is None else lo)
    stop = _bound(n, n if hi is None else hi)
    if start is UNKNOWN or stop is UNKNOWN:
        return UNKNOWN
    length = sub(stop, start)
    return length if provably_nonneg(length) else UNKNOWN


def _bound(n, b):
    """A slice bound as an offset in 0..n; a negative int counts from the end."""
    if _is_int(b) and b < 0:
        b = add(n, b)
    if not is_dim(b) or not provably_nonneg(b) or not provably_nonneg(sub(n, b)):
        return UNKNOWN
    return b


def index(t: Tensor, idx):
    """``t[idx]``: ints drop a dim, slices keep it, None adds one, ``...`` fills."""
    parts = idx if isinstance(idx, tuple) else (idx,)
    if t.shape is None:
        return _unknown_like(t)
    takes = [_consumes(p) for p in parts]
    if None in takes:
        return _unknown_like(t)
    consumed = sum(cast("list[int]", takes))  # no None: returned above
    if sum(1 for p in parts if p is Ellipsis) > 1 or consumed > len(t.shape):
        return _unknown_like(t)
    if sum(1 for p in parts if _advanced(p)) > 1:
        return _unknown_like(t)  # advanced indices broadcast together: not modelled
    shape = list(t.shape)
    out: list = []
    pos = 0
    for p in parts:
        if p is Ellipsis:
            fill = len(shape) - consumed
            out.extend(shape[pos:pos + fill])
            pos += fill
        elif p is None:
            out.append(1)
        elif is_dim(p):
            pos += 1
        elif isinstance(p, Slice):
            out.append(_slice_len(shape[pos], p))
            pos += 1
        else:  # one tensor or list index
            k = cast(int, _consumes(p))  # not None: takes has no None
            out.extend(_advanced_dims(p))
            pos += k
    out.extend(shape[pos:])
    return Tensor(tuple(out), t.dtype)


def _advanced(p) -> bool:
    return isinstance(p, (Tensor, list, Seq))


def _consumes(p) -> int | None:
    """How many input dims one index part takes; None when unknown."""
    if p is None or p is Ellipsis:
        return 0
    if is_dim(p) or isinstance(p, Slice):
        return 1
    if isinstance(p, Tensor):
        if p.dtype in ("torch.bool", "torch.uint8"):
            return None if p.shape is None else len(p.shape)
        return 1
    if isinstance(p, (list, Seq)):
        items = _items(p)
        return 1 if items is not None and all(_is_int(x) for x in items) else None
    return None


def _advanced_dims(p) -> tuple:
    if isinstance(p, Tensor):
        if p.dtype in ("torch.bool", "torch.uint8"):
            return (UNKNOWN,)  # the count of true elements
        if p.dtype in ("torch.int64", "torch.int32") and p.shape is not None:
            return p.shape
        return (UNKNOWN,)  # dtype unknown: a mask or an index, one dim either way for 1-D
    return (len(cast(tuple, _items(p))),)  # a list or Seq whose _consumes is not None


# ---------------------------------------------------------------- binary ops

def _broadcast_dim(a, b):
    if _is_int(a) and a == 1:
        return b
    if _is_int(b) and b == 1:
        return a
    if proven_eq(a, b):
        return a
    # One side a known size other than 1: a valid program has that size there.
    if _is_int(a):
        return a
    if _is_int(b):
        return b
    return UNKNOWN


def broadcast_shapes(a: tuple | None, b: tuple | None) -> tuple | None:
    if a is None or b is None:
        return None
    n = max(len(a), len(b))
    a = (1,) * (n - len(a)) + tuple(a)
    b = (1,) * (n - len(b)) + tuple(b)
    return tuple(_broadcast_dim(x, y) for x, y in zip(a, b))


def _result_dtype(a, b) -> str | None:
    if isinstance(a, Tensor) and isinstance(b, Tensor):
        return a.dtype if a.dtype == b.dtype else None
    t, n = (a, b) if isinstance(a, Tensor) else (b, a)
    if isinstance(n, float) and t.dtype not in _FLOATS:
        return None  # an int tensor times a float is float
    return t.dtype


_FLOATS = {"torch.float64", "torch.float32", "torch.float16", "torch.bfloat16"}


def binary(a, b):
    """An elementwise op (``a + b``, ``a * b``, ...) with broadcasting; a Python
    number (or a named int) takes the tensor's shape."""
    if isinstance(a, Tensor) and isinstance(b, Tensor):
        return Tensor(broadcast_shapes(a.shape, b.shape), _result_dtype(a, b))
    if isinstance(a, Tensor) and (isinstance(b, (int, float)) or is_dim(b)):
        return Tensor(a.shape, _result_dtype(a, b))
    if isinstance(b, Tensor) and (isinstance(a, (int, float)) or is_dim(a)):
        return Tensor(b.shape, _result_dtype(b, a))
    return NotImplemented


def matmul(a, b):
    """``a @ b`` (torch.matmul): 1-D operands are promoted and the batch dims broadcast."""
    if not (isinstance(a, Tensor) and isinstance(b, Tensor)):
        return NotImplemented
    dtype = a.dtype if a.dtype == b.dtype else None
    if a.shape is None or b.shape is None or not a.shape or not b.shape:
        return Tensor(None, dtype)
    if len(a.shape) == 1 and len(b.shape) == 1:
        return Tensor((), dtype)
    sa = (1,) + a.shape if len(a.shape) == 1 else a.shape
    sb = b.shape + (1,) if len(b.shape) == 1 else b.shape
    batch = broadcast_shapes(sa[:-2], sb[:-2])
    out = batch + (sa[-2], sb[-1])
    if len(a.shape) == 1:
        out = out[:-2] + out[-1:]
    if len(b.shape) == 1:
        out = out[:-1]
    return Tensor(out, dtype)


# ---------------------------------------------------------------- which calls this model answers

_ROOTS = ("torch.", "einops.")
# torch's environment (device, backends, CUDA runtime): libmodels/environment.py's, no shapes
_ENVIRONMENT = ("torch.cuda.", "torch.backends.")
_ENVIRONMENT_NAMES = frozenset({"torch.device"})
_LAYERS = "torch.nn."


def model_of(qualname: str):
    """The entry point that answers a call of the library name ``qualname``: ``layer`` for a
    ``torch.nn`` class (``torch.nn.Linear``), ``function`` for other torch and einops names,
    None for torch's environment calls and every other library."""
    if not qualname.startswith(_ROOTS) or qualname.startswith(_ENVIRONMENT) or qualname in _ENVIRONMENT_NAMES:
        return None
    if qualname.startswith(_LAYERS) and qualname[len(_LAYERS):len(_LAYERS) + 1].isupper():
        return layer
    return function


# ---------------------------------------------------------------- torch.* functions

_FACTORIES = {"randn", "rand", "zeros", "ones", "empty"}
_LIKE = {"zeros_like", "ones_like", "empty_like", "rand_like", "randn_like", "full_like", "randint_like"}
_FUNCTIONAL = "torch.nn.functional."


def function(qualname: str, args=(), kwargs=None):
    """The value of a call to a torch/einops function, or NotImplemented."""
    args = tuple(args)
    kwargs = dict(kwargs or {})
    if qualname.startswith("torch.Tensor."):
        if not args or not isinstance(args[0], Tensor):
            return NotImplemented
        return tensor_method(args[0], qualname[len("torch.Tensor."):], args[1:], kwargs)
    if qualname.startswith("einops."):
        return _einops(qualname[len("einops."):], args, kwargs)
    if qualname.startswith(_FUNCTIONAL):
        return _functional(qualname[len(_FUNCTIONAL):], args, kwargs)
    if not qualname.startswith("torch.") or qualname.count(".") != 1:
        return NotImplemented
    name = _METHOD_ALIASES.get(qualname[len("torch."):], qualname[len("torch."):])
    dtype = dtype_of(kwargs.get("dtype"))
    if name in _FACTORIES:
        size = (kwargs["size"],) if "size" in kwargs else args
        shape = _size_arg(size) if size else None
        return Tensor(shape, dtype)
    if name == "full":
        b = _bind(args, kwargs, ("size", "fill_value"))
        return NotImplemented if b is None or "size" not in b else Tensor(_size_arg((b["size"],)), dtype)
    if name == "randint":
        size = kwargs.get("size", args[-1] if args else None)
        if size is None or is_dim(size):
            return NotImplemented
        return Tensor(_size_arg((size,)), dtype or "torch.int64")
    if name == "normal":
        if "size" in kwargs or len(args) >= 3:
            return Tensor(_size_arg((kwargs.get("size", args[2] if len(args) > 2 else None),)), dtype)
        ts = [a for a in args[:2] if isinstance(a, Tensor)]
        if not ts:
            return NotImplemented
        return Tensor(ts[0].shape if len(ts) == 1 else broadcast_shapes(ts[0].shape, ts[1].shape), dtype)
    if name == "arange":
        return _arange(args, kwargs, dtype)
    if name in _LIKE:
        src = args[0] if args else kwargs.get("input")
        return Tensor(src.shape, dtype or src.dtype) if isinstance(src, Tensor) else NotImplemented
    if name == "cat":
        return _cat(args, kwargs)
    if name == "stack":
        return _stack(args, kwargs)
    if name == "einsum":
        return _einsum(args)
    if name == "matmul":
        return matmul(args[0], args[1]) if len(args) == 2 else NotImplemented
    if name in ("split", "chunk", "unbind", "transpose", "permute", "reshape", "flatten", "narrow",
                "repeat_interleave", "squeeze", "unsqueeze", "movedim", "unflatten", "t", "sum", "mean", "amax",
                "amin") or name in SAME_SHAPE:
        src = args[0] if args else kwargs.pop("input", None)
        if not isinstance(src, Tensor):
            return NotImplemented
        if name == "split" and "split_size_or_sections" in kwargs:
            kwargs["split_size"] = kwargs.pop("split_size_or_sections")
        return tensor_method(src, name, args[1:], kwargs)
    if name in _BINARY and len(args) == 2:
        return binary(args[0], args[1])
    return NotImplemented


def _arange(args, kwargs, dtype):
    b = _bind(args, kwargs, ("start", "end", "step")) if len(args) > 1 else _bind(args, kwargs, ("end",))
    if b is None:
        return NotImplemented
    start, end, step = b.get("start", 0), b.get("end", UNKNOWN), b.get("step", 1)
    if all(_is_int(x) for x in (start, end, step)) and step:
        n = max(math.ceil((end - start) / step), 0)
        return Tensor((n,), dtype or "torch.int64")
    if is_dim(end) and _is_int(start) and start == 0 and step == 1:
        return Tensor((_dim(end),), dtype or "torch.int64")
    return Tensor((UNKNOWN,), dtype)


def _tensor_list(v) -> tuple | None:
    items = _items(v)
    if items is None or not all(isinstance(x, Tensor) for x in items):
        return None
    return items


def _cat(args, kwargs):
    b = _bind(args, kwargs, ("tensors", "dim"), {"dim": 0})
    if b is None or "tensors" not in b:
        return NotImplemented
    ts = _tensor_list(b["tensors"])
    if ts is None:
        more = b["tensors"].more if isinstance(b["tensors"], Seq) else None
        return Tensor(None, more.dtype) if isinstance(more, Tensor) else Tensor(None)
    # Legacy rule: 1-D empty tensors are skipped.
    ts = tuple(x for x in ts if x.shape != (0,)) or ts[:1]
    if not ts:
        return NotImplemented
    dtype = ts[0].dtype if all(x.dtype == ts[0].dtype for x in ts) else None
    ranks = {len(x.shape) for x in ts if x.shape is not None}
    if len(ranks) != 1:
        return Tensor(None, dtype)
    rank = ranks.pop()
    i = _axis(b["dim"], rank)
    if i is None:
        return Tensor(None, dtype)
    total: Any = 0
    out = [UNKNOWN] * rank
    for x in ts:
        if x.shape is None:
            total = UNKNOWN
            continue
        total = add(total, x.shape[i])
        for k, d in enumerate(x.shape):
            if k != i and out[k] is UNKNOWN:
                out[k] = d  # every input has the same size here in a valid program
    out[i] = total
    return Tensor(tuple(out), dtype)


def _stack(args, kwargs):
    b = _bind(args, kwargs, ("tensors", "dim"), {"dim": 0})
    if b is None or "tensors" not in b:
        return NotImplemented
    ts = _tensor_list(b["tensors"])
    if ts is None or not ts:
        return Tensor(None)
    dtype = ts[0].dtype if all(x.dtype == ts[0].dtype for x in ts) else None
    shapes = [x.shape for x in ts if x.shape is not None]
    if not shapes:
        return Tensor(None, dtype)
    base = tuple(next((d for d in col if d is not UNKNOWN), UNKNOWN) for col in zip(*shapes))
    i = _axis(b["dim"], len(base) + 1)
    if i is None:
        return Tensor(None, dtype)
    return Tensor(base[:i] + (len(ts),) + base[i:], dtype)


def _einsum(args):
    if not args or not isinstance(args[0], str):
        return NotImplemented
    operands = args[1:]
    if len(operands) == 1 and _tensor_list(operands[0]) is not None:
        operands = _tensor_list(operands[0])
    spec = args[0].replace(" ", "")
    lhs, arrow, rhs = spec.partition("->")
    ins = lhs.split(",")
    if len(ins) != len(operands) or not all(isinstance(t, Tensor) for t in operands):
        return NotImplemented
    sizes: dict = {}
    ell: tuple | None = ()
    for sub_, t in zip(ins, operands):
        letters = sub_.replace("...", "")
        if t.shape is None:
            if "..." in sub_:
                ell = None
            continue
        n_ell = len(t.shape) - len(letters)
        if n_ell < 0 or (n_ell and "..." not in sub_):
            return Tensor(None)
        k = sub_.find("...")
        dims = list(t.shape)
        if k >= 0:
            ell = broadcast_shapes(ell, tuple(dims[k:k + n_ell])) if ell is not None else None
            dims = dims[:k] + dims[k + n_ell:]
        for ch, d in zip(letters, dims):
            sizes[ch] = _broadcast_dim(sizes[ch], d) if ch in sizes else d
    if not arrow:
        counts = {ch: lhs.count(ch) for ch in set(lhs.replace(",", "").replace(".", ""))}
        rhs = ("..." if "..." in lhs else "") + "".join(sorted(ch for ch, c in counts.items() if c == 1))
    out: list = []
    for part in re.findall(r"\.\.\.|.", rhs):
        if part == "...":
            if ell is None:
                return Tensor(None)
            out.extend(ell)
        else:
            out.append(sizes.get(part, UNKNOWN))
    return Tensor(tuple(out))


def _functional(name: str, args, kwargs):
    src = args[0] if args else kwargs.get("input")
    if not isinstance(src, Tensor):
        return NotImplemented
    if name == "pad":
        b = _bind(args, kwargs, ("input", "pad", "mode", "value"))
        pads = None if b is None else _items(b.get("pad"))
        if pads is None or src.shape is None or len(pads) % 2 or len(pads) // 2 > len(src.shape):
            return _unknown_like(src)
        shape = list(src.shape)
        for k in range(len(pads) // 2):
            shape[-1 - k] = add(add(shape[-1 - k], _dim(pads[2 * k])), _dim(pads[2 * k + 1]))
        return Tensor(tuple(shape), src.dtype)
    if name == "linear":
        w = args[1] if len(args) > 1 else kwargs.get("weight")
        if not isinstance(w, Tensor):
            return NotImplemented
        if src.shape is None or w.shape is None or not src.shape:
            return _unknown_like(src)
        out = w.shape[0] if len(w.shape) == 2 else UNKNOWN
        return Tensor(src.shape[:-1] + ((out,) if len(w.shape) == 2 else ()), src.dtype)
    if name == "scaled_dot_product_attention":
        v = args[2] if len(args) > 2 else kwargs.get("value")
        if not isinstance(v, Tensor) or src.shape is None or v.shape is None or not v.shape:
            return _unknown_like(src)
        return Tensor(src.shape[:-1] + v.shape[-1:], src.dtype)
    if name == "embedding":
        w = args[1] if len(args) > 1 else kwargs.get("weight")
        if not isinstance(w, Tensor) or src.shape is None or w.shape is None or len(w.shape) != 2:
            return NotImplemented
        return Tensor(src.shape + w.shape[1:], w.dtype)
    if name in SAME_SHAPE:
        return src
    return NotImplemented


# ---------------------------------------------------------------- einops

def _einops(name: str, args, kwargs):
    if name not in ("rearrange", "repeat", "reduce") or len(args) < 2 or not isinstance(args[1], str):
        return NotImplemented
    src = args[0]
    if not isinstance(src, Tensor):
        ts = _tensor_list(src)
        if ts is None:
            return NotImplemented
        src = _stack((ts,), {})
    lhs, arrow, rhs = args[1].partition("->")
    left, right = parse_side(lhs), parse_side(rhs)
    if not arrow or left is None or right is None:
        return NotImplemented
    axes = {k: _dim(v) for k, v in kwargs.items() if k != "reduction"}
    out = einops_shape(src.shape, left, right, axes)
    return Tensor(out, src.dtype)


# ---------------------------------------------------------------- torch.nn layers

@dataclass(frozen=True)
class LayerSpec:
    """What a ``torch.nn`` layer class is to the shape model: its constructor's parameters
    (positional order, as ``inspect.signature`` lists them), those that are sizes, and how
    its output follows from its input: ``last`` (the last dim becomes ``out``), ``append``
    (``out`` is appended: an index lookup), ``same`` (the input's shape), ``value`` (the
    object is its first argument: ``nn.Parameter(t)`` is ``t``'s shape)."""

    params: tuple
    sizes: tuple = ()
    output: str = "same"
    out: str = ""


# Constructor parameters as version_matrix/api/torch.toml [module."torch.nn"] records them for every
# release 2.0.0-2.15.0 (read from the wheels: Linear, LazyLinear, Embedding, Parameter).
_LINEAR = LayerSpec(("in_features", "out_features", "bias", "device", "dtype"),
                    ("in_features", "out_features"), "last", "out_features")
LAYERS = {
    "Linear": _LINEAR,
    "LazyLinear": LayerSpec(("out_features", "bias", "device", "dtype"), ("out_features",), "last", "out_features"),
    "Embedding": LayerSpec(("num_embeddings", "embedding_dim", "padding_idx", "max_norm", "norm_type",
                            "scale_grad_by_freq", "sparse", "_weight", "_freeze", "device", "dtype"),
                           ("num_embeddings", "embedding_dim"), "append", "embedding_dim"),
    "Parameter": LayerSpec(("data", "requires_grad"), (), "value"),
    **{name: LayerSpec(()) for name in (
        "LayerNorm", "RMSNorm", "Dropout", "GELU", "SiLU", "ReLU", "Identity", "Tanh", "Sigmoid", "Softmax",
        "LeakyReLU", "Mish", "GroupNorm", "BatchNorm1d", "BatchNorm2d", "Hardswish", "ELU", "Softplus")},
}


def _layer_spec(qualname: str) -> LayerSpec | None:
    if not qualname.startswith(_LAYERS):
        return None
    return LAYERS.get(qualname.rsplit(".", 1)[1])


def layer(qualname: str, args=(), kwargs=None):
    """The Layer a ``torch.nn.X(...)`` call builds (its value, for ``nn.Parameter``), or NotImplemented."""
    kwargs = dict(kwargs or {})
    spec = _layer_spec(qualname)
    if spec is None:
        return NotImplemented
    kind = qualname.rsplit(".", 1)[1]
    if spec.output == "value":
        b = _bind(args, kwargs, spec.params)
        data = None if b is None else b.get("data")
        return data if isinstance(data, Tensor) else NotImplemented
    if spec.output == "same":
        return Layer(kind, tuple(sorted((k, v) for k, v in kwargs.items() if k == "dtype")))
    b = _bind(args, kwargs, spec.params)
    if b is None:
        return NotImplemented
    return Layer(kind, tuple(sorted((k, v) for k, v in b.items() if k != "device")))  # by name: one form per layer


def apply_layer(lay: Layer, x):
    """The output of calling a layer on ``x``: a tensor whatever ``x`` is (of unknown
    shape when ``x`` is not a known tensor)."""
    spec = LAYERS.get(lay.kind)
    if spec is None:
        return NotImplemented
    if spec.output == "append":
        dtype = dtype_of(lay.param("dtype", None)) or "torch.float32"
        if not isinstance(x, Tensor) or x.shape is None:
            return Tensor(None, dtype)
        return Tensor(x.shape + (_dim(lay.param(spec.out)),), dtype)
    if not isinstance(x, Tensor):
        return Tensor(None)
    if spec.output == "last":
        if x.shape is None or not x.shape:
            return _unknown_like(x)
        return Tensor(x.shape[:-1] + (_dim(lay.param(spec.out)),), x.dtype)
    return x


# ---------------------------------------------------------------- which arguments are sizes

@dataclass(frozen=True)
class Sizes:
    """The arguments of an operation that are sizes, so the value model reads them as dims: a
    name it cannot evaluate becomes a symbol for that one value (values/symbolic.py), and
    ``view(b, s, h, -1)`` of ``h * 192`` is 192 whatever ``h`` is. ``ints``: positions and
    keywords that are one size; ``shapes``: those that are a size or a sequence of them (read
    item by item only when written as a tuple or list: a name there may be either);
    ``varargs``: every positional argument is one size when there are several, a shape when
    there is one (``view(b, s, h, d)`` / ``view(shape)``); ``all_keywords``: every keyword is
    one size (einops axis lengths). Positions and names as the operation's signature has them
    (version_matrix/api/torch.toml; einops 0.8's ``rearrange(tensor, pattern, **axes_lengths)``)."""

    ints: tuple = ()
    shapes: tuple = ()
    varargs: bool = False
    all_keywords: bool = False


NO_SIZES = Sizes()
_VARARGS = Sizes(shapes=("size",), varargs=True)
METHOD_SIZES = {
    "view": _VARARGS, "reshape": Sizes(shapes=("shape",), varargs=True), "expand": _VARARGS,
    "repeat": Sizes(shapes=("repeats",), varargs=True), "new_empty": _VARARGS, "new_zeros": _VARARGS,
    "new_ones": _VARARGS, "new_full": Sizes(shapes=(0, "size")),
    "split": Sizes(shapes=(0, "split_size", "split_size_or_sections")), "split_with_sizes": Sizes(shapes=(0, "split_sizes")),
    "unflatten": Sizes(shapes=(1, "sizes")), "narrow": Sizes(ints=(2, "length")),
}
_EINOPS = Sizes(all_keywords=True)
FUNCTION_SIZES = {
    **{f"torch.{f}": _VARARGS for f in _FACTORIES},
    "torch.full": Sizes(shapes=(0, "size")), "torch.reshape": Sizes(shapes=(1, "shape")),
    "torch.split": Sizes(shapes=(1, "split_size_or_sections")), "torch.unflatten": Sizes(shapes=(2, "sizes")),
    "torch.narrow": Sizes(ints=(3, "length")),
    "einops.rearrange": _EINOPS, "einops.repeat": _EINOPS, "einops.reduce": _EINOPS,
}


def size_args(qualname: str) -> Sizes:
    """Which arguments of a call of ``qualname`` are sizes (see Sizes)."""
    spec = _layer_spec(qualname)
    if spec is not None:
        return Sizes(ints=tuple(i for i, p in enumerate(spec.params) if p in spec.sizes) + spec.sizes)
    return FUNCTION_SIZES.get(qualname, NO_SIZES)


def method_size_args(name: str) -> Sizes:
    """Which arguments of the tensor method ``name`` are sizes."""
    return METHOD_SIZES.get(_METHOD_ALIASES.get(name, name), NO_SIZES)
