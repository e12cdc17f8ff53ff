"""Which lines of a CUDA source survive the preprocessor for one compile target.

Evaluates ``#if``/``#ifdef``/``#ifndef``/``#elif``/``#else``/``#endif`` (full
grammar: cuda/cpp/ppexpr.py) with the macros nvcc defines in the device pass for
that target, the build's ``-D`` flags when known, and the ``#define``s of the
file and of the in-tree headers it includes (cuda/cpp/includes.py), each recorded
as defined in a target exactly where its branch is live (maybe-defined where
the branch is unknown). Nothing is compiled; this reads text.

Undefined means undefined, as for the compiler. A name is known undefined when
- it is one of nvcc's target macros that this target does not define;
- it is in version_matrix/cuda_macros.toml [never] (IDE code models and other
  compilers: ``__CLION_IDE__``; nvcc never predefines them);
- the file or its in-tree headers define it elsewhere (not at this point, not
  in this target): a project does not also pass ``-D`` for a macro its own
  source computes. A ``#define N value`` under ``#ifndef N`` is the exception
  (a default the build may override);
- the build is known not to pass it (``Context.undefined``: a macro the project's CMake
  defines only in other configurations);
- the build's ``-D`` flags are known (``Context.defines``) and the name does
  not look like it comes from a header outside the tree: such a header (an
  ``#include`` that does not resolve in-tree) may define names that start with
  its library's name (``<cutlass/...>`` -> ``CUTLASS*``, ``<cuda_fp8.h>`` ->
  ``CUDA*``) or reserved names (``__x``, ``_X``), and nothing else.
Otherwise the name is unknown and both branches stay possible. Macros that
CUTLASS/CuTe headers derive from nvcc's arch macros are evaluated per target
from the table in version_matrix/cuda_macros.toml [macro].
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from ...base.errors import MatrixError
from . import includes as inc
from . import runcache
from .ppexpr import UNKNOWN, UNKNOWN_VALUE, Env, Macro, evaluate

MAX_INCLUDE_DEPTH = 12
MAX_INCLUDED_FILES = 96


@dataclass(frozen=True)
class CompileTarget:
    """A device compile target: ``sm_90``, ``sm_90a`` or ``sm_100f``."""

    name: str

    @property
    def number(self) -> int:
        return int(re.match(r"sm_(\d+)", self.name).group(1))

    @property
    def suffix(self) -> str:
        return self.name[-1] if self.name[-1] in "af" else ""

    def macros(self) -> dict[str, int]:
        """What nvcc defines for this target in the device pass."""
        n = self.number
        arch = n * 10  # sm_90 -> 900, sm_100 -> 1000
        m = {"__CUDA_ARCH__": arch, "__CUDACC__": 1, "__NVCC__": 1}
        if self.suffix == "a":
            m["__CUDA_ARCH_SPECIFIC__"] = arch
            m["__CUDA_ARCH_FAMILY_SPECIFIC__"] = arch
            m[f"__CUDA_ARCH_FEAT_SM{n}_ALL"] = 1
        elif self.suffix == "f":
            m["__CUDA_ARCH_FAMILY_SPECIFIC__"] = arch
        return m


@dataclass
class Context:
    """Where a CUDA source lives and how it is built (what the preprocessor may follow)."""

    path: Path | None = None  # the file; None for a string compiled from Python
    root: Path | None = None  # includes are followed only inside this tree
    include_dirs: tuple = ()
    defines: dict[str, str] | None = None  # the build's -D flags, all of them; None: not known
    some_defines: dict[str, str] | None = None  # -D flags the build passes when the rest are not known
    undefined: frozenset = frozenset()  # names the build is known not to define (the rest may stay open)
    toolkit: tuple[int, int] | None = None  # nvcc's version, when known
    translation_unit: bool = True  # compiled by itself (.cu, a load_inline string), not only included
    relocatable: bool | None = None  # -rdc=true: extern __device__ functions are emitted even unused
    # Headers the compiler sees before the text (torch's load_inline prepends #include <torch/types.h>)
    # and the prefixes of the macros they define: such names stay possible when the -D flags are known.
    preincluded: tuple = ()
    libraries: tuple = ()


def default_context(path: str | Path, defines: dict[str, str] | None = None, include_dirs=None,
                    toolkit: tuple[int, int] | None = None) -> Context:
    """A file's context when the build says nothing more: the tree is the nearest
    ancestor holding ``.git`` (else the file's folder); include dirs are the file's
    ancestors inside the tree and their ``include/`` folders, plus ``include/``
    folders two levels below the root (``csrc/kerutils/include``), as kernel
    repositories pass them with ``-I``."""
    p = Path(path).absolute()
    if not p.is_file():  # standard input or a name only: nothing beside it to read
        return Context(path=None, defines=defines, toolkit=toolkit, translation_unit=p.suffix == ".cu")
    root = _tree_root(p)
    if include_dirs is None:
        dirs: list[Path] = []
        for d in p.parents:
            dirs.append(d)
            if (d / "include").is_dir():
                dirs.append(d / "include")
            if d == root:
                break
        try:
            dirs.extend(sorted(x for x in root.glob("*/include") if x.is_dir()))
            dirs.extend(sorted(x for x in root.glob("*/*/include") if x.is_dir()))
        except OSError:
            pass
        include_dirs = tuple(dict.fromkeys(dirs))
    return Context(path=p, root=root, include_dirs=tuple(include_dirs), defines=defines, toolkit=toolkit,
                   translation_unit=p.suffix == ".cu")


_PROJECT_FILES = (".git", "setup.py", "pyproject.toml", "CMakeLists.txt", ".gitmodules")


def _tree_root(p: Path) -> Path:
    """The nearest ancestor with ``.git``; else the highest one (up to 8 levels) holding a
    project file (setup.py, pyproject.toml, CMakeLists.txt, .gitmodules); else the file's folder."""
    parents = list(p.parents)[:8]
    for d in parents:
        if (d / ".git").exists():
            return d
    marked = [d for d in parents if any((d / f).exists() for f in _PROJECT_FILES[1:])]
    return marked[-1] if marked else p.parent


# Macros nvcc may define for *some* target: for any target that does not
# define them they are known to be undefined, not unknown.
ARCH_MACRO = re.compile(r"__CUDA_ARCH(?:_SPECIFIC|_FAMILY_SPECIFIC)?__|__CUDA_ARCH_FEAT_SM\d+_ALL|__CUDACC__|__NVCC__")
# Always defined by nvcc, with a value this module cannot know without the toolkit / build.
_NVCC_VERSION = ("__CUDACC_VER_MAJOR__", "__CUDACC_VER_MINOR__", "__CUDACC_VER_BUILD__")

_DIRECTIVE = re.compile(r"^\s*#\s*(\w+)(.*)$")
_DEFINE = re.compile(r"^\s*#\s*define\s+([A-Za-z_]\w*)(\([^)]*\))?\s*(.*)$")
_RESERVED = re.compile(r"__|_[A-Z]")


def strip_comments(text: str) -> str:
    """Remove // and /* */ comments, keeping line numbers and string literals."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c == '"' or c == "'":
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            out.append(text[i:j + 1])
            i = j + 1
        elif text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            chunk = text[i: (n if j < 0 else j + 2)]
            out.append("\n" * chunk.count("\n"))
            i = n if j < 0 else j + 2
        else:
            out.append(c)
            i += 1
    return "".join(out)


def logical_lines(text: str) -> list[tuple[int, str]]:
    """(first physical line number, text) with backslash continuations joined."""
    lines = text.split("\n")
    out: list[tuple[int, str]] = []
    buf, start = "", 0
    for i, line in enumerate(lines, 1):
        if not buf:
            start = i
        if line.endswith("\\"):
            buf += line[:-1] + " "
            continue
        out.append((start, buf + line))
        buf = ""
    if buf:
        out.append((start, buf))
    return out


@dataclass
class Preprocessed:
    live: dict[int, bool | None]  # line number -> True (compiled), False (dropped), None (unknown)
    defines: dict[str, str] = field(default_factory=dict)  # object-like and function-like bodies
    groups: dict[int, list[tuple[int, int, bool | None]]] = field(default_factory=dict)
    # group id -> [(first line, last line, branch live?)] per branch, in order
    line_group: dict[int, tuple[int, int]] = field(default_factory=dict)  # line -> (group, branch)
    env: Env | None = None  # the macros at the end of the file, for the C++ model
    included_text: list[str] = field(default_factory=list)  # comment-stripped in-tree headers followed
    table: MacroTable | None = None  # the cuda_macros.toml it was evaluated with, for the C++ model


# -- the data table ---------------------------------------------------------------

@dataclass(frozen=True)
class MacroTable:
    """version_matrix/cuda_macros.toml, as the matrix loader checked it: macros CUTLASS/CuTe
    headers derive per target ([macro]), names nvcc never predefines ([never]), project
    predicates of the C++ model ([cxx_constant])."""

    macro: dict
    never: dict
    cxx_constant: dict


def macro_table(matrix) -> MacroTable:
    """The run's cuda_macros.toml tables. A table that is missing is a data error that ends the
    run (MatrixError), never an empty one: without [never] a macro nvcc never defines would
    read as one a -D flag may set, and every branch on it as unknown."""
    doc = matrix.files.get("cuda_macros.toml")
    if doc is None:
        raise MatrixError("version_matrix/cuda_macros.toml: file is missing")
    got = {}
    for section in ("macro", "never", "cxx_constant"):
        table = doc.get(section)
        if not isinstance(table, dict):
            raise MatrixError(f"version_matrix/cuda_macros.toml: [{section}] is missing")
        got[section] = table
    return MacroTable(**got)


def _default_table() -> MacroTable:
    """The shipped matrix's table, for a caller that names no matrix (the run always does)."""
    from ...matrix import default_matrix

    return macro_table(default_matrix())


# -- the macro environment ----------------------------------------------------------

def _own_names(text: str) -> tuple[frozenset, frozenset]:
    """(names the text #defines, those defined with a value under a test of themselves:
    ``#ifndef N / #define N v``, a default a -D flag may override)."""
    key = text
    facts: dict[str, tuple[frozenset, frozenset]] = runcache.table("own_names")
    if key in facts:
        return facts[key]
    own, overridable = set(), set()
    stack: list[str] = []
    for _ln, line in logical_lines(text):
        m = _DIRECTIVE.match(line)
        if not m:
            continue
        d = m.group(1)
        if d in ("if", "ifdef", "ifndef"):
            stack.append(m.group(2))
        elif d in ("elif", "else") and stack:
            stack[-1] = m.group(2)
        elif d == "endif" and stack:
            stack.pop()
        elif d == "define":
            dm = _DEFINE.match(line)
            if dm:
                name = dm.group(1)
                own.add(name)
                if dm.group(3).strip() and stack and re.search(rf"\b{re.escape(name)}\b", stack[-1]):
                    overridable.add(name)
    res = (frozenset(own), frozenset(overridable))
    if len(facts) > 2048:
        facts.clear()
    facts[key] = res
    return res


class _Env(Env):
    def __init__(self, target: CompileTarget, ctx: Context, table: MacroTable) -> None:
        self.target_macros = target.macros()
        self.ctx = ctx
        self.table = table
        self.defines: dict[str, Macro | bool] = {}
        for name, body in {**(ctx.some_defines or {}), **(ctx.defines or {})}.items():
            self.defines[name] = Macro(name, None, str(body))
        self.own: set[str] = set()
        self.overridable: set[str] = set()
        self.libraries: set[str] = set()  # name tokens of includes that did not resolve in-tree
        self.reserved_possible = False
        self._table_cache: dict[str, Macro | bool | None] = {}
        self._busy: set[str] = set()
        self.from_dir: Path | None = ctx.path.parent if ctx.path is not None else None
        for name in ctx.preincluded:
            self.add_unresolved(name)
        self.libraries.update(ctx.libraries)

    def add_text(self, text: str) -> None:
        own, over = _own_names(text)
        self.own |= own
        self.overridable |= over

    def add_unresolved(self, name: str) -> None:
        first = re.split(r"[/\\]", name)[0]
        stem = first.split(".")[0] if "/" not in name else first
        m = re.match(r"[A-Za-z]+\d*", stem)
        if m:
            self.libraries.add(m.group(0).upper())
        self.reserved_possible = True

    def macro(self, name: str):
        m = self.defines.get(name)
        if m is not None:
            return m
        if name in self.target_macros:
            return Macro(name, None, str(self.target_macros[name]))
        if name in _NVCC_VERSION:
            tk = self.ctx.toolkit
            if tk is not None and name != "__CUDACC_VER_BUILD__":
                return Macro(name, None, str(tk[0] if name == "__CUDACC_VER_MAJOR__" else tk[1]))
            return Macro(name, None, UNKNOWN_VALUE, state=True)
        if name == "__CUDA_ARCH_LIST__":
            return Macro(name, None, UNKNOWN_VALUE)
        if name in self.table.macro:
            return self._from_table(name)
        if self.known_undefined(name):
            return False
        return None

    def _from_table(self, name: str):
        if name in self._table_cache:
            return self._table_cache[name]
        if name in self._busy:
            return None
        self._busy.add(name)
        try:
            e = self.table.macro[name]
            v = evaluate(e["when"], self, self.ident)
        finally:
            self._busy.discard(name)
        res = False if v == 0 else Macro(name, None, e["value"], state=True if v is not UNKNOWN else None)
        self._table_cache[name] = res
        return res

    def known_undefined(self, name: str) -> bool:
        if ARCH_MACRO.fullmatch(name):
            return True
        if name in self.table.never:
            return True
        if name in self.own and name not in self.overridable:
            return True
        if name in self.ctx.undefined:
            return True
        if self.ctx.defines is None:
            return False  # the build may pass -D for it
        return not self.from_library(name)

    def from_library(self, name: str) -> bool:
        if _RESERVED.match(name):
            return self.reserved_possible
        up = name.lstrip("_").upper()
        return any(up.startswith(lib) for lib in self.libraries)

    def ident(self, name: str):
        """An identifier left in an #if after expansion."""
        if name in ("true", "false"):
            return int(name == "true")
        if name == UNKNOWN_VALUE:
            return UNKNOWN
        m = self.macro(name)
        if m is False:
            return 0
        return UNKNOWN

    def has_include(self, name: str, quoted: bool):
        if self.ctx.root is None or self.from_dir is None:
            return None
        found = inc.resolve(name, quoted, self.from_dir, self.ctx.include_dirs, self.ctx.root)
        return True if found is not None else None  # not in the tree: a system or library header may exist

    def define(self, line: str, current: bool | None) -> None:
        dm = _DEFINE.match(line)
        if not dm:
            return
        name, params, body = dm.group(1), dm.group(2), dm.group(3).strip()
        plist = tuple(p.strip() for p in params[1:-1].split(",") if p.strip()) if params else None
        if current is True:
            self.defines[name] = Macro(name, plist, body)
            return
        old = self.defines.get(name)
        if isinstance(old, Macro) and old.state is True and old.body == body and old.params == plist:
            return
        self.defines[name] = Macro(name, plist, body, state=None)

    def undef(self, name: str, current: bool | None) -> None:
        if current is True:
            self.defines[name] = False
        elif isinstance(self.defines.get(name), Macro):
            old = self.defines[name]
            self.defines[name] = Macro(old.name, old.params, old.body, state=None)


# -- the walk -----------------------------------------------------------------------

def _header_lines(path: Path) -> tuple[str, list[tuple[int, str]]] | None:
    text = inc.read(path)
    if text is None:
        return None
    key = (str(path), len(text), hash(text))
    lines: dict[tuple, tuple[str, list[tuple[int, str]]]] = runcache.table("header_lines")
    if key not in lines:
        if len(lines) > 1024:
            lines.clear()
        clean = strip_comments(text)
        lines[key] = (clean, logical_lines(clean))
    return lines[key]


class _Walker:
    def __init__(self, env: _Env, ctx: Context) -> None:
        self.env = env
        self.ctx = ctx
        self.visited: set[str] = set()
        self.included_text: list[str] = []

    def walk(self, lines, current, from_dir: Path | None, depth: int, record: bool):
        live: dict[int, bool | None] = {}
        groups: dict[int, list[tuple[int, int, bool | None]]] = {}
        line_group: dict[int, tuple[int, int]] = {}
        # stack of [group id, parent live, branch taken (True/None/False), current branch live, branch start, index]
        stack: list[list] = []
        gid = 0
        env = self.env
        base = current
        for lineno, line in lines:
            m = _DIRECTIVE.match(line)
            if not m:
                if record:
                    live[lineno] = current
                    if stack:
                        line_group[lineno] = (stack[-1][0], stack[-1][5])
                continue
            d, rest = m.group(1), m.group(2).strip()
            if record:
                live[lineno] = False
            if d in ("if", "ifdef", "ifndef"):
                cond = self.cond(d, rest) if current is not False else False
                gid += 1
                branch_live = _and(current, cond)
                stack.append([gid, current, cond, branch_live, lineno, 0])
                groups[gid] = []
                current = branch_live
            elif d in ("elif", "elifdef", "elifndef", "else") and stack:
                top = stack[-1]
                groups[top[0]].append((top[4], lineno, top[3]))
                taken = top[2]
                if d == "else":
                    cond = True
                elif top[1] is False or taken is True:
                    cond = False  # not evaluated, as by the compiler
                else:
                    cond = self.cond({"elif": "if", "elifdef": "ifdef", "elifndef": "ifndef"}[d], rest)
                branch = _and(_not(taken), cond)
                top[2] = _or(taken, cond)
                top[3] = _and(top[1], branch)
                top[4] = lineno
                top[5] += 1
                current = top[3]
            elif d == "endif" and stack:
                top = stack.pop()
                groups[top[0]].append((top[4], lineno, top[3]))
                current = top[1]
            elif current is False:
                continue
            elif d == "define":
                env.define(line, current)
            elif d == "undef":
                env.undef(rest.split()[0] if rest else "", current)
            elif d == "include":
                self.include(rest, current, from_dir, depth)
        del base
        return live, groups, line_group

    def cond(self, d: str, rest: str) -> bool | None:
        env = self.env
        if d in ("ifdef", "ifndef"):
            name = rest.split()[0] if rest else ""
            m = env.macro(name)
            v = (1 if m.state is True else UNKNOWN) if isinstance(m, Macro) else (0 if m is False else UNKNOWN)
            if d == "ifndef" and v is not UNKNOWN:
                v = int(not v)
        else:
            v = evaluate(rest, env, env.ident)
        return UNKNOWN if v is UNKNOWN else bool(v)

    def include(self, rest: str, current, from_dir: Path | None, depth: int) -> None:
        m = re.match(r'([<"])([^>"]+)[>"]', rest)
        if not m:
            return  # a computed include (#include MACRO): what it names is not known
        name, quoted = m.group(2).strip(), m.group(1) == '"'
        ctx = self.ctx
        path = None
        if ctx.root is not None and from_dir is not None:
            path = inc.resolve(name, quoted, from_dir, ctx.include_dirs, ctx.root)
        if path is None:
            self.env.add_unresolved(name)
            return
        key = str(path)
        if key in self.visited or depth >= MAX_INCLUDE_DEPTH or len(self.visited) >= MAX_INCLUDED_FILES:
            return
        self.visited.add(key)
        got = _header_lines(path)
        if got is None:
            self.env.add_unresolved(name)
            return
        clean, lines = got
        self.included_text.append(clean)
        self.env.add_text(clean)
        saved = self.env.from_dir
        self.env.from_dir = path.parent
        self.walk(lines, current, path.parent, depth + 1, record=False)
        self.env.from_dir = saved


def preprocess(text: str, target: CompileTarget, extra_defines: dict[str, str] | None = None,
               context: Context | None = None, table: MacroTable | None = None) -> Preprocessed:
    """Which lines of ``text`` (comments already stripped or not) are compiled for ``target``.

    ``extra_defines`` are known -D flags on top of ``context.defines`` (other -D
    flags stay possible unless ``context.defines`` is given); ``table`` is the run's
    cuda_macros.toml (``macro_table``; the shipped one when not given)."""
    ctx = context or Context()
    env = _Env(target, ctx, table or _default_table())
    for name, body in (extra_defines or {}).items():
        env.defines[name] = Macro(name, None, str(body))
    env.add_text(text)
    walker = _Walker(env, ctx)
    if ctx.path is not None:
        walker.visited.add(str(ctx.path))
    from_dir = ctx.path.parent if ctx.path is not None else None
    live, groups, line_group = walker.walk(logical_lines(text), True, from_dir, 0, record=True)
    # A backslash-continued line holds several physical lines (an asm block written with
    # `\` at each line end): each of them is as live as the line it continues.
    keys = sorted(live)
    for a, b in zip(keys, keys[1:] + [text.count("\n") + 2]):
        for k in range(a + 1, b):
            live[k] = live[a]
            if a in line_group:
                line_group[k] = line_group[a]
    defines = {n: ((("(" + ", ".join(m.params) + ") ") if m.params is not None else "") + m.body)
               for n, m in env.defines.items() if isinstance(m, Macro)}
    return Preprocessed(live=live, defines=defines, groups=groups, line_group=line_group, env=env,
                        included_text=walker.included_text, table=env.table)


def _and(a, b):
    if a is False or b is False:
        return False
    if a is None or b is None:
        return None
    return True


def _or(a, b):
    if a is True or b is True:
        return True
    if a is None or b is None:
        return None
    return False


def _not(a):
    return None if a is None else (not a)
