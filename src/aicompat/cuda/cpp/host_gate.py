"""Which GPUs a CUDA program's ``main()`` turns away before it launches anything.

CUTLASS's examples and tutorials start ``main()`` with a device check and return
before any kernel runs elsewhere (``if (props.major != 9) { ...; return 0; }``,
``if ((props.major != 10) || (props.major == 10 && props.minor > 1)) {...}``).
Their kernels then never run on the GPUs turned away, so what happens there at
run time (a CuTe atom's trap, a kernel an ``#if`` emptied) cannot happen; the
build itself still compiles every target, so compile failures stay.

Read from the masked text (comments, strings and dead lines blanked, cxx.mask):
the ``if`` statements at the top of ``main``'s body before the first kernel
launch (``<<<``) or call of a function the file defines, whose condition
names ``<x>.major``/``<x>.minor`` and whose block is ``{ ...; return ...; }``.
The condition is evaluated per GPU with ppexpr's C expression evaluator; what
else it names is unknown, so a GPU is turned away only when it is true for sure.
"""

from __future__ import annotations

import fnmatch
import re

from .cxx import _match_close as _close
from .ppexpr import UNKNOWN, Env, evaluate

_MAIN = re.compile(r"\bint\s+main\s*\(")
_IF = re.compile(r"\bif\s*\(")
_FIELD = re.compile(r"\b[A-Za-z_]\w*\s*(?:\.|->)\s*(major|minor)\b")
_DEFINED_FN = re.compile(r"\b([A-Za-z_]\w*)\s*(?:<[^;{}()]*>)?\s*\([^;{}]*\)\s*(?:const\s*)?\{")
_CALL = re.compile(r"\b([A-Za-z_]\w*)\s*(?:<[^;{}()]*>)?\s*\(")


def gates(masked: str) -> list[str]:
    """The conditions under which ``main`` returns before launching anything."""
    m = _MAIN.search(masked)
    if m is None:
        return []
    paren = _close(masked, m.end() - 1, "(", ")")
    brace = masked.find("{", paren) if paren >= 0 else -1
    if brace < 0 or masked[paren + 1:brace].strip():
        return []
    end = _close(masked, brace, "{", "}")
    body = masked[brace + 1:end] if end > 0 else ""
    own = {f for f in _DEFINED_FN.findall(masked[:m.start()]) + _DEFINED_FN.findall(masked[end + 1:])
           if f not in ("if", "for", "while", "switch", "main")}
    out, i = [], 0
    while True:
        at = _IF.search(body, i)
        launch = body.find("<<<", i)
        calls = [c.start() for c in _CALL.finditer(body, i) if c.group(1) in own]
        stop = min([p for p in [launch] + calls if p >= 0], default=len(body))
        if at is None or at.start() > stop:
            return out
        k = _close(body, at.end() - 1, "(", ")")
        if k < 0:
            return out
        cond = body[at.end():k]
        j = k + 1
        while j < len(body) and body[j].isspace():
            j += 1
        if j < len(body) and body[j] == "{":
            close = _close(body, j, "{", "}")
            block = body[j + 1:close] if close > 0 else "{"
            i = close + 1 if close > 0 else len(body)
        else:
            close = body.find(";", j)
            block = body[j:close + 1] if close > 0 else "{"
            i = close + 1 if close > 0 else len(body)
        if "{" not in block and re.search(r"\breturn\b", block) and _FIELD.search(cond):
            out.append(cond)


def turned_away(conds: list[str], capability: tuple[int, int]) -> bool:
    """Does one of ``conds`` hold for sure on a GPU of this compute capability?"""
    major, minor = capability
    for cond in conds:
        text = _FIELD.sub(lambda f: str(major if f.group(1) == "major" else minor), cond)
        if evaluate(text, Env(), lambda _name: UNKNOWN) not in (0, UNKNOWN):
            return True
    return False


# -- unit-test harnesses that filter tests by compute capability (cuda_atoms.toml [harness_filter]) --
_TEST = re.compile(r"\bTEST(?:_F|_P)?\s*\(\s*(\w+)\s*,\s*(\w+)\s*\)\s*\{")


def harness_filters(matrix, text: str) -> list[tuple[str, int, int]]:
    """The (glob, min, max) filters of the harness this file is linked into; [] for none."""
    for e in matrix.section("cuda_atoms.toml", "harness_filter").values():
        if re.search(r'#\s*include\s*[<"](?:[^<>"]*/)?' + re.escape(e["include"]) + r'[>"]', text):
            out = []
            for f in e["filters"]:
                glob, lo, hi = f.split(":")
                out.append((glob, int(lo), int(hi) if hi else 10 ** 6))
            return out
    return []


def test_spans(masked: str) -> list[tuple[int, int, str]]:
    """(first line, last line, "Suite.Name") of every gtest TEST body."""
    out = []
    for m in _TEST.finditer(masked):
        end = _close(masked, m.end() - 1, "{", "}")
        if end < 0:
            continue
        out.append((masked.count("\n", 0, m.start()) + 1, masked.count("\n", 0, end) + 1,
                    f"{m.group(1)}.{m.group(2)}"))
    return out


def test_runs(name: str, filters, cc: int) -> bool:
    return all(lo <= cc <= hi for glob, lo, hi in filters if fnmatch.fnmatchcase(name, glob))


def filtered_out(line: int, spans, filters, cc: int) -> bool:
    """Is the code at ``line`` run by no test the harness runs on a GPU of capability ``cc``?
    Inside a TEST body: that test's filter; elsewhere (a helper the tests call): every test's."""
    if not spans or not filters:
        return False
    inside = [s for s in spans if s[0] <= line <= s[1]]
    return not any(test_runs(name, filters, cc) for _a, _b, name in (inside or spans))
