"""Start-up (issue 29, item 4): a command imports only what it needs.

``aicompat --version``, ``--help``, ``rules`` and ``explain`` run without the engine, the
rule modules, LibCST or the version matrix: the rules are listed from the registry's light
index (src/aicompat/rules/_index.py), which must say what importing every rule says. The
matrix's TOML is read from version_matrix/prebuilt.tsv where that was built from the same
bytes, and must give exactly what tomllib gives.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from conftest import ROOT, SRC

from aicompat.base.toml_compat import tomllib
from aicompat.core.ruleapi import Rule
from aicompat.matrix import load_matrix, prebuilt
from aicompat.rules import _index, registry

PROBE = """
import contextlib, io, json, sys
from aicompat.cli import main
out = io.StringIO()
with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
    try:
        code = main(sys.argv[1:])
    except SystemExit as exc:
        code = exc.code
print(json.dumps({"code": code, "out": out.getvalue(), "modules": sorted(sys.modules)}))
"""


def _modules(*argv: str) -> tuple[int, str, list[str]]:
    """(exit code, stdout, the modules loaded) of ``aicompat ARGV`` in a fresh interpreter."""
    env = {**os.environ, "PYTHONPATH": str(SRC)}
    r = subprocess.run([sys.executable, "-c", PROBE, *argv], capture_output=True, text=True, timeout=120, env=env)
    assert r.returncode == 0, r.stderr
    got = json.loads(r.stdout.splitlines()[-1])
    return got["code"], got["out"], got["modules"]


def _heavy(modules: list[str]) -> list[str]:
    """The engine's, the rules', LibCST's and the matrix's modules among ``modules``."""
    light = {"aicompat.rules", "aicompat.rules.registry", "aicompat.rules._index"}
    return [m for m in modules if m == "libcst" or m.startswith(("libcst.", "aicompat.matrix", "aicompat.core",
                                                                 "aicompat.run.api", "aicompat.cuda"))
            or (m.startswith("aicompat.rules") and m not in light)]


def test_version_imports_no_rule_and_no_matchers():
    code, out, modules = _modules("--version")
    assert code == 0 and out.startswith("aicompat ")
    assert "libcst.matchers" not in modules
    assert [m for m in modules if m == "aicompat.rules" or m.startswith("aicompat.rules.")] == []
    assert _heavy(modules) == []


@pytest.mark.parametrize("argv", [["--help"], ["rules"], ["explain", "AIC204"], ["explain", "parse-error"]])
def test_help_rules_and_explain_load_nothing_heavy(argv):
    code, out, modules = _modules(*argv)
    assert code == 0 and out
    assert _heavy(modules) == []


def test_explain_with_matrix_facts_imports_that_rule_alone():
    # AIC102's explanation lists the matrix's FP8 facts: its module and the matrix are loaded,
    # no other rule, and not libcst.matchers.
    code, out, modules = _modules("explain", "AIC102")
    assert code == 0 and "AIC102" in out
    rules = {m for m in modules if m.startswith("aicompat.rules.")} - {"aicompat.rules.registry",
                                                                       "aicompat.rules._index"}
    assert {m for m in rules if not m.startswith("aicompat.rules._shared")} == {"aicompat.rules.fp8"}
    assert "aicompat.matrix" in modules and "libcst.matchers" not in modules


def test_a_lint_never_imports_libcst_matchers(tmp_path):
    (tmp_path / "train.py").write_text("import torch\nx = torch.zeros(2, dtype=torch.float8_e4m3fn)\n"
                                       "import os\nos.environ.update({'TORCH_CUDA_ARCH_LIST': '8.0'})\n")
    code, _, modules = _modules("lint", "--no-cache", "--no-config", "-j", "1", str(tmp_path))
    assert code == 1 and "aicompat.rules.build_flags" in modules and "libcst.matchers" not in modules


def test_the_light_index_lists_what_the_rule_modules_hold():
    classes = registry.discover_rules()
    assert _index.MODULES == {c.code: c.__module__.rsplit(".", 1)[-1] for c in classes}
    assert list(_index.MODULES) == [c.code for c in classes]  # code order, as the generator writes it
    assert _index.EXPLAIN_FACTS == {c.code for c in classes
                                    if c.explain_facts.__func__ is not Rule.explain_facts.__func__}  # type: ignore
    assert registry.IMPLEMENTED == {"AIC001", "AIC002", "AIC003", "AIC004"} | {c.code for c in classes}
    assert [registry.rule_class(c.code) for c in classes] == classes
    assert registry.rule_class("AIC001") is None  # the engine's, no module's


def test_the_index_on_disk_is_what_the_generator_writes():
    r = subprocess.run([sys.executable, str(ROOT / "tools" / "gen_rule_index.py"), "--check"],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr


def test_the_prebuilt_matrix_is_current():
    text = (ROOT / "version_matrix" / prebuilt.PREBUILT).read_text(encoding="utf-8")
    assert text == prebuilt.render(ROOT / "version_matrix"), \
        "version_matrix/prebuilt.tsv is out of date: run python3 tools/prebuild_matrix.py"


def _same(a, b) -> bool:
    """Equal with the same types all the way down (1 is not 1.0, nor True)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return list(a) == list(b) and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    return a == b or (a != a and b != b)  # nan


def test_the_prebuilt_tables_are_exactly_what_tomllib_reads():
    root = ROOT / "version_matrix"
    paths = [p for folder in prebuilt.FOLDERS for p in sorted((root / folder).glob("*.toml"))]
    assert len(paths) > 30 and len(prebuilt._lines()) == len(paths)
    for path in paths:
        with open(path, "rb") as fh:
            assert _same(prebuilt.load_toml(path), tomllib.load(fh)), path


def test_tables_built_from_other_bytes_are_not_used(monkeypatch):
    # An edit not yet rebuilt: the file is parsed from its TOML, never the stale tables.
    path = ROOT / "version_matrix" / "gpus.toml"
    monkeypatch.setattr(prebuilt, "_lines", lambda: {"gpus.toml": ("0" * 64, '{"stale": true}')})
    with open(path, "rb") as fh:
        assert prebuilt.load_toml(path) == tomllib.load(fh)
    monkeypatch.setattr(prebuilt, "_lines", lambda: {})  # none shipped
    assert "arch" in prebuilt.load_toml(path)


def test_a_matrix_elsewhere_is_read_from_its_toml(tmp_path):
    # tests and `aicompat matrix build` load copies: their edits count, whatever prebuilt.tsv says.
    import shutil

    shutil.copytree(ROOT / "version_matrix", tmp_path / "vm", ignore=shutil.ignore_patterns("introspect"))
    gpus = tmp_path / "vm" / "gpus.toml"
    gpus.write_text(gpus.read_text().replace('[gpu.H100]', '[gpu.H100X]\narch = "sm_90"\nsource = "test"\n\n'
                                             '[gpu.H100]', 1))
    assert "H100X" in load_matrix(tmp_path / "vm").files["gpus.toml"]["gpu"]


def test_the_cuda_api_names_load_where_the_type_checkers_see_them():
    import ast

    from aicompat.cuda import api

    tree = ast.parse((SRC / "aicompat" / "cuda" / "api.py").read_text())
    block = next(n for n in tree.body if isinstance(n, ast.If))  # if TYPE_CHECKING:
    seen: dict[str, object] = {}
    for node in block.body:
        assert isinstance(node, ast.ImportFrom)
        package = "aicompat.cuda" + (f".{node.module}" if node.module else "")
        for a in node.names:
            module = __import__(package, fromlist=[a.name])
            seen[a.asname or a.name] = getattr(module, a.name)
    assert set(seen) == set(api._WHERE) == set(api.__all__)
    assert all(getattr(api, name) is value for name, value in seen.items())


def test_a_python_file_without_cuda_loads_no_build_or_exact_mode_module():
    # The lint itself, in this process (the API): CUDA's build, CMake and exact-mode modules
    # load only for a file that reaches them.
    probe = ("import json, sys\nfrom aicompat import Target, lint_source\n"
             "found = lint_source('import torch\\nmodel = torch.nn.Linear(4, 4).cuda()\\n', Target(gpus=['A100']))\n"
             "print(json.dumps([len(found), sorted(sys.modules)]))\n")
    r = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120,
                       env={**os.environ, "PYTHONPATH": str(SRC)})
    assert r.returncode == 0, r.stderr
    found, modules = json.loads(r.stdout)
    assert found == 0 and "aicompat.rules.inline_cuda" in modules
    assert [m for m in modules if m.startswith(("aicompat.cuda.build", "aicompat.cuda.cmake",
                                                "aicompat.cuda.exact"))] == []
