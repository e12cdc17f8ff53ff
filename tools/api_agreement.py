"""How far an API table agrees with the stored runtime introspections, per release.

    python tools/api_agreement.py [--table version_matrix/api/torch.toml] [--introspect version_matrix/introspect]
                                  [--list] [--markdown]

Names: every name of every covered module (dunders aside) that the runtime's ``dir()`` shows
or the table lists for that release. Signatures: every callable for which the runtime found
signatures (inspect.signature, the C parser's listing or strings, pybind11's docstring), the
table's signatures for that release compared as text. ``--list`` prints every difference.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))

from packaging.version import Version  # noqa: E402

from aicompat.matrix.api_tables import load_package  # noqa: E402
from aicompat.matrixbuild import introspection  # noqa: E402


def rows(table: Path, intro_dir: Path, package: str | None = None):
    api = load_package(table)
    for release, intro in sorted(introspection.stored(intro_dir, package or api.package).items(), key=lambda kv: Version(kv[0])):
        idx = api.index_of(Version(release))
        if idx is None:
            continue
        yield release, introspection.compare(api, idx, intro)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--table", default=str(ROOT / "version_matrix" / "api" / "torch.toml"))
    ap.add_argument("--introspect", default=str(ROOT / "version_matrix" / "introspect"))
    ap.add_argument("--list", action="store_true", help="print every difference")
    ap.add_argument("--markdown", action="store_true")
    args = ap.parse_args(argv)
    if args.markdown:
        print("| release | names (runtime / table) | only at run time | only in table | names agree "
              "| signatures compared | differ | signatures agree | keywords differ |")
        print("|---|---|---|---|---|---|---|---|---|")
    for release, a in rows(Path(args.table), Path(args.introspect)):
        if args.markdown:
            print(f"| {release} | {a.names_runtime} / {a.names_table} | {len(a.only_runtime)} | {len(a.only_table)} "
                  f"| {a.names_agree:.2%} | {a.sigs_compared} | {len(a.sigs_differ)} | {a.sigs_agree:.2%} "
                  f"| {len(a.keywords_differ)} |")
        else:
            print(f"{release}: names {a.names_runtime} runtime / {a.names_table} table, {len(a.only_runtime)} only at "
                  f"run time, {len(a.only_table)} only in the table ({a.names_agree:.2%}); signatures "
                  f"{a.sigs_compared} compared, {len(a.sigs_differ)} differ ({a.sigs_agree:.2%}), "
                  f"{len(a.keywords_differ)} of them in the keywords accepted")
        if args.list:
            for n in a.only_runtime:
                print(f"  runtime only: {n}")
            for n in a.only_table:
                print(f"  table only:   {n}")
            for n in a.sigs_differ:
                print(f"  signature:    {n}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
