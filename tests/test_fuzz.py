"""Property-based robustness: generated programs and damaged real files never
make the engine raise, and never make it fail internally (AIC000).

CI runs a small, fixed set of examples (derandomized: the same every run).
A longer, randomized run, for hunting:

    AICOMPAT_FUZZ_EXAMPLES=5000 python -m pytest tests/test_fuzz.py -p no:cacheprovider

Hypothesis prints the smallest failing input it finds.
"""
import ast
import os
from pathlib import Path

import hypothesmith
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from aicompat import Target
from aicompat.matrix import default_matrix
from aicompat.rules.registry import CODES
from aicompat.run.config import build_settings
from aicompat.run.linter import Linter

ROOT = Path(__file__).resolve().parent.parent
LONG = int(os.environ.get("AICOMPAT_FUZZ_EXAMPLES", "0") or 0)
FUZZ = settings(max_examples=LONG or 40, derandomize=not LONG, deadline=None, database=None,
                suppress_health_check=list(HealthCheck))

_M = default_matrix()
_TARGET = build_settings(_M, cli=Target(gpus=["A100", "H100", "B200"], pins={"torch": ">=2.4"}), no_config=True).target
# Prefilter off: every input is parsed and walked, not just those with a token.
LINTERS = [Linter(_TARGET, _M, prefilter=False), Linter(_TARGET, _M)]


def _inline_sources() -> list[bytes]:
    """String literals in the tests that look like the code aicompat checks."""
    out = []
    for f in sorted((ROOT / "tests").glob("test_*.py")):
        for node in ast.walk(ast.parse(f.read_text())):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and "torch" in node.value \
                    and "\n" in node.value and len(node.value) < 20_000:
                out.append(node.value.encode())
    return out


PY_SOURCES = [p.read_bytes() for p in sorted((ROOT / "fixtures" / "demo").glob("*.py"))] + _inline_sources()
CU_SOURCES = [p.read_bytes() for p in sorted((ROOT / "fixtures" / "kernels").glob("*.cu"))[:12]]
NASTY = [b"(", b")", b"[", b"{", b'"""', b"'", b"\t", b"\x00", b"\\", b":", b"\r", b"\xff", b"\xef\xbb\xbf",
         b"<<<<<<< HEAD\n", b"print 'x'\n", b"# -*- coding: latin-1 -*-\n", b"lambda", b"async ", b"*", b"@", b"\n    "]
SNIPPETS = [b"import torch\n", b"from flash_attn import flash_attn_func\n", b"x = torch._scaled_mm(a, b)\n",
            b"y = torch.float8_e4m3fn\n", b"if torch.cuda.get_device_capability()[0] >= 9:\n    pass\n",
            b"m = torch.compile(m, backend='inductor')\n", b"flash_attn_func(q, k, v)\n"]


def check(data: bytes, path: str = "fuzz.py") -> None:
    for linter in LINTERS:
        res = linter.lint_bytes(data, path)  # must not raise
        for d in res.diagnostics + res.suppressed:
            assert d.code in CODES, d
            assert d.code != "AIC000", (d.message, data[:2000])
            assert d.line >= 1 and d.column >= 1


@st.composite
def mutated(draw, sources):
    lines = draw(st.sampled_from(sources)).splitlines(keepends=True) or [b""]
    for _ in range(draw(st.integers(1, 4))):
        op = draw(st.sampled_from(["truncate", "delete", "duplicate", "swap", "insert", "indent", "snippet"]))
        i = draw(st.integers(0, max(len(lines) - 1, 0)))
        if op == "truncate":
            text = b"".join(lines)
            text = text[:draw(st.integers(0, len(text)))]
            lines = text.splitlines(keepends=True) or [b""]
        elif op == "delete" and len(lines) > 1:
            del lines[i:i + draw(st.integers(1, 3))]
        elif op == "duplicate":
            lines.insert(i, lines[i])
        elif op == "swap":
            j = draw(st.integers(0, len(lines) - 1))
            lines[i], lines[j] = lines[j], lines[i]
        elif op == "insert":
            at = draw(st.integers(0, len(lines[i])))
            lines[i] = lines[i][:at] + draw(st.sampled_from(NASTY)) + lines[i][at:]
        elif op == "indent":
            lines[i] = draw(st.sampled_from([b"    ", b"\t", b" "])) + lines[i]
        else:
            lines.insert(i, draw(st.sampled_from(SNIPPETS)))
        lines = lines or [b""]
    return b"".join(lines)


@FUZZ
@given(mutated(PY_SOURCES))
def test_damaged_python_never_crashes(data):
    check(data)


@FUZZ
@given(mutated(PY_SOURCES))
def test_damaged_python_in_a_notebook_cell_never_crashes(data):
    import json

    cell = {"cell_type": "code", "source": data.decode("utf-8", "replace").splitlines(True), "metadata": {},
            "outputs": [], "execution_count": 1}
    check(json.dumps({"cells": [cell], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}).encode(), "fuzz.ipynb")


@FUZZ
@given(mutated(CU_SOURCES))
def test_damaged_cuda_never_crashes(data):
    check(data, "fuzz.cu")


@FUZZ
@given(hypothesmith.from_grammar(), st.lists(st.sampled_from(SNIPPETS), max_size=3))
def test_generated_programs_never_crash(code, snippets):
    # Generated programs mention nothing aicompat checks; the snippets make
    # the rules look at them (and the prefilter let them through).
    check(b"".join(snippets) + code.encode("utf-8", "surrogatepass"))
