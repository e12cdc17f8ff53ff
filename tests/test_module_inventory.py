"""Issue 27 item 5: modules a release does not ship (version_matrix/modules/, read from the
wheels by tools/build_module_inventory.py). An import of a module that another release ships
fails with ModuleNotFoundError in the releases in scope that do not; a guarded import, a release
that ships it, or a module the release's Python may create (below an extension module) is clean."""

from pathlib import Path

from conftest import lint

from aicompat.matrix import load_matrix
from aicompat.matrix.module_inventory import load_inventory

ROOT = Path(__file__).resolve().parent.parent

# Written as the ColossalAI utility module was before its fix (commit 01066152): a helper that
# clips gradients by their norm, with `inf` from the module torch 2.0 removed.
_CLIP = '''import torch
from torch._six import inf


def total_norm(parameters, norm_type=2.0):
    grads = [p.grad for p in parameters if p.grad is not None]
    if norm_type == inf:
        return max(g.abs().max() for g in grads)
    return torch.norm(torch.stack([torch.norm(g, norm_type) for g in grads]), norm_type)
'''

_TMA = '''import torch
import triton
import triton.language as tl
from triton.tools.experimental_descriptor import create_2d_tma_descriptor


class PersistentMatmul:
    def __init__(self, block_m=128, block_n=128, block_k=64):
        self.blocks = (block_m, block_n, block_k)

    def descriptors(self, a, b):
        bm, bn, bk = self.blocks
        return (create_2d_tma_descriptor(a.data_ptr(), a.shape[0], a.shape[1], bm, bk, a.element_size()),
                create_2d_tma_descriptor(b.data_ptr(), b.shape[0], b.shape[1], bn, bk, b.element_size()))
'''


def test_a_module_removed_before_the_pinned_release_is_reported():
    d = lint(_CLIP, pins={"torch": "==2.0.0"}, select=["AIC201"])
    assert [(x.line, x.column, x.message) for x in d] == [
        (2, 6, "module torch._six is not in torch 2.0.0 (ModuleNotFoundError; last in 1.13.1); pins allow torch 2.0.0")]
    # Every release in a range is judged: 2.0.0-2.1.2 all lack it.
    d = lint(_CLIP, pins={"torch": ">=2.0,<2.2"}, select=["AIC201"])
    assert [x.message.split(" (")[0] for x in d] == ["module torch._six is not in torch 2.0.0–2.1.2"]


def test_the_fixed_twin_is_clean():
    fixed = _CLIP.replace("from torch._six import inf", "from math import inf")
    assert lint(fixed, pins={"torch": "==2.0.0"}, select=["AIC201"]) == []
    guarded = _CLIP.replace("from torch._six import inf",
                            "try:\n    from torch._six import inf\nexcept ModuleNotFoundError:\n    from math import inf")
    assert lint(guarded, pins={"torch": "==2.0.0"}, select=["AIC201"]) == []


def test_a_module_of_some_triton_releases_only():
    d = lint(_TMA, pins={"triton": "==3.1.0"}, select=["AIC201"])
    assert [(x.line, x.message) for x in d] == [
        (4, "module triton.tools.experimental_descriptor is not in triton 3.1.0 (ModuleNotFoundError; present in "
            "3.2.0–3.3.1); pins allow triton 3.1.0")]
    assert lint(_TMA, pins={"triton": "==3.3.1"}, select=["AIC201"]) == []
    # Unpinned, the newest release is what pip installs, and it no longer ships the module.
    d = lint(_TMA, select=["AIC201"])
    assert [x.message.split(";")[-1].strip() for x in d] == ["triton unpinned: judged on the newest release 3.9.0"]


def test_modules_below_an_extension_module_stay_unknown():
    # torch._C._dynamo is a folder of stubs from 2.8.0 on; before, C code registers it at import.
    inv = load_inventory(ROOT / "version_matrix" / "modules" / "torch.toml")
    older = [i for i, v in enumerate(inv.labels) if v == "2.3.0"]
    assert inv.lacking("torch._C._dynamo", older) == frozenset()
    assert lint("from torch._C._dynamo import eval_frame\n", pins={"torch": "==2.3.0"}, select=["AIC201"]) == []


def test_every_inventory_names_the_releases_of_releases_toml():
    m = load_matrix()
    for path in sorted((ROOT / "version_matrix" / "modules").glob("*.toml")):
        inv = load_inventory(path)
        assert [str(v) for v in m.releases(inv.package)] == inv.labels[inv.judged:], path.name


def test_a_branch_on_another_packages_version_is_not_judged():
    # unsloth _gpu_init.py: the pre-3.0 import sits in the else of a triton version test.
    code = ('import triton\nfrom packaging.version import Version\n\n'
            'if Version(triton.__version__) >= Version("3.0.0"):\n'
            '    from triton.backends.nvidia.driver import libcuda_dirs\nelse:\n'
            '    from triton.common.build import libcuda_dirs\n')
    assert lint(code, select=["AIC201"]) == []
    # The same import unguarded fails on the newest release.
    d = lint("import triton\nfrom triton.common.build import libcuda_dirs\n", select=["AIC201"])
    assert [x.message.split(";")[0] for x in d] == [
        "module triton.common is not in triton 3.9.0 (ModuleNotFoundError"]


def test_an_unpinned_branch_for_old_torch_releases_is_not_judged_on_the_newest():
    # A compatibility shim: the old import only in the branch for releases before 2.0.
    code = ('import torch\n\nif torch.__version__ < "2.0":\n    from torch._six import inf\n'
            'else:\n    from math import inf\n')
    assert lint(code, select=["AIC201"]) == []
    # Its twin without the version test fails on the newest release.
    d = lint("import torch\nfrom torch._six import inf\n", select=["AIC201"])
    assert [x.message.split(";")[-1].strip() for x in d] == ["torch unpinned: judged on the newest release 2.15.0"]
