"""The API-table builder on a small synthetic package with two releases, and
the AIC2xx rules reading the table it writes."""

import zipfile
from pathlib import Path

import pytest

from aicompat.matrix import load_matrix
from aicompat.matrix.api_tables import decode_ranges, encode_ranges, load_package
from aicompat.matrix.target import Target
from aicompat.matrixbuild.apiscan import ApiReader, Feeder, signature
from aicompat.matrixbuild.build import PackageSpec, build
from aicompat.model.api_query import bind, presence
from aicompat.run.config import build_settings
from aicompat.run.linter import Linter

V1 = {
    "toypkg/__init__.py": (
        "from .core import keep, Widget\n"
        "from . import extra\n"
        "def old(a, b=1):\n    return a\n"
        "__all__ = ['keep', 'old', 'Widget']\n"
    ),
    "toypkg/core.py": (
        "def keep(x):\n    return x\n"
        "class Widget:\n    def __init__(self, size, *, color='red'):\n        self.size = size\n"
    ),
    "toypkg/extra.py": "VALUE = 1\n",
}
V2 = {
    "toypkg/__init__.py": (
        "from .core import keep, Widget, new\n"
        "from . import extra\n"
        "__all__ = ['keep', 'new', 'Widget']\n"
    ),
    "toypkg/core.py": (
        "import warnings\n"
        "def keep(x, *, c=None):\n    return x\n"
        "def new(x, /, y, **kw):\n"
        "    return x\n"
        "class Base:\n    def __init__(self, size, *, color='red', shape='round'):\n        self.size = size\n"
        "class Widget(Base):\n    pass\n"
        "def legacy():\n"
        "    warnings.warn('legacy() is deprecated; use new()', FutureWarning)\n"
    ),
    "toypkg/core.pyi": (
        "def keep(x: int, *, c: int | None = ...) -> int: ...\n"
        "def new(x: int, /, y: int, **kw: object) -> int: ...\n"
        "class Base:\n    def __init__(self, size: int, *, color: str = ..., shape: str = ...) -> None: ...\n"
        "class Widget(Base): ...\n"
        "def legacy() -> None: ...\n"
    ),
    "toypkg/extra.py": "VALUE = 2\n",
}

SPEC = PackageSpec(dist="toypkg", roots=("toypkg",), modules=["toypkg", "toypkg.core", "toypkg.extra"])


def _wheel(directory: Path, version: str, files: dict) -> None:
    with zipfile.ZipFile(directory / f"toypkg-{version}-py3-none-any.whl", "w") as z:
        for path, text in sorted(files.items()):
            z.writestr(path, text)
        z.writestr(f"toypkg-{version}.dist-info/METADATA", f"Name: toypkg\nVersion: {version}\n")


@pytest.fixture()
def table(tmp_path):
    archives = tmp_path / "archives"
    archives.mkdir()
    _wheel(archives, "1.0", V1)
    _wheel(archives, "2.0", V2)
    out = tmp_path / "api" / "toypkg.toml"
    build("toypkg", ["1.0", "2.0"], archives, out, spec=SPEC, log=lambda *_: None)
    return out


def test_builder_records_added_removed_and_keywords(table):
    text = table.read_text()
    assert "old 0 f (a, b=)" in text  # removed in 2.0
    assert "keep 0 f (x)" in text and "keep 1 f (x, *, c=)" in text  # keyword added in 2.0
    assert "new 1 f (x, /, y, **kw)" in text  # added; positional-only kept
    assert "Widget 0 c (size, *, color=)" in text
    assert "Widget 1 c (size, *, color=, shape=)" in text  # __init__ inherited from Base
    assert "legacy 1 " in text and "legacy() is deprecated; use new()" in text
    assert "toypkg-1.0-py3-none-any.whl sha256:" in text  # provenance: the exact archives read
    api = load_package(table)
    assert [str(v) for v in api.releases] == ["1.0", "2.0"]
    assert presence(api, "toypkg", "old", [0, 1]).lack == {1}
    assert presence(api, "toypkg", "new", [0, 1]).lack == {0}


def test_builder_is_deterministic(tmp_path, table):
    first = table.read_bytes()
    build("toypkg", ["1.0", "2.0"], tmp_path / "archives", table, spec=SPEC, log=lambda *_: None)
    assert table.read_bytes() == first


def test_stub_overloads_union_where_the_py_does_not_define_the_function():
    # torch/nn/functional.py: `conv1d = _add_docstr(torch.conv1d, ...)`; the stub has the signatures.
    files = {
        "p/__init__.py": "import _ext\nf = _add_docstr(_ext.f, 'doc')\n",
        "p/__init__.pyi": ("from typing import overload\n@overload\ndef f(a: int) -> int: ...\n"
                           "@overload\ndef f(a: str, *, sep: str) -> str: ...\n"),
    }
    sym = ApiReader(files).namespace("p").names["f"]
    assert sym.sigs == ("a", "a, *, sep")


def test_the_py_decides_over_a_stale_stub():
    # torch 2.13: nn/functional.py `def mse_loss(input, target, size_average=None, reduce=None,
    # reduction="mean", weight=None)`; nn/functional.pyi still declares it without weight=.
    files = {
        "p/__init__.py": "def mse_loss(input, target, size_average=None, reduce=None, reduction='mean', weight=None):\n"
                         "    pass\n",
        "p/__init__.pyi": "def mse_loss(input, target, size_average=..., reduce=..., reduction=...): ...\n"
                          "def only_in_stub(x): ...\n",
    }
    ns = ApiReader(files).namespace("p")
    assert ns.names["mse_loss"].sigs == ("input, target, size_average=, reduce=, reduction=, weight=",)
    assert "only_in_stub" not in ns.names


def test_star_import_all_relative_and_getattr():
    files = {
        "p/__init__.py": ("from .impl import *\nfrom ._private import helper as public_helper\n"
                          "_lazy = {'late'}\n"
                          "def __getattr__(name):\n    if name in _lazy:\n        return 1\n"
                          "    raise AttributeError(name)\n"),
        "p/impl.py": "__all__ = ['shown']\ndef shown(x): pass\ndef hidden(x): pass\n",
        "p/_private.py": "def helper(a, *args): pass\n",
        "q/__init__.py": "import sys\nsys.modules[__name__] = object()\n",
    }
    reader = ApiReader(files)
    ns = reader.namespace("p")
    assert "shown" in ns.names and "hidden" not in ns.names  # __all__ filters the star import
    assert ns.names["public_helper"].sigs == ("a, *args",)
    assert "late" in ns.names and not ns.open  # a closed __getattr__ adds its keys
    assert reader.namespace("q").open  # replaces itself in sys.modules: names prove nothing


def test_feeder_copies_names_from_an_extension_stub():
    files = {
        "t/__init__.py": "for n in dir(_C):\n    globals()[n] = getattr(_C, n)\n",
        "t/_C/__init__.pyi": "def matmul(input, other, *, out=None): ...\ndef _private(): ...\n",
    }
    ns = ApiReader(files, {"t": [Feeder("t._C", public_only=True)]}).namespace("t")
    assert not ns.open and "_private" not in ns.names
    assert ns.names["matmul"].kind == "b"  # declared in a stub-only module: C-bound


def test_signature_notation_and_binding():
    import ast

    fn = ast.parse("def f(a, /, b, c=1, *args, d, e=2, **kw): pass").body[0]
    assert signature(fn.args) == "a, /, b, c=, *args, d, e=, **kw"
    assert encode_ranges([0, 1, 2, 5, 7, 8]) == "0-2,5,7-8"
    assert decode_ranges("0-2,5,7-8") == {0, 1, 2, 5, 7, 8}
    from aicompat.matrix.api_tables import _params

    params = _params("a, /, b, c=, *, d")
    assert bind(params, 2, ["d"], False, False) is None
    assert bind(params, 1, ["d"], False, False).detail == "missing required argument 'b'"
    assert bind(params, 2, ["a", "d"], False, False).kind == "posonly"
    assert bind(params, 4, ["d"], False, False).kind == "positional"
    assert bind(params, 2, [], False, True) is None  # **kwargs at the call may supply d


def _lint_with(table: Path, code: str, pin: str):
    matrix = load_matrix()
    matrix.api_dir = table.parent
    matrix.api_roots = dict(matrix.api_roots, toypkg="toypkg")
    settings = build_settings(matrix, cli=Target(gpus=["sm_90"], pins={"toypkg": pin}), no_config=True)
    return Linter(settings.target, matrix).lint_bytes(code.encode(), "m.py").diagnostics


def test_rules_read_the_generated_table(table):
    code = ("import torch\nimport toypkg\nfrom toypkg import new\n"
            "toypkg.old(1)\ntoypkg.keep(1, c=2)\ntoypkg.Widget(3, shape='square')\ntoypkg.core.legacy()\n")
    on_v1 = {(d.code, d.line) for d in _lint_with(table, code, "1.0")}
    assert ("AIC201", 3) in on_v1  # `new` is not in 1.0
    assert ("AIC202", 5) in on_v1 and ("AIC202", 6) in on_v1  # c= and shape= arrived in 2.0
    on_v2 = {(d.code, d.line, d.message.split(" ")[0]) for d in _lint_with(table, code, "2.0")}
    assert ("AIC201", 4, "toypkg.old") in on_v2  # removed in 2.0
    assert ("AIC203", 7, "toypkg.core.legacy") in on_v2
    assert not any(c == "AIC202" for c, _, _ in on_v2)
    msgs = [d.message for d in _lint_with(table, "import torch, toypkg\ntoypkg.old(1)\n", "2.0")]
    assert msgs == ["toypkg.old is not in toypkg 2.0 (removed in 2.0; last in 1.0); pins allow toypkg 2.0"]


def test_an_sdist_is_downloaded_without_running_anything_of_it(tmp_path, monkeypatch):
    # issue 16 item 12: `pip download --no-binary :all: --no-build-isolation` prepared the sdist's
    # metadata, which runs its setup.py in aicompat's own interpreter. Now the file comes from the
    # URL PyPI's JSON lists, checked against its sha256, and no process is started.
    import hashlib
    import io
    import json
    import subprocess
    import urllib.request

    from aicompat.matrixbuild import build as mb

    payload = b"fake sdist bytes"
    meta = {"urls": [
        {"packagetype": "bdist_wheel", "filename": "flash_attn-2.6.3-py3-none-any.whl", "url": "https://x/w"},
        {"packagetype": "sdist", "filename": "flash_attn-2.6.3.tar.gz", "url": "https://x/s",
         "digests": {"sha256": hashlib.sha256(payload).hexdigest()}},
    ]}

    def urlopen(url, timeout=None):
        return io.BytesIO(json.dumps(meta).encode() if url.endswith("/json") else payload)

    def no_process(*a, **k):
        raise AssertionError("a process was started")

    monkeypatch.setattr(urllib.request, "urlopen", urlopen)
    monkeypatch.setattr(subprocess, "run", no_process)
    spec = mb.PACKAGES["flash-attn"]
    got = mb.download(spec, "2.6.3", tmp_path)
    assert got == tmp_path / "flash_attn-2.6.3.tar.gz" and got.read_bytes() == payload
    meta["urls"][1]["digests"]["sha256"] = "0" * 64
    meta["urls"][1]["filename"] = "flash_attn-2.6.4.tar.gz"
    with pytest.raises(RuntimeError, match="sha256"):
        mb.download(spec, "2.6.4", tmp_path)
    assert not list(tmp_path.glob("*2.6.4*"))


def test_static_reader_follows_what_the_runtime_does():
    # Shapes taken from torch's own files: torch/__init__.py (PRIVATE_OPS, `del`, TYPE_CHECKING),
    # torch/_C/__init__.pyi (its typing imports and type variables are the stub's, not torch._C's).
    files = {
        "t/__init__.py": (
            "from typing import TYPE_CHECKING\n"
            "from t._C import *\n"
            "if TYPE_CHECKING:\n    from t.types import Device\n"
            "PRIVATE_OPS = ('unique_dim',)\n"
            "for __name in dir(_C._VariableFunctions):\n"
            "    if __name.startswith('__') or __name in PRIVATE_OPS:\n        continue\n"
            "    globals()[__name] = getattr(_C._VariableFunctions, __name)\n"
            "_tmp = 1\ndel _tmp\n"
        ),
        "t/types.py": "Device = str\n",
        "t/_C/__init__.pyi": (
            "from typing import Any, Sequence\nfrom t.types import Device\nfrom t.types import Device as Device2\n"
            "K = TypeVar('K')\nStack = list[Any]\n"
            "def get_num_threads() -> int: ...\nclass Generator: ...\n"
        ),
        "t/_C/_VariableFunctions.pyi": "from typing import Any\ndef unique_dim(input, dim): ...\ndef add(input, other): ...\n",
    }
    feeders = {"t": [Feeder("t._C", public_only=True, exclude_suffix="Base"),
                     Feeder("t._C._VariableFunctions", exclude_listed_in="PRIVATE_OPS")]}
    names = set(ApiReader(files, feeders).namespace("t").names)
    assert {"get_num_threads", "Generator", "add"} <= names
    for invented in ("Device", "Sequence", "Any", "K", "Stack", "unique_dim", "_tmp"):
        assert invented not in names, invented
    # PEP 484: only `import X as X` re-exports from a stub
    assert "Device2" not in names


def test_dataclass_fields_are_the_constructor_keywords():
    # Transformer Engine's recipes (common/recipe/__init__.py): pydantic dataclasses over a plain
    # base, fields added and removed between releases; PEP 557's rules for the rest.
    files = {
        "pkg/__init__.py": (
            "import dataclasses\nfrom dataclasses import dataclass, field, KW_ONLY\n"
            "from typing import ClassVar\nfrom enum import Enum\n"
            "from pydantic.dataclasses import dataclass as pyd_dataclass\n"
            "class Format(Enum):\n    E4M3 = 1\n    HYBRID = 2\n    def helper(self):\n        return 1\n"
            "class Recipe:\n    _cached: int = 0\n"
            "@pyd_dataclass()\nclass Delayed(Recipe):\n    margin: int = 0\n    fp8_format: Format = Format.HYBRID\n"
            "    amax_history_len: int = 1024\n"
            "@dataclasses.dataclass\nclass Base:\n    a: int\n    b: int = 1\n    N: ClassVar[int] = 3\n"
            "@dataclass(repr=False)\nclass Child(Base):\n    c: str = 'x'\n    a: int = 5\n"
            "    hidden: int = field(default=0, init=False)\n    _: KW_ONLY\n    d: bool = field(default_factory=bool)\n"
            "class Plain(Child):\n    pass\n"
            "@pyd_dataclass(config=None)\nclass Configured:\n    x: int = 0\n"
            "@dataclass\nclass OwnInit:\n    x: int = 0\n    def __init__(self, y):\n        self.x = y\n"
        ),
    }
    ns = ApiReader(files).namespace("pkg").names
    assert ns["Delayed"].sigs == ("margin=, fp8_format=, amax_history_len=",)  # Recipe is no dataclass: no fields
    assert ns["Delayed"].init == "pydantic.dataclasses.dataclass"
    assert ns["Base"].sigs == ("a, b=",) and ns["Base"].init == "dataclasses.dataclass"  # ClassVar is no field
    # a redefined field keeps its place; init=False leaves it out; KW_ONLY makes the rest keyword-only
    assert ns["Child"].sigs == ("a=, b=, c=, *, d=",)
    assert ns["Plain"].sigs == ("a=, b=, c=, *, d=",) and ns["Plain"].init == "dataclasses.dataclass"
    assert ns["Configured"].sigs is None  # pydantic's config decides what an unknown keyword does
    assert ns["OwnInit"].sigs is None  # a dataclass keeps its own __init__: not modelled
    fmt = ApiReader(files).class_namespace("pkg.Format")
    assert fmt is not None and fmt.is_class and not fmt.open
    assert sorted(fmt.names) == ["E4M3", "HYBRID", "helper"]
    assert ApiReader(files).class_namespace("pkg.Missing") is None
    assert ApiReader(files).class_namespace("pkg.Recipe").open  # not an enum: inherits names


def test_transformer_engine_release_tags():
    from aicompat.matrixbuild.build import PACKAGES, _te_tag

    assert [_te_tag(v) for v in ("2.9.0", "2.14.1", "1.13.0", "2.6.0.post1")] == ["v2.9", "v2.14.1", "v1.13", None]
    spec = PACKAGES["transformer-engine"]
    assert spec.wheels == ("transformer_engine_cu12", "transformer-engine")
    assert "transformer_engine.common.recipe.Format" in spec.classes
