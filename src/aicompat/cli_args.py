"""Command-line options as the value model sees them: ``args.<dest>`` of an
``argparse`` parser is the option's default, the value on a run without
arguments (version_matrix/argparse.toml). So ``--fp8`` with
``action="store_true"`` guards like a constant False, and a bad
``default="max_autotune"`` is what the default run passes on. An option the
user must give (no default, required, positional) stays unknown."""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from .data import data_dir
from .toml_compat import tomllib
from .values import UNKNOWN, LibObject

PARSER_CLASSES = frozenset({"argparse.ArgumentParser"})
MUTATORS = frozenset({"add_argument", "set_defaults"})  # the calls flow.py records on a parser
PARSE_METHODS = frozenset({"parse_args", "parse_known_args", "parse_intermixed_args"})


@dataclass(frozen=True)
class Parser:
    """An ``argparse.ArgumentParser`` with the defaults its options give."""

    defaults: tuple = ()  # ((dest, value), ...), the later winning


@dataclass(frozen=True)
class Namespace:
    """What ``parser.parse_args()`` returns on a run without arguments."""

    defaults: tuple = ()


@lru_cache(maxsize=2)
def _action_defaults(directory: str | None = None) -> dict:
    path = Path(directory or data_dir("version_matrix")) / "argparse.toml"
    with open(path, "rb") as fh:
        doc = tomllib.load(fh)
    return {k: e["value"] for k, e in doc.get("action_default", {}).items()}


def parser(v) -> Parser | None:
    if isinstance(v, Parser):
        return v
    if isinstance(v, LibObject) and v.qualname in PARSER_CLASSES:
        return Parser()
    return None


def _dest(names: list, kw: dict):
    if "dest" in kw:
        return kw["dest"] if isinstance(kw["dest"], str) else None
    if not names or not all(isinstance(n, str) and n for n in names):
        return None
    if not names[0].startswith("-"):
        return None  # a positional: the user always gives it
    long = [n for n in names if n.startswith("--")]
    dest = (long or names)[0].lstrip("-").replace("-", "_")
    return dest or None


def mutate(p: Parser, method: str, vals: list, kw: dict) -> Parser:
    if method == "set_defaults":
        return Parser(p.defaults + tuple((k, v) for k, v in kw.items()))
    dest = _dest(vals, kw)
    if dest is None:
        return p
    if kw.get("required") is True:
        value = UNKNOWN
    elif "default" in kw:
        value = kw["default"]
        if isinstance(value, str) and "type" in kw:
            value = UNKNOWN  # converted by type= (a str default of type=int is an int)
    else:
        value = _action_defaults().get(kw.get("action"), UNKNOWN)
    return Parser(p.defaults + ((dest, value),))


def parse(p: Parser, method: str):
    ns = Namespace(p.defaults)
    return (ns, UNKNOWN) if method == "parse_known_args" else ns


def attribute(ns: Namespace, name: str):
    for dest, value in reversed(ns.defaults):
        if dest == name:
            return value
    return UNKNOWN
