"""AIC401 python-syntax: every syntax feature at the Python below it and at its
own, standard-library modules and names, guards, the prefilter, and the typeshed
reader behind version_matrix/stdlib.toml."""
import importlib.util
import zipfile
from pathlib import Path

import pytest
from conftest import ROOT, lint

from aicompat import Target
from aicompat.matrix import default_matrix
from aicompat.run.config import build_settings
from aicompat.run.linter import Linter

# feature -> a module that uses it (and nothing newer)
SAMPLES = {
    "walrus": "if (n := len(a)) > 3:\n    pass\n",
    "positional_only": "def f(a, /, b):\n    return a\n",
    "fstring_equals": "x = 1\nprint(f'{x=}')\n",
    "unparenthesized_star_return": "def f(a):\n    return 1, *a\n",
    "relaxed_decorator": "@buttons[0].clicked.connect\ndef f():\n    pass\n",
    "parenthesized_with": "with (open('a') as f, open('b') as g):\n    pass\n",
    "walrus_in_set": "s = {y := 1, 2}\n",
    "unparenthesized_star_for": "for x in *a, *b:\n    pass\n",
    "walrus_in_index": "x[y := 1]\n",
    "match": "match command:\n    case 'go':\n        pass\n",
    "except_star": "try:\n    pass\nexcept* ValueError:\n    pass\n",
    "star_index": "x = t[*a]\n",
    "star_annotation": "def f(*args: *Ts):\n    pass\n",
    "type_parameters": "def first[T](xs: list[T]) -> T:\n    return xs[0]\n",
    "type_statement": "type Vec = list[float]\n",
    "fstring_quotes": "x = f\"{d[\"a\"]}\"\n",
    "fstring_backslash": "x = f\"{'\\n'.join(a)}\"\n",
    "fstring_comment": "x = f\"{a  # the a\n}\"\n",
    "fstring_newline": "x = f'{a +\n b}'\n",
    "type_parameter_default": "def f[T = int]():\n    pass\n",
    "template_string": "x = t\"{a}\"\n",
    "unparenthesized_except": "try:\n    pass\nexcept ValueError, TypeError:\n    pass\n",
}


def _features():
    return default_matrix().section("syntax.toml", "feature")


def _below(v: str) -> str:
    major, minor = v.split(".")
    return f"{major}.{int(minor) - 1}"


def aic401(code, python, prefilter=True):
    m = default_matrix()
    settings = build_settings(m, cli=Target(gpus=["sm_80"], python=python), no_config=True)
    linter = Linter(settings.target, m, select=["AIC401", "AIC001"], prefilter=prefilter)
    return linter.lint_bytes(code.encode(), "sample.py").diagnostics


def test_every_feature_has_a_sample_and_a_source():
    assert set(SAMPLES) == set(_features())
    for key, e in _features().items():
        assert e["source"].startswith("https://"), key


@pytest.mark.parametrize("key", sorted(SAMPLES))
def test_feature_flagged_below_its_version_and_not_at_it(key):
    v = _features()[key]["python"]
    construct = _features()[key]["construct"]
    found = aic401(SAMPLES[key], _below(v))
    assert [d.code for d in found] == ["AIC401"], [d.message for d in found]
    assert found[0].message == f"{construct} needs Python {v}; target is Python {_below(v)}"
    assert found[0].targets and "python==" + _below(v) in found[0].targets
    assert aic401(SAMPLES[key], v) == []


@pytest.mark.parametrize("key", sorted(SAMPLES))
def test_prefilter_keeps_every_sample_on_the_version_below(key):
    """The prefilter must be a superset: with it on, the sample is still parsed and flagged."""
    v = _features()[key]["python"]
    assert aic401(SAMPLES[key], _below(v), prefilter=True) == aic401(SAMPLES[key], _below(v), prefilter=False)


def test_syntax_ignores_runtime_guards():
    code = "import sys\nif sys.version_info >= (3, 10):\n    match x:\n        case 1:\n            pass\n"
    assert [d.code for d in aic401(code, "3.9")] == ["AIC401"]


def test_walrus_reported_once_with_the_stricter_rule():
    found = aic401("x[y := 1]\n", "3.8")
    assert len(found) == 1 and "3.10" in found[0].message
    assert len(aic401("if (y := 1):\n    pass\n", "3.7")) == 1


def test_no_false_positives_on_older_spellings():
    ok = [
        "with (a, b):\n    pass\n",  # a tuple: parses everywhere
        "with (open('a')) as f:\n    pass\n",
        "x = f\"{d['a']}\" + f'{n:#x}' + f'''{d[\"a\"]}'''\n",
        "@a.b.c(1, 2)\ndef f():\n    pass\n",
        "def f():\n    return (1, *a)\n",
        "try:\n    pass\nexcept (ValueError, TypeError):\n    pass\n",
        "match = re.match('a', s)\nmatch(x)\n",
        "type = 3\nprint(type)\n",
    ]
    for code in ok:
        assert aic401(code, "3.8") == [], code


# -- standard library ---------------------------------------------------------------

def test_new_modules_and_names():
    cases = [
        ("import tomllib\n", "3.10", "tomllib is new in Python 3.11; target is Python 3.10 (use tomli as a fallback "
                                     "under try/except ImportError)"),
        ("from typing import Self\n", "3.10", "typing.Self is new in Python 3.11; target is Python 3.10 (import it "
                                              "from typing_extensions)"),
        ("import itertools\nitertools.batched(x, 2)\n", "3.11", "itertools.batched is new in Python 3.12"),
        ("import itertools as it\nit.batched(x, 2)\n", "3.11", "itertools.batched is new in Python 3.12"),
        ("from itertools import *\nbatched(x, 2)\n", "3.11", "itertools.batched is new in Python 3.12"),
        ("from functools import cache\n", "3.8", "functools.cache is new in Python 3.9"),
        ("import zoneinfo\n", "3.8", "zoneinfo is new in Python 3.9"),
        ("import asyncio.taskgroups\n", "3.10", "asyncio.taskgroups is new in Python 3.11"),
        ("async def f(it):\n    return await anext(it)\n", "3.9", "anext is new in Python 3.10"),
        ("raise ExceptionGroup('x', [])\n", "3.10", "ExceptionGroup is new in Python 3.11"),
        ("import imp\n", "3.12", "imp was removed in Python 3.12"),
        ("from distutils.util import strtobool\n", "3.12", "distutils was removed in Python 3.12"),
    ]
    for code, py, expect in cases:
        found = lint(code, python=py, select=["AIC401"])
        assert len(found) == 1 and expect in found[0].message, (code, [d.message for d in found])
        v = expect.split("Python ")[1].split(";")[0]
        if "new in" in expect:
            assert lint(code, python=v, select=["AIC401"]) == [], code


def test_guarded_stdlib_uses_are_clean():
    clean = [
        ("import sys\nif sys.version_info >= (3, 11):\n    import tomllib\nelse:\n    import tomli as tomllib\n", "3.10"),
        ("import sys\nif sys.version_info < (3, 11):\n    import tomli as tomllib\nelse:\n    import tomllib\n", "3.10"),
        ("try:\n    import tomllib\nexcept ImportError:\n    import tomli as tomllib\n", "3.10"),
        ("try:\n    from typing import Self\nexcept ImportError:\n    from typing_extensions import Self\n", "3.10"),
        ("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from typing import Self\n", "3.10"),
        ("import typing\nif typing.TYPE_CHECKING:\n    from typing import Self\n", "3.10"),
        ("import itertools\nif hasattr(itertools, 'batched'):\n    b = itertools.batched(x, 2)\n", "3.11"),
        ("import itertools\ntry:\n    b = itertools.batched(x, 2)\nexcept AttributeError:\n    b = None\n", "3.11"),
        ("import sys\nif sys.version_info < (3, 12):\n    import imp\n", "3.12"),
        ("def anext(it):\n    return next(it)\nanext(x)\n", "3.9"),
        ("from itertools import *\ndef batched(x, n):\n    return x\nbatched(x, 2)\n", "3.11"),
    ]
    for code, py in clean:
        assert lint(code, python=py, select=["AIC401"]) == [], code


def test_hasattr_guard_sees_the_name_on_a_new_enough_target():
    code = "import itertools\nif not hasattr(itertools, 'batched'):\n    raise SystemExit\nitertools.batched(x, 2)\n"
    assert lint(code, python="3.12", select=["AIC401"]) == []


def test_prefilter_skips_modern_files_on_a_modern_target():
    m = default_matrix()
    settings = build_settings(m, cli=Target(gpus=["sm_80"], python="3.13"), no_config=True)
    linter = Linter(settings.target, m)
    assert not linter.relevant(b"import os\nprint(f'{os.sep!r}')\nif (n := 3):\n    pass\n")
    assert linter.relevant(b"import cgi\n")  # removed in 3.13
    old = Linter(build_settings(m, cli=Target(python="3.11"), no_config=True).target, m)
    assert old.relevant(b"if (n := 3):\n    pass\n") is False  # every form of := parses on 3.11
    assert old.relevant(b"type X = int\n")


# -- the typeshed reader ------------------------------------------------------------------

def _builder():
    spec = importlib.util.spec_from_file_location("build_stdlib_matrix", ROOT / "tools" / "build_stdlib_matrix.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _wheel(tmp_path: Path, name: str, versions: str, stubs: dict[str, str]) -> Path:
    path = tmp_path / name
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("mypy/typeshed/stdlib/VERSIONS", versions)
        for mod, text in stubs.items():
            zf.writestr(f"mypy/typeshed/stdlib/{mod}.pyi", text)
    return path


def test_builder_reads_versions_and_branches(tmp_path):
    b = _builder()
    versions = "# comment\nspam: 3.0-\nnewmod: 3.11-\noldmod: 3.0-3.11\n_private: 3.12-\n"
    stub = (
        "import sys\n"
        "def always() -> None: ...\n"
        "if sys.version_info >= (3, 12):\n"
        "    def batched() -> None: ...\n"
        "    if sys.version_info >= (3, 13):\n"
        "        X: int\n"
        "if sys.version_info >= (3, 10):\n"
        "    def both() -> int: ...\n"
        "else:\n"
        "    def both() -> str: ...\n"
        "if sys.version_info < (3, 12):\n"
        "    def gone() -> None: ...\n"
        "if sys.platform == 'win32':\n"
        "    if sys.version_info >= (3, 9):\n"
        "        WIN: int\n"
        "if sys.version_info > (3, 10):\n"
        "    _hidden: int\n"
        "    from os import sep as sep\n"
    )
    old = _wheel(tmp_path, "mypy-1.0-py3-none-any.whl", versions, {"spam": stub + "if sys.version_info >= (3, 9):\n"
                                                                              "    def cache() -> None: ...\n"})
    new = _wheel(tmp_path, "mypy-2.0-py3-none-any.whl", versions, {"spam": stub + "def cache() -> None: ...\n"})
    text = b.build([old, new])
    assert text == b.build([old, new])  # deterministic
    import tomllib

    doc = tomllib.loads(text)["module"]
    assert doc["newmod"] == {"added": "3.11", "source": "typeshed in mypy 1.0, 2.0: stdlib/VERSIONS"}
    assert doc["oldmod"]["removed"] == "3.12"
    assert "_private" not in doc
    spam = doc["spam"]
    assert spam["names_added"] == {"3.9": ["WIN", "cache"], "3.11": ["sep"], "3.12": ["batched"], "3.13": ["X"]}
    assert spam["names_removed"] == {"3.12": ["gone"]}
    assert "mypy 1.0, 2.0" in spam["source"] and "stdlib/spam.pyi" in spam["source"]


def test_shipped_table_is_what_the_builder_writes_header():
    text = (ROOT / "version_matrix" / "stdlib.toml").read_text()
    assert text.startswith("# GENERATED by tools/build_stdlib_matrix.py")
    assert "mypy 1.4.1 and 1.14.1 and 2.4.1" in text.splitlines()[1]
    assert "after Python 3.7." in text


_WORKER = """
import functools
from typing import IMPORT


class Worker:
    def __init__(self, mode: "Literal['train', 'eval']" = "train"):
        self.mode = mode

    @functools.CACHED
    def vocab(self):
        return {}
"""


@pytest.mark.parametrize("python, imports, found", [
    ("3.7", ("Literal", "cached_property"), [(3, 20), (10, 6)]),
    ("3.8", ("Literal", "cached_property"), []),
    ("3.7", ("Any", "lru_cache(maxsize=None)"), []),  # the 3.7 twin: names 3.7 has
])
def test_names_new_in_python_38_on_a_37_target(python, imports, found):
    """typing.Literal and functools.cached_property are new in 3.8 (typeshed in mypy 1.4.1, the
    last snapshot with 3.7 branches); the table now starts after 3.7."""
    code = _WORKER.replace("IMPORT", imports[0]).replace("CACHED", imports[1])
    assert [(d.line, d.column) for d in aic401(code, python)] == found


def test_parse_failure_from_newer_syntax_is_named(monkeypatch):
    """An older LibCST that cannot parse t-strings: AIC401 names the construct instead of AIC001."""
    import libcst as cst

    def too_old(data, *a, **k):
        raise cst.ParserSyntaxError("tokenizer error", lines=["x"], raw_line=2, raw_column=4)

    monkeypatch.setattr("aicompat.run.linter.cst.parse_module", too_old)
    code = "import torch\nx = t\"{torch.compile}\"\n"
    found = aic401(code, "3.13")
    assert [d.code for d in found] == ["AIC401"] and found[0].line == 2
    assert found[0].message.startswith('template string literal (t"...") needs Python 3.14; target is Python 3.13')
    assert [d.code for d in aic401(code, "3.14")] == ["AIC001"]  # the target has it: LibCST is the problem
    assert [d.code for d in aic401("import torch\ntorch.compile\nprint 'x'\n", "3.13")] == ["AIC001"]


STDLIB_SAMPLES = [
    "import tomllib\n", "from typing import Self\n", "import itertools as it\nit.batched(x, 2)\n",
    "from itertools import *\nbatched(x, 2)\n", "from os import path\npath.isjunction(p)\n",
    "import os.path\nos.path.splitroot(p)\n", "from asyncio import (\n    TaskGroup,\n)\n",
    "import os, imp\n", "import distutils.util\n", "from importlib import resources\n",
    "async def f(it):\n    return await anext(it)\n", "raise ExceptionGroup('x', [])\n",
    "import collections\ncollections.Callable\n", "from typing import \\\n    override\n",
]


@pytest.mark.parametrize("python", ["3.7", "3.8", "3.9", "3.10", "3.11", "3.12", "3.13", "3.14"])
def test_prefilter_is_a_superset_on_every_target(python):
    for code in list(SAMPLES.values()) + STDLIB_SAMPLES:
        assert aic401(code, python, prefilter=True) == aic401(code, python, prefilter=False), (python, code)


def test_one_finding_per_fstring_problem_and_hints_only_for_backported_names():
    from conftest import lint

    code = ('def report(name, rows):\n'
            '    print(f"{name + "x"} {name + "y"} {name + "z"}")\n'
            '    print(f"{name!r:>{len(rows)}} {rows["a"]}")\n'
            '\n\nasync def first(it):\n    return await anext(it)\n'
            '\n\ndef fail(errs):\n    raise ExceptionGroup("many", errs)\n')
    got = [(d.line, d.column, d.message) for d in lint(code, python="3.9") if d.code == "AIC401"]
    assert got == [
        (2, 13, "f-string reusing its own quote inside a replacement field needs Python 3.12; target is Python 3.9"),
        (3, 35, "f-string reusing its own quote inside a replacement field needs Python 3.12; target is Python 3.9"),
        # exceptiongroup backports only ExceptionGroup/BaseExceptionGroup, not anext.
        (7, 18, "anext is new in Python 3.10; target is Python 3.9 (guard it with sys.version_info or hasattr)"),
        (11, 11, "ExceptionGroup is new in Python 3.11; target is Python 3.9 (import it from exceptiongroup)"),
    ]
