#!/usr/bin/env python3
"""Generate version_matrix/ptx_instructions.toml: which compile targets accept each
PTX instruction form, verified by ptxas.

Forms come from two places:
  1. CCCL's generated instruction headers in the CUDA toolkit
     (include/cccl/cuda/__ptx/instructions/generated/*.h). Every wrapper there
     documents its form (``// tcgen05.mma.cta_group.kind ...; // PTX ISA 86, SM_100a``)
     and implements each modifier combination as one ``asm`` statement; those
     asm templates are the concrete forms (operand constraints give the register types).
  2. SEEDS below: forms CCCL does not wrap that kernel repositories use (mma.sync,
     ldmatrix/stmatrix, wgmma, cp.async, redux.sync, cvt, ...), each citing the PTX ISA
     section it was written from; their targets are what ptxas says.

Every form becomes one ``.entry`` with the instruction and the registers it needs, and
is compiled with ``ptxas -arch=T`` for every target T of version_matrix/gpus.toml
[target.*] (no GPU needed). Forms are batched many entries to a file; an error line
names its form, which is then dropped and the rest recompiled until the file passes,
so every "accepted" is a clean ptxas run and every "rejected" has its own error.
ptxas wins over the documentation; where they disagree the entry says so.

The minimum PTX ISA is probed too: the lowest ``.version`` at which ptxas accepts
the form for its lowest accepting target.

From the verified forms the generator learns token patterns (opcode + the modifiers
that change the requirement): an instruction's accepted targets are the intersection
of the targets of every pattern whose modifiers it has.

    python3 tools/gen_ptx_table.py                    # full run (~3 minutes, 2 processes)
    python3 tools/gen_ptx_table.py --dump forms.json  # also every form with its ptxas verdicts
(tests/test_ptx_table.py re-verifies a sample of forms against the committed table.)
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import re
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))

from aicompat.base.toml_compat import tomllib  # noqa: E402
from aicompat.cuda.cpp.ptx import CLASSES, instructions  # noqa: E402
from aicompat.cuda.cpp.ptx import shape as operand_shape  # noqa: E402

CCCL_DIR = Path("/usr/local/cuda-13.0/include/cccl/cuda/__ptx/instructions/generated")
OUT = ROOT / "version_matrix" / "ptx_instructions.toml"
JOBS = 2
BATCH = 60
# PTX ISA versions ptxas 13.0 knows, ascending (for the minimum-ISA probe).
ISA_VERSIONS = ["6.0", "6.1", "6.2", "6.3", "6.4", "6.5", "7.0", "7.1", "7.2", "7.3", "7.4", "7.5", "7.6",
                "7.7", "7.8", "8.0", "8.1", "8.2", "8.3", "8.4", "8.5", "8.6", "8.7", "8.8", "9.0"]
MAX_ISA = ISA_VERSIONS[-1]

# Register placeholders in seed forms and the PTX register class each stands for.
REG = {"r": ".b32", "l": ".b64", "h": ".b16", "f": ".f32", "d": ".f64", "p": ".pred", "q": ".b128", "b": ".b8"}
CONSTRAINT = {"r": "r", "l": "l", "h": "h", "f": "f", "d": "d"}
REG_CLASS = {**{c: CLASSES[c] for c in "rlhfd"}, "p": "pred", "q": "b128", "b": "b8"}


@dataclass
class Form:
    body: str  # PTX statements with registers named %<class><n>
    main: str  # the instruction the form is about, as written
    source: str
    doc: str = ""  # what the documentation says ("PTX ISA 86, SM_100a, SM_101a")
    doc_isa: str = ""
    doc_sms: tuple[str, ...] = ()
    accepted: set[str] = field(default_factory=set)
    errors: dict[str, str] = field(default_factory=dict)
    min_isa: str = ""

    @property
    def key(self):
        ins = instructions(self.main)[0]
        return ins.opcode, tuple(sorted(set(ins.modifiers)))

    @property
    def shape(self) -> tuple[str, ...]:
        """The operand pseudo-modifiers (cuda/cpp/ptx.py ``shape``): the forms' registers are
        named by their class letter (%r40 is 32-bit, %l41 64-bit)."""
        return operand_shape(instructions(self.main)[0], _klass)

    def key_with(self, operand_opcodes) -> tuple:
        op, mods = self.key
        return (op, tuple(sorted(set(mods) | set(self.shape)))) if op in operand_opcodes else (op, mods)


def _klass(operand: str) -> str | None:
    m = re.fullmatch(r"%([rlhfdpqb])\d+", operand)
    return REG_CLASS.get(m.group(1)) if m else None


# --------------------------------------------------------------------------- CCCL
def _c_strings(seg: str) -> str:
    """The concatenated value of the C string literals in ``seg``."""
    out = []
    for m in re.finditer(r'"((?:[^"\\]|\\.)*)"', seg):
        out.append(bytes(m.group(1), "utf-8").decode("unicode_escape"))
    return "".join(out)


def _split_top(text: str, sep: str) -> list[str]:
    parts, depth, cur, i = [], 0, [], 0
    in_str = False
    while i < len(text):
        ch = text[i]
        if in_str:
            cur.append(ch)
            if ch == "\\":
                cur.append(text[i + 1])
                i += 1
            elif ch == '"':
                in_str = False
        elif ch == '"':
            in_str = True
            cur.append(ch)
        elif ch in "([{":
            depth += 1
            cur.append(ch)
        elif ch in ")]}":
            depth -= 1
            cur.append(ch)
        elif ch == sep and depth == 0 and not (sep == ":" and (text[i + 1:i + 2] == ":" or text[i - 1:i] == ":")):
            parts.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
        i += 1
    parts.append("".join(cur))
    return parts


def _asm_statements(text: str):
    """(offset, template, [(constraint, expr)]) of every asm(...) statement."""
    for m in re.finditer(r"\basm\s*(?:volatile\s*)?\(", text):
        i, depth, in_str = m.end(), 1, False
        while depth:
            ch = text[i]
            if in_str:
                if ch == "\\":
                    i += 1
                elif ch == '"':
                    in_str = False
            elif ch == '"':
                in_str = True
            elif ch == "(":
                depth += 1
            elif ch == ")":
                depth -= 1
            i += 1
        inner = text[m.end():i - 1]
        sections = _split_top(inner, ":")
        template = _c_strings(sections[0])
        ops = []
        for sec in sections[1:3]:
            for item in _split_top(sec, ","):
                cm = re.match(r'\s*"([=+&]*)(\w)"\s*\((.*)\)\s*$', item, re.S)
                if cm:
                    ops.append((cm.group(2), cm.group(3).strip(), "=" in cm.group(1) or "+" in cm.group(1)))
        yield m.start(), template, ops


_DOC = re.compile(r"/\*\s*\n(//.*?)\*/", re.S)
_IMMEDIATES = {"__size.value": "128"}


def cccl_forms(cccl_dir: Path) -> tuple[list[Form], list[dict]]:
    forms, wrappers = [], []
    for header in sorted(cccl_dir.glob("*.h")):
        text = header.read_text()
        docs = [(m.start(), m.end(), m.group(1)) for m in _DOC.finditer(text)]
        for di, (start, end, doc) in enumerate(docs):
            stop = docs[di + 1][0] if di + 1 < len(docs) else len(text)
            impl = text[end:stop]
            flat = " ".join(ln.lstrip("/ ").strip() for ln in doc.splitlines())
            im = re.search(r"PTX ISA (\d+)\s*,?\s*((?:SM_\w+\s*,?\s*)*)", flat)
            isa = f"{int(im.group(1)) // 10}.{int(im.group(1)) % 10}" if im else ""
            sms = tuple(re.findall(r"SM_\w+", im.group(2))) if im else ()
            doc_ptx = doc.splitlines()[0].lstrip("/ ").split(";")[0]
            fm = re.search(r"_CCCL_DEVICE\s+static\s+inline\s+[\w:<>,\s]+?\b(\w+)\s*\(", impl)
            guard = re.search(r"#\s*if _CCCL_CUDA_COMPILER\(NVHPC\) \|\| (.*?)(?<!\\)\n", impl, re.S)
            xm = re.search(r'extern "C" _CCCL_DEVICE void (__cuda_ptx_\w+)\(\)', impl)
            if fm:
                cond = re.sub(r"\\\s*\n\s*", " ", guard.group(1)).strip() if guard else ""
                wrappers.append({"name": fm.group(1), "extern": xm.group(1) if xm else "", "guard": cond,
                                 "isa": isa, "sms": sms, "header": header.name, "doc": doc_ptx})
            for _off, template, ops in _asm_statements(impl):
                body = _substitute(template, ops)
                if body is None:
                    continue
                doc_op = doc_ptx.split()[0].split(".")[0] if doc_ptx else ""
                mains = [i for i in instructions(body) if i.opcode == doc_op] or \
                        [i for i in instructions(body) if i.opcode not in ("setp", "selp", "mov")]
                if not mains:
                    continue
                main_text = body[mains[0].start:].split(";")[0] + ";"
                doc_text = f"PTX ISA {im.group(1) if im else '?'}, {', '.join(sms)}"
                forms.append(Form(body=body, main=main_text, source=f"CCCL {header.name}", doc=doc_text,
                                  doc_isa=isa, doc_sms=sms))
                forms += _narrowed(template, ops, doc_ptx, header.name)
    return forms, wrappers


def _narrowed(template: str, ops: list, doc_ptx: str, header: str) -> list[Form]:
    """The form again with each 64-bit value operand (an input bound to a parameter, not an
    address) given a 32-bit register: the operand grammar fixes its width per instruction
    (st.bulk's size is .b64), so ptxas tells which forms take the narrower one."""
    out = []
    for n, (c, expr, is_out) in enumerate(ops):
        if c != "l" or is_out or not re.fullmatch(r"__\w+", expr) or \
                re.search(rf"\[[^\]]*%{n}(?!\d)[^\]]*\]", template):  # an address (also [%1, {%2}])
            continue
        body = _substitute(template, [(("r", e, o) if k == n else (cc, e, o)) for k, (cc, e, o) in enumerate(ops)])
        if body is None:
            continue
        doc_op = doc_ptx.split()[0].split(".")[0] if doc_ptx else ""
        mains = [i for i in instructions(body) if i.opcode == doc_op]
        if not mains:
            continue
        main_text = body[mains[0].start:].split(";")[0] + ";"
        out.append(Form(body=body, main=main_text, source=f"CCCL {header} ({expr.lstrip('_')} as a 32-bit register)"))
    return out


def _substitute(template: str, ops: list[tuple[str, str]]) -> str | None:
    def repl(m):
        n = int(m.group(1))
        if n >= len(ops):
            raise KeyError(n)
        c, expr, _out = ops[n]
        if c == "n":
            return _IMMEDIATES.get(expr, "0")
        return f"%{c}{n}"

    body = template.replace("%%", "\x00")
    try:
        body = re.sub(r"%(\d+)", repl, body)
    except KeyError:
        return None
    return body.replace("\x00", "%")


# --------------------------------------------------------------------------- seeds
def _v(n: int, reg: str) -> str:
    return "{" + ", ".join([reg] * n) + "}"


PTX_MMA = "PTX ISA 9.0, Warp Level Matrix Multiply-Accumulate Instructions: mma (probed with ptxas)"
PTX_LDSM = "PTX ISA 9.0, Warp Level Matrix Load Instruction: ldmatrix (probed with ptxas)"
PTX_STSM = "PTX ISA 9.0, Warp Level Matrix Store Instruction: stmatrix (probed with ptxas)"
PTX_WGMMA = "PTX ISA 9.0, Asynchronous Warpgroup Level Matrix Multiply-Accumulate: wgmma (probed with ptxas)"
PTX_CPASYNC = "PTX ISA 9.0, Data Movement: cp.async (probed with ptxas)"
PTX_REDUX = "PTX ISA 9.0, Parallel Synchronization: redux.sync (probed with ptxas)"
PTX_CVT = "PTX ISA 9.0, Data Movement and Conversion: cvt (probed with ptxas)"
PTX_MISC = "PTX ISA 9.0, instruction reference (probed with ptxas)"
PTX_TCGEN05 = "PTX ISA 9.0, TensorCore 5th Generation: tcgen05.mma (probed with ptxas)"
PTX_MAX3 = ("PTX ISA 9.0, Floating Point Instructions: max/min (max{.ftz}{.NaN}{.abs}.f32 d, a, b, c: three inputs; "
            "Integer Arithmetic max/min take two) (probed with ptxas)")
PTX_STBULK = "PTX ISA 9.0, Data Movement: st.bulk (st.bulk{.weak}{.shared::cta} [a], size, initval; size .b64) (probed with ptxas)"


def seeds() -> list[tuple[str, str]]:
    s: list[tuple[str, str]] = []
    F4, R4, R2, R1 = _v(4, "$f"), _v(4, "$r"), _v(2, "$r"), _v(1, "$r")
    # mma.sync (shape, types, A/B/C/D register counts)
    for shape, types, d, a, b, c in [
        ("m16n8k8", "f32.f16.f16.f32", F4, R2, R1, F4),
        ("m16n8k16", "f32.f16.f16.f32", F4, R4, R2, F4),
        ("m16n8k16", "f16.f16.f16.f16", R2, R4, R2, R2),
        ("m16n8k8", "f32.bf16.bf16.f32", F4, R2, R1, F4),
        ("m16n8k16", "f32.bf16.bf16.f32", F4, R4, R2, F4),
        ("m16n8k4", "f32.tf32.tf32.f32", F4, R2, R1, F4),
        ("m16n8k8", "f32.tf32.tf32.f32", F4, R4, R2, F4),
        ("m16n8k16", "s32.s8.s8.s32", R4, R2, R1, R4),
        ("m16n8k32", "s32.s8.s8.s32", R4, R4, R2, R4),
        ("m16n8k32", "satfinite.s32.s8.s8.s32", R4, R4, R2, R4),
        ("m16n8k32", "s32.u8.s8.s32", R4, R4, R2, R4),
        ("m16n8k64", "s32.s4.s4.s32", R4, R4, R2, R4),
        ("m8n8k4", "f64.f64.f64.f64", _v(2, "$d"), _v(1, "$d"), _v(1, "$d"), _v(2, "$d")),
        ("m16n8k16", "f64.f64.f64.f64", _v(4, "$d"), _v(8, "$d"), _v(4, "$d"), _v(4, "$d")),
        ("m16n8k32", "f32.e4m3.e4m3.f32", F4, R4, R2, F4),
        ("m16n8k32", "f32.e5m2.e4m3.f32", F4, R4, R2, F4),
        ("m16n8k32", "f16.e4m3.e4m3.f16", R2, R4, R2, R2),
        ("m16n8k16", "f32.e4m3.e4m3.f32", F4, R2, R1, F4),
        ("m16n8k16", "f16.e5m2.e5m2.f16", R2, R2, R1, R2),
        ("m16n8k32", "kind::f8f6f4.f32.e4m3.e4m3.f32", F4, R4, R2, F4),
        ("m16n8k32", "kind::f8f6f4.f32.e2m1.e2m1.f32", F4, R4, R2, F4),
        ("m16n8k32", "kind::f8f6f4.f32.e3m2.e2m3.f32", F4, R4, R2, F4),
        ("m16n8k32", "kind::f8f6f4.f16.e5m2.e2m1.f16", R2, R4, R2, R2),
    ]:
        s.append((f"mma.sync.aligned.{shape}.row.col.{types} {d}, {a}, {b}, {c};", PTX_MMA))
    s.append((f"mma.sync.aligned.m8n8k4.row.col.f32.f16.f16.f32 {_v(8, '$f')}, {R2}, {R2}, {_v(8, '$f')};", PTX_MMA))
    s.append((f"mma.sp.sync.aligned.m16n8k32.row.col.f32.bf16.bf16.f32 {F4}, {R4}, {R4}, {F4}, $r, 0x0;", PTX_MMA))
    s.append((f"mma.sp::ordered_metadata.sync.aligned.m16n8k32.row.col.f32.bf16.bf16.f32 {F4}, {R4}, {R4}, {F4}, "
              f"$r, 0x0;", PTX_MMA))
    s.append((f"mma.sp::ordered_metadata.sync.aligned.m16n8k64.row.col.kind::f8f6f4.f32.e4m3.e4m3.f32 {F4}, "
              f"{R4}, {R4}, {F4}, $r, 0x0;", PTX_MMA))
    for kind, shape, vec, types, stype in [
        ("mxf8f6f4", "m16n8k32", "scale_vec::1X", "f32.e4m3.e4m3.f32", "ue8m0"),
        ("mxf8f6f4", "m16n8k32", "scale_vec::1X", "f32.e2m1.e2m1.f32", "ue8m0"),
        ("mxf4", "m16n8k64", "scale_vec::2X", "f32.e2m1.e2m1.f32", "ue8m0"),
        ("mxf4nvf4", "m16n8k64", "scale_vec::2X", "f32.e2m1.e2m1.f32", "ue8m0"),
        ("mxf4nvf4", "m16n8k64", "scale_vec::4X", "f32.e2m1.e2m1.f32", "ue4m3"),
    ]:
        s.append((f"mma.sync.aligned.{shape}.row.col.kind::{kind}.block_scale.{vec}.{types}.{stype} {F4}, {R4}, "
                  f"{R2}, {F4}, $r, {{0, 0}}, $r, {{0, 0}};", PTX_MMA))
    s.append((f"mma.sync.aligned.m16n8k32.row.col.kind::mxf8f6f4.block_scale.f32.e4m3.e4m3.f32.ue8m0 {F4}, {R4}, "
              f"{R2}, {F4}, $r, {{0, 0}}, $r, {{0, 0}};", PTX_MMA))
    # ldmatrix / stmatrix / movmatrix
    for shape, n, suffix in [("m8n8.x1", 1, "b16"), ("m8n8.x2", 2, "b16"), ("m8n8.x4", 4, "b16"),
                             ("m8n8.x1.trans", 1, "b16"), ("m8n8.x4.trans", 4, "b16"),
                             ("m16n16.x1.trans", 2, "b8"), ("m16n16.x2.trans", 4, "b8"),
                             ("m16n16.x1.trans", 2, "b8x16.b6x16_p32"), ("m16n16.x1.trans", 2, "b8x16.b4x16_p64"),
                             ("m8n16.x1", 1, "b8x16.b6x16_p32"), ("m8n16.x4", 4, "b8x16.b4x16_p64")]:
        s.append((f"ldmatrix.sync.aligned.{shape}.shared.{suffix} {_v(n, '$r')}, [$r];", PTX_LDSM))
    s.append((f"ldmatrix.sync.aligned.m8n8.x4.shared::cta.b16 {R4}, [$r];", PTX_LDSM))
    for shape, n, suffix in [("m8n8.x1", 1, "b16"), ("m8n8.x2", 2, "b16"), ("m8n8.x4", 4, "b16"),
                             ("m8n8.x4.trans", 4, "b16"), ("m16n8.x1.trans", 1, "b8"), ("m16n8.x2.trans", 2, "b8"),
                             ("m16n8.x4.trans", 4, "b8")]:
        s.append((f"stmatrix.sync.aligned.{shape}.shared.{suffix} [$r], {_v(n, '$r')};", PTX_STSM))
    s.append(("movmatrix.sync.aligned.m8n8.trans.b16 $r, $r;", PTX_MISC))
    # wgmma
    s += [("wgmma.fence.sync.aligned;", PTX_WGMMA), ("wgmma.commit_group.sync.aligned;", PTX_WGMMA),
          ("wgmma.wait_group.sync.aligned 0;", PTX_WGMMA)]
    for shape, types, d, extra in [
        ("m64n8k16", "f32.f16.f16", F4, ", 1, 1, 0, 0"), ("m64n8k16", "f32.bf16.bf16", F4, ", 1, 1, 0, 0"),
        ("m64n8k16", "f16.f16.f16", R2, ", 1, 1, 0, 0"), ("m64n8k8", "f32.tf32.tf32", F4, ", 1, 1"),
        ("m64n8k32", "f32.e4m3.e4m3", F4, ", 1, 1"), ("m64n8k32", "f16.e5m2.e4m3", R2, ", 1, 1"),
        ("m64n8k32", "s32.s8.s8", R4, ""), ("m64n8k32", "s32.s8.u8.satfinite", R4, ""),
        ("m64n8k256", "s32.b1.b1.and.popc", R4, "")]:
        s.append((f"wgmma.mma_async.sync.aligned.{shape}.{types} {d}, $l, $l, $p{extra};", PTX_WGMMA))
    s.append((f"wgmma.mma_async.sync.aligned.m64n8k16.f32.bf16.bf16 {F4}, {R4}, $l, $p, 1, 1, 0;", PTX_WGMMA))
    s.append((f"wgmma.mma_async.sp.sync.aligned.m64n8k32.f32.bf16.bf16 {F4}, $l, $l, $r, 0, $p, 1, 1, 0, 0;",
              PTX_WGMMA))
    # cp.async (Ampere)
    s += [("cp.async.ca.shared.global [$r], [$l], 4;", PTX_CPASYNC),
          ("cp.async.cg.shared.global [$r], [$l], 16;", PTX_CPASYNC),
          ("cp.async.cg.shared.global [$r], [$l], 16, $r;", PTX_CPASYNC),
          ("cp.async.ca.shared.global.L2::128B [$r], [$l], 16;", PTX_CPASYNC),
          ("cp.async.cg.shared.global.L2::cache_hint [$r], [$l], 16, $l;", PTX_CPASYNC),
          ("cp.async.commit_group;", PTX_CPASYNC), ("cp.async.wait_group 0;", PTX_CPASYNC),
          ("cp.async.wait_all;", PTX_CPASYNC), ("cp.async.mbarrier.arrive.noinc.shared.b64 [$r];", PTX_CPASYNC)]
    # redux.sync
    for op in ["add.u32", "add.s32", "min.u32", "max.s32", "and.b32", "or.b32", "xor.b32"]:
        s.append((f"redux.sync.{op} $r, $r, 0xffffffff;", PTX_REDUX))
    for op in ["min.f32", "max.f32", "min.abs.f32", "max.NaN.f32", "max.abs.NaN.f32"]:
        s.append((f"redux.sync.{op} $f, $f, 0xffffffff;", PTX_REDUX))
    # cvt
    for form in ["cvt.rn.satfinite.e4m3x2.f32 $h, $f, $f;", "cvt.rn.satfinite.e5m2x2.f32 $h, $f, $f;",
                 "cvt.rn.satfinite.relu.e4m3x2.f32 $h, $f, $f;", "cvt.rn.satfinite.e4m3x2.f16x2 $h, $r;",
                 "cvt.rn.f16x2.e4m3x2 $r, $h;", "cvt.rn.f16x2.e5m2x2 $r, $h;", "cvt.rn.relu.f16x2.e4m3x2 $r, $h;",
                 "cvt.rn.satfinite.e2m1x2.f32 $b, $f, $f;", "cvt.rn.f16x2.e2m1x2 $r, $b;",
                 "cvt.rn.satfinite.e2m3x2.f32 $h, $f, $f;", "cvt.rn.satfinite.e3m2x2.f32 $h, $f, $f;",
                 "cvt.rn.f16x2.e2m3x2 $r, $h;", "cvt.rn.f16x2.e3m2x2 $r, $h;",
                 "cvt.rz.satfinite.ue8m0x2.f32 $h, $f, $f;", "cvt.rp.satfinite.ue8m0x2.bf16x2 $h, $r;",
                 "cvt.rn.bf16x2.ue8m0x2 $r, $h;",
                 "cvt.rs.satfinite.e4m3x4.f32 $r, {$f, $f, $f, $f}, $r;",
                 "cvt.rs.satfinite.e5m2x4.f32 $r, {$f, $f, $f, $f}, $r;",
                 "cvt.rs.satfinite.e2m1x4.f32 $h, {$f, $f, $f, $f}, $r;",
                 "cvt.rs.satfinite.e2m3x4.f32 $r, {$f, $f, $f, $f}, $r;",
                 "cvt.rs.f16x2.f32 $r, $f, $f, $r;", "cvt.rs.satfinite.bf16x2.f32 $r, $f, $f, $r;",
                 "cvt.rn.bf16x2.f32 $r, $f, $f;", "cvt.rn.f16x2.f32 $r, $f, $f;", "cvt.rn.bf16.f32 $h, $f;",
                 "cvt.rn.relu.bf16x2.f32 $r, $f, $f;", "cvt.rna.tf32.f32 $r, $f;",
                 "cvt.rn.satfinite.tf32.f32 $r, $f;", "cvt.rna.satfinite.tf32.f32 $r, $f;",
                 "cvt.rn.f16.f32 $h, $f;", "cvt.f32.bf16 $f, $h;",]:
        s.append((form, PTX_CVT))
    # packed f32x2 (Blackwell), bf16x2 math (Ampere), f16x2/bf16x2 ex2/tanh
    s += [("add.rn.f32x2 $l, $l, $l;", PTX_MISC), ("sub.rn.f32x2 $l, $l, $l;", PTX_MISC),
          ("mul.rn.f32x2 $l, $l, $l;", PTX_MISC), ("fma.rn.f32x2 $l, $l, $l, $l;", PTX_MISC),
          ("add.f32x2 $l, $l, $l;", PTX_MISC), ("fma.rn.ftz.f32x2 $l, $l, $l, $l;", PTX_MISC),
          ("fma.rn.bf16x2 $r, $r, $r, $r;", PTX_MISC), ("fma.rn.relu.bf16x2 $r, $r, $r, $r;", PTX_MISC),
          ("add.rn.bf16x2 $r, $r, $r;", PTX_MISC), ("mul.rn.bf16x2 $r, $r, $r;", PTX_MISC),
          ("max.bf16x2 $r, $r, $r;", PTX_MISC), ("min.NaN.f16x2 $r, $r, $r;", PTX_MISC),
          ("ex2.approx.f16x2 $r, $r;", PTX_MISC), ("ex2.approx.ftz.bf16x2 $r, $r;", PTX_MISC),
          ("tanh.approx.f32 $f, $f;", PTX_MISC), ("tanh.approx.bf16x2 $r, $r;", PTX_MISC),
          ("fma.rn.oob.relu.bf16x2 $r, $r, $r, $r;", PTX_MISC)]
    # register reallocation, election, dependent launch, clusters
    s += [("setmaxnreg.inc.sync.aligned.u32 240;", PTX_MISC), ("setmaxnreg.dec.sync.aligned.u32 40;", PTX_MISC),
          ("elect.sync $r|$p, 0xffffffff;", PTX_MISC),
          ("griddepcontrol.wait;", PTX_MISC), ("griddepcontrol.launch_dependents;", PTX_MISC),
          ("mapa.shared::cluster.u32 $r, $r, $r;", PTX_MISC), ("mapa.u64 $l, $l, $r;", PTX_MISC),
          ("barrier.cluster.arrive.relaxed.aligned;", PTX_MISC), ("mov.u32 $r, %cluster_ctarank;", PTX_MISC),
          ("mov.u32 $r, %cluster_nctarank;", PTX_MISC),
          ("nanosleep.u32 $r;", PTX_MISC), ("match.any.sync.b32 $r, $r, 0xffffffff;", PTX_MISC),
          ("activemask.b32 $r;", PTX_MISC), ("bar.warp.sync 0xffffffff;", PTX_MISC)]
    # atomics, cache policies, wide loads
    s += [("atom.global.add.noftz.bf16x2 $r, [$l], $r;", PTX_MISC),
          ("atom.global.add.noftz.bf16 $h, [$l], $h;", PTX_MISC),
          ("atom.global.add.noftz.f16x2 $r, [$l], $r;", PTX_MISC),
          ("atom.global.add.f64 $d, [$l], $d;", PTX_MISC),
          ("atom.global.cas.b128 $q, [$l], $q, $q;", PTX_MISC),
          ("atom.global.exch.b128 $q, [$l], $q;", PTX_MISC),
          ("atom.global.v4.f32.add {$f, $f, $f, $f}, [$l], {$f, $f, $f, $f};", PTX_MISC),
          ("red.global.add.noftz.bf16x2 [$l], $r;", PTX_MISC),
          ("red.global.v4.f32.add [$l], {$f, $f, $f, $f};", PTX_MISC),
          ("createpolicy.fractional.L2::evict_last.b64 $l, 1.0;", PTX_MISC),
          ("createpolicy.fractional.L2::evict_first.L2::evict_unchanged.b64 $l, 0.5;", PTX_MISC),
          ("createpolicy.range.L2::evict_last.L2::evict_first.b64 $l, [$l], $r, $r;", PTX_MISC),
          ("createpolicy.cvt.L2.b64 $l, $l;", PTX_MISC),
          ("ld.global.v8.f32 {$f, $f, $f, $f, $f, $f, $f, $f}, [$l];", PTX_MISC),
          ("ld.global.nc.v8.f32 {$f, $f, $f, $f, $f, $f, $f, $f}, [$l];", PTX_MISC),
          ("ld.global.v8.b32 {$r, $r, $r, $r, $r, $r, $r, $r}, [$l];", PTX_MISC),
          ("ld.global.v4.b64 {$l, $l, $l, $l}, [$l];", PTX_MISC),
          ("ld.global.L2::256B.v8.f32 {$f, $f, $f, $f, $f, $f, $f, $f}, [$l];", PTX_MISC),
          ("st.global.v8.f32 [$l], {$f, $f, $f, $f, $f, $f, $f, $f};", PTX_MISC),
          ("ld.global.nc.L1::no_allocate.v4.f32 {$f, $f, $f, $f}, [$l];", PTX_MISC),
          ("ld.global.L1::evict_last.v4.u32 {$r, $r, $r, $r}, [$l];", PTX_MISC),
          ("ld.global.L2::cache_hint.v4.u32 {$r, $r, $r, $r}, [$l], $l;", PTX_MISC),
          ("discard.global.L2 [$l], 128;", PTX_MISC),
          ("applypriority.global.L2::evict_normal [$l], 128;", PTX_MISC),
          ("prefetch.global.L2::evict_last [$l];", PTX_MISC),
          ("prefetch.tensormap [$l];", PTX_MISC),
          ("cp.async.bulk.prefetch.L2.global [$l], $r;", PTX_MISC),
          ("fence.proxy.tensormap::generic.acquire.gpu [$l], 128;", PTX_MISC),
          ("fence.proxy.tensormap::generic.release.gpu;", PTX_MISC),
          ("fence.proxy.async;", PTX_MISC), ("fence.proxy.async.shared::cta;", PTX_MISC),
          ("fence.acq_rel.gpu;", PTX_MISC), ("fence.sc.cluster;", PTX_MISC)]
    # multimem (NVLink SHARP), beyond CCCL's scalar wrappers
    s += [("multimem.ld_reduce.relaxed.sys.global.add.v4.f32 {$f, $f, $f, $f}, [$l];", PTX_MISC),
          ("multimem.ld_reduce.relaxed.sys.global.add.acc::f32.v4.bf16x2 {$r, $r, $r, $r}, [$l];", PTX_MISC),
          ("multimem.st.relaxed.sys.global.v4.f32 [$l], {$f, $f, $f, $f};", PTX_MISC),
          ("multimem.red.relaxed.sys.global.add.v4.f32 [$l], {$f, $f, $f, $f};", PTX_MISC),
          ("multimem.red.relaxed.sys.global.add.v4.bf16x2 [$l], {$r, $r, $r, $r};", PTX_MISC)]
    # Baselines: the ordinary forms of opcodes that also have arch-gated forms, so that a
    # pattern names the modifier that gates (v8, bf16x2, cluster), never the opcode or a type
    # every target has (st.f32, add, barrier).
    s += [(f, PTX_MISC) for f in [
        "add.f32 $f, $f, $f;", "add.rn.ftz.f32 $f, $f, $f;", "add.rn.f32 $f, $f, $f;", "sub.rn.f32 $f, $f, $f;",
        "mul.rn.f32 $f, $f, $f;", "mul.rn.f64 $d, $d, $d;", "add.rn.f16x2 $r, $r, $r;", "mul.rn.f16x2 $r, $r, $r;",
        "add.s32 $r, $r, $r;", "add.f16x2 $r, $r, $r;",
        "add.f64 $d, $d, $d;", "sub.f32 $f, $f, $f;", "sub.s32 $r, $r, $r;", "mul.f32 $f, $f, $f;",
        "mul.lo.s32 $r, $r, $r;", "mul.wide.u32 $l, $r, $r;", "fma.rn.f32 $f, $f, $f, $f;",
        "fma.rn.ftz.f32 $f, $f, $f, $f;", "fma.rn.f16x2 $r, $r, $r, $r;", "fma.rn.f64 $d, $d, $d, $d;",
        "max.f32 $f, $f, $f;", "max.s32 $r, $r, $r;", "min.f32 $f, $f, $f;", "min.u32 $r, $r, $r;",
        "max.NaN.f32 $f, $f, $f;", "ex2.approx.f32 $f, $f;", "ex2.approx.ftz.f32 $f, $f;",
        "st.global.f32 [$l], $f;", "st.global.v4.f32 [$l], {$f, $f, $f, $f};", "st.global.v2.f32 [$l], {$f, $f};",
        "st.weak.global.cs.v4.f32 [$l], {$f, $f, $f, $f};", "st.shared.b32 [$r], $r;", "st.global.b64 [$l], $l;",
        "st.global.v4.b32 [$l], {$r, $r, $r, $r};", "st.global.v2.b64 [$l], {$l, $l};",
        "ld.global.f32 $f, [$l];", "ld.global.v4.f32 {$f, $f, $f, $f}, [$l];",
        "ld.global.nc.v4.f32 {$f, $f, $f, $f}, [$l];", "ld.global.v2.b64 {$l, $l}, [$l];",
        "ld.global.v4.b32 {$r, $r, $r, $r}, [$l];", "ld.shared.v4.b32 {$r, $r, $r, $r}, [$r];",
        "ld.global.nc.L1::no_allocate.b32 $r, [$l];", "ld.weak.global.b32 $r, [$l];",
        "ld.volatile.global.b32 $r, [$l];", "ld.relaxed.gpu.global.b32 $r, [$l];",
        "ld.acquire.gpu.global.b32 $r, [$l];",
        "red.global.add.f32 [$l], $f;", "red.global.add.u32 [$l], $r;", "red.shared.add.u32 [$r], $r;",
        "red.relaxed.gpu.global.add.s32 [$l], $r;", "red.global.add.f64 [$l], $d;",
        "atom.global.add.f32 $f, [$l], $f;", "atom.global.cas.b32 $r, [$l], $r, $r;",
        "atom.global.cas.b64 $l, [$l], $l, $l;", "atom.shared.add.u32 $r, [$r], $r;",
        "atom.global.exch.b32 $r, [$l], $r;", "atom.global.add.noftz.f16 $h, [$l], $h;",
        "barrier.sync 0;", "barrier.sync.aligned 0;", "barrier.arrive 1, 64;", "bar.sync 0;",
        "fence.sc.gpu;", "fence.acq_rel.sys;", "membar.gl;", "prefetch.global.L2 [$l];", "prefetch.global.L1 [$l];",
        "cvt.f32.f16 $f, $h;", "cvt.rzi.s32.f32 $r, $f;", "cvt.rn.f32.s32 $f, $r;", "cvt.rn.f16.f32 $h, $f;",
        "mov.u32 $r, %tid.x;", "mov.b32 $r, $r;", "mov.b64 $l, {$r, $r};",
        "shfl.sync.bfly.b32 $r, $r, 1, 31, 0xffffffff;",
        "vote.sync.ballot.b32 $r, $p, 0xffffffff;", "tanh.approx.f16x2 $r, $r;",
    ]]
    # operand forms: three-input max/min (f32 only), st.bulk's size as an immediate
    s += [(f, PTX_MAX3) for f in [
        "max.f32 $f, $f, $f, $f;", "max.NaN.f32 $f, $f, $f, $f;", "max.ftz.f32 $f, $f, $f, $f;",
        "max.abs.f32 $f, $f, $f, $f;", "min.f32 $f, $f, $f, $f;", "min.NaN.f32 $f, $f, $f, $f;",
        "max.s32 $r, $r, $r, $r;", "max.u32 $r, $r, $r, $r;", "min.s32 $r, $r, $r, $r;",
        "max.f16x2 $r, $r, $r, $r;", "max.f64 $d, $d, $d, $d;", "max.ftz.NaN.xorsign.abs.f32 $f, $f, $f;"]]
    s.append(("st.bulk.weak.shared::cta [$r], 128, 0;", PTX_STBULK))
    # tcgen05 forms as CUTLASS writes them (block_scale without scale_vec, .block32)
    for kind in ["mxf8f6f4.block_scale", "mxf8f6f4.block_scale.block32", "mxf4.block_scale",
                 "mxf4nvf4.block_scale.block16", "mxf4nvf4.block_scale.scale_vec::4X"]:
        s.append((f"tcgen05.mma.cta_group::1.kind::{kind} [$r], $l, $l, $r, [$r], [$r], $p;", PTX_TCGEN05))
    s += [("tcgen05.mma.cta_group::1.kind::i8 [$r], $l, $l, $r, $p;", PTX_TCGEN05),
          ("tcgen05.mma.cta_group::2.kind::i8 [$r], $l, $l, $r, $p;", PTX_TCGEN05),
          ("tcgen05.mma.cta_group::1.kind::f16 [$r], $l, $l, $r, $p;", PTX_TCGEN05),
          ("tcgen05.mma.cta_group::1.kind::f8f6f4 [$r], $l, $l, $r, $p;", PTX_TCGEN05),
          ("tcgen05.mma.cta_group::1.kind::f16 [$r], [$r], $l, $r, $p;", PTX_TCGEN05),
          ("tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.b64 [$r];", PTX_TCGEN05)]
    return s


def seed_forms() -> list[Form]:
    out = []
    for text, source in seeds():
        counter = itertools.count(40)
        body = re.sub(r"\$([rlhfdpqb])", lambda m: f"%{m.group(1)}{next(counter)}", text)
        out.append(Form(body=body, main=body, source=source))
    return out


# --------------------------------------------------------------------------- ptxas
def _entry(i: int, form: Form) -> str:
    regs = "\n".join(f".reg {t} %{c}<160>;" for c, t in REG.items())
    return f".visible .entry k{i}()\n{{\n{regs}\n{form.body}\nret;\n}}\n"


def _compile(forms: list[Form], idx: list[int], target: str, version: str, tmp: Path):
    """ptxas ``idx`` forms for ``target``: (ok indices, {index: error}, fatal text or None)."""
    head = f".version {version}\n.target {target}\n.address_size 64\n"
    text, spans, line = head, [], head.count("\n") + 1
    for i in idx:
        e = _entry(i, forms[i])
        spans.append((line, line + e.count("\n"), i))
        text += e
        line += e.count("\n")
    path = tmp / f"{target}_{os.getpid()}_{idx[0]}_{len(idx)}.ptx"
    path.write_text(text)
    p = subprocess.run(["ptxas", f"-arch={target}", str(path), "-o", os.devnull], capture_output=True, text=True,
                       timeout=300)
    path.unlink()
    if p.returncode == 0:
        return idx, {}, None
    errs: dict[int, str] = {}
    for m in re.finditer(r"line (\d+); error\s*:\s*(.*)", p.stderr):
        ln = int(m.group(1))
        for a, b, i in spans:
            if a <= ln < b and i not in errs:
                errs[i] = "ptxas error   : " + m.group(2).strip()
    fatal = None if errs else (p.stderr.strip().splitlines() or ["ptxas failed"])[0]
    return [], errs, fatal


def verify_target(forms: list[Form], idx: list[int], target: str, version: str, tmp: Path):
    """(accepted indices, {index: first error}) with every acceptance a clean ptxas run."""
    accepted, errors = [], {}
    queue = [idx[i:i + BATCH] for i in range(0, len(idx), BATCH)]
    while queue:
        batch = queue.pop()
        if not batch:
            continue
        ok, errs, fatal = _compile(forms, batch, target, version, tmp)
        if ok:
            accepted += ok
            continue
        if errs:
            errors.update(errs)
            queue.append([i for i in batch if i not in errs])
        elif len(batch) == 1:
            errors[batch[0]] = fatal
        else:  # a fatal error without a line: split until it names its form
            queue += [batch[:len(batch) // 2], batch[len(batch) // 2:]]
    return accepted, errors


def verify(forms: list[Form], targets: list[str]) -> None:
    with tempfile.TemporaryDirectory() as d, ThreadPoolExecutor(JOBS) as ex:
        tmp = Path(d)
        idx = list(range(len(forms)))
        for target, (ok, errs) in zip(targets, ex.map(lambda t: verify_target(forms, idx, t, MAX_ISA, tmp),
                                                      targets)):
            for i in ok:
                forms[i].accepted.add(target)
            for i, e in errs.items():
                forms[i].errors[target] = e.replace(f"'{target}'", "'{target}'")


def probe_isa(forms: list[Form], targets: list[str]) -> None:
    """Lowest .version at which each form compiles for its lowest accepting target."""
    order = {t: n for n, t in enumerate(targets)}
    by_target: dict[str, list[int]] = {}
    for i, f in enumerate(forms):
        if f.accepted:
            by_target.setdefault(min(f.accepted, key=order.get), []).append(i)

    def run(target):
        found, pending = {}, by_target[target]
        with tempfile.TemporaryDirectory() as d:
            for v in ISA_VERSIONS:
                if not pending:
                    break
                ok, _errs = verify_target(forms, pending, target, v, Path(d))
                for i in ok:
                    found[i] = v
                pending = [i for i in pending if i not in found]
        return found

    with ThreadPoolExecutor(JOBS) as ex:
        for found in ex.map(run, sorted(by_target)):
            for i, v in found.items():
                forms[i].min_isa = v


# --------------------------------------------------------------------------- patterns
def learn(forms: list[Form], all_targets: list[str], operand_ops=frozenset()):
    """Token patterns per opcode: (opcode, modifiers) -> targets, chosen so that the
    intersection over matching patterns reproduces each verified form's targets. Opcodes in
    ``operand_ops`` are keyed with their operand pseudo-modifiers too, and their forms that
    ptxas refuses everywhere count (accepted by no target)."""
    by_op: dict[str, list[Form]] = {}
    for f in forms:
        if f.accepted or (f.key[0] in operand_ops and _refused(f)):
            by_op.setdefault(f.key[0], []).append(f)
    full = frozenset(all_targets)
    patterns = {}
    inexact = []
    for op, fs in sorted(by_op.items()):
        # Forms with the same tokens but different targets (an operand decides: a count, an
        # immediate scale) are one token form accepted by the union: never claim less.
        merged: dict[frozenset, frozenset] = {}
        for f in fs:
            m = frozenset(f.key_with(operand_ops)[1])
            if m in merged and merged[m] != frozenset(f.accepted):
                inexact.append((op, sorted(m)))
            merged[m] = merged.get(m, frozenset()) | frozenset(f.accepted)
        mods = list(merged)
        acc = [merged[m] for m in mods]

        def targets_of(p):
            return frozenset().union(*(a for m, a in zip(mods, acc) if p <= m))

        chosen = {frozenset(): targets_of(frozenset())}
        freq = {}
        for m in mods:
            for x in m:
                freq[x] = freq.get(x, 0) + 1

        def predict(m):
            out = full
            for p, t in chosen.items():
                if p <= m:
                    out &= t
            return out

        def error():
            return sum(len(predict(m) - a) for m, a in zip(mods, acc))

        for _round in range(400):
            bad = [(m, a) for m, a in zip(mods, acc) if predict(m) != a]
            if not bad:
                break
            best = None
            base = error()
            m0, _a0 = min(bad, key=lambda x: (len(x[0]), sorted(x[0])))
            for size in (1, 2, 3):
                for combo in itertools.combinations(sorted(m0), size):
                    p = frozenset(combo)
                    if p in chosen:
                        continue
                    chosen[p] = targets_of(p)
                    gain = base - error()
                    del chosen[p]
                    # equal gains: written modifiers over operand pseudo-modifiers (which the scanner
                    # cannot always see), then the rarer (v8, block_scale) over common ones (f32, sync)
                    rarity = -sum(freq[x] for x in p)
                    pseudo = -sum(x.startswith("operand") for x in p)
                    if gain > 0 and (best is None or (pseudo == 0, gain, pseudo, rarity) > best[0]):
                        best = ((pseudo == 0, gain, pseudo, rarity), p)
                if best:
                    break
            if best is None:
                p = m0  # nothing smaller helps: the form's own modifier set
                if p in chosen:  # not even that (a superset form accepts more): keep the union
                    inexact.append((op, sorted(m0)))
                    mods_acc = [(m, a) for m, a in zip(mods, acc) if m != m0]
                    mods, acc = [m for m, _ in mods_acc], [a for _, a in mods_acc]
                    continue
                chosen[p] = targets_of(p)
            else:
                chosen[best[1]] = targets_of(best[1])
        # drop patterns that change no prediction
        before = [predict(m) for m in mods]
        # (those naming operand pseudo-modifiers first: a written modifier that says the same stays)
        for p in sorted(chosen, key=lambda p: (-any(x.startswith("operand") for x in p), -len(p), sorted(p))):
            if not p:
                continue
            t = chosen.pop(p)
            if [predict(m) for m in mods] != before:
                chosen[p] = t
        for p, t in chosen.items():
            patterns[(op, tuple(sorted(p)))] = t
    return patterns, inexact


def doc_targets(sms: tuple[str, ...], all_targets: list[str]) -> set[str]:
    """The targets the documentation's 'SM_90' / 'SM_100a' / 'SM_100f' names, read literally."""
    out = set()
    for sm in sms:
        m = re.fullmatch(r"SM_(\d+)([af]?)", sm)
        if not m:
            continue
        n, suf = int(m.group(1)), m.group(2)
        for t in all_targets:
            tn = int(re.match(r"sm_(\d+)", t).group(1))
            if suf == "" and tn >= n:
                out.add(t)
            elif suf == "a" and t == f"sm_{n}a":
                out.add(t)
            elif suf == "f" and t[-1] in "af" and tn // 10 == n // 10 and tn >= n:
                out.add(t)
    return out


# --------------------------------------------------------------------------- output
def _q(s: str) -> str:
    return json.dumps(s)


def write_table(forms, patterns, inexact, wrappers, all_targets, ptxas_version, path: Path,
                operand_ops=frozenset()) -> None:
    order = {t: n for n, t in enumerate(all_targets)}
    full = set(all_targets)
    lines = [
        "# PTX instruction forms and the compile targets whose ptxas accepts them.",
        "# GENERATED by tools/gen_ptx_table.py: do not edit; rerun it instead.",
        f"# ptxas: {ptxas_version}",
        f"# Forms: CCCL {CCCL_DIR} (the asm statement of every wrapper) and the generator's",
        "# SEEDS (forms CCCL does not wrap, each citing its PTX ISA section); every form was",
        f"# compiled with ptxas for all {len(all_targets)} targets of version_matrix/gpus.toml [target.*].",
        "# [pattern.*]: opcode + modifiers; an instruction having all the modifiers is accepted only",
        "#   by `targets`; an instruction's targets are the intersection over every pattern it matches.",
        "#   min_ptx: lowest .version ptxas accepts on the lowest accepting target (over covered forms);",
        "#   error: ptxas's message for the rejecting target closest to acceptance, for the form in `example`;",
        "#   errors: other ptxas messages of covered forms, keyed by their forms' modifiers (error_key: the",
        "#   example's); a finding quotes the message whose key shares most modifiers with its instruction;",
        "#   doc: the CCCL documentation's claim, with `disagrees` where ptxas differs (ptxas wins).",
        "# operand_opcodes: opcodes whose forms of the same tokens ptxas judges differently by their",
        "#   operands; their patterns may name operand pseudo-modifiers (operands::N, operandI::CLASS,",
        "#   cuda/cpp/ptx.py shape), and their forms refused by every target count (targets = []).",
        "# [wrapper.*]: cuda::ptx functions and the targets their CCCL guard compiles the PTX for.",
        "",
        f"targets = [{', '.join(_q(t) for t in all_targets)}]",
        f"forms = {sum(1 for f in forms if f.accepted)}",
        f"operand_opcodes = [{', '.join(_q(o) for o in sorted(operand_ops))}]",
        "",
    ]
    by_op = {}
    for f in forms:
        if f.accepted or (f.key[0] in operand_ops and _refused(f)):
            by_op.setdefault(f.key[0], []).append(f)
    for (op, mods), targets in sorted(patterns.items()):
        covered = [f for f in by_op[op] if set(mods) <= set(f.key_with(operand_ops)[1])]
        if set(targets) == full and not mods:
            continue  # the opcode needs nothing any target lacks
        # the form that shows the restriction: accepted exactly by `targets` if any, else the first
        ex = next((f for f in covered if f.accepted == set(targets)), covered[0])
        rejecting = [t for t in all_targets if t not in targets]
        # the rejecting target closest to acceptance names the feature (sm_90 for wgmma, not sm_75's bf16)
        near = max(rejecting, key=lambda t: (int(re.match(r"sm_(\d+)", t).group(1)), order[t])) if rejecting else None
        err = ex.errors.get(near, "") if near else ""
        isas = [f.min_isa for f in covered if f.min_isa]
        min_isa = min(isas, key=lambda v: ISA_VERSIONS.index(v)) if isas else ""
        key = " ".join([op, *mods])
        lines.append(f"[pattern.{_q(key)}]")
        lines.append(f"opcode = {_q(op)}")
        lines.append(f"modifiers = [{', '.join(_q(m) for m in mods)}]")
        lines.append(f"targets = [{', '.join(_q(t) for t in sorted(targets, key=order.get))}]")
        lines.append(f"min_ptx = {_q(min_isa)}")
        if err:
            lines.append(f"error = {_q(err)}")
        # ptxas names the instruction (tcgen05.alloc vs tcgen05.mma, wgmma with integer types):
        # one message per distinct text, keyed by the modifiers of its most generic form; the
        # scanner quotes the one whose key shares most modifiers with the instruction it reports.
        per = {}
        for f in sorted(covered, key=lambda f: (len(f.key_with(operand_ops)[1]), f.key_with(operand_ops)[1])):
            e = f.errors.get(near, "") if near else ""
            if e and e != err and e not in per.values():
                per[" ".join(f.key_with(operand_ops)[1])] = e
        if per:
            lines.append("errors = {" + ", ".join(f"{_q(k)} = {_q(v)}" for k, v in sorted(per.items())) + "}")
            lines.append(f"error_key = {_q(' '.join(ex.key_with(operand_ops)[1]))}")
        lines.append(f"example = {_q(ex.main.strip())}")
        lines.append(f"covers = {len(covered)}")
        docs = sorted({f.doc for f in covered if f.doc})
        if docs:
            lines.append(f"doc = {_q('; '.join(docs[:4]) + ('; ...' if len(docs) > 4 else ''))}")
            dis = []
            for f in covered:
                if f.doc_sms:
                    dt = doc_targets(f.doc_sms, all_targets)
                    if dt != f.accepted:
                        extra = sorted(f.accepted - dt, key=order.get)
                        miss = sorted(dt - f.accepted, key=order.get)
                        d = (f"documented {', '.join(f.doc_sms)}" + (f"; ptxas also accepts {', '.join(extra)}" if
                                                                      extra else "")
                             + (f"; ptxas rejects {', '.join(miss)}" if miss else ""))
                        if d not in dis:
                            dis.append(d)
            if dis:
                lines.append(f"disagrees = {_q(' | '.join(dis[:3]) + (' | ...' if len(dis) > 3 else ''))}")
        srcs = sorted({f.source for f in covered})
        src = "; ".join(srcs[:3]) + ("; ..." if len(srcs) > 3 else "") + "; verified with " + ptxas_version
        lines.append(f"source = {_q(src)}")
        lines.append("")
    if inexact:
        lines.append("# Forms no pattern set separates (same tokens, different targets; the union is kept):")
        for op, mods in sorted(set((op, tuple(m)) for op, m in inexact)):
            lines.append(f"#   {op} {' '.join(mods)}")
        lines.append("")
    seen = {}
    for w in wrappers:
        t = guard_targets(w["guard"], all_targets)
        if t is None:
            continue
        entry = seen.setdefault(w["name"], [set(), w, -1])
        entry[0].update(t)
        if len(t) > entry[2]:  # the overload with the weakest requirement names the error
            entry[1], entry[2] = w, len(t)
    for name, (t, w, _n) in sorted(seen.items()):
        lines.append(f"[wrapper.{name}]")
        lines.append(f"targets = [{', '.join(_q(x) for x in sorted(t, key=order.get))}]")
        lines.append(f"ptx = {_q(w['doc'])}")
        if w["extern"]:
            lines.append(f"error = {_q('ptxas fatal   : Unresolved extern function ' + repr(w['extern']))}")
        src = f"CCCL {w['header']} (CUDA 13.0): the union over its overloads of the targets their #if guard compiles " \
              "the asm for"
        lines.append(f"source = {_q(src)}")
        lines.append("")
    path.write_text("\n".join(lines))


def guard_targets(guard: str, all_targets: list[str]) -> set[str] | None:
    """Targets for which CCCL's ``#if _CCCL_CUDA_COMPILER(NVHPC) || <guard>`` holds."""
    if not guard:
        return None
    out = set()
    for t in all_targets:
        n = int(re.match(r"sm_(\d+)", t).group(1))
        env = {"__CUDA_ARCH__": n * 10}
        if t.endswith("a"):
            env[f"__CUDA_ARCH_FEAT_SM{n}_ALL"] = 1
        expr = re.sub(r"__CUDA_ARCH_FEAT_SM\d+_ALL", lambda m: str(env.get(m.group(0), 0)), guard)
        expr = expr.replace("__CUDA_ARCH__", str(env["__CUDA_ARCH__"])).replace("||", " or ").replace("&&", " and ")
        if not re.fullmatch(r"[\d\s<>=!orand()]+", expr):
            return None
        if eval(expr):  # noqa: S307 - digits and comparison operators only (checked above)
            out.add(t)
    return out


def all_targets() -> list[str]:
    doc = tomllib.loads((ROOT / "version_matrix" / "gpus.toml").read_text())
    return list(doc["target"])


def ptxas_version() -> str:
    out = subprocess.run(["ptxas", "--version"], capture_output=True, text=True).stdout
    return out.strip().splitlines()[-2].strip() if out else "unknown"


def collect(cccl_dir: Path):
    cf, wrappers = cccl_forms(cccl_dir) if cccl_dir.is_dir() else ([], [])
    forms, seen = [], set()
    narrowed = set()
    for f in cf + seed_forms():
        if f.body in seen:
            continue
        if "32-bit register" in f.source:
            # one narrowed form per opcode, leading modifier and operand is enough to learn from
            k = (f.key[0], f.key[1][:1], f.source)
            if k in narrowed:
                continue
            narrowed.add(k)
        seen.add(f.body)
        forms.append(f)
    return forms, wrappers


def operand_opcodes(forms: list[Form]) -> set[str]:
    """Opcodes with forms of the same tokens that ptxas judges differently, told apart by their
    operands (count or register class): only these are keyed by operand pseudo-modifiers. A
    form refused everywhere counts when ptxas names an error (not a parse failure) for it."""
    groups: dict[tuple, list[Form]] = {}
    for f in forms:
        if f.accepted or _refused(f):
            groups.setdefault(f.key, []).append(f)
    out = set()
    for key, fs in groups.items():
        seen: dict[tuple, frozenset] = {}
        for f in fs:
            seen.setdefault(f.shape, frozenset(f.accepted))
        if len(set(seen.values())) > 1:
            out.add(key[0])
    return out


def _refused(f: Form) -> bool:
    return bool(f.errors) and all(e.startswith("ptxas error") for e in f.errors.values())


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--cccl", type=Path, default=CCCL_DIR)
    ap.add_argument("--out", type=Path, default=OUT)
    ap.add_argument("--dump", type=Path, help="also write every verified form as JSON (for measurements)")
    ap.add_argument("--no-isa", action="store_true", help="skip the minimum-ISA probe")
    args = ap.parse_args(argv)
    targets = all_targets()
    forms, wrappers = collect(args.cccl)
    print(f"{len(forms)} forms, {len(targets)} targets", file=sys.stderr)
    verify(forms, targets)
    # immediates that the default does not fit: retry forms no target accepts
    dead = [f for f in forms if not f.accepted]
    print(f"{len(dead)} forms accepted by no target", file=sys.stderr)
    if not args.no_isa:
        probe_isa(forms, targets)
    ops = operand_opcodes(forms)
    patterns, inexact = learn(forms, targets, ops)
    write_table(forms, patterns, inexact, wrappers, targets, ptxas_version(), args.out, ops)
    if args.dump:
        args.dump.write_text(json.dumps([{"main": f.main, "body": f.body, "source": f.source, "doc": f.doc,
                                          "accepted": sorted(f.accepted), "errors": f.errors,
                                          "min_isa": f.min_isa} for f in forms], indent=0))
    for f in dead:
        print(f"  unverified: {f.main.strip()[:100]} :: {next(iter(f.errors.values()), '')[:120]}", file=sys.stderr)
    print(f"{len(patterns)} patterns, {len(inexact)} inexact; wrote {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
