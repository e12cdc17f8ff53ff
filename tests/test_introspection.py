"""The stored runtime introspections of torch (version_matrix/introspect/) and the API table
built from them: the table must say what each introspected release showed at run time."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import pytest
from packaging.version import Version

from aicompat.matrix.api_tables import load_package
from aicompat.matrixbuild import introspection
from aicompat.matrixbuild.apiscan import Namespace, Sym
from aicompat.matrixbuild.build import PACKAGES

ROOT = Path(__file__).resolve().parent.parent
INTRO = ROOT / "version_matrix" / "introspect"
TABLE = ROOT / "version_matrix" / "api" / "torch.toml"


def _tool():
    spec = importlib.util.spec_from_file_location("torch_introspect", ROOT / "tools" / "torch_introspect.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


STORED = introspection.stored(INTRO, "torch")


def test_at_least_four_releases_spread_over_2x_with_provenance():
    releases = sorted(STORED, key=Version)
    assert len(releases) >= 4 and Version(releases[0]) <= Version("2.4.1") and Version(releases[-1]) >= Version("2.13")
    for intro in STORED.values():
        meta = intro.meta
        assert re.fullmatch(r"[0-9a-f]{64}", meta["sha256"])
        assert meta["wheel"].startswith(f"torch-{intro.release}") and meta["wheel"].endswith(".whl")
        assert meta["version"].split("+")[0] == intro.release
        assert "torch.nn" in meta["eager"]
        if "lazy" in meta:
            assert "torch.nn.utils.prune" in meta["lazy"] and "torch.nn.functional" not in meta["lazy"]


def test_the_tool_covers_the_modules_the_builder_records():
    tool = _tool()
    assert tool.MODULES == PACKAGES["torch"].modules and tool.EXPAND == PACKAGES["torch"].expand


@pytest.mark.parametrize("release", sorted(STORED, key=Version))
def test_table_agrees_with_the_runtime(release):
    api = load_package(TABLE)
    idx = api.index_of(Version(release))
    assert idx is not None, f"{release} is introspected but not in the table"
    assert any(r.startswith(f"{release}: ") for r in _runtime_meta()), "the table does not say the runtime decided"
    a = introspection.compare(api, idx, STORED[release])
    assert a.only_runtime == [] and a.only_table == []
    assert a.sigs_compared > 1000 and a.sigs_agree >= 0.995, a.sigs_differ[:20]


def _runtime_meta():
    from aicompat.base.toml_compat import tomllib
    return tomllib.loads(TABLE.read_text())["meta"].get("runtime", [])


def test_lazy_submodules_are_recorded():
    # `import torch` does not import torch.nn.utils.prune (AttributeError after a bare import).
    api = load_package(TABLE)
    idx = api.index_of(Version("2.13.0"))
    assert idx in api.module("torch.nn.utils").lazy("prune")
    assert idx not in api.module("torch.nn").lazy("functional")


# -- what the tool reads, on the texts torch prints ---------------------------------------------
def test_parser_listing_of_an_overloaded_function():
    # torch 2.13.0: torch.linspace() raises this TypeError
    msg = ("linspace() received an invalid combination of arguments - got (), but expected one of:\n"
           " * (Tensor start, Tensor end, int steps, *, Tensor out = None, torch.dtype dtype = None, torch.layout "
           "layout = None, torch.device device = None, bool pin_memory = False, bool requires_grad = False)\n"
           " * (Number start, Number end, int steps, *, Tensor out = None, torch.dtype dtype = None, torch.layout "
           "layout = None, torch.device device = None, bool pin_memory = False, bool requires_grad = False)\n")
    assert _tool().parser_listing(msg) == [
        "start, end, steps, *, out=, dtype=, layout=, device=, pin_memory=, requires_grad="]


def test_parser_listing_of_a_type_keeps_both_forms():
    # torch 2.13.0: torch.device(__aicompat_probe__=None)
    msg = ("device() received an invalid combination of arguments - got (__aicompat_probe__=NoneType, ), but "
           "expected one of:\n * (torch.device device)\n      didn't match because some of the keywords were "
           "incorrect: __aicompat_probe__\n * (str type, int index = -1)\n")
    assert _tool().parser_listing(msg) == ["device", "type, index="]


def test_parser_strings_with_a_var_args_int_list():
    # libtorch_python.so: "ones(SymIntArrayRef size, *, Tensor out=None, ScalarType? dtype=None, ...)"
    sigs = _tool().parser_sig("SymIntArrayRef size, *, Tensor out=None, ScalarType? dtype=None")
    assert sigs == ["size, *, out=, dtype=", "*size, out=, dtype="]


def test_pybind_listing():
    # torch 2.13.0: torch.distributed.FileStore.__init__.__doc__
    doc = ("__init__(self: torch._C._distributed_c10d.FileStore, file_name: str, world_size: typing.SupportsInt "
           "| typing.SupportsIndex = -1) -> None\n\nCreates a new FileStore.\n")
    assert _tool().pybind_listing(doc, "__init__", drop_self=True) == ["file_name, world_size="]
    # unnamed pybind11 arguments are positional-only
    assert _tool().pybind_listing("f(arg0: int, arg1: str) -> None", "f", drop_self=False) == ["arg0, arg1, /"]


# -- the merge ----------------------------------------------------------------------------------------
def _intro(names: dict[str, str], lazy=()) -> introspection.Introspection:
    out = introspection.Introspection("9.9.9", {"lazy": list(lazy)})
    out.modules["pkg"] = dict(introspection.parse_line(f"{n} {v}") for n, v in names.items())
    return out


def test_runtime_decides_and_every_difference_is_reported():
    static = Namespace(names={
        "Device": Sym("a"),  # the stub's `from torch.types import Device`
        "mse_loss": Sym("f", ("input, target, size_average=, reduce=, reduction=",), "old"),
        "conv1d": Sym("f", ("input, weight, bias=",)),
        "__version__": Sym("a"),
    })
    intro = _intro({
        "mse_loss": "f i (input, target, size_average=, reduce=, reduction=, weight=)",
        "conv1d": "b -",
        "uint4": "a -",
        "prune": "m -",
    }, lazy=["pkg.prune"])
    merged, report = introspection.merge({"pkg": static}, intro)
    ns = merged["pkg"]
    assert set(ns.names) == {"mse_loss", "conv1d", "uint4", "prune", "__version__"}
    assert ns.names["mse_loss"] == Sym("f", ("input, target, size_average=, reduce=, reduction=, weight=",), "old")
    assert ns.names["conv1d"] == Sym("b", ("input, weight, bias=",))  # no runtime signature: the static one
    assert ns.lazy == {"prune"} and not ns.open
    assert report == [
        "pkg.mse_loss: signatures (input, target, size_average=, reduce=, reduction=) in the static reading, "
        "(input, target, size_average=, reduce=, reduction=, weight=) at run time (i; the run time's kept)",
        "pkg.prune: only at run time (added, module)",
        "pkg.uint4: only at run time (added, attribute)",
        "pkg.Device: only in the static reading (dropped, attribute)",
    ]


def test_a_release_read_statically_between_two_introspected_ones():
    def intro(names, lazy):
        out = introspection.Introspection("x", {"lazy": lazy})
        out.modules["pkg"] = dict(introspection.parse_line(f"{n} {v}") for n, v in names.items())
        return out

    runtime = {"uint4": "a -", "add": "b p (input, other, *, alpha=, out=)", "prune": "m -"}
    stub = {"Module": Sym("c", ("",)), "add": Sym("b", ("input, other",)), "prune": Sym("m")}
    statics = [{"pkg": Namespace(names=dict(stub))} for _ in range(3)]
    snaps = [None, {"pkg": Namespace(names=dict(stub))}, None]
    intros = [intro(runtime, ["pkg.prune"]), None, intro(runtime, ["pkg.prune"])]
    assert introspection.between(1, snaps, statics, intros) == (1, 1)
    ns = snaps[1]["pkg"]
    # uint4: both showed it, the static reading missed it; Module: the stub's, neither showed it.
    assert set(ns.names) == {"uint4", "add", "prune"} and ns.lazy == {"prune"}
    # the same stub signature at both ends, corrected alike by both runtimes: corrected here too
    assert ns.names["add"] == Sym("b", ("input, other, *, alpha=, out=",))
    # a name only the newer neighbour showed: perhaps there, so never claimed missing
    newer = dict(runtime, int4="a -")
    snaps2 = [None, {"pkg": Namespace(names=dict(stub))}, None]
    assert introspection.between(1, snaps2, statics, [intro(runtime, []), None, intro(newer, [])]) == (2, 1)
    assert snaps2[1]["pkg"].names["int4"] == Sym("a") and snaps2[1]["pkg"].lazy == frozenset()
    # outside the introspected range nothing changes
    assert introspection.between(0, [{"pkg": Namespace()}] + snaps[1:], statics, [None] + intros[1:]) == (0, 0)
