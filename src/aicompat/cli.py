"""``aicompat lint | rules | explain``. Exit codes: 0 clean, 1 findings,
2 usage or configuration error, 3 incomplete (aicompat failed on a file or
ran out of time on it, or failed as a whole: one line on stderr), 130 after
Ctrl-C and 143 after SIGTERM (workers stopped, no traceback)."""

from __future__ import annotations

import argparse
import difflib
import os
import signal
import sys
from pathlib import Path

# Only what --version, --help, `rules` and `explain` need is imported here: a lint imports the
# engine, the rules, LibCST and the matrix when it starts (_lint), so they cost nothing elsewhere.
from . import __version__
from .base.data import data_dir
from .base.errors import ConfigError, MatrixError
from .report.formatters import FORMATTERS, location, printable, printable_path, show_fixes, statistics, summary
from .run import own_memory
from .run.defaults import CACHE_DIR, MAX_FILE_SIZE_MB, MAX_TIMEOUT

# Seconds per file: the largest module in torch (1.4 MB) takes ~15 s to parse
# on a busy 2-CPU VM; files over --max-file-size (2 MB) are not parsed at all (parallel.too_large).
DEFAULT_TIMEOUT = 60.0
INCOMPLETE = {"AIC000", "AIC002"}  # internal error, timeout


def _codes(values: list[str] | None) -> list[str]:
    out: list[str] = []
    for v in values or []:
        out.extend(c.strip().upper() for c in v.split(",") if c.strip())
    return out


def _positive_int(text: str) -> int:
    try:
        n = int(text)
    except ValueError:
        n = 0
    if n < 1:
        raise argparse.ArgumentTypeError(f"expected a whole number >= 1, got {text!r}")
    return n


def _positive_float(text: str) -> float:
    try:
        x = float(text)
    except ValueError:
        x = 0.0
    if not 0 < x <= MAX_TIMEOUT:  # also nan, inf
        raise argparse.ArgumentTypeError(f"expected seconds > 0 and <= {MAX_TIMEOUT:g}, got {text!r}")
    return x


def _megabytes(text: str) -> int:
    try:
        x = float(text)
    except ValueError:
        x = 0.0
    if not 0 < x <= MAX_FILE_SIZE_MB:  # also nan, inf
        raise argparse.ArgumentTypeError(f"expected megabytes > 0 and <= {MAX_FILE_SIZE_MB:g}, got {text!r}")
    return int(x * 1_000_000)


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="aicompat", description="Will this PyTorch/CUDA code work on your GPUs and library versions?")
    p.add_argument("--version", action="version", version=f"aicompat {__version__}")
    sub = p.add_subparsers(dest="command", required=True)

    # The flags of a lint, shared by ``lint`` and ``demo`` (the bundled demo, linted from anywhere).
    lint = argparse.ArgumentParser(add_help=False)
    lint.add_argument("--stdin-filename", metavar="PATH",
                      help="read the source from stdin (with no paths, or '-'); PATH names it in messages, for config "
                           "lookup and the file type")
    lint.add_argument("--statistics", action="store_true",
                      help="print only the number of findings per rule and how many --fix rewrites (machine formats: "
                           "the document on stdout, the counts on stderr)")
    lint.add_argument("--show-fixes", action="store_true",
                      help="list what --fix would write for each fixable finding ([*] in the text output)")
    lint.add_argument("--fix", action="store_true",
                      help="rewrite Python files with the fixes aicompat can make (TORCH_CUDA_ARCH_LIST literals: one "
                           "entry per fleet arch, the newest with +PTX; deprecated calls), then report what is left; "
                           "stdin, notebooks, Dockerfiles and shell scripts are not rewritten")
    lint.add_argument("--diff", action="store_true",
                      help="print --fix's changes as a unified diff; change nothing (control and format characters "
                           "of the source other than tab, such as terminal escapes, are shown as \\x1b escapes: "
                           "patch applies the diff except where a line holds one)")
    lint.add_argument("--write-baseline", metavar="FILE", help="record today's findings in FILE and exit 0")
    lint.add_argument("--baseline", metavar="FILE", help="report only findings that are not in FILE")
    lint.add_argument("--show-suppressed", action="store_true",
                      help="also list findings silenced by noqa/ignore comments or the baseline")
    lint.add_argument("--gpu", action="append", metavar="GPU",
                      help="fleet members: an arch (sm_90) or a GPU name (H100); comma-separated or repeated "
                           "(--gpu A100,H100); 'auto' reads nvidia-smi")
    lint.add_argument("--python", metavar="X.Y", help="target Python version")
    lint.add_argument("--pin", action="append", metavar="REQ", help="package pin, e.g. torch==2.4.0 or 'torch>=2.1,<2.4'; repeatable")
    lint.add_argument("--cuda", metavar="X.Y", help="CUDA toolkit version")
    lint.add_argument("--no-config", action="store_true", help="ignore pyproject.toml and requirements files")
    lint.add_argument("--no-respect-gitignore", action="store_true",
                      help="also walk what .gitignore files ignore (by default, in a git work tree, they are "
                           "skipped as ruff skips them; a file named on the command line is always checked)")
    lint.add_argument("--cuda-verify", action="store_true", default=None,
                      help="exact mode: compile each CUDA source AIC301 finds (load_inline, CuPy, PyCUDA, NVRTC, "
                           ".cu files) with the local nvcc for each target its build produces (device code only, "
                           "never run; results cached); nvcc's verdict replaces the static one "
                           "(also AICOMPAT_CUDA_VERIFY=1; never from the checked tree's config)")
    lint.add_argument("--format", choices=sorted(FORMATTERS), default="text",
                      help="output format (default: text; json and sarif are one document on stdout, github writes "
                           "workflow annotations)")
    lint.add_argument("--select", action="append", metavar="CODES", help="only these codes or prefixes (comma-separated)")
    lint.add_argument("--extend-select", action="append", metavar="CODES",
                      help="add these codes or prefixes to the selection (comma-separated); opt-in codes such as "
                           "AIC004 unused-suppression run only where named here or in --select")
    lint.add_argument("--ignore", action="append", metavar="CODES", help="skip these codes or prefixes (comma-separated)")
    lint.add_argument("--exit-zero", action="store_true", help="exit 0 even when there are findings")
    lint.add_argument("--no-prefilter", action="store_true", help=argparse.SUPPRESS)
    lint.add_argument("-j", "--jobs", type=_positive_int, metavar="N",
                      help="worker processes (default: one per CPU; 1 runs in this process)")
    lint.add_argument("--timeout", type=_positive_float, metavar="SECONDS",
                      help=f"time limit per file in CPU seconds (the analysis's own, whatever else runs; a wall-clock "
                           f"cap of 10 times it is the last resort), reported as AIC002 limit-exceeded "
                           f"(default: {DEFAULT_TIMEOUT:g})")
    lint.add_argument("--max-file-size", type=_megabytes, metavar="MB",
                      help="size limit per file in megabytes, reported as AIC002 limit-exceeded (default: 2; a "
                           "notebook's limit is on its code, its file may be ten times it)")
    lint.add_argument("--allow-incomplete", action="store_true", default=None,
                      help="AIC000/AIC002 (a file aicompat could not check) are still reported but do not make "
                           "the exit status 3 (also [tool.aicompat] allow-incomplete = true)")
    lint.add_argument("--cache-dir", metavar="DIR",
                      help=f"where to keep results of unchanged files (default: {CACHE_DIR} next to pyproject.toml, "
                           "else in the current folder; or $AICOMPAT_CACHE_DIR)")
    lint.add_argument("--no-cache", action="store_true", help="neither read nor write the cache")
    lint.add_argument("-v", "--verbose", action="store_true", help="say which files were skipped and why, how many processes parsed, what the cache held")

    checks = sub.add_parser("lint", help="check files and folders", parents=[lint])
    checks.add_argument("paths", nargs="*", help="files or folders (default: ., or standard input with "
                        "--stdin-filename); '-' reads standard input")
    sub.add_parser("demo", parents=[lint],
                   help="lint the demo that ships with aicompat (fixtures/demo), from any folder; exits 1, since "
                        "the demo has findings")

    mx = sub.add_parser("matrix", help="maintain the version matrix")
    mxs = mx.add_subparsers(dest="matrix_command", required=True)
    mb = mxs.add_parser("build", help="regenerate version_matrix/api/PACKAGE.toml from the package's releases")
    mb.add_argument("package", help="torch or flash-attn")
    mb.add_argument("--versions", help="comma-separated releases (default: every release in releases.toml)")
    mb.add_argument("--archives", default=".aicompat_releases",
                    help="folder for downloaded wheels/sdists; archives already there are reused")
    mb.add_argument("--out", help="output file (default: version_matrix/api/PACKAGE.toml)")
    mb.add_argument("--git", metavar="REPO", help="read release tags from this git checkout where they exist "
                    "(flash-attn: Dao-AILab/flash-attention); pip download otherwise")
    mb.add_argument("--introspect", metavar="DIR", help="stored runtime introspections (tools/torch_introspect.py); "
                    "where a release has one the runtime decides (default: version_matrix/introspect)")

    sub.add_parser("rules", help="list the rules")
    ex = sub.add_parser("explain", help="explain a rule")
    ex.add_argument("code", help="a rule code (AIC102) or name (fp8-unsupported)")
    return p


class Terminated(KeyboardInterrupt):
    """SIGTERM, raised in the main thread so the workers are stopped on the way out."""


def _on_sigterm(signum, frame):
    raise Terminated()


def _tolerant_output() -> None:
    """A file name that is not valid UTF-8 (kept as surrogates) must not end
    the run when stdout/stderr are strict (a C locale, a pipe)."""
    for stream in (sys.stdout, sys.stderr):
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None:
            try:
                reconfigure(errors="backslashreplace")
            except (ValueError, OSError):
                pass


def _parse(argv: list[str] | None) -> argparse.Namespace:
    """argparse's parse, but an unknown flag is refused by its subcommand (its usage, not the
    top level's) with the nearest flag it has: ``--gpus`` -> did you mean --gpu?"""
    parser = build_parser()
    args, extra = parser.parse_known_args(argv)
    if extra:
        sub = _subparser(parser, getattr(args, "command", None))
        flags = [f for a in sub._actions for f in a.option_strings]
        hint = ""
        for word in extra:
            if word.startswith("-"):
                near = difflib.get_close_matches(word.split("=", 1)[0], flags, n=1, cutoff=0.6)
                if near:
                    hint = f" (did you mean {near[0]}?)"
                    break
        sub.error(f"unrecognized arguments: {' '.join(extra)}{hint}")
    return args


def _subparser(parser: argparse.ArgumentParser, command: str | None) -> argparse.ArgumentParser:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction) and command in action.choices:
            return action.choices[command]
    return parser


def main(argv: list[str] | None = None) -> int:
    args = _parse(argv)
    _tolerant_output()
    previous = None
    if threading_main():
        previous = signal.signal(signal.SIGTERM, _on_sigterm)
    try:
        return _main(args)
    except Terminated:
        return 143
    except KeyboardInterrupt:
        return 130
    except RecursionError:
        print("aicompat: error: crashed: nesting too deep (RecursionError); the run is incomplete", file=sys.stderr)
        return 3
    except MemoryError:
        # aicompat's own limit (limit_own_memory), or the one it was given: one line, never a traceback.
        own = own_memory.own_memory_limit()
        if own:
            print(f"aicompat: error: out of memory: the run needed more than the {own / 2**30:g} GiB memory limit "
                  "of aicompat's own process; the run is incomplete: check fewer files at a time, or raise "
                  "--max-file-size, which raises the limit", file=sys.stderr)
        else:
            print("aicompat: error: out of memory (the process's limit, ulimit -v, or the machine's); the run is "
                  "incomplete: check fewer files at a time, or raise the limit", file=sys.stderr)
        return 3
    except Exception as exc:  # a crash is one line and exit 3, never a traceback and exit 1
        if os.environ.get("AICOMPAT_DEBUG"):
            raise
        print(f"aicompat: error: crashed: {type(exc).__name__}: {printable(' '.join(str(exc).split())[:500])}; "
              "the run is incomplete", file=sys.stderr)
        return 3
    finally:
        own_memory.restore_own_memory()
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)


def _peak_memory() -> tuple[float, float] | None:
    """Peak resident memory in MB of this process and of its largest finished child
    (a worker), from getrusage; None where it is not available (Windows)."""
    try:
        import resource
    except ImportError:
        return None
    scale = 1 / 1024 if sys.platform != "darwin" else 1 / 2**20  # KiB on Linux, bytes on macOS
    return (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * scale,
            resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * scale)


def threading_main() -> bool:
    import threading

    return threading.current_thread() is threading.main_thread()


def _main(args) -> int:
    try:
        if args.command == "rules":
            return _rules()
        if args.command == "explain":
            return _explain(args.code)
        if args.command == "demo":
            return _demo(args)
        if args.command == "matrix":
            from .matrixbuild.build import main as build_main

            return build_main(args)
        return _lint(args)
    except (ConfigError, MatrixError) as exc:
        # One line, escaped: a message may hold a name from the checked tree (or a file named after one).
        print(f"aicompat: error: {printable(' '.join(str(exc).split()))}", file=sys.stderr)
        return 2


def _demo(args) -> int:
    """``aicompat demo``: the bundled fixtures/demo, linted as ``aicompat lint fixtures/demo`` from
    the folder holding it (so it prints the README's paths), without a config or a cache: the
    demo may lie inside an installed package, which the run must not write into."""
    for flag, on in (("--fix", args.fix), ("--diff", args.diff), ("--write-baseline", args.write_baseline)):
        if on:
            raise ConfigError(f"demo: {flag} is not offered: the demo is aicompat's own, never rewritten; copy "
                              "it and run aicompat lint on the copy")
    demo = data_dir("fixtures/demo")
    args.paths = ["fixtures/demo"]
    args.stdin_filename = None
    args.no_config = True
    args.no_cache = True
    here = os.getcwd()
    os.chdir(demo.parent.parent)
    try:
        return _lint(args)
    finally:
        os.chdir(here)


def _lint(args) -> int:
    from .fs.confine import tree_of
    from .matrix import default_matrix
    from .matrix.target import Target
    from .report import baseline
    from .report.fix import LeftAlone, fixed_source, unified_diff, write_fixed
    from .rules.registry import INFORMATIONAL, unknown_code
    from .run.api import run, with_run_options
    from .run.cache import describe
    from .run.config import build_settings
    from .run.parallel import MAX_FILE_BYTES, default_jobs, memory_limit

    matrix = default_matrix()
    if not args.paths:
        args.paths = ["-"] if args.stdin_filename else ["."]
    elif args.stdin_filename and args.paths != ["-"]:
        raise ConfigError("--stdin-filename names source read from standard input: give '-' or no paths, "
                          f"not {' '.join(printable(p) for p in args.paths)}")
    from_stdin = args.paths == ["-"]
    if from_stdin:
        start = Path(args.stdin_filename).parent if args.stdin_filename else Path.cwd()
    else:
        start = Path(args.paths[0]) if args.paths else Path.cwd()
    gpus = [g.strip() for v in args.gpu or [] for g in v.split(",") if g.strip()] or None  # --gpu A100,H100
    cli = Target(gpus=gpus, python=args.python, cuda=args.cuda, cuda_verify=args.cuda_verify or _verify_env())
    settings = build_settings(matrix, start=start, cli=cli, cli_pins=args.pin, no_config=args.no_config)
    if args.no_respect_gitignore:
        settings.respect_gitignore = False
    select, ignore, extend = _codes(args.select), _codes(args.ignore), _codes(args.extend_select)
    bad = unknown_code(select + ignore + extend)
    if bad is not None:
        raise ConfigError(f"--select/--extend-select/--ignore: unknown rule code {bad!r}")
    _no_ignoring_incomplete(ignore, "--ignore")
    _no_ignoring_incomplete([c.upper() for c in settings.ignore], f"{settings.config_file}: [tool.aicompat] ignore")
    # This process's own memory limit (run/parallel.py), undone when main() returns.
    own_memory.limit_own_memory(memory_limit(args.max_file_size or settings.max_bytes or MAX_FILE_BYTES))
    stdin = (sys.stdin.buffer.read(), args.stdin_filename or "-") if from_stdin else None
    opts = {
        "jobs": args.jobs or settings.jobs or default_jobs(),
        "timeout": args.timeout or settings.timeout or DEFAULT_TIMEOUT,
        "cache_dir": None if args.no_cache else _cache_dir(args, settings),
        "max_bytes": args.max_file_size or settings.max_bytes,
    }
    allow_incomplete = args.allow_incomplete or settings.allow_incomplete
    settings.target.verify = with_run_options(settings.target.verify, opts["timeout"], opts["cache_dir"])
    fixing = (args.fix or args.diff) and not from_stdin
    if from_stdin and (args.fix or args.diff):
        print(f"aicompat: {'--fix' if args.fix else '--diff'}: standard input is checked, never rewritten",
              file=sys.stderr)
    # A fix is applied only from a fresh check of the bytes --fix rewrites; the [*] markers,
    # --statistics and --show-fixes show the cached ones.
    result = run(args.paths, settings, matrix, select or None, ignore, prefilter=not args.no_prefilter, stdin=stdin,
                 isolate=True, fixes=bool(fixing), extend_select=extend, **opts)
    if result.missing:
        raise ConfigError(f"no such file or folder: {', '.join(result.missing)}")
    if fixing:
        changed = 0
        # --fix writes only under the paths it was given: a file the walk reached through a
        # link (repo/setup.py -> ../outside/setup.py) is checked, never rewritten.
        given = [os.path.realpath(p) for p in args.paths]
        for f in result.files:
            real = os.path.realpath(f.path)
            if not any(real == g or real.startswith(g.rstrip(os.sep) + os.sep) for g in given):
                continue
            edit = fixed_source(f.path, f.diagnostics, tree_of(f.path, result.root), f.digest)
            if edit is None:
                continue
            src, old, new = edit
            if args.diff:
                sys.stdout.write(unified_diff(printable(f.path), old, new))
            else:
                try:
                    if not write_fixed(src, new):
                        continue  # changed since it was checked: left as it is
                except OSError as exc:  # the file is left whole (fix.write_fixed)
                    print(f"aicompat: cannot fix {printable(f.path)}: {printable(str(exc.strerror or exc))}", file=sys.stderr)
                    continue
                except LeftAlone as exc:  # read-only or hard-linked: unchanged, the rest goes on
                    print(f"aicompat: --fix: left {printable(f.path)} as it is: {exc}", file=sys.stderr)
                    continue
            changed += 1
        _say_not_rewritten(result, "--fix" if args.fix else "--diff")
        if args.diff:
            if _incomplete(result) and not allow_incomplete:
                return 3  # a diff of the files that were checked is not all there is
            return 1 if changed else 0
        if changed:
            print(f"fixed {changed} file{'s' if changed != 1 else ''}", file=sys.stderr)
            result = run(args.paths, settings, matrix, select or None, ignore, prefilter=not args.no_prefilter,
                         isolate=True, extend_select=extend, **opts)
    if args.write_baseline:
        n = baseline.write(args.write_baseline, result.diagnostics,
                           baseline.root_for(args.write_baseline, settings.config_file))
        print(f"wrote {n} finding{'s' if n != 1 else ''} to {printable_path(args.write_baseline)}")
        if _incomplete(result):
            for d in result.diagnostics:
                if d.code in INCOMPLETE:
                    print(f"{location(d)}: {d.code} {printable(d.message)}", file=sys.stderr)
            return 3  # files aicompat could not check are not in the baseline
        return 0
    silenced = list(result.suppressed)
    if args.baseline:
        result.diagnostics, known = baseline.split(result.diagnostics, baseline.load(args.baseline),
                                                   baseline.root_for(args.baseline, settings.config_file))
        silenced += known
    if args.verbose:
        _echo_target(settings.target)
        for d in result.pruned:
            print(f"skipped folder {printable_path(d)}/: build/dist folders are not walked (name it to lint it)",
                  file=sys.stderr)
        for f in result.files:
            if f.skipped:
                print(f"skipped {printable_path(f.path)}: {printable(f.skipped)}", file=sys.stderr)
        cached = "off" if opts["cache_dir"] is None else \
            f"{result.cache_hits} unchanged files from {printable(str(opts['cache_dir']))}" + \
            describe(result.cache_misses, result.cache_unstored)
        for line in result.cache_details:
            print(f"cache miss {printable(line)}", file=sys.stderr)
        print(f"parsed on {result.workers} process{'es' if result.workers != 1 else ''}; cache: {cached}",
              file=sys.stderr)
        peaks = _peak_memory()
        if peaks:
            print(f"memory: peak RSS {peaks[0]:.0f} MB in this process, {peaks[1]:.0f} MB in the largest worker "
                  f"(or other process it started)" if peaks[1] else
                  f"memory: peak RSS {peaks[0]:.0f} MB in this process (no worker)", file=sys.stderr)
    chosen = select + extend + settings.select + settings.extend_select
    summ = summary(result.diagnostics, len(result.files), sum(f.parsed for f in result.files), len(silenced),
                   sum(1 for f in result.files if f.skipped),
                   sorted(c for c in INFORMATIONAL if not _fails(c, chosen)))
    # Machine formats stay one parseable document on stdout whatever the flags: extra text goes to stderr.
    extra = sys.stdout if args.format == "text" else sys.stderr
    if not (args.statistics and args.format == "text"):  # text --statistics: the counts only, as ruff
        sys.stdout.write(FORMATTERS[args.format](result.diagnostics, summ, settings.target,
                                                 settings.notes + (result.named_notes if args.verbose
                                                                   else result.notes)))
    if args.statistics:
        extra.write(statistics(result.diagnostics))
    if args.show_fixes:
        extra.write(show_fixes(result.diagnostics))
    if args.show_suppressed:
        for d in sorted(silenced, key=lambda x: x.sort_key()):
            print(f"suppressed: {location(d)}: {d.code} {printable(d.message)}", file=extra)
    if _incomplete(result) and not allow_incomplete:
        return 3  # the run is incomplete: aicompat failed or ran out of time on some file
    if any(_fails(d.code, chosen) for d in result.diagnostics) and not args.exit_zero:
        return 1
    return 0


def _fails(code: str, chosen: list[str]) -> bool:
    """Whether a finding of ``code`` fails the run: any but AIC000/AIC002 (exit 3's) and the
    informational codes (AIC204), which fail only where a selection names them or their family."""
    from .rules.registry import INFORMATIONAL

    if code in INCOMPLETE:
        return False
    if code in INFORMATIONAL:
        return any(len(c) > 3 and code.startswith(c.upper()) for c in chosen)
    return True


def _verify_env() -> bool | None:
    """AICOMPAT_CUDA_VERIFY=1 (or true/yes/on): exact mode, the user's own switch beside --cuda-verify."""
    v = os.environ.get("AICOMPAT_CUDA_VERIFY", "").strip().lower()
    if v in ("1", "true", "yes", "on"):
        return True
    if v in ("", "0", "false", "no", "off"):
        return None
    raise ConfigError(f"$AICOMPAT_CUDA_VERIFY: expected 1 or 0, got {printable(v)!r}")


def _say_not_rewritten(result, flag: str) -> None:
    """--fix rewrites Python files only: say so where a notebook, Dockerfile, shell script or
    CUDA file has findings, rather than leave them as they are in silence."""
    left = [f.path for f in result.files if not f.path.endswith((".py", ".pyi"))
            and any(d.code not in INCOMPLETE | {"AIC001"} for d in f.diagnostics)]
    if left:
        names = ", ".join(printable_path(p) for p in left[:5]) + (f" and {len(left) - 5} more" if len(left) > 5 else "")
        print(f"aicompat: {flag}: only Python files are fixed; the findings in {names} are left as they are",
              file=sys.stderr)


def _echo_target(target) -> None:
    """-v: where each part of the target came from, each pin with the file and line."""
    t = target.as_json()
    print(printable(f"target: python {t['python']['value']} ({t['python']['source']}); "
                    f"gpus {', '.join(m['arch'] for m in t['gpus']['members'])} ({t['gpus']['source']})"),
          file=sys.stderr)
    others = 0
    for name, pin in t["pins"].items():
        if not pin["releases"]:
            others += 1  # a package aicompat does not model: its pin changes nothing
            continue
        print(f"pin {printable(name)}{printable(pin['spec'])}: checked {', '.join(pin['releases'])}; "
              f"from {printable(pin['source'])}", file=sys.stderr)
    if others:
        print(f"{others} other pin{'s' if others != 1 else ''} of packages aicompat does not model", file=sys.stderr)


def _incomplete(result) -> bool:
    return any(d.code in INCOMPLETE for d in result.diagnostics)


def _no_ignoring_incomplete(codes: list[str], where: str) -> None:
    """AIC000/AIC002 say a file was not checked: ignoring them would make an incomplete
    run look clean, so they cannot be ignored (nor silenced by noqa or a baseline)."""
    for code in codes:
        if code in INCOMPLETE:
            raise ConfigError(f"{where}: {code} cannot be ignored (a file aicompat could not check would look "
                              "clean); raise --max-file-size or --timeout, or let the exit status pass with "
                              "--allow-incomplete")


def _cache_dir(args, settings) -> Path:
    path = _cache_dir_unchecked(args, settings)
    if "\x00" in str(path):
        where = ("--cache-dir" if args.cache_dir else "$AICOMPAT_CACHE_DIR" if os.environ.get("AICOMPAT_CACHE_DIR")
                 else f"{settings.config_file}: [tool.aicompat] cache-dir")
        raise ConfigError(f"{where}: a path cannot contain a NUL character")
    return path


def _cache_dir_unchecked(args, settings) -> Path:
    if args.cache_dir:
        return Path(args.cache_dir)
    if os.environ.get("AICOMPAT_CACHE_DIR"):
        return Path(os.environ["AICOMPAT_CACHE_DIR"])
    if settings.cache_dir is not None:
        return _inside_project(settings.cache_dir, settings.config_file)
    root = settings.config_file.parent if settings.config_file else Path.cwd()
    return root / CACHE_DIR


def _inside_project(cache_dir: Path, config_file: Path) -> Path:
    """A cache folder the project's own config names must be inside the project:
    a repository must not make aicompat write elsewhere. One outside it is given
    on the command line or in $AICOMPAT_CACHE_DIR."""
    from .fs.confine import within

    try:
        project = config_file.parent.resolve()
        inside = project in cache_dir.resolve().parents and within(cache_dir, project) is not None  # not in .git
    except (OSError, ValueError, RuntimeError):
        inside = False
    if not inside:
        raise ConfigError(f"{config_file}: [tool.aicompat] cache-dir {str(cache_dir)!r} is not inside the project "
                          f"({config_file.parent}); give a folder outside it with --cache-dir or AICOMPAT_CACHE_DIR")
    return cache_dir


def _rules() -> int:
    from .report.ruledocs import load_docs
    from .rules.registry import CODES, IMPLEMENTED

    docs = load_docs()
    for code, name in CODES.items():
        if code in IMPLEMENTED:
            d = docs.get(code)
            print(f"{code}  {name:<22} {d.summary.strip() if d else ''}")
        else:
            print(f"{code}  {name:<22} (planned)")
    return 0


def _explain(code: str) -> int:
    from .report.ruledocs import load_docs, render
    from .rules.registry import CODES, explains_facts, rule_class

    given = code
    by_name = {name: c for c, name in CODES.items()}  # `aicompat explain fp8-unsupported`, the name pylint shows
    code = by_name.get(code.strip().lower().removeprefix("aicompat-"), code.strip().upper())
    docs = load_docs()
    if code not in CODES:
        print(f"aicompat: error: unknown rule {given!r}; see 'aicompat rules'", file=sys.stderr)
        return 2
    if code not in docs:
        print(f"{code} {CODES[code]}: planned, not implemented yet")
        return 0
    facts = ""
    cls = rule_class(code) if explains_facts(code) else None  # that rule's module alone, and the matrix
    if cls is not None:
        from .matrix import default_matrix

        facts = cls.explain_facts(default_matrix())
    sys.stdout.write(render(docs[code], facts))
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
