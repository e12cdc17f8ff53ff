"""Read what SDPA's cuDNN backend accepts in one torch Linux wheel (version_matrix/attention.toml
[limit.sdpa_cudnn_head_dim]): the cuDNN its METADATA pins, the debug texts of sdp_utils.cpp's
cuDNN filters in libtorch_cuda.so, and the branch skeleton of check_cudnn_tensor_shapes
(cuDNN version comparisons, GPU tests, head-dim limits) from its disassembly, for a person to
read against pytorch/pytorch's sdp_utils.cpp. Nothing is imported or run.

    python3 tools/read_cudnn_sdpa.py torch-2.15.0-cp311-cp311-manylinux_2_28_x86_64.whl [...]
    python3 tools/read_cudnn_sdpa.py --so path/to/libtorch_cuda.so --metadata path/to/METADATA

Wheels come from ``pip download torch==X --no-deps --only-binary=:all: --platform
manylinux_2_28_x86_64 --python-version 3.11``; needs binutils (nm, objdump, strings).
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

FUNCTION = "check_cudnn_tensor_shapes(sdp::sdp_params const&, bool)"
# Debug texts of the cuDNN filters (and the flash/mem-efficient GPU ranges, read by the same pass).
TEXTS = re.compile(r"head_dim should be|cuDNN MHA only supports|cuDNN SDPA on SM|SDPA fprop requires cudnn|"
                   r"only supports gpu architectures in the range|check_requires_grad_and_head_dim|"
                   r"doesn't support training with head_dim|\(224, 256\] and dropout")
# Lines of the disassembly that make the skeleton: immediates compared with the runtime cuDNN
# version (8.9.x-10.x as an integer), the device's (major, minor) at cudaDeviceProp+0x168,
# a head-dim limit loaded as an immediate, and the SymInt comparisons they feed.
SKELETON = re.compile(r"cmp[qlb]?\s+\$0x(22[0-9a-f]{2}|1[0-9a-f]{4}),|0x168\(|movabs\s+\$0x[0-9a-f]+0000000[0-9a-f],|"
                      r"\$0x(80|c0|100),|sym_le|sym_eq|operator>|operator==|operator%|requires_grad")


def pinned_cudnn(metadata: str) -> str | None:
    """'nvidia-cudnn-cu13==9.26.0.51' from a wheel's METADATA."""
    m = re.search(r"^Requires-Dist: (nvidia-cudnn-cu\d+) ?\(?==([\d.]+)", metadata, re.M)
    return f"{m.group(1)}=={m.group(2)}" if m else None


def _run(*cmd: str) -> str:
    return subprocess.run(cmd, check=True, capture_output=True, text=True).stdout


def function_range(so: Path) -> tuple[int, int] | None:
    """[start, end) of FUNCTION (its hot part) in the library's symbol table."""
    rows = []
    for line in _run("nm", "-C", "--defined-only", "-n", str(so)).splitlines():
        parts = line.split(" ", 2)
        if len(parts) == 3 and parts[1] in "tT":
            rows.append((int(parts[0], 16), parts[2]))
    for i, (addr, name) in enumerate(rows):
        if name.endswith(FUNCTION) and i + 1 < len(rows):
            return addr, rows[i + 1][0]
    return None


def skeleton(so: Path) -> list[str]:
    r = function_range(so)
    if r is None:
        return [f"no {FUNCTION} in the symbol table"]
    text = _run("objdump", "-d", "--no-show-raw-insn", "-C", f"--start-address={r[0]:#x}",
                f"--stop-address={r[1]:#x}", str(so))
    out = []
    for line in text.splitlines():
        if SKELETON.search(line):
            out.append(re.sub(r"<sdp::\(anonymous namespace\)::check_cudnn_tensor_shapes\(sdp::sdp_params const&, "
                              r"bool\)\+(0x[0-9a-f]+)>", r"<+\1>", line.strip())[:140])
    return out


def texts(so: Path) -> list[str]:
    return sorted({s for s in _run("strings", "-n", "8", str(so)).splitlines() if TEXTS.search(s)})


def report(so: Path, metadata: str | None, label: str) -> None:
    print(f"== {label}")
    print("pinned cuDNN:", pinned_cudnn(metadata) if metadata else "(no METADATA given)")
    print("-- texts")
    for s in texts(so):
        print("  ", s)
    print(f"-- {FUNCTION}: branch skeleton")
    for s in skeleton(so):
        print("  ", s)


def from_wheel(wheel: Path) -> None:
    with zipfile.ZipFile(wheel) as z, tempfile.TemporaryDirectory() as tmp:
        meta = next((n for n in z.namelist() if n.endswith(".dist-info/METADATA")), None)
        metadata = z.read(meta).decode() if meta else None
        so = Path(tmp) / "libtorch_cuda.so"
        with z.open("torch/lib/libtorch_cuda.so") as src, open(so, "wb") as dst:
            shutil.copyfileobj(src, dst, 1 << 24)
        report(so, metadata, wheel.name)


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("wheels", nargs="*", type=Path)
    ap.add_argument("--so", type=Path)
    ap.add_argument("--metadata", type=Path)
    a = ap.parse_args(argv)
    if a.so:
        report(a.so, a.metadata.read_text() if a.metadata else None, str(a.so))
    for w in a.wheels:
        from_wheel(w)
    if not a.so and not a.wheels:
        ap.print_usage(sys.stderr)


if __name__ == "__main__":
    main()
