"""Arch-gated instructions in CUDA/PTX source, and the verdict per compile target.

What is matched, each by tokens and never as a substring of an identifier:
- PTX in string literals (asm templates; adjacent literals are joined with their
  line structure kept, so a finding names the line of the instruction itself):
  each statement's mnemonic and dot modifiers are looked up in the ptxas-verified
  table version_matrix/ptx_instructions.toml (cuda/cpp/ptx.py tokenises);
- ``cuda::ptx::`` calls by their CCCL function name ([wrapper.*] of the same table),
  also through ``namespace ptx = cuda::ptx``; a project's own ``ptx::`` is not CCCL's;
- C++ intrinsics, runtime calls and attributes (version_matrix/cuda_features.toml);
- CUTLASS/CuTe atoms that name an instruction (version_matrix/cuda_atoms.toml): CuTe compiles
  them everywhere and puts a trap where the instruction is not compiled, so those are
  "traps at run time" (kept with the dropped ones: a warning), never compile failures.
A feature named in a ``#define`` body counts where the macro is used. The
preprocessor decides which occurrences a compile target really compiles.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass, field

from .cxx import dead_lines
from .preprocessor import (
    CompileTarget,
    Context,
    MacroTable,
    Preprocessed,
    logical_lines,
    macro_table,
    preprocess,
    strip_comments,
)
from .ptx import CLASSES, instructions, shape
from .toolkits import candidates as toolkit_candidates

_DEFINE = re.compile(r"^\s*#\s*define\s+([A-Za-z_]\w*)")
_IDENT = re.compile(r"[A-Za-z_]\w*")
_FUNC_HEADER = re.compile(r"__global__|__device__")
_ASM = re.compile(r"\b(?:asm|__asm__|__asm)\s*(?:(?:volatile|__volatile__|goto|inline)\s*)*\(")
_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "\\": "\\", '"': '"', "'": "'", "0": "\0", "a": "\a", "v": "\v"}
# cuda::ptx::NAME( ... ) or ptx::NAME( when `ptx` is CCCL's; not part of another namespace (foo::ptx::)
_PTX_CALL = re.compile(r"(?<![\w:])(?:::)?(cuda::ptx::|ptx::)(\w+)\s*(?:<[^;{}()]*>\s*)?\(")
_PTX_ALIAS = re.compile(r"\bnamespace\s+ptx\s*=\s*(?:::)?cuda::ptx\s*;|\busing\s+namespace\s+(?:::)?cuda\s*;")
_OWN_PTX = re.compile(r"\bnamespace\s+ptx\s*\{")


@dataclass(frozen=True)
class Feature:
    """A C++-level feature (intrinsic, runtime call, attribute) from cuda_features.toml."""

    name: str
    summary: str
    patterns: tuple[re.Pattern, ...]
    targets: frozenset[str]  # compile targets whose nvcc accepts it
    error: str
    context: re.Pattern | None = None  # counted only in files that also match this


@dataclass(frozen=True)
class Pattern:
    """One [pattern.*] of ptx_instructions.toml."""

    key: str  # "tcgen05 mma kind::mxf8f6f4"
    modifiers: frozenset[str]
    targets: frozenset[str]
    error: str
    errors: tuple[tuple[frozenset[str], str], ...] = ()  # (modifiers of a form, ptxas's message for it)


@dataclass
class Knowledge:
    """Everything the scanner matches, loaded from the matrix once per rule."""

    features: dict[str, Feature]
    patterns: dict[str, list[Pattern]]  # opcode -> patterns
    wrappers: dict[str, tuple[frozenset[str], str]]  # cuda::ptx function -> (targets, error)
    all_targets: frozenset[str] = frozenset()
    atoms: list[tuple[re.Pattern, dict]] = field(default_factory=list)  # (name pattern, cuda_atoms.toml entry)
    macros: MacroTable | None = None  # cuda_macros.toml, for the preprocessor (None: the shipped one)
    target_table: dict[str, dict] = field(default_factory=dict)  # gpus.toml [target.*]
    operand_opcodes: frozenset[str] = frozenset()  # opcodes whose operands decide (ptx_instructions.toml)

    def requirement(self, ins, klass=None) -> Pattern | None:
        """The requirement of one tokenised instruction: with its operand pseudo-modifiers where its
        opcode's forms differ by operands (``klass``: operand text -> register class, or None)."""
        mods = ins.modifiers
        if ins.opcode in self.operand_opcodes:
            mods = mods + shape(ins, klass)
        return self.instruction(ins.opcode, mods)

    def instruction(self, opcode: str, modifiers) -> Pattern | None:
        """The requirement of one PTX instruction: the intersection of every matching
        pattern's targets, named by the most restrictive one; None if nothing is required."""
        pats = self.patterns.get(opcode)
        if not pats:
            return None
        mods = set(modifiers)
        hits = [p for p in pats if p.modifiers <= mods or _immediate_fits(p, mods, pats)]
        if not hits:
            return None
        targets = frozenset.intersection(*(p.targets for p in hits))
        if targets >= self.all_targets:
            return None
        named = min(hits, key=lambda p: (len(p.targets), -len(p.modifiers), p.key))
        # the message of the verified form most like this instruction (ties: the pattern's own)
        error, best = named.error, None
        imm = {_operand_slot(m) for m in mods if m.endswith("::imm")} - {None}
        for key, msg in named.errors:
            if imm:  # an immediate is as like a register of its slot as the verified form's
                key = frozenset(f"{_operand_slot(m)}::imm" if _operand_slot(m) in imm else m for m in key)
            score = (len(key & mods) - len(key - mods), msg == named.error)
            if best is None or score > best:
                error, best = msg, score
        # shown as the feature's name: the operand pseudo-modifiers are the table's, not PTX's
        label = " ".join(w for w in named.key.split() if _operand_slot(w) is None and not w.startswith("operands::"))
        return Pattern(label or named.key, named.modifiers, targets, error)

    # mapping-like access kept for callers that list features
    def __getitem__(self, name):
        return self.features[name]

    def values(self):
        return self.features.values()

    def items(self):
        return self.features.items()


@dataclass
class Occurrence:
    feature: str  # "wgmma", "tcgen05 mma kind::mxf8f6f4", "cuda::ptx::tcgen05_alloc", "bf16x2_math"
    line: int  # 1-based, in the CUDA source
    token: str  # what the source says: the mnemonic as written, the call, the macro
    targets: frozenset[str] = frozenset()  # compile targets that accept it
    error: str = ""  # the compiler's message for a rejecting target ('{target}' to fill in)
    column: int = 0  # 1-based column of the token on its line, 0 if unknown
    trap: str = ""  # a CuTe atom: compiles everywhere, traps where its guard (this macro) is off
    unknown: frozenset[str] = frozenset()  # targets where that is not known


@dataclass
class Verdict:
    target: str
    status: str  # "ok" | "fail" | "empty"
    failing: list[Occurrence] = field(default_factory=list)  # compiled but not accepted
    dropped: list[Occurrence] = field(default_factory=list)  # accepted but compiled out


@dataclass
class _Literal:
    content: str  # the decoded text of a run of adjacent string literals
    offsets: list[int]  # source offset of each content character
    in_asm: bool  # the template of an asm statement
    classes: dict[str, str] = field(default_factory=dict)  # "%1" -> "b64", from the asm's constraints


class CudaSource:
    """One CUDA translation unit (or, with ``ptx=True``, PTX text): its occurrences,
    and per-target verdicts."""

    def __init__(self, text: str, knowledge: Knowledge, ptx: bool = False) -> None:
        self.clean = strip_comments(text) if not ptx else text
        self.knowledge = knowledge
        self._line_starts = [0] + [m.end() for m in re.finditer("\n", self.clean)]
        found: list[Occurrence] = []
        if ptx:
            found += self._ptx_occurrences(_Literal(self.clean, list(range(len(self.clean))), True,
                                                    _declared_classes(self.clean)))
        else:
            for lit in _literals(self.clean):
                found += self._ptx_occurrences(lit)
            found += self._wrapper_occurrences()
            found += self._feature_occurrences()
            found += self._atom_occurrences()
        self.occurrences: list[Occurrence] = []
        if ptx:
            self.occurrences = found
        else:
            self._attach_macros(found)
        self.occurrences.sort(key=lambda o: (o.line, o.column, o.token))
        self._pp: dict[str, Preprocessed] = {}

    # -- matching ------------------------------------------------------------------
    def _pos(self, offset: int) -> tuple[int, int]:
        i = bisect.bisect_right(self._line_starts, offset) - 1
        return i + 1, offset - self._line_starts[i] + 1

    def _ptx_occurrences(self, lit: _Literal) -> list[Occurrence]:
        out = []
        for ins in instructions(lit.content):
            if not lit.in_asm and not (ins.terminated and ins.operands_ok):
                continue  # a string outside asm() counts only if it reads as a PTX statement
            req = self.knowledge.requirement(ins, lit.classes.get)
            if req is None:
                continue
            line, col = self._pos(lit.offsets[ins.start])
            out.append(Occurrence(req.key, line, ins.text, req.targets, req.error, col))
        return out

    def _wrapper_occurrences(self) -> list[Occurrence]:
        wrappers = self.knowledge.wrappers
        if not wrappers or "ptx::" not in self.clean:
            return []
        alias = bool(_PTX_ALIAS.search(self.clean)) and not _OWN_PTX.search(self.clean)
        out = []
        for m in _PTX_CALL.finditer(self.clean):
            if m.group(1) == "ptx::" and not alias:
                continue
            w = wrappers.get(m.group(2))
            if w is None:
                continue
            line, col = self._pos(m.start(1))
            out.append(Occurrence(f"cuda::ptx::{m.group(2)}", line, f"{m.group(1)}{m.group(2)}", w[0], w[1], col))
        return out

    def _feature_occurrences(self) -> list[Occurrence]:
        out = []
        for f in self.knowledge.values():
            if f.context is not None and not f.context.search(self.clean):
                continue
            for p in f.patterns:
                for m in p.finditer(self.clean):
                    line, col = self._pos(m.start())
                    name = m.group(0).rstrip("( \t")
                    # one entry covers a family of intrinsics: its message names the one used
                    out.append(Occurrence(f.name, line, name, f.targets, f.error.replace("{name}", name), col))
        return out

    def _atom_occurrences(self) -> list[Occurrence]:
        out = []
        # A project's own struct of the same name (DeepGEMM's ptx::SM90_U32x2_STSM_N, FlashMLA's
        # SM100_MMA_*) is not CuTe's: its asm, if any, is judged as PTX where it is written.
        own = set(_OWN_STRUCT.findall(self.clean))
        for pat, e in self.knowledge.atoms:
            seen_lines = set()
            for m in pat.finditer(self.clean):
                line, col = self._pos(m.start())
                if line in seen_lines or m.group(0) in own or _chosen_at_compile_time(self.clean, m.start()):
                    continue
                qual = _QUALIFIER.search(self.clean, max(0, m.start() - 80), m.start())
                if qual is not None and qual.group(1) != "cute":
                    continue  # another namespace's type of the same name
                seen_lines.add(line)
                out.append(Occurrence(f"CuTe {e['instruction']} atom", line, m.group(0), frozenset(e["targets"]),
                                      "", col, trap=e["guard"], unknown=frozenset(e["unknown"])))
        return out

    def _attach_macros(self, found: list[Occurrence]) -> None:
        """Occurrences inside a #define body belong to the macro: they count where it is used."""
        lines = logical_lines(self.clean)
        spans = []  # (first line, last line, macro name)
        for lineno, line in lines:
            dm = _DEFINE.match(line)
            if dm:
                spans.append((lineno, lineno + line.count("\n") + _continuations(self.clean, lineno), dm.group(1)))
        macro_features: dict[str, list[Occurrence]] = {}
        for occ in found:
            span = next((s for s in spans if s[0] <= occ.line <= s[1]), None)
            if span is None:
                self.occurrences.append(occ)
            else:
                macro_features.setdefault(span[2], []).append(occ)
        if not macro_features:
            return
        # Macros that name other feature-bearing macros (WG_FENCE -> WG_ASM("wgmma...")).
        for _ in range(3):
            for first, last, name in spans:
                body = " ".join(t for ln, t in lines if first <= ln <= last)
                for ident in set(_IDENT.findall(body)) & set(macro_features):
                    if ident != name:
                        for occ in macro_features[ident]:
                            if occ not in macro_features.setdefault(name, []):
                                macro_features[name].append(occ)
        in_define = {ln for first, last, _ in spans for ln in range(first, last + 1)}
        for lineno, line in lines:
            if lineno in in_define:
                continue
            for m in _IDENT.finditer(line):
                for occ in macro_features.get(m.group(0), []):
                    self.occurrences.append(Occurrence(occ.feature, lineno, f"{m.group(0)} ({occ.token})", occ.targets,
                                                       occ.error, m.start() + 1, occ.trap, occ.unknown))

    # -- verdicts ------------------------------------------------------------------
    def _blocks(self) -> list[tuple[int, int, str]]:
        """(open line, close line, header) of every {...} block, for finding functions."""
        if hasattr(self, "_block_cache"):
            return self._block_cache
        blocks, stack = [], []
        line, last_break = 1, 0
        text = self.clean
        for i, ch in enumerate(text):
            if ch == "\n":
                line += 1
            elif ch == "{":
                stack.append((line, text[last_break:i]))
                last_break = i + 1
            elif ch == "}":
                if stack:
                    open_line, header = stack.pop()
                    blocks.append((open_line, line, header))
                last_break = i + 1
            elif ch == ";":
                last_break = i + 1
        self._block_cache = blocks
        return blocks

    def _function_does_more(self, line: int, pp: Preprocessed) -> bool:
        """Does the function around ``line`` keep other compiled statements, so that
        dropping the feature does not leave the kernel empty?"""
        funcs = [b for b in self._blocks() if b[0] <= line <= b[1] and _FUNC_HEADER.search(b[2])]
        if not funcs:
            return True  # not inside a function we can see: do not claim it vanishes
        open_line, close_line, header = min(funcs, key=lambda b: b[1] - b[0])
        if pp.live.get(open_line, True) is False:
            return True  # the #if holds the whole function: it is not compiled at all, not emptied
        code = "\n".join(ln for ln in header.split("\n") if not ln.lstrip().startswith("#"))
        if "__global__" not in code:
            # A device helper emptied for some targets is often a deliberate no-op there (SGLang's
            # PDLWaitPrimary: "on older architectures this is a no-op"); what its kernels still do
            # is not known here, so only an emptied kernel is claimed.
            return True
        for ln, text in logical_lines(self.clean):
            if open_line < ln < close_line and ";" in text and pp.live.get(ln, True) is not False \
                    and not text.lstrip().startswith("#"):
                return True
        return False

    # Where the source lives and how it is built (include dirs, -D flags, -rdc): set by
    # the caller; None for a string compiled from Python (a translation unit of its own).
    context: Context | None = None

    def with_context(self, context: Context) -> "CudaSource":
        """The same source (its occurrences are shared) built in another context, with
        verdicts of its own: the -D flags of one build."""
        other = object.__new__(CudaSource)
        other.__dict__.update({k: v for k, v in self.__dict__.items() if k not in ("_pp", "_not_emitted", "_builds", "_calls")})
        other._pp = {}
        other.context = context
        return other

    def preprocessed(self, target: str) -> Preprocessed:
        if target not in self._pp:
            pp = preprocess(self.clean, CompileTarget(target), context=self.context, table=self.knowledge.macros)
            if (self.context is None or self.context.toolkit is None) and "__CUDACC_VER_M" in self.clean:
                _bound_by_toolkit(pp, self.clean, target, self.context, self.knowledge)
            self._pp[target] = pp
        return self._pp[target]

    def not_emitted(self, target: str) -> set[int]:
        """Lines the preprocessor keeps but nvcc does not emit for ``target`` (cuda/cpp/cxx.py)."""
        cache = self.__dict__.setdefault("_not_emitted", {})
        if target not in cache:
            cache[target] = dead_lines(self.clean, self.preprocessed(target), self.context)
        return cache[target]

    def verdict(self, target: str) -> Verdict:
        v = Verdict(target, "ok")
        if not self.occurrences:
            return v
        pp = self.preprocessed(target)
        for occ in self.occurrences:
            live = pp.live.get(occ.line, True)
            if live is not False and occ.line in self.not_emitted(target):
                continue  # a discarded if-constexpr branch or a helper no live kernel calls
            accepted = target in occ.targets
            if occ.trap:
                if live is not False and not accepted and target not in occ.unknown:
                    v.dropped.append(occ)  # compiles, but to CuTe's trap
                continue
            if live is not False and not accepted:
                v.failing.append(occ)
            elif live is False and occ.line in pp.line_group and _no_alternative(pp, occ.line) \
                    and not self._function_does_more(occ.line, pp):
                v.dropped.append(occ)
        if v.failing:
            v.status = "fail"
        elif v.dropped:
            v.status = "empty"
        return v


_OWN_STRUCT = re.compile(r"\b(?:struct|class)\s+(SM\d+_\w+)\s*(?:final\s*)?[:{<]")
# the namespace that qualifies a name ending at the search's end: `ptx::` / `cute::` / `::`
_QUALIFIER = re.compile(r"(?:\b(\w+)\s*)?::\s*$")
# std::conditional(_t) picks one branch by a constant; is_same(_v) only compares the type
_CONDITIONAL = re.compile(r"\b(?:conditional(?:_t)?|is_same(?:_v)?)\s*$")


def _chosen_at_compile_time(text: str, offset: int) -> bool:
    """An atom named inside a branch of std::conditional(_t)<COND, A, B>: which one the kernel
    uses depends on COND (flash-attention's Has_cp_async, set under an arch #if), which is not
    evaluated here, so the atom says nothing; inside is_same(_v)<T, ATOM> it is compared, not used
    (vLLM machete's static_asserts). Walks out of the enclosing template brackets of the
    statement (parenthesised text skipped whole, so `(N > 2)` is no bracket)."""
    depth = 0
    i = offset - 1
    stop = max(0, offset - 2000)
    while i >= stop:
        ch = text[i]
        if ch in ";{}":
            return False
        if ch == ")":
            parens = 1
            while i > stop and parens:
                i -= 1
                parens += {")": 1, "(": -1}.get(text[i], 0)
        elif ch == ">":
            depth += 1
        elif ch == "<":
            if depth:
                depth -= 1
            elif _CONDITIONAL.search(text[max(0, i - 40):i]):
                return True
        i -= 1
    return False


def _continuations(text: str, lineno: int) -> int:
    """How many physical lines a backslash-continued line starting at ``lineno`` adds."""
    lines = text.split("\n")
    n, i = 0, lineno - 1
    while i < len(lines) and lines[i].endswith("\\"):
        n, i = n + 1, i + 1
    return n


def _literals(text: str) -> list[_Literal]:
    """Runs of adjacent string literals, decoded, each character mapped to its source
    offset (so a multi-line asm block keeps the line of every instruction)."""
    asm_regions = []
    for m in _ASM.finditer(text):
        asm_regions.append(m.end())
    out: list[_Literal] = []
    i, n = 0, len(text)
    cur: _Literal | None = None
    while i < n:
        c = text[i]
        if c == "'":  # a character literal: skip it whole
            j = i + 1
            while j < n and text[j] not in "'\n":
                j += 2 if text[j] == "\\" else 1
            i = j + 1
            cur = None
            continue
        if c == '"':  # u8"..", L"..": the prefix does not change the text
            if cur is None:
                k = bisect.bisect_right(asm_regions, i) - 1
                in_asm = k >= 0 and text[asm_regions[k]:i].strip() == ""
                cur = _Literal("", [], in_asm)
                out.append(cur)
            j = i + 1
            chars, offs = [], []
            while j < n and text[j] != '"' and text[j] != "\n":
                if text[j] == "\\" and j + 1 < n:
                    chars.append(_ESCAPES.get(text[j + 1], text[j + 1]))
                    offs.append(j)
                    j += 2
                else:
                    chars.append(text[j])
                    offs.append(j)
                    j += 1
            cur.content += "".join(chars)
            cur.offsets += offs
            i = j + 1
            continue
        if not c.isspace():
            cur = None
        i += 1
    for lit in out:
        lit.offsets.append(lit.offsets[-1] + 1 if lit.offsets else 0)  # end sentinel
        if lit.in_asm and lit.offsets[-1]:
            lit.classes = _constraint_classes(text, lit.offsets[-1])
    return out


_REG_DECL = re.compile(r"\.reg\s+\.([a-z]\d+)\s+%([A-Za-z_]+)<\d+>")
_WIDTH = {"b32": "b32", "u32": "b32", "s32": "b32", "b64": "b64", "u64": "b64", "s64": "b64", "b16": "b16",
          "u16": "b16", "s16": "b16", "f16": "b16", "bf16": "b16", "f32": "f32", "f64": "f64"}


class _Declared(dict):
    """``%rd12`` -> the class of the ``.reg .b64 %rd<N>;`` family it belongs to (a PTX file)."""

    def get(self, operand, default=None):
        m = re.fullmatch(r"%([A-Za-z_]+)\d+", operand)
        return super().get(m.group(1), default) if m else default


def _declared_classes(text: str) -> dict:
    out = _Declared()
    for m in _REG_DECL.finditer(text):
        c = _WIDTH.get(m.group(1))
        if c and out.setdefault(m.group(2), c) != c:
            out[m.group(2)] = None  # one prefix, two widths: not known
    return out


def _operand_slot(m: str) -> str | None:
    """"operand2" of the pseudo-modifier "operand2::b32"; None for anything else."""
    head, sep, _cls = m.partition("::")
    return head if sep and head.startswith("operand") and head != "operands" else None


def _immediate_fits(p, mods: set, pats) -> bool:
    """An immediate operand (``"n"(bytes)``, ``128``) is assembled at the width its form declares,
    so it meets a pattern that names a register class in its slot (``mbarrier.arrive.expect_tx``'s
    tx count, written ``operand2::b32`` in the table) -- unless the table has forms of the opcode
    for an immediate in that slot (they decide), or the pattern is a form no target accepts (a
    register of the wrong width, which an immediate is not: ``st.bulk`` with a 32-bit size)."""
    if not p.targets:
        return False
    imm = {_operand_slot(m) for m in mods if m.endswith("::imm")} - {None}
    if not imm:
        return False
    rest = p.modifiers - mods
    slots = {_operand_slot(m) for m in rest}
    if None in slots or not slots <= imm:
        return False
    own = {_operand_slot(m) for q in pats for m in q.modifiers if m.endswith("::imm")}
    return not (slots & own)


_CONSTRAINT = re.compile(r'"([=+&]*)([a-zA-Z])"\s*\(')


def _constraint_classes(text: str, after: int) -> dict[str, str]:
    """``%N`` -> register class of the asm operands after the template ending at ``after``
    (outputs then inputs, numbered in order: ``"=r"(x)`` is 32-bit, ``"l"(p)`` 64-bit)."""
    depth, i, end = 0, after + 1, min(len(text), after + 4000)  # after the template's closing quote
    while i < end:
        ch = text[i]
        if ch == '"':
            j = text.find('"', i + 1)
            i = end if j < 0 else j
        elif ch == "(":
            depth += 1
        elif ch == ")":
            if depth == 0:
                break
            depth -= 1
        elif ch == ";":
            break
        i += 1
    # ``::`` between names is C++ scope (cute::cast); elsewhere it is two sections (no outputs)
    sections = re.sub(r"(?<=\w)\s*::\s*(?=[A-Za-z_])", "\x00", text[after + 1:i]).split(":")
    out, n = {}, 0
    for sec in sections[1:3]:
        for m in _CONSTRAINT.finditer(sec):
            c = CLASSES.get(m.group(2))
            if c:
                out[f"%{n}"] = c
            n += 1
    return out


def _no_alternative(pp: Preprocessed, line: int) -> bool:
    """Is every branch of the #if group holding ``line`` compiled out (no #else that runs)?"""
    gid, _branch = pp.line_group[line]
    return all(live is False for _start, _end, live in pp.groups.get(gid, []))


def load_features(matrix) -> Knowledge:
    features = {}
    for name, e in matrix.section("cuda_features.toml", "feature").items():
        features[name] = Feature(
            name=name,
            summary=e["summary"],
            # C++ names: never the tail of a longer identifier
            patterns=tuple(re.compile(r"(?<!\w)" + p) for p in e["patterns"]),
            targets=frozenset(e["targets"]),
            error=e["error"],
            context=re.compile(e["context"]) if "context" in e else None,
        )
    table = matrix.files.get("ptx_instructions.toml", {})
    patterns: dict[str, list[Pattern]] = {}
    def msg(text):
        return re.sub(r"^ptxas error\s*:\s*", "", text)

    for key, e in table.get("pattern", {}).items():
        patterns.setdefault(e["opcode"], []).append(
            Pattern(key, frozenset(e["modifiers"]), frozenset(e["targets"]), msg(e.get("error", "")),
                    tuple((frozenset(k.split()), msg(v)) for k, v in sorted(e.get("errors", {}).items()))
                    + ((frozenset(e.get("error_key", "").split()), msg(e.get("error", ""))),)))
    wrappers = {name: (frozenset(e["targets"]), e.get("error", "")) for name, e in table.get("wrapper", {}).items()}
    atoms = [(re.compile(r"(?<!\w)(?:" + e["pattern"] + r")(?!\w)"), e)
             for e in matrix.section("cuda_atoms.toml", "atom").values()]
    return Knowledge(features, patterns, wrappers, frozenset(table.get("targets", matrix.targets)), atoms,
                     macro_table(matrix), matrix.targets, frozenset(table.get("operand_opcodes", ())))


def _bound_by_toolkit(pp: Preprocessed, text: str, target: str, ctx: Context | None, knowledge: Knowledge) -> None:
    """Decide the lines an unknown nvcc version left open where every toolkit able to build
    ``target`` agrees (cuda/cpp/toolkits.py); ``pp.live`` is updated in place."""
    from dataclasses import replace

    table = knowledge.target_table
    t = table.get(target)
    if t is None:
        return
    def ver(v: str) -> tuple[int, int]:
        a, b = v.split(".")[:2]
        return int(a), int(b)
    newest = max(ver(e["toolkit"]) for e in table.values())
    tks = toolkit_candidates(text, ver(t["toolkit"]), newest)
    if not tks:
        return
    base = ctx or Context()
    lives = [preprocess(text, CompileTarget(target), context=replace(base, toolkit=tk), table=knowledge.macros).live
             for tk in tks]
    for ln, v in pp.live.items():
        if v is None:
            seen = {lv.get(ln) for lv in lives}
            if len(seen) == 1 and None not in seen:
                pp.live[ln] = seen.pop()

