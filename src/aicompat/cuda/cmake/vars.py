"""CMake commands that change variables: set, unset, list, string (cmake_eval.py
runs them). A value is a few alternatives; what cannot be computed is UNK."""

from __future__ import annotations

import re

from .cond import UNK
from .parse import split_list
from .records import Setting


class VariableCommands:
    """Mixed into cmake_eval.Interpreter (``args``, ``model``)."""

    def cmd_set(self, c, scope, path, certain) -> None:
        alts = self.args(c, scope)
        if not alts or not alts[0]:
            return
        var = alts[0][0]
        if UNK in var:
            return
        values = []
        cache = force = False
        for words in alts:
            vals = words[1:]
            if "PARENT_SCOPE" in vals:
                return  # a function's result: no effect at this level
            if "CACHE" in vals:
                k = vals.index("CACHE")
                cache, force = True, "FORCE" in vals[k:]
                vals = vals[:k]
            values.append(";".join(vals))
        if cache and var in scope and not force:
            return
        if all(v == "" for v in values) and not cache:
            scope.pop(var, None)
        else:
            scope[var] = tuple(dict.fromkeys(values))
        self.note_setting(c, var, scope, path, certain)

    def cmd_option(self, c, scope, path, certain) -> None:
        """option(<var> "<help>" [ON|OFF]): a boolean the user sets with -D<var>=..., so each
        value is a configuration of the build (issue 28): the default, unless this run is the
        configuration that fixes it (``forced``, configs.py). An already set variable is left as
        it is (CMake 3.21 Help/command/option.rst, CMP0077)."""
        alts = self.args(c, scope)
        if not alts or not alts[0] or UNK in alts[0][0] or alts[0][0] in scope:
            return
        words = alts[0]
        default = "ON" if len(words) > 2 and words[2].upper() in ("ON", "TRUE", "1", "YES", "Y") else "OFF"
        self.model.options.setdefault(words[0], default)
        scope[words[0]] = self.forced.get(words[0], (default,))

    def note_setting(self, c, var, scope, path, certain) -> None:
        if var not in ("CMAKE_CUDA_ARCHITECTURES", "CMAKE_CUDA_FLAGS") or var not in scope:
            return
        vals = scope[var]
        if len(vals) != 1 or UNK in vals[0]:
            return
        line, col = (c.args[1].line, c.args[1].col) if len(c.args) > 1 else (c.line, c.col)
        items = split_list(vals[0]) if var == "CMAKE_CUDA_ARCHITECTURES" else vals[0].split()
        self.model.settings.append(Setting(path, line, col, var, items, certain))

    def cmd_unset(self, c, scope, path, certain) -> None:
        if c.args:
            scope.pop(c.args[0].text, None)

    def cmd_list(self, c, scope, path, certain) -> None:
        alts = self.args(c, scope)
        words0 = alts[0]
        if len(words0) < 2:
            return
        op, var = words0[0].upper(), words0[1]
        cur = scope.get(var, ("",))
        out_var = None
        if op in ("APPEND", "PREPEND", "REMOVE_ITEM", "REMOVE_DUPLICATES", "INSERT", "FILTER", "SORT", "REVERSE",
                  "TRANSFORM", "REMOVE_AT", "POP_BACK", "POP_FRONT"):
            new = []
            for base in cur:
                for words in alts:
                    new.append(_list_op(op, split_list(base), words[2:]))
            if op == "POP_BACK" or op == "POP_FRONT":
                for w in words0[2:]:
                    scope[w] = (UNK,)
            scope[var] = tuple(dict.fromkeys(new))
            self.note_setting(c, var, scope, path, certain)  # the value it now has (the last one counts)
            return
        if op in ("FIND", "LENGTH", "GET", "JOIN", "SUBLIST"):
            out_var = words0[-1]
            results = []
            for base in cur:
                for words in alts:
                    results.append(_list_query(op, split_list(base), words[2:-1]))
            scope[out_var] = tuple(dict.fromkeys(results))

    def cmd_string(self, c, scope, path, certain) -> None:
        alts = self.args(c, scope)
        w = alts[0]
        if not w:
            return
        op = w[0].upper()
        if op in ("APPEND", "PREPEND") and len(w) >= 2:
            var = w[1]
            new = []
            for base in scope.get(var, ("",)):
                for words in alts:
                    add = "".join(words[2:])
                    new.append(base + add if op == "APPEND" else add + base)
            scope[var] = tuple(dict.fromkeys(new))
            self.note_setting(c, var, scope, path, certain)
            return
        if op == "CONCAT" and len(w) >= 2:
            scope[w[1]] = tuple(dict.fromkeys("".join(words[2:]) for words in alts))
            return
        # Everything else (REPLACE, REGEX ..., TOUPPER, SUBSTRING, ...): the output is
        # unknown, except that rewriting an empty input gives an empty output.
        out = _string_output(w)
        if out is None:
            return
        if op in ("STRIP", "TOUPPER", "TOLOWER") and len(w) == 3 and all(UNK not in words[1] for words in alts):
            f = {"STRIP": str.strip, "TOUPPER": str.upper, "TOLOWER": str.lower}[op]
            scope[out] = tuple(dict.fromkeys(f(words[1]) for words in alts))
            return
        if op in ("REPLACE", "REGEX") and all(not "".join(words[(5 if op == "REGEX" else 4):]) for words in alts):
            scope[out] = ("",)
            return
        scope[out] = (UNK,)


def _string_output(w: list[str]) -> str | None:
    op = w[0].upper() if w else ""
    if op == "REGEX" and len(w) >= 2:
        sub = w[1].upper()
        k = {"MATCH": 3, "MATCHALL": 3, "REPLACE": 4}.get(sub)
        return w[k] if k is not None and len(w) > k else None
    k = {"REPLACE": 3, "APPEND": 1, "PREPEND": 1, "CONCAT": 1, "JOIN": 2, "FIND": 3, "SUBSTRING": 4}.get(op)
    if k is not None:
        return w[k] if len(w) > k else None
    if op in ("TOUPPER", "TOLOWER", "LENGTH", "STRIP", "MD5", "SHA1", "SHA256", "GENEX_STRIP", "REPEAT", "MAKE_C_IDENTIFIER"):
        return w[-1] if len(w) >= 3 else None
    return None


def _list_op(op: str, items: list[str], args: list[str]) -> str:
    if any(UNK in a for a in args) and op not in ("SORT", "REVERSE", "REMOVE_DUPLICATES"):
        return UNK if op not in ("APPEND", "PREPEND") else ";".join(items + [UNK] if op == "APPEND" else [UNK] + items)
    if op == "APPEND":
        items = items + args
    elif op == "PREPEND":
        items = args + items
    elif op == "REMOVE_ITEM":
        items = [x for x in items if x not in args]
    elif op == "REMOVE_DUPLICATES":
        items = list(dict.fromkeys(items))
    elif op == "REVERSE":
        items = items[::-1]
    elif op == "SORT":
        items = sorted(items)
    elif op == "FILTER" and len(args) >= 3 and args[1] == "REGEX":
        rx = re.compile(args[2])
        keep = args[0] == "INCLUDE"
        items = [x for x in items if bool(rx.search(x)) == keep]
    else:
        return UNK
    return ";".join(items)


def _list_query(op: str, items: list[str], args: list[str]) -> str:
    if any(UNK in x for x in items) or any(UNK in a for a in args):
        return UNK
    if op == "FIND":
        return str(items.index(args[0])) if args and args[0] in items else "-1"
    if op == "LENGTH":
        return str(len(items))
    if op == "GET":
        return ";".join(items[int(k)] for k in args)
    if op == "JOIN":
        return (args[0] if args else "").join(items)
    return UNK
