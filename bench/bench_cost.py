"""Cost of the engine and the rules against the LibCST parse, per file (issue 11).

    python bench/bench_cost.py                       # default file set, 3 repetitions
    python bench/bench_cost.py --reps 5 --sample 40 --json out.json
    python bench/bench_cost.py --json base.json      # then, after a change:
    python bench/bench_cost.py --check-against base.json
    python bench/bench_cost.py PATH...               # files or directories instead

Files: transformers' sources (an unpacked 4.57.6 wheel: --tf, default /tmp/tf/src/transformers,
else bench/.corpus/transformers-4.57.6 as bench_engine.py downloads it) and the installed torch's
sources: a fixed list of large, rule-relevant modules (modeling_utils.py, torch/nn/functional.py,
torch/_tensor.py, torch/nn/modules/*.py, ...) plus every --sample'th file of each corpus. Only
files that pass aicompat's prefilter count; the others are never parsed by aicompat.

In one process, per file and repetition, CPU time (time.process_time) of
  parse      libcst.parse_module
  engine     engine.analyse: module index, the one traversal, the rules, the value model
  positions  engine.diagnostics: positions of the findings (nothing when there are none), and the
             garbage collection the traversal deferred, which lands here
Medians over the repetitions per file; the ratio (engine + rules) / parse per file and in total
(sum of medians over sum of medians). Markdown on stdout; --json writes the numbers and every
file's diagnostics, and --check-against compares the diagnostics with such a file (exit 1 on any
difference), so an optimisation is shown to change no finding. Not run in CI.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

import libcst as cst

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "src"))

from aicompat.base.diagnostics import Diagnostic  # noqa: E402
from aicompat.core import engine  # noqa: E402
from aicompat.matrix import default_matrix  # noqa: E402
from aicompat.matrix.target import Target  # noqa: E402
from aicompat.run.config import build_settings  # noqa: E402
from aicompat.run.linter import Linter  # noqa: E402
from aicompat.syntax.suppress import apply  # noqa: E402

TF_NAMED = [
    "modeling_utils.py", "modeling_flash_attention_utils.py", "integrations/sdpa_attention.py",
    "integrations/flash_attention.py", "generation/utils.py", "trainer.py", "training_args.py",
    "utils/import_utils.py", "models/llama/modeling_llama.py", "models/deepseek_v3/modeling_deepseek_v3.py",
    "models/mixtral/modeling_mixtral.py", "quantizers/quantizer_bnb_4bit.py",
]
TORCH_NAMED = [
    "nn/functional.py", "_tensor.py", "cuda/__init__.py", "backends/cuda/__init__.py", "nn/attention/__init__.py",
    "utils/checkpoint.py", "amp/autocast_mode.py", "_inductor/utils.py",
]


def torch_root() -> Path | None:
    try:
        import torch
    except ImportError:
        return None
    return Path(os.path.dirname(torch.__file__))


def tf_root(given: str | None) -> Path | None:
    for cand in (given, "/tmp/tf/src/transformers", HERE / ".corpus" / "transformers-4.57.6" / "transformers"):
        if cand and Path(cand).is_dir():
            return Path(cand)
    return None


def default_files(tf: Path | None, torch: Path | None, sample: int) -> list[tuple[str, Path]]:
    out: dict[Path, str] = {}
    for label, root, named, globs in (("transformers", tf, TF_NAMED, []),
                                      ("torch", torch, TORCH_NAMED, ["nn/modules/*.py"])):
        if root is None:
            continue
        for rel in named:
            if (root / rel).is_file():
                out.setdefault(root / rel, f"{label}/{rel}")
        for g in globs:
            for f in sorted(root.glob(g)):
                out.setdefault(f, f"{label}/{f.relative_to(root)}")
        if sample:
            for f in sorted(root.rglob("*.py"))[::sample]:
                out.setdefault(f, f"{label}/{f.relative_to(root)}")
    return [(name, p) for p, name in out.items()]


def given_files(paths: list[str]) -> list[tuple[str, Path]]:
    out = []
    for p in map(Path, paths):
        for f in sorted(p.rglob("*.py")) if p.is_dir() else [p]:
            out.append((str(f), f))
    return out


def diag_row(d: Diagnostic) -> list:
    return [d.code, d.line, d.column, d.end_line, d.end_column, d.message, list(d.targets)]


def measure(linter: Linter, name: str, data: bytes, reps: int, path: str | None = None) -> dict:
    """Median CPU seconds of each stage over ``reps`` runs, and the file's diagnostics.
    ``path``: analyse under the file's real path, so imports of its own project are followed
    as in a real run (modules are parsed once per process, as in one worker)."""
    parse, eng, pos = [], [], []
    rows = None
    for _ in range(reps):
        t0 = time.process_time()
        module = cst.parse_module(data)
        t1 = time.process_time()
        text = data.decode(module.encoding or "utf-8", "replace")
        if hasattr(engine, "analyse"):
            walker = engine.analyse(path or name, module, linter.rules, linter.target, linter.matrix, linter.attr_exists,
                                    linter.known, text, reads=[], providers=linter.providers)
            t2 = time.process_time()
            diags = engine.diagnostics(path or name, module, walker, linter.target)
        else:  # a tree from before the split (issue 11 baseline): positions inside check_module
            diags = engine.check_module(name, module, linter.rules, linter.target, linter.matrix, linter.attr_exists,
                                        linter.known, text, reads=[], providers=linter.providers)
            t2 = time.process_time()
        t3 = time.process_time()
        parse.append(t1 - t0)
        eng.append(t2 - t1)
        pos.append(t3 - t2)
        if rows is None:
            shown, _ = apply(diags, text)
            rows = [diag_row(d) for d in sorted(shown, key=Diagnostic.sort_key)]
    p, e, q = statistics.median(parse), statistics.median(eng), statistics.median(pos)
    return {"file": name, "bytes": len(data), "parse": p, "engine": e, "positions": q,
            "ratio": e / p if p else 0.0, "diagnostics": rows}



WIDE = Target(gpus=["T4", "A10", "A100", "H100", "B200"], pins={"torch": ">=2.1"})


def findings(linter: Linter, name: str, data: bytes) -> list:
    res = linter.lint_bytes(data, name)
    return [diag_row(d) for d in res.diagnostics]


def realistic_findings(matrix) -> dict[str, list]:
    """tests/realistic, failing cases and twins, each under its case's fleet and pins."""
    from aicompat.base.toml_compat import tomllib

    corpus = HERE.parent / "tests" / "realistic"
    out = {}
    with open(corpus / "cases.toml", "rb") as f:
        cases = tomllib.load(f)["case"]
    for case in cases:
        t = Target(gpus=list(case["gpus"]), pins=dict(case.get("pins", {})))
        linter = Linter(build_settings(matrix, cli=t, no_config=True).target, matrix)
        for name in (case["file"], case.get("twin")):
            if name and name.endswith(".py"):
                out[f"realistic/{name}"] = findings(linter, name, (corpus / name).read_bytes())
    return out


def check_sets(matrix, kept) -> dict[str, dict[str, list]]:
    """Diagnostics that must not change: the files under a wide fleet and old torch
    pins (where guards and the value model decide), and the realistic corpus."""
    wide = Linter(build_settings(matrix, cli=WIDE, no_config=True).target, matrix)
    return {"wide": {name: findings(wide, name, data) for name, data, _path in kept},
            "realistic": realistic_findings(matrix)}


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("paths", nargs="*")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--sample", type=int, default=60, help="also every Nth .py file of each corpus (0: none)")
    ap.add_argument("--tf", help="transformers source directory")
    ap.add_argument("--worst", type=int, default=12)
    ap.add_argument("--json", help="write numbers and diagnostics here")
    ap.add_argument("--real-paths", action="store_true",
                    help="analyse each file under its real path: its project's modules are followed (and parsed, "
                         "once per process) as in a real run; without it the files are analysed alone")
    ap.add_argument("--check-against", help="a --json file: exit 1 if any file's diagnostics differ")
    ap.add_argument("--no-check-sets", action="store_true",
                    help="skip the untimed wide-fleet and realistic-corpus lint runs that --json/--check-against compare")
    args = ap.parse_args()

    matrix = default_matrix()
    target = build_settings(matrix, cli=Target(gpus=["A100", "H100", "B200"]), no_config=True).target
    linter = Linter(target, matrix)
    files = given_files(args.paths) if args.paths else default_files(tf_root(args.tf), torch_root(), args.sample)
    kept = []
    for name, path in files:
        data = path.read_bytes()
        if linter.relevant(data):
            kept.append((name, data, str(path)))
    print(f"{len(files)} files, {len(kept)} pass the prefilter ({sum(len(d) for _, d, _p in kept) / 1e6:.1f} MB); "
          f"median CPU time of {args.reps} repetitions per file, one process, Python {sys.version.split()[0]}\n",
          flush=True)
    rows = []
    for name, data, path in kept:
        try:
            rows.append(measure(linter, name, data, args.reps, path if args.real_paths else None))
        except Exception as exc:  # a file LibCST cannot parse: not part of the comparison
            print(f"skipped {name}: {type(exc).__name__}: {exc}", file=sys.stderr)
    tot = {k: sum(r[k] for r in rows) for k in ("parse", "engine", "positions")}
    ratio = tot["engine"] / tot["parse"] if tot["parse"] else 0.0
    with_pos = (tot["engine"] + tot["positions"]) / tot["parse"] if tot["parse"] else 0.0
    per_file = [r["ratio"] for r in rows]
    print("| files | parse s | engine+rules s | positions s | engine+rules / parse | (+ positions) / parse "
          "| median per-file ratio |")
    print("|---:|---:|---:|---:|---:|---:|---:|")
    print(f"| {len(rows)} | {tot['parse']:.2f} | {tot['engine']:.2f} | {tot['positions']:.2f} | {ratio:.0%} "
          f"| {with_pos:.0%} | {statistics.median(per_file) if per_file else 0:.0%} |\n")
    for label in ("transformers/", "torch/"):
        sub = [r for r in rows if r["file"].startswith(label)]
        if sub:
            p = sum(r["parse"] for r in sub)
            e = sum(r["engine"] for r in sub)
            print(f"- {label[:-1]}: {len(sub)} files, engine+rules / parse {e / p:.0%}")
    big = [r for r in rows if r["parse"] >= 0.02]  # tiny files' ratios are noise
    print("\nWorst files by ratio (parse >= 20 ms):\n\n| file | KB | parse s | engine+rules s | positions s | ratio |")
    print("|---|---:|---:|---:|---:|---:|")
    for r in sorted(big, key=lambda r: -r["ratio"])[: args.worst]:
        print(f"| {r['file']} | {r['bytes'] // 1024} | {r['parse']:.3f} | {r['engine']:.3f} | {r['positions']:.3f} "
              f"| {r['ratio']:.0%} |")
    print("\nMost engine time:\n\n| file | KB | parse s | engine+rules s | positions s | ratio |")
    print("|---|---:|---:|---:|---:|---:|")
    for r in sorted(rows, key=lambda r: -r["engine"])[: args.worst]:
        print(f"| {r['file']} | {r['bytes'] // 1024} | {r['parse']:.3f} | {r['engine']:.3f} | {r['positions']:.3f} "
              f"| {r['ratio']:.0%} |")
    sets = {"fleet": {r["file"]: r["diagnostics"] for r in rows}}
    if not args.no_check_sets and (args.json or args.check_against):
        sets.update(check_sets(matrix, kept))
    if args.json:
        Path(args.json).write_text(json.dumps({"reps": args.reps, "total": {**tot, "ratio": ratio}, "files": rows,
                                               "diagnostics": sets}, indent=1))
    if args.check_against:
        base_sets = json.loads(Path(args.check_against).read_text())["diagnostics"]
        bad = 0
        for label, now in sets.items():
            base = base_sets.get(label, {})
            diff = sorted(f for f in base.keys() | now.keys() if base.get(f) != now.get(f))
            n = sum(len(v or []) for v in now.values())
            if not diff:
                print(f"\n{label}: diagnostics identical to {args.check_against} ({len(now)} files, {n} diagnostics).")
                continue
            bad += 1
            print(f"\n{label}: DIAGNOSTICS DIFFER in {len(diff)} files:")
            for f in diff:
                b, a = base.get(f) or [], now.get(f) or []
                for d in b:
                    if d not in a:
                        print(f"  - {f}: {d}")
                for d in a:
                    if d not in b:
                        print(f"  + {f}: {d}")
        return 1 if bad else 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
