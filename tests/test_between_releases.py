"""Names that came between two releases seen at run time (every minor release's newest patch
is introspected: 2.6.0, 2.7.1, 2.8.0, 2.9.1, 2.10.0, ...; 2.7.0 and 2.9.0 are read statically):
the table says the first release that has them where the static reading of each release
between says so, and says it does not know where no static reading can (names created in C++
or in a module-replacing class)."""
from conftest import lint

from aicompat.matrixbuild import introspection
from aicompat.matrixbuild.apiscan import Namespace, Sym


def aic201(code, pin):
    return [(d.line, d.column, d.message) for d in lint(code, pins={"torch": pin}) if d.code == "AIC201"]


TF32_CHECK = '''\
import torch


def enable_tf32():
    if torch.cuda.is_available() and torch.cuda.is_tf32_supported():
        torch.backends.cuda.matmul.allow_tf32 = True
'''


def test_a_function_added_in_2_7_is_reported_with_its_first_release():
    assert aic201(TF32_CHECK, "2.6.0") == [
        (5, 38, "torch.cuda.is_tf32_supported is not in torch 2.6.0 (added in 2.7.0); pins allow torch 2.6.0"),
    ]
    assert aic201(TF32_CHECK, "2.7.0") == []


DEDUP = '''\
import torch


def fingerprint(batch):
    return torch.hash_tensor(batch.flatten())
'''


def test_a_function_added_in_2_9_is_exact_inside_the_gap():
    assert aic201(DEDUP, ">=2.7,<2.9") == [
        (5, 12, "torch.hash_tensor is not in torch 2.7.0–2.8.0 (added in 2.9.0); pins allow torch "
                "2.7.0–2.8.0"),
    ]
    assert aic201(DEDUP, ">=2.9,<2.11") == []


REGION = '''\
import torch


@torch.compiler.nested_compile_region
def block(x, w):
    return torch.nn.functional.gelu(x @ w)
'''


def test_a_compiler_decorator_added_in_2_8():
    ((line, col, msg),) = aic201(REGION, "2.7.1")
    assert (line, col) == (4, 2)
    assert msg.startswith("torch.compiler.nested_compile_region is not in torch 2.7.1 (added in 2.8.0)")
    assert aic201(REGION, "2.8.0") == []


TF32 = '''\
import torch

torch.backends.mkldnn.allow_tf32 = True
'''


def test_a_name_no_static_reading_sees_is_placed_between_the_runtimes():
    # torch.backends.mkldnn's names come from a class that replaces the module in sys.modules:
    # 2.6.0 did not show allow_tf32 at run time, 2.7.1 did, no static reading has it.
    ((line, col, msg),) = aic201(TF32, "2.6.0")
    assert msg.startswith("torch.backends.mkldnn.allow_tf32 is not in torch 2.6.0 (added after 2.6.0, by 2.7.1)")
    assert aic201(TF32, "2.7.0") == []  # may be there: not claimed missing
    assert aic201(TF32, "2.7.1") == []


# -- introspection.between on small namespaces ------------------------------------------------
class _Intro:
    def __init__(self, names):
        self.modules = {"torch": {n: introspection.RuntimeName("f", "i", ("x",)) for n in names}}
        self.deprecated = {}
        self.raises = {}

    def lazy(self):
        return None


def _ns(*names):
    return {"torch": Namespace(names={n: Sym("f", ("x",)) for n in names})}


def test_between_follows_the_static_reading_of_the_releases_in_the_gap():
    # 0 and 3 seen at run time; `fresh` came in 2 by the static reading of 2, `ccx` no reading sees
    statics = [_ns("old"), _ns("old"), _ns("old", "fresh"), _ns("old")]
    intros = [_Intro(["old"]), None, None, _Intro(["old", "fresh", "ccx"])]
    snaps = [_ns("old"), statics[1], statics[2], _ns("old", "fresh", "ccx")]
    seen = introspection.static_names(statics)
    for i in range(4):
        introspection.between(i, snaps, statics, intros, seen)
    assert "fresh" not in snaps[1]["torch"].names and "fresh" in snaps[2]["torch"].names
    assert "ccx" in snaps[1]["torch"].names and snaps[1]["torch"].unsure == {"ccx"}
    assert snaps[2]["torch"].unsure == {"ccx"}
