"""Where the engine's time goes on bench_cost.py's file set (issue 11, cost).

    python bench/profile_cost.py                 # cProfile of engine.analyse, by own time
    python bench/profile_cost.py --sort cumulative --top 60
    python bench/profile_cost.py --no-rules      # the traversal and the guards alone
    python bench/profile_cost.py --forced        # no profiler: CPU time per rule hook, and of every
                                                 # guard decided (forced), by who asked for it

cProfile inflates functions called very often (the walk, isinstance); --forced times the
hooks and the guards with process_time only, so its numbers add up to the engine's. Not run in CI.
"""

from __future__ import annotations

import argparse
import collections
import cProfile
import pstats
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "src"))
sys.path.insert(0, str(HERE))

import bench_cost  # noqa: E402
import libcst as cst  # noqa: E402

from aicompat.core import engine
from aicompat.matrix import default_matrix  # noqa: E402
from aicompat.matrix.target import Target  # noqa: E402
from aicompat.model import guards  # noqa: E402
from aicompat.run.config import build_settings  # noqa: E402
from aicompat.run.linter import Linter  # noqa: E402


def forced_times(run) -> collections.Counter:
    """Run ``run()`` with the rule hooks and the guards' first decisions timed."""
    spent: collections.Counter = collections.Counter()
    hook: list = [None]
    deciding = [False]
    checked, worlds = engine.Walker._checked, guards.Ctx.worlds.fget

    def timed_checked(self, rule, node, check, *args):
        outer, hook[0] = hook[0], f"{rule.code} {check.__name__}"
        t0 = time.process_time()
        try:
            return checked(self, rule, node, check, *args)
        finally:
            spent[("hook", hook[0])] += time.process_time() - t0
            hook[0] = outer

    def timed_worlds(ctx):
        w = ctx.world_set
        if type(w) is frozenset or w.value is not None or deciding[0]:
            return worlds(ctx)
        asker = sys._getframe(1).f_code.co_name
        deciding[0] = True
        t0 = time.process_time()
        try:
            return worlds(ctx)
        finally:
            deciding[0] = False
            spent[("guard decided", f"{asker} ({hook[0]})" if hook[0] else asker)] += time.process_time() - t0

    engine.Walker._checked = timed_checked
    guards.Ctx.worlds = property(timed_worlds)
    try:
        run()
    finally:
        engine.Walker._checked = checked
        guards.Ctx.worlds = property(worlds)
    return spent


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sample", type=int, default=60)
    ap.add_argument("--sort", default="tottime")
    ap.add_argument("--top", type=int, default=45)
    ap.add_argument("--no-rules", action="store_true")
    ap.add_argument("--forced", action="store_true")
    args = ap.parse_args()
    matrix = default_matrix()
    target = build_settings(matrix, cli=Target(gpus=["A100", "H100", "B200"]), no_config=True).target
    linter = Linter(target, matrix)
    mods = []
    for name, path in bench_cost.default_files(bench_cost.tf_root(None), bench_cost.torch_root(), args.sample):
        data = path.read_bytes()
        if linter.relevant(data):
            mods.append((name, cst.parse_module(data), data.decode("utf-8", "replace")))
    rules, providers = ([], []) if args.no_rules else (linter.rules, linter.providers)

    def run():
        for name, module, text in mods:
            engine.analyse(name, module, rules, linter.target, linter.matrix, linter.attr_exists, linter.known, text,
                           reads=[], providers=providers)

    t0 = time.process_time()
    if args.forced:
        spent = forced_times(run)
        print(f"{len(mods)} files, engine {time.process_time() - t0:.2f} s CPU\n")
        for (kind, who), s in spent.most_common(args.top):
            print(f"{s:7.3f} s  {kind}: {who}")
        return 0
    prof = cProfile.Profile()
    prof.enable()
    run()
    prof.disable()
    print(f"{len(mods)} files, engine {time.process_time() - t0:.2f} s CPU under cProfile\n")
    pstats.Stats(prof).sort_stats(args.sort).print_stats(args.top)
    return 0


if __name__ == "__main__":
    sys.exit(main())
