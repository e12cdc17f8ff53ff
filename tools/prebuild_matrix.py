"""Write version_matrix/prebuilt.tsv: the matrix's TOML parsed ahead of time, which a lint
loads in a few ms instead of parsing the TOML (src/aicompat/matrix/prebuilt.py).

    python3 tools/prebuild_matrix.py [--check]

Run it after editing any TOML file under version_matrix/ (but introspect/); until then the
edited file is parsed from its TOML, and tests/test_startup.py fails. --check exits 1 where
the file on disk is out of date instead of writing it.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))


def main(argv=None) -> int:
    from aicompat.matrix.prebuilt import PREBUILT, render

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--check", action="store_true", help="exit 1 if the file is out of date; write nothing")
    args = ap.parse_args(argv)
    out = ROOT / "version_matrix" / PREBUILT
    text = render(ROOT / "version_matrix")
    if args.check:
        if not out.exists() or out.read_text(encoding="utf-8") != text:
            print(f"version_matrix/{PREBUILT} is out of date: run python3 tools/prebuild_matrix.py", file=sys.stderr)
            return 1
        return 0
    out.write_text(text, encoding="utf-8")
    print(f"wrote version_matrix/{PREBUILT} ({len(text.splitlines()) - 1} files, {len(text) // 1024} KB)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
