"""Generate version_matrix/inductor_options.toml: the keys ``torch.compile(options={...})``
accepts, per torch release, read from the torch macOS arm64 wheels.

    python tools/build_inductor_options.py --wheel-dir /tmp/whl              # wheels already there
    python tools/build_inductor_options.py --wheel-dir /tmp/whl --download   # pip fetches the missing ones

Nothing is imported or executed: each wheel is read as a zip and parsed with ``ast``.

- Keys: torch/_inductor/config.py. ``install_config_module`` turns every module-level
  assignment into a key, and every assignment in the body of a module-level class into
  ``CLASS.attr``; ``@inherit_fields_from(base)`` (2.11+) copies the base class's fields
  into the decorated class. Assignments inside module-level ``if``/``try`` count too.
- [release.X] source: torch/__init__.py ``_TorchCompileInductorWrapper.apply_options``:
  the membership test that guards the raise, the raise, the f-string it raises (kept
  in ``error`` with its replacement fields as written) and the line that builds the
  dict of known keys. 2.15 has no such line; its description comes from
  tools/inductor_options_hand.toml, which says where it was read.
- [keys]: each key with the first and last release holding it (more pairs when it
  left and came back). The count in ``source`` leaves out keys with a leading underscore.

The same wheels always give the same bytes.
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
OUT = ROOT / "version_matrix" / "inductor_options.toml"
HAND = Path(__file__).resolve().parent / "inductor_options_hand.toml"
CONFIG = "torch/_inductor/config.py"
INIT = "torch/__init__.py"

HEADER = """\
# torch.compile(options={...}) keys the inductor backend accepts, per torch release: read
# statically (ast) from torch/_inductor/config.py in each 2.X.0 macOS arm64 wheel, torch never
# imported. A key is a module-level assignment or CLASS.attr of a module-level class (plus fields
# copied by @inherit_fields_from(cutlass) from 2.11); underscore keys are accepted at runtime too
# (the config walker skips only '__' names). apply_options replaces '-' with '_' before the lookup.
# [keys]: first and last .0 release holding the key (more pairs = disjoint spans).
"""


def _assigned(stmt: ast.stmt):
    if isinstance(stmt, ast.Assign):
        for t in stmt.targets:
            for n in (t.elts if isinstance(t, ast.Tuple) else [t]):
                if isinstance(n, ast.Name):
                    yield n.id
    elif isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name):
        yield stmt.target.id


def config_keys(source: str) -> set[str]:
    """The keys of an inductor config.py: ``name`` and ``CLASS.attr``."""
    keys: set[str] = set()
    fields: dict[str, set[str]] = {}  # class -> its fields, for @inherit_fields_from

    def walk(body: list[ast.stmt]) -> None:
        for stmt in body:
            if isinstance(stmt, (ast.If, ast.Try)):
                walk(stmt.body)
                walk(stmt.orelse)
                for h in getattr(stmt, "handlers", []):
                    walk(h.body)
                walk(getattr(stmt, "finalbody", []))
            elif isinstance(stmt, ast.ClassDef):
                own = {n for s in stmt.body for n in _assigned(s)}
                for d in stmt.decorator_list:
                    if (isinstance(d, ast.Call) and isinstance(d.func, ast.Name)
                            and d.func.id == "inherit_fields_from"):
                        for a in d.args:
                            if isinstance(a, ast.Name):
                                own |= fields.get(a.id, set())
                fields[stmt.name] = own
                keys.update(f"{stmt.name}.{n}" for n in own)
            else:
                keys.update(_assigned(stmt))

    walk(ast.parse(source).body)
    return keys


def _fstring(node: ast.expr, source: str) -> str | None:
    """An f-string as written, replacement fields kept: ``{list(current_config.keys())}``."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if not isinstance(node, ast.JoinedStr):
        return None
    out = []
    for v in node.values:
        if isinstance(v, ast.Constant):
            out.append(v.value)
        elif isinstance(v, ast.FormattedValue):
            out.append("{" + ast.get_source_segment(source, v.value) + "}")
    return "".join(out)


def _lines(first: int, last: int) -> str:
    return f"L{first}" if first == last else f"L{first}-L{last}"


def apply_options(source: str) -> dict | None:
    """Where torch/__init__.py's apply_options rejects an unknown key, and what it raises."""
    lines = source.splitlines()
    for fn in ast.walk(ast.parse(source)):
        if not (isinstance(fn, ast.FunctionDef) and fn.name == "apply_options"):
            continue
        found = {"def": fn.lineno}
        for node in ast.walk(fn):
            if (isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name)
                    and node.target.id == "current_config"):
                found["keys_from"] = lines[node.lineno - 1].strip()
            if not (isinstance(node, ast.If) and isinstance(node.test, ast.Compare)
                    and isinstance(node.test.ops[0], ast.NotIn)):
                continue
            raise_ = node.body[0] if node.body else None
            if not (isinstance(raise_, ast.Raise) and isinstance(raise_.exc, ast.Call)
                    and isinstance(raise_.exc.func, ast.Name) and raise_.exc.func.id == "RuntimeError"
                    and raise_.exc.args):
                continue
            text = _fstring(raise_.exc.args[0], source)
            if text is None or not text.startswith("Unexpected optimization option"):
                continue
            msg = raise_.exc.args[0]
            found.update(check=node.lineno, check_text=lines[node.lineno - 1].strip(), raise_line=raise_.lineno,
                         raise_text=lines[raise_.lineno - 1].strip(), msg_lines=_lines(msg.lineno, msg.end_lineno),
                         error=text)
            return found
    return None


def release_facts(wheel: Wheel, hand: dict) -> tuple[set[str], dict[str, str]]:
    """The keys of one wheel and its [release] entry."""
    keys = config_keys(wheel.text(CONFIG))
    ao = apply_options(wheel.text(INIT))
    if ao is None or "check" not in ao:
        raise SystemExit(f"{wheel.name}: no apply_options raising 'Unexpected optimization option' in {INIT}")
    keys_from = ao.get("keys_from")
    if keys_from is None:
        h = hand.get("release", {}).get(wheel.version, {})
        if "key_source" not in h:
            raise SystemExit(f"{wheel.name}: apply_options builds no current_config; say where its keys come from "
                             f"in {HAND.name} [release.\"{wheel.version}\"] key_source")
        keys_from = h["key_source"]
    public = sum(1 for k in keys if not k.startswith("_"))
    source = (f"{wheel.name} {CONFIG} ({public} keys); apply_options at {INIT} L{ao['def']}; "
              f"check L{ao['check']} `{ao['check_text']}`; raise L{ao['raise_line']} `{ao['raise_text']}` + "
              f"{ao['msg_lines']}; key source: `{keys_from}`")
    return keys, {"error": ao["error"], "source": source}


def spans(present: list[bool], releases: list[str]) -> list[str]:
    """[first, last] pairs of the runs where a key is present."""
    out: list[str] = []
    start = None
    for i, here in enumerate(present + [False]):
        if here and start is None:
            start = i
        elif not here and start is not None:
            out += [releases[start], releases[i - 1]]
            start = None
    return out


def load_hand(path: Path = HAND) -> dict:
    with open(path, "rb") as fh:
        return tomllib.load(fh)


def build(wheel_paths: list[Path], hand: dict | None = None) -> str:
    hand = load_hand() if hand is None else hand
    releases, entries, keysets = [], [], []
    for path in wheel_paths:
        with Wheel(path) as w:
            keys, entry = release_facts(w, hand)
        releases.append(w.version)
        entries.append(entry)
        keysets.append(keys)
    lines = [HEADER]
    for v, e in zip(releases, entries):
        lines += [f"[release.{q(v)}]", f"error = {q(e['error'])}", f"source = {q(e['source'])}", ""]
    lines.append("[keys]")
    for key in sorted(set().union(*keysets)):
        lines.append(f"{q(key)} = {q_list(spans([key in ks for ks in keysets], releases))}")
    return "\n".join(lines) + "\n"


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
