"""The one path every integration uses:
bytes -> prefilter -> one parse -> rules -> diagnostics -> suppressions."""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, cast

import libcst as cst

from ..base.deep import cpython_ast
from ..base.diagnostics import Diagnostic
from ..core.engine import check_module, internal_error
from ..core.ruleapi import Rule
from ..cuda.session import CudaRun
from ..fs import deps
from ..fs.capped import MAX_FILE_BYTES
from ..fs.files import CUDA_SUFFIXES, is_build_file
from ..matrix import Matrix
from ..matrix.target import WORLD_PACKAGE, ResolvedTarget
from ..model.evaluate import UNKNOWN
from ..model.project import linted_tree
from ..rules import registry
from ..syntax.notebook import NotebookError, file_position, line_starts, locate, source_offsets, to_python
from ..syntax.suppress import IGNORE_FILE, Checks, apply
from . import cpu_limit

if TYPE_CHECKING:
    from ..matrix.api_tables import PackageApi

_WORLD_PREFIX = WORLD_PACKAGE + "."  # the names whose presence a world's release decides


def api_has(matrix: Matrix, qualname: str, version, package: str = WORLD_PACKAGE) -> bool | None:
    """``hasattr(torch.nn, "attention")`` in one release of the package a world carries
    (``WORLD_PACKAGE``, or another the world is asked under), from its generated API table."""
    from ..model import api_query as apiquery

    api = matrix.api(package) if version is not None else None
    i = api.index_of(version) if api else None
    # i is not None only with a table, so every use of api below has one
    where = apiquery.split(cast("PackageApi", api), qualname) if i is not None else None
    if where is None:
        return None
    module, rest = where
    if not rest:
        if "." not in module:
            return None
        module, name = module.rsplit(".", 1)
    elif len(rest) == 1:
        name = rest[0]
    else:
        return None
    found = apiquery.presence(cast("PackageApi", api), module, name, [i])
    return True if found.have else False if found.lack else None


def api_param(matrix: Matrix, qualname: str, param: str, version) -> bool | None:
    """``"param" in inspect.signature(f).parameters`` in one release of ``WORLD_PACKAGE``: whether the
    release's one signature of the function ``qualname`` names ``param`` (``*args`` /
    ``**kwargs`` count by their names, as in inspect), from the generated API table;
    None when the table has no single function signature for it there."""
    from ..model import api_query as apiquery

    api = matrix.api(WORLD_PACKAGE) if version is not None else None
    i = api.index_of(version) if api else None
    # i is not None only with a table, so every use of api below has one
    where = apiquery.split(cast("PackageApi", api), qualname) if i is not None else None
    if where is None or len(where[1]) != 1:
        return None
    m = cast("PackageApi", api).module(where[0])
    sigs = [sig for rng, kind, sigs in (m.entries(where[1][0]) if m else None) or () if i in rng and kind == "f"
            for sig in sigs or ()]
    if len(sigs) != 1:
        return None
    return any(p.name == param for p in sigs[0].params)


def selected(code: str, select: list[str], ignore: list[str]) -> bool:
    """Ruff-style prefix selection: ``AIC1`` selects AIC101, AIC102, ... An opt-in code
    (rules/codes.toml ``opt_in``) runs only where a selection names it whole."""
    if code in registry.OPT_IN:
        if code not in select:
            return False
    elif select and not any(code.startswith(s) for s in select):
        return False
    return not any(code.startswith(i) for i in ignore)


# The default size limit per file (--max-file-size; parallel.too_large says why).


def limit_result(display: str, reason: str) -> "FileResult":
    """AIC002: the file was not checked because it ran into a per-file limit."""
    res = FileResult(display)
    res.diagnostics.append(Diagnostic(display, 1, 1, 1, 1, "AIC002", "limit-exceeded", "error",
                                      f"not checked: {reason}; the run is incomplete", []))
    return res


@dataclass
class FileResult:
    path: str
    diagnostics: list[Diagnostic] = field(default_factory=list)
    suppressed: list[Diagnostic] = field(default_factory=list)
    parsed: bool = False
    skipped: str | None = None  # why the file was not checked
    reads: list[str] = field(default_factory=list)  # other files the result depends on
    notes: list[str] = field(default_factory=list)  # run-level notes rules left (Rule.notes)
    digest: str | None = None  # of the bytes checked, when the caller fixes (--fix re-verifies them)
    # What else the result was made from (fs/deps.py), for the cache: path -> digest of the bytes read,
    # and the (real path, real root) -> inside decisions of the confined readers.
    deps: dict[str, str] = field(default_factory=dict)
    decisions: dict[tuple[str, str], bool] = field(default_factory=dict)


class Linter:
    def __init__(self, target: ResolvedTarget, matrix: Matrix, select: list[str] | None = None,
                 ignore: list[str] | None = None, prefilter: bool = True, root: str | None = None) -> None:
        self.target = target
        self.root = root  # the project root: files the checked code names are read only inside it (fs/confine.py)
        self.matrix = matrix
        self.select = [s.upper() for s in select or []]
        self.ignore = [s.upper() for s in ignore or []]
        self.prefilter = prefilter
        self.max_bytes = MAX_FILE_BYTES  # a notebook's code over it is not parsed (AIC002)
        # Every registered rule provides context (hasattr facts, with-blocks, function
        # marks) even when deselected: guards must not depend on the selection.
        rules: list[Rule] = [cls(matrix) for cls in registry.RULE_CLASSES]
        self.providers: list = rules + [cls(matrix) for cls in registry.PROVIDERS]  # the shared facts' too
        for r in self.providers:
            r.target = target
        # This run's CUDA caches and exact mode's compiler (cuda/session.py): made here, handed
        # to the rules, stopped by close(); a second linter in the process starts afresh.
        self.cuda = CudaRun(target.verify)
        for r in rules:
            r.verifier = self.cuda.verifier
        self.rules: list[Rule] = [r for r in rules if selected(r.code, self.select, self.ignore)]
        self.parse_errors = selected("AIC001", self.select, self.ignore)
        # The prefilter must be a superset of what any rule reacts to, and of
        # what AIC001 is reported for: AIC001 fires only where rules could.
        patterns = sorted({p for cls in registry.RULE_CLASSES for p in cls.prefilter_patterns(target, matrix)})
        self._token_re = re.compile(b"|".join(patterns)) if patterns else None
        checks = (cls.prefilter_check(target, matrix) for cls in registry.RULE_CLASSES)
        self._checks = [c for c in checks if c is not None]
        self.known: set[str] = set()
        for r in self.rules:
            self.known |= r.known_names()
        self._attr_sources = [r for r in self.providers if hasattr(r, "attr_exists")]
        ran = {r.code for r in self.rules} | ({"AIC001"} if self.parse_errors else set())
        self.comment_checks = Checks(frozenset(registry.MESSAGE_NUMBERS), selected("AIC003", self.select, self.ignore),
                                     selected("AIC004", self.select, self.ignore), frozenset(ran))

    def attr_exists(self, qualname: str, world):
        """``hasattr`` of ``qualname`` in ``world``; ``"<f>(<param>)"`` asks whether
        function ``f`` takes a parameter named ``param`` there (libmodels/signatures.py)."""
        if qualname.endswith(")") and "(" in qualname:
            f, _, param = qualname[:-1].partition("(")
            got = api_param(self.matrix, f, param, world.torch) if f.startswith(_WORLD_PREFIX) else None
            return UNKNOWN if got is None else got
        if qualname.startswith(_WORLD_PREFIX):
            known = self.matrix.symbol_exists(qualname, world.torch)
            if known is not None:
                return known
            known = api_has(self.matrix, qualname, world.torch)
            if known is not None:
                return known
        elif world.releases:
            package = self.matrix.api_package(qualname)
            version = dict(world.releases).get(package) if package else None
            known = api_has(self.matrix, qualname, version, package) if package and version is not None else None
            if known is not None:
                return known
        for r in self._attr_sources:
            v = r.attr_exists(qualname, world)
            if v is not UNKNOWN:
                return v
        return UNKNOWN

    def relevant(self, data: bytes) -> bool:
        if self._token_re is not None and self._token_re.search(data) is not None:
            return True
        return any(check(data) for check in self._checks)

    def precheck(self, data: bytes, path: str) -> FileResult | None:
        """The result of a file that needs no parse (an ignore-file marker, or a
        Python file the prefilter rejects), else None. Cheap: a byte search."""
        if IGNORE_FILE.search(data):
            res = FileResult(path)
            res.skipped = "aicompat: ignore-file"
            return res
        if self.prefilter and not path.endswith((".ipynb", *CUDA_SUFFIXES)) and not is_build_file(path) \
                and not self.relevant(data):
            res = FileResult(path)
            res.skipped = "no token any rule reacts to"
            return res
        return None

    def close(self) -> None:
        """The end of the run: exact mode's compilers stopped, its private folder removed."""
        self.cuda.close()

    def lint_bytes(self, data: bytes, path: str) -> FileResult:
        with self.cuda.active(), deps.recording() as rec:
            res = self._lint_bytes(data, path)
        res.deps, res.decisions = dict(rec.reads), dict(rec.decisions)
        return res

    def _lint_bytes(self, data: bytes, path: str) -> FileResult:
        res = FileResult(path)
        if IGNORE_FILE.search(data):
            res.skipped = "aicompat: ignore-file"
            return res
        if path.endswith(".ipynb"):
            return self._lint_notebook(data, path, res)
        if path.endswith(CUDA_SUFFIXES):
            return self._lint_cuda(data, path, res)
        if is_build_file(path):
            return self._lint_build_file(data, path, res)
        relevant = self.relevant(data)
        if self.prefilter and not relevant:
            res.skipped = "no token any rule reacts to"
            return res
        if not self.rules and not self.parse_errors:
            return res
        refused = self._cpython_refuses(data, path)
        cpu_limit.check()
        if refused is not None:
            # Like any other syntax error: reported only where a rule could
            # have fired, so --no-prefilter reports what the prefilter does.
            if self.parse_errors and relevant:
                res.diagnostics.append(refused)
            return res
        try:
            module = linted_tree(path, data) or cst.parse_module(data)
        except cst.ParserSyntaxError as exc:
            newer = self._newer_syntax(path, data, exc)
            if newer is not None:
                res.diagnostics.append(newer)
            elif self.parse_errors and relevant:
                res.diagnostics.append(_syntax_diagnostic(path, data, exc))
            return res
        except (UnicodeDecodeError, LookupError, SyntaxError, ValueError) as exc:
            if self.parse_errors and relevant:
                res.diagnostics.append(_parse_error(path, 1, 1, f"cannot decode source: {exc}"))
            return res
        except RecursionError:
            if self.parse_errors and relevant:
                res.diagnostics.append(_parse_error(path, 1, 1, "nesting too deep to parse"))
            return res
        res.parsed = True
        cpu_limit.check()
        text = data.decode(module.encoding or "utf-8", "replace")
        if self.rules:  # with the prefilter on, irrelevant files returned above
            try:
                diags = check_module(path, module, self.rules, self.target, self.matrix, self.attr_exists, self.known,
                                     text, reads=res.reads, providers=self.providers, root=self.root)
            except RecursionError:
                diags = [internal_error(path, 1, 1, "nesting too deep to analyse; file skipped")]
            except Exception as exc:  # an engine bug must not end the run
                diags = [internal_error(path, 1, 1, f"{type(exc).__name__}: {exc}")]
            res.diagnostics, res.suppressed = apply(diags, text, path, self.comment_checks)
            self._take_notes(res)
        res.diagnostics.sort(key=Diagnostic.sort_key)
        return res

    def _take_notes(self, res: FileResult) -> None:
        for notes in [getattr(r, "notes", None) for r in self.rules] + [self.cuda.notes]:
            if notes:
                res.notes.extend(n for n in notes if n not in res.notes)
                notes.clear()

    def _cpython_refuses(self, data: bytes, path: str) -> Diagnostic | None:
        """CPython's parser first: it refuses in milliseconds what LibCST's native
        parser crashes on or takes minutes and gigabytes over (``y = `` and 10,000
        ``-``, deep brackets, long ``not``/``lambda``/``**`` chains, a 10,000-branch
        ``elif``), and costs a tenth of LibCST's parse. A file it refuses is one
        AIC001 with its message, unless the lines it stops at hold syntax newer
        than this interpreter, which LibCST may know (PEP 701 f-strings on 3.11)."""
        try:
            cpython_ast(data, path, ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)
        except SyntaxError as se:
            line = se.lineno or 1
            if _newer_than_running(self.providers, data, line):
                return None
            return _parse_error(path, line, se.offset or 1, se.msg)
        except (RecursionError, MemoryError) as exc:
            return _parse_error(path, 1, 1, f"nesting too deep to parse ({type(exc).__name__})")
        except SystemError:  # CPython 3.11 before 3.11.8 (gh-106905): it cannot say; LibCST decides
            return None
        except ValueError as exc:  # a NUL byte
            return _parse_error(path, 1, 1, str(exc))
        return None

    def _newer_syntax(self, path: str, data: bytes, exc: cst.ParserSyntaxError) -> Diagnostic | None:
        """An older LibCST cannot parse syntax newer than itself: a rule that can name
        the construct on the failing lines (``on_parse_error``) reports that instead
        of an unreadable file (AIC001)."""
        line = max(exc.raw_line, 1)
        for rule in self.rules:
            if not hasattr(rule, "on_parse_error"):
                continue
            f = rule.on_parse_error(data, exc.raw_line)
            if f is None:
                continue
            return Diagnostic(path, line, 1, line, 1, rule.code, rule.name, f.severity,
                              f"{f.message} (LibCST {_libcst_version()} could not parse the file, so nothing else "
                              f"in it was checked)", self.target.labels_for(f.archs) + list(f.extra_targets))
        return None

    def _lint_notebook(self, data: bytes, path: str, res: FileResult) -> FileResult:
        """Lint the code cells as one module; report cell numbers and cell lines."""
        try:
            src = to_python(data)
        except NotebookError as exc:
            res.diagnostics.append(_parse_error(path, 1, 1, str(exc)))
            return res
        code = src.code.encode("utf-8")
        if len(code) > self.max_bytes:  # the file's outputs do not count, its code does
            return limit_result(path, f"the notebook's code, {len(code) / 1e6:.3g} MB, is over the "
                                      f"{self.max_bytes / 1e6:.3g} MB limit per file (--max-file-size)")
        inner = self.lint_bytes(code, path + "#code")
        found = inner.diagnostics + inner.suppressed
        text = data.decode("utf-8", "replace") if found else ""
        offsets = source_offsets(text) if found else {}
        starts = line_starts(text) if found else []
        for d in found:
            d.path = path
            d.cell, d.cell_line = locate(src, d.line)
            start = file_position(text, starts, offsets, d.cell, d.cell_line, d.column)
            end_cell, end_line = locate(src, d.end_line)
            last = file_position(text, starts, offsets, end_cell, end_line, d.end_column - 1) \
                if d.end_column > 1 else None
            if start is not None:
                d.file_line, d.file_column = start
                # The end is exclusive: one past the finding's last character.
                d.file_end_line, d.file_end_column = (last[0], last[1] + 1) if last else start
        inner.path = path
        return inner

    def _lint_cuda(self, data: bytes, path: str, res: FileResult) -> FileResult:
        """.cu/.cuh/.ptx files: no Python parse, only the rules that read CUDA."""
        if b"\x00" in data:
            res.diagnostics.append(_parse_error(path, 1, 1, "binary data in a CUDA source file"))
            return res
        return self._lint_text(data, path, res, "check_cuda_file", "no selected rule reads CUDA")

    def _lint_build_file(self, data: bytes, path: str, res: FileResult) -> FileResult:
        """CMakeLists.txt, Dockerfiles and shell scripts: only their arch settings."""
        if b"\x00" in data or not self.relevant(data):
            res.skipped = "no arch setting to check"
            return res
        return self._lint_text(data, path, res, "check_build_file", "no arch setting to check")

    def _lint_text(self, data: bytes, path: str, res: FileResult, method: str, why_skipped: str) -> FileResult:
        """Run the rules that read a non-Python file through ``method`` (ruleapi.TextFinding each)."""
        rules = [r for r in self.rules if hasattr(r, method)]
        if not rules:
            res.skipped = why_skipped
            return res
        text = data.decode("utf-8", "replace")
        res.parsed = True
        diags = []
        for r in rules:
            try:
                # The file's real path (relative to the working directory, as given): the
                # CUDA rules look up its build; every build file they read goes into reads.
                found = getattr(r, method)(text, path, self.target, self.target.cuda, res.reads)
            except Exception as exc:  # a rule bug must not end the run
                diags.append(internal_error(path, 1, 1, f"rule {r.code} {r.name} failed: {type(exc).__name__}: {exc}"))
                continue
            for f in found:
                diags.append(Diagnostic(path, f.line, f.column, f.line, f.column, r.code, r.name, f.severity,
                                        f.message, self.target.labels_for(f.archs)))
        res.diagnostics, res.suppressed = apply(diags, text, path, self.comment_checks)
        res.diagnostics.sort(key=Diagnostic.sort_key)
        self._take_notes(res)
        return res

    def lint_path(self, path: Path, display: str) -> FileResult:
        try:
            data = path.read_bytes()
        except OSError as exc:
            return unreadable(display, exc)
        return self.lint_bytes(data, display)


def unreadable(display: str, exc: OSError, what: str = "file") -> FileResult:
    """A file that could not be read was not checked: AIC002, so the run is incomplete (exit 3)
    and no baseline, noqa, --ignore or --exit-zero makes it look clean (issue 25)."""
    return limit_result(display, f"cannot read {what}: {exc.strerror or exc}")


def _newer_than_running(providers, data: bytes, line: int) -> bool:
    """Do the lines around ``line`` hold syntax newer than this interpreter? Asked of the
    registered rules that know Python's syntax versions (the ``newer_syntax`` hook)."""
    import sys

    return any(r.newer_syntax(data, line, sys.version_info[:2]) for r in providers if hasattr(r, "newer_syntax"))


def _syntax_diagnostic(path: str, data: bytes, exc: cst.ParserSyntaxError) -> Diagnostic:
    """Prefer CPython's wording and position (what users know from tracebacks);
    fall back to LibCST's where CPython accepts the file (newer syntax)."""
    try:
        compile(data, path, "exec", ast.PyCF_ONLY_AST | ast.PyCF_ALLOW_TOP_LEVEL_AWAIT, dont_inherit=True)
    except SyntaxError as se:
        if se.lineno:
            return _parse_error(path, se.lineno, se.offset or 1, se.msg)
    except (ValueError, RecursionError, MemoryError):
        pass
    m = re.search(r"error at (\d+):(\d+)", exc.message)
    line, col = (int(m.group(1)), int(m.group(2)) + 1) if m else (exc.raw_line, exc.raw_column + 1)
    return _parse_error(path, line, col, exc.message.replace("parser error: ", ""))


def _libcst_version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("libcst")
    except PackageNotFoundError:
        return "(unknown version)"


def _parse_error(path: str, line: int, col: int, message: str) -> Diagnostic:
    msg = " ".join(str(message).split())
    return Diagnostic(path, max(line, 1), max(col, 1), max(line, 1), max(col, 1), "AIC001", "parse-error", "error",
                      f"cannot parse: {msg}", [])
