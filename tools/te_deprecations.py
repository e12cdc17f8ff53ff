"""Generate version_matrix/te_deprecations.toml: the functions and classes each
Transformer Engine release says are deprecated, read from its Python source.

    python tools/te_deprecations.py --git TE.git [--wheel transformer_engine_cu12-X-....whl ...]

Each release listed in ``releases.toml [package.transformer-engine]`` is read
from the wheel given for it (``transformer_engine_cu12``, which carries the
Python package) or else from the git tag of that release in the repository
(``v2.9`` for 2.9.0, ``v2.14.1`` for 2.14.1). A release with neither is not
read, and the file says so: no claim is made about it. Nothing is imported or
executed; the files are parsed with ``ast``.

What counts as a deprecation of a name ``N`` of module ``M``:

- a function whose body warns unconditionally (a top-level statement of the
  body, not under an ``if``) with ``warnings.warn(msg, DeprecationWarning)``
  or ``FutureWarning``, or that is decorated ``@deprecated(msg)``;
- a class whose ``__init__``/``__new__`` does so;
- ``N = deprecate_wrapper(Old, msg)`` (TE's own helper, common/utils.py).

A warning under a condition (an argument passed, a value) is not a
deprecation of the call and is left out. Where the rest of the body only
forwards to another callable (``return autocast(recipe=fp8_recipe, ...)``,
``with quantized_model_init(...): yield``, a class whose ``__init__`` only
calls ``super().__init__``), that callable is the replacement, named as the
module that exports the deprecated name exports it, with the keywords the
forward passes.

A deprecated name is recorded under every public module path that binds it
(the defining module and each package that imports it, e.g. both
``transformer_engine.pytorch.quantization.fp8_model_init`` and
``transformer_engine.pytorch.fp8_model_init``), with the releases whose source
warns, the newest message, and per release the tag or wheel, path and line.
The output is sorted, so the same sources give the same bytes.
"""

from __future__ import annotations

import argparse
import ast
import hashlib
import re
import subprocess
import sys
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

import tomllib

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "version_matrix" / "te_deprecations.toml"
PACKAGE = "transformer-engine"
TOP = "transformer_engine"
CATEGORIES = {"DeprecationWarning", "FutureWarning"}
_WHEEL = re.compile(r"transformer_engine(?:_cu\d+)?-([0-9][^-]*)-")


# -- sources ------------------------------------------------------------------------------
class GitTree:
    """The Python files of ``transformer_engine/`` at one tag of a git repository."""

    def __init__(self, repo: Path, tag: str) -> None:
        self.repo, self.tag = repo, tag
        self.commit = self._git("rev-parse", f"{tag}^{{commit}}").strip()
        self.origin = f"tag {tag} (commit {self.commit[:12]})"
        self.ref = tag

    def _git(self, *args: str, data: bytes | None = None) -> str:
        return subprocess.run(["git", "-C", str(self.repo), *args], input=data, capture_output=True,
                              check=True).stdout.decode("utf-8", "replace")

    def files(self):
        names = [n for n in self._git("ls-tree", "-r", "--name-only", self.commit, "--", TOP).splitlines()
                 if n.endswith(".py")]
        out = subprocess.run(["git", "-C", str(self.repo), "cat-file", "--batch"],
                             input="".join(f"{self.commit}:{n}\n" for n in names).encode(),
                             capture_output=True, check=True).stdout
        pos = 0
        for name in names:
            header_end = out.index(b"\n", pos)
            size = int(out[pos:header_end].split()[2])
            body = out[header_end + 1:header_end + 1 + size]
            pos = header_end + 1 + size + 1
            yield name, body.decode("utf-8", "replace")


class WheelTree:
    """The Python files of ``transformer_engine/`` in a wheel."""

    def __init__(self, path: Path) -> None:
        self.path = path
        digest = hashlib.sha256(path.read_bytes()).hexdigest()
        self.origin = f"PyPI wheel {path.name} (sha256 {digest})"
        self.ref = path.name.split("-py3")[0]

    def files(self):
        with zipfile.ZipFile(self.path) as z:
            for info in sorted(z.infolist(), key=lambda i: i.filename):
                if info.filename.startswith(TOP + "/") and info.filename.endswith(".py"):
                    yield info.filename, z.read(info).decode("utf-8", "replace")


def tag_of(release: str) -> str | None:
    """The tag of a final release (``v2.9`` for 2.9.0); a post release (2.6.0.post1) has none."""
    if not re.fullmatch(r"\d+\.\d+\.\d+", release):
        return None
    major, minor, patch = release.split(".")
    return f"v{major}.{minor}" if patch == "0" else f"v{major}.{minor}.{patch}"


# -- reading one module -------------------------------------------------------------------
@dataclass
class Found:
    name: str
    line: int
    message: str
    forward: str | None = None  # the callable the body forwards to, as written ("autocast")
    keywords: list[str] = field(default_factory=list)


def module_of(path: str) -> str | None:
    parts = path[:-3].split("/")
    if parts[-1] == "__init__":
        parts = parts[:-1]
    if any(p in ("tests", "setup") for p in parts):
        return None
    return ".".join(parts)


def text_of(node) -> str | None:
    """A message as written: literal parts kept, formatted values as ``{expr}``."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        return "".join(v.value if isinstance(v, ast.Constant) else "{" + ast.unparse(v.value) + "}"
                       for v in node.values)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left, right = text_of(node.left), text_of(node.right)
        return left + right if left is not None and right is not None else None
    return None


def _name(node) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return ""


def deprecation_warning(stmt) -> tuple[str, int] | None:
    """``warnings.warn(msg, DeprecationWarning)`` as a statement: (message, line)."""
    call = stmt.value if isinstance(stmt, ast.Expr) else None
    if not isinstance(call, ast.Call) or _name(call.func) != "warn":
        return None
    if isinstance(call.func, ast.Attribute) and _name(call.func.value) != "warnings":
        return None  # logger.warn, not the warnings module
    category = call.args[1] if len(call.args) > 1 else next(
        (k.value for k in call.keywords if k.arg == "category"), None)
    if _name(category) not in CATEGORIES or not call.args:
        return None
    message = text_of(call.args[0])
    return (message, stmt.lineno) if message is not None else None


def _decorated(node) -> tuple[str, int] | None:
    for d in node.decorator_list:
        if isinstance(d, ast.Call) and _name(d.func) == "deprecated" and d.args:
            message = text_of(d.args[0])
            if message is not None:
                return message, d.lineno
    return None


def _forward(body: list, self_name: str) -> tuple[str, list[str]] | None:
    """The callable a body does nothing but forward to, and the keywords it passes."""
    rest = [s for s in body if not (isinstance(s, ast.Expr) and (isinstance(s.value, ast.Constant)
                                                               or deprecation_warning(s)))]
    if len(rest) != 1:
        return None
    s = rest[0]
    call = None
    if isinstance(s, (ast.Return, ast.Expr)) and isinstance(s.value, ast.Call):
        call = s.value
    elif isinstance(s, ast.Expr) and isinstance(s.value, ast.YieldFrom) and isinstance(s.value.value, ast.Call):
        call = s.value.value
    elif (isinstance(s, ast.With) and len(s.items) == 1 and isinstance(s.items[0].context_expr, ast.Call)
          and len(s.body) == 1 and isinstance(s.body[0], ast.Expr) and isinstance(s.body[0].value, ast.Yield)):
        call = s.items[0].context_expr
    if call is None:
        return None
    callee = ast.unparse(call.func)
    if callee == self_name or not re.fullmatch(r"[A-Za-z_][\w.]*|super\(\)\.__(init|new)__", callee):
        return None
    return callee, [k.arg for k in call.keywords if k.arg and not k.arg.startswith("_")]


def _unconditional_warning(body: list) -> tuple[str, int] | None:
    """The deprecation warning every call reaches: a top-level statement of the body with
    no ``return``/``raise`` before it (``if not axes: return x`` then warn is conditional)."""
    for s in body:
        hit = deprecation_warning(s)
        if hit:
            return hit
        if any(isinstance(n, (ast.Return, ast.Raise)) for n in ast.walk(s)):
            return None
    return None


def _function(node) -> Found | None:
    hit = _decorated(node) or _unconditional_warning(node.body)
    if hit is None:
        return None
    fwd = _forward(node.body, node.name)
    return Found(node.name, hit[1], hit[0], *(fwd or (None, [])))


def _class(node: ast.ClassDef) -> Found | None:
    hit = _decorated(node)
    init = next((s for s in node.body if isinstance(s, ast.FunctionDef) and s.name in ("__init__", "__new__")
                 and _unconditional_warning(s.body)), None)
    if init is not None:
        hit = hit or _unconditional_warning(init.body)
    if hit is None:
        return None
    fwd = None
    if init is not None and len(node.bases) == 1:
        only = _forward(init.body, "")
        if only and only[0] in ("super().__init__", "super().__new__"):
            fwd = (ast.unparse(node.bases[0]), only[1])
    return Found(node.name, hit[1], hit[0], *(fwd or (None, [])))


def _module_level(tree: ast.Module):
    """Statements run at import: the module body and its if/try blocks (not functions)."""
    todo = list(tree.body)
    while todo:
        s = todo.pop(0)
        yield s
        if isinstance(s, (ast.If, ast.Try)):
            todo[:0] = s.body + s.orelse + getattr(s, "finalbody", []) + [
                x for h in getattr(s, "handlers", []) for x in h.body]


@dataclass
class ModuleInfo:
    found: dict[str, Found] = field(default_factory=dict)
    imports: dict[str, tuple[str, str]] = field(default_factory=dict)  # bound name -> (module, name)
    defined: set[str] = field(default_factory=set)
    stars: list[str] = field(default_factory=list)  # modules of ``from x import *``
    all: list[str] | None = None  # a literal ``__all__``


def read_module(module: str, is_package: bool, source: str) -> ModuleInfo | None:
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return None
    info = ModuleInfo()
    package = module if is_package else module.rpartition(".")[0]
    for s in _module_level(tree):
        if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            info.defined.add(s.name)
            f = _class(s) if isinstance(s, ast.ClassDef) else _function(s)
            if f:
                info.found[s.name] = f
        elif isinstance(s, ast.ImportFrom):
            base = _resolve_from(package, s.module, s.level)
            for a in s.names:
                if base and base.startswith(TOP):
                    if a.name == "*":
                        info.stars.append(base)
                    else:
                        info.imports[a.asname or a.name] = (base, a.name)
        elif isinstance(s, ast.Assign) and len(s.targets) == 1 and isinstance(s.targets[0], ast.Name):
            target = s.targets[0].id
            if target == "__all__":
                try:
                    names = ast.literal_eval(s.value)
                except ValueError:
                    names = None
                info.all = [n for n in names if isinstance(n, str)] if isinstance(names, (list, tuple)) else None
                continue
            info.defined.add(target)
            v = s.value
            if isinstance(v, ast.Call) and _name(v.func) == "deprecate_wrapper" and len(v.args) == 2:
                message = text_of(v.args[1])
                wrapped = ast.unparse(v.args[0])
                if message is not None:  # X = deprecate_wrapper(X, msg) names no replacement
                    info.found[target] = Found(target, s.lineno, message, None if wrapped == target else wrapped)
    return info


def _resolve_from(package: str, module: str | None, level: int) -> str | None:
    if level == 0:
        return module
    parts = package.split(".")
    if level - 1 > len(parts):
        return None
    base = parts[:len(parts) - (level - 1)]
    return ".".join(base + ([module] if module else []))


# -- one release ----------------------------------------------------------------------------
@dataclass
class Hit:
    qualname: str
    message: str
    replacement: str | None
    where: str  # "v2.9 transformer_engine/pytorch/quantization.py:676"


def read_release(tree) -> list[Hit]:
    modules: dict[str, ModuleInfo] = {}
    paths: dict[str, str] = {}
    for path, source in tree.files():
        module = module_of(path)
        if module is None:
            continue
        info = read_module(module, path.endswith("__init__.py"), source)
        if info is not None:
            modules[module], paths[module] = info, path

    def bound(module: str, depth: int = 0) -> set[str]:
        """The names a module binds, those its ``import *`` lines bring in included."""
        info = modules.get(module)
        if info is None or depth > 20:
            return set()
        names = info.defined | set(info.imports)
        for star in info.stars:
            names |= exported(star, depth + 1)
        return names

    def exported(module: str, depth: int = 0) -> set[str]:
        """What ``from module import *`` binds: its ``__all__``, else its public names."""
        info = modules.get(module)
        if info is None:
            return set()
        return set(info.all) if info.all is not None else {
            n for n in bound(module, depth) if not n.startswith("_")}

    def origin(module: str, name: str, depth: int = 0) -> tuple[str, str] | None:
        """The module that defines ``module.name``, following ``from x import`` chains."""
        info = modules.get(module)
        if info is None or depth > 20:
            return None
        if name in info.defined:
            return module, name
        if name in info.imports:
            src_mod, src_name = info.imports[name]
            if f"{src_mod}.{src_name}" in modules:
                return None  # a submodule, not a function or class
            return origin(src_mod, src_name, depth + 1)
        for star in reversed(info.stars):  # the last star import binding the name wins
            if name in exported(star):
                return origin(star, name, depth + 1)
        return None

    aliases: dict[tuple[str, str], list[str]] = {}
    for module in modules:
        for name in bound(module):
            o = origin(module, name)
            if o is not None:
                aliases.setdefault(o, []).append(f"{module}.{name}")

    hits = []
    for module, info in modules.items():
        for name, f in info.found.items():
            for qualname in aliases.get((module, name), [f"{module}.{name}"]):
                if any(p.startswith("_") for p in qualname.split(".")):
                    continue
                home = qualname.rpartition(".")[0]
                hits.append(Hit(qualname, f.message, _replacement(f, module, home, origin, aliases),
                                f"{tree.ref} {paths[module]}:{f.line}"))
    return hits


def _replacement(f: Found, module: str, home: str, origin, aliases) -> str | None:
    if f.forward is None:
        return None
    head, _, rest = f.forward.partition(".")
    target = origin(module, head)
    if target is None:
        return None
    names = aliases.get(target, [])
    # Name it as the deprecated name's own module exports it, else where it is defined.
    same = [a for a in names if a.rpartition(".")[0] == home]
    public = [a for a in names if not any(p.startswith("_") for p in a.split("."))]
    qual = (same or sorted(public, key=lambda a: (a.count("."), a)) or [f"{target[0]}.{target[1]}"])[0]
    qual = f"{qual}.{rest}" if rest else qual
    return f"{qual}({', '.join(k + '=...' for k in f.keywords)})" if f.keywords else qual


# -- the table ------------------------------------------------------------------------------
def q(s: str) -> str:
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def render(releases: list[str], read: dict[str, str], found: dict[str, list[Hit]]) -> str:
    by_name: dict[str, dict[str, Hit]] = {}
    for release, hits in found.items():
        for h in hits:
            by_name.setdefault(h.qualname, {})[release] = h
    order = {r: i for i, r in enumerate(releases)}
    lines = [
        "# Generated by tools/te_deprecations.py from Transformer Engine's source per release;",
        "# do not edit by hand (see version_matrix/README.md).",
        "# Read: " + ", ".join(f"{r} from {read[r]}" for r in releases if r in read) + ".",
        "# Not read (no tag or wheel given; nothing is claimed for them): "
        + (", ".join(r for r in releases if r not in read) or "none") + ".",
        "",
    ]
    for qualname in sorted(by_name):
        per = by_name[qualname]
        warns = sorted(per, key=order.get)
        newest = per[warns[-1]]
        replacement = next((per[r].replacement for r in reversed(warns) if per[r].replacement), None)
        lines += [f"[call.{q(qualname)}]", f"package = {q(PACKAGE)}",
                  f"releases = [{', '.join(q(r) for r in warns)}]", f"message = {q(newest.message)}"]
        if replacement:
            lines.append(f"replacement = {q(replacement)}")
        lines.append(f"source = {q('; '.join(per[r].where for r in warns))}")
        lines.append("")
    return "\n".join(lines)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--git", type=Path, help="a clone of NVIDIA/TransformerEngine with its release tags")
    ap.add_argument("--wheel", type=Path, action="append", default=[],
                    help="a transformer_engine_cu12 wheel (for releases without a tag); repeatable")
    ap.add_argument("--out", type=Path, default=OUT)
    args = ap.parse_args(argv)
    with open(ROOT / "version_matrix" / "releases.toml", "rb") as fh:
        releases = tomllib.load(fh)["package"][PACKAGE]["releases"]
    wheels = {}
    for w in args.wheel:
        m = _WHEEL.match(w.name)
        if m:
            wheels[m.group(1)] = w
    tags = set()
    if args.git:
        tags = set(subprocess.run(["git", "-C", str(args.git), "tag"], capture_output=True, text=True,
                                  check=True).stdout.split())
    read, found = {}, {}
    for release in releases:
        if release in wheels:
            tree = WheelTree(wheels[release])
        elif args.git and tag_of(release) in tags:
            tree = GitTree(args.git, tag_of(release))
        else:
            print(f"{release}: no tag or wheel, not read", file=sys.stderr)
            continue
        found[release] = read_release(tree)
        read[release] = tree.origin
        print(f"{release}: {len(found[release])} deprecated names from {tree.origin}", file=sys.stderr)
    args.out.write_text(render(releases, read, found))
    print(f"wrote {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
