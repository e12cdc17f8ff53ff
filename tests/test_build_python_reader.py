"""The one reader of a build's Python (cuda/build/pyeval.py): a setup.py's CUDAExtension and a
torch JIT ``load()`` that build their nvcc flags the same way are read the same way."""

from __future__ import annotations

import textwrap
import warnings
from pathlib import Path

from aicompat.cuda.build import torch_jit
from aicompat.cuda.build.setup_py import extensions

FLAGS = """\
import os
NVCC = ["-O3"]
NVCC += ["-DBLOCK=128"]
NVCC.append("-gencode=arch=compute_90a,code=sm_90a")

def extra():
    more = ["-DTILE=64"]
    more.extend(["--use_fast_math"])
    return more

FLAGS = NVCC + extra()
"""
EXPECT = ["-O3", "-DBLOCK=128", "-gencode=arch=compute_90a,code=sm_90a", "-DTILE=64", "--use_fast_math"]


def _setup(tmp_path: Path, body: str) -> list:
    text = textwrap.dedent(body)
    return extensions(tmp_path / "setup.py", text)


def _load(tmp_path: Path, body: str) -> list:
    (tmp_path / "k.cu").write_text("__global__ void k() {}\n")
    (tmp_path / "ext.py").write_text(textwrap.dedent(body))
    found, _reads = torch_jit.loads(tmp_path)
    return found


def test_setup_py_and_torch_jit_follow_the_same_names(tmp_path):
    setup = _setup(tmp_path, FLAGS + 'from torch.utils.cpp_extension import CUDAExtension\n'
                   'E = CUDAExtension("ext", ["k.cu"], extra_compile_args={"nvcc": FLAGS})\n')
    load = _load(tmp_path, FLAGS + 'from torch.utils.cpp_extension import load\n'
                 'mod = load("ext", [os.path.join(os.path.dirname(__file__), "k.cu")], extra_cuda_cflags=FLAGS)\n')
    assert [e.flags.strings for e in setup] == [EXPECT]
    assert [[list(a.flags) for a in ld.alts] for ld in load] == [[EXPECT]]


def test_a_list_changed_in_a_way_not_modelled_is_not_known(tmp_path):
    # NVCC.remove(...) takes a flag out: both readers give up on the list rather than keep it.
    body = FLAGS + 'NVCC.remove("-O3")\n'
    setup = _setup(tmp_path, body + 'from torch.utils.cpp_extension import CUDAExtension\n'
                   'E = CUDAExtension("ext", ["k.cu"], extra_compile_args={"nvcc": FLAGS})\n')
    load = _load(tmp_path, body + 'from torch.utils.cpp_extension import load\n'
                 'mod = load("ext", [os.path.join(os.path.dirname(__file__), "k.cu")], extra_cuda_cflags=FLAGS)\n')
    assert [e.flags for e in setup] == [None]
    assert [ld.alts for ld in load] == [None]


def test_extensions_come_in_source_order(tmp_path):
    got = _setup(tmp_path, """\
        from torch.utils.cpp_extension import CUDAExtension
        ext_modules = [CUDAExtension("first", ["a.cu"]), CUDAExtension("second", ["b.cu"])]
        """)
    assert [(e.name, e.line) for e in got] == [("first", 2), ("second", 2)]


def test_a_setup_py_with_an_invalid_escape_is_read_without_a_warning(tmp_path):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = _setup(tmp_path, """\
            import re
            from torch.utils.cpp_extension import CUDAExtension
            PAT = re.compile("\\d+")
            E = CUDAExtension("ext", ["k.cu"], extra_compile_args={"nvcc": ["-DX=1"]})
            """)
    assert [e.defines for e in got] == [{"X": "1"}]


def test_an_f_string_define_keeps_its_name_with_a_value_not_known(tmp_path):
    from aicompat.cuda.build.pyeval import UNKNOWN_VALUE

    got = _setup(tmp_path, """\
        import os
        from torch.utils.cpp_extension import CUDAExtension
        ABI = int(os.environ.get("ABI", "1"))
        E = CUDAExtension("ext", ["k.cu"], extra_compile_args={"nvcc": [f"-D_GLIBCXX_USE_CXX11_ABI={ABI}"]})
        """)
    assert [(e.defines, e.defines_known) for e in got] == [({"_GLIBCXX_USE_CXX11_ABI": UNKNOWN_VALUE}, True)]
