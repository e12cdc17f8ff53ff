"""Read sgl-kernel's FlashAttention 3 device checks from each release's wheel (the facts of
version_matrix/attention.toml [limit.sgl_kernel_fa3_*]).

    python3 tools/read_sgl_kernel.py OUT.json sgl-kernel==0.3.21 sglang-kernel==0.4.10 ... [--archs]

Per release: pip downloads the manylinux wheel into a temporary folder, reads
sgl_kernel/flash_attn.py (the capability majors is_fa3_supported() compares with, and whether
flash_attn_with_kvcache / flash_attn_varlen_func call it, with their NotImplementedError
text), and with --archs the GPU code of sgl_kernel/flash_ops*.so (tools/fatbin_archs.py).
Needs network access; nothing is kept but OUT.json.
"""
from __future__ import annotations

import ast
import json
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from fatbin_archs import fatbin_archs  # noqa: E402

FUNCS = ("flash_attn_with_kvcache", "flash_attn_varlen_func")


def checks(source: str) -> dict:
    tree = ast.parse(source)
    fns = {n.name: n for n in tree.body if isinstance(n, ast.FunctionDef)}
    majors: set[int] = set()
    if "is_fa3_supported" in fns:
        for c in ast.walk(fns["is_fa3_supported"]):
            if isinstance(c, ast.Compare) and "get_device_capability" in ast.unparse(c.left):
                majors |= {ast.literal_eval(x) for x in c.comparators}
    out: dict = {"majors": sorted(majors)}
    for name in FUNCS:
        fn = fns.get(name)
        if fn is None:
            out[name] = None
            continue
        calls = any(isinstance(c, ast.Call) and isinstance(c.func, ast.Name) and c.func.id == "is_fa3_supported"
                    for c in ast.walk(fn))
        raises = [ast.unparse(r.exc) for r in ast.walk(fn)
                  if isinstance(r, ast.Raise) and r.exc is not None and "NotImplementedError" in ast.unparse(r.exc)]
        out[name] = {"line": fn.lineno, "checks": calls, "raises": raises}
    return out


def read(requirement: str, archs: bool) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run([sys.executable, "-m", "pip", "download", requirement, "--no-deps", "-q", "-d", tmp,
                        "--only-binary=:all:", "--platform", "manylinux2014_x86_64", "--python-version", "3.10"],
                       check=True, capture_output=True)
        wheel = next(Path(tmp).glob("*.whl"))
        rec: dict = {"wheel": wheel.name}
        with zipfile.ZipFile(wheel) as z:
            names = z.namelist()
            if "sgl_kernel/flash_attn.py" in names:
                rec.update(checks(z.read("sgl_kernel/flash_attn.py").decode()))
            so = [n for n in names if n.startswith("sgl_kernel/flash_ops") and n.endswith(".so")]
            if archs and so:
                z.extract(so[0], tmp)
                rec["flash_ops"] = {f"{k} sm_{sm}": n for (k, sm), n in sorted(fatbin_archs(f"{tmp}/{so[0]}").items())}
        return rec


def main(argv: list[str]) -> None:
    out, reqs = argv[0], [a for a in argv[1:] if not a.startswith("--")]
    result = {r: read(r, "--archs" in argv) for r in reqs}
    Path(out).write_text(json.dumps(result, indent=1))


if __name__ == "__main__":
    main(sys.argv[1:])
