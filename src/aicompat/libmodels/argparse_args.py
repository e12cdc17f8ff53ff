"""Command-line options as the value model sees them: ``args.<dest>`` of an
``argparse`` parser is the option's default, the value on a run without
arguments (CPython 3.11 Lib/argparse.py: dest from the first long option,
L1560-1590; parse_args fills unset dests with their defaults, L1886-1897; a
string default goes through type=, L2133-2139, so it stays unknown): a bad ``default="max_autotune"`` is
what the default run passes on. A switch (``store_true``, a bool default) stays
either value (values.Switch): the code under it runs whenever the user passes it
(``enabled=args.fp8`` off by default is a guard: guard_forms.off_switch). An option
the user must give (no default, required, positional) stays unknown."""

from __future__ import annotations

from dataclasses import dataclass

from ..values import UNKNOWN, LibObject, switch

PARSER_CLASSES = frozenset({"argparse.ArgumentParser"})
MUTATORS = frozenset({"add_argument", "set_defaults"})  # the calls model/flow.py records on a parser
PARSE_METHODS = frozenset({"parse_args", "parse_known_args", "parse_intermixed_args"})


@dataclass(frozen=True)
class Parser:
    """An ``argparse.ArgumentParser`` with the defaults its options give."""

    defaults: tuple = ()  # ((dest, value), ...), the later winning


@dataclass(frozen=True)
class Namespace:
    """What ``parser.parse_args()`` returns on a run without arguments."""

    defaults: tuple = ()


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
        value = UNKNOWN  # None, or a store_true/store_false switch: see below
    if isinstance(value, bool):
        # A switch: code under ``if args.validate:`` runs whenever the user passes it, so
        # it is no guard; ``enabled=args.fp8`` off by default is (guard_forms.off_switch),
        # also after the value passed through a helper's parameter.
        value = switch(value)
    return Parser(p.defaults + ((dest, value),))


def parse(p: Parser, method: str):
    ns = Namespace(p.defaults)
    return (ns, UNKNOWN) if method == "parse_known_args" else ns


def attribute(ns: Namespace, name: str):
    for dest, value in reversed(ns.defaults):
        if dest == name:
            return value
    return UNKNOWN


def mutated(prev, method: str, vals: list, kw: dict):
    """``parser.add_argument(...)``/``parser.set_defaults(...)``: the parser after the call
    (UNKNOWN when ``prev`` is no parser); NotImplemented for any other method."""
    if method not in MUTATORS:
        return NotImplemented
    p = parser(prev)
    return mutate(p, method, vals, kw) if p is not None else UNKNOWN


def parsed(v, method: str):
    """``parser.parse_args()`` on a run without arguments; NotImplemented when ``v`` is no
    parser (the caller checks ``method in PARSE_METHODS`` first: it is asked at every method call)."""
    p = parser(v)
    return parse(p, method) if p is not None else NotImplemented
