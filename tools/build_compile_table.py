"""Generate version_matrix/compile.toml: what ``torch.compile`` accepts per torch release
(AIC103), read from the torch macOS arm64 wheels.

    python tools/build_compile_table.py --wheel-dir /tmp/whl              # wheels already there
    python tools/build_compile_table.py --wheel-dir /tmp/whl --download   # pip fetches the missing ones

Nothing is imported or executed: each wheel is read as a zip and parsed with ``ast``.

- registered: every ``register_backend`` of the modules ``list_backends()`` imports
  (torch/_dynamo/backends/*.py, and the minifier module ``_lazy_import`` names):
  ``@register_backend`` on a def (its name), ``@register_backend(name=...)`` and
  ``register_backend(name=..., compiler_fn=...)`` at module level, in either branch
  of an ``if``. The tags come from how the module imports the decorator
  (``register_debug_backend as register_backend`` tags "debug").
- default: the registered names without a "debug" or "experimental" tag
  (``list_backends()``'s default ``exclude_tags``; no third-party entry points).
- modes: the keys of ``mode_options`` in torch/_inductor/__init__.py
  ``list_mode_options`` (2.1+); in 2.0 the strings ``apply_mode`` compares ``mode`` with.
- python_max: the ``sys.version_info >= (3, N)`` test of
  torch/_dynamo/eval_frame.py ``check_if_dynamo_supported``; python_error: the
  RuntimeError torch/__init__.py ``compile()`` raises under the same test (2.1+),
  else the one ``check_if_dynamo_supported`` raises (2.0).
- invalid_backend_error: the f-string torch/_dynamo/exc.py ``InvalidBackend``
  passes to its base class.

What the syntax tree does not give in one string comes from tools/compile_hand.toml,
each entry with where it was read: ``mode_kwarg_error`` (what the cudagraphs backend
does with ``mode=``, read in _dynamo/backends/cudagraphs.py and torch/__init__.py),
the ``invalid_backend_error`` of 2.0 (no InvalidBackend) and of releases that build
the message in several statements (2.14+), and the [backend_package] and
[entry_point] tables. The same wheels and hand file always give the same bytes.
"""

from __future__ import annotations

import argparse
import ast
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from torch_wheels import RELEASES, Wheel, q, q_list, wheels_for  # noqa: E402

from aicompat.toml_compat import tomllib  # noqa: E402  (tests put src/ on sys.path; else pip install -e .)

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "version_matrix" / "compile.toml"
HAND = Path(__file__).resolve().parent / "compile_hand.toml"
BACKENDS = "torch/_dynamo/backends/"
REGISTRY = BACKENDS + "registry.py"
EXC = "torch/_dynamo/exc.py"
EVAL_FRAME = "torch/_dynamo/eval_frame.py"
INIT = "torch/__init__.py"
INDUCTOR_INIT = "torch/_inductor/__init__.py"
TAGS = {"register_backend": (), "register_debug_backend": ("debug",),
        "register_experimental_backend": ("experimental",)}
EXCLUDE_TAGS = {"debug", "experimental"}  # list_backends(exclude_tags=("debug", "experimental"))

HEADER = """\
# torch.compile per torch release (AIC103), read from each release's macOS arm64 wheel
# (Python sources, torch never imported). default = list_backends() with its default
# exclude_tags and no third-party entry points; all = every name torch registers itself.
# python_max = first Python minor torch.compile rejects; python_error = the RuntimeError
# torch.compile raises there; mode_kwarg_error = what backend='cudagraphs' does with mode=.
"""

ENTRY_POINT_HEADER = """\
# Entry points (AIC103): the calls that compile, and where each takes its settings:
# backend = [positional index or -1 (keyword-only), keyword]; mode/options = keywords.
# decorator = also used bare as ``@name``. Every entry point marks the function it is
# handed (``name(fn)``, ``name(...)(fn)``, ``@name``) as compiled code (AIC102 reads that)."""


# -- registered backends -------------------------------------------------------------

def _register_aliases(tree: ast.Module) -> dict[str, tuple[str, ...]]:
    """Local name -> tags, for the register functions a module imports."""
    out = {}
    for stmt in tree.body:
        if isinstance(stmt, ast.ImportFrom):
            for a in stmt.names:
                if a.name in TAGS:
                    out[a.asname or a.name] = TAGS[a.name]
    return out


def _str_kw(call: ast.Call, name: str, pos: int) -> ast.expr | None:
    for kw in call.keywords:
        if kw.arg == name:
            return kw.value
    return call.args[pos] if len(call.args) > pos else None


def _tags(call: ast.Call | None, default: tuple[str, ...]) -> tuple[str, ...]:
    node = _str_kw(call, "tags", 2) if call is not None else None
    if isinstance(node, (ast.Tuple, ast.List)):
        return tuple(e.value for e in node.elts if isinstance(e, ast.Constant))
    return default


def registrations(source: str) -> dict[str, tuple[str, ...]]:
    """name -> tags of the backends one module registers when imported."""
    tree = ast.parse(source)
    aliases = _register_aliases(tree)
    found: dict[str, tuple[str, ...]] = {}

    def walk(body: list[ast.stmt]) -> None:
        for stmt in body:
            if isinstance(stmt, (ast.If, ast.Try)):
                walk(stmt.body)
                walk(stmt.orelse)
                for h in getattr(stmt, "handlers", []):
                    walk(h.body)
            elif isinstance(stmt, (ast.FunctionDef, ast.ClassDef)):
                for d in stmt.decorator_list:
                    call = d if isinstance(d, ast.Call) else None
                    fn = call.func if call is not None else d
                    if isinstance(fn, ast.Name) and fn.id in aliases:
                        name = _str_kw(call, "name", 1) if call is not None else None
                        key = name.value if isinstance(name, ast.Constant) else stmt.name
                        found[key] = _tags(call, aliases[fn.id])
            elif (isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call)
                  and isinstance(stmt.value.func, ast.Name) and stmt.value.func.id in aliases):
                call = stmt.value
                name = _str_kw(call, "name", 1)
                if isinstance(name, ast.Constant) and isinstance(name.value, str):
                    found[name.value] = _tags(call, aliases[call.func.id])

    walk(tree.body)
    return found


def _function(tree: ast.AST, name: str) -> ast.FunctionDef | None:
    return next((n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef) and n.name == name), None)


def _lazy_modules(registry_src: str) -> list[str]:
    """The modules besides backends/ that ``_lazy_import`` imports (the minifier backends)."""
    fn = _function(ast.parse(registry_src), "_lazy_import")
    out = []
    for node in ast.walk(fn) if fn else ():
        if isinstance(node, ast.ImportFrom) and node.level == 2 and node.module:  # from ..repro.after_dynamo
            out.append("torch/_dynamo/" + node.module.replace(".", "/") + ".py")
    return out


def backends(wheel: Wheel) -> dict[str, tuple[str, ...]]:
    modules = sorted(n for n in wheel.names if n.startswith(BACKENDS) and n.endswith(".py")
                     and "/" not in n[len(BACKENDS):] and n != REGISTRY)
    modules += [m for m in _lazy_modules(wheel.text(REGISTRY)) if wheel.has(m)]
    found: dict[str, tuple[str, ...]] = {}
    for m in modules:
        found.update(registrations(wheel.text(m)))
    return found


# -- modes, Python, errors ------------------------------------------------------------

def modes(wheel: Wheel) -> tuple[list[str], str]:
    if wheel.has(INDUCTOR_INIT):
        src = wheel.text(INDUCTOR_INIT)
        fn = _function(ast.parse(src), "list_mode_options")
        if fn is not None:
            for node in ast.walk(fn):
                target = node.targets[0] if isinstance(node, ast.Assign) else getattr(node, "target", None)
                if (isinstance(node, (ast.Assign, ast.AnnAssign)) and isinstance(target, ast.Name)
                        and target.id == "mode_options" and isinstance(node.value, ast.Dict)):
                    return [k.value for k in node.value.keys], f"{INDUCTOR_INIT} L{fn.lineno} list_mode_options"
    src = wheel.text(INIT)
    fn = _function(ast.parse(src), "apply_mode")
    if fn is None:
        raise SystemExit(f"{wheel.name}: no list_mode_options nor apply_mode")
    out = []
    for node in ast.walk(fn):
        if (isinstance(node, ast.Compare) and isinstance(node.left, ast.Name) and node.left.id == "mode"
                and isinstance(node.ops[0], ast.Eq) and isinstance(node.comparators[0], ast.Constant)):
            out.append(node.comparators[0].value)
    return out, f"{INIT} L{fn.lineno} (_TorchCompileInductorWrapper.apply_mode)"


def _version_raise(fn: ast.FunctionDef) -> tuple[str, str] | None:
    """``if sys.version_info >= (3, N): raise RuntimeError("...")`` -> ("3.N", message)."""
    for node in ast.walk(fn):
        if not (isinstance(node, ast.If) and isinstance(node.test, ast.Compare)
                and isinstance(node.test.ops[0], ast.GtE)
                and isinstance(node.test.left, ast.Attribute) and node.test.left.attr == "version_info"
                and isinstance(node.test.comparators[0], ast.Tuple)):
            continue
        major, minor = (e.value for e in node.test.comparators[0].elts[:2])
        r = node.body[0]
        if (isinstance(r, ast.Raise) and isinstance(r.exc, ast.Call) and r.exc.args
                and isinstance(r.exc.args[0], ast.Constant)):
            return f"{major}.{minor}", r.exc.args[0].value
    return None


def python_limit(wheel: Wheel) -> tuple[str, str, int]:
    fn = _function(ast.parse(wheel.text(EVAL_FRAME)), "check_if_dynamo_supported")
    check = _version_raise(fn) if fn else None
    if check is None:
        raise SystemExit(f"{wheel.name}: no Python version test in {EVAL_FRAME} check_if_dynamo_supported")
    # compile() has @overload stubs from 2.4: the one with a body holds the test
    at_compile = next((r for n in ast.parse(wheel.text(INIT)).body
                       if isinstance(n, ast.FunctionDef) and n.name == "compile"
                       for r in [_version_raise(n)] if r is not None), None)
    if at_compile is not None and at_compile[0] != check[0]:
        raise SystemExit(f"{wheel.name}: compile() rejects Python {at_compile[0]}+, _dynamo {check[0]}+")
    return check[0], (at_compile or check)[1], fn.lineno


def invalid_backend(wheel: Wheel) -> tuple[str | None, int | None]:
    """InvalidBackend's message when it is one f-string, and the class's line."""
    src = wheel.text(EXC)
    cls = next((n for n in ast.parse(src).body if isinstance(n, ast.ClassDef) and n.name == "InvalidBackend"), None)
    if cls is None:
        return None, None
    init = _function(cls, "__init__")
    for node in ast.walk(init) if init else ():
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "__init__"
                and node.args and isinstance(node.args[0], ast.JoinedStr)):
            parts = []
            for v in node.args[0].values:
                if isinstance(v, ast.Constant):
                    parts.append(v.value)
                else:
                    conv = {-1: "", 114: "!r", 115: "!s", 97: "!a"}[v.conversion]
                    parts.append("{" + ast.get_source_segment(src, v.value) + conv + "}")
            return "".join(parts), cls.lineno
    return None, cls.lineno


# -- the table --------------------------------------------------------------------------

def release_entry(wheel: Wheel, hand: dict) -> dict:
    h = hand.get("release", {}).get(wheel.version, {})
    regs = backends(wheel)
    mode_list, mode_src = modes(wheel)
    py_max, py_error, check_line = python_limit(wheel)
    error, exc_line = invalid_backend(wheel)
    if "invalid_backend_error" in h:
        error = h["invalid_backend_error"]
    elif error is None:
        raise SystemExit(f"{wheel.name}: InvalidBackend builds its message in several steps; write it in "
                         f"{HAND.name} [release.\"{wheel.version}\"] invalid_backend_error")
    if "mode_kwarg_error" not in h:
        raise SystemExit(f"{wheel.name}: say what cudagraphs does with mode= in {HAND.name} "
                         f"[release.\"{wheel.version}\"] mode_kwarg_error")
    tree = ast.parse(wheel.text(REGISTRY))
    lookup, listing = _function(tree, "lookup_backend"), _function(tree, "list_backends")
    exc = f"{EXC} InvalidBackend L{exc_line}; " if exc_line else ""
    source = (f"torch {wheel.version} macOS arm64 wheel ({wheel.name}): {REGISTRY} lookup_backend L{lookup.lineno}, "
              f"list_backends L{listing.lineno}; {exc}modes: {mode_src}; python check: {EVAL_FRAME} "
              f"check_if_dynamo_supported L{check_line}; python_error: torch/__init__.py compile() (2.1+) / "
              f"_dynamo/eval_frame.py (2.0); mode_kwarg_error: _dynamo/backends/cudagraphs.py")
    return {
        "default": sorted(n for n, tags in regs.items() if not EXCLUDE_TAGS.intersection(tags)),
        "registered": sorted(regs),
        "modes": mode_list,
        "python_max": py_max,
        "python_error": py_error,
        "invalid_backend_error": error,
        "mode_kwarg_error": h["mode_kwarg_error"],
        "source": source,
    }


def _value(v) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, str):
        return q(v)
    if isinstance(v, list):
        return "[" + ", ".join(_value(x) for x in v) + "]"
    raise TypeError(f"cannot write {v!r}")


def _table(name: str, entry: dict) -> list[str]:
    return [f"[{name}]"] + [f"{k} = {_value(v)}" for k, v in entry.items()] + [""]


def _key(name: str) -> str:
    return name if name.replace("_", "").isalnum() else q(name)


def load_hand(path: Path = HAND) -> dict:
    with open(path, "rb") as fh:
        return tomllib.load(fh)


def build(wheel_paths: list[Path], hand: dict | None = None) -> str:
    hand = load_hand() if hand is None else hand
    lines = [HEADER]
    for path in wheel_paths:
        with Wheel(path) as w:
            entry = release_entry(w, hand)
        lines += _table(f"release.{q(w.version)}", entry)
    for name, e in hand.get("backend_package", {}).items():
        lines += _table(f"backend_package.{_key(name)}", e)
    lines.append(ENTRY_POINT_HEADER)
    lines.append("")
    for name, e in hand.get("entry_point", {}).items():
        lines += _table(f"entry_point.{_key(name)}", e)
    return "\n".join(lines[:-1]) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--wheel-dir", type=Path, required=True, help="where the torch macOS arm64 wheels are (or go)")
    ap.add_argument("--download", action="store_true", help="fetch missing wheels with pip into --wheel-dir")
    ap.add_argument("--torch", nargs="+", default=list(RELEASES), help="releases, oldest first (default 2.0.0 ... 2.15.0)")
    ap.add_argument("--out", type=Path, default=OUT)
    args = ap.parse_args(argv)
    wheels = wheels_for(args.torch, args.wheel_dir, args.download)
    text = build(wheels)
    args.out.write_text(text, encoding="utf-8")
    print(f"wrote {args.out} ({len(text)} bytes) from {len(wheels)} wheels")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
