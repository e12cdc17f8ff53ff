"""The generated API tables (``version_matrix/api/<package>.toml``).

One file per package, written by ``aicompat matrix build`` from the releases
it read (listed, with their archive hashes, under ``[meta]``). Releases are
referred to by their index in ``meta.releases``; a *range* string such as
``"0-4,7"`` lists indices. Per module::

    [module."torch.nn.attention"]
    in = "8-27"          # releases that have the module
    open = ""            # releases whose namespace a static read cannot close
    names = '''
    sdpa_kernel 8-13 f (backends)
    sdpa_kernel 14-27 f (backends, set_priority=)
    '''
    deprecated = '''
    name RANGES message
    '''
    raises = '''       # a stub that only raises (torch.symeig in 2.1): exception, replacements, message
    symeig 2-9 RuntimeError torch.linalg.eigvalsh,torch.linalg.eigh This function was deprecated ...
    '''
    unsure = '''       # releases a name was put in on no evidence (between two seen at run time)
    name RANGES
    '''
    init = '''         # classes whose __init__ a decorator wrote from their fields (dataclasses)
    name RANGES DECORATOR
    '''

A ``[module."pkg.mod.Class"]`` with ``class = true`` is the namespace of a
class (an enum's members: ``transformer_engine.common.recipe.Format``), read
where the class is defined; ``in`` lists the releases that define it.

A name line is ``NAME RANGES KIND [SIGNATURES]``: kind ``f`` function,
``b`` C-bound function (declared in an extension's stub), ``c`` class, ``m`` module, ``a`` other attribute; signatures are in
parentheses, ``|``-separated for overloads, in the notation of
:func:`aicompat.matrixbuild.apiscan.signature`; none means unknown. One string per module
rather than one TOML key per name: tomllib then parses the file in
milliseconds instead of half a second, and a diff still shows one line per
change. Writing is deterministic: same releases in, same bytes out.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import cast

from packaging.version import InvalidVersion, Version

from ..base.errors import MatrixError
from ..base.toml_compat import tomllib
from .prebuilt import load_toml


# The namespace of one module in one release, as the tables store it (the builder, matrixbuild/apiscan.py,
# makes them; lint time only reads them).
@dataclass(frozen=True)
class Sym:
    kind: str  # "f" function, "b" C-bound function, "c" class, "m" module, "a" other attribute
    sigs: tuple[str, ...] | None = None  # None: not callable or signature unknown
    deprecated: str | None = None
    # the decorator that wrote a class's __init__ from its fields (``pydantic.dataclasses.dataclass``):
    # what it does with a keyword it has no field for is its own (api_hints.toml [generated_init])
    init: str | None = None
    # a function whose body only raises: (exception class, its message's first line, the names
    # the message says to use instead); the name exists, every call fails
    raises: tuple[str, str, tuple[str, ...]] | None = None

    def key(self) -> tuple:
        return (self.kind, self.sigs, self.deprecated, self.init, self.raises)


@dataclass
class Namespace:
    names: dict[str, Sym] = field(default_factory=dict)
    open: bool = False  # names may exist that a static read cannot see
    all: list[str] | None = None  # a literal __all__, if the module has one
    lazy: frozenset[str] | None = None  # child modules a bare `import <root>` does not load (run time only)
    # names put in without evidence for this release: one introspected neighbour showed them, and no
    # static reading of the releases between says when they came or went (introspection.between)
    unsure: frozenset[str] = frozenset()
    is_class: bool = False  # the namespace of a class (its members), not of a module


# -- ranges ------------------------------------------------------------------------
def encode_ranges(indices: list[int]) -> str:
    out: list[str] = []
    start = prev = None
    for i in sorted(indices):
        if start is None:
            start = prev = i
        elif i == cast(int, prev) + 1:  # set together with start
            prev = i
        else:
            out.append(f"{start}" if start == prev else f"{start}-{prev}")
            start = prev = i
    if start is not None:
        out.append(f"{start}" if start == prev else f"{start}-{prev}")
    return ",".join(out)


def decode_ranges(text: str) -> frozenset[int]:
    out: set[int] = set()
    for part in text.split(","):
        part = part.strip()
        if not part:
            continue
        a, _, b = part.partition("-")
        out.update(range(int(a), int(b or a) + 1))
    return frozenset(out)


# -- writing -------------------------------------------------------------------------
def _q(text: str) -> str:
    """A TOML basic string."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def encode(package: str, releases: list[str], snapshots: list[dict[str, Namespace | None]],
           files: list[str], command: str, note: str = "", runtime: list[str] | None = None) -> str:
    """TOML text for one package: ``snapshots[i]`` maps module -> namespace in ``releases[i]``."""
    modules = sorted({m for snap in snapshots for m in snap})
    lines = [
        f"# Generated by `{command}`; do not edit by hand (see version_matrix/README.md).",
        "[meta]",
        f"package = {_q(package)}",
        "releases = [" + ", ".join(_q(r) for r in releases) + "]",
        "files = [",
        *[f"    {_q(f)}," for f in files],
        "]",
        f"command = {_q(command)}",
        "source = " + _q("read statically (ast) from the archives listed in files; where runtime lists a release, "
                         "its names and signatures as that release showed them at run time"),
    ]
    if note:
        lines.append(f"note = {_q(note)}")
    if runtime:
        lines += ["runtime = [", *[f"    {_q(r)}," for r in runtime], "]"]
    for mod in modules:
        present = [i for i, snap in enumerate(snapshots) if snap.get(mod) is not None]
        # present: the releases whose namespace for mod is not None
        open_ = [i for i in present if cast(Namespace, snapshots[i][mod]).open]
        lines += ["", f"[module.{_q(mod)}]", f"in = {_q(encode_ranges(present))}"]
        if any(cast(Namespace, snapshots[i][mod]).is_class for i in present):
            lines.append("class = true")
        if open_:
            lines.append(f"open = {_q(encode_ranges(open_))}")
        names = sorted({n for i in present for n in cast(Namespace, snapshots[i][mod]).names})
        entries: list[str] = []
        deprecated: list[str] = []
        generated: list[str] = []
        raises: list[str] = []
        for name in names:
            by_value: dict[tuple, list[int]] = {}
            by_msg: dict[str, list[int]] = {}
            by_init: dict[str, list[int]] = {}
            by_raise: dict[tuple, list[int]] = {}
            for i in present:
                sym = cast(Namespace, snapshots[i][mod]).names.get(name)
                if sym is None:
                    continue
                by_value.setdefault((sym.kind, sym.sigs), []).append(i)
                if sym.deprecated:
                    by_msg.setdefault(sym.deprecated, []).append(i)
                if sym.init:
                    by_init.setdefault(sym.init, []).append(i)
                if sym.raises:
                    by_raise.setdefault(sym.raises, []).append(i)
            for (kind, sigs), idx in sorted(by_value.items(), key=lambda kv: kv[1][0]):
                entries.append(_entry(name, encode_ranges(idx), kind, sigs))
            for msg, idx in sorted(by_msg.items(), key=lambda kv: kv[1][0]):
                deprecated.append(f"{name} {encode_ranges(idx)} {msg}")
            for deco, idx in sorted(by_init.items(), key=lambda kv: kv[1][0]):
                generated.append(f"{name} {encode_ranges(idx)} {deco}")
            for (exc, msg, use), idx in sorted(by_raise.items(), key=lambda kv: kv[1][0]):
                raises.append(f"{name} {encode_ranges(idx)} {exc} {','.join(use) or '-'} {msg}")
        lines.append("names = " + _block(entries))
        if deprecated:
            lines.append("deprecated = " + _block(deprecated))
        if generated:
            lines.append("init = " + _block(generated))
        if raises:
            lines.append("raises = " + _block(raises))
        lazy: dict[str, list[int]] = {}
        for i in present:
            for n in cast(Namespace, snapshots[i][mod]).lazy or ():
                lazy.setdefault(n, []).append(i)
        if lazy:
            lines.append("lazy = " + _block([f"{n} {encode_ranges(idx)}" for n, idx in sorted(lazy.items())]))
        unsure: dict[str, list[int]] = {}
        for i in present:
            for n in cast(Namespace, snapshots[i][mod]).unsure:
                unsure.setdefault(n, []).append(i)
        if unsure:
            lines.append("unsure = " + _block([f"{n} {encode_ranges(idx)}" for n, idx in sorted(unsure.items())]))
    return "\n".join(lines) + "\n"


def _entry(name: str, ranges: str, kind: str, sigs: tuple[str, ...] | None) -> str:
    if sigs is None:
        return f"{name} {ranges} {kind}"
    return f"{name} {ranges} {kind} " + " | ".join(f"({s})" for s in sigs)


def _block(lines: list[str]) -> str:
    """A TOML multi-line string holding one entry per line."""
    text = "\n".join(" ".join(line.split("\n")) for line in lines)
    if "'''" not in text:
        return "'''\n" + text + "\n'''"
    return '"""\n' + text.replace("\\", "\\\\").replace('"', '\\"') + '\n"""'



# -- reading -------------------------------------------------------------------------
@dataclass
class Param:
    name: str
    kind: str  # "posonly", "pos", "kwonly", "var", "varkw"
    default: bool


@dataclass(frozen=True)
class Signature:
    text: str

    @property
    def params(self) -> list[Param]:
        return _params(self.text)


@lru_cache(maxsize=4096)
def _params(text: str) -> list[Param]:
    out: list[Param] = []
    if not text.strip():
        return out
    items = [t.strip() for t in text.split(",")]
    kind = "pos"
    if "/" in items:
        cut = items.index("/")
        for t in items[:cut]:
            out.append(Param(t.rstrip("="), "posonly", t.endswith("=")))
        items = items[cut + 1:]
    for t in items:
        if t == "*":
            kind = "kwonly"
        elif t.startswith("**"):
            out.append(Param(t[2:], "varkw", True))
        elif t.startswith("*"):
            out.append(Param(t[1:], "var", True))
            kind = "kwonly"
        else:
            out.append(Param(t.rstrip("="), kind, t.endswith("=")))
    return out


@dataclass
class ModuleApi:
    present: frozenset[int]
    open: frozenset[int]
    raw_names: str = ""
    raw_deprecated: str = ""
    raw_lazy: str = ""  # child modules a bare import of the package does not load, per release
    raw_unsure: str = ""  # releases a name is in on no evidence (introspection.between)
    raw_init: str = ""  # classes whose __init__ a decorator wrote (dataclasses), per release
    is_class: bool = False  # a class's namespace (an enum's members)
    raw_raises: str = ""  # stubs that only raise, per release
    _names: dict[str, list] | None = None
    _deprecated: dict[str, list] | None = None

    def _decode(self) -> None:
        names: dict[str, list] = {}
        for line in self.raw_names.splitlines():
            if line.strip():
                name, rng, rest = line.split(" ", 2)
                names.setdefault(name, []).append((rng, rest))
        self._names = names
        dep: dict[str, list] = {}
        for line in self.raw_deprecated.splitlines():
            if line.strip():
                name, rng, msg = line.split(" ", 2)
                dep.setdefault(name, []).append((decode_ranges(rng), msg))
        self._deprecated = dep

    def entries(self, name: str):
        """``[(releases, kind, signatures or None)]`` for ``name``, or None if never bound."""
        if self._names is None:
            self._decode()
        assert self._names is not None  # _decode sets it
        raw = self._names.get(name)
        if raw is None:
            return None
        if raw and isinstance(raw[0][0], str):
            raw[:] = [_decode_entry(rng, rest) for rng, rest in raw]
        return raw

    def deprecations(self, name: str) -> list[tuple[frozenset[int], str]]:
        if self._deprecated is None:
            self._decode()
        assert self._deprecated is not None  # _decode sets it
        return self._deprecated.get(name, [])

    def raises(self, name: str) -> list[tuple[frozenset[int], str, tuple[str, ...], str]]:
        """``[(releases, exception, names to use instead, message)]``: the releases in which
        ``name`` is a stub that raises when called."""
        out = []
        for line in self.raw_raises.splitlines():
            if line.startswith(name + " "):
                _, rng, exc, use, msg = line.split(" ", 4)
                out.append((decode_ranges(rng), exc, tuple(u for u in use.split(",") if u != "-"), msg))
        return out

    def lazy(self, name: str) -> frozenset[int]:
        """Releases (seen at run time) in which ``import <package>`` leaves child module ``name`` unloaded."""
        for line in self.raw_lazy.splitlines():
            n, _, rng = line.strip().partition(" ")
            if n == name:
                return decode_ranges(rng)
        return frozenset()

    def unsure(self, name: str) -> frozenset[int]:
        """Releases in which ``name`` is listed on no evidence: one introspected neighbour showed
        it and no static reading says when it came or went."""
        for line in self.raw_unsure.splitlines():
            n, _, rng = line.strip().partition(" ")
            if n == name:
                return decode_ranges(rng)
        return frozenset()

    def init_generator(self, name: str, indices) -> str | None:
        """The decorator that wrote ``name``'s ``__init__`` in one of ``indices`` (a dataclass's), or None."""
        for line in self.raw_init.splitlines():
            parts = line.split()
            if len(parts) == 3 and parts[0] == name and decode_ranges(parts[1]) & set(indices):
                return parts[2]
        return None

    def all_names(self) -> list[str]:
        if self._names is None:
            self._decode()
        assert self._names is not None  # _decode sets it
        return list(self._names)


def _decode_entry(rng: str, rest: str):
    kind, _, sigs_text = rest.partition(" ")
    sigs = None
    if sigs_text:
        sigs = tuple(Signature(s.strip()[1:-1]) for s in sigs_text.split(" | "))
    return decode_ranges(rng), kind, sigs


@dataclass
class PackageApi:
    package: str
    releases: list[Version]
    labels: list[str]
    modules: dict[str, ModuleApi]
    files: list[str]

    def index_of(self, version: Version) -> int | None:
        try:
            return self.releases.index(version)
        except ValueError:
            return None

    def module(self, name: str) -> ModuleApi | None:
        return self.modules.get(name)

    def label(self, indices) -> str:
        return release_label(self.labels, indices)


def release_label(labels: list[str], indices) -> str:
    """``2.3.0–2.5.1`` style text for a set of release indices (contiguous runs)."""
    parts = []
    for run in encode_ranges(list(indices)).split(","):
        if not run:
            continue
        a, _, b = run.partition("-")
        a_l = labels[int(a)]
        parts.append(a_l if not b else f"{a_l}–{labels[int(b)]}")
    return ", ".join(parts)


def load_package(path: Path) -> PackageApi:
    try:
        data = load_toml(path)
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise MatrixError(f"version_matrix/api/{path.name}: {exc}") from None
    meta = data.get("meta")
    if not isinstance(meta, dict) or not isinstance(meta.get("releases"), list) or not meta.get("files"):
        raise MatrixError(f"version_matrix/api/{path.name}: [meta] needs releases and files (the provenance)")
    try:
        releases = [Version(r) for r in meta["releases"]]
    except InvalidVersion as exc:
        raise MatrixError(f"version_matrix/api/{path.name}: {exc}") from None
    modules = {}
    for name, m in data.get("module", {}).items():
        modules[name] = ModuleApi(present=decode_ranges(m.get("in", "")), open=decode_ranges(m.get("open", "")),
                                  raw_names=m.get("names", ""), raw_deprecated=m.get("deprecated", ""),
                                  raw_lazy=m.get("lazy", ""), raw_unsure=m.get("unsure", ""),
                                  raw_init=m.get("init", ""), is_class=bool(m.get("class", False)),
                                  raw_raises=m.get("raises", ""))
    return PackageApi(meta.get("package", path.stem), releases, list(meta["releases"]), modules, list(meta["files"]))
