"""The CUDA analyzer spells "not known" once for a value (None) and once for text
(ppexpr.UNKNOWN_VALUE), and has one dotted-name helper (issue 26 item 4; cuda/build/pyeval.py
says why there are exactly these). A second sentinel, a second text marker or a second
``_dotted`` under cuda/ fails here."""

from __future__ import annotations

import ast
import re

from conftest import SRC

CUDA = SRC / "aicompat" / "cuda"
MARKER = "__aicompat_unknown__"


def _trees():
    for p in sorted(CUDA.rglob("*.py")):
        yield p.relative_to(CUDA).as_posix(), ast.parse(p.read_text(encoding="utf-8"))


# ppexpr's own token for an unknown operand inside an #if being expanded: private to the C
# expression evaluator, never a value or text another module sees; a NUL so no C text can spell
# it and expansion never rescans it.
PRIVATE = {("cpp/ppexpr.py", "_UNK"): "\x00unknown"}


def test_one_value_sentinel_and_one_text_marker():
    """Every module-level name under cuda/ that says "unknown" is defined once, in ppexpr.py:
    UNKNOWN (None, what every reader returns for a value not known) and UNKNOWN_VALUE (the text
    marker). Elsewhere it is imported, never defined again."""
    found = {}
    for rel, tree in _trees():
        for st in tree.body:
            targets = st.targets if isinstance(st, ast.Assign) else [st.target] if isinstance(st, ast.AnnAssign) else []
            for t in targets:
                if isinstance(t, ast.Name) and re.search(r"UNK|unknown", t.id, re.I) and st.value is not None:
                    found[(rel, t.id)] = ast.literal_eval(st.value) if isinstance(st.value, ast.Constant) else \
                        ast.dump(st.value)
    assert found == {("cpp/ppexpr.py", "UNKNOWN"): None, ("cpp/ppexpr.py", "UNKNOWN_VALUE"): MARKER, **PRIVATE}


def test_text_marker_written_only_where_defined():
    """The marker's text appears in no string under cuda/ but its one definition, and the
    readers of builds (cuda/build, cuda/cmake) use no NUL marker of their own (the old f-string
    field and CMake markers were "\\x00" and "\\x00?")."""
    where = []
    for rel, tree in _trees():
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and (
                    MARKER in node.value or "\x00" in node.value and rel.startswith(("build/", "cmake/"))):
                where.append((rel, node.lineno))
    assert len(where) == 1 and where[0][0] == "cpp/ppexpr.py", where


def test_one_dotted_helper():
    """A dotted name (``torch.utils.cpp_extension.load``) is spelt by pyeval.dotted only."""
    defs = [(rel, node.name) for rel, tree in _trees() for node in ast.walk(tree)
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and "dotted" in node.name.lower()]
    assert defs == [("build/pyeval.py", "dotted")]


def test_build_python_is_read_with_one_parser():
    """setup.py, the JIT specs and torch's JIT calls are read through pyeval: no other module of
    cuda/ parses Python (``ast.parse``, LibCST's ``parse_*``) or collects its own bindings."""
    own = []
    for rel, tree in _trees():
        if rel == "build/pyeval.py":
            continue
        for node in ast.walk(tree):
            f = node.func if isinstance(node, ast.Call) else None
            if isinstance(f, ast.Attribute) and (f.attr == "parse" and isinstance(f.value, ast.Name)
                                                 and f.value.id == "ast" or f.attr.startswith("parse_module")):
                own.append((rel, node.lineno, f.attr))
            if isinstance(node, ast.ClassDef) and any(
                    isinstance(f, ast.FunctionDef) and f.name == "_collect" for f in node.body):
                own.append((rel, node.lineno, node.name))
    assert own == []
