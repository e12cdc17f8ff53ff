"""The GPU code a CUDA library or object file carries: the (kind, sm) of every entry of
its fatbins, read from their headers. Used to say which GPUs a prebuilt wheel's kernels
run on (version_matrix/attention.toml, sgl-kernel's flash_ops).

    python3 tools/fatbin_archs.py path/to/lib.so   ->  "elf sm_80: 372" ...

A fatbin (magic 0xBA55ED50) is a header (u16 version, u16 header size, u64 payload size)
followed by entries, each a header (u16 kind: 1 PTX, 2 ELF; u16; u32 header size; u64 size;
...; u32 sm at offset 28) and its payload. The layout was checked against objects nvcc 13.0
builds for known -gencode lists (tests/test_fatbin_archs.py); entries are counted, not decoded.
"""
from __future__ import annotations

import collections
import mmap
import struct
import sys

MAGIC = struct.pack("<I", 0xBA55ED50)
KINDS = {1: "ptx", 2: "elf"}


def fatbin_archs(path: str) -> collections.Counter:
    """Counter of (kind, sm) over every fatbin entry in the file."""
    out: collections.Counter = collections.Counter()
    with open(path, "rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as m:
        pos = 0
        while (i := m.find(MAGIC, pos)) >= 0:
            if i + 16 > len(m):
                break
            _version, header, size = struct.unpack_from("<HHQ", m, i + 4)
            entry, end = i + header, min(i + header + size, len(m))
            while entry + 32 <= end:
                kind, _, entry_header, entry_size = struct.unpack_from("<HHIQ", m, entry)
                sm = struct.unpack_from("<I", m, entry + 28)[0]
                out[(KINDS.get(kind, str(kind)), sm)] += 1
                if entry_header == 0:
                    break
                entry += entry_header + entry_size
            pos = end if end > i else i + 4
    return out


def main(argv: list[str]) -> None:
    for path in argv:
        for (kind, sm), n in sorted(fatbin_archs(path).items()):
            print(f"{path}: {kind} sm_{sm}: {n}")


if __name__ == "__main__":
    main(sys.argv[1:])
