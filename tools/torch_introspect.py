"""Record one installed torch release's API as its runtime sees it, for the matrix builder.

    <venv>/bin/python tools/torch_introspect.py --wheel PATH/torch-X-....whl [--out version_matrix/introspect]

Run it with the Python of a throwaway environment that has the release installed (from
the wheel named with ``--wheel``); it imports torch, so it never runs inside aicompat, and
it imports nothing of aicompat. It writes ``<out>/torch-<release>.toml``:

- ``[meta]``: the release, ``torch.__version__``, the wheel's file name and sha256, the
  Python, and ``eager``: the ``torch.*`` modules that a bare ``import torch`` loads;
- per covered module (the list below, the same as ``matrix_build.PACKAGES["torch"]``;
  ``tests/test_introspection.py`` checks they match), every name ``dir()`` shows plus the
  child modules it could import, each with its kind and, for callables, the call
  signatures in the notation of ``aicompat.matrixbuild.apiscan.signature``, read from

  ``i`` ``inspect.signature`` (Python functions and classes);
  ``p`` the C argument parser's own listing: the TypeError of a call with no arguments
        (or with one unknown keyword), "expected one of: * (Tensor input, ...)";
  ``s`` the parser's signature strings in ``libtorch_python.so`` where the parser has a
        single signature and says only "missing 2 required positional arguments";
  ``d`` pybind11's docstring listing ``name(arg0: int, world_size: int = -1) -> None``;
  ``k`` a C function that takes no keywords ("takes no keyword arguments"): ``(*args)``, any
        positionals (how many the message does not say) and no keyword;
  ``-`` none found: the table keeps what the static reading says.

Only C functions of the generated binding namespaces (``torch._C._VariableFunctions``,
``_nn``, ``_fft``, ``_linalg``, ``_special``, ``_nested``, ``_sparse``) are called with no
arguments; other C callables only with one unknown keyword, which every C parser refuses
before it does anything.
"""

from __future__ import annotations

import argparse
import ast
import hashlib
import importlib
import inspect
import json
import pkgutil
import platform
import re
import sys
import textwrap
import warnings
from pathlib import Path

MODULES = [
    "torch", "torch.nn", "torch.nn.functional", "torch.nn.init", "torch.nn.attention",
    "torch.nn.attention.flex_attention", "torch.nn.attention.bias", "torch.cuda", "torch.cuda.amp",
    "torch.cpu", "torch.cpu.amp", "torch.amp", "torch.backends", "torch.utils.cpp_extension",
    "torch.utils.checkpoint", "torch.distributed", "torch.export", "torch.compiler", "torch.library",
    "torch.testing", "torch.nn.utils", "torch.nn.utils.parametrizations",
    # modules real code calls members of (device-agnostic helpers, linear algebra, data loading)
    "torch.accelerator", "torch.linalg", "torch.fft", "torch.autograd", "torch.optim", "torch.optim.lr_scheduler",
    "torch.utils.data", "torch.xpu", "torch.mps", "torch.cuda.memory", "torch.profiler",
]
EXPAND = ["torch.backends"]
_PROBE_KW = "__aicompat_probe__"
_GENERATED = ("torch._C._VariableFunctions", "torch._C._nn", "torch._C._fft", "torch._C._linalg",
              "torch._C._special", "torch._C._nested", "torch._C._sparse")
_INT_LISTS = {"tuple of ints", "tuple of SymInts", "int[]", "SymInt[]", "IntArrayRef", "SymIntArrayRef"}


# -- splitting parameter lists ----------------------------------------------------------
def split_top(text: str) -> list[str]:
    """Split at commas outside brackets and quotes."""
    out, depth, cur, quote = [], 0, [], None
    for ch in text:
        if quote:
            cur.append(ch)
            if ch == quote:
                quote = None
            continue
        if ch in "\"'":
            quote = ch
        elif ch in "([{<":
            depth += 1
        elif ch in ")]}>" and depth:
            depth -= 1
        elif ch == "," and depth == 0:
            out.append("".join(cur).strip())
            cur = []
            continue
        cur.append(ch)
    if "".join(cur).strip():
        out.append("".join(cur).strip())
    return out


def _close(text: str, start: int) -> int:
    """Index of the bracket closing the one at ``start`` (quotes respected), or -1."""
    depth, quote = 0, None
    for i in range(start, len(text)):
        ch = text[i]
        if quote:
            if ch == quote:
                quote = None
        elif ch in "\"'":
            quote = ch
        elif ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
            if depth == 0:
                return i
    return -1


def parser_sig(params_text: str) -> list[str]:
    """One C-parser signature (``Tensor input, Tensor? bias=None, *, Tensor out = None``) in
    the table's notation; two when it takes a var-args int list (``ones(2, 3)`` and
    ``ones(size=(2, 3))``)."""
    items, kwonly, names, types = [], False, [], []
    for p in split_top(params_text):
        if p == "*":
            kwonly = True
            items.append("*")
            continue
        decl, eq, _ = p.partition("=")
        decl = decl.strip()
        name = decl.split()[-1] if decl.split() else decl
        name = name.lstrip("*")
        types.append(decl[: -len(name)].strip())
        names.append((name, bool(eq), kwonly))
        items.append(name + ("=" if eq else ""))
    out = [", ".join(items)]
    positional = [n for n in names if not n[2]]
    if len(positional) == 1 and types and types[0].rstrip("?") in _INT_LISTS:
        rest = [it for it in items[1:] if it != "*"]
        out.append(", ".join([f"*{positional[0][0]}", *rest]))
    return out


def _no_defaults(sig: str) -> str:
    return sig.replace("=", "")


def _listing_with_defaults(listing: list[str], name: str, strings) -> tuple[str, list[str]]:
    listing = strings.with_hidden(name, listing)
    if any("=" in s for s in listing):
        return "p", listing
    found = strings.matching(name, listing)
    if found:
        return ("p" if found == listing else "s"), found
    # No defaults anywhere: a keyword-only parameter is taken as optional (the binder then says
    # nothing about it) rather than required on no evidence.
    fixed = []
    for s in listing:
        head, star, tail = s.partition("*")
        if star and tail:
            tail = ", ".join(p if p.startswith("*") or p.endswith("=") or not p else p + "="
                             for p in (x.strip() for x in tail.split(",")))
        fixed.append(head + star + tail if star else s)
    return "p", fixed


def parser_listing(message: str) -> list[str] | None:
    """Signatures of a PythonArgParser error: "expected one of: * (...)" or "expected (...)"."""
    m = re.search(r"but expected one of:\s*\n(.*)", message, re.S)
    blocks = []
    if m:
        for line in m.group(1).splitlines():
            line = line.strip()
            if line.startswith("* (") and line.endswith(")"):
                blocks.append(line[3:-1])
    else:
        m = re.search(r"but expected \((.*)\)\s*$", message, re.S)
        if m:
            blocks.append(m.group(1))
    if not blocks:
        return None
    out: list[str] = []
    for b in blocks:
        for s in parser_sig(b):
            if s not in out:
                out.append(s)
    return out


def pybind_listing(doc: str, name: str, drop_self: bool) -> list[str] | None:
    """pybind11's ``name(a: int, b: str = 'x') -> T`` lines (one, or "Overloaded function." N of them)."""
    out: list[str] = []
    for m in re.finditer(rf"(?m)^(?:\d+\. )?{re.escape(name)}\(", doc or ""):
        start = m.end() - 1
        end = _close(doc, start)
        if end < 0:
            continue
        items, posonly = [], 0
        params = split_top(doc[start + 1:end])
        if drop_self and params and params[0].split(":")[0].strip() == "self":
            params = params[1:]
        for p in params:
            if p in ("*", "/"):
                items.append(p)
                continue
            decl, eq, _ = p.partition("=")
            pname = decl.split(":")[0].strip()
            if re.fullmatch(r"arg\d+", pname):  # pybind11 names arguments it was given no name for
                posonly = len(items) + 1
            items.append(pname + ("=" if eq and not pname.startswith("*") else ""))
        if posonly and "/" not in items:
            items.insert(posonly, "/")
        s = ", ".join(items)
        if s not in out:
            out.append(s)
    return out or None


def inspect_sig(sig: inspect.Signature) -> str:
    items, saw_kwonly, last_posonly = [], False, -1
    for i, p in enumerate(sig.parameters.values()):
        if p.kind is p.POSITIONAL_ONLY:
            last_posonly = len(items)
        if p.kind is p.VAR_POSITIONAL:
            items.append("*" + p.name)
            saw_kwonly = True
            continue
        if p.kind is p.KEYWORD_ONLY and not saw_kwonly:
            items.append("*")
            saw_kwonly = True
        if p.kind is p.VAR_KEYWORD:
            items.append("**" + p.name)
            continue
        items.append(p.name + ("=" if p.default is not p.empty else ""))
        if p.kind is p.POSITIONAL_ONLY:
            last_posonly = len(items)
    if last_posonly > 0:
        items.insert(last_posonly, "/")
    return ", ".join(items)


# -- libtorch_python.so strings --------------------------------------------------------------
class ParserStrings:
    """``name(...)`` signature strings the C parsers are built from, by function name."""

    def __init__(self, torch_dir: Path, extra: list[bytes] = ()) -> None:
        self.by_name: dict[str, list[str]] = {}
        self.hidden: dict[str, list[str]] = {}  # "|deprecated"/"|hidden" signatures: accepted, never listed
        lib = next(iter(sorted((torch_dir / "lib").glob("libtorch_python*"))), None)
        blobs = ([lib.read_bytes()] if lib is not None else []) + list(extra)
        pattern = re.compile(rb"([A-Za-z_][A-Za-z0-9_]*)\(([A-Za-z][ -~]*)?\)(\|[a-z_]+)?")
        seen: set[bytes] = set()
        for chunk in (c for blob in blobs for c in blob.split(b"\x00")):
            if chunk in seen:
                continue
            seen.add(chunk)
            if len(chunk) > 2000 or b"(" not in chunk:
                continue
            m = pattern.fullmatch(chunk)
            if m is None:
                continue
            name, params = m.group(1).decode(), (m.group(2) or b"").decode()
            self.by_name.setdefault(name, []).append(params)
            if m.group(3) in (b"|deprecated", b"|hidden"):
                self.hidden.setdefault(name, []).append(params)

    def with_hidden(self, name: str, sigs: list[str]) -> list[str]:
        """``sigs`` and the signatures the parser accepts without listing them (torch.add(x, 2, y),
        deprecated): from the strings of ``name``, those with a first parameter named like the
        listed ones' among their parameters (a Tensor method's strings lack it)."""
        out = list(sigs)
        firsts = {s.split(",")[0].strip().rstrip("=") for s in sigs}
        for params in self.hidden.get(name, []):
            for s in parser_sig(params):
                names = {p.strip().rstrip("=").lstrip("*") for p in s.split(",")}
                if firsts & names and s not in out:
                    out.append(s)
        return out

    def matching(self, name: str, listing: list[str]) -> list[str] | None:
        """Before torch 2.1 the parser's error listing prints no defaults (``(input, dim, keepdim,
        *, dtype, out)``): the strings of ``name`` with the same parameters, which have them."""
        plain = {_no_defaults(s) for s in listing}
        out = []
        for params in self.by_name.get(name, []):
            for s in parser_sig(params):
                if _no_defaults(s) in plain and s not in out:
                    out.append(s)
        covered = {_no_defaults(s) for s in out}
        return out if covered == plain else None

    def single(self, name: str, required: list[str] | None) -> list[str] | None:
        """The strings of ``name`` whose required positional names are ``required``."""
        out: list[str] = []
        for params in self.by_name.get(name, []):
            sig = parser_sig(params)
            head = sig[0].split(", *")[0]
            req_pos = [it for it in head.split(", ") if it and not it.endswith("=") and it != "*"]
            if required is not None and req_pos != required:
                continue
            for s in sig:
                if s not in out:
                    out.append(s)
        return out or None


# -- kinds and signatures ------------------------------------------------------------------------
def _wrapped_module(obj):
    """torch.backends and its children replace themselves in sys.modules with an object
    (``sys.modules[__name__] = CudnnModule(sys.modules[__name__], __name__)``) whose
    ``__getattr__`` reads the module it keeps as ``.m``: that module, or None."""
    if type(obj).__dict__.get("__getattr__") is None and not any(
            "__getattr__" in vars(k) for k in type(obj).__mro__[1:] if k.__module__.startswith("torch")):
        return None
    inner = vars(obj).get("m") if hasattr(obj, "__dict__") else None
    return inner if inspect.ismodule(inner) and inner is not obj else None


def kind_of(obj) -> str:
    if inspect.ismodule(obj) or _wrapped_module(obj) is not None:
        return "m"
    if isinstance(obj, type):
        return "c"
    if inspect.isfunction(obj) or inspect.ismethod(obj) and inspect.isfunction(obj.__func__):
        return "f"
    if inspect.isbuiltin(obj) or type(obj).__name__ in ("builtin_function_or_method", "method_descriptor",
                                                       "instancemethod"):
        return "b"
    return "a"


def _pybind(fn) -> bool:
    """A pybind11 function (its ``__self__`` is the capsule holding the C++ function record) or
    a pybind11 method (``instancemethod``); their docstrings start with the typed signature.
    torch's generated bindings carry hand-written docstrings instead, which are no evidence."""
    if fn is None:
        return False
    if type(fn).__name__ == "instancemethod":
        return True
    holder = type(getattr(fn, "__self__", None)).__name__
    return holder == "PyCapsule" or holder.startswith("pybind11_")


def _call_error(fn, *args, **kwargs) -> str | None:
    try:
        fn(*args, **kwargs)
    except TypeError as exc:
        return str(exc)
    except BaseException:  # noqa: BLE001 - the message of anything else says nothing about arguments
        return None
    return None


def c_signatures(obj, name: str, strings: ParserStrings) -> tuple[str, list[str] | None]:
    """(source letter, signatures) of a C-bound callable."""
    doc = getattr(obj, "__doc__", None) or ""
    is_class = isinstance(obj, type)
    if is_class and _pybind(getattr(obj, "__init__", None)):
        init_doc = getattr(getattr(obj, "__init__", None), "__doc__", None) or ""
        sigs = pybind_listing(init_doc, "__init__", drop_self=True)
        if sigs:
            return "d", sigs
    elif not is_class and _pybind(obj):
        sigs = pybind_listing(doc, getattr(obj, "__name__", name), drop_self=False)
        if sigs:
            return "d", sigs
    msg = _call_error(obj, **{_PROBE_KW: None})
    if msg is None:
        return "-", None
    listing = parser_listing(msg)
    fname = getattr(obj, "__name__", name)
    if listing:
        return _listing_with_defaults(listing, fname, strings)
    if "takes no keyword arguments" in msg:
        # No keywords at all; how many positionals it takes the message does not say.
        return "k", ["*args"]
    generated = id(obj) in _generated_ids()
    if generated or is_class:
        msg0 = _call_error(obj) if generated else msg
        if msg0:
            listing = parser_listing(msg0)
            if listing:
                return _listing_with_defaults(listing, fname, strings)
            m = re.search(r"missing \d+ required positional arguments?: (.*)$", msg0)
            required = re.findall(r'"([^"]+)"', m.group(1)) if m else None
            if required is not None or "unexpected keyword argument" in msg:
                found = strings.single(getattr(obj, "__name__", name), required)
                if found:
                    return "s", found
    return "-", None


def _generated_ids() -> set[int]:
    """The functions of torch's generated binding namespaces (their parsers refuse an empty call)."""
    global _GENERATED_IDS
    if _GENERATED_IDS is None:
        _GENERATED_IDS = set()
        for dotted in _GENERATED:
            mod, _, attr = dotted.rpartition(".")
            try:
                holder = getattr(importlib.import_module(mod), attr)
            except (ImportError, AttributeError):
                continue
            for n in dir(holder):
                if not n.startswith("__"):
                    _GENERATED_IDS.add(id(getattr(holder, n)))
    return _GENERATED_IDS


_GENERATED_IDS: set[int] | None = None


def signatures(obj, name: str, strings: ParserStrings) -> tuple[str, list[str] | None]:
    kind = kind_of(obj)
    if kind in ("m",):
        return "-", None
    if kind == "a" and not callable(obj):
        return "-", None
    python = kind == "f" or (kind == "c" and not _c_class(obj)) or (kind == "a" and _python_callable(obj))
    if python:
        try:
            sig = inspect_sig(inspect.signature(obj))
        except (TypeError, ValueError):
            pass
        else:
            if sig in ("*args, **kwargs", "*args, **kwds"):
                found = _dispatched(obj)
                return "i", ([found] if found else _overloads(obj) or [sig])
            return "i", [sig]
        if kind == "a":
            return "-", None
    if kind in ("b", "c"):
        return c_signatures(obj, name, strings)
    return "-", None


def _dispatched(fn) -> str | None:
    """``boolean_dispatch`` (torch.unique, F.max_pool2d) returns ``fn(*args, **kwargs)`` choosing
    between two functions it closes over, both with the same signature: that signature."""
    inner = [c.cell_contents for c in (getattr(fn, "__closure__", None) or ())
             if inspect.isfunction(getattr(c, "cell_contents", None))]
    sigs = set()
    for f in inner:
        try:
            sigs.add(inspect_sig(inspect.signature(f)))
        except (TypeError, ValueError):
            return None
    return sigs.pop() if len(inner) >= 2 and len(sigs) == 1 else None


def _overloads(obj) -> list[str] | None:
    """A function (or a class's ``__init__``) written ``def f(*args, **kwargs)`` under
    ``@overload`` declarations (torch.nn.GRU): the overloads' signatures, which
    ``typing.get_overloads`` keeps at run time (Python 3.11+), and the catch-all itself."""
    import typing

    get = getattr(typing, "get_overloads", None)
    fn = obj.__init__ if isinstance(obj, type) else obj
    if get is None or not inspect.isfunction(fn):
        return None
    out = []
    for o in get(fn):
        try:
            sig = inspect.signature(o)
        except (TypeError, ValueError):
            return None
        if isinstance(obj, type):
            params = list(sig.parameters.values())[1:]
            sig = sig.replace(parameters=params)
        text = inspect_sig(sig)
        if text not in out:
            out.append(text)
    return out or None


def _c_class(cls) -> bool:
    """A class whose construction is decided in C (its __init__ and __new__ both come from C)."""
    for klass in cls.__mro__:
        if klass is object:
            return True
        if "__init__" in vars(klass) or "__new__" in vars(klass):
            init = vars(klass).get("__init__") or vars(klass).get("__new__")
            return not (inspect.isfunction(init) or isinstance(init, (staticmethod, classmethod)))
    return True


def _python_callable(obj) -> bool:
    call = getattr(type(obj), "__call__", None)  # noqa: B004 (the method itself is wanted, to see whether it is Python)
    return inspect.isfunction(call)


# -- modules ------------------------------------------------------------------------------------------
_MODULE_DUNDERS = {"__builtins__", "__cached__", "__doc__", "__file__", "__loader__", "__name__", "__package__",
                   "__path__", "__spec__"}


def module_names(mod) -> dict[str, object]:
    out = {}
    inner = _wrapped_module(mod)
    props = set()
    if inner is not None:  # ContextProp class attributes (torch.backends.cudnn.benchmark), not in a module's dir()
        props = {n for k in type(mod).__mro__ if k.__module__.startswith("torch") for n in vars(k)
                 if not n.startswith("__")}
    for n in sorted(set(dir(mod)) | set(dir(inner) if inner is not None else ()) | props):
        if n in _MODULE_DUNDERS:
            continue
        try:
            out[n] = getattr(mod, n)
        except Exception:  # noqa: BLE001 - a name dir() shows whose getattr fails is still bound
            out[n] = None
    for n in getattr(mod, "__all__", None) or ():  # served by a module __getattr__ on first use
        if isinstance(n, str) and n not in out and hasattr(mod, n):
            out[n] = getattr(mod, n)
    for n, (obj, _) in getattr_served(mod).items():
        out.setdefault(n, obj)
    for info in pkgutil.iter_modules(package_path(inner or mod)):
        out.setdefault(info.name, sys.modules.get(f"{(inner or mod).__name__}.{info.name}") or _Sub)
    return out


def package_path(mod) -> list[str]:
    """A package's ``__path__``; [] for a plain module, and for one that binds ``__path__`` to
    something else (triton 2.1's language/math.py: ``__path__ = os.path.dirname(...)``)."""
    path = getattr(mod, "__path__", None)
    return list(path) if isinstance(path, list) or type(path).__name__ == "_NamespacePath" else []


class _Sub:
    """A child module nobody imported yet: a module all the same."""


def _source_tree(fn) -> ast.AST | None:
    try:
        return ast.parse(textwrap.dedent(inspect.getsource(fn)))
    except (OSError, TypeError, SyntaxError):
        return None


_SERVED: dict[str, dict[str, tuple[object, str | None]]] = {}


def getattr_served(mod) -> dict[str, tuple[object, str | None]]:
    """Names the module's own ``__getattr__`` serves that ``dir()`` does not show (torch 2.2+'s
    ``torch.has_cuda``, looked up in ``_deprecated_attrs``), each with the deprecation warning
    the lookup issues, if any: {name: (object, message)}. The candidates are the string constants
    in the function and the keys of the module-level containers it reads; each one is looked up
    for real, and only those that answer are kept."""
    key = getattr(mod, "__name__", "")
    if key in _SERVED:
        return _SERVED[key]
    out: dict[str, tuple[object, str | None]] = {}
    _SERVED[key] = out
    fn = vars(mod).get("__getattr__") if hasattr(mod, "__dict__") else None
    tree = _source_tree(fn) if inspect.isfunction(fn) else None
    if tree is None:
        return out
    glob = fn.__globals__
    candidates: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            candidates.add(node.value)
        elif isinstance(node, ast.Name) and isinstance(glob.get(node.id), (dict, set, frozenset, list, tuple)):
            candidates |= {k for k in glob[node.id] if isinstance(k, str)}
    # child modules (torch's lazily imported _dynamo, onnx) are listed as such already: importing
    # them here would add names to other modules before those are read
    shown = set(dir(mod)) | {i.name for i in pkgutil.iter_modules(getattr(mod, "__path__", None) or [])}
    for n in sorted(c for c in candidates if c.isidentifier() and c not in shown and c not in _MODULE_DUNDERS):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                obj = getattr(mod, n)
            except Exception:  # noqa: BLE001 - not served (AttributeError), or failing: not a name
                continue
        msg = next((" ".join(str(w.message).split()) for w in caught if "deprecat" in str(w.message).lower()), None)
        out[n] = (obj, msg)
    return out


def raising_stub(obj) -> tuple[str, str] | None:
    """A Python function whose body (its docstring aside) is one ``raise``: torch 2.1's
    ``torch.symeig`` (``_linalg_utils._symeig``: "This function was deprecated since version 1.9
    and is now removed. ..."). Called with None for each required parameter (the body raises
    before it reads them): (exception class, message), or None."""
    if not inspect.isfunction(obj):
        return None
    fn = inspect.unwrap(obj)
    tree = _source_tree(fn)
    d = tree.body[0] if tree is not None and tree.body else None
    if not isinstance(d, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return None
    body = d.body
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
        body = body[1:]
    if len(body) != 1 or not isinstance(body[0], ast.Raise) or body[0].exc is None:
        return None
    try:
        params = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return None
    args = [None for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) and p.default is p.empty]
    kwargs = {p.name: None for p in params if p.kind is p.KEYWORD_ONLY and p.default is p.empty}
    try:
        fn(*args, **kwargs)
    except Exception as exc:  # noqa: BLE001 - what it raises is the point
        return type(exc).__name__, str(exc)
    return None


_DEPRECATED = re.compile(rb"(torch(?:\.[A-Za-z_][A-Za-z0-9_]*)+)(?:\(\))? is deprecated\b[ -~]*")


def cxx_deprecations(torch_dir: Path) -> dict[str, str]:
    """Deprecation warnings torch issues from C++ (``TORCH_WARN_DEPRECATION``, ``TORCH_WARN_ONCE``):
    the message strings in its libraries that start with the Python name they are about,
    "torch.get_autocast_gpu_dtype() is deprecated. Please use torch.get_autocast_dtype('cuda')
    instead." -> {dotted name: message}; visible only at run time or in the binaries."""
    out: dict[str, str] = {}
    for lib in sorted((torch_dir / "lib").glob("libtorch_*.so*")):
        if not lib.name.startswith(("libtorch_python", "libtorch_cpu")):
            continue
        for chunk in lib.read_bytes().split(b"\x00"):
            if b" is deprecated" not in chunk or len(chunk) > 1000:
                continue
            m = _DEPRECATED.fullmatch(chunk.strip())
            if m is not None:
                out.setdefault(m.group(1).decode(), " ".join(m.group(0).decode().split()))
    return out


def unreachable_children(covered: list[str]) -> list[str]:
    """Right after a bare ``import torch``: the child modules of the covered modules it loaded
    that are not attributes of their parent (``torch.nn.utils.prune`` -> AttributeError until
    someone imports it). ``hasattr`` goes through a module ``__getattr__`` (torch's lazy
    ``torch.export``), which may import more: each answer errs toward "reachable"."""
    out = []
    for mod in covered:
        parent = sys.modules.get(mod)
        if parent is None:
            continue
        path = package_path(_wrapped_module(parent) or parent)
        for info in pkgutil.iter_modules(path):
            try:
                ok = hasattr(parent, info.name)
            except Exception:  # noqa: BLE001 - a lazy import that fails here: not reachable
                ok = False
            if not ok:
                out.append(f"{mod}.{info.name}")
    return sorted(out)


def q(s: str) -> str:
    return json.dumps(s)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--wheel", required=True, help="the wheel this environment's torch was installed from")
    ap.add_argument("--out", default=str(Path(__file__).resolve().parent.parent / "version_matrix" / "introspect"))
    ap.add_argument("--strings", action="append", default=[],
                    help="another wheel of the same release whose torch/lib/libtorch_python.* is read for the C "
                         "parser's signature strings too (the manylinux 2.7.1 library's linker merged many of them "
                         "into each other; the macOS arm64 wheel's has them whole)")
    args = ap.parse_args(argv)
    wheel = Path(args.wheel)
    digest = hashlib.sha256(wheel.read_bytes()).hexdigest()

    before = set(sys.modules)
    import torch  # noqa: PLC0415 - importing is the point

    eager = sorted(m for m in set(sys.modules) - before if m.startswith("torch.") and not m.startswith("torch._")
                   and sys.modules[m] is not None)
    release = torch.__version__.split("+")[0]
    lazy = unreachable_children(MODULES)
    deprecations = cxx_deprecations(Path(torch.__file__).parent)
    extra, extra_meta = [], []
    for other in args.strings:
        import zipfile

        with zipfile.ZipFile(other) as z:
            names = [n for n in z.namelist() if re.fullmatch(r"torch/lib/libtorch_python\.[a-z.0-9]+", n)]
            extra += [z.read(n) for n in names]
        extra_meta.append(f"{Path(other).name} sha256:{hashlib.sha256(Path(other).read_bytes()).hexdigest()}")
    strings = ParserStrings(Path(torch.__file__).parent, extra)
    modules = list(MODULES)
    for pkg in EXPAND:
        try:
            p = importlib.import_module(pkg)
        except Exception:  # noqa: BLE001
            continue
        path = getattr(_wrapped_module(p) or p, "__path__", [])
        modules += [f"{pkg}.{i.name}" for i in pkgutil.iter_modules(path) if not i.name.startswith("_")]
    loaded = {}
    for mod in modules:
        try:
            loaded[mod] = importlib.import_module(mod)
        except Exception as exc:  # noqa: BLE001 - a module this release lacks or cannot import here
            loaded[mod] = None
            print(f"{mod}: not imported: {type(exc).__name__}: {exc}"[:300], file=sys.stderr)
    lines = [
        f"# Generated by tools/torch_introspect.py from an installed torch {torch.__version__}; "
        "do not edit by hand (see version_matrix/README.md).",
        "[meta]",
        f"release = {q(release)}",
        f"version = {q(torch.__version__)}",
        f"wheel = {q(wheel.name)}",
        f"sha256 = {q(digest)}",
        f"python = {q(platform.python_version())}",
        f"platform = {q(platform.machine() + '-' + platform.system().lower())}",
        "eager = [" + ", ".join(q(m) for m in eager) + "]",
        f"missing = [{', '.join(q(m) for m in modules if loaded[m] is None)}]",
        "lazy = [" + ", ".join(q(m) for m in lazy) + "]",
    ]
    if extra_meta:
        lines.append("strings = [" + ", ".join(q(m) for m in extra_meta) + "]")
    counts = {}
    for mod in sorted(m for m in modules if loaded[m] is not None):
        entries, raises = [], []
        for n, obj in sorted(module_names(loaded[mod]).items()):
            if obj is _Sub:
                entries.append(f"{n} m -")
                continue
            kind = kind_of(obj)
            try:
                src, sigs = signatures(obj, n, strings)
            except Exception:  # noqa: BLE001 - introspection must not stop at one odd object
                src, sigs = "-", None
            counts[src] = counts.get(src, 0) + 1
            stub = raising_stub(obj)
            if stub is not None:
                raises.append(f"{n} {stub[0]} {q(stub[1])}")
            text = f"{n} {kind} {src}"
            if sigs is not None:
                text += " " + " | ".join(f"({s})" for s in sigs)
            entries.append(text)
        body = "\n".join(entries)
        lines += ["", f"[module.{q(mod)}]", "names = '''\n" + body + "\n'''"]
        dep = [f"{n} {msg}" for d, msg in sorted(deprecations.items())
               for m, _, n in [d.rpartition(".")] if m == mod and "'''" not in msg]
        # a deprecated name served by the module's __getattr__ (the warning its lookup issues)
        dep += [f"{n} {msg}" for n, (_, msg) in sorted(getattr_served(loaded[mod]).items())
                if msg and "'''" not in msg and not any(x.startswith(n + " ") for x in dep)]
        if raises:
            lines.append("raises = '''\n" + "\n".join(raises) + "\n'''")
        if dep:
            lines.append("deprecated = '''\n" + "\n".join(dep) + "\n'''")
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    path = out / f"torch-{release}.toml"
    path.write_text("\n".join(lines) + "\n")
    print(f"wrote {path}: {len(loaded)} modules, signature sources {counts}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
