"""Generate version_matrix/stdlib.toml from typeshed's standard-library stubs.

    python tools/build_stdlib_matrix.py                      # downloads the pinned mypy wheels with pip
    python tools/build_stdlib_matrix.py --wheel OLD --wheel NEW   # or reads wheels you already have

typeshed is read from the mypy wheel, which bundles ``mypy/typeshed/stdlib``
(``VERSIONS`` plus one stub per module). Nothing is imported or executed: the
wheel is read as a zip and the stubs are parsed with ``ast``.

- ``VERSIONS`` gives each module's first and last Python (``tomllib: 3.11-``,
  ``imp: 3.0-3.11``).
- Module-level ``if sys.version_info >= (3, N):`` branches of a stub (and the
  ``else`` of ``< (3, N)``) give the names added in 3.N; the other direction
  gives names removed in 3.N. A name defined on both sides of a branch, or
  unconditionally, exists everywhere and is left out.

Only what differs after ``--oldest`` (3.7, the oldest target aicompat models)
is written, sorted, so the same wheel always gives the same bytes. Private
modules and names (a leading underscore) are left out.
"""

from __future__ import annotations

import argparse
import ast
import os
import re
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

# typeshed snapshots, oldest first: the last with 3.7 support (its 3.8 branches), the last with 3.8
# support (3.9/3.10 branches), the newest
MYPY = ("1.4.1", "1.14.1", "2.4.1")
ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "version_matrix" / "stdlib.toml"
PREFIX = "mypy/typeshed/stdlib/"
INF = (99, 0)
SKIP_MODULES = {"typing_extensions", "mypy_extensions"}  # backports: every name exists on every Python

Version = tuple[int, int]


def parse_versions(text: str) -> dict[str, tuple[Version, Version | None]]:
    """``VERSIONS`` lines -> {module: (first, last or None)}."""
    out = {}
    for raw in text.splitlines():
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        mod, span = (s.strip() for s in line.split(":", 1))
        first, _, last = span.partition("-")
        out[mod] = (_ver(first), _ver(last) if last.strip() else None)
    return out


def _ver(text: str) -> Version:
    major, minor = text.strip().split(".")
    return int(major), int(minor)


def _version_test(test: ast.expr) -> tuple[str, Version] | None:
    """``sys.version_info >= (3, N)`` -> (">=", (3, N)); also ``<``, ``>`` and ``<=``."""
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1 and len(test.comparators) == 1):
        return None
    left, right = test.left, test.comparators[0]
    if not (isinstance(left, ast.Attribute) and left.attr == "version_info"
            and isinstance(left.value, ast.Name) and left.value.id == "sys"):
        return None
    if not (isinstance(right, ast.Tuple) and len(right.elts) >= 2
            and all(isinstance(e, ast.Constant) and isinstance(e.value, int) for e in right.elts[:2])):
        return None
    v = (right.elts[0].value, right.elts[1].value)
    op = test.ops[0]
    if isinstance(op, ast.GtE):
        return ">=", v
    if isinstance(op, ast.Lt):
        return "<", v
    if isinstance(op, ast.Gt):  # > (3, N) means >= (3, N + 1) for minor versions
        return ">=", (v[0], v[1] + 1)
    if isinstance(op, ast.LtE):
        return "<", (v[0], v[1] + 1)
    return None


def _narrowing(test: ast.expr) -> tuple[list[tuple[str, Version]], bool]:
    """The version tests an ``if`` condition applies to its body, and whether its
    ``else`` may be narrowed too (only for a lone version test).
    ``sys.version_info >= (3, 12) and sys.platform == "linux"`` narrows the body only."""
    t = _version_test(test)
    if t is not None:
        return [t], True
    if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And):
        return [t for t in map(_version_test, test.values) if t is not None], False
    return [], False


def _apply(tests: list[tuple[str, Version]], lo: Version, hi: Version) -> tuple[Version, Version]:
    for op, v in tests:
        lo, hi = (max(lo, v), hi) if op == ">=" else (lo, min(hi, v))
    return lo, hi


def stub_spans(source: str, star=None, package: str = "") -> dict[str, list[tuple[Version, Version]]]:
    """Public module-level names of a stub -> the [first, end) version spans they are defined in.

    ``star(module)``, when given, returns the spans of the names another stub
    exports, for ``from .taskgroups import *`` (asyncio) and ``from posixpath
    import *`` (os.path); ``package`` resolves relative imports."""
    spans: dict[str, list[tuple[Version, Version]]] = {}

    def add(name: str, lo: Version, hi: Version) -> None:
        if not name.startswith("_") and lo < hi:
            spans.setdefault(name, []).append((lo, hi))

    def walk(body: list[ast.stmt], lo: Version, hi: Version) -> None:
        for stmt in body:
            if isinstance(stmt, ast.If):
                tests, whole = _narrowing(stmt.test)
                walk(stmt.body, *_apply(tests, lo, hi))
                if whole:  # the else of a lone version test holds on the other side of it
                    op, v = tests[0]
                    walk(stmt.orelse, *_apply([("<" if op == ">=" else ">=", v)], lo, hi))
                else:  # sys.platform and the like: both sides may hold
                    walk(stmt.orelse, lo, hi)
            elif isinstance(stmt, ast.ImportFrom) and any(a.name == "*" for a in stmt.names):
                if star is not None:
                    base = package.split(".") if stmt.level else []
                    if stmt.level > 1:
                        base = base[:len(base) - (stmt.level - 1)]
                    target = ".".join(base + ([stmt.module] if stmt.module else []))
                    for name, sub in (star(target) or {}).items():
                        for slo, shi in sub:
                            add(name, max(lo, slo), min(hi, shi))
            elif isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                add(stmt.name, lo, hi)
            elif isinstance(stmt, ast.Assign):
                for target in stmt.targets:
                    if isinstance(target, ast.Name):
                        add(target.id, lo, hi)
            elif isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name):
                add(stmt.target.id, lo, hi)
            elif isinstance(stmt, (ast.Import, ast.ImportFrom)):
                # Re-exports: ``from x import y as y`` / ``as z``, or a plain import named in ``__all__``.
                for alias in stmt.names:
                    if alias.asname is not None:
                        add(alias.asname, lo, hi)
                    elif isinstance(stmt, ast.ImportFrom) and alias.name in exported:
                        add(alias.name, lo, hi)
            elif isinstance(stmt, ast.TypeAlias if hasattr(ast, "TypeAlias") else ()) and isinstance(stmt.name, ast.Name):
                add(stmt.name.id, lo, hi)

    tree = ast.parse(source)
    exported = _all_names(tree)
    walk(tree.body, (0, 0), INF)
    return spans


def _all_names(tree: ast.Module) -> set[str]:
    """Every string put in ``__all__`` at module level, in any branch."""
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Assign, ast.AugAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if any(isinstance(t, ast.Name) and t.id == "__all__" for t in targets) and isinstance(
                    node.value, (ast.List, ast.Tuple)):
                out.update(e.value for e in node.value.elts if isinstance(e, ast.Constant) and isinstance(e.value, str))
    return out


def versioned_names(source: str, oldest: Version, star=None, package: str = ""
                    ) -> tuple[set[str], dict[str, str], dict[str, str]]:
    """Every public name, the names added after ``oldest`` ({name: "3.N"}) and the names removed after it."""
    added, removed = {}, {}
    all_spans = stub_spans(source, star, package)
    for name, spans in all_spans.items():
        first = min(lo for lo, _ in spans)
        end = max(hi for _, hi in spans)
        if first > oldest:
            added[name] = f"{first[0]}.{first[1]}"
        if end != INF and end > oldest:
            removed[name] = f"{end[0]}.{end[1]}"
    return set(all_spans), added, removed


def _star_resolver(zf: zipfile.ZipFile, listing: set[str]):
    """module -> the spans of the names ``from module import *`` brings (its
    ``__all__`` when it has one), read from the same snapshot, memoized."""
    memo: dict[str, dict | None] = {}

    def star(module: str):
        if module in memo:
            return memo[module]
        memo[module] = None  # a cycle reads as nothing
        stub = _stub_path(module, listing)
        if stub is None:
            return None
        text = zf.read(stub).decode("utf-8")
        package = module if stub.endswith("/__init__.pyi") else module.rpartition(".")[0]
        spans = stub_spans(text, star, package)
        exported = _all_names(ast.parse(text))
        if exported:
            spans = {n: v for n, v in spans.items() if n in exported}
        memo[module] = spans
        return spans

    return star


def _stub_path(module: str, names: set[str]) -> str | None:
    base = PREFIX + module.replace(".", "/")
    for cand in (base + ".pyi", base + "/__init__.pyi"):
        if cand in names:
            return cand
    return None


def build(wheels: list[Path], oldest: Version = (3, 7)) -> str:
    """One table from several typeshed snapshots, oldest first.

    typeshed deletes a ``sys.version_info`` branch once the Python below it is
    out of support (mypy 2.4.1's stubs no longer say that ``functools.cache``
    is new in 3.9), so an older snapshot still supplies those versions; the
    newest snapshot's ``VERSIONS`` and removals win."""
    zips = [zipfile.ZipFile(w) for w in wheels]
    try:
        releases = [w.name.split("-")[1] for w in wheels]  # the mypy versions; platform tags do not change stubs
        versions = parse_versions(zips[-1].read(PREFIX + "VERSIONS").decode("utf-8"))
        listings = [set(z.namelist()) for z in zips]
        stars = [_star_resolver(z, listing) for z, listing in zip(zips, listings)]
        provenance = f"typeshed in mypy {', '.join(releases)}"
        entries: list[tuple[str, dict]] = []
        # Submodules VERSIONS does not list (os.path) live as long as their parent.
        stubbed = {n[len(PREFIX):-len(".pyi")].replace("/", ".").removesuffix(".__init__")
                   for n in listings[-1] if n.startswith(PREFIX) and n.endswith(".pyi")}
        for module in sorted(set(versions) | stubbed):
            if any(part.startswith("_") for part in module.split(".")) or module.split(".")[0] in SKIP_MODULES:
                continue
            owner = module
            while owner not in versions and "." in owner:
                owner = owner.rpartition(".")[0]
            if owner not in versions:
                continue
            first, last = versions[owner]
            if owner != module and (first > oldest or last is not None):
                continue  # the parent's entry already says when the whole package comes and goes
            entry: dict = {}
            if first > oldest:
                entry["added"] = f"{first[0]}.{first[1]}"
            if last is not None and (last[0], last[1] + 1) > oldest:
                entry["removed"] = f"{last[0]}.{last[1] + 1}"
            files = ["VERSIONS"]
            if "added" not in entry:  # a new module's names are all new with it
                added: dict[str, str] = {}
                removed: dict[str, str] = {}
                for z, listing, star in zip(zips, listings, stars):  # oldest first: later ones override removals
                    stub = _stub_path(module, listing)
                    if stub is None:
                        continue
                    package = module if stub.endswith("/__init__.pyi") else module.rpartition(".")[0]
                    present, a, r = versioned_names(z.read(stub).decode("utf-8"), oldest, star, package)
                    added.update(a)  # a newer snapshot's version wins; older ones fill in below its floor
                    for name in present:  # the newer snapshot's word on removals wins
                        if name in r:
                            removed[name] = r[name]
                        else:
                            removed.pop(name, None)
                    if (a or r) and stub[len(PREFIX):] not in files:
                        files.append(stub[len(PREFIX):])
                if added:
                    entry["names_added"] = _by_version(added)
                if removed:
                    entry["names_removed"] = _by_version(removed)
            if entry:
                entry["source"] = f"{provenance}: stdlib/{', stdlib/'.join(files)}"
                entries.append((module, entry))
    finally:
        for z in zips:
            z.close()
    return render(entries, releases, oldest)


def _by_version(names: dict[str, str]) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for name, v in names.items():
        out.setdefault(v, []).append(name)
    return {v: sorted(ns) for v, ns in sorted(out.items(), key=lambda kv: _ver(kv[0]))}


def _q(s: str) -> str:
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def render(entries: list[tuple[str, dict]], releases: list[str], oldest: Version) -> str:
    lines = [
        "# GENERATED by tools/build_stdlib_matrix.py from typeshed; do not edit by hand.",
        f"# Read from the mypy {' and '.join(releases)} wheels (mypy/typeshed/stdlib: VERSIONS of the newest, and the",
        "# stubs' module-level sys.version_info branches of each).",
        "# Regenerate: python tools/build_stdlib_matrix.py",
        f"# Only modules and module-level names added or removed after Python {oldest[0]}.{oldest[1]}.",
        "# added/removed: the first Python that has / no longer has it.",
        "",
    ]
    for module, e in entries:
        lines.append(f"[module.{_q(module)}]")
        for key in ("added", "removed"):
            if key in e:
                lines.append(f"{key} = {_q(e[key])}")
        for key in ("names_added", "names_removed"):
            if key in e:
                inner = ", ".join(f"{_q(v)} = [{', '.join(_q(n) for n in ns)}]" for v, ns in e[key].items())
                lines.append(f"{key} = {{{inner}}}")
        lines.append(f"source = {_q(e['source'])}")
        lines.append("")
    return "\n".join(lines)


def download(version: str, dest: Path) -> Path:
    env = dict(os.environ, PIP_CONFIG_FILE=os.devnull)
    subprocess.run([sys.executable, "-m", "pip", "download", f"mypy=={version}", "--no-deps", "--only-binary=:all:",
                    "-d", str(dest), "-q"], check=True, env=env)
    found = sorted(dest.glob(f"mypy-{version}-*.whl"))
    if not found:
        raise SystemExit(f"pip did not leave a mypy {version} wheel in {dest}")
    return found[0]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--wheel", type=Path, action="append", help="a mypy wheel on disk (repeat, oldest first)")
    ap.add_argument("--mypy", nargs="+", default=list(MYPY), help=f"mypy releases to download (default {' '.join(MYPY)})")
    ap.add_argument("--oldest", default="3.7", help="leave out what every Python from this one on has")
    ap.add_argument("--out", type=Path, default=OUT)
    args = ap.parse_args(argv)
    if not re.fullmatch(r"3\.\d+", args.oldest):
        ap.error("--oldest must look like 3.8")
    with tempfile.TemporaryDirectory() as tmp:
        wheels = args.wheel or [download(v, Path(tmp)) for v in args.mypy]
        text = build(wheels, _ver(args.oldest))
    args.out.write_text(text, encoding="utf-8")
    print(f"wrote {args.out} ({len(text)} bytes) from {', '.join(w.name for w in wheels)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
