"""AIC401 on annotations evaluated at definition time (version_matrix/syntax.toml
[runtime.*]): PEP 585 generics before 3.9 and PEP 604 unions before 3.10, in
code with no torch import, each failing module with its fixed twin."""
from conftest import lint

from aicompat import Target
from aicompat.matrix import default_matrix
from aicompat.run.api import lint_paths
from aicompat.run.config import build_settings
from aicompat.run.linter import Linter

UTILS = '''\
"""Small helpers shared by the training scripts (no torch here)."""
import collections
import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field


@dataclass
class RunConfig:
    name: str
    layers: list[int] = field(default_factory=list)
    resume_from: str | None = None


def load_config(path: str) -> dict[str, object]:
    with open(path) as f:
        return json.load(f)


def batches(items: list[str], size: int) -> Iterator[list[str]]:
    buf: list[str] = []  # a local's annotation never runs
    for it in items:
        buf.append(it)
        if len(buf) == size:
            yield buf
            buf = []


def retry(fn: Callable[[], object], times: int = 3) -> object:
    for _ in range(times):
        try:
            return fn()
        except OSError:
            pass
    return None


class History:
    window: collections.deque[float]

    def __init__(self) -> None:
        self.window = collections.deque(maxlen=100)
'''

UTILS_FIXED = '''\
"""Small helpers shared by the training scripts (no torch here)."""
import collections
import json
from dataclasses import dataclass, field
from typing import Callable, Deque, Dict, Iterator, List, Optional


@dataclass
class RunConfig:
    name: str
    layers: List[int] = field(default_factory=list)
    resume_from: Optional[str] = None


def load_config(path: str) -> Dict[str, object]:
    with open(path) as f:
        return json.load(f)


def batches(items: List[str], size: int) -> Iterator[List[str]]:
    buf: list[str] = []  # a local's annotation never runs
    for it in items:
        buf.append(it)
        if len(buf) == size:
            yield buf
            buf = []


def retry(fn: Callable[[], object], times: int = 3) -> object:
    for _ in range(times):
        try:
            return fn()
        except OSError:
            pass
    return None


class History:
    window: "collections.deque[float]"

    def __init__(self) -> None:
        self.window = collections.deque(maxlen=100)
'''

PEP585 = "(PEP 585) needs Python 3.9 when evaluated at definition time; target is Python 3.8"
PEP604 = "X | Y union in an annotation (PEP 604) needs Python 3.10 when evaluated at definition time"


def _found(code, python):
    return [(d.line, d.column, d.message) for d in lint(code, python=python, select=["AIC401"])]


def test_utils_module_on_38_reports_each_evaluated_annotation():
    found = _found(UTILS, "3.8")
    assert [(line, col) for line, col, _ in found] == [(11, 13), (12, 18), (15, 31), (20, 20), (20, 45), (29, 15),
                                                       (39, 13)]
    msgs = [m for _, _, m in found]
    assert msgs[0].startswith("list[...] in an annotation " + PEP585)
    assert "TypeError: ... object is not subscriptable; add `from __future__ import annotations` or use " \
           "typing.List" in msgs[0]
    assert msgs[1].startswith(PEP604) and "typing.Optional/typing.Union" in msgs[1]
    assert msgs[2].startswith("dict[...] in an annotation") and msgs[2].endswith("typing.Dict)")
    assert msgs[4].startswith("collections.abc.Iterator[...]") and msgs[4].endswith("typing.Iterator)")
    assert msgs[5].startswith("collections.abc.Callable[...]") and msgs[5].endswith("typing.Callable)")
    assert msgs[6].startswith("collections.deque[...]") and msgs[6].endswith("typing.Deque)")


def test_utils_module_on_39_has_only_the_union():
    assert [(line, col) for line, col, _ in _found(UTILS, "3.9")] == [(12, 18)]
    assert _found(UTILS, "3.10") == []


def test_fixed_twins_are_clean():
    for py in ("3.8", "3.9"):
        assert _found(UTILS_FIXED, py) == []
        assert _found("from __future__ import annotations\n" + UTILS, py) == []


def test_guards_and_unevaluated_places():
    clean = [
        # never runs on 3.9: TYPE_CHECKING, a version test
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    def h(x: list[int]) -> int | None: ...\n",
        "import sys\nif sys.version_info >= (3, 10):\n    def k(x: int | None) -> None:\n        pass\n",
        # strings, Literal, typing names
        "from typing import List, Literal\ndef f(x: 'int | None', m: Literal['a'] = 'a') -> List[int]:\n"
        "    return []\n",
        # a local variable's annotation is never evaluated
        "def f():\n    y: int | None = None\n    return y\n",
        # a rebound name is not the builtin
        "from typing import List as list\ndef f(x: list[int]) -> None:\n    pass\n",
    ]
    for code in clean:
        assert _found(code, "3.8") == [], code
    # a class body inside a function runs its annotations when the function runs
    code = "def make():\n    class Row:\n        ids: tuple[int, ...]\n    return Row\n"
    assert [(line, col) for line, col, _ in _found(code, "3.8")] == [(3, 14)]
    # a version test that lets 3.9 in
    code = "import sys\nif sys.version_info >= (3, 9):\n    def k(x: int | None) -> None:\n        pass\n"
    assert [(line, col) for line, col, _ in _found(code, "3.9")] == [(3, 14)]


def test_python_314_defers_annotations():
    plan_matrix = default_matrix()
    from aicompat.rules.python_syntax import plan_for
    assert plan_for(plan_matrix, (3, 14)).runtime == {}
    assert set(plan_for(plan_matrix, (3, 8)).runtime) == {"generic_alias", "union_operator"}
    assert set(plan_for(plan_matrix, (3, 9)).runtime) == {"union_operator"}


def test_prefilter_lets_torch_free_files_through(tmp_path):
    m = default_matrix()
    linter = Linter(build_settings(m, cli=Target(python="3.9"), no_config=True).target, m)
    assert linter.relevant(b"def f(x: int | None) -> None:\n    pass\n")
    assert not linter.relevant(b"from __future__ import annotations\ndef f(x: int | None) -> None:\n    pass\n")
    old = Linter(build_settings(m, cli=Target(python="3.8"), no_config=True).target, m)
    assert old.relevant(b"def f(x: dict[str, int]) -> None:\n    pass\n")
    assert old.relevant(b"from collections.abc import Callable as Fn\ndef f(cb: Fn[[], None]) -> None:\n    pass\n")
    # the whole run: a utils module with no torch token is parsed and judged
    (tmp_path / "utils.py").write_text(UTILS)
    (tmp_path / "utils_fixed.py").write_text(UTILS_FIXED)
    diags = lint_paths([tmp_path], target=Target(python="3.9"), use_config=False, select=["AIC401"])
    assert [(d.path.rsplit("/", 1)[-1], d.line) for d in diags] == [("utils.py", 12)]


def test_prefilter_is_a_superset_on_annotation_samples():
    m = default_matrix()
    samples = [UTILS, UTILS_FIXED, "import collections.abc as cabc\ndef f(cb: cabc.Callable[[], None]) -> None:\n"
               "    pass\n", "from collections import deque as dq\nx: dq[int]\n", "y: 'int | None' = None\n"]
    for py in ("3.8", "3.9"):
        target = build_settings(m, cli=Target(python=py), no_config=True).target
        on, off = (Linter(target, m, select=["AIC401"], prefilter=p) for p in (True, False))
        for code in samples:
            assert on.lint_bytes(code.encode(), "m.py").diagnostics == off.lint_bytes(code.encode(), "m.py").diagnostics
