"""What a CMake project builds for CUDA, read without running CMake.

The commands from cmake.py are interpreted over variables whose values are
a few alternatives (``if()`` branches that cannot be decided each leave
theirs) or unknown (``string(REPLACE ...)``, ``$ENV{}``, loops over unknown
lists). Unknown pieces are carried as the marker ``UNK`` inside a value, so
one unknown word never spoils the rest of a command. This is the project's
*default* build: variables a user could set with ``-D`` are undefined, cache
variables take their default.

Two answers come out: the arch settings a file makes (AIC302), and per source
file the nvcc flags and CUDA_ARCHITECTURES it is compiled with (build context).
The user's arch list enters only where the project reads it from torch
(vLLM's ``extract_unique_cuda_archs_ascending``) or leaves CMake's default:
both are the fleet under "you build for the GPUs you run on".
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from itertools import product
from pathlib import Path

from .cmake import Arg, Command, split_list, tokenize, unescape
from .cmake_cond import UNK, Condition

MAX_ALTS = 8
MAX_FILES = 200
MAX_GLOB = 5000
MAX_STEPS = 200_000

Alts = tuple  # tuple[str, ...]: the alternative values of a variable (CMake list strings)


@dataclass
class Setting:
    """An arch setting a CMake file makes, for AIC302."""

    path: Path
    line: int
    col: int
    what: str  # "CMAKE_CUDA_ARCHITECTURES" | "CUDA_ARCHITECTURES" | "CMAKE_CUDA_FLAGS" | "target_compile_options"
    values: list[str]  # the list items (arch list) or flags
    certain: bool  # reached on every path of the default build


@dataclass
class Recorded:
    """Options a source or target gets: alternatives of flag lists, where they were set."""

    alts: tuple[tuple[str, ...], ...]
    path: Path
    line: int


@dataclass
class Target:
    name: str
    sources: list[Path] = field(default_factory=list)
    archs: Alts | None = None  # CUDA_ARCHITECTURES (None: not set)
    options: list[Recorded] = field(default_factory=list)
    scope: dict | None = None  # the directory scope (its final CMAKE_CUDA_FLAGS apply)
    path: Path | None = None
    line: int = 0


@dataclass
class Model:
    settings: list[Setting] = field(default_factory=list)
    targets: dict[str, Target] = field(default_factory=dict)
    source_options: dict[Path, list[Recorded]] = field(default_factory=dict)
    reads: list[str] = field(default_factory=list)
    fleet_used: bool = False
    skipped: dict[Path, tuple[Path, int]] = field(default_factory=dict)  # sources only in branches not taken


class _Stop(Exception):
    pass


_VAR_REF = re.compile(r"\$(ENV|CACHE)?\{([^${}]*)\}")
_GENEX_LANG = re.compile(r"\$<\$<COMPILE_LANGUAGE:(\w+)>:(.*)>$", re.S)


class Interpreter:
    def __init__(self, root: Path, fleet_caps: list[str] | None, cuda: str | None, model: Model) -> None:
        self.root = root
        self.fleet_caps = fleet_caps  # ["8.0", "9.0"]: the user's arch list, when known
        self.cuda = cuda
        self.model = model
        self.functions: dict[str, tuple[str, list[str], list[Command]]] = {}
        self.steps = 0
        self.files = 0
        self.in_alternative = 0  # running a loop body for one alternative of its list

    # -- values ----------------------------------------------------------------
    def expand(self, text: str, scope: dict) -> Alts:
        """Alternatives of ``text`` with ``${VAR}`` references replaced (innermost first)."""
        alts = (text,)
        for _ in range(16):
            if not any("${" in a or "$ENV{" in a or "$CACHE{" in a for a in alts):
                break
            out: list[str] = []
            for a in alts:
                m = _VAR_REF.search(a)  # [^${}] makes the innermost of ${A_${B}} match first
                if m is None:
                    out.append(a.replace("${", UNK + "{"))
                    continue
                if m.group(1) == "ENV":
                    vals: Alts = (UNK,)
                else:
                    vals = scope.get(m.group(2), ("",))
                for v in vals:
                    out.append(a[:m.start()] + v + a[m.end():])
            alts = tuple(dict.fromkeys(out))
            if len(alts) > MAX_ALTS:
                return (UNK,)
        return alts

    def args(self, cmd: Command, scope: dict) -> list[tuple[list[str], ...]]:
        """The command's argument lists after expansion: one list per alternative."""
        per_arg: list[tuple[list[str], ...]] = []
        for a in cmd.args:
            if a.kind == "bracket":
                per_arg.append(([a.text],))
                continue
            alts = self.expand(a.text, scope)
            if a.kind == "quoted":
                per_arg.append(tuple([unescape(v)] for v in alts))
            else:
                per_arg.append(tuple(split_list(unescape(v)) for v in alts))
        n = 1
        for p in per_arg:
            n *= len(p)
        if n > MAX_ALTS:  # too many combinations: the multi-valued words become unknown
            per_arg = [p if len(p) == 1 else ([UNK],) for p in per_arg]
        out = []
        for combo in product(*per_arg):
            out.append([w for part in combo for w in part])
        return out

    # -- running -----------------------------------------------------------------
    def run_file(self, path: Path, scope: dict, certain: bool = True) -> None:
        if self.files >= MAX_FILES:
            return
        text = _read(path)
        if text is None:
            return
        self.files += 1
        self.model.reads.append(str(path))
        saved = (scope.get("CMAKE_CURRENT_LIST_DIR"), scope.get("CMAKE_CURRENT_LIST_FILE"))
        scope["CMAKE_CURRENT_LIST_DIR"] = (str(path.parent),)
        scope["CMAKE_CURRENT_LIST_FILE"] = (str(path),)
        try:
            self.block(tokenize(text), 0, None, scope, path, certain)
        finally:
            for k, v in zip(("CMAKE_CURRENT_LIST_DIR", "CMAKE_CURRENT_LIST_FILE"), saved):
                if v is not None:
                    scope[k] = v

    def block(self, cmds: list[Command], i: int, ends, scope: dict, path: Path, certain: bool) -> int:
        """Run commands from ``i`` until one named in ``ends``; returns its index."""
        while i < len(cmds):
            c = cmds[i]
            if ends and c.name in ends:
                return i
            self.steps += 1
            if self.steps > MAX_STEPS:
                raise _Stop()
            if c.name == "if":
                i = self.if_block(cmds, i, scope, path, certain)
                continue
            if c.name in ("foreach", "while"):
                i = self.loop(cmds, i, scope, path, certain)
                continue
            if c.name in ("function", "macro"):
                end = _matching(cmds, i, c.name, "end" + c.name)
                names = [a.text for a in c.args]
                if names:
                    self.functions[names[0].lower()] = (c.name, names[1:], cmds[i + 1:end])
                i = end + 1
                continue
            try:
                self.command(c, scope, path, certain)
            except _Stop:
                raise
            except (ValueError, IndexError, re.error, RecursionError):
                pass  # a command this model cannot read changes nothing it knows
            i += 1
        return i

    def if_block(self, cmds, i, scope, path, certain) -> int:
        branches = []  # (condition command, first index, end index)
        start, cond = i + 1, cmds[i]
        j = start
        depth = 0
        while j < len(cmds):
            n = cmds[j].name
            if n == "if":
                depth += 1
            elif n == "endif" and depth:
                depth -= 1
            elif depth == 0 and n in ("elseif", "else", "endif"):
                branches.append((cond, start, j))
                if n == "endif":
                    break
                cond, start = cmds[j], j + 1
            j += 1
        else:
            branches.append((cond, start, len(cmds)))
        end = j + 1
        results: list[dict] = []
        taken_for_sure = False
        undecided = False  # an earlier branch may have been taken
        for k, (cond_cmd, a, b) in enumerate(branches):
            val = True if cond_cmd.name == "else" else self.condition(cond_cmd, scope)
            if val is False:
                if not undecided:
                    self.note_skipped(cmds[a:b], scope, path)
                continue
            sub = dict(scope)
            self.block(cmds[a:b], 0, None, sub, path, certain and val is True and not undecided)
            results.append(sub)
            if val is True:
                taken_for_sure = True
                if not undecided:
                    for _c, a2, b2 in branches[k + 1:]:
                        self.note_skipped(cmds[a2:b2], scope, path)
                break
            undecided = True
        if not taken_for_sure:
            results.append(dict(scope))  # no branch taken
        _merge(scope, results)
        return end

    def note_skipped(self, body: list[Command], scope: dict, path: Path) -> None:
        """CUDA sources a branch the default build never takes names (vLLM adds a per-arch
        kernel only ``if(KIMI_K3_ATTN_RES_ARCHS)``): not built for this fleet."""
        for c in body:
            for a in c.args:
                if a.text.endswith((".cu", ".cuh")) or '.cu"' in a.text or ".cu;" in a.text:
                    alts = self.expand(a.text, scope)
                    for v in alts:
                        for w in split_list(unescape(v)):
                            if w.endswith((".cu", ".cuh")) and UNK not in w:
                                p = self.source_path(w, scope, path)
                                if p is not None:
                                    self.model.skipped.setdefault(p, (path, c.line))

    def loop(self, cmds, i, scope, path, certain) -> int:
        c = cmds[i]
        name = c.name
        end = _matching(cmds, i, name, "end" + name)
        body = cmds[i + 1:end]
        if name == "foreach":
            runs = self.foreach_items(c, scope)
            if runs is not None:
                results = []
                for var, items in runs:  # one run per alternative of the list (if() branches)
                    sub = dict(scope) if len(runs) > 1 else scope
                    self.in_alternative += len(runs) > 1
                    for it in items:
                        sub[var] = (it,)
                        self.block(body, 0, None, sub, path, certain)
                    self.in_alternative -= len(runs) > 1
                    results.append(sub)
                if len(runs) > 1:
                    _merge(scope, results)
                return end + 1
        # A loop over what is not known: every variable it sets becomes unknown.
        for v in _assigned(body):
            scope[v] = (UNK,)
        return end + 1

    def recorded(self, alts, path: Path, line: int) -> Recorded:
        """Options set for a source or target; unknown when set inside one alternative's run of a loop."""
        return Recorded(((UNK,),) if self.in_alternative else alts, path, line)

    def foreach_items(self, c: Command, scope: dict):
        """[(loop variable, items)] per alternative of what foreach() walks; None if unknown."""
        alts = self.args(c, scope)
        if len(alts) != 1 or not alts[0] or UNK in "".join(alts[0]):
            return None
        var, items = alts[0][0], alts[0][1:]
        if items[:1] == ["RANGE"]:
            return None
        if items[:1] != ["IN"]:
            return [(var, items)]
        runs: list[list[str]] = [[]]
        mode = None
        for w in items[1:]:
            if w in ("LISTS", "ITEMS", "ZIP_LISTS"):
                mode = w
            elif mode == "LISTS":
                vals = scope.get(w, ("",))
                if any(UNK in v for v in vals) or len(runs) * len(vals) > MAX_ALTS:
                    return None
                runs = [r + split_list(v) for r in runs for v in vals]
            elif mode == "ITEMS":
                runs = [r + [w] for r in runs]
            else:
                return None
        if any(len(r) > 256 for r in runs):
            return None
        return [(var, r) for r in runs]

    # -- conditions ------------------------------------------------------------------
    def condition(self, c: Command, scope: dict):
        """True/False, or None when it cannot be decided."""
        words = []
        for a in c.args:
            if a.kind == "unquoted" and "${" not in a.text:
                words.append((a.text, False))
            else:
                alts = self.expand(a.text, scope)
                if len(alts) != 1 or UNK in alts[0]:
                    words.append((UNK, True))
                else:
                    words.append((unescape(alts[0]), True))
        try:
            val, rest = Condition(words, scope, self).parse_or(0)
        except (IndexError, ValueError, re.error):
            return None
        return val if rest == len(words) else None

    # -- commands --------------------------------------------------------------------
    def command(self, c: Command, scope: dict, path: Path, certain: bool) -> None:
        name = c.name
        handler = getattr(self, "cmd_" + name, None)
        if handler is not None:
            handler(c, scope, path, certain)
            return
        from .cmake_models import MODELS  # they use this module's records

        model = MODELS.get(name)
        if model is not None and name in self.functions:
            model(self, c, scope, path)
            return
        if name in _TARGET_COMMANDS:
            self.add_target(c, scope, path)
            return
        if name in self.functions:
            self.call_user(name, c, scope, path, certain)

    def call_user(self, name, c, scope, path, certain) -> None:
        """A macro/function of the project: variables it sets become unknown, except
        for macros, whose body runs with its arguments substituted (textually, as CMake does)."""
        kind, params, body = self.functions[name]
        alts = self.args(c, scope)
        if kind == "macro" and len(alts) == 1 and self.steps < MAX_STEPS // 2:
            words = alts[0]
            sub = {p: (words[k] if k < len(words) else "") for k, p in enumerate(params)}
            sub["ARGN"] = ";".join(words[len(params):])
            sub["ARGV"] = ";".join(words)
            body = [_substitute(cmd, sub) for cmd in body]
            self.block(body, 0, None, scope, path, certain)
            return
        for v in _assigned(body):
            scope.pop(v, None)
        for words in alts:  # an output variable named by an argument
            for w in words:
                if re.fullmatch(r"[A-Za-z_]\w*", w) and w in scope:
                    scope[w] = (UNK,)

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

    def cmd_include(self, c, scope, path, certain) -> None:
        alts = self.args(c, scope)
        if len(alts) != 1 or not alts[0]:
            return
        name = alts[0][0]
        if UNK in name:
            return
        here = Path(scope.get("CMAKE_CURRENT_SOURCE_DIR", (str(path.parent),))[0])
        cands = [Path(name)] if os.path.isabs(name) else [here / name, path.parent / name]
        for p in cands:
            p = Path(os.path.normpath(p))
            if p.suffix == ".cmake" or p.name == "CMakeLists.txt":
                if _inside(p, self.root) and p.is_file():
                    self.run_file(p, scope, certain)
                    return

    def cmd_add_subdirectory(self, c, scope, path, certain) -> None:
        alts = self.args(c, scope)
        if len(alts) != 1 or not alts[0] or UNK in alts[0][0]:
            return
        here = Path(scope.get("CMAKE_CURRENT_SOURCE_DIR", (str(path.parent),))[0])
        d = Path(os.path.normpath(here / alts[0][0]))
        f = d / "CMakeLists.txt"
        if _inside(f, self.root) and f.is_file():
            sub = dict(scope)
            sub["CMAKE_CURRENT_SOURCE_DIR"] = (str(d),)
            self.run_file(f, sub, certain)

    def cmd_file(self, c, scope, path, certain) -> None:
        alts = self.args(c, scope)
        w = alts[0]
        if len(w) < 2:
            return
        op = w[0].upper()
        if op not in ("GLOB", "GLOB_RECURSE"):
            if op in ("READ", "STRINGS", "MD5", "SHA256", "RELATIVE_PATH", "TO_CMAKE_PATH", "REAL_PATH") and len(w) >= 3:
                scope[w[2] if op != "RELATIVE_PATH" else w[1]] = (UNK,)
            return
        var = w[1]
        if len(alts) != 1:
            scope[var] = (UNK,)
            return
        here = Path(scope.get("CMAKE_CURRENT_SOURCE_DIR", (str(path.parent),))[0])
        found: list[str] = []
        rel = None
        rest = w[2:]
        k = 0
        while k < len(rest):
            p = rest[k]
            if p == "RELATIVE" and k + 1 < len(rest):
                rel = rest[k + 1]
                k += 2
                continue
            if p in ("CONFIGURE_DEPENDS", "FOLLOW_SYMLINKS", "LIST_DIRECTORIES") or p in ("true", "false"):
                k += 1
                continue
            if UNK in p:
                scope[var] = (UNK,)
                return
            base = Path(p) if os.path.isabs(p) else here / p
            if not _inside(Path(os.path.normpath(base.parent)), self.root):
                k += 1
                continue
            pattern = base.name
            parent = Path(os.path.normpath(base.parent))
            try:
                it = parent.rglob(pattern) if op == "GLOB_RECURSE" else parent.glob(pattern)
                for n, f in enumerate(sorted(it)):
                    if n > MAX_GLOB:
                        scope[var] = (UNK,)
                        return
                    found.append(os.path.relpath(f, rel) if rel else str(f))
            except (OSError, ValueError):
                scope[var] = (UNK,)
                return
            k += 1
        scope[var] = (";".join(found),)

    def add_target(self, c, scope, path) -> None:
        alts = self.args(c, scope)
        w = alts[0]
        if not w or UNK in w[0]:
            return
        t = self.model.targets.setdefault(w[0], Target(w[0], path=path, line=c.line))
        t.scope = scope
        words = w[1:]
        if "SOURCES" in words:  # vLLM-style define_extension_target(NAME ... SOURCES ... ARCHITECTURES ...)
            words = _keyword_values(words, "SOURCES", _KEYWORDS)
            archs = _keyword_values(w[1:], "ARCHITECTURES", _KEYWORDS)
            if archs:
                t.archs = (";".join(archs),)
        for s in words:
            p = self.source_path(s, scope, path)
            if p is not None:
                t.sources.append(p)
        if t.archs is None and "CMAKE_CUDA_ARCHITECTURES" in scope:
            t.archs = scope["CMAKE_CUDA_ARCHITECTURES"]

    def cmd_target_sources(self, c, scope, path, certain) -> None:
        w = self.args(c, scope)[0]
        if not w or w[0] not in self.model.targets:
            return
        t = self.model.targets[w[0]]
        for s in w[1:]:
            if s not in ("PRIVATE", "PUBLIC", "INTERFACE"):
                p = self.source_path(s, scope, path)
                if p is not None:
                    t.sources.append(p)

    def source_path(self, s: str, scope: dict, path: Path) -> Path | None:
        if UNK in s or s.upper() in _KEYWORDS or not s or s.startswith("$<"):
            return None
        here = Path(scope.get("CMAKE_CURRENT_SOURCE_DIR", (str(path.parent),))[0])
        return Path(os.path.normpath(Path(s) if os.path.isabs(s) else here / s))

    def cmd_set_target_properties(self, c, scope, path, certain) -> None:
        alts = self.args(c, scope)
        w = alts[0]
        if "PROPERTIES" not in w:
            return
        k = w.index("PROPERTIES")
        names, props = w[:k], w[k + 1:]
        for j in range(0, len(props) - 1, 2):
            key, val = props[j], props[j + 1]
            if key == "CUDA_ARCHITECTURES":
                vals = tuple(dict.fromkeys(words[k + 1:][j + 1] for words in alts if len(words) > k + j + 2 - 1))
                for n in names:
                    t = self.model.targets.setdefault(n, Target(n, path=path, line=c.line))
                    t.archs = vals
                self._arch_setting(c, val, "CUDA_ARCHITECTURES", path, certain, len(alts) == 1)

    def _arch_setting(self, c, val, what, path, certain, single) -> None:
        arg = next((a for a in c.args if a.text == "CUDA_ARCHITECTURES"), None)
        if single and UNK not in val:
            line, col = (arg.line, arg.col) if arg else (c.line, c.col)
            self.model.settings.append(Setting(path, line, col, what, split_list(val), certain))

    def cmd_set_property(self, c, scope, path, certain) -> None:
        alts = self.args(c, scope)
        w = alts[0]
        if not w or "PROPERTY" not in w:
            return
        kind = w[0].upper()
        k = w.index("PROPERTY")
        names = [x for x in w[1:k] if x != "APPEND" and x != "APPEND_STRING"]
        if "DIRECTORY" in names:
            names = names[:names.index("DIRECTORY")]
        prop = w[k + 1] if k + 1 < len(w) else ""
        vals = tuple(tuple(words[words.index("PROPERTY") + 2:]) for words in alts if "PROPERTY" in words)
        if kind == "SOURCE" and prop in ("COMPILE_OPTIONS", "COMPILE_FLAGS"):
            for n in names:
                p = self.source_path(n, scope, path)
                if p is not None:
                    self.model.source_options.setdefault(p, []).append(self.recorded(_flags(vals), path, c.line))
        elif kind == "TARGET" and prop == "CUDA_ARCHITECTURES":
            for n in names:
                t = self.model.targets.setdefault(n, Target(n, path=path, line=c.line))
                t.archs = tuple(";".join(v) for v in vals)
        elif kind == "TARGET" and prop == "COMPILE_OPTIONS":
            for n in names:
                t = self.model.targets.setdefault(n, Target(n, path=path, line=c.line))
                t.options.append(self.recorded(_flags(vals), path, c.line))

    def cmd_set_source_files_properties(self, c, scope, path, certain) -> None:
        alts = self.args(c, scope)
        w = alts[0]
        if "PROPERTIES" not in w:
            return
        k = w.index("PROPERTIES")
        names = w[:k]
        for kw in ("DIRECTORY", "TARGET_DIRECTORY"):
            if kw in names:
                names = names[:names.index(kw)]
        props = w[k + 1:]
        for j in range(0, len(props) - 1, 2):
            if props[j] in ("COMPILE_OPTIONS", "COMPILE_FLAGS"):
                vals = tuple((words[k + 1 + j + 1],) for words in alts if len(words) > k + 1 + j + 1)
                for n in names:
                    p = self.source_path(n, scope, path)
                    if p is not None:
                        self.model.source_options.setdefault(p, []).append(self.recorded(_flags(vals), path, c.line))

    def cmd_target_compile_options(self, c, scope, path, certain) -> None:
        alts = self.args(c, scope)
        w = alts[0]
        if not w:
            return
        t = self.model.targets.setdefault(w[0], Target(w[0], path=path, line=c.line))
        vals = tuple(tuple(x for x in words[1:] if x not in ("PRIVATE", "PUBLIC", "INTERFACE", "BEFORE"))
                     for words in alts)
        rec = self.recorded(_flags(vals), path, c.line)
        t.options.append(rec)
        if len(rec.alts) == 1 and any("arch" in f for f in rec.alts[0]):
            self.model.settings.append(Setting(path, c.line, c.col, "target_compile_options", list(rec.alts[0]),
                                               certain))

    def cmd_add_compile_options(self, c, scope, path, certain) -> None:
        alts = self.args(c, scope)
        add = [" ".join(_flags((tuple(w),))[0]) for w in alts]
        base = scope.get("CMAKE_CUDA_FLAGS", ("",))
        scope["CMAKE_CUDA_FLAGS"] = tuple(dict.fromkeys(f"{b} {a}" for b in base for a in add))


    def cmd_target_compile_definitions(self, c, scope, path, certain) -> None:
        alts = self.args(c, scope)
        w = alts[0]
        if not w:
            return
        t = self.model.targets.setdefault(w[0], Target(w[0], path=path, line=c.line))
        vals = tuple(tuple(x for x in words[1:] if x not in ("PRIVATE", "PUBLIC", "INTERFACE")) for words in alts)
        t.options.append(self.recorded(_definitions(vals), path, c.line))

    def cmd_add_compile_definitions(self, c, scope, path, certain) -> None:
        alts = self.args(c, scope)
        add = [" ".join(_definitions((tuple(w),))[0]) for w in alts]
        base = scope.get("CMAKE_CUDA_FLAGS", ("",))
        scope["CMAKE_CUDA_FLAGS"] = tuple(dict.fromkeys(f"{b} {a}" for b in base for a in add))

    # add_definitions(-DFOO) takes compile flags, as add_compile_options does.
    cmd_add_definitions = cmd_add_compile_options


def _definitions(vals: tuple) -> tuple[tuple[str, ...], ...]:
    """COMPILE_DEFINITIONS items (``FOO``, ``BAR=1``, CUDA generator expressions) as -D flags."""
    return tuple(tuple(f if f == UNK or f.startswith("-D") else f"-D{f}" for f in flags) for flags in _flags(vals))


def _flags(vals: tuple) -> tuple[tuple[str, ...], ...]:
    """Compile options as nvcc flags: generator expressions for CUDA unwrapped, for
    other languages dropped; COMPILE_FLAGS strings split on spaces."""
    out = []
    for v in vals:
        flags: list[str] = []
        for item in v:
            m = _GENEX_LANG.match(item)
            if m:
                if m.group(1) != "CUDA":
                    continue
                item = m.group(2)
            elif item.startswith("$<"):
                flags.append(UNK)
                continue
            flags.extend(item.split())
        out.append(tuple(flags))
    return tuple(dict.fromkeys(out))


def _read(path: Path) -> str | None:
    from .includes import read

    return read(path)


def _inside(p: Path, root: Path) -> bool:
    try:
        p.resolve().relative_to(root.resolve())
    except (ValueError, OSError, RuntimeError):
        return False
    return True


def _matching(cmds, i, opener, closer) -> int:
    depth = 0
    for j in range(i, len(cmds)):
        if cmds[j].name == opener:
            depth += 1
        elif cmds[j].name == closer:
            depth -= 1
            if depth == 0:
                return j
    return len(cmds)


def _assigned(body: list[Command]) -> set[str]:
    out = set()
    for c in body:
        if c.name in ("set", "unset") and c.args:
            out.add(c.args[0].text)
        elif c.name == "list" and len(c.args) > 1:
            out.add(c.args[1].text)
            out.add(c.args[-1].text)
        elif c.name == "string" and c.args:
            o = _string_output([a.text for a in c.args])
            if o:
                out.add(o)
    return {v for v in out if re.fullmatch(r"[A-Za-z_]\w*", v)}


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


def _substitute(cmd: Command, sub: dict[str, str]) -> Command:
    """A macro's body with ``${param}`` replaced by the call's argument text."""
    def rep(text: str) -> str:
        for k, v in sub.items():
            text = text.replace("${" + k + "}", v)
        return text
    return Command(cmd.name, tuple(Arg(rep(a.text), a.kind, a.line, a.col) for a in cmd.args), cmd.line, cmd.col)


def _merge(scope: dict, results: list[dict]) -> None:
    """Variables after an if(): the alternatives of the branches that may run. A
    variable undefined before and set only in some branches takes the values it is
    set to: a build that uses it as an arch list or flags needs it set (and an
    empty arch list builds nothing to judge)."""
    keys = set().union(*results) if results else set()
    for k in keys:
        vals: list[str] = []
        setting = [r for r in results if k in r]
        for r in (setting if k not in scope else results):
            vals.extend(r.get(k, ("",)))
        vals = list(dict.fromkeys(vals))
        if vals == [""] and not any(k in r for r in results):
            scope.pop(k, None)
            continue
        scope[k] = tuple(vals) if len(vals) <= MAX_ALTS else (UNK,)


_KEYWORDS = {"DESTINATION", "LANGUAGE", "SOURCES", "ARCHITECTURES", "COMPILE_FLAGS", "INCLUDE_DIRECTORIES",
             "LIBRARIES", "USE_SABI", "WITH_SOABI", "STATIC", "SHARED", "MODULE", "OBJECT", "INTERFACE",
             "EXCLUDE_FROM_ALL", "IMPORTED", "GLOBAL", "ALIAS", "WIN32", "MACOSX_BUNDLE", "NO_EXTRAS", "THIN_LTO",
             "OPT_SIZE", "NB_STATIC", "NB_SHARED", "STABLE_ABI", "NOMINSIZE", "NB_DOMAIN", "PROTECT_STACK", "LTO",
             "NOSTRIP", "NB_SUPPRESS_WARNINGS", "DEVICE_LINK"}


def _keyword_values(words: list[str], key: str, keywords: set[str]) -> list[str]:
    if key not in words:
        return []
    out = []
    for w in words[words.index(key) + 1:]:
        if w in keywords:
            break
        out.append(w)
    return out


_TARGET_COMMANDS = {"add_library", "add_executable", "cuda_add_library", "cuda_add_executable", "pybind11_add_module",
                    "python_add_library", "nanobind_add_module", "define_gpu_extension_target",
                    "define_extension_target"}


def evaluate(path: Path, root: Path, fleet_caps: list[str] | None = None, cuda: str | None = None) -> Model:
    """Interpret the CMake file ``path`` (and what it includes) inside ``root``."""
    model = Model()
    interp = Interpreter(root, fleet_caps, cuda, model)
    scope: dict = {"CMAKE_CURRENT_SOURCE_DIR": (str(path.parent),), "CMAKE_SOURCE_DIR": (str(path.parent),),
                   "PROJECT_SOURCE_DIR": (str(path.parent),)}
    # The CUDA build of the project (the fleet is NVIDIA GPUs), with the configured
    # toolkit where there is one: what CMake's CUDA language support defines.
    scope.update({"CUDA_FOUND": ("TRUE",), "CUDAToolkit_FOUND": ("TRUE",), "CMAKE_CUDA_COMPILER_ID": ("NVIDIA",)})
    for v in ("CMAKE_CUDA_COMPILER_VERSION", "CUDAToolkit_VERSION", "CUDA_VERSION"):
        scope[v] = (cuda or UNK,)
    try:
        interp.run_file(path, scope)
    except (_Stop, RecursionError):
        pass
    model.final_scope = scope  # type: ignore[attr-defined]
    return model
