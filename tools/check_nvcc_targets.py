"""Check the compile-target facts against the local nvcc: which targets it accepts and what it
says when it refuses one.

    python3 tools/check_nvcc_targets.py [--nvcc PATH] [--compile]

For the toolkit of the local nvcc (``nvcc --version``), the targets it must accept are the
version_matrix/gpus.toml [target.*] whose "toolkit" is not newer and the [dropped_target.*] not
yet "removed"; it must refuse every other [dropped_target.*] and the names no toolkit has
(compute_XYa/f where there is no such target). Plain targets come from ``--list-gpu-arch`` /
``--list-gpu-code``; the 'a'/'f' ones are probed, one ``-gencode arch=compute_X,code=sm_X`` each.
The refusal texts must be build.toml [nvcc_refusal.<toolkit>]'s. nvcc checks these options before
compiling, so the probes run with --dryrun (--compile: compile a one-line kernel instead; nothing
is ever run). Exit status 1 and the differences when the tables disagree with nvcc.
"""
from __future__ import annotations

import argparse
import re
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))

from packaging.version import Version  # noqa: E402

from aicompat.matrix import load_matrix  # noqa: E402

KERNEL = "__global__ void k(int *p) { *p = 1; }\n"


def nvcc_version(nvcc: str) -> str:
    out = subprocess.run([nvcc, "--version"], capture_output=True, text=True, check=True).stdout
    m = re.search(r"release (\d+\.\d+)", out)
    if m is None:
        raise SystemExit(f"{nvcc} --version: no release in {out!r}")
    return m.group(1)


def listed(nvcc: str, option: str) -> set[str]:
    out = subprocess.run([nvcc, option], capture_output=True, text=True, check=True).stdout
    return {w for w in out.split() if re.fullmatch(r"(?:sm|compute)_\d+[af]?", w)}


def probe(nvcc: str, flags: list[str], work: Path, compile_: bool) -> str | None:
    """None when nvcc accepts ``flags``, else its first line of error."""
    mode = [] if compile_ else ["--dryrun"]
    r = subprocess.run([nvcc, *mode, *flags, "-c", str(work / "k.cu"), "-o", str(work / "k.o")],
                       capture_output=True, text=True)
    if r.returncode == 0:
        return None
    lines = [line for line in (r.stderr + r.stdout).splitlines() if "fatal" in line]
    return lines[0].strip() if lines else (r.stderr or r.stdout).strip()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--nvcc", default="nvcc")
    ap.add_argument("--compile", action="store_true", help="compile a one-line kernel instead of --dryrun")
    args = ap.parse_args(argv)
    m = load_matrix()
    cuda = nvcc_version(args.nvcc)
    refusal = m.section("build.toml", "nvcc_refusal").get(cuda)
    problems: list[str] = []
    if refusal is None:
        problems.append(f"build.toml has no [nvcc_refusal.\"{cuda}\"] for this nvcc")
    v = Version(cuda)
    expect = {t for t, e in m.targets.items() if Version(e["toolkit"]) <= v}
    expect |= {t for t, e in m.dropped_targets.items() if Version(e["added"]) <= v < Version(e["removed"])}
    gone = {t for t, e in m.dropped_targets.items() if Version(e["removed"]) <= v}
    plain = {"sm_" + w.split("_", 1)[1] for w in listed(args.nvcc, "--list-gpu-arch") | listed(args.nvcc, "--list-gpu-code")}
    nums = sorted({re.match(r"sm_(\d+)", t).group(1) for t in plain | expect | gone}, key=int)
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        (work / "k.cu").write_text(KERNEL)
        accepted, said = set(plain), {}
        for n in nums:
            for name in (f"sm_{n}", f"sm_{n}a", f"sm_{n}f"):
                if name in plain and not args.compile:
                    continue
                x = name[3:]
                err = probe(args.nvcc, ["-gencode", f"arch=compute_{x},code=sm_{x}"], work, args.compile)
                if err is None:
                    accepted.add(name)
                else:
                    accepted.discard(name)
                    said[name] = err
        if refusal is not None and gone:
            t = sorted(gone)[0]
            x = t[3:]
            for option, flags in (("arch", ["-gencode", f"arch=compute_{x},code=sm_{x}"]),
                                  ("code", [f"-arch=compute_{x}", f"-code=sm_{x}"])):
                got = probe(args.nvcc, flags, work, args.compile)
                name = f"compute_{x}" if option == "arch" else f"sm_{x}"
                want = refusal[option].format(name=name)
                if got != want:
                    problems.append(f"{' '.join(flags)}: nvcc says {got!r}, build.toml [nvcc_refusal.\"{cuda}\"] "
                                    f"{option} gives {want!r}")
    for t in sorted(expect - accepted):
        problems.append(f"{t}: the tables say CUDA {cuda} accepts it, nvcc refuses it: {said.get(t)!r}")
    for t in sorted(accepted - expect):
        problems.append(f"{t}: nvcc {cuda} accepts it, the tables do not list it for CUDA {cuda}")
    print(f"nvcc {cuda}: accepts {len(accepted)} targets ({', '.join(sorted(accepted, key=_key))}); "
          f"refuses {len(gone)} dropped ones")
    for p in problems:
        print("MISMATCH", p)
    return 1 if problems else 0


def _key(t: str):
    m = re.match(r"sm_(\d+)(\w*)", t)
    return (int(m.group(1)), m.group(2)) if m else (0, t)


if __name__ == "__main__":
    sys.exit(main())
