"""The stored runtime introspections of Triton (version_matrix/introspect/triton-*.toml), the API
table built from them (version_matrix/api/triton.toml) and the triton release each torch wheel
requires (version_matrix/requires.toml)."""

from __future__ import annotations

import importlib.util
import inspect
import re
from pathlib import Path

from packaging.version import Version

from aicompat.base.toml_compat import tomllib
from aicompat.matrix import default_matrix
from aicompat.matrix.api_tables import load_package
from aicompat.matrixbuild import introspection
from aicompat.matrixbuild.build import PACKAGES

ROOT = Path(__file__).resolve().parent.parent
INTRO = ROOT / "version_matrix" / "introspect"
TABLE = ROOT / "version_matrix" / "api" / "triton.toml"
STORED = introspection.stored(INTRO, "triton")


def _tool():
    spec = importlib.util.spec_from_file_location("triton_introspect", ROOT / "tools" / "triton_introspect.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_every_release_of_releases_toml_was_imported_with_provenance():
    releases = [str(v) for v in default_matrix().releases("triton")]
    assert sorted(STORED, key=Version) == releases
    for release, intro in STORED.items():
        meta = intro.meta
        assert meta["package"] == "triton" and meta["version"].split("+")[0] == release
        assert re.fullmatch(r"[0-9a-f]{64}", meta["sha256"])
        assert meta["wheel"].startswith(f"triton-{release}-") and "cp311" in meta["wheel"]
        assert meta["python"].startswith("3.11.")
        assert "triton.language" in meta["eager"]


def test_the_tool_covers_the_modules_the_builder_records():
    assert _tool().MODULES == PACKAGES["triton"].modules


def test_table_lists_every_release_and_agrees_with_the_runtime():
    api = load_package(TABLE)
    assert [str(v) for v in api.releases] == sorted(STORED, key=Version)
    runtime = tomllib.loads(TABLE.read_text())["meta"]["runtime"]
    for release, intro in STORED.items():
        idx = api.index_of(Version(release))
        assert any(r.startswith(f"{release}: ") for r in runtime)
        a = introspection.compare(api, idx, intro)
        assert a.only_runtime == [] and a.only_table == []
        assert a.sigs_compared > 250 and a.sigs_differ == [], a.sigs_differ[:10]


def _sigs(release: str, module: str, name: str):
    api = load_package(TABLE)
    i = api.index_of(Version(release))
    for rng, kind, sigs in api.module(module).entries(name) or ():
        if i in rng:
            return kind, [s.text for s in sigs or ()]
    return None


def test_builtins_are_recorded_as_a_kernel_author_calls_them():
    # @builtin functions take _builder (2.x) / _semantic (3.x) from the compiler: never recorded.
    assert _sigs("2.1.0", "triton.language", "load") == (
        "f", ["pointer, mask=, other=, boundary_check=, padding_option=, cache_modifier=, eviction_policy=, volatile="])
    assert _sigs("2.0.0", "triton.language", "program_id") == ("f", ["axis"])
    assert _sigs("3.9.0", "triton.language", "program_id") == ("f", ["axis"])
    # tl.sum is a @triton.jit function (a JITFunction object): the function it compiles.
    assert _sigs("2.0.0", "triton.language", "sum") == ("f", ["input, axis"])
    kind, sigs = _sigs("3.0.0", "triton.language", "sum")
    assert kind == "f" and "keep_dims=" in sigs[0]
    for module, names in load_package(TABLE).modules.items():
        assert not re.search(r"\b_(builder|semantic|generator)\b", names.raw_names), module


def test_libdevice_moves_are_in_the_table():
    assert _sigs("2.0.0", "triton.language.libdevice", "tanh") is not None
    assert _sigs("2.1.0", "triton.language.libdevice", "tanh") is None
    assert _sigs("2.1.0", "triton.language.math", "tanh") == ("f", ["arg0"])
    assert _sigs("3.0.0", "triton.language.extra.cuda.libdevice", "tanh") == ("f", ["arg0"])
    for release in STORED:
        assert _sigs(release, "triton.language", "tanh") is None, release
        assert _sigs(release, "triton.language", "float8e4m3") is None, release


def test_the_tool_drops_what_the_compiler_passes():
    tool = _tool()

    def load(pointer, mask=None, cache_modifier="", _builder=None):
        pass

    def reduce(input, axis, combine_fn, _semantic=None, _generator=None):
        pass

    assert tool.user_signature(load) == "pointer, mask=, cache_modifier="
    assert tool.user_signature(reduce) == "input, axis, combine_fn"

    class JITFunction:  # the shape of triton.runtime.jit.JITFunction: the compiled function as .fn
        def __init__(self, fn):
            self.fn = fn

        def __call__(self, *args, **kwargs):
            raise RuntimeError("Cannot call @triton.jit'd outside of the scope of a kernel")

    def cdiv(x, div):
        pass

    assert tool.signatures(JITFunction(cdiv)) == ("f", "i", ["x, div"])
    assert inspect.isfunction(tool.jit_function(JITFunction(cdiv)))
    assert tool.jit_function(cdiv) is None and tool.jit_function(3) is None


def test_each_torch_release_requires_the_triton_its_wheel_names():
    m = default_matrix()
    req = m.required("torch", "triton")
    assert set(req) == set(m.releases("torch"))
    assert req[Version("2.4.0")] == [Version("3.0.0")]
    assert req[Version("2.0.1")] == [Version("2.0.0")]
    assert req[Version("2.14.0")] == [Version("3.8.0")]  # triton~=3.8.0
    data = tomllib.loads((ROOT / "version_matrix" / "requires.toml").read_text())["requires"]
    for key, e in data.items():
        assert key == f"torch=={e['release']}" and re.fullmatch(r"[0-9a-f]{64}", e["wheel_sha256"])
        assert e["wheel"].startswith(f"torch-{e['release']}-cp311-cp311-manylinux") and "Requires-Dist: triton" \
            in e["source"]


def test_the_requires_reader_parses_both_metadata_spellings():
    spec = importlib.util.spec_from_file_location("read_torch_requires", ROOT / "tools" / "read_torch_requires.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    meta = ("Metadata-Version: 2.1\nName: torch\nRequires-Dist: filelock\n"
            'Requires-Dist: triton (==2.0.0) ; platform_system == "Linux" and platform_machine == "x86_64"\n'
            'Requires-Dist: triton~=3.8.0; platform_system == "Linux" and python_version < "3.15"\n'
            'Requires-Dist: optree>=0.13.0; extra == "optree"\n')
    got = mod.requirements(meta)
    assert [(p, s) for p, s, _, _ in got] == [("triton", "==2.0.0"), ("triton", "~=3.8.0")]
    assert got[0][3] == 'platform_system == "Linux" and platform_machine == "x86_64"'
