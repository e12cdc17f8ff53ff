"""The package is in layers and imports go down only (issue 26).

Each folder of src/aicompat is a layer; a module may import its own layer and the layers
below it, never one above, and the import graph has no circle. Function-local imports count:
an import hidden in a function to dodge a circle is still an import.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from conftest import SRC

PKG = SRC / "aicompat"
# Bottom first. "<top>" holds the entry points: the package's API, the CLI and the pylint plugin.
LAYERS = ["base", "fs", "syntax", "values", "matrix", "libmodels", "model",
          "cuda.cpp", "cuda.cmake", "cuda.build", "cuda.exact", "cuda",
          "core", "rules._shared", "rules", "report", "run", "matrixbuild", "<top>"]
WHAT = {
    "base": "the exceptions that end a run, the TOML reader, where the shipped data lives, the diagnostic record, counted run notes",
    "fs": "reading only the linted tree, the cache's link-safe files, the walk from paths to files",
    "syntax": "the lean walk, the module index, node positions, suppression comments, notebooks",
    "values": "abstract values: unknown, strings, paths, symbolic dims, size caps",
    "matrix": "the version matrix (TOML tables), the API tables, the target",
    "libmodels": "what libraries do (torch shapes and environment, einops, argparse, probes, signatures, "
                 "test frameworks), gathered in the library table the engine hands to the value model",
    "model": "the value model: flow, the evaluator, containers, guards, scenarios, the project's modules",
    "cuda.cpp": "CUDA C++ and PTX text: includes, preprocessor, C++ model, feature scan",
    "cuda.cmake": "CMake read statically",
    "cuda.build": "what builds a CUDA source, for which targets",
    "cuda.exact": "exact mode: sealed units, the sandbox, nvcc's verdicts",
    "cuda": "the CUDA package's own modules",
    "core": "the one traversal and the rule contract",
    "rules._shared": "helpers more than one rule uses",
    "rules": "the rules, their registry",
    "report": "output formats, baselines, --fix, rule docs",
    "run": "settings, the linter for one file, workers, the cache, the Python API",
    "matrixbuild": "the matrix builder (never imported at lint time)",
    "<top>": "entry points: aicompat, the CLI, the pylint plugin",
}


def module_name(path: Path) -> str:
    rel = path.relative_to(SRC).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def layer_of(module: str) -> str:
    inner = module.split(".")[1:]  # without "aicompat"
    dotted = ".".join(inner)
    for layer in sorted((x for x in LAYERS if x != "<top>"), key=len, reverse=True):
        if dotted == layer or dotted.startswith(layer + "."):
            return layer
    return "<top>"


def modules() -> dict[str, Path]:
    return {module_name(p): p for p in PKG.rglob("*.py")}


def imports(path: Path, name: str, known) -> list[tuple[str, int, bool]]:
    """(imported aicompat module, line, inside a function?) of every import in the file."""
    tree = ast.parse(path.read_text())
    pkg = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
    out = []

    def visit(node, in_def):
        for child in ast.iter_child_nodes(node):
            here = in_def or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef))
            if isinstance(child, ast.ImportFrom):
                if child.level:
                    base = pkg[:len(pkg) - child.level + 1] + ([child.module] if child.module else [])
                    target = ".".join(base)
                else:
                    target = child.module or ""
                if target == "aicompat" or target.startswith("aicompat."):
                    for a in child.names:
                        sub = f"{target}.{a.name}"
                        out.append((sub if sub in known else target, child.lineno, here))
            elif isinstance(child, ast.Import):
                for a in child.names:
                    if a.name.startswith("aicompat"):
                        out.append((a.name, child.lineno, here))
            visit(child, here)

    visit(tree, False)
    return [(t, line, d) for t, line, d in out if t in known and t != name]


MODULES = modules()
EDGES = {name: imports(path, name, MODULES) for name, path in MODULES.items()}


def test_every_folder_is_a_layer():
    folders = {layer_of(m) for m in MODULES}
    assert folders <= set(LAYERS)
    assert set(WHAT) == set(LAYERS)
    tops = sorted(m for m in MODULES if layer_of(m) == "<top>")
    assert tops == ["aicompat", "aicompat.__main__", "aicompat.cli", "aicompat.pylint_plugin"]


@pytest.mark.parametrize("name", sorted(MODULES))
def test_imports_go_down_only(name):
    mine = LAYERS.index(layer_of(name))
    up = [(t, line) for t, line, _ in EDGES[name] if LAYERS.index(layer_of(t)) > mine]
    assert up == [], f"{name} ({layer_of(name)}) imports a layer above it"


def test_no_import_circle():
    graph = {n: {t for t, _, _ in e} for n, e in EDGES.items()}
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(n):
        state[n] = 1
        stack.append(n)
        for m in sorted(graph[n]):
            if state.get(m) == 1:
                # A package's __init__ importing its own submodules (and back) is not a layer circle,
                # but a plain one is.
                circle = stack[stack.index(m):] + [m]
                raise AssertionError(" -> ".join(circle))
            if m not in state:
                visit(m)
        stack.pop()
        state[n] = 2

    for n in sorted(graph):
        if n not in state:
            visit(n)


def test_the_matrix_builder_is_never_imported_at_lint_time():
    users = sorted((n, line, in_def) for n, e in EDGES.items() for t, line, in_def in e
                   if layer_of(t) == "matrixbuild" and layer_of(n) != "matrixbuild")
    assert [(n, d) for n, _line, d in users] == [("aicompat.cli", True)]


RULE_DOORS = ("aicompat.core.ruleapi", "aicompat.matrix", "aicompat.cuda.api", "aicompat.rules")


@pytest.mark.parametrize("name", sorted(m for m in MODULES if m.startswith("aicompat.rules.")
                                        and m != "aicompat.rules.registry"))
def test_a_rule_imports_only_the_rule_api(name):
    """The rule contract is the only door: ruleapi (with what it re-exports of the value model),
    the matrix, the CUDA analyzer's public API and rules/ itself (its package, rules/_shared)."""
    other = [(t, line) for t, line, _ in EDGES[name]
             if not any(t == d or t.startswith(d + ".") for d in RULE_DOORS)
             or t.startswith("aicompat.rules.registry")]
    assert other == [], f"{name} imports past the rule API"
