"""Generate version_matrix/model_classes/transformers.toml: the attention implementations each
transformers model class declares, per release, and the check that refuses the others.

    python tools/read_transformers_attn_support.py --wheel-dir /tmp/tf-whl [--download] [--versions 4.36.2 ...]

Each release of ``releases.toml [package.transformers]`` is read from its wheel
(``transformers-X-py3-none-any.whl``; ``--download`` fetches the missing ones with
``pip download --no-deps``). Nothing is imported: the sources are parsed with ``ast``.

Per release:

- ``modeling_utils.py``: PreTrainedModel's class-level defaults of the ``_supports_*``
  attention flags, and each method of ``tools/transformers_attn_support_hand.toml
  [function.*]`` that raises ``ValueError`` under ``if not <flags>:`` (the flags of that
  condition, any of which makes the class supported; the error text as its f-string reads,
  ``{...}`` fields kept; the line). A method with such a raise that the hand file does not
  list stops the script.
- every ``models/<type>/modeling_*.py`` (not TF or Flax; ``models/deprecated/<type>/`` too):
  the top-level classes, their bases (through the file's imports, across models), and the
  flags their bodies assign. A flag assigned a literal bool is known; any other assignment
  (an expression, a property) leaves the class's value unknown. Each class whose method
  resolution order (C3) reaches PreTrainedModel takes each flag from the first class in
  that order that assigns it, PreTrainedModel's default last.

The output is per model type: the classes (with the releases each exists in, where that
differs from the type's), the releases in which the type's classes declare each
implementation, the releases where that is unknown, and per class where one differs from
the type's. Releases are written as spans of the releases read ("4.37.0-5.24.0"); a release
not read is in no span, and nothing is claimed for it. The same wheels give the same bytes.
"""

from __future__ import annotations

import argparse
import ast
import hashlib
import os
import re
import subprocess
import sys
import zipfile
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import tomllib
from packaging.specifiers import SpecifierSet
from packaging.version import Version

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "version_matrix" / "model_classes" / "transformers.toml"
HAND = Path(__file__).resolve().parent / "transformers_attn_support_hand.toml"
FLAG = re.compile(r"^_supports_(sdpa|flash_attn(_2|_3)?|flex_attn)$")
BASE = ("transformers.modeling_utils", "PreTrainedModel")
# PreTrainedModel's methods that route a request to the checks: a model class that overrides one of
# them (or a check itself) decides on its own (Falcon, Gemma 2 in 4.42-4.47, ModernBERT 5.x): unknown.
ROUTERS = {"_autoset_attn_implementation", "_check_and_adjust_attn_implementation", "get_correct_attn_implementation"}
IMPLS = ("eager", "sdpa", "flash_attention_2", "flash_attention_3", "flash_attention_4", "flex_attention")


# -- wheels ----------------------------------------------------------------------------------
def wheel_path(version: str, directory: Path, fetch: bool) -> Path:
    path = directory / f"transformers-{version}-py3-none-any.whl"
    if not path.is_file():
        if not fetch:
            raise SystemExit(f"no {path.name} in {directory} (pass --download to fetch it)")
        directory.mkdir(parents=True, exist_ok=True)
        env = dict(os.environ, PIP_CONFIG_FILE=os.devnull)
        subprocess.run([sys.executable, "-m", "pip", "download", f"transformers=={version}", "--no-deps",
                        "--only-binary=:all:", "-d", str(directory), "-q"], check=True, env=env)
    return path


def sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


# -- one source file -------------------------------------------------------------------------
@dataclass
class ClassInfo:
    name: str
    line: int
    bases: list[tuple[str, str] | None]  # (module, name); None: not a name this reader follows
    flags: dict[str, tuple[bool | None, int]]  # flag -> (value, line); None: not a literal bool
    methods: set[str] = field(default_factory=set)  # the methods its body defines


@dataclass
class ModuleInfo:
    classes: dict[str, ClassInfo] = field(default_factory=dict)
    imports: dict[str, tuple[str, str]] = field(default_factory=dict)  # local name -> (module, name)


def _absolute(module: str, level: int, target: str | None, is_package: bool) -> str:
    if level == 0:
        return target or ""
    parts = module.split(".")
    keep = parts if is_package else parts[:-1]
    keep = keep[: len(keep) - (level - 1)]
    return ".".join(keep + ([target] if target else []))


def _top_statements(body):
    """Top-level statements, with those of top-level ``if``/``try`` blocks (guarded imports)."""
    for node in body:
        if isinstance(node, ast.If):
            yield from _top_statements(node.body)
            yield from _top_statements(node.orelse)
        elif isinstance(node, ast.Try):
            yield from _top_statements(node.body)
            for h in node.handlers:
                yield from _top_statements(h.body)
        else:
            yield node


def read_module(source: bytes, module: str) -> ModuleInfo:
    tree = ast.parse(source)
    info = ModuleInfo()
    for node in _top_statements(tree.body):
        if isinstance(node, ast.ImportFrom):
            src = _absolute(module, node.level, node.module, False)
            for a in node.names:
                info.imports[a.asname or a.name] = (src, a.name)
        elif isinstance(node, ast.ClassDef):
            flags: dict[str, tuple[bool | None, int]] = {}
            for stmt in node.body:
                targets = []
                if isinstance(stmt, ast.Assign):
                    targets = [t.id for t in stmt.targets if isinstance(t, ast.Name)]
                    value = stmt.value
                elif isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name) and stmt.value is not None:
                    targets, value = [stmt.target.id], stmt.value
                elif isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)) and FLAG.match(stmt.name):
                    flags[stmt.name] = (None, stmt.lineno)  # a property: its value is computed
                    continue
                for t in targets:
                    if FLAG.match(t):
                        known = isinstance(value, ast.Constant) and isinstance(value.value, bool)
                        flags[t] = (value.value if known else None, stmt.lineno)
            bases: list[tuple[str, str] | None] = []
            for b in node.bases:
                bases.append(("", b.id) if isinstance(b, ast.Name) else None)
            methods = {f.name for f in node.body if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef))}
            info.classes[node.name] = ClassInfo(node.name, node.lineno, bases, flags, methods)
    # a flag set on a class from outside its body (``X._supports_sdpa = True``) is not followed: unknown
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign):
            for t in node.targets:
                if isinstance(t, ast.Attribute) and FLAG.match(t.attr) and isinstance(t.value, ast.Name) \
                        and t.value.id in info.classes:
                    info.classes[t.value.id].flags[t.attr] = (None, node.lineno)
    return info


# -- the checks of modeling_utils.py ---------------------------------------------------------
def _flags_of(test: ast.expr) -> tuple[list[str], str] | None:
    """``not cls._supports_x`` / ``not (self._supports_a or getattr(self, "_supports_b", False))``
    -> (the flags, any of which passes; ""); ``not self._supports_x and not is_init_check`` -> (the
    flags, "not is_init_check"): the raise also needs the rest; None for another condition."""
    when = ""
    if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And) and len(test.values) >= 2:
        when = " and ".join(ast.unparse(v) for v in test.values[1:])
        test = test.values[0]
    if not (isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not)):
        return None
    inner = test.operand
    parts = inner.values if isinstance(inner, ast.BoolOp) and isinstance(inner.op, ast.Or) else [inner]
    out = []
    for p in parts:
        if isinstance(p, ast.Attribute) and FLAG.match(p.attr):
            out.append(p.attr)
        elif isinstance(p, ast.Call) and isinstance(p.func, ast.Name) and p.func.id == "getattr" \
                and len(p.args) >= 2 and isinstance(p.args[1], ast.Constant) and FLAG.match(str(p.args[1].value)):
            out.append(p.args[1].value)
        else:
            return None
    return out, when


def _text(node: ast.expr) -> str | None:
    """An error message as written: string parts joined, ``{expr}`` for each formatted field."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        out = []
        for v in node.values:
            if isinstance(v, ast.Constant):
                out.append(str(v.value))
            else:
                out.append("{" + ast.unparse(v.value) + "}")  # type: ignore[attr-defined]
        return "".join(out)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        a, b = _text(node.left), _text(node.right)
        return a + b if a is not None and b is not None else None
    return None


@dataclass
class Check:
    function: str
    flags: list[str]
    error: str
    line: int
    when: str = ""  # what else the raise needs ("not is_init_check": not when the model is built)


def read_checks(source: bytes) -> tuple[dict[str, tuple[bool, int]], dict[str, Check]]:
    """PreTrainedModel's flag defaults (flag -> (value, line)) and its checks (method -> Check)."""
    tree = ast.parse(source)
    cls = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "PreTrainedModel")
    defaults: dict[str, tuple[bool, int]] = {}
    checks: dict[str, Check] = {}
    for stmt in cls.body:
        target = stmt.targets[0] if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 else \
            stmt.target if isinstance(stmt, ast.AnnAssign) else None
        if isinstance(target, ast.Name) and FLAG.match(target.id):
            value = stmt.value  # type: ignore[union-attr]
            assert isinstance(value, ast.Constant) and isinstance(value.value, bool), target.id
            defaults[target.id] = (value.value, stmt.lineno)
        if isinstance(stmt, ast.FunctionDef):
            for node in ast.walk(stmt):
                if not isinstance(node, ast.If):
                    continue
                got = _flags_of(node.test)
                raise_ = node.body[0] if node.body else None
                if got is None or not isinstance(raise_, ast.Raise) or not isinstance(raise_.exc, ast.Call) \
                        or not isinstance(raise_.exc.func, ast.Name) or raise_.exc.func.id != "ValueError":
                    continue
                text = _text(raise_.exc.args[0]) if raise_.exc.args else None
                if text is None or "does not support" not in text:
                    continue
                if stmt.name in checks:
                    continue  # the first such raise of the method is its class check
                checks[stmt.name] = Check(stmt.name, got[0], text, raise_.lineno, got[1])
    return defaults, checks


# -- one release -----------------------------------------------------------------------------
class Release:
    def __init__(self, path: Path, cache: dict) -> None:
        self.path = path
        self.version = path.name.split("-")[1]
        z = zipfile.ZipFile(path)
        self.modules: dict[str, ModuleInfo] = {}
        self.files: dict[str, str] = {}  # module -> path in the wheel
        self.model_of: dict[str, str] = {}  # module -> model type
        for name in sorted(z.namelist()):
            m = re.fullmatch(r"transformers/models/(?:deprecated/)?([^/]+)/(modeling_[^/]+)\.py", name)
            if name == "transformers/modeling_utils.py":
                module = "transformers.modeling_utils"
            elif m and not m.group(2).startswith(("modeling_tf_", "modeling_flax_")):
                module = name[:-3].replace("/", ".")
                self.model_of[module] = m.group(1)
            else:
                continue
            data = z.read(name)
            key = (hashlib.sha1(data).hexdigest(), module)
            if key not in cache:
                cache[key] = read_module(data, module)
            self.modules[module] = cache[key]
            self.files[module] = name
        self.defaults, self.checks = read_checks(z.read("transformers/modeling_utils.py"))
        self._mro: dict[tuple[str, str], list[tuple[str, str]] | None] = {}

    def resolve(self, module: str, name: str, depth: int = 0) -> tuple[str, str] | None:
        """Where ``name`` as seen from ``module`` is defined (following re-exports), or None."""
        info = self.modules.get(module)
        if info is None or depth > 8:
            return None
        if name in info.classes:
            return (module, name)
        if name in info.imports:
            src, orig = info.imports[name]
            if src == "transformers" and orig in self.modules[BASE[0]].classes:
                src = BASE[0]  # the package's own export of modeling_utils' class
            return self.resolve(src, orig, depth + 1) if src in self.modules else (src, orig)
        return None

    def mro(self, key: tuple[str, str]) -> list[tuple[str, str]] | None:
        """C3 linearization; a base this reader cannot follow is a leaf that sets no flag."""
        if key in self._mro:
            return self._mro[key]
        self._mro[key] = None  # a cycle reads as unknown
        module, name = key
        info = self.modules.get(module)
        if info is None or name not in info.classes:
            self._mro[key] = [key]
            return self._mro[key]
        parents = []
        for b in info.classes[name].bases:
            target = self.resolve(module, b[1]) if b is not None else None
            parents.append(target or ("?", "?"))
        seqs = []
        for p in parents:
            sub = self.mro(p) if p != ("?", "?") else [p]
            if sub is None:
                return None
            seqs.append(list(sub))
        seqs.append(list(parents))
        out = [key]
        while any(seqs):
            for s in seqs:
                if s and not any(s[0] in t[1:] for t in seqs):
                    head = s[0]
                    break
            else:
                return None  # no consistent order
            out.append(head)
            seqs = [[x for x in s if x != head] if s and s[0] == head else s for s in seqs]
        self._mro[key] = out
        return out

    def flag(self, mro: list[tuple[str, str]], flag: str) -> tuple[bool | None, tuple[str, str] | None, int]:
        """(value, the class that sets it, line); value None where the setting is not a literal."""
        for key in mro:
            info = self.modules.get(key[0])
            c = info.classes.get(key[1]) if info else None
            if c is not None and flag in c.flags:
                value, line = c.flags[flag]
                return value, key, line
        if flag in self.defaults:
            return self.defaults[flag][0], BASE, self.defaults[flag][1]
        return False, None, 0  # a flag this release's PreTrainedModel does not have: never set

    def implementations(self, hand: dict) -> dict[str, Check]:
        """implementation -> the check that refuses it."""
        out = {}
        for fn, check in self.checks.items():
            if fn not in hand["function"]:
                raise SystemExit(f"transformers {self.version}: PreTrainedModel.{fn} raises 'does not support' under "
                                 f"'if not {check.flags}': add [function.{fn}] to {HAND.name}")
            for impl in hand["function"][fn]["implementations"]:
                out[impl] = check
            # the message as the rule fills it in: {cls} the class, {version} the FlashAttention version
            version = hand["function"][fn].get("version_field")
            check.error = re.sub(r"\{([^{}]*)\}", lambda m: "{cls}" if m.group(1).endswith("__name__") else
                                 "{version}" if m.group(1) == version else f"<{m.group(1)}>", check.error)
        return out

    def classes(self, impls: dict[str, Check]):
        """(model type, class, its line, {implementation: (value, setter, line)}) per model class."""
        for module, model in self.model_of.items():
            for name, c in self.modules[module].classes.items():
                if name.startswith("_") or name.endswith("PreTrainedModel"):
                    continue
                mro = self.mro((module, name))
                if mro is None or BASE not in mro:
                    continue
                out = {}
                own = set().union(*(self.modules[k[0]].classes[k[1]].methods for k in mro
                                    if k != BASE and k[0] in self.modules and k[1] in self.modules[k[0]].classes))
                for impl, check in impls.items():
                    values = [self.flag(mro, f) for f in check.flags]
                    if own & (ROUTERS | {check.function}) and not any(v[0] is True for v in values):
                        where = next(k for k in mro if own & (ROUTERS | {check.function}) &
                                     self.modules[k[0]].classes[k[1]].methods)
                        out[impl] = (None, where, self.modules[where[0]].classes[where[1]].line)
                        continue  # the class's own routing decides
                    if any(v[0] is True for v in values):
                        out[impl] = next(v for v in values if v[0] is True)
                    elif any(v[0] is None for v in values):
                        out[impl] = next(v for v in values if v[0] is None)
                    else:
                        out[impl] = values[0]
                yield model, name, c.line, module, out


# -- spans -----------------------------------------------------------------------------------
def spans(indices, labels: list[str]) -> str:
    """Sorted release indices -> "4.37.0-4.40.2,4.42.0-5.24.0" (runs of consecutive releases read)."""
    out, run = [], []
    for i in sorted(indices):
        if run and i != run[-1] + 1:
            out.append(run)
            run = []
        run.append(i)
    if run:
        out.append(run)
    return ",".join(f"{labels[r[0]]}-{labels[r[-1]]}" for r in out)


def _q(s: str) -> str:
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _key(s: str) -> str:
    return s if re.fullmatch(r"[A-Za-z0-9_-]+", s) else _q(s)


# -- main ------------------------------------------------------------------------------------
def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--wheel-dir", type=Path, required=True)
    ap.add_argument("--download", action="store_true")
    ap.add_argument("--versions", nargs="*")
    ap.add_argument("--out", type=Path, default=OUT)
    args = ap.parse_args()
    with open(ROOT / "version_matrix" / "releases.toml", "rb") as fh:
        known = tomllib.load(fh)["package"]["transformers"]["releases"]
    with open(HAND, "rb") as fh:
        hand = tomllib.load(fh)
    with open(ROOT / "version_matrix" / "transformers_attn.toml", "rb") as fh:
        accepted = tomllib.load(fh)["value"]
    versions = args.versions or known
    labels = sorted(versions, key=Version)
    cache: dict = {}
    # model -> {class: present indices}; (model, class, impl) -> {index: value}; provenance
    present: dict[str, dict[str, set[int]]] = {}
    values: dict[tuple[str, str, str], dict[int, bool | None]] = {}
    where: dict[tuple[str, str, str], dict[int, str]] = {}
    checks: list[tuple[int, str, Check, dict]] = []
    files = []
    for i, v in enumerate(labels):
        path = wheel_path(v, args.wheel_dir, args.download)
        files.append(f"{_q(v)} = {_q(path.name + ' sha256:' + sha256(path))}")
        rel = Release(path, cache)
        dispatch = [d for d in hand["dispatch"] if Version(v) in SpecifierSet(d["releases"])]
        if len(dispatch) != 1:
            raise SystemExit(f"transformers {v}: {len(dispatch)} [[dispatch]] ranges of {HAND.name} hold it (one must)")
        impls = {k: c for k, c in rel.implementations(hand).items()
                 if k in accepted and Version(accepted[k]["added"]) <= Version(v)
                 and ("removed" not in accepted[k] or Version(v) < Version(accepted[k]["removed"]))
                 or k == "flash_attention_2" and dispatch[0]["explicit"] == "raises"}  # use_flash_attention_2
        for impl, c in impls.items():
            checks.append((i, impl, c, dispatch[0]))
        for model, name, _line, module, out in rel.classes(impls):
            present.setdefault(model, {}).setdefault(name, set()).add(i)
            for impl, (value, setter, line) in out.items():
                values.setdefault((model, name, impl), {})[i] = value
                if setter is not None:
                    file = "modeling_utils.py" if setter == BASE else \
                        rel.files[setter[0]].removeprefix("transformers/models/")
                    where.setdefault((model, name, impl), {})[i] = f"{file} L{line} {setter[1]}"
        print(f"{v}: {len(rel.model_of)} modeling files, {sum(len(c) for c in present.values())} classes so far",
              file=sys.stderr)
    write(args.out, labels, files, present, values, where, checks)


def write(out: Path, labels, files, present, values, where, checks) -> None:
    lines = [
        "# Generated by tools/read_transformers_attn_support.py from the transformers wheels (hand-read input:",
        "# tools/transformers_attn_support_hand.toml); do not edit. The attention implementations each model",
        "# class declares (`_supports_sdpa`, `_supports_flash_attn_2`, `_supports_flash_attn`, `_supports_flex_attn`,",
        "# resolved through the class hierarchy to PreTrainedModel's defaults) and the check that refuses the others.",
        "# Releases are spans of the releases read (`[read.transformers] releases`): a release not read is in none.",
        "",
        "[schema.read]", 'releases = "list"', 'files = "table"', "",
        "[schema.dispatch]", 'releases = "str"', 'explicit = "str"', 'default = "str"', "",
        "[schema.check]", 'implementation = "str"', 'releases = "str"', 'function = "str"', 'flags = "list"',
        'error = "str"', 'when = "str?"', "",
        "[schema.model]", 'releases = "str"', 'classes = "list"', 'other_classes = "table?"',
        *(f'{impl} = "str?"' for impl in IMPLS[1:]), 'unknown = "table?"', 'classes_differ = "table?"', "",
        "[read.transformers]",
        "releases = [" + ", ".join(_q(v) for v in labels) + "]",
        "source = \"transformers wheels from PyPI (pip download transformers==X --no-deps), parsed with ast: "
        "modeling_utils.py and models/*/modeling_*.py (not TF/Flax)\"",
        "[read.transformers.files]",
        *files,
        "",
    ]
    # dispatch: what a request does, per range of the hand file (the releases read in it)
    by_dispatch: dict[tuple, set[int]] = {}
    for i, _impl, _c, d in checks:
        by_dispatch.setdefault((d["explicit"], d["default"], d["source"]), set()).add(i)
    for (explicit, default, source), idx in sorted(by_dispatch.items(), key=lambda kv: min(kv[1])):
        rng = spans(idx, labels)
        lines += [f"[dispatch.{_q(rng)}]", f"releases = {_q(rng)}", f"explicit = {_q(explicit)}",
                  f"default = {_q(default)}", f"source = {_q(source)}", ""]
    # checks: consecutive releases with the same implementation, method, flags and error
    groups: dict[tuple, list[int]] = {}
    lines_of: dict[tuple, list[str]] = {}
    for i, impl, c, _d in checks:
        k = (impl, c.function, tuple(c.flags), c.error, c.when)
        groups.setdefault(k, []).append(i)
        lines_of.setdefault(k, []).append(f"{labels[i]} L{c.line}")
    for k in sorted(groups, key=lambda k: (k[0], min(groups[k]))):
        impl, fn, flags, error, when = k
        rng = spans(groups[k], labels)
        ls = lines_of[k]
        lines += [
            f"[check.{_q(impl + ' ' + rng)}]",
            f"implementation = {_q(impl)}",
            f"releases = {_q(rng)}",
            f"function = {_q('PreTrainedModel.' + fn)}",
            "flags = [" + ", ".join(_q(f) for f in flags) + "]",
            f"error = {_q(error)}",
            *([f"when = {_q(when)}"] if when else []),
            f"source = {_q('modeling_utils.py raise ValueError at ' + ', '.join(ls))}",
            "",
        ]
    for model in sorted(present):
        lines += _model(model, present[model], values, where, labels) + [""]
    out.write_text("\n".join(lines))
    print(f"wrote {out} ({out.stat().st_size} bytes)", file=sys.stderr)


def _model(model: str, classes: dict[str, set[int]], values, where, labels) -> list[str]:
    every: set[int] = set().union(*classes.values())
    common = Counter(spans(s, labels) for s in classes.values()).most_common(1)[0][0]
    entry = [f"[model.{_key(model)}]", f"releases = {_q(common)}",
             "classes = [" + ", ".join(_q(n) for n, s in sorted(classes.items()) if spans(s, labels) == common) + "]"]
    others = {n: spans(s, labels) for n, s in sorted(classes.items()) if spans(s, labels) != common}
    if others:
        entry.append("other_classes = { " + ", ".join(f"{n} = {_q(v)}" for n, v in others.items()) + " }")
    unknown: dict[str, str] = {}
    differ: dict[str, dict[str, str]] = {}
    cites = []
    for impl in IMPLS[1:]:
        # per release, the value most of the model's classes have; a class that differs is listed
        model_value: dict[int, bool | None] = {}
        for i in sorted(every):
            vals = [values[(model, n, impl)][i] for n in classes if i in values.get((model, n, impl), {})]
            if vals:
                model_value[i] = Counter(vals).most_common(1)[0][0]
        yes = {i for i, x in model_value.items() if x is True}
        unk = {i for i, x in model_value.items() if x is None}
        if yes:
            entry.append(f"{impl} = {_q(spans(yes, labels))}")
        if unk:
            unknown[impl] = spans(unk, labels)
        for n in sorted(classes):
            mine = values.get((model, n, impl), {})
            if any(mine[i] != model_value.get(i) for i in mine):
                d = differ.setdefault(n, {})
                d[impl] = spans({i for i, x in mine.items() if x is True}, labels)
                if any(x is None for x in mine.values()):
                    d[f"{impl}_unknown"] = spans({i for i, x in mine.items() if x is None}, labels)
        # provenance: the class and line that set the flag, at the first release of each span
        for want, word in ((True, ""), (None, " unknown")):
            sel = {i for i, x in model_value.items() if x is want}
            for part in spans(sel, labels).split(",") if sel else []:
                first = labels.index(part.split("-")[0])
                who = next((where[(model, n, impl)][first] for n in sorted(classes)
                            if values.get((model, n, impl), {}).get(first) is want
                            and first in where.get((model, n, impl), {})), "?")
                cites.append(f"{impl}{word} {part}: {labels[first]} {who}")
    if unknown:
        entry.append("unknown = { " + ", ".join(f"{k} = {_q(v)}" for k, v in unknown.items()) + " }")
    if differ:
        parts = [f"{n} = {{ " + ", ".join(f"{k} = {_q(v)}" for k, v in d.items()) + " }" for n, d in differ.items()]
        entry.append("classes_differ = { " + ", ".join(parts) + " }")
    entry.append(f"source = {_q('; '.join(cites) or 'no class declares one: PreTrainedModel defaults')}")
    return entry


if __name__ == "__main__":
    main()
