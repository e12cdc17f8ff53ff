"""Record one installed Triton release's API as its runtime sees it, for the matrix builder.

    <venv>/bin/python tools/triton_introspect.py --wheel PATH/triton-X-....whl [--out version_matrix/introspect]

Run it with the Python of a throwaway environment that has the release installed (from the
wheel named with ``--wheel``; Triton imports on a machine without a GPU). Triton 2.0 imports
torch at ``import triton`` and ``triton.testing`` does in every release, so the environment
also holds a CPU torch (its release recorded under ``[meta] torch``; triton's own METADATA pins no torch
release). It imports triton, never aicompat, and writes ``<out>/triton-<release>.toml`` in
the format of tools/torch_introspect.py (``matrixbuild/introspection.py`` reads both):

- ``[meta]``: the release, ``triton.__version__``, the wheel's file name and sha256, the
  Python, the torch present, ``eager`` (the ``triton.*`` modules a bare ``import triton``
  loads), ``missing`` (covered modules this release lacks) and ``lazy`` (child modules of
  covered modules that ``import triton`` leaves unreachable as attributes);
- per covered module, every name ``dir()`` shows plus the child modules it could import,
  each with its kind and, for callables, the signature ``inspect.signature`` gives (``i``),
  in the notation of ``aicompat.matrixbuild.apiscan.signature``.

What a kernel author may pass is recorded, not what Triton's code generator passes:

- ``tl.*`` builtins are Python functions under ``@builtin`` (``functools.wraps``, so
  ``inspect.signature`` reads the function it wraps); the parameters the compiler fills in
  (``_builder`` before 3.3, ``_semantic`` and ``_generator`` after) are dropped;
- a ``@triton.jit`` function of the library (``tl.sum``, ``tl.cdiv``: a ``JITFunction``
  object, whose own ``__call__`` takes ``*args, **kwargs``) is recorded as a function
  (kind ``f``) with the signature of the Python function it compiles (``.fn``).
"""

from __future__ import annotations

import argparse
import hashlib
import importlib
import importlib.metadata
import inspect
import platform
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from torch_introspect import _Sub, inspect_sig, kind_of, module_names, q, unreachable_children  # noqa: E402

# Covered modules (the same list as ``matrixbuild.build.PACKAGES["triton"].modules``;
# tests/test_introspection.py checks they match). A release that lacks one says so under
# ``missing``: ``triton.language.libdevice`` is 2.0's, ``extra.cuda.libdevice`` 3.0's on.
MODULES = [
    "triton", "triton.language", "triton.language.math", "triton.language.libdevice",
    "triton.language.extra", "triton.language.extra.cuda", "triton.language.extra.cuda.libdevice",
    "triton.language.extra.libdevice", "triton.testing", "triton.runtime",
]
# Parameters the compiler passes to a builtin; a kernel author never does.
INTERNAL = frozenset({"_builder", "_semantic", "_generator"})


def jit_function(obj):
    """The Python function a ``JITFunction`` (or an autotuner/heuristics wrapper of one)
    compiles, or None for anything else."""
    for _ in range(4):
        if isinstance(obj, type) or not hasattr(obj, "__dict__"):
            return None
        obj = vars(obj).get("fn")
        if obj is None or inspect.isfunction(obj):
            return obj
    return None


def user_signature(fn) -> str:
    sig = inspect.signature(fn)
    return inspect_sig(sig.replace(parameters=[p for p in sig.parameters.values() if p.name not in INTERNAL]))


def signatures(obj) -> tuple[str, str, list[str] | None]:
    """(kind, source letter, signatures) of one object."""
    kind = kind_of(obj)
    if kind == "m":
        return kind, "-", None
    jit = jit_function(obj) if kind == "a" else None
    if jit is not None:
        try:
            return "f", "i", [user_signature(jit)]
        except (TypeError, ValueError):
            return "f", "-", None
    if kind in ("f", "c") or (kind == "a" and callable(obj)):
        try:
            return kind, "i", [user_signature(obj)]
        except (TypeError, ValueError):
            return kind, "-", None
    return kind, "-", None


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--wheel", required=True, help="the wheel this environment's triton was installed from")
    ap.add_argument("--out", default=str(Path(__file__).resolve().parent.parent / "version_matrix" / "introspect"))
    args = ap.parse_args(argv)
    wheel = Path(args.wheel)
    digest = hashlib.sha256(wheel.read_bytes()).hexdigest()

    before = set(sys.modules)
    import triton  # noqa: PLC0415 - importing is the point

    eager = sorted(m for m in set(sys.modules) - before if m.startswith("triton.") and sys.modules[m] is not None
                   and not any(p.startswith("_") for p in m.split(".")[1:]))
    release = triton.__version__.split("+")[0]
    lazy = unreachable_children(MODULES)
    loaded = {}
    for mod in MODULES:
        try:
            loaded[mod] = importlib.import_module(mod)
        except Exception as exc:  # noqa: BLE001 - a module this release lacks or cannot import here
            loaded[mod] = None
            print(f"{mod}: not imported: {type(exc).__name__}: {exc}"[:300], file=sys.stderr)
    try:
        torch = importlib.metadata.version("torch")  # installed beside it (imported or not)
    except importlib.metadata.PackageNotFoundError:
        torch = "none"
    lines = [
        f"# Generated by tools/triton_introspect.py from an installed triton {triton.__version__}; "
        "do not edit by hand (see version_matrix/README.md).",
        "[meta]",
        'package = "triton"',
        f"release = {q(release)}",
        f"version = {q(triton.__version__)}",
        f"wheel = {q(wheel.name)}",
        f"sha256 = {q(digest)}",
        f"python = {q(platform.python_version())}",
        f"platform = {q(platform.machine() + '-' + platform.system().lower())}",
        f"torch = {q(torch)}",
        "eager = [" + ", ".join(q(m) for m in eager) + "]",
        f"missing = [{', '.join(q(m) for m in MODULES if loaded[m] is None)}]",
        "lazy = [" + ", ".join(q(m) for m in lazy) + "]",
    ]
    counts: dict[str, int] = {}
    for mod in sorted(m for m in MODULES if loaded[m] is not None):
        entries = []
        for n, obj in sorted(module_names(loaded[mod]).items()):
            if obj is _Sub:
                entries.append(f"{n} m -")
                continue
            try:
                kind, src, sigs = signatures(obj)
            except Exception:  # noqa: BLE001 - introspection must not stop at one odd object
                kind, src, sigs = kind_of(obj), "-", None
            counts[src] = counts.get(src, 0) + 1
            text = f"{n} {kind} {src}"
            if sigs is not None:
                text += " " + " | ".join(f"({s})" for s in sigs)
            entries.append(text)
        lines += ["", f"[module.{q(mod)}]", "names = '''\n" + "\n".join(entries) + "\n'''"]
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    path = out / f"triton-{release}.toml"
    path.write_text("\n".join(lines) + "\n")
    print(f"wrote {path}: {sum(1 for m in loaded.values() if m is not None)} of {len(MODULES)} modules, "
          f"signature sources {counts}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
