"""Lint work grows linearly with the file (issue 15 item 5): no rule scans the
whole text once per node. Counted, not timed: the number of times the checked
file's text is handed to a rule (``FileContext.text`` reads) and the number of
whole-text scans must not grow with the number of call sites.
bench/bench_linear.py times the same growth with medians."""

from __future__ import annotations

import pytest
from conftest import lint

from aicompat.core import engine
from aicompat.rules import python_syntax

# A realistic async data loader, the shape unsloth/vLLM servers have: ``anext`` is a
# builtin since Python 3.10, so every call below is one the AIC401 rule judges.
BLOCK = '''
async def pull_{i}(stream, model, batch):
    first = await anext(stream)
    rest = [await anext(stream) for _ in range(batch - 1)]
    out = model(first, *rest)
    torch.save(out, "step_{i}.pt")
    return out
'''

HEADER = "import torch\nimport os\nos.environ['TORCH_CUDA_ARCH_LIST'] = '8.0;9.0'\n"


def _module(n: int) -> str:
    return HEADER + "".join(BLOCK.format(i=i) for i in range(n))


@pytest.fixture
def text_reads(monkeypatch):
    """Counts reads of ``FileContext.text`` (the whole file's text) during a lint."""
    counter = {"reads": 0}

    def get(self):
        counter["reads"] += 1
        return self.__dict__["_text"]

    def put(self, value):
        self.__dict__["_text"] = value

    monkeypatch.setattr(engine.FileContext, "text", property(get, put), raising=False)
    return counter


def test_whole_text_reads_do_not_grow_with_call_sites(text_reads):
    counts = []
    for n in (20, 40):
        text_reads["reads"] = 0
        diags = lint(_module(n), python="3.9")
        assert sum(d.code == "AIC401" for d in diags) == 2 * n  # each block's anext() calls were judged
        counts.append(text_reads["reads"])
    assert counts[0] == counts[1], f"the text was read {counts} times for 20 and 40 blocks"


def test_builtin_binding_scan_runs_once_per_name(monkeypatch):
    calls = []
    real = python_syntax._bound_somewhere

    def counted(name, text):
        calls.append(name)
        return real(name, text)

    monkeypatch.setattr(python_syntax, "_bound_somewhere", counted)
    diags = lint(_module(30), python="3.9")
    assert sum(d.code == "AIC401" for d in diags) == 60
    assert calls == ["anext"]


def test_a_module_that_defines_the_builtin_is_still_silent():
    fixed = "async def anext(it):\n    return await it.__anext__()\n" + _module(3)
    assert not [d for d in lint(fixed, python="3.9") if d.code == "AIC401"]


class _CountedBytes(bytes):
    """A package file's bytes that count substring searches (``needle in data``)."""
    searches = 0

    def __contains__(self, item):
        _CountedBytes.searches += 1
        return super().__contains__(item)


def test_package_files_are_not_searched_once_per_function(tmp_path, monkeypatch):
    """The callers of a function are looked up in the package's other modules: each
    module's text is indexed once, not searched again for every function of the file."""
    from aicompat.matrix.target import Target
    from aicompat.model import project
    from aicompat.run.api import lint_paths

    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'srv'\n")
    pkg = tmp_path / "srv"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    for k in range(5):
        (pkg / f"util_{k}.py").write_text(f"def helper_{k}(x):\n    return x + {k}\n")
    real = project._package_files

    def counted(root):
        return [(p, _CountedBytes(d)) for p, d in real(root)]

    monkeypatch.setattr(project, "_package_files", lambda root: counted_cache.setdefault(str(root), counted(root)))
    searches = []
    for n in (10, 20):
        counted_cache: dict = {}
        project._files.clear()
        getattr(project, "_callees", {}).clear()
        (pkg / "loader.py").write_text(_module(n))
        _CountedBytes.searches = 0
        lint_paths([pkg / "loader.py"], target=Target(gpus=["A100"], python="3.9"))
        searches.append(_CountedBytes.searches)
    assert searches[0] == searches[1], f"package files searched {searches} times for 10 and 20 functions"
