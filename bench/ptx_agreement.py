#!/usr/bin/env python3
"""Agreement with ptxas over (form, target) pairs, old matcher vs new.

Input: the JSON dump of tools/gen_ptx_table.py --dump (every verified form with the
targets ptxas accepted). Each form is put in a one-line kernel
(``asm volatile("<instruction>");``) and judged per target by
- NEW: cuda/scan.py of this checkout with version_matrix/ptx_instructions.toml;
- OLD: cuda/scan.py and cuda_features.toml of git revision OLD_REV (the regex features).
A pair agrees when "fail" <=> ptxas rejects.

    python3 tools/gen_ptx_table.py --dump /tmp/forms.json
    python3 bench/ptx_agreement.py /tmp/forms.json [--old-rev 1ada03c]
"""
from __future__ import annotations

import argparse
import importlib.util
import json
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))

from aicompat.base.toml_compat import tomllib  # noqa: E402
from aicompat.cuda.cpp.scan import CudaSource, load_features  # noqa: E402
from aicompat.matrix import load_matrix  # noqa: E402


def old_matcher(rev: str):
    tmp = Path(tempfile.mkdtemp())
    code = subprocess.run(["git", "-C", str(ROOT), "show", f"{rev}:src/aicompat/cuda/scan.py"], capture_output=True,
                          text=True, check=True).stdout
    code = code.replace("from .preprocessor import", "from aicompat.cuda.cpp.preprocessor import")
    (tmp / "old_scan.py").write_text(code)
    spec = importlib.util.spec_from_file_location("old_scan", tmp / "old_scan.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules["old_scan"] = mod
    spec.loader.exec_module(mod)
    toml = subprocess.run(["git", "-C", str(ROOT), "show", f"{rev}:version_matrix/cuda_features.toml"],
                          capture_output=True, text=True, check=True).stdout

    class M:
        def section(self, f, s):
            return tomllib.loads(toml).get(s, {})

    return mod, mod.load_features(M())


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("forms", type=Path)
    ap.add_argument("--old-rev", default="1ada03c")
    args = ap.parse_args()
    forms = json.loads(args.forms.read_text())
    matrix = load_matrix()
    targets = list(matrix.targets)
    new_k = load_features(matrix)
    old_mod, old_f = old_matcher(args.old_rev)
    stats = {}
    for name in ("old", "new"):
        stats[name] = {"agree": 0, "pairs": 0, "rejected": 0, "caught": 0, "accepted": 0, "false": 0}
    for f in forms:
        text = "__global__ void k() {\n  asm volatile(" + json.dumps(f["main"].strip()) + ");\n}\n"
        srcs = {"old": old_mod.CudaSource(text, old_f), "new": CudaSource(text, new_k)}
        for t in targets:
            truth_fail = t not in f["accepted"]
            for name, src in srcs.items():
                s = stats[name]
                got_fail = src.verdict(t).status == "fail"
                s["pairs"] += 1
                s["agree"] += got_fail == truth_fail
                if truth_fail:
                    s["rejected"] += 1
                    s["caught"] += got_fail
                else:
                    s["accepted"] += 1
                    s["false"] += got_fail
    print(f"{len(forms)} forms x {len(targets)} targets = {len(forms) * len(targets)} (form, target) pairs")
    for name, s in stats.items():
        print(f"{name}: agree {s['agree']}/{s['pairs']} ({100 * s['agree'] / s['pairs']:.1f}%); "
              f"flags {s['caught']}/{s['rejected']} rejected ({100 * s['caught'] / max(s['rejected'], 1):.1f}%); "
              f"false on accepted {s['false']}/{s['accepted']}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
