"""Check version_matrix/api/transformer-engine.toml's recipes against the runtime.

    python tools/check_te_recipes.py --git TransformerEngine --wheels /tmp/te-whl

Transformer Engine as a whole imports only where its CUDA build loads, so its
table is read statically. Its recipe module (``transformer_engine/common/recipe/
__init__.py``) needs only the standard library and pydantic, so each release's
copy (from the tag or wheel the table's ``[meta] files`` names) is executed here
on its own, and every dataclass's ``inspect.signature`` and the ``Format`` enum's
members are compared with the table. This runs Transformer Engine's recipe code
(nothing else of it, and no code aicompat checks); pydantic must be installed.
Exit status 1 on a difference, which is printed.
"""

from __future__ import annotations

import argparse
import dataclasses
import importlib.util
import inspect
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))

from aicompat.matrix.api_tables import load_package  # noqa: E402

RECIPE = "transformer_engine/common/recipe/__init__.py"


def source(entry: str, git: Path, wheels: Path) -> str:
    """The recipe module of one release, from the tag commit or wheel ``entry`` names."""
    if ": git " in entry:
        commit = entry.split()[-1]
        return subprocess.run(["git", "-C", str(git), "show", f"{commit}:{RECIPE}"], capture_output=True,
                              text=True, check=True).stdout
    with zipfile.ZipFile(wheels / entry.split()[0]) as z:
        return z.read(RECIPE).decode()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--git", type=Path, required=True, help="a clone of NVIDIA/TransformerEngine")
    ap.add_argument("--wheels", type=Path, required=True, help="the folder holding the wheels the table lists")
    ap.add_argument("--table", type=Path, default=ROOT / "version_matrix" / "api" / "transformer-engine.toml")
    args = ap.parse_args()
    api = load_package(args.table)
    recipe, fmt = api.module("transformer_engine.common.recipe"), api.module("transformer_engine.common.recipe.Format")
    compared = bad = 0
    with tempfile.TemporaryDirectory() as tmp:
        for i, entry in enumerate(api.files):
            name = f"te_recipe_{i}"
            path = Path(tmp) / f"{name}.py"
            path.write_text(source(entry, args.git, args.wheels))
            spec = importlib.util.spec_from_file_location(name, path)
            mod = importlib.util.module_from_spec(spec)
            sys.modules[name] = mod
            spec.loader.exec_module(mod)
            for cls_name, obj in sorted(vars(mod).items()):
                if not (inspect.isclass(obj) and obj.__module__ == name and dataclasses.is_dataclass(obj)):
                    continue
                runtime = ", ".join(p.name + ("=" if p.default is not inspect.Parameter.empty else "")
                                    for p in inspect.signature(obj).parameters.values())
                sigs = [s for rng, _, s in recipe.entries(cls_name) or () if i in rng]
                static = sigs[0][0].text if sigs and sigs[0] else None
                compared += 1
                if static != runtime:
                    bad += 1
                    print(f"{api.labels[i]} {cls_name}: table ({static}) != run time ({runtime})")
            members = sorted(mod.Format.__members__)
            listed = sorted(n for n in fmt.all_names() if any(i in rng for rng, _, _ in fmt.entries(n)))
            if members != listed:
                bad += 1
                print(f"{api.labels[i]} Format: table {listed} != run time {members}")
    print(f"{len(api.files)} releases, {compared} recipe dataclasses compared, {bad} differences")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
