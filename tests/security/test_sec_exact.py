"""Exact mode (--cuda-verify) on a hostile tree (issue 25, items 1-3): the checked code's
flag text never reaches a shell, nvcc reads nothing outside the tree, what the compilers
print comes back only in fixed forms, and the lock files never follow a committed link.

The audit's reproductions, each through the real entry point with the real nvcc:
- a -D value with $(...), backticks, ';', '"', '\\' or a line break, from load_inline's
  extra_cuda_cflags, a setup.py's nvcc extra_compile_args and CMake's
  add_compile_definitions, ran a shell command (nvcc preprocesses through /bin/sh);
- an #include of a file outside the tree (absolute, '../', '.git', a link) put its one
  token into the output and the cache; __has_include told whether a file exists;
- links committed in .aicompat_cache/cuda-verify made the lock files elsewhere.
"""

from __future__ import annotations

import json
import os
import shutil
import textwrap
from pathlib import Path

import pytest
from conftest import run_cli

from aicompat.cuda.exact import compiler_text, sandbox, sealed, verify
from aicompat.matrix import default_matrix
from aicompat.matrix.target import Target
from aicompat.run.api import with_run_options
from aicompat.run.config import build_settings
from aicompat.run.linter import Linter

pytestmark = pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc not found: exact mode needs it")

# Hopper code the build compiles only where it defines AICOMPAT_X: nvcc's own rejection on
# sm_90 proves the definition reached the compile.
GUARDED = """\
#ifdef AICOMPAT_X
__global__ void fence(float* out) {
  asm volatile("wgmma.fence.sync.aligned;\\n" ::: "memory");
  out[threadIdx.x] = 0.f;
}
#else
__global__ void fence(float* out) { out[threadIdx.x] = 0.f; }
#endif
"""

# Each ends with a shell command that would create MARK if the flag went through a shell.
PAYLOADS = {
    "dollar-paren": "$(touch${IFS}MARK)",
    "backticks": "`touch MARK`",
    "semicolon": "1;touch MARK",
    "double-quote": '1"; touch MARK; echo "',
    "backslash": '\\"$(touch MARK)\\"',
    "newline": "1\ntouch MARK",
}


def _load_inline(value: str) -> dict:
    code = ("from torch.utils.cpp_extension import load_inline\n\n"
            f'KERNEL = r"""\n{GUARDED}"""\n\n'
            'ext = load_inline(name="fence", cpp_sources="", cuda_sources=KERNEL,\n'
            f'                  extra_cuda_cflags=["-O3", {("-DAICOMPAT_X=" + value)!r}, '
            '"-gencode=arch=compute_90,code=sm_90"])\n')
    return {"ext.py": code}


def _setup_py(value: str) -> dict:
    setup = textwrap.dedent(f'''\
        from setuptools import setup
        from torch.utils.cpp_extension import BuildExtension, CUDAExtension

        NVCC_FLAGS = ["-O3", "-gencode", "arch=compute_90,code=sm_90", {('-DAICOMPAT_X=' + value)!r}]

        setup(name="fence", ext_modules=[CUDAExtension(
            name="fence._C", sources=["csrc/fence.cu"],
            extra_compile_args={{"cxx": ["-O3"], "nvcc": NVCC_FLAGS}})],
            cmdclass={{"build_ext": BuildExtension}})
        ''')
    return {"setup.py": setup, "csrc/fence.cu": GUARDED}


def _cmake(value: str) -> dict:
    quoted = value.replace("\\", "\\\\").replace('"', '\\"').replace("$", "\\$")
    cmake = textwrap.dedent(f'''\
        cmake_minimum_required(VERSION 3.26)
        project(fence LANGUAGES CXX CUDA)
        set(CMAKE_CUDA_ARCHITECTURES 90)
        add_compile_definitions("AICOMPAT_X={quoted}")
        add_library(fence MODULE csrc/fence.cu)
        ''')
    return {"CMakeLists.txt": cmake, "csrc/fence.cu": GUARDED}


BUILDS = {"load_inline": (_load_inline, "ext.py"), "setup.py": (_setup_py, "csrc/fence.cu"),
          "cmake": (_cmake, "csrc/fence.cu")}


def _tree(root: Path, files: dict) -> None:
    (root / ".git").mkdir(parents=True)
    for name, text in files.items():
        p = root / name
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)


def _linter(tmp_path: Path, gpus=("H100",)) -> Linter:
    matrix = default_matrix()
    settings = build_settings(matrix, cli=Target(gpus=list(gpus), cuda_verify=True), no_config=True)
    settings.target.verify = with_run_options(settings.target.verify, 120.0, tmp_path / "cache")
    return Linter(settings.target, matrix, select=["AIC301"])


@pytest.mark.parametrize("payload", sorted(PAYLOADS))
@pytest.mark.parametrize("build", sorted(BUILDS))
def test_no_flag_text_of_the_checked_code_reaches_a_shell(tmp_path, monkeypatch, build, payload):
    # Without the sandbox (as on a system with no Landlock), so that only the flag handling
    # stands between the payload and /bin/sh.
    monkeypatch.setattr(sandbox, "build", lambda read, write: (None, "turned off by the test"))
    mark = tmp_path / "pwned"
    make, linted = BUILDS[build]
    _tree(tmp_path / "repo", make(PAYLOADS[payload].replace("MARK", str(mark))))
    path = tmp_path / "repo" / linted
    before = verify.COMPILES
    res = _linter(tmp_path).lint_bytes(path.read_bytes(), str(path))
    messages = [d.message for d in res.diagnostics]
    assert not mark.exists(), f"{build} {payload}: the flag text ran in a shell"
    if payload == "newline" and build != "load_inline":
        return  # the setup.py and CMake models split the value at the line break: plain definitions
    if payload == "newline":
        # No definition can carry a line break: the source is not compiled, the static verdict stands.
        assert all("could not verify" in m for m in messages) or messages == [], messages
        assert any("a -D/-U flag of the build cannot be passed to nvcc safely" in n for n in res.notes) or \
            any("a -D/-U flag of the build cannot be passed to nvcc safely" in m for m in messages), (messages, res.notes)
    else:
        # The definition reached the compile (nvcc itself rejects the Hopper code on sm_90) ...
        assert verify.COMPILES > before
        assert any(m.startswith(("load_inline: nvcc", "nvcc")) and "rejects" in m for m in messages), messages


@pytest.mark.parametrize("payload", sorted(PAYLOADS))
def test_only_plain_tokens_go_on_nvccs_command_line(payload):
    flags = verify.device_flags(["-O3", "-DAICOMPAT_X=" + PAYLOADS[payload], "-D", "PLAIN=1", "-UOLD",
                                 "-U$(x)", "-std=c++17;id"])
    line, unit = verify.split_defines([f for f in flags if f != verify.DROPPED])
    assert line == ("-O3", "-DPLAIN=1", "-UOLD")
    for f in line:
        assert not set(f) & set("$`;\"'\\\n\r ()|&<>*?!{}"), f
    if payload == "newline":
        assert unit == () and flags.count(verify.DROPPED) == 2
    else:
        assert unit == (("AICOMPAT_X", PAYLOADS[payload]),) and flags.count(verify.DROPPED) == 1


# -- nvcc reads only the tree -----------------------------------------------------------------------

SECRET = "AICOMPAT_SECRET_7f3a"
GIT_SECRET = "AICOMPAT_GITSECRET_91c2"


def _hostile_tree(tmp_path: Path) -> tuple[Path, Path]:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text(SECRET + "\n")
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / ".git" / "config").write_text(GIT_SECRET + "\n")
    (repo / "csrc" / "inc").mkdir(parents=True)
    (repo / "csrc" / "inc" / "common.cuh").write_text("#pragma once\nconstexpr int kTile = 64;\n")
    (repo / "csrc" / "inc" / "link.cuh").symlink_to(outside / "secret.txt")
    (repo / "csrc" / "out").symlink_to(outside)
    return repo, outside


INCLUDES = {
    "absolute": '#include "{secret}"',
    "dot-dot": '#include "../../outside/secret.txt"',
    "git-config": '#include "../.git/config"',
    "file-link": '#include "inc/link.cuh"',
    "folder-link": '#include "out/secret.txt"',
    "computed": '#define SECRET_PATH "{secret}"\n#include SECRET_PATH',
    "digraph": '%:include "{secret}"',
    "splice": '#inc\\\nlude "{secret}"',
    "angle": "#include <{secret}>",
}


@pytest.mark.parametrize("case", sorted(INCLUDES))
def test_an_include_outside_the_tree_never_reaches_the_output_or_the_cache(tmp_path, case):
    repo, outside = _hostile_tree(tmp_path)
    inc = INCLUDES[case].replace("{secret}", str(outside / "secret.txt"))
    # The file's one token lands where an identifier is expected: nvcc's error quotes it.
    (repo / "csrc" / "leak.cu").write_text('#include "inc/common.cuh"\n\n__global__ void k(float* o) {\n'
                                          f"  o[threadIdx.x] = kTile +\n{inc}\n  ;\n}}\n")
    cache = tmp_path / "cache"
    outs = []
    for fmt in ("text", "json", "sarif", "github"):
        r = run_cli("lint", "--cuda-verify", "--gpu", "H100", "--format", fmt, "csrc/leak.cu", cwd=repo,
                    env={"AICOMPAT_CACHE_DIR": str(cache)})
        assert r.returncode in (0, 1), r.stdout + r.stderr
        outs.append(r.stdout + r.stderr)
    for out in outs:
        assert SECRET not in out and GIT_SECRET not in out, out
    for f in cache.rglob("*"):
        if f.is_file():
            data = f.read_bytes()
            assert SECRET.encode() not in data and GIT_SECRET.encode() not in data, f


def test_an_include_of_an_in_tree_header_is_inlined_and_compiled(tmp_path):
    # The fixed twin: a header beside the source, one through '..' inside the tree, one by <>.
    repo, _ = _hostile_tree(tmp_path)
    (repo / "include").mkdir()
    (repo / "include" / "tile.cuh").write_text("#pragma once\n#define TILE_N 128\n")
    (repo / "csrc" / "ok.cu").write_text('#include "inc/common.cuh"\n#include "../include/tile.cuh"\n'
                                        "#include <cuda_fp16.h>\n\n__global__ void k(float* o) {\n"
                                        '  asm volatile("wgmma.fence.sync.aligned;\\n" ::: "memory");\n'
                                        "  o[threadIdx.x % TILE_N] = kTile;\n}\n")
    r = run_cli("lint", "--cuda-verify", "--gpu", "A100", "csrc/ok.cu", cwd=repo,
                env={"AICOMPAT_CACHE_DIR": str(tmp_path / "cache")})
    assert "nvcc 13.0 rejects line 6 for every compile target that runs there" in r.stdout or \
        "rejects line 6" in r.stdout, r.stdout + r.stderr
    assert "could not verify" not in r.stdout


@pytest.mark.parametrize("form", ["direct", "pasted", "toolkit-paste"])
def test_has_include_is_no_existence_oracle(tmp_path, form):
    probe = tmp_path / "probe.h"
    tests = {"direct": '__has_include("{p}")',
             "pasted": 'CAT(__has_, include)("{p}")',
             "toolkit-paste": '_CCCL_PP_CAT(__has_, include)("{p}")'}
    code = ("#include <cuda/std/cstdint>\n#define CAT(a, b) a##b\n"
            f"#if {tests[form].replace('{p}', str(probe))}\n"
            "__global__ void k(float* o) { asm volatile(\"wgmma.fence.sync.aligned;\\n\" ::: \"memory\"); }\n"
            "#else\n__global__ void k(float* o) { o[0] = 1.f; }\n#endif\n")
    results = []
    for exists in (False, True):
        if exists:
            probe.write_text("\n")
        repo = tmp_path / f"repo{int(exists)}"
        (repo / ".git").mkdir(parents=True)
        (repo / "k.cu").write_text(code)
        r = run_cli("lint", "--cuda-verify", "--gpu", "A100", "--format", "json", "k.cu", cwd=repo,
                    env={"AICOMPAT_CACHE_DIR": str(tmp_path / f"cache{int(exists)}")})
        doc = json.loads(r.stdout)
        results.append([(d["line"], d["message"]) for d in doc["diagnostics"]])
    assert results[0] == results[1]
    assert any("could not verify" in m for _l, m in results[0]), results[0]


def test_a_pragma_dependency_is_refused(tmp_path):
    unit = sealed.seal(f'#pragma GCC dependency "{tmp_path}/x"\n__global__ void k() {{}}\n', tmp_path, tmp_path)
    assert unit.text is None and "dependency" in unit.refused
    pasted = ('#define S(x) #x\n#define XS(x) S(x)\n#define CAT(a, b) a##b\n'
              f'_Pragma(XS(GCC CAT(depend, ency) "{tmp_path}/x"))\n')
    assert sealed.seal(pasted, tmp_path, tmp_path).text is None


@pytest.mark.skipif(sandbox.abi() == 0, reason="no Landlock on this system")
def test_the_sandbox_keeps_nvcc_from_reading_outside_the_toolkit(tmp_path):
    # A unit that was not sealed (as if the scan missed something): under the sandbox nvcc cannot
    # read the file, and an existing file fails exactly as a missing one does.
    secret = tmp_path / "secret.h"
    secret.write_text(f"int {SECRET} = 1;\n")
    ver = verify.Verifier(verify.Options(verify.probe()[0], cache_dir=None), [])
    outs = ver.run([verify.Job(f'#pragma GCC dependency "{p}"\n#include "{p}"\n__global__ void k() {{}}\n', "sm_90")
                    for p in (secret, tmp_path / "missing.h")], default_matrix())
    assert ver.sandbox is not None
    assert outs[0].status == outs[1].status == "fail"
    assert (outs[0].line, outs[0].stage) == (outs[1].line, outs[1].stage)
    assert SECRET not in outs[0].error


def test_compiler_text_is_reported_only_in_known_forms():
    words = compiler_text.unit_words("__global__ void k() { warp_sum(); }") | {"wgmma", "fence"}
    assert compiler_text.front_error('identifier "warp_sum" is undefined', words) == \
        'error: identifier "warp_sum" is undefined'
    # A word that is not the unit's (a token from a file the compile should not have read): not quoted.
    assert compiler_text.front_error(f'identifier "{SECRET}" is undefined', words) == compiler_text.FRONT_REJECTED
    assert compiler_text.front_error(f"this declaration has no storage class ({SECRET})", words) == \
        compiler_text.FRONT_REJECTED
    assert compiler_text.ptxas_error("Instruction 'wgmma.fence' not supported on .target 'sm_90'", words) == \
        "ptxas error: Instruction 'wgmma.fence' not supported on .target 'sm_90'"
    assert compiler_text.ptxas_error(f"Not a name of any known instruction: '{SECRET}'", words) == \
        compiler_text.PTXAS_REJECTED


# -- the lock files --------------------------------------------------------------------------------

@pytest.mark.parametrize("link", ["folder", "lock-file"])
def test_lock_files_never_follow_a_committed_link(tmp_path, link):
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / "k.cu").write_text("__global__ void k(float* o) { o[threadIdx.x] = 1.f; }\n")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    victim = tmp_path / "victim.txt"
    victim.write_text("keep me\n")
    cache = repo / ".aicompat_cache"
    cache.mkdir()
    if link == "folder":
        (cache / "cuda-verify").symlink_to(elsewhere)
    else:
        (cache / "cuda-verify").mkdir()
        for i in range(verify.SLOTS):
            (cache / "cuda-verify" / f"slot{i}.lock").symlink_to(victim if i == 0 else elsewhere / f"new{i}")
    r = run_cli("lint", "--cuda-verify", "--gpu", "H100", "k.cu", cwd=repo, env={"AICOMPAT_CACHE_DIR": ""})
    assert r.returncode == 0, r.stdout + r.stderr
    assert list(elsewhere.iterdir()) == []
    assert victim.read_text() == "keep me\n"
    assert os.path.islink(cache / "cuda-verify") == (link == "folder")
