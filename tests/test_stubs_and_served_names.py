"""Names a release has only as a stub that raises (torch.symeig, torch.solve, ... since 1.9's
removal: "This function was deprecated since version 1.9 and is now removed"), and names a
module ``__getattr__`` serves with a deprecation warning (torch.has_cuda since 2.1): how the
introspection tool finds them, how the builder records them, and what the rules say."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

from aicompat.matrix.api_tables import Namespace, Sym, encode, load_package
from aicompat.matrixbuild import introspection
from aicompat.matrixbuild.apiscan import ApiReader, stub_raise

ROOT = Path(__file__).resolve().parent.parent

# torch 2.1.0 torch/_linalg_utils.py, _symeig and solve (torch/__init__.py binds them as
# torch.symeig and torch.solve), and matrix_rank
SYMEIG = ("This function was deprecated since version 1.9 and is now removed. The default behavior has changed "
          "from using the upper triangular portion of the matrix by default to using the lower triangular "
          "portion.\n\nL, _ = torch.symeig(A, upper=upper) should be replaced with:\n"
          "L = torch.linalg.eigvalsh(A, UPLO='U' if upper else 'L')\n\nand\n\n"
          "L, V = torch.symeig(A, eigenvectors=True) should be replaced with:\n"
          "L, V = torch.linalg.eigh(A, UPLO='U' if upper else 'L')")
SOLVE = ("This function was deprecated since version 1.9 and is now removed. `torch.solve` is deprecated in "
         "favor of `torch.linalg.solve`. `torch.linalg.solve` has its arguments reversed and does not return the "
         "LU factorization.\n\nTo get the LU factorization see `torch.lu`, which can be used with "
         "`torch.lu_solve` or `torch.lu_unpack`.\nX = torch.solve(B, A).solution should be replaced with:\n"
         "X = torch.linalg.solve(A, B)")
MATRIX_RANK = ("This function was deprecated since version 1.9 and is now removed.\nPlease use the "
               "`torch.linalg.matrix_rank` function instead. The parameter 'symmetric' was renamed in "
               "`torch.linalg.matrix_rank()` to 'hermitian'.")


def test_the_replacement_is_read_from_the_stubs_own_message():
    assert stub_raise("RuntimeError", SYMEIG) == (
        "RuntimeError",
        "This function was deprecated since version 1.9 and is now removed. The default behavior has changed from "
        "using the upper triangular portion of the matrix by default to using the lower triangular portion.",
        ("torch.linalg.eigvalsh", "torch.linalg.eigh"))
    assert stub_raise("RuntimeError", SOLVE)[2] == ("torch.linalg.solve",)
    assert stub_raise("RuntimeError", MATRIX_RANK) == (
        "RuntimeError", "This function was deprecated since version 1.9 and is now removed.",
        ("torch.linalg.matrix_rank",))
    # torch.autograd.variable: names no replacement in backquotes or after "replaced with"
    assert stub_raise("RuntimeError", "torch.autograd.variable(...) is deprecated, use torch.tensor(...) "
                                      "instead")[2] == ()


LINALG_UTILS = '''\
def _symeig(input, eigenvectors=False, upper=True, *, out=None):
    raise RuntimeError(
        "This function was deprecated since version 1.9 and is now removed. "
        "Please use the `t.linalg.eigh` function instead."
    )


def matrix_rank(input, tol=None):
    """Removed."""
    raise RuntimeError("This function was deprecated since version 1.9 and is now removed.")


def lobpcg(A, k=None):
    if k is None:
        raise ValueError("k is required")
    return A


def guarded(x):
    raise NotImplementedError(f"{x} is not supported")
'''


def test_the_static_reading_marks_a_function_whose_body_only_raises():
    files = {"t/__init__.py": "from ._linalg_utils import matrix_rank, lobpcg, guarded\n"
                              "from ._linalg_utils import _symeig as symeig\n",
             "t/_linalg_utils.py": LINALG_UTILS}
    ns = ApiReader(files).namespace("t")
    assert ns.names["symeig"].raises == (
        "RuntimeError", "This function was deprecated since version 1.9 and is now removed. Please use the "
        "`t.linalg.eigh` function instead.", ("t.linalg.eigh",))
    assert ns.names["symeig"].sigs == ("input, eigenvectors=, upper=, *, out=",)  # still a name, and callable
    assert ns.names["matrix_rank"].raises == ("RuntimeError", "This function was deprecated since version 1.9 and "
                                              "is now removed.", ())
    assert ns.names["lobpcg"].raises is None  # raises only on one path
    assert ns.names["guarded"].raises is None  # a message built at run time: not read


def test_the_table_keeps_the_stub_per_release():
    stub = ("RuntimeError", "This function was deprecated since version 1.9 and is now removed.",
            ("torch.linalg.eigh",))
    snaps = [{"torch": Namespace(names={"symeig": Sym("f", ("input",))})},
             {"torch": Namespace(names={"symeig": Sym("f", ("input",), raises=stub)})},
             {"torch": Namespace(names={})}]
    text = encode("torch", ["1.0", "1.1", "1.2"], snaps, ["x sha256:0"], "test")
    assert "raises = '''\nsymeig 1 RuntimeError torch.linalg.eigh This function was deprecated" in text
    path = ROOT / "version_matrix" / "api" / "torch.toml"
    m = load_package(path).module("torch")
    ((releases, exc, use, msg),) = [r for r in m.raises("symeig") if 2 in r[0]]  # torch 2.1.0
    assert (exc, use) == ("RuntimeError", ("torch.linalg.eigvalsh", "torch.linalg.eigh"))
    assert msg.startswith("This function was deprecated since version 1.9 and is now removed.")


def test_the_runtime_reading_of_a_stub_decides():
    intro = introspection.Introspection("9.9.9", {"lazy": []})
    intro.modules["t"] = dict([introspection.parse_line("solve f i (input, A, *, out=)")])
    intro.raises["t"] = {"solve": ("RuntimeError", SOLVE)}
    merged, _ = introspection.merge({"t": Namespace(names={"solve": Sym("f", ("input, A, *, out=",))})}, intro)
    assert merged["t"].names["solve"].raises == stub_raise("RuntimeError", SOLVE)


# -- the introspection tool, on a module of its own ------------------------------------------------
SERVED = '''\
import warnings

_deprecated_attrs = {"has_gpu": lambda: False}
_lazy = {"extras"}


def removed(a, b=None):
    """Gone."""
    raise RuntimeError("removed; use the `m.new` function instead")


def works(a):
    return a


def __getattr__(name):
    replacement = _deprecated_attrs.get(name)
    if replacement is not None:
        warnings.warn(f"'{name}' is deprecated, please use 'm.gpu()'", stacklevel=2)
        return replacement()
    if name == "set_flag":
        return lambda *args: None
    raise AttributeError(f"module has no attribute {name!r}")
'''


def _tool():
    spec = importlib.util.spec_from_file_location("torch_introspect", ROOT / "tools" / "torch_introspect.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _module(tmp_path, name, text):
    path = tmp_path / f"{name}.py"
    path.write_text(text)
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


def test_the_tool_finds_names_a_module_getattr_serves(tmp_path):
    tool = _tool()
    mod = _module(tmp_path, "aicompat_served_probe", SERVED)
    try:
        served = tool.getattr_served(mod)
        names = tool.module_names(mod)
    finally:
        del sys.modules["aicompat_served_probe"]
    assert set(served) == {"has_gpu", "set_flag"}  # "extras" is not served; "module" etc. fail
    assert served["has_gpu"] == (False, "'has_gpu' is deprecated, please use 'm.gpu()'")
    assert served["set_flag"][1] is None
    assert {"has_gpu", "set_flag", "removed", "works"} <= set(names)


def test_the_tool_calls_a_stub_to_read_what_it_raises(tmp_path):
    tool = _tool()
    mod = _module(tmp_path, "aicompat_stub_probe", SERVED)
    try:
        assert tool.raising_stub(mod.removed) == ("RuntimeError", "removed; use the `m.new` function instead")
        assert tool.raising_stub(mod.works) is None
        assert tool.raising_stub(len) is None
    finally:
        del sys.modules["aicompat_stub_probe"]


# torch 2.12.0 torch/__init__.py, shortened: the dict at module level, __getattr__ under `else:`
GETATTR_212 = '''\
import torch
from typing import TYPE_CHECKING

_deprecated_attrs = {
    "has_mps": torch.backends.mps.is_built,
    "has_cuda": torch.backends.cuda.is_built,
}

if TYPE_CHECKING:
    from torch import _dynamo as _dynamo
else:
    _lazy_modules = {"_dynamo"}

    def __getattr__(name):
        replacement = _deprecated_attrs.get(name)
        if replacement is not None:
            import warnings

            warnings.warn(
                f"'{name}' is deprecated, please use '{replacement.__module__}.{replacement.__name__}()'",
                stacklevel=2,
            )
            return replacement()
        if name in _lazy_modules:
            return importlib.import_module(f".{name}", __name__)
        if name == "set_vital":
            import warnings

            warnings.warn(f"'{name}' is deprecated, please do not call", stacklevel=2)
            return lambda *args: None
        raise AttributeError(f"module '{__name__}' has no attribute '{name}'")
'''


def test_the_static_reading_fills_in_the_deprecation_a_module_getattr_warns_of():
    ns = ApiReader({"torch/__init__.py": GETATTR_212}).namespace("torch")
    assert ns.names["has_cuda"] == Sym("a", deprecated="'has_cuda' is deprecated, please use "
                                                       "'torch.backends.cuda.is_built()'")
    assert ns.names["set_vital"].deprecated == "'set_vital' is deprecated, please do not call"
    assert ns.names["_dynamo"].deprecated is None


def test_a_stale_stub_signature_refuted_by_a_neighbours_runtime_is_corrected_between():
    # torch 2.1.0 (read statically): F.one_hot(tensor, num_classes=) from _C/_nn.pyi, as 2.1.2's
    # stub says too; 2.0.1 and 2.1.2 at run time both take one_hot(input, num_classes=).
    def intro(sig):
        out = introspection.Introspection("x", {"lazy": []})
        out.modules["pkg"] = dict([introspection.parse_line(f"one_hot b s ({sig})")])
        return out

    statics = [{"pkg": Namespace(names={"one_hot": Sym("b", (s,))})}
               for s in ("input, num_classes=", "tensor, num_classes=", "tensor, num_classes=")]
    snaps = [None, {"pkg": Namespace(names=dict(statics[1]["pkg"].names))}, None]
    intros = [intro("input, num_classes="), None, intro("input, num_classes=")]
    introspection.between(1, snaps, statics, intros)
    assert snaps[1]["pkg"].names["one_hot"].sigs == ("input, num_classes=",)
    # a static reading no neighbour's runtime refuted stays
    odd = [statics[0], {"pkg": Namespace(names={"one_hot": Sym("b", ("x",))})}, statics[2]]
    snaps = [None, {"pkg": Namespace(names={"one_hot": Sym("b", ("x",))})}, None]
    introspection.between(1, snaps, odd, intros)
    assert snaps[1]["pkg"].names["one_hot"].sigs == ("x",)
