"""Resolve the CUDA source a Python call hands to a compiler, statically.

Through string literals, module constants and local assignments, ``+``
concatenation, f-strings' constant parts, ``.format``, lists of strings, and
``open(...).read()`` / ``Path(...).read_text()`` of a file next to the module
(only a regular file inside the project: fs/confine.py).
Where the text comes from one string literal, CUDA line N maps back to a
Python line.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import libcst as cst

from ...fs.confine import read_inside, tree_of
from ...values import PartialStr, PathValue, Seq

MAX_FILE = 2_000_000


@dataclass
class Resolved:
    text: str
    node: cst.CSTNode | None = None  # the single string literal it came from, for line mapping
    file: Path | None = None  # the file it was read from


def resolve_text(expr, fc, depth: int = 0) -> Resolved | None:
    if expr is None or depth > 8:
        return None
    if isinstance(expr, cst.SimpleString):
        v = expr.evaluated_value
        if isinstance(v, bytes):
            v = v.decode("utf-8", "replace")
        return Resolved(v, expr)
    if isinstance(expr, cst.ConcatenatedString):
        left, right = resolve_text(expr.left, fc, depth + 1), resolve_text(expr.right, fc, depth + 1)
        if left and right:
            return Resolved(left.text + right.text, expr.left if isinstance(expr.left, cst.SimpleString) else None)
        return None
    if isinstance(expr, cst.FormattedString):
        parts = []
        for p in expr.parts:
            if isinstance(p, cst.FormattedStringText):
                parts.append(p.value.replace("{{", "{").replace("}}", "}"))
            else:
                r = resolve_text(p.expression, fc, depth + 1)
                if r is None:  # an unknown part is not an empty string
                    return _model_text(expr, fc)
                parts.append(r.text)
        return Resolved("".join(parts), expr)
    if isinstance(expr, cst.Name):
        b = fc.lookup(expr.value)
        if isinstance(b, cst.BaseExpression):
            return resolve_text(b, fc, depth + 1)
        return _model_text(expr, fc)
    if isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, cst.Add):
        left, right = resolve_text(expr.left, fc, depth + 1), resolve_text(expr.right, fc, depth + 1)
        if left is None or right is None:
            return _model_text(expr, fc)
        return Resolved(left.text + right.text, None)
    if isinstance(expr, (cst.List, cst.Tuple)):
        texts = [resolve_text(el.value, fc, depth + 1) for el in expr.elements if isinstance(el, cst.Element)]
        texts = [t for t in texts if t]
        if not texts:
            return None
        if len(texts) == 1:
            return texts[0]
        return Resolved("\n".join(t.text for t in texts), None)
    if isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute):
        method = expr.func.attr.value
        if method == "format":
            return _model_text(expr, fc)
        if method in ("read", "read_text", "decode", "strip", "lstrip", "rstrip"):
            if method in ("decode", "strip", "lstrip", "rstrip"):
                return resolve_text(expr.func.value, fc, depth + 1)
            target = expr.func.value
            if method == "read" and isinstance(target, cst.Call) and fc.resolve(target.func) in ("open", "io.open", None):
                if isinstance(target.func, cst.Name) and target.func.value == "open" and target.args:
                    return read_file(target.args[0].value, fc)
            if method == "read_text":
                return read_file(target, fc)
    if isinstance(expr, (cst.Call, cst.Attribute, cst.Subscript, cst.IfExp)):
        return _model_text(expr, fc)
    return None


def _model_value(expr, fc):
    """The value model's answer where it is one value on every GPU of the fleet,
    or None where there is no model (tests' stubs)."""
    if not hasattr(fc, "value_everywhere"):
        return None
    return fc.value_everywhere(expr)


def _model_text(expr, fc) -> Resolved | None:
    """A text the value model knows in full; None when any part is unknown."""
    v = _model_value(expr, fc)
    return Resolved(v, None) if isinstance(v, str) else None


# Flags a list may hold with an unknown part that still names no compile target:
# include dirs and macros (f"-I{ROOT}/csrc", f"-DBLOCK={n}").
_HARMLESS_PREFIX = re.compile(r"-[IDL]\S|-isystem|--include-path=|--define-macro=")


def string_list(expr, fc) -> list[str] | None:
    """The strings of a flag list (``["-O3", *ARCH]``, ``self.cflags``, ``cfg["nvcc"]``)
    as the value model knows them on every GPU of the fleet; None when any item
    that could name a target is unknown (a list extended in a loop, a flag built
    from the running GPU)."""
    return strings_of(_model_value(expr, fc))


def strings_of(v) -> list[str] | None:
    """``string_list`` of a value."""
    if isinstance(v, str):
        return [v]
    items = v if isinstance(v, tuple) else v.items if isinstance(v, Seq) and v.exact else None
    if items is None:
        return None
    out = []
    for x in items:
        if isinstance(x, str):
            out.append(x)
        elif not (isinstance(x, PartialStr) and _HARMLESS_PREFIX.match(x.known_prefix())):
            return None
    return out


def known_strings(v) -> list[str | None] | None:
    """The items of a flag list as ``strings_of`` reads them, with None for each item not known
    (and one None more at the end where the list holds items at unknown positions, added in a
    loop over what is not known); None when the value is no list."""
    if isinstance(v, str):
        return [v]
    items = v if isinstance(v, tuple) else v.items if isinstance(v, Seq) else None
    if items is None:
        return None
    out: list[str | None] = []
    for x in items:
        if isinstance(x, str):
            out.append(x)
        elif not (isinstance(x, PartialStr) and _HARMLESS_PREFIX.match(x.known_prefix())):
            out.append(None)
    if isinstance(v, Seq) and not v.exact:
        out.append(None)
    return out


def define_flags(expr, fc) -> tuple[list[str], bool] | None:
    """The flags of ``expr`` that can carry macros (``-D``/``-U``...), with whether that is
    all of them: a ``-D`` whose name is known but value is not (``f"-DBLOCK={n}"``) keeps
    its name with a value not known here; one whose name is not known makes the set
    incomplete. None when the list itself is not known."""
    from .pyeval import UNKNOWN_VALUE

    v = _model_value(expr, fc)
    if isinstance(v, str):
        return [v], True
    items = v if isinstance(v, tuple) else v.items if isinstance(v, Seq) and v.exact else None
    if items is None:
        return None
    out, complete = [], True
    for x in items:
        if isinstance(x, str):
            out.append(x)
            continue
        known = x.known_prefix() if isinstance(x, PartialStr) else ""
        m = re.match(r"(-D\s*|--define-macro=)([A-Za-z_]\w*)=", known)
        if m:
            out.append(f"-D{m.group(2)}={UNKNOWN_VALUE}")
        elif not (known and _HARMLESS_PREFIX.match(known) and not known.startswith(("-D", "--define"))):
            complete = False  # a flag not known here may define or undefine any macro
    return out, complete


def read_files(expr, fc) -> list[Resolved]:
    """The files a ``sources=`` argument names: each item of a list literal as
    ``read_file`` reads it, else the paths the value model gives the argument."""
    if isinstance(expr, (cst.List, cst.Tuple)):
        found = [read_file(el.value, fc) for el in expr.elements if isinstance(el, cst.Element)]
        return [r for r in found if r]
    v = _model_value(expr, fc)
    items = v if isinstance(v, tuple) else v.items if isinstance(v, Seq) else (v,)
    found = [_read_model_path(x, fc) for x in items]
    return [r for r in found if r]


def read_file(path_expr, fc) -> Resolved | None:
    """The text of a file named by ``path_expr``, relative to the module's folder."""
    path = _path_value(path_expr, fc)
    here = _here(fc)
    if here is None:
        return None
    if path is None:
        return _read_model_path(_model_value(path_expr, fc), fc)
    return _read((here / path) if not Path(path).is_absolute() else Path(path), fc)


def _here(fc) -> Path | None:
    return Path(fc.path).resolve().parent if fc.path and not fc.path.startswith("<") else None


def _read_model_path(v, fc) -> Resolved | None:
    """A path the value model built from __file__ (the linted path) by helpers,
    with_suffix, os.path.join ...: relative to where aicompat runs."""
    v = v.path if isinstance(v, PathValue) else v
    if not isinstance(v, str) or not v or _here(fc) is None:
        return None
    return _read(Path(v), fc)


def _read(p: Path, fc) -> Resolved | None:
    """The file's text when it is a regular file inside the checked file's tree
    (fs/confine.py: never ``/etc/...``, ``../../``, a symlink out or a device)."""
    data = read_inside(p, tree_of(getattr(fc, "path", None), getattr(fc, "root", None)), MAX_FILE)
    if data is None:
        return None
    if hasattr(fc, "reads"):
        fc.reads.append(str(p))
    return Resolved(data.decode("utf-8", "replace"), None, p)


def _path_value(expr, fc, depth=0) -> str | None:
    """A path next to the module: "k.cu", Path(__file__).parent / "k.cu", os.path.join(os.path.dirname(__file__), "k.cu")."""
    if depth > 6:
        return None
    if isinstance(expr, cst.SimpleString):
        v = expr.evaluated_value
        return v if isinstance(v, str) else None
    if isinstance(expr, cst.Name):
        if expr.value == "__file__":
            return "__file__"
        b = fc.lookup(expr.value)
        return _path_value(b, fc, depth + 1) if isinstance(b, cst.BaseExpression) else None
    if isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, cst.Divide):
        left, right = _path_value(expr.left, fc, depth + 1), _path_value(expr.right, fc, depth + 1)
        if left is not None and right is not None:
            return right if left in ("", ".") else f"{left}/{right}"
        return None
    if isinstance(expr, cst.Attribute) and expr.attr.value == "parent":
        inner = _path_value(expr.value, fc, depth + 1)
        return "" if inner == "__file__" else None
    if isinstance(expr, cst.Call):
        q = fc.resolve(expr.func) or ""
        args = [a.value for a in expr.args]
        if q in ("pathlib.Path", "pathlib.PurePath") and len(args) == 1:
            return _path_value(args[0], fc, depth + 1)
        if q in ("os.path.dirname",) and len(args) == 1:
            inner = _path_value(args[0], fc, depth + 1)
            return "" if inner in ("__file__",) else None
        if q in ("os.path.abspath", "os.path.realpath") and len(args) == 1:
            return _path_value(args[0], fc, depth + 1)
        if q == "os.path.join" and args:
            parts = [_path_value(a, fc, depth + 1) for a in args]
            if any(p is None for p in parts):
                return None
            return "/".join(p for p in parts if p)
        if isinstance(expr.func, cst.Attribute) and expr.func.attr.value in ("resolve", "absolute"):
            return _path_value(expr.func.value, fc, depth + 1)
        if isinstance(expr.func, cst.Attribute) and expr.func.attr.value == "with_name" and args:
            base = _path_value(expr.func.value, fc, depth + 1)
            if base == "__file__":
                return _path_value(args[0], fc, depth + 1)
    return None
