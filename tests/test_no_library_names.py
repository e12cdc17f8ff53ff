"""The engine and the value model name no library (issue 26).

What a library does (torch shapes and dtypes, einops patterns, methods that return self,
argparse parsers, pytest and unittest marks and exits, other projects' kernel-selection
conventions) lives in libmodels/ and version_matrix/ data, gathered in the library table
(libmodels/table.py) that the engine hands to the value model. So no string or bytes
literal of core/, model/, syntax/ or values/ names a library.

What is read: every str and bytes constant the ``ast`` of a module holds, f-string parts
included. Docstrings are left out (they are documentation, and name the libraries a form
comes from), and so are comments, which are no literals (``ast`` drops them).
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest
from conftest import SRC

PKG = SRC / "aicompat"
LAYERS = ("core", "model", "syntax", "values")
# A library's name: torch and argparse as a whole dotted part ("torch", "torch.nn", but not our own
# "torch_version" or "argparse_args"), the others anywhere in the literal ("pytestmark").
LIBRARY = re.compile(r"\b(?:torch|argparse)\b"
                     r"|flash_attn|transformer_engine|triton|cupy|pytest|vllm|sglang|einops|unittest")


def _docstrings(tree: ast.AST) -> set[int]:
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
                    and isinstance(body[0].value.value, str):
                out.add(id(body[0].value))
    return out


def library_literals(path: Path) -> list[str]:
    """``file:line: literal`` of each library-naming literal of the module at ``path``."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    skip = _docstrings(tree)
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and id(node) not in skip and isinstance(node.value, (str, bytes)):
            text = node.value.decode("latin-1") if isinstance(node.value, bytes) else node.value
            if LIBRARY.search(text):
                out.append(f"{path.relative_to(PKG)}:{node.lineno}: {node.value!r}")
    return sorted(out)


MODULES = sorted(p for layer in LAYERS for p in (PKG / layer).rglob("*.py"))


@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(PKG)))
def test_names_no_library(path):
    found = library_literals(path)
    assert found == [], "library facts belong in the library table (libmodels/table.py): " + "; ".join(found)


def test_the_check_sees_a_library_name():
    """Where the facts moved to, the same scan finds them: the check can fail."""
    found = [f for p in sorted((PKG / "libmodels").glob("*.py")) for f in library_literals(p)]
    assert any("'torch.nn.'" in f for f in found)
    assert any("'pytest.skip'" in f for f in found)
    assert any("'pytestmark'" in f for f in found)
    assert any("'einops.'" in f for f in found)


def test_the_value_model_imports_no_library_model():
    """model/ is handed the table by the engine: it imports nothing of libmodels/."""
    imports = []
    for path in sorted((PKG / "model").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module and "libmodels" in node.module:
                imports.append(f"{path.name}:{node.lineno}")
    assert imports == []
