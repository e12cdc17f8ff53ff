"""Config-module keys (version_matrix/config/torch.toml): ``torch._inductor.config.X = v``,
``setattr(config, "X", v)``, ``getattr(config, "X")``, reading ``config.X`` and
``config.patch(X=v)`` with a key the release lacks (AIC201), and the guards that ask
``hasattr(torch._inductor.config, "X")`` (the rules' ``attr_exists``).

A config module made by ``install_config_module`` refuses a key it does not have: its
``__setattr__`` and ``__getattr__`` raise AttributeError, and ``patch`` raises when the patch is
entered (a ``with`` or a call of the decorated function): KeyError before torch 2.6,
AttributeError from 2.6. A key a release defines only under a condition (``if is_fbcode():``)
is neither present nor missing there.
"""

from __future__ import annotations

from dataclasses import dataclass

import libcst as cst

from ...core.ruleapi import UNKNOWN, DictValue, Finding, options
from ...core.ruleapi import api_query as q
from .getattr_names import names_of

PACKAGE = "torch"  # the only package whose config modules are read (tools/build_config_keys.py)


@dataclass(frozen=True)
class Use:
    node: cst.CSTNode  # where a finding is reported
    module: str  # qualified name of the config module
    key: str  # "triton.cudagraphs"
    how: str  # "set", "read" or "patch"


def table(matrix):
    return matrix.config_table(PACKAGE)


def split(matrix, qualname: str):
    """(config module, key) for a chain that reaches into a config module, else None."""
    t = table(matrix) if qualname.startswith(PACKAGE + ".") else None
    return t.split(qualname) if t is not None else None


def attr_exists(matrix, qualname: str, world):
    """``hasattr(<config module or sub-config>, "X")`` in ``world``'s torch release."""
    got = split(matrix, qualname)
    if got is None or world.torch is None:
        return UNKNOWN
    t = table(matrix)
    i = t.releases.index(world.torch) if world.torch in t.releases else None
    if i is None:
        return UNKNOWN
    has = t.has(got[0], got[1], i, read=True)
    return UNKNOWN if has is None else has


def _error(t, i: int, module: str, key: str, how: str, implied: bool) -> str:
    e = t.release[i]
    text = e["set_error"] if how == "set" else e["get_error"] if how == "read" else \
        e.get("implication_patch_error", e["patch_error"]) if implied else e["patch_error"]
    return text.replace("{name!r}", repr(key)).replace("{module}", module).replace("{name}", key)


def judge(use: Use, fc, worlds=None) -> list[Finding]:
    """The finding for one use of a key, in the releases in scope that lack it (``worlds``: those
    the use runs in, when fewer than the statement's: a loop item under a hasattr guard)."""
    t = table(fc.matrix)
    m = t.modules.get(use.module) if t is not None else None
    if m is None or use.key.startswith("__"):
        return []
    got = q.judged_releases(fc, PACKAGE, t.releases)
    if got is None:
        return []
    indices, pinned = got
    if worlds is not None and pinned:
        runs = {w.torch for w in worlds}
        indices = [i for i in indices if t.releases[i] in runs]
    lack = [i for i in indices if t.has(m, use.key, i, read=use.how == "read") is False]
    if not lack:
        return []
    ever = m.keys.get(use.key, frozenset()) | m.names.get(use.key, frozenset())
    if not ever and use.key.startswith("_"):
        return []  # a private name no release has: the class may let it through (its _bypass_keys)
    full = f"{use.module}.{use.key}"
    fix = []
    # the closest key of the newest failing release: a typo's fix, or a removed key's successor
    # (for a key that came later, the fix is the release that has it)
    near = t.close(m, use.key, max(lack)) if not ever or max(lack) > max(ever) else None
    if near and near != use.key:
        fix.append(f"did you mean {use.module}.{near}?")
    if not ever:
        why = f"no torch release ({t.labels[0]}–{t.labels[-1]}) has it"
    else:
        first, last = min(ever), max(ever)
        if all(i < first for i in lack) and last == len(t.labels) - 1:
            why = f"added in {t.labels[first]}"
            fix.append(f"pin torch>={t.labels[first]}")
        elif all(i > last for i in lack) and last + 1 < len(t.labels):
            why = f"removed in {t.labels[last + 1]}; last in {t.labels[last]}"
        else:
            why = f"present in {t.label(ever)}"
    groups: dict[str, list[int]] = {}
    for i in lack:
        groups.setdefault(_error(t, i, use.module, use.key, use.how, i in m.implications), []).append(i)
    if len(groups) == 1:
        errors = next(iter(groups))
    else:
        errors = ", ".join(f"{err} in {t.label(ix)}" for err, ix in groups.items())
    action = {"set": "setting it raises", "read": "reading it raises",
              "patch": "the patch raises, when entered,"}[use.how]
    fixes = "".join(f"; {f}" for f in fix)
    msg = (f"{full} is not a config key in torch {t.label(lack)} ({why}): {action} {errors}{fixes}; "
           f"{q.pin_text(PACKAGE, t.label(indices), pinned)}")
    return [Finding(use.node, msg, extra_targets=tuple(f"{PACKAGE}=={t.labels[i]}" for i in sorted(lack)))]


# -- where a call names keys ---------------------------------------------------------------------
def dict_keys(expr: cst.BaseExpression, fc) -> list[tuple[str, cst.CSTNode]]:
    """The string keys of the dict ``expr`` may be (each dict it may be), with the node a key is
    written at when the dict is written at the call."""
    at: dict[str, cst.CSTNode] = {}
    if isinstance(expr, cst.Dict):
        for el in expr.elements:
            if isinstance(el, cst.DictElement) and isinstance(el.key, cst.SimpleString):
                k = el.key.evaluated_value
                if isinstance(k, str):
                    at.setdefault(k, el.key)
    out: list[tuple[str, cst.CSTNode]] = []
    seen: set[str] = set()
    for w in fc.ctx.worlds:
        for _call, bindings in fc.scenarios():
            for v in options(fc.value_of(expr, w, bindings)):
                if isinstance(v, DictValue):
                    for k, _ in v.items:
                        if isinstance(k, str) and k not in seen:
                            seen.add(k)
                            out.append((k, at.get(k, expr)))
    return out


def patch_uses(site, module: str, fc) -> list[Use]:
    """The keys of ``<config>.patch(...)``: ``patch(X=v)``, ``patch("X", v)``, ``patch({"X": v})``."""
    out = [Use(a, module, a.keyword.value, "patch") for a in site.node.args
           if a.keyword is not None and not a.star]
    pos = [a.value for a in site.node.args if a.keyword is None and not a.star]
    if len(pos) == 2:
        for k in names_of(pos[0], fc) or ():
            out.append(Use(pos[0], module, k, "patch"))
    elif len(pos) == 1:
        out += [Use(node, module, k, "patch") for k, node in dict_keys(pos[0], fc)]
    return out


def is_config(fc, qualname: str | None) -> str | None:
    """The config module (or ``module.subconfig``) ``qualname`` names, as a dotted prefix for keys:
    ("torch._inductor.config", "triton.") for ``torch._inductor.config.triton``; else None."""
    if not qualname:
        return None
    t = table(fc.matrix) if qualname.startswith(PACKAGE + ".") else None
    if t is None:
        return None
    if qualname in t.modules:
        return qualname
    got = t.split(qualname)
    if got is not None and got[0].subconfig(got[1]):
        return qualname
    return None


def owner(fc, dotted_name: str) -> tuple[str, str]:
    """(config module, key prefix) for a config module or sub-config's dotted name."""
    t = table(fc.matrix)
    if dotted_name in t.modules:
        return dotted_name, ""
    m, key = t.split(dotted_name)
    return m.name, key + "."
