"""A small symbolic evaluator: the value of an expression in one *world*.

A world fixes the GPU arch and the torch release, so
``torch.cuda.get_device_capability()`` is ``(9, 0)`` on sm_90 and
``torch.__version__`` is the pinned release. Anything the engine cannot know
(user data, runtime flags) is ``UNKNOWN`` and comparisons with it are
unknown too, so guards never prove more than they say. The same evaluator
infers tensor shapes (``torch.randn(b, s, h, 128)``) for the attention rule.
Nothing is imported or executed: this walks the syntax tree.
"""

from __future__ import annotations

import operator
from dataclasses import dataclass
from typing import Any, Callable

import libcst as cst
from packaging.version import InvalidVersion, Version

from . import probes
from .index import OPAQUE, Opaque, Qual, Unpack, assign_bindings, import_bindings
from .values import UNKNOWN, Module, Tensor  # noqa: F401 (re-exported)


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


def truth(v) -> bool | Any:
    """Three-valued truth: True, False or UNKNOWN."""
    if v is UNKNOWN or isinstance(v, (Tensor, Module, Opaque)):
        return UNKNOWN
    try:
        return bool(v)
    except Exception:
        return UNKNOWN


_CMP = {
    cst.GreaterThan: operator.gt,
    cst.GreaterThanEqual: operator.ge,
    cst.LessThan: operator.lt,
    cst.LessThanEqual: operator.le,
    cst.Equal: operator.eq,
    cst.NotEqual: operator.ne,
}
_BIN = {
    cst.Add: operator.add,
    cst.Subtract: operator.sub,
    cst.Multiply: operator.mul,
    cst.FloorDivide: operator.floordiv,
    cst.Modulo: operator.mod,
}
TENSOR_FACTORIES = {"randn", "rand", "zeros", "ones", "empty", "full", "randint", "normal"}
LIKE_FACTORIES = {"randn_like", "rand_like", "zeros_like", "ones_like", "empty_like", "full_like"}
SAME_SHAPE_METHODS = {
    "to", "cuda", "cpu", "half", "bfloat16", "float", "double", "contiguous", "clone", "detach",
    "requires_grad_", "type", "abs", "neg", "mul", "div", "add", "sub", "__mul__", "softmax", "sigmoid",
}
_CONST_NAMES = {"True": True, "False": False, "None": None}


def _int_or_unknown(v):
    return v if isinstance(v, int) and not isinstance(v, bool) else UNKNOWN


class Evaluator:
    """Evaluates expressions of one module in one world.

    ``lookup(name)`` gives a name's binding (local scopes, then the module
    index); ``resolve(node)`` its qualified name; ``facts`` answers what the
    matrix knows (``attr_exists``) for the world's releases.
    """

    MAX_DEPTH = 12

    def __init__(
        self,
        lookup: Callable[[str], Any],
        resolve: Callable[[cst.BaseExpression], str | None],
        world,
        capability: Callable[[str], tuple[int, int]],
        python: tuple[int, int],
        cuda: str | None,
        attr_exists: Callable[[str, Any], Any],
    ) -> None:
        self.lookup = lookup
        self.resolve = resolve
        self.world = world
        self.capability = capability
        self.python = python
        self.cuda = cuda
        self.attr_exists = attr_exists
        self.depth = 0
        self._frames: list[dict[str, Any]] = []
        self.touched = False  # did the value depend on the world (GPU arch, torch release)?

    # -- names ---------------------------------------------------------------
    def _name(self, name: str):
        for frame in reversed(self._frames):
            if name in frame:
                return self._binding(frame[name])
        if name in _CONST_NAMES:
            return _CONST_NAMES[name]
        return self._binding(self.lookup(name))

    def _binding(self, b):
        if b is None or b is OPAQUE or isinstance(b, Opaque):
            return UNKNOWN
        if isinstance(b, Qual):
            return self._qual_value(b.name)
        if isinstance(b, Unpack):
            seq = self.eval(b.expr)
            if isinstance(seq, tuple) and b.index < len(seq):
                return seq[b.index]
            return UNKNOWN
        if isinstance(b, (cst.FunctionDef, cst.ClassDef)):
            return UNKNOWN
        if isinstance(b, cst.BaseExpression):
            return self.eval(b)
        if isinstance(b, (int, str, tuple)):
            return b
        return UNKNOWN

    def _qual_value(self, q: str):
        v = probes.attribute_value(q)  # torch.version.hip and the like (probes.toml)
        if v is not NotImplemented:
            return v
        if q in ("torch.__version__",):
            self.touched = True
        if q == "torch.__version__":
            return TorchVersion(str(self.world.torch)) if self.world.torch is not None else UNKNOWN
        if q == "torch.version.cuda":
            return self.cuda if self.cuda else UNKNOWN
        if q in ("typing.TYPE_CHECKING", "typing_extensions.TYPE_CHECKING"):
            return False  # only type checkers enter these blocks
        if q == "sys.version_info":
            return PyVersionInfo((self.python[0], self.python[1], 0, "final", 0))
        return Module(q)

    # -- expressions ---------------------------------------------------------
    def eval(self, node: cst.BaseExpression):
        if self.depth > self.MAX_DEPTH:
            return UNKNOWN
        self.depth += 1
        try:
            return self._eval(node)
        except (TypeError, ValueError, ZeroDivisionError, IndexError, AttributeError, KeyError, RecursionError):
            return UNKNOWN
        finally:
            self.depth -= 1

    def _eval(self, node):
        if isinstance(node, cst.Integer):
            return int(node.value.replace("_", ""), 0)
        if isinstance(node, cst.Float):
            return float(node.value.replace("_", ""))
        if isinstance(node, (cst.SimpleString, cst.ConcatenatedString)):
            v = node.evaluated_value
            return v if isinstance(v, str) else UNKNOWN
        if isinstance(node, cst.Name):
            return self._name(node.value)
        if isinstance(node, cst.Attribute):
            return self._attribute(node)
        if isinstance(node, (cst.Tuple, cst.List)):
            items = []
            for el in node.elements:
                if isinstance(el, cst.StarredElement):
                    return UNKNOWN
                items.append(self.eval(el.value))
            return tuple(items)
        if isinstance(node, cst.UnaryOperation):
            v = self.eval(node.expression)
            if isinstance(node.operator, cst.Not):
                t = truth(v)
                return UNKNOWN if t is UNKNOWN else (not t)
            if v is UNKNOWN:
                return UNKNOWN
            if isinstance(node.operator, cst.Minus):
                return -v
            if isinstance(node.operator, cst.Plus):
                return +v
            return UNKNOWN
        if isinstance(node, cst.BinaryOperation):
            op = _BIN.get(type(node.operator))
            a, b = self.eval(node.left), self.eval(node.right)
            if op is None or a is UNKNOWN or b is UNKNOWN:
                return UNKNOWN
            if not all(isinstance(x, (int, float, str, tuple)) for x in (a, b)):
                return UNKNOWN
            return op(a, b)
        if isinstance(node, cst.BooleanOperation):
            return self._boolop(node)
        if isinstance(node, cst.Comparison):
            return self._compare(node)
        if isinstance(node, cst.Subscript):
            return self._subscript(node)
        if isinstance(node, cst.IfExp):
            t = truth(self.eval(node.test))
            if t is UNKNOWN:
                a, b = self.eval(node.body), self.eval(node.orelse)
                return a if _same(a, b) else UNKNOWN
            return self.eval(node.body if t else node.orelse)
        if isinstance(node, cst.Call):
            return self._call(node)
        return UNKNOWN

    def _boolop(self, node: cst.BooleanOperation):
        left = self.eval(node.left)
        lt = truth(left)
        is_and = isinstance(node.operator, cst.And)
        if lt is not UNKNOWN:
            if is_and and not lt:
                return left
            if not is_and and lt:
                return left
            return self.eval(node.right)
        rt = truth(self.eval(node.right))
        if is_and and rt is False:
            return False
        if not is_and and rt is True:
            return True
        return UNKNOWN

    def _compare(self, node: cst.Comparison):
        left = self.eval(node.left)
        result = True
        for target in node.comparisons:
            right = self.eval(target.comparator)
            op = type(target.operator)
            if left is UNKNOWN or right is UNKNOWN:
                r = UNKNOWN
            elif op in _CMP:
                r = _CMP[op](left, right)
            elif op in (cst.In, cst.NotIn):
                r = (left in right) if isinstance(right, (tuple, str)) else UNKNOWN
                if r is not UNKNOWN and op is cst.NotIn:
                    r = not r
            elif op in (cst.Is, cst.IsNot):
                r = (left is right) if left is None or right is None else UNKNOWN
                if r is not UNKNOWN and op is cst.IsNot:
                    r = not r
            else:
                r = UNKNOWN
            if r is UNKNOWN:
                result = UNKNOWN
            elif not r:
                return False
            left = right
        return result

    def _subscript(self, node: cst.Subscript):
        base = self.eval(node.value)
        if not isinstance(base, tuple) or len(node.slice) != 1:
            return UNKNOWN
        sl = node.slice[0].slice
        if isinstance(sl, cst.Index):
            i = self.eval(sl.value)
            return base[i] if isinstance(i, int) else UNKNOWN
        if isinstance(sl, cst.Slice):
            parts = [None if p is None else self.eval(p) for p in (sl.lower, sl.upper, sl.step)]
            if any(p is UNKNOWN for p in parts):
                return UNKNOWN
            return type(base)(base[slice(*parts)]) if isinstance(base, PyVersionInfo) else base[slice(*parts)]
        return UNKNOWN

    def _attribute(self, node: cst.Attribute):
        q = self.resolve(node)
        if q is not None:
            v = self._qual_value(q)
            if not isinstance(v, Module):
                return v
            base = self.eval(node.value)
            if not isinstance(base, Module) and base is not UNKNOWN:
                return self._value_attr(base, node.attr.value)
            return v
        return self._value_attr(self.eval(node.value), node.attr.value)

    def _value_attr(self, base, attr: str):
        if isinstance(base, DeviceProps) and attr in ("major", "minor"):
            return getattr(base, attr)
        if isinstance(base, PyVersionInfo) and attr in ("major", "minor"):
            return getattr(base, attr)
        if isinstance(base, Tensor):
            if attr == "shape":
                return base.shape if base.shape is not None else UNKNOWN
            if attr == "ndim":
                return len(base.shape) if base.shape is not None else UNKNOWN
            if attr in ("T", "mT"):
                return UNKNOWN
        if isinstance(base, Version) and attr in ("major", "minor", "micro", "release", "base_version"):
            return getattr(base, attr)
        return UNKNOWN

    # -- calls ---------------------------------------------------------------
    def _args(self, node: cst.Call):
        pos, kw = [], {}
        for a in node.args:
            if a.star:
                return None, None
            if a.keyword is not None:
                kw[a.keyword.value] = a.value
            else:
                pos.append(a.value)
        return pos, kw

    def _call(self, node: cst.Call):
        func = node.func
        q = self.resolve(func)
        pos, kw = self._args(node)
        if pos is None:
            return UNKNOWN
        if q is not None:
            v = self._known_call(q, pos, kw)
            if v is not NotImplemented:
                return v
        if isinstance(func, cst.Name):
            v = self._builtin_or_helper(func.value, pos, kw)
            if v is not NotImplemented:
                return v
        if isinstance(func, cst.Attribute):
            base = self.eval(func.value)
            if isinstance(base, Tensor):
                return self._tensor_method(base, func.attr.value, pos, kw)
            if isinstance(base, TorchVersion) and func.attr.value == "split":
                return UNKNOWN
        return UNKNOWN

    def _known_call(self, q: str, pos, kw):
        if q.startswith("torch.cuda.get_device") or q == "torch.cuda.is_bf16_supported":
            self.touched = True
        arch_cap = self.capability(self.world.arch)
        v = probes.call_value(q, arch_cap, self.cuda, pos, kw, self.eval)  # te.is_fp8_available() ... (probes.toml)
        if v is not NotImplemented:
            self.touched = True
            return v
        if q == "torch.cuda.get_device_capability":
            return arch_cap
        if q == "torch.cuda.get_device_properties":
            return DeviceProps(*arch_cap)
        if q == "torch.cuda.is_bf16_supported":
            # True from sm_80; below that newer releases may emulate, so unknown.
            return True if arch_cap[0] >= 8 else UNKNOWN
        if q in ("torch.cuda.is_available", "torch.backends.cuda.is_built"):
            return True  # the target is a GPU fleet
        if q in ("packaging.version.parse", "packaging.version.Version", "pkg_resources.parse_version"):
            if len(pos) == 1:
                v = self.eval(pos[0])
                if isinstance(v, str):
                    try:
                        return Version(str(v))
                    except InvalidVersion:
                        return UNKNOWN
            return UNKNOWN
        if q.startswith("torch.") and q.rsplit(".", 1)[1] in TENSOR_FACTORIES and q.count(".") == 1:
            return self._factory(q.rsplit(".", 1)[1], pos, kw)
        if q.startswith("torch.") and q.rsplit(".", 1)[1] in LIKE_FACTORIES and q.count(".") == 1:
            base = self.eval(pos[0]) if pos else UNKNOWN
            return base if isinstance(base, Tensor) else Tensor(None)
        return NotImplemented

    def _factory(self, name: str, pos, kw):
        if name == "randint":
            size = pos[2] if len(pos) >= 3 else kw.get("size")
            sizes = [size] if size is not None else []
        elif name == "full":
            sizes = pos[:1] if pos else ([kw["size"]] if "size" in kw else [])
        elif name == "normal":
            return Tensor(None)
        else:
            sizes = pos if pos else ([kw["size"]] if "size" in kw else [])
        return Tensor(self._shape(sizes))

    def _shape(self, args) -> tuple | None:
        if len(args) == 1:
            v = self.eval(args[0])
            if isinstance(v, tuple):
                return tuple(_int_or_unknown(x) for x in v)
            if v is UNKNOWN:
                return None  # a shape variable: rank unknown
            return (_int_or_unknown(v),)
        if not args:
            return None
        return tuple(_int_or_unknown(self.eval(a)) for a in args)

    def _tensor_method(self, base: Tensor, method: str, pos, kw):
        if method in ("view", "reshape", "expand", "unflatten_to"):
            if pos and all(isinstance(p, cst.BaseExpression) for p in pos):
                first = self.eval(pos[0]) if len(pos) == 1 else None
                if isinstance(first, Module):  # .view(torch.float8_e4m3fn): a dtype bitcast
                    return base
                shape = self._shape(pos)
                if shape is not None:
                    shape = tuple(UNKNOWN if d == -1 else d for d in shape)
                return Tensor(shape)
            return Tensor(None)
        if method in SAME_SHAPE_METHODS:
            return base
        if method in ("transpose", "swapaxes") and len(pos) == 2 and base.shape is not None:
            a, b = self.eval(pos[0]), self.eval(pos[1])
            if isinstance(a, int) and isinstance(b, int):
                s = list(base.shape)
                s[a], s[b] = s[b], s[a]
                return Tensor(tuple(s))
            return Tensor(None)
        if method == "permute" and base.shape is not None:
            order = self._shape(pos)
            if order and all(isinstance(i, int) for i in order) and len(order) == len(base.shape):
                return Tensor(tuple(base.shape[i] for i in order))
            return Tensor(None)
        if method == "size":
            if not pos:
                return base.shape if base.shape is not None else UNKNOWN
            i = self.eval(pos[0])
            if isinstance(i, int) and base.shape is not None:
                return base.shape[i]
            return UNKNOWN
        return UNKNOWN

    def _builtin_or_helper(self, name: str, pos, kw):
        binding = None
        for frame in reversed(self._frames):
            if name in frame:
                binding = frame[name]
                break
        else:
            binding = self.lookup(name)
        if isinstance(binding, cst.FunctionDef):
            return self._call_helper(binding, pos, kw)
        if binding is not None:
            return NotImplemented  # shadowed builtin or an alias: not ours
        if name == "hasattr" and len(pos) == 2:
            attr = self.eval(pos[1])
            obj = self.resolve(pos[0])
            if isinstance(attr, str) and obj:
                self.touched = True
                return self.attr_exists(f"{obj}.{attr}", self.world)
            return UNKNOWN
        if name == "len" and len(pos) == 1:
            v = self.eval(pos[0])
            return len(v) if isinstance(v, tuple) else UNKNOWN
        if name in ("int", "tuple", "bool") and len(pos) == 1:
            v = self.eval(pos[0])
            if v is UNKNOWN:
                return UNKNOWN
            return {"int": int, "tuple": tuple, "bool": bool}[name](v)
        return NotImplemented

    def _call_helper(self, fn: cst.FunctionDef, pos, kw):
        """Run a small helper such as ``def is_hopper(): return cap[0] == 9``."""
        if len(self._frames) > 4:
            return UNKNOWN
        frame: dict[str, Any] = {}
        for p in (*fn.params.posonly_params, *fn.params.params, *fn.params.kwonly_params):
            frame[p.name.value] = OPAQUE
        if isinstance(fn.params.star_arg, cst.Param):
            frame[fn.params.star_arg.name.value] = OPAQUE
        if fn.params.star_kwarg is not None:
            frame[fn.params.star_kwarg.name.value] = OPAQUE
        self._frames.append(frame)
        try:
            body = fn.body.body if isinstance(fn.body, cst.IndentedBlock) else [fn.body]
            r = self._run_block(body, frame)
            return None if r is _FALLTHROUGH else r
        finally:
            self._frames.pop()

    def _run_block(self, stmts, frame):
        for stmt in stmts:
            if isinstance(stmt, cst.SimpleStatementLine):
                for small in stmt.body:
                    if isinstance(small, cst.Return):
                        return self.eval(small.value) if small.value is not None else None
                    if isinstance(small, cst.Assign):
                        for n, b in assign_bindings([t.target for t in small.targets], small.value):
                            frame[n] = b
                    elif isinstance(small, (cst.Expr, cst.Pass, cst.Import, cst.ImportFrom)):
                        if isinstance(small, (cst.Import, cst.ImportFrom)):
                            for n, b in import_bindings(small):
                                if n != "*":
                                    frame[n] = b
                        continue
                    else:
                        return UNKNOWN
            elif isinstance(stmt, cst.If):
                t = truth(self.eval(stmt.test))
                if t is UNKNOWN:
                    return UNKNOWN
                if t:
                    r = self._run_block(stmt.body.body, frame)
                    if r is not _FALLTHROUGH:
                        return r
                elif stmt.orelse is not None:
                    branch = [stmt.orelse] if isinstance(stmt.orelse, cst.If) else stmt.orelse.body.body
                    r = self._run_block(branch, frame)
                    if r is not _FALLTHROUGH:
                        return r
            else:
                return UNKNOWN
        return _FALLTHROUGH


class _Fallthrough:
    __slots__ = ()


_FALLTHROUGH: Any = _Fallthrough()


def _same(a, b) -> bool:
    try:
        return a is not UNKNOWN and b is not UNKNOWN and type(a) is type(b) and a == b
    except Exception:
        return False
