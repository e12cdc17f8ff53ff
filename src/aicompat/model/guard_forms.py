"""Guards that are not ``if`` statements: where a function, class or block
runs, read off decorators, test markers, kernel-selection hooks, imports in a
``try`` and ``enabled=`` switches.

- ``@pytest.mark.skipif(cond, ...)``, ``@unittest.skipIf(cond, ...)``,
  ``@unittest.skipUnless(cond, ...)`` on a test function or class, a marker
  alias (``requires_fp8 = pytest.mark.skipif(...)``), and ``pytestmark`` at
  module or class level: the body runs only where the skip condition may be
  false.
- A kernel or backend class whose ``is_supported()`` / ``can_implement()`` /
  ``can_use_*()`` rules out a world: a registry selects the class only where
  the check passes, so its other methods run only there (vLLM:
  ``is_supported_and_can_implement_kernel`` in
  vllm/model_executor/layers/quantization/kernels/scaled_mm/__init__.py calls
  ``kernel.is_supported(compute_capability)`` with ``major * 10 + minor``, then
  ``kernel.can_implement(config)``). ``get_min_capability()`` is not trusted:
  the mixed-precision registry reads it, the scaled_mm one does not, and
  scaled_mm/pytorch.py's ChannelWiseTorchScaledMMLinearKernel returns 94 yet
  is selected on CUDA.
- ``try: from m import f ... except ImportError:``: the rest of the try body,
  functions defined there included, runs only where the import succeeds.
- ``enabled=`` of an FP8 context manager: off where it is False, or where it
  is a switch that is off unless the user turns it on (a ``store_true`` flag,
  a parameter or ``kwargs.get`` with a False/None default).

Every narrowing comes from a condition the evaluator proves false in a world;
an unknown condition keeps every world. Which decorators skip, which variable holds a
module's marks, which methods are support checks and which parameter takes the capability
are the library table's (``fc.libs``: libmodels/testing.py, version_matrix/dispatch.toml
``[selection.*]``).
"""

from __future__ import annotations

from typing import Any

import libcst as cst

from ..syntax.index import OPAQUE, Opaque, dotted
from ..syntax.walk import walk
from ..values import Switch
from .evaluate import UNKNOWN, truth


# -- decorators and test markers -------------------------------------------------
def _marks(expr: cst.BaseExpression | None, fc, depth: int = 0) -> list[cst.Call]:
    """The skip marks an expression stands for: a call, an alias of one, or a list of them."""
    if expr is None or depth > 3:
        return []
    if isinstance(expr, (cst.List, cst.Tuple)):
        return [m for el in expr.elements for m in _marks(el.value, fc, depth + 1)]
    if isinstance(expr, cst.Name):
        b = fc.lookup(expr.value)
        return _marks(b, fc, depth + 1) if isinstance(b, cst.BaseExpression) else []
    if isinstance(expr, cst.Call):
        q = fc.resolve(expr.func)
        if q in fc.libs.skip_if or q in fc.libs.skip_unless:
            return [expr]
    return []


def _mark_worlds(mark: cst.Call, fc, worlds: frozenset) -> frozenset:
    """Where the body under this mark runs."""
    q = fc.resolve(mark.func)
    cond = None
    for i, a in enumerate(mark.args):
        if a.star:
            return worlds
        if (a.keyword is None and i == 0) or (a.keyword is not None and a.keyword.value == "condition"):
            cond = a.value
    if cond is None or isinstance(cond, (cst.SimpleString, cst.ConcatenatedString, cst.FormattedString)):
        return worlds  # no condition (skips always) or a string pytest evaluates: not ours
    yes, no = _split(cond, fc, worlds)
    return worlds & (yes if q in fc.libs.skip_unless else no)


def _split(cond, fc, worlds):
    from .guards import split_worlds

    return split_worlds(cond, worlds, fc.evaluator)


def narrow_by_marks(exprs, fc, worlds: frozenset) -> frozenset:
    """The worlds a test runs in under skip marks ``exprs`` (calls, aliases, lists)."""
    for e in exprs:
        for m in _marks(e, fc):
            worlds = _mark_worlds(m, fc, worlds)
    return worlds


def _class_marks(node: cst.ClassDef, fc):
    """The marks a class body assigns to its marks variable (``libs.marks_variable``)."""
    name = fc.libs.marks_variable
    for stmt in node.body.body if isinstance(node.body, cst.IndentedBlock) else ():
        if isinstance(stmt, cst.SimpleStatementLine):
            for small in stmt.body:
                if isinstance(small, cst.Assign) and any(
                    isinstance(t.target, cst.Name) and t.target.value == name for t in small.targets
                ):
                    yield small.value


def _is_test_item(node, fc) -> bool:
    """A module-level test function or class: what a module's ``pytestmark`` applies to."""
    if fc.index.bindings.get(node.name.value) is not node:
        return False
    name = node.name.value
    return name.startswith("test") if isinstance(node, cst.FunctionDef) else name.startswith("Test") or any(
        (fc.resolve(b.value) or "").endswith("TestCase") for b in node.bases
    )


def _module_marks(node, fc) -> list:
    b = fc.index.bindings.get(fc.libs.marks_variable)
    return [b] if isinstance(b, cst.BaseExpression) and _is_test_item(node, fc) else []


def marked_worlds(fn: cst.FunctionDef, fc) -> frozenset:
    """The target worlds a test function runs in by its own skip marks, its class's
    and the module's ``pytestmark`` (for a caller of a helper, which the walker is not in)."""
    exprs = [d.decorator for d in fn.decorators] + _module_marks(fn, fc)
    cls = fc.model.parent_of(fn)
    if isinstance(cls, cst.ClassDef):
        exprs += [d.decorator for d in cls.decorators] + list(_class_marks(cls, fc))
    worlds = fc.target.worlds()
    return narrow_by_marks(exprs, fc, worlds) if exprs else worlds


def function_worlds(node: cst.FunctionDef, fc):
    """The worlds a function's body runs in, given its decorators and its class: a
    frozenset, or the enclosing context's Lazy when nothing narrows it."""
    if fc.scopes:  # the scope the engine just opened for this function: enabled= defaults read it
        fc.state.setdefault("scope_fn", {})[id(fc.scopes[-1])] = (fc.scopes[-1], node)
    if _other_platform_method(node, fc):
        return frozenset()
    method = fc.state.get("method_worlds", {}).get(id(node))
    exprs = [d.decorator for d in node.decorators] + _module_marks(node, fc)
    if method is None and not exprs:
        return fc.ctx.world_set  # the enclosing worlds, decided when asked (a Lazy while a guard above is unasked)
    worlds = fc.ctx.worlds
    if method is not None:
        worlds = worlds & method
    return narrow_by_marks(exprs, fc, worlds) if exprs else worlds


def _other_platform_method(node: cst.FunctionDef, fc) -> bool:
    """``forward_hip``/``forward_musa``... of a layer that dispatches by platform
    (version_matrix/dispatch.toml): an NVIDIA fleet member runs ``forward_cuda``."""
    cls = fc.current_class
    if cls is None or fc.model.parent_of(node) is not cls:
        return False
    bases = {(dotted(b.value) or "").rsplit(".", 1)[-1] for b in cls.bases}
    for e in fc.matrix.section("dispatch.toml", "dispatch").values():
        if node.name.value in e["never_on_nvidia"] and bases & set(e["bases"]):
            return True
    return False


def _other_platform_class(node: cst.ClassDef, fc) -> bool:
    """A class its project's registry creates only on another platform (dispatch.toml
    ``platform_class``: sglang's Intel XPU attention backend)."""
    # "/" first: a path relative to the project root (linted from the repository) is a suffix too
    path = "/" + (getattr(fc, "path", "") or "").replace("\\", "/")
    for e in fc.matrix.section("dispatch.toml", "platform_class").values():
        if node.name.value in e["classes"] and path.endswith("/" + e["path_suffix"]):
            return True
    return False


def class_worlds(node: cst.ClassDef, fc) -> frozenset | None:
    """The worlds a class body runs in (None: unchanged); records the worlds of
    its methods when a support check rules worlds out."""
    if _other_platform_class(node, fc):
        return frozenset()
    exprs = [d.decorator for d in node.decorators] + list(_class_marks(node, fc)) + _module_marks(node, fc)
    worlds = narrow_by_marks(exprs, fc, fc.ctx.worlds) if exprs else None
    _record_selected_methods(node, fc, fc.ctx.worlds if worlds is None else worlds)
    return worlds


# -- kernel-selection hooks ----------------------------------------------------------
def _is_support(name: str, libs) -> bool:
    return name in libs.support_methods or name.startswith(libs.support_prefixes)


def _record_selected_methods(node: cst.ClassDef, fc, worlds: frozenset) -> None:
    methods = _methods(node)
    checks = list(_support_checks(node, fc).values())
    if not checks:
        return
    selected = worlds
    for fn in checks:
        selected = frozenset(w for w in selected if _may_select(fn, fc, w))
    if selected == worlds:
        return
    memo = fc.state.setdefault("method_worlds", {})
    for m in methods:
        if not _is_support(m.name.value, fc.libs):
            memo[id(m)] = selected


def _methods(node: cst.ClassDef) -> list[cst.FunctionDef]:
    body = node.body.body if isinstance(node.body, cst.IndentedBlock) else ()
    return [s for s in body if isinstance(s, cst.FunctionDef)]


def _support_checks(node: cst.ClassDef, fc, depth: int = 0) -> dict[str, cst.FunctionDef]:
    """The class's support checks by name, its own first, then those it inherits from
    base classes of the same file (vLLM's PerTensorTorchFP8ScaledMMLinearKernel keeps
    the is_supported of TorchFP8ScaledMMLinearKernel and adds can_implement)."""
    checks = {m.name.value: m for m in _methods(node) if _is_support(m.name.value, fc.libs)}
    if depth < 4:
        for base in node.bases:
            b = fc.lookup(base.value.value) if isinstance(base.value, cst.Name) else None
            if isinstance(b, cst.ClassDef) and b is not node:
                for name, fn in _support_checks(b, fc, depth + 1).items():
                    checks.setdefault(name, fn)
    return checks


def _may_select(fn: cst.FunctionDef, fc, world) -> bool:
    """Can this support check let the class be selected in ``world``?"""
    ev = fc.evaluator(world)
    arch = fc.matrix.archs.get(world.arch)
    cap = arch.capability if arch is not None else None
    frame: dict[str, Any] = {}
    bound_cap = False
    params = (*fn.params.posonly_params, *fn.params.params, *fn.params.kwonly_params)
    for p in params:
        frame[p.name.value] = OPAQUE
        if p.name.value in fc.libs.capability_params and cap is not None:
            frame[p.name.value] = cap[0] * 10 + cap[1]
            bound_cap = True
    for star in (fn.params.star_arg, fn.params.star_kwarg):
        if isinstance(star, cst.Param):
            frame[star.name.value] = OPAQUE
    v = _run(fn, ev, frame)
    if not ev.touched:
        # Only a check that reads the hardware proves anything: a stub returning
        # False everywhere is overridden by subclasses. With the capability bound, the
        # check reads it when its answer changes without it, or when, without it, the
        # check asks the device instead (vLLM: `compute_capability == 90 if
        # compute_capability is not None else current_platform.is_device_capability(90)`).
        if not bound_cap:
            return True
        unbound = fc.evaluator(world)
        if _same(v, _run(fn, unbound, {k: OPAQUE for k in frame})) and not unbound.touched:
            return True
    if isinstance(v, tuple) and v:
        v = v[0]
    return truth(v) is not False


def _run(fn: cst.FunctionDef, ev, frame: dict):
    """The method's return value with its parameters set from ``frame``
    (the others unknown); UNKNOWN where the body cannot be followed."""
    if ev.model is None:
        return UNKNOWN
    return ev.call_with(fn, frame)


def _same(a, b) -> bool:
    try:
        return a is not UNKNOWN and b is not UNKNOWN and a == b
    except Exception:
        return False


# -- imports inside try ----------------------------------------------------------------
def after_import(node: cst.Import | cst.ImportFrom, fc):
    """Inside a ``try`` that catches ImportError, what follows an import runs
    only where it succeeds: the worlds where every imported name may exist (a
    frozenset, a Lazy while the context's worlds are undecided, None: unchanged)."""
    if not fc.ctx.caught("ImportError"):
        return None
    from ..syntax.index import dotted, import_bindings

    if isinstance(node, cst.Import):
        names = [dotted(a.name) for a in node.names]
    else:
        names = [q.name for n, q in import_bindings(node) if n != "*"]
    ctx, attr_exists = fc.ctx, fc.attr_exists

    def importable():
        worlds = ctx.worlds
        for q in names:
            if q:
                worlds = frozenset(w for w in worlds if attr_exists(q, w) is not False)
        return worlds

    if ctx.decided is None:  # a guard above is still unasked: decided with it, when asked
        from .guards import Lazy

        return Lazy(importable)
    worlds = importable()
    return worlds if worlds != ctx.worlds else None


# -- except handlers of a version probe ------------------------------------------------
# A handler that catches only what a missing name raises (ImportError, AttributeError, and the
# TypeError / NameError a fallback lists beside them) runs where a name its try body reads is
# missing: ``try: d = torch.get_autocast_dtype("cuda") except (AttributeError, TypeError):
# d = torch.get_autocast_gpu_dtype()`` -- as ``if hasattr(...)``'s else. A handler that also
# catches Exception (or everything) may run anywhere and is left as it is.
_NAME_ERRORS = frozenset({"ImportError", "ModuleNotFoundError", "AttributeError"})
_FALLBACK_ERRORS = _NAME_ERRORS | {"TypeError", "NameError"}


def _probed_names(body: cst.BaseSuite, imports: bool, attrs: bool, fc) -> list[str]:
    """Library names a try body imports (``imports``) or reads as attributes (``attrs``)."""
    from ..syntax.index import import_bindings

    out: list[str] = []

    class _Names(cst.CSTVisitor):
        def visit_FunctionDef(self, node) -> bool:
            return False  # defined, not run, by the try body

        def visit_ClassDef(self, node) -> bool:
            return False

        def visit_Lambda(self, node) -> bool:
            return False

        def visit_Import(self, node) -> bool:
            if imports:
                out.extend(d for d in (dotted(a.name) for a in node.names) if d)
            return False

        def visit_ImportFrom(self, node) -> bool:
            if imports and not node.relative:
                out.extend(q.name for n, q in import_bindings(node) if n != "*")
            return False

        def visit_Attribute(self, node) -> bool:
            if attrs:
                q = fc.resolve(node)
                if q and "." in q:
                    out.append(q)
                    return False  # the outermost chain: its prefixes exist where it does
            return True

    walk(body, _Names())
    return out


def handler_worlds(handler: cst.ExceptHandler, body: cst.BaseSuite, fc):
    """The worlds an ``except`` handler of a version probe runs in: those where a name the
    try body reads may be missing (a frozenset, a Lazy while the context is undecided, None:
    not such a handler, unchanged)."""
    if handler.type is None:
        return None
    types = handler.type.elements if isinstance(handler.type, cst.Tuple) else [handler.type]
    names = set()
    for t in types:
        e = t.value if isinstance(t, (cst.Element, cst.StarredElement)) else t
        d = dotted(e) if isinstance(e, cst.BaseExpression) else None
        if d is None:
            return None
        names.add(d.rsplit(".", 1)[-1])
    if not names <= _FALLBACK_ERRORS or not names & _NAME_ERRORS:
        return None
    probed = _probed_names(body, bool(names & {"ImportError", "ModuleNotFoundError"}),
                           "AttributeError" in names, fc)
    if not probed:
        return None
    ctx, attr_exists = fc.ctx, fc.attr_exists

    def missing_somewhere():
        return frozenset(w for w in ctx.worlds if any(attr_exists(q, w) is not True for q in probed))

    if ctx.decided is None:
        from .guards import Lazy

        return Lazy(missing_somewhere)
    worlds = missing_somewhere()
    return worlds if worlds != ctx.worlds else None


# -- enabled= switches -------------------------------------------------------------------
def enabled_worlds(expr: cst.BaseExpression, fc) -> frozenset:
    """The worlds where ``enabled=expr`` may be on."""
    off_default = None
    out = set()
    for w in fc.ctx.worlds:
        v = fc.evaluator(w).eval(expr)
        t = truth(v)
        if t is UNKNOWN:
            if off_switch(v):
                continue
            if off_default is None:
                off_default = off_by_default(expr, fc)
            if off_default:
                continue
        if t is not False:
            out.add(w)
    return frozenset(out)


def off_switch(v) -> bool:
    """A command-line switch that is off unless the user passes it (``store_true``)."""
    return isinstance(v, Switch) and not v.default


def _falsy_literal(e) -> bool:
    return isinstance(e, cst.Name) and e.value in ("False", "None") or isinstance(e, cst.Integer) and e.value == "0"


def off_by_default(expr, fc, depth: int = 0) -> bool:
    """Is ``expr`` a switch that is off unless a caller or user turns it on?"""
    if depth > 3:
        return False
    if isinstance(expr, cst.Name):
        b = fc.lookup(expr.value)
        if isinstance(b, Opaque) or b is OPAQUE:
            d = _param_default(expr.value, fc)
            return d is not None and _falsy_literal(d)
        return isinstance(b, cst.BaseExpression) and off_by_default(b, fc, depth + 1)
    if isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute) and expr.func.attr.value in ("get", "pop"):
        # kwargs.get("fp8", False): the receiver is a parameter (a **kwargs or config dict).
        recv = expr.func.value
        if not (isinstance(recv, cst.Name) and fc.lookup(recv.value) is OPAQUE):
            return False
        args = [a for a in expr.args if a.keyword is None and not a.star]
        return len(args) == 1 or (len(args) == 2 and _falsy_literal(args[1].value))
    if isinstance(expr, cst.Attribute) and isinstance(expr.value, cst.Name):
        return expr.attr.value in _off_flags(fc) and _is_parsed_args(expr.value, fc)
    return False


def _param_default(name: str, fc):
    for scope in reversed(fc.scopes):
        if name in scope:
            entry = fc.state.get("scope_fn", {}).get(id(scope))
            if entry is None or entry[0] is not scope:
                return None
            fn = entry[1]
            for p in (*fn.params.posonly_params, *fn.params.params, *fn.params.kwonly_params):
                if p.name.value == name:
                    return p.default
            return None
    return None


def _is_parsed_args(name: cst.Name, fc) -> bool:
    b = fc.lookup(name.value)
    if b is OPAQUE:
        return True  # def main(args): ... called with the parsed namespace
    from ..syntax.index import Unpack

    if isinstance(b, Unpack):
        b = b.expr
    if not isinstance(b, cst.Call):
        return False
    if isinstance(b.func, cst.Name) and isinstance(fc.lookup(b.func.value), cst.FunctionDef):
        # args = parse_args(): a helper that returns parser.parse_args()
        return any(isinstance(r.value, cst.Call) and _parses(r.value) for r in _returns(fc.lookup(b.func.value)))
    return _parses(b)


def _parses(call: cst.Call) -> bool:
    return isinstance(call.func, cst.Attribute) and call.func.attr.value in ("parse_args", "parse_known_args")


def _returns(fn: cst.FunctionDef):
    for stmt in fn.body.body if isinstance(fn.body, cst.IndentedBlock) else ():
        if isinstance(stmt, cst.SimpleStatementLine):
            for small in stmt.body:
                if isinstance(small, cst.Return) and small.value is not None:
                    yield small


def _off_flags(fc) -> set[str]:
    """argparse destinations in this file that are False/None unless given on the command line."""
    flags = fc.state.get("off_flags")
    if flags is None:
        flags = fc.state["off_flags"] = set()
        walk(fc.module, _ArgparseFlags(flags))
    return flags


class _ArgparseFlags(cst.CSTVisitor):
    def __init__(self, out: set[str]) -> None:
        super().__init__()
        self.out = out

    def visit_Call(self, node: cst.Call) -> None:
        if not (isinstance(node.func, cst.Attribute) and node.func.attr.value == "add_argument"):
            return
        opts = [a.value.evaluated_value for a in node.args
                if a.keyword is None and isinstance(a.value, cst.SimpleString)]
        kw = {a.keyword.value: a.value for a in node.args if a.keyword is not None}
        longs = [o for o in opts if isinstance(o, str) and o.startswith("--")]
        dest = kw.get("dest")
        if isinstance(dest, cst.SimpleString):
            name = dest.evaluated_value
        elif longs:
            name = longs[0][2:].replace("-", "_")
        else:
            return
        action: cst.BaseExpression | str | bytes | None = kw.get("action")  # the node, then its text
        action = action.evaluated_value if isinstance(action, cst.SimpleString) else None
        default = kw.get("default")
        if action == "store_true":
            off = default is None or _falsy_literal(default)
        else:
            off = action is None and default is not None and _falsy_literal(default)
        if off and isinstance(name, str):
            self.out.add(name)
