"""A small C++ model of what nvcc emits for one compile target, on top of the preprocessor.

Two facts, each checked with nvcc 13.0 (V13.0.88) on tiny kernels
(tests/test_preprocessor.py names them):
- ``if constexpr (c) {...} else {...}`` on a constant the target fixes
  (``constexpr bool has_fp8 = ARCH_HAS_FP8;``, ``constexpr int kArch =
  __CUDA_ARCH__;``): the discarded branch's ``asm`` never reaches ptxas.
- Emitted only if called: in whole-program compilation (nvcc's default, no
  ``-rdc``) a ``__device__`` function that no live kernel reaches is not
  emitted, whatever its linkage; with ``-rdc=true`` an extern, non-inline,
  non-template ``__device__`` function is emitted anyway, so those count as
  reached unless the build is known to be whole-program.
  ``__forceinline__``/``inline``/``static``/template ones never are.
  Only a translation unit (a .cu, a string compiled from Python) that defines a
  kernel is judged this way: a header's helpers may be called from the sources
  that include it.

Everything here reads comment-stripped text; what cannot be read (unbalanced
braces, an expression that is not a constant) is left as compiled.
"""

from __future__ import annotations

import bisect
import re

from .brackets import match_close as _match_close
from .brackets import skip_ws as _skip_ws
from .constants import Constants
from .ppexpr import UNKNOWN, Macro
from .preprocessor import Context, MacroTable, Preprocessed, logical_lines

_IDENT = re.compile(r"[A-Za-z_]\w*")
_IF_CONSTEXPR = re.compile(r"\bif\s+constexpr\s*\(")
_DEFINE_LINE = re.compile(r"\s*#\s*define\b")
_DIRECTIVE_LINE = re.compile(r"^[ \t]*#.*$", re.M)
_ATTRS = re.compile(r"__launch_bounds__|__attribute__|alignas|__align__|__declspec|__maxnreg__|__cluster_dims__")


def mask(text: str, pp: Preprocessed) -> str:
    """``text`` with string/char literal contents, preprocessor directives and the lines
    the preprocessor drops blanked (same length and line breaks)."""
    out = list(text)
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c in "\"'":
            if c == "'" and i > 0 and (text[i - 1].isalnum() and text[i - 1] not in "LuU8"):
                i += 1  # a digit separator (1'000), not a literal
                continue
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                if text[j] == "\\":
                    j += 1
                else:
                    out[j] = " "
                j += 1
            i = j + 1
        else:
            i += 1
    s = "".join(out)
    s = _DIRECTIVE_LINE.sub(lambda m: " " * len(m.group(0)), s)
    lines = s.split("\n")
    for ln, lv in pp.live.items():
        if lv is False and 0 < ln <= len(lines):
            lines[ln - 1] = " " * len(lines[ln - 1])
    return "\n".join(lines)


def _stmt_end(s: str, i: int) -> int:
    """End (exclusive) of the statement starting at s[i]: a block, an if/else, or up to ';'."""
    i = _skip_ws(s, i)
    if i >= len(s):
        return -1
    if s[i] == "{":
        k = _match_close(s, i, "{", "}")
        return -1 if k < 0 else k + 1
    m = re.match(r"if\s*(?:constexpr\s*)?\(", s[i:])
    if m:
        k = _match_close(s, i + m.end() - 1, "(", ")")
        if k < 0:
            return -1
        end = _stmt_end(s, k + 1)
        if end < 0:
            return -1
        j = _skip_ws(s, end)
        if s.startswith("else", j) and not (j + 4 < len(s) and (s[j + 4].isalnum() or s[j + 4] == "_")):
            return _stmt_end(s, j + 4)
        return end
    k = s.find(";", i)
    return -1 if k < 0 else k + 1


def constexpr_dead(masked: str, pp: Preprocessed, unit: bool = False) -> list[tuple[int, int]]:
    """Character spans of ``if constexpr`` branches discarded in this target (``unit``: the
    text is a whole translation unit, so its template arguments are all the ones there are)."""
    if not _IF_CONSTEXPR.search(masked):
        return []
    ev = Constants(masked, pp, templates=unit)
    spans = []
    for m in _IF_CONSTEXPR.finditer(masked):
        close = _match_close(masked, m.end() - 1, "(", ")")
        if close < 0:
            continue
        cond = ev.eval(masked[m.end():close], m.start())
        if cond is UNKNOWN:
            continue
        then_start = _skip_ws(masked, close + 1)
        then_end = _stmt_end(masked, then_start)
        if then_end < 0:
            continue
        if not cond:
            spans.append((then_start, then_end))
            continue
        j = _skip_ws(masked, then_end)
        if masked.startswith("else", j) and not (j + 4 < len(masked) and (masked[j + 4].isalnum() or masked[j + 4] == "_")):
            else_end = _stmt_end(masked, j + 4)
            if else_end > 0:
                spans.append((j + 4, else_end))
    return spans


def _blank(s: str, spans) -> str:
    out = list(s)
    for a, b in spans:
        for k in range(a, min(b, len(out))):
            if out[k] != "\n":
                out[k] = " "
    return "".join(out)


def _without_template_heads(h: str) -> str | None:
    """``h`` with every ``template <...>`` head removed; None when one does not close."""
    t = re.search(r"\btemplate\s*<", h)
    while t:
        k = _match_close(h, t.end() - 1, "<", ">")
        if k < 0:
            return None
        h = h[:t.start()] + " " + h[k + 1:]
        t = re.search(r"\btemplate\s*<", h)
    return h


def _function_name(header: str) -> str | None:
    """The name a function definition header declares, or None (member, operator, lambda, not a function)."""
    h = header
    h = _without_template_heads(h)
    if h is None:
        return None
    for a in list(_ATTRS.finditer(h))[::-1]:
        p = _skip_ws(h, a.end())
        if p < len(h) and h[p] == "(":
            k = _match_close(h, p, "(", ")")
            if k > 0:
                h = h[:a.start()] + " " + h[k + 1:]
    p = h.find("(")
    if p < 0:
        return None
    m = re.search(r"(::\s*)?(~?[A-Za-z_]\w*)\s*$", h[:p])
    if not m or m.group(1) or m.group(2) in ("operator", "if", "for", "while", "switch", "return", "catch"):
        return None
    return m.group(2)


_USING = re.compile(r"\busing\s+([A-Za-z_]\w*)\s*=")
_CLASS_HEAD = re.compile(r"(?<!\benum\s)\b(?:struct|class)\s+(?:__align__\s*\([^)]*\)\s*|alignas\s*\([^)]*\)\s*)*"
                         r"([A-Za-z_]\w*)\s*(?:final\s*)?(?::[^{;]*)?$")


def _kernel_markers(table: MacroTable | None) -> tuple[str, ...]:
    """``__global__`` and the library macros that stand for it (cuda_macros.toml: CUTLASS_GLOBAL)."""
    return ("__global__",) + tuple(n for n, e in (table.macro if table is not None else {}).items()
                                   if "__global__" in str(e.get("value", "")))


def _class_name(header: str) -> tuple[str, frozenset] | None:
    """(name, names in a specialization's arguments) a ``struct``/``class`` definition header
    declares (templates too), or None."""
    spec = re.search(r"\b(?:struct|class)\s+([A-Za-z_]\w*)\s*<", header)
    if spec and re.search(r"\btemplate\s*<", header):
        k = _match_close(header, spec.end() - 1, "<", ">")
        if k > 0 and re.fullmatch(r"\s*(?:final\s*)?(?::[^{;]*)?", header[k + 1:]):
            return spec.group(1), frozenset(_IDENT.findall(header[spec.end():k]))
    name = _plain_class_name(header)
    return (name, frozenset()) if name is not None else None


def _plain_class_name(header: str) -> str | None:
    h = header.strip()
    if "(" in re.sub(r"(?:__align__|alignas)\s*\([^)]*\)", "", h.split(":", 1)[0] if "::" not in h else h) \
            and not re.search(r"\btemplate\s*<", h):
        return None
    h = _without_template_heads(h)
    if h is None:
        return None
    m = _CLASS_HEAD.search(h)
    if m is None or "<" in h[:m.start()] or "=" in h or "(" in h[:m.start()]:
        return None
    return m.group(1)


def _specifiers(header: str, pp: Preprocessed) -> str:
    """``header`` with object-like macros replaced by their bodies (``CUTE_DEVICE`` ->
    ``__forceinline__ __device__``), twice, so a project's own alias of them counts too."""
    env = pp.env
    if env is None:
        return header

    def sub(m):
        mac = env.macro(m.group(0))
        if isinstance(mac, Macro) and mac.state is True and mac.params is None:
            return " " + mac.body + " "
        return m.group(0)

    for _ in range(2):
        header = _IDENT.sub(sub, header)
    return header


def _blocks(s: str):
    """(open, close, header start, parent index) of every {...} block; None when braces do not balance."""
    blocks, stack = [], []
    last = 0
    for i, ch in enumerate(s):
        if ch == "{":
            stack.append((i, last, len(blocks)))
            blocks.append(None)
            last = i + 1
        elif ch == "}":
            if not stack:
                return None
            open_i, hstart, idx = stack.pop()
            parent = stack[-1][2] if stack else -1
            blocks[idx] = (open_i, i, hstart, parent)
            last = i + 1
        elif ch == ";":
            last = i + 1
    if stack:
        return None
    return blocks


def unreached(masked: str, text: str, pp: Preprocessed, ctx: Context) -> list[tuple[int, int]]:
    """Character spans of device functions no live kernel of this translation unit reaches."""
    if not ctx.translation_unit:
        return []  # a header: its callers are elsewhere
    if ctx.path is None and not any(k in masked for k in _kernel_markers(pp.table)):
        return []  # a string from Python without a kernel: a fragment (load_inline joins cuda_sources)
    # A file unit without a kernel of its own still emits what its host code names (a kernel
    # template of CUTLASS instantiated with an in-tree functor): the references decide.
    blocks = _blocks(masked)
    if blocks is None:
        return []
    kinds: list[str] = []
    for open_i, close_i, hstart, parent in blocks:
        header = masked[hstart:open_i]
        if re.search(r"\bnamespace\b", header) and "(" not in header:
            kinds.append("anon-ns" if re.fullmatch(r"\s*(?:inline\s+)?namespace\s*", header) else "ns")
        elif re.search(r'\bextern\s*"\s*C\s*"\s*$', header):
            kinds.append("ns")
        else:
            kinds.append("other")
    candidates: list[tuple[str, int, int]] = []  # (name, header start, close)
    needs: dict[int, frozenset] = {}  # candidate -> names its specialization's arguments use
    top_other: list[int] = []  # blocks of classes and functions at namespace scope
    class_blocks: set[int] = set()  # those of them that are class candidates
    for idx, (open_i, close_i, hstart, parent) in enumerate(blocks):
        if kinds[idx] != "other":
            continue
        anon = False
        p = parent
        while p >= 0 and kinds[p] in ("ns", "anon-ns"):
            anon = anon or kinds[p] == "anon-ns"
            p = blocks[p][3]
        if p >= 0:
            continue  # nested in a class or function: not a free function we can follow
        top_other.append(idx)
        header = _specifiers(masked[hstart:open_i], pp)
        cls = _class_name(header)
        if cls is not None:
            # Member functions defined in the class are inline: emitted only where the class
            # is used (nvcc 13.0: an unused struct, template or not, with a static member whose
            # asm is tcgen05 builds for sm_90; naming it in a kernel makes ptxas reject it).
            # A specialization (``struct Traits<Atom<T>>``) is used only where its arguments are.
            candidates.append((cls[0], _skip_ws(masked, hstart), close_i + 1))
            needs[len(candidates) - 1] = cls[1]
            class_blocks.add(idx)
            continue
        if "__device__" not in header or "__global__" in header:
            continue
        name = _function_name(header)
        if name is None:
            continue
        never_alone = anon or re.search(r"\b(?:__forceinline__|inline|static|template)\b", header) is not None
        if not never_alone and ctx.relocatable is not False:
            continue  # with -rdc an extern __device__ function is emitted even when unused
        candidates.append((name, _skip_ws(masked, hstart), close_i + 1))
    # A namespace-scope ``using Alias = decltype(make_tiled_mma(Atom{}));`` names its types only
    # where the alias itself is used: it is a candidate too, so that naming an atom in an unused
    # alias does not emit the atom's members.
    # A member alias of such a class (``struct KernelTemplate { using TiledMMA_P = ...; }``) the same.
    tops = sorted((blocks[i][0], blocks[i][1], i) for i in top_other)
    starts = [a for a, _b, _i in tops]
    children: dict[int, list[int]] = {}
    for i, blk in enumerate(blocks):
        children.setdefault(blk[3], []).append(i)
    for m in _USING.finditer(masked):
        k = bisect.bisect_right(starts, m.start()) - 1
        if k >= 0 and tops[k][0] <= m.start() <= tops[k][1]:
            owner = tops[k][2]
            if owner not in class_blocks or any(blocks[c][0] < m.start() < blocks[c][1]
                                                 for c in children.get(owner, ())):
                continue  # inside a function, or nested deeper in the class
        end = masked.find(";", m.end())
        if end > 0:
            candidates.append((m.group(1), m.start(), end + 1))
    if not candidates:
        return []
    outside = _blank(masked, [(a, b) for _n, a, b in candidates])
    refs = set(_IDENT.findall(outside))
    for line in pp.included_text:
        refs.update(_IDENT.findall(line))
    for _ln, line in logical_lines(text):
        if _DEFINE_LINE.match(line):
            refs.update(_IDENT.findall(line))  # a macro body may call it where the macro is used
    pending = list(enumerate(candidates))
    changed = True
    while changed:
        changed = False
        unreached_names = {c[0] for _i, c in pending}
        rest = []
        for i, (name, a, b) in pending:
            if name in refs and not (needs.get(i, frozenset()) & (unreached_names - refs)):
                open_i = masked.find("{", a, b)
                open_i = a if open_i < 0 else open_i  # an alias: all of it
                inner = [(x - open_i, y - open_i) for _n, x, y in candidates if a < x and y <= b]
                body = masked[open_i:b]
                refs.update(_IDENT.findall(_blank(body, inner) if inner else body))
                changed = True
            else:
                rest.append((i, (name, a, b)))
        pending = rest
    return [(a, b) for _i, (_n, a, b) in pending]


def dead_lines(text: str, pp: Preprocessed, ctx: Context | None) -> set[int]:
    """Lines the preprocessor keeps but nvcc does not emit for this target: discarded
    ``if constexpr`` branches and device functions no live kernel calls."""
    ctx = ctx or Context()
    masked = mask(text, pp)
    try:
        spans = constexpr_dead(masked, pp, ctx.translation_unit)
        spans += unreached(_blank(masked, spans), text, pp, ctx)
    except RecursionError:  # pathological nesting: claim nothing
        return set()
    if not spans:
        return set()
    dead = _blank(text, spans)
    out = set()
    for ln, (orig, now) in enumerate(zip(text.split("\n"), dead.split("\n")), 1):
        if orig.strip() and not now.strip():
            out.add(ln)
    return out
