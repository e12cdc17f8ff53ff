"""Which modules each release of a package ships: version_matrix/modules/<package>.toml.

    python3 tools/build_module_inventory.py torch [--versions 2.0.0,...] [--reference 1.13.1]
                                              [--archives DIR] [--out version_matrix/modules]

For every release (default: the package's releases in version_matrix/releases.toml) one wheel
is taken from PyPI (the URL and sha256 PyPI's JSON API lists; the file is checked against that
digest) and read as a zip; nothing of the package is imported or run. A module is

- a ``.py`` file (``__init__.py`` names its package), a directory (a package, or a namespace
  package: Python 3 imports any directory on the path), or an extension module (``.so``/``.pyd``);
- also a name the release's Python puts in ``sys.modules`` under a literal key
  (``sys.modules["torch.distributed._shard.checkpoint"] = ...``).

A module that some release ships and another does not is an import that fails in the second,
unless the second could create it at run time. The table records, per release, the modules
whose status it cannot close, as ``unknown``:

- any name below an extension module (C code registers submodules: ``torch._C._nn``);
- a module whose full name, or whose last part, is a string constant of a source file of that
  release that writes ``sys.modules`` (a computed key such as ``f"pkg.{name}"`` built from a
  list of names), or whose name starts with the literal head of such a computed key.

Only modules whose presence differs between the releases read are written (a module every
release ships is never judged; one no release ships is a name the table cannot speak for).
``--reference`` releases are read for that comparison and for messages ("last in 1.13.1") but are
not releases the rules judge.
"""

from __future__ import annotations

import argparse
import ast
import hashlib
import json
import re
import sys
import urllib.parse
import urllib.request
import zipfile
from pathlib import Path

import tomllib

ROOT = Path(__file__).resolve().parent.parent
PYPI_JSON = "https://pypi.org/pypi/{dist}/json"

# The import roots read, and the wheel preferred where a release has several (the Python sources
# are the same on every platform; one platform throughout keeps releases comparable).
PACKAGES = {
    "torch": {"roots": ("torch",), "prefer": (r"macosx_1[14]_0_arm64", r"manylinux.*x86_64")},
    "triton": {"roots": ("triton",), "prefer": (r"manylinux.*x86_64",)},
    "transformers": {"roots": ("transformers",), "prefer": (r"py3-none-any",)},
}
_INDEX: dict[str, dict] = {}
_EXT = re.compile(r"^(?P<name>[A-Za-z_][A-Za-z0-9_]*)(\.[A-Za-z0-9_-]+)?\.(so|pyd)$")


def _pick(files: list[dict], prefer: tuple[str, ...]) -> dict:
    wheels = [f for f in files if f["filename"].endswith(".whl")]
    for pat in prefer:
        got = sorted((f for f in wheels if re.search(pat, f["filename"])), key=lambda f: f["size"])
        if got:
            return got[0]
    if not wheels:
        raise SystemExit(f"no wheel among {[f['filename'] for f in files]}")
    return min(wheels, key=lambda f: f["size"])


def fetch(dist: str, version: str, prefer: tuple[str, ...], archives: Path) -> tuple[Path, str]:
    """The release's wheel in ``archives`` (downloaded when missing) and its sha256."""
    url = PYPI_JSON.format(dist=dist)
    if dist not in _INDEX:
        _INDEX[dist] = json.load(urllib.request.urlopen(url, timeout=60))["releases"]
    f = _pick(_INDEX[dist].get(version) or [], prefer)
    name = Path(urllib.parse.urlparse(f["filename"]).path).name  # a plain file name, nothing of the index's path
    path = archives / name
    want = f["digests"]["sha256"]
    if not path.is_file() or _sha256(path) != want:
        archives.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".part")
        with urllib.request.urlopen(urllib.parse.urljoin(url, f["url"]), timeout=600) as r, open(tmp, "wb") as out:
            while chunk := r.read(1 << 20):
                out.write(chunk)
        if _sha256(tmp) != want:
            tmp.unlink()
            raise SystemExit(f"{name}: sha256 differs from PyPI's {want}")
        tmp.rename(path)
    return path, want


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        while chunk := fh.read(1 << 20):
            h.update(chunk)
    return h.hexdigest()


def read_wheel(path: Path, roots: tuple[str, ...]) -> tuple[set[str], set[str], set[str], list[str], list[str]]:
    """(modules, extension modules, string constants of files that write sys.modules,
    literal heads of computed sys.modules keys, keys that are variables)."""
    modules: set[str] = set()
    ext: set[str] = set()
    consts: set[str] = set()
    heads: list[str] = []
    variable: list[str] = []
    with zipfile.ZipFile(path) as z:
        for info in z.infolist():
            parts = info.filename.split("/")
            if parts[0] not in roots or any(p == "__pycache__" for p in parts):
                continue
            dirs, leaf = parts[:-1], parts[-1]
            for k in range(1, len(dirs) + 1):  # every folder on the way is a (namespace) package
                if all(p.isidentifier() for p in dirs[:k]):
                    modules.add(".".join(dirs[:k]))
            if not all(p.isidentifier() for p in dirs):
                continue
            if leaf.endswith(".py"):
                stem = leaf[:-3]
                if stem == "__init__":
                    modules.add(".".join(dirs))
                elif stem.isidentifier():
                    modules.add(".".join(dirs + [stem]))
                text = z.read(info).decode("utf-8", "replace")
                if "sys.modules" in text:
                    _scan(text, ".".join(dirs + ([] if stem == "__init__" else [stem])), modules, consts, heads,
                          variable)
            elif (m := _EXT.match(leaf)) and dirs[:1] != ["lib"]:
                name = ".".join(dirs + [m.group("name")])
                modules.add(name)
                ext.add(name)
    return modules, ext, consts, heads, variable


def _scan(text: str, here: str, modules: set[str], consts: set[str], heads: list[str],
          variable: list[str]) -> None:
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and len(node.value) < 200:
            consts.add(node.value)
        key = None
        if isinstance(node, ast.Assign):
            for t in node.targets:
                if isinstance(t, ast.Subscript) and ast.unparse(t.value) == "sys.modules":
                    key = t.slice
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                and ast.unparse(node.func.value) == "sys.modules" and node.func.attr == "setdefault" and node.args:
            key = node.args[0]
        if key is None:
            continue
        if isinstance(key, ast.Constant) and isinstance(key.value, str):
            modules.add(key.value)
        elif isinstance(key, ast.JoinedStr) and key.values and isinstance(key.values[0], ast.Constant):
            heads.append(str(key.values[0].value))
        elif isinstance(key, ast.BinOp) and isinstance(key.left, ast.Constant) and isinstance(key.left.value, str):
            heads.append(key.left.value)
        elif isinstance(key, ast.BinOp) and ast.unparse(key.left) == "__name__":
            heads.append(here + ".")
        elif isinstance(key, ast.Call) and isinstance(key.func, ast.Attribute) and key.func.attr == "join" \
                and key.args and isinstance(key.args[0], (ast.List, ast.Tuple)) and key.args[0].elts:
            first = key.args[0].elts[0]  # ".".join([__name__, device_type])
            if ast.unparse(first) == "__name__":
                heads.append(here + ".")
            elif isinstance(first, ast.Constant) and isinstance(first.value, str):
                heads.append(first.value + ".")
            else:
                variable.append(f"{here}: {ast.unparse(key)}")
        elif not (isinstance(key, ast.Name) and key.id == "__name__"):
            variable.append(f"{here}: {ast.unparse(key)}")


def _ranges(labels: list[str], indices: set[int]) -> list[str]:
    """["2.0.0-2.3.1", "2.5.0"]: runs of consecutive releases."""
    out, run = [], []
    for i in range(len(labels) + 1):
        if i in indices:
            run.append(i)
            continue
        if run:
            out.append(labels[run[0]] if len(run) == 1 else f"{labels[run[0]]}-{labels[run[-1]]}")
            run = []
    return out


def build(package: str, versions: list[str], reference: list[str], archives: Path) -> str:
    spec = PACKAGES[package]
    labels = reference + versions
    seen: list[set[str]] = []
    unknown_of: list[tuple[set[str], set[str], list[str]]] = []
    files = []
    variables: set[str] = set()
    for v in labels:
        path, digest = fetch(package, v, spec["prefer"], archives)
        mods, ext, consts, heads, variable = read_wheel(path, spec["roots"])
        variables.update(variable)
        seen.append(mods)
        unknown_of.append((ext, consts, heads))
        files.append(f"{v}: {path.name} sha256:{digest}")
        print(f"{v}: {len(mods)} modules, {len(ext)} extension modules, {len(heads)} computed sys.modules keys",
              file=sys.stderr)
    every = set().union(*seen)
    varying = sorted(m for m in every if not all(m in s for s in seen))
    lines = [
        f"# Generated by `python3 tools/build_module_inventory.py {package} --versions {','.join(versions)}"
        + (f" --reference {','.join(reference)}`" if reference else "`") + "; do not edit by hand.",
        "[meta]",
        f"package = {json.dumps(package)}",
        f"releases = {json.dumps(versions)}",
        f"reference = {json.dumps(reference)}",
        "source = \"read from the wheels listed in files (zip listing; .py sources scanned with ast for sys.modules keys); "
        "nothing imported\"",
        "files = [",
        *(f"    {json.dumps(f)}," for f in files),
        "]",
        "# sys.modules keys that are plain variables, in some release read (module: key); they register",
        "# modules the code found or generated itself, not names of this table (read: see the tool's doc)",
        "variable_keys = [",
        *(f"    {json.dumps(k)}," for k in sorted(variables)),
        "]",
        "",
        "# module = {present = releases that ship it, unknown = releases whose Python may create it}",
        "[module]",
    ]
    for m in varying:
        have = {i for i, s in enumerate(seen) if m in s}
        unsure = {i for i in range(len(labels)) if i not in have and _unsure(m, *unknown_of[i])}
        entry = f"present = {json.dumps(_ranges(labels, have))}"
        if unsure:
            entry += f", unknown = {json.dumps(_ranges(labels, unsure))}"
        lines.append(f"{json.dumps(m)} = {{{entry}}}")
    return "\n".join(lines) + "\n"


def _unsure(module: str, ext: set[str], consts: set[str], heads: list[str]) -> bool:
    if any(module.startswith(e + ".") for e in ext):
        return True
    if module in consts or module.rsplit(".", 1)[-1] in consts:
        return True
    return any(h and module.startswith(h) for h in heads)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("package", choices=sorted(PACKAGES))
    ap.add_argument("--versions", help="comma-separated releases (default: version_matrix/releases.toml)")
    ap.add_argument("--reference", default="", help="older releases read for comparison only")
    ap.add_argument("--archives", default="/tmp/aicompat-wheels", type=Path)
    ap.add_argument("--out", default=ROOT / "version_matrix" / "modules", type=Path)
    args = ap.parse_args(argv)
    if args.versions:
        versions = [v.strip() for v in args.versions.split(",") if v.strip()]
    else:
        with open(ROOT / "version_matrix" / "releases.toml", "rb") as fh:
            versions = tomllib.load(fh)["package"][args.package]["releases"]
    reference = [v.strip() for v in args.reference.split(",") if v.strip()]
    text = build(args.package, versions, reference, args.archives)
    args.out.mkdir(parents=True, exist_ok=True)
    out = args.out / f"{args.package}.toml"
    out.write_text(text)
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
