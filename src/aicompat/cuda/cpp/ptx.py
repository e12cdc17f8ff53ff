"""PTX text as instructions: the mnemonic with its dot modifiers, never substrings.

``tcgen05.mma.cta_group::1.kind::mxf8f6f4.block_scale [%0], ...;`` is the opcode
``tcgen05`` with the modifiers ``mma``, ``cta_group::1``, ``kind::mxf8f6f4``,
``block_scale``. Special registers named as operands (``%%cluster_ctarank``) count
as modifiers too: they, not the mnemonic, carry the requirement of ``mov``.
Shared by the scanner (cuda/cpp/scan.py) and the table generator (tools/gen_ptx_table.py).

Some forms differ only in their operands (``max.f32 d, a, b, c`` with three inputs needs sm_100;
``st.bulk``'s size must be 64-bit): ``shape`` gives them as pseudo-modifiers, ``operands::N`` and
``operandI::CLASS`` (CLASS from the register's asm constraint, or ``imm``), which the table uses
only for the opcodes whose ptxas verdicts they separate (its ``operand_opcodes``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .brackets import split_top

_COMMENT = re.compile(r"//[^\n]*|/\*.*?\*/", re.S)
_LABEL = re.compile(r"^[A-Za-z_$][\w$]*:(?!:)\s*")
_GUARD = re.compile(r"^@!?%{0,2}\w+\s+")
_MNEMONIC = re.compile(r"[a-z][a-z0-9_]*(?:\.[A-Za-z0-9_]+(?:::[A-Za-z0-9_]+)*)*")
# %%tid.x, %cluster_ctarank; not %0, %r12, %rd3 (operands and numbered registers)
_SPECIAL = re.compile(r"%{1,2}([a-z][a-z_]*(?:\.[xyz])?)(?![\w.])")
_NUMBERED = re.compile(r"[a-z]+\d+")
# One operand: a register, immediate, address, vector or label; never two words.
_OPERAND = re.compile(r"\s*(?:\{[^{}]*\}|\[[^\[\]]*\]|[-!]?[\w%$.:+]+(?:\|[\w%$.]+)?)\s*")


@dataclass(frozen=True)
class Instruction:
    start: int  # offset of the mnemonic in the scanned text
    opcode: str  # "tcgen05"
    modifiers: tuple[str, ...]  # ("mma", "cta_group::1", "kind::f16") plus special registers ("%clusterid.x")
    text: str  # the mnemonic as written: "tcgen05.mma.cta_group::1.kind::f16"
    terminated: bool  # ended by ';' (not by the end of the text)
    operands_ok: bool  # the operands parse as PTX operands
    operands: tuple[str, ...] = ()  # as written: "%0", "[%1]", "{%2, %3}", "128"

    @property
    def mnemonic(self) -> str:
        return self.text


def _blank_comments(text: str) -> str:
    return _COMMENT.sub(lambda m: " " * len(m.group(0)), text)


def instructions(text: str) -> list[Instruction]:
    """Every instruction statement in PTX ``text`` (directives and labels skipped)."""
    clean = _blank_comments(text)
    out = []
    start = 0
    ends = [m.start() for m in re.finditer(";", clean)]
    for end in ends + [len(clean)]:
        stmt_start = start
        stmt = clean[start:end]
        terminated = end < len(clean)
        start = end + 1
        lead = len(stmt) - len(stmt.lstrip(" \t\r\n{}"))
        s = stmt[lead:]
        pos = stmt_start + lead
        while True:
            lm = _LABEL.match(s) or _GUARD.match(s)
            if not lm:
                break
            s, pos = s[lm.end():], pos + lm.end()
        if not s or s[0] == ".":
            continue
        mm = _MNEMONIC.match(s)
        if not mm:
            continue
        word = mm.group(0)
        rest = s[mm.end():]
        if rest and not rest[0].isspace():
            continue  # "foo(" or "x=": not an instruction
        parts = word.split(".")
        specials = tuple(f"%{n}" for n in _SPECIAL.findall(rest) if not _NUMBERED.fullmatch(n.split(".")[0]))
        ops = rest.strip()
        split = tuple(o.strip() for o in split_top(ops)) if ops else ()  # {v0, v1} and [a] are one
        operands_ok = not ops or all(_OPERAND.fullmatch(o) for o in split)
        out.append(Instruction(pos, parts[0], tuple(parts[1:]) + specials, word, terminated, operands_ok, split))
    return out


# Register classes by asm constraint letter ("r"(x) is a 32-bit register); the generator's own
# registers are named by the same letters (%r40, %l41).
CLASSES = {"r": "b32", "l": "b64", "h": "b16", "f": "f32", "d": "f64", "n": "imm", "i": "imm"}
_IMM = re.compile(r"-?(?:0[xX][0-9a-fA-F]+|0[fFdD][0-9a-fA-F]+|\d+(?:\.\d*)?)[uU]?")


def shape(ins: Instruction, klass=None) -> tuple[str, ...]:
    """The operand pseudo-modifiers of ``ins``: its operand count, and the class of each plain
    operand that ``klass`` (operand text -> class or None) or an immediate's form tells."""
    out = [f"operands::{len(ins.operands)}"]
    for i, o in enumerate(ins.operands):
        c = "imm" if _IMM.fullmatch(o) else (klass(o) if klass is not None and o[:1] == "%" else None)
        if c:
            out.append(f"operand{i}::{c}")
    return tuple(out)
