"""What a CMake project builds for CUDA, read without running CMake.

The commands from cmake.py are interpreted over variables whose values are
a few alternatives (``if()`` branches that cannot be decided each leave
theirs) or unknown (``string(REPLACE ...)``, ``$ENV{}``, loops over unknown
lists). Unknown pieces are carried as the marker ``UNK`` inside a value, so
one unknown word never spoils the rest of a command. This is one configuration
of the project's build: option()s take their default unless ``forced`` fixes them
(configs.py runs one evaluation per configuration), other variables a user could
set with ``-D`` are undefined, cache variables take their default.

Two answers come out: the arch settings a file makes (AIC302), and per source
file the nvcc flags and CUDA_ARCHITECTURES it is compiled with (build context).
The user's arch list enters only where the project reads it from torch
(vLLM's ``extract_unique_cuda_archs_ascending``) or leaves CMake's default:
both are the fleet under "you build for the GPUs you run on".
"""

from __future__ import annotations

import re
from itertools import product
from pathlib import Path

from .cond import UNK, Condition
from .files import FileCommands, _read
from .parse import Arg, Command, split_list, tokenize, unescape
from .records import MAX_ALTS, Alts, Model, Recorded
from .targets import _TARGET_COMMANDS, TargetCommands
from .vars import VariableCommands, _string_output

MAX_FILES = 200
MAX_STEPS = 200_000


class _Stop(Exception):
    pass


_VAR_REF = re.compile(r"\$(ENV|CACHE)?\{([^${}]*)\}")


class Interpreter(VariableCommands, FileCommands, TargetCommands):
    """The commands of cmake.py over alternative values; the command families live in
    cmake_vars.py, cmake_files.py and cmake_targets.py."""

    def __init__(self, root: Path, fleet_caps: list[str] | None, cuda: str | None, model: Model,
                 forced: dict[str, Alts] | None = None) -> None:
        self.root = root
        self.forced = forced or {}  # option name -> the values it takes (one configuration)
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
            self.model.complete = False
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
            if cond_cmd.name != "else":
                self.note_tested(cond_cmd)
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

    def note_tested(self, c: Command) -> None:
        """Options the condition reads (``X``, ``NOT X``, ``${X}``): each a configuration to flip."""
        for a in c.args:
            names = [m.group(2) for m in _VAR_REF.finditer(a.text) if not m.group(1)]
            if a.kind == "unquoted":
                names.append(a.text)
            for n in names:
                if n in self.model.options and n not in self.model.tested:
                    self.model.tested.append(n)

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
        from .models import MODELS  # they use this module's records

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


def evaluate(path: Path, root: Path, fleet_caps: list[str] | None = None, cuda: str | None = None,
             forced: dict[str, Alts] | None = None) -> Model:
    """Interpret the CMake file ``path`` (and what it includes) inside ``root``, with the
    option() values of ``forced`` (the others at their default)."""
    model = Model()
    interp = Interpreter(root, fleet_caps, cuda, model, forced)
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
        model.complete = False
    model.steps = interp.steps
    model.final_scope = scope  # type: ignore[attr-defined]
    return model
