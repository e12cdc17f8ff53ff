"""--jobs gives the same output as one process; the cache gives the same
output as no cache, and never trusts an entry it cannot verify."""
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import SRC, run_cli

ROOT = Path(__file__).resolve().parent.parent
FP8 = "import torch\nx = torch._scaled_mm(a, b, scale_a=sa, scale_b=sb)\n"


N = 24  # files in _tree


def _tree(root: Path, n: int = N) -> Path:
    """Enough source to parse (> 64 KB) that the CLI starts workers."""
    for i in range(n):
        body = "".join(f"def f{j}(a, b):\n    return torch.matmul(a, b) * {j}\n\n" for j in range(40))
        notes = "# Generated attention helpers; the comments make up the bulk cheaply.\n" * 25
        (root / f"m{i:02d}.py").write_text(FP8 + notes + body + ("x = torch.float8_e4m3fn\n" if i % 3 else "")
                                           + ("def broken(:\n" if i == 7 else ""))
    return root


def _lint(cwd, *args, env=None):
    r = run_cli("lint", "--no-config", "--gpu", "A100", "--format", "json", "-v", *args, cwd=cwd, env=env)
    assert "Traceback" not in r.stderr, r.stderr
    return json.loads(r.stdout)["diagnostics"], r


def test_jobs_give_the_same_output_in_path_order(tmp_path):
    _tree(tmp_path)
    one, r1 = _lint(tmp_path, "--no-cache", "--jobs", "1", ".")
    two, r2 = _lint(tmp_path, "--no-cache", "--jobs", "2", ".")
    assert "parsed on 1 process;" in r1.stderr and "parsed on 2 processes;" in r2.stderr
    assert one == two and len(one) == N  # one AIC102 per file, one AIC001 instead for the broken one
    assert sum(d["code"] == "AIC001" for d in one) == 1
    assert [d["path"] for d in one] == sorted(d["path"] for d in one)
    assert r1.returncode == r2.returncode == 1
    # A few small files do not pay for starting workers.
    small, r3 = _lint(ROOT / "fixtures" / "demo", "--no-cache", "--jobs", "2", ".")
    assert "parsed on 1 process;" in r3.stderr and small


def test_workers_started_with_spawn(tmp_path):
    """macOS and Windows start workers with spawn: the spec must pickle."""
    import multiprocessing as mp

    from aicompat import Target
    from aicompat.matrix import default_matrix
    from aicompat.run.config import build_settings
    from aicompat.run.parallel import LinterSpec, lint_parallel, lint_serial

    m = default_matrix()
    spec = LinterSpec(build_settings(m, cli=Target(gpus=["A100"]), no_config=True).target, m)
    work = [(i, f"m{i}.py", (FP8 if i % 2 else "import torch\nx = torch.float8_e4m3fn(\n").encode()) for i in range(4)]
    got = lint_parallel(spec, work, 2, 60, ctx=mp.get_context("spawn"))
    assert got == lint_serial(spec, work, None)
    assert [got[i].diagnostics[0].code for i in range(4)] == ["AIC001", "AIC102", "AIC001", "AIC102"]


def test_cache_cold_warm_changed_and_corrupt(tmp_path):
    (tmp_path / "proj").mkdir()
    n = 10
    proj = _tree(tmp_path / "proj", n)
    cache = tmp_path / "cache"
    cold, r = _lint(proj, "--cache-dir", str(cache), ".")
    assert "cache: 0 unchanged files" in r.stderr
    assert (cache / ".gitignore").read_text().splitlines()[-1] == "*"
    entries = sorted(cache.rglob("*.json"))
    assert len(entries) == n  # a parse error is a result like any other: cached too
    warm, r = _lint(proj, "--cache-dir", str(cache), ".")
    assert warm == cold and f"cache: {n} unchanged files" in r.stderr and "parsed on 1 process" in r.stderr
    # An edited file is checked again; the others come from the cache.
    (proj / "m01.py").write_text("import torch\n\ny = torch._scaled_mm(a, b, scale_a=sa, scale_b=sb)\n")
    edited, r = _lint(proj, "--cache-dir", str(cache), ".")
    assert f"cache: {n - 1} unchanged files" in r.stderr
    assert [d["line"] for d in edited if d["path"] == "m01.py"] == [3]
    # Truncated, garbage, emptied, another file's entry, a wrong shape: all ignored and recomputed.
    # (m01.py's entry was replaced: one entry per file.)
    assert len(list(cache.rglob("*.json"))) == n
    entries = [e for e in sorted(cache.rglob("*.json")) if not json.loads(e.read_text())["file"].endswith("/m01.py")]
    entries[0].write_bytes(entries[0].read_bytes()[:25])
    entries[1].write_bytes(b"\x00\xff not json")
    entries[2].write_bytes(b"")
    entries[3].write_bytes(entries[4].read_bytes())
    doc = json.loads(entries[5].read_text())
    doc["diagnostics"] = [{"path": 1}]
    entries[5].write_text(json.dumps(doc))
    again, r = _lint(proj, "--cache-dir", str(cache), ".")
    assert again == edited and f"cache: {n - 5} unchanged files" in r.stderr
    assert "5 misses: 5 unreadable entry" in r.stderr  # never silent: counted by cause
    # A different target is a different key.
    other, r = run_cli("lint", "--no-config", "--gpu", "H100", "-v", "--cache-dir", str(cache), ".", cwd=proj), None
    assert f"cache: 0 unchanged files from {cache}; {n} misses: {n} settings changed (gpus)" in other.stderr


def test_no_cache_writes_nothing_and_default_location(tmp_path):
    proj = tmp_path / "proj"
    proj.mkdir()
    (proj / "pyproject.toml").write_text("[tool.aicompat]\ngpus = ['A100']\n")
    (proj / "src").mkdir()
    (proj / "src" / "a.py").write_text(FP8)
    r = run_cli("lint", "--no-cache", "src", cwd=proj)
    assert r.returncode == 1 and not (proj / ".aicompat_cache").exists() and not (proj / "src" / ".aicompat_cache").exists()
    # By default the cache sits next to pyproject.toml (the linted folder's project), ...
    r = run_cli("lint", "-v", ".", cwd=proj / "src", env={"AICOMPAT_CACHE_DIR": ""})
    assert r.returncode == 1 and (proj / ".aicompat_cache" / ".gitignore").is_file()
    assert sorted(p.name for p in proj.iterdir()) == [".aicompat_cache", "pyproject.toml", "src"]
    # ... or where [tool.aicompat] cache-dir says, relative to that file.
    (proj / "pyproject.toml").write_text("[tool.aicompat]\ngpus = ['A100']\ncache-dir = 'build/lint-cache'\n")
    r = run_cli("lint", "-v", "src", cwd=proj, env={"AICOMPAT_CACHE_DIR": ""})
    assert (proj / "build" / "lint-cache" / ".gitignore").is_file() and "build/lint-cache" in r.stderr


def test_incomplete_results_are_not_cached(tmp_path, monkeypatch):
    from aicompat import Target
    from aicompat.matrix import default_matrix
    from aicompat.rules.fp8 import Fp8Unsupported
    from aicompat.run.api import run
    from aicompat.run.config import build_settings

    (tmp_path / "a.py").write_text(FP8)
    m = default_matrix()
    settings = build_settings(m, cli=Target(gpus=["A100"]), no_config=True)
    with monkeypatch.context() as mp:
        mp.setattr(Fp8Unsupported, "check_call", lambda *a, **k: 1 / 0)
        res = run([str(tmp_path)], settings, m, cache_dir=tmp_path / "c")
        assert [d.code for d in res.diagnostics] == ["AIC000"]
        assert res.cache_unstored == {"the result was incomplete (AIC000)": 1}
    # What is kept says why no result was: the next run's miss names it.
    (entry,) = (tmp_path / "c").rglob("*.json")
    assert "diagnostics" not in json.loads(entry.read_text())
    res = run([str(tmp_path)], settings, m, cache_dir=tmp_path / "c")
    assert [d.code for d in res.diagnostics] == ["AIC102"] and res.cache_hits == 0
    assert res.cache_misses == {"not stored last run": 1}
    assert res.cache_details == ["a.py: not stored last run: the result was incomplete (AIC000)"] or \
        res.cache_details[0].endswith("a.py: not stored last run: the result was incomplete (AIC000)")
    res = run([str(tmp_path)], settings, m, cache_dir=tmp_path / "c")
    assert [d.code for d in res.diagnostics] == ["AIC102"] and res.cache_hits == 1


def test_fixes_survive_the_cache(tmp_path):
    (tmp_path / "setup.py").write_text('import os\nos.environ["TORCH_CUDA_ARCH_LIST"] = "8.0"\n')
    args = ("lint", "--no-config", "--gpu", "A100", "--gpu", "H100", "--cache-dir", str(tmp_path / "c"), "--diff",
            "setup.py")
    first, second = run_cli(*args, cwd=tmp_path), run_cli(*args, cwd=tmp_path)
    assert first.returncode == second.returncode == 1 and first.stdout == second.stdout and "+os.environ" in first.stdout


def test_concurrent_runs_share_a_cache(tmp_path):
    """Writers race on the same entries; every entry stays whole."""
    proj = tmp_path / "proj"
    proj.mkdir()
    _tree(proj, 10)
    cache = tmp_path / "cache"
    env = dict(os.environ, PYTHONPATH=str(SRC))
    cmd = [sys.executable, "-m", "aicompat", "lint", "--no-config", "--gpu", "A100", "--format", "json", "--jobs", "1",
           "--cache-dir", str(cache), "."]
    procs = [subprocess.Popen(cmd, cwd=proj, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE) for _ in range(3)]
    outs = [p.communicate(timeout=300) for p in procs]
    docs = [json.loads(o)["diagnostics"] for o, _ in outs]
    assert docs[0] == docs[1] == docs[2] and len(docs[0]) == 10
    for entry in cache.rglob("*.json"):
        json.loads(entry.read_text())
    assert not [p for p in cache.rglob(".tmp-*")]


@pytest.mark.parametrize("toml, message", [
    ("jobs = 0", "jobs: expected a whole number >= 1"),
    ("jobs = 'many'", "jobs: expected a whole number >= 1"),
    ("timeout = -1", "timeout: expected seconds > 0"),
    ("cache-dir = 3", "cache-dir: expected a path"),
])
def test_bad_run_settings_are_config_errors(tmp_path, toml, message):
    (tmp_path / "pyproject.toml").write_text(f"[tool.aicompat]\n{toml}\n")
    r = run_cli("lint", ".", cwd=tmp_path)
    assert r.returncode == 2 and message in r.stderr


def test_bad_flags_are_usage_errors(tmp_path):
    for flag in (["--jobs", "0"], ["--timeout", "0"], ["--timeout", "nan"]):
        r = run_cli("lint", *flag, ".", cwd=tmp_path)
        assert r.returncode == 2 and "expected" in r.stderr, flag


def test_config_jobs_and_timeout_apply(tmp_path):
    (tmp_path / "pyproject.toml").write_text("[tool.aicompat]\ngpus = ['A100']\njobs = 1\ntimeout = 120\n")
    _tree(tmp_path)  # big enough for workers, but the config says one process
    r = run_cli("lint", "-v", "--no-cache", ".", cwd=tmp_path)
    assert r.returncode == 1 and "parsed on 1 process;" in r.stderr


def test_a_cuda_file_loaded_by_name_invalidates_the_cache(tmp_path):
    """The result for ext.py depends on kernel.cu, which it loads: editing only the .cu must not be served stale."""
    proj = tmp_path / "proj"
    proj.mkdir()
    (proj / "ext.py").write_text("from torch.utils.cpp_extension import load\n"
                                 "mod = load(name='k', sources=['kernel.cu'])\n")
    plain = "__global__ void k(float* x) { x[0] = 1.0f; }\n"
    (proj / "kernel.cu").write_text(plain)
    cache = tmp_path / "cache"
    args = ("--gpu", "H100", "--cache-dir", str(cache), "ext.py")
    first, _ = _lint(proj, *args)
    assert first == []
    (proj / "kernel.cu").write_text("__global__ void k(float* x) {\n"
                                    "  asm volatile(\"tcgen05.fence::before_thread_sync;\");\n}\n")
    second, r = _lint(proj, *args)
    assert [d["code"] for d in second] == ["AIC301"], r.stderr
    third, r = _lint(proj, *args)
    assert third == second and "cache: 1 unchanged file" in r.stderr


def test_the_code_digest_covers_every_module_of_the_package(monkeypatch):
    # run/cache.py digested run/ only: an edit to a rule left stale results in the cache
    import aicompat
    from aicompat.run import cache

    roots = []
    monkeypatch.setattr(cache, "_CODE_DIGEST", None)
    monkeypatch.setattr(cache, "_tree_digest", lambda h, root, pattern: roots.append((Path(root), pattern)))
    cache.code_digest()
    assert (Path(aicompat.__file__).resolve().parent, "*.py") in roots


# -- warm runs of a real project (issue 29) ---------------------------------------------------------

_PROJECT = {
    "setup.py": """from setuptools import setup
from torch.utils.cpp_extension import BuildExtension, CUDAExtension

ARCHS = ["80", "90"]
setup(
    name="mypkg",
    packages=["mypkg"],
    ext_modules=[CUDAExtension("mypkg._C", ["csrc/kernel.cu"],
                               extra_compile_args={"nvcc": ["-O3"] + [f"-gencode=arch=compute_{a},code=sm_{a}"
                                                                      for a in ARCHS]})],
    cmdclass={"build_ext": BuildExtension},
)
""",
    "requirements.txt": "torch==2.1.0\nnumpy\n",
    "csrc/kernel.cu": "#include <cuda_bf16.h>\n__global__ void scale(float* x, float s) { x[threadIdx.x] *= s; }\n",
    "mypkg/__init__.py": "from .ops import attention, fp8_matmul\n",
    "mypkg/caps.py": "import torch\n\n\ndef has_fp8():\n    return torch.cuda.get_device_capability() >= (8, 9)\n",
    "mypkg/ops.py": """import torch

from .caps import has_fp8


def fp8_matmul(a, b, sa, sb):
    if has_fp8():
        return torch._scaled_mm(a, b, scale_a=sa, scale_b=sb)
    return a @ b


def attention(q, k, v):
    with torch.nn.attention.sdpa_kernel(torch.nn.attention.SDPBackend.FLASH_ATTENTION):
        return torch.nn.functional.scaled_dot_product_attention(q, k, v)
""",
    "mypkg/ext.py": """import os

from torch.utils.cpp_extension import load

_HERE = os.path.dirname(__file__)
extra = load(name="extra", sources=[os.path.join(_HERE, "extra.cu")])
""",
    "mypkg/extra.cu": "__global__ void k(float* x) { x[0] = 1.0f; }\n",
    "mypkg/train.py": """import torch

from mypkg.ops import fp8_matmul


def step(a, b):
    return fp8_matmul(a, b, torch.ones(()), torch.ones(()))
""",
}


def _project_tree(root: Path) -> Path:
    for name, text in _PROJECT.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    return root


def _warm(cwd, cache, path):
    """The project's own pins (requirements.txt), no pyproject: a run as a user starts it."""
    r = run_cli("lint", "--gpu", "A100", "--gpu", "H100", "--format", "json", "-v", "--cache-dir", str(cache), path,
                cwd=cwd)
    assert "Traceback" not in r.stderr, r.stderr
    line = next(x for x in r.stderr.splitlines() if x.startswith("parsed on"))
    hits = int(re.search(r"cache: (\d+) unchanged", line).group(1))
    found = sorted((d["path"], d["line"], d["code"]) for d in json.loads(r.stdout)["diagnostics"])
    return hits, line, found, r.stderr


def _rel(found, cwd, proj):
    """The findings' paths relative to the project, as a run from its root shows them."""
    return sorted((os.path.relpath(os.path.join(cwd, p), proj), line, code) for p, line, code in found)


def test_every_unchanged_file_is_a_hit_from_any_folder(tmp_path):
    proj = _project_tree(tmp_path / "work" / "proj")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    cache = tmp_path / "cache"
    hits, line, cold, _ = _warm(proj, cache, ".")
    n = int(re.search(r"(\d+) misses: \1 no entry", line).group(1))
    assert hits == 0 and n >= 6  # the modules, both .cu files, setup.py
    assert ("mypkg/ops.py", 13, "AIC201") in cold  # torch 2.1.0, from requirements.txt
    # From the root, its parent, an unrelated folder (an absolute path), a folder inside the tree.
    for cwd, path in [(proj, "."), (proj.parent, "proj"), (elsewhere, str(proj)), (proj / "mypkg", "..")]:
        hits, line, found, _ = _warm(cwd, cache, path)
        assert hits == n and line.endswith("; no misses"), (cwd, line)
        assert _rel(found, cwd, proj) == cold, cwd
        # ... which are what a run without the cache gives there.
        r = run_cli("lint", "--gpu", "A100", "--gpu", "H100", "--format", "json", "--no-cache", path, cwd=cwd)
        assert sorted((d["path"], d["line"], d["code"]) for d in json.loads(r.stdout)["diagnostics"]) == found
    # A run with a fresh cache from elsewhere: the second run is all hits too (entries are written
    # though the tree is not under the current folder).
    hits, line, _, _ = _warm(elsewhere, tmp_path / "cache2", str(proj))
    assert hits == 0 and "not stored" not in line
    hits, line, _, _ = _warm(elsewhere, tmp_path / "cache2", str(proj))
    assert hits == n and line.endswith("; no misses")


_UNPACKED = {  # a package unpacked from a wheel: no pyproject, no requirements, no .git
    "mylib/__init__.py": "from .kernels.fp8 import matmul\n",
    "mylib/caps.py": "import torch\n\n\ndef has_fp8():\n    return torch.cuda.get_device_capability() >= (8, 9)\n",
    "mylib/kernels/__init__.py": "",
    "mylib/kernels/fp8.py": """import torch

from ..caps import has_fp8


def matmul(a, b, sa, sb):
    if has_fp8():
        return torch._scaled_mm(a, b, scale_a=sa, scale_b=sb)
    return a @ b


def attend(q, k, v):
    return torch.nn.functional.scaled_dot_product_attention(q, k, v, causal=True)
""",
}


def test_a_tree_without_a_project_file_hits_from_inside_it(tmp_path):
    """With nothing that declares a project, the run reads in the top of the linted
    package, not in the folder it starts from: from inside the tree the guard helper
    one package up is still read (no AIC102) and every entry is a hit."""
    top = tmp_path / "unpacked"
    for name, text in _UNPACKED.items():
        (top / name).parent.mkdir(parents=True, exist_ok=True)
        (top / name).write_text(text)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    cache = tmp_path / "cache"
    hits, line, cold, _ = _warm(top, cache, "mylib")
    assert hits == 0 and line.endswith("3 misses: 3 no entry"), line  # the empty __init__.py is not read
    assert [c for _, _, c in cold] == ["AIC202"]  # the guard helper was read: no AIC102
    for cwd, path in [(top / "mylib" / "kernels", ".."), (top / "mylib", "."), (elsewhere, str(top / "mylib")),
                      (top, "mylib")]:
        hits, line, found, _ = _warm(cwd, cache, path)
        assert hits == 3 and line.endswith("; no misses"), (cwd, line)
        assert _rel(found, cwd, top) == cold, cwd


def test_a_changed_module_invalidates_exactly_its_importers(tmp_path):
    proj = _project_tree(tmp_path / "proj")
    cache = tmp_path / "cache"
    _, line, cold, _ = _warm(proj, cache, ".")
    n = int(re.search(r"(\d+) misses", line).group(1))
    assert not [f for f in cold if f[2] == "AIC102"]  # the guard helper checks the capability
    # The guard helper no longer checks: ops.py, which follows it, is checked again and fails on A100.
    (proj / "mypkg" / "caps.py").write_text("import torch\n\n\ndef has_fp8():\n    return True\n")
    hits, line, found, err = _warm(proj, cache, ".")
    assert ("mypkg/ops.py", 8, "AIC102") in found
    assert hits == n - 2 and line.endswith("; 2 misses: 1 the file changed, 1 a dependency changed"), line
    assert "cache miss mypkg/ops.py: a dependency changed: mypkg/caps.py" in err
    assert "cache miss mypkg/caps.py: the file changed" in err
    # The twin: back as it was, the next run of the same tree is all hits again.
    hits, line, again, _ = _warm(proj, cache, ".")
    assert hits == n and again == found
    # A sidecar .cu file the module loads by name: only the module and the .cu itself.
    (proj / "mypkg" / "extra.cu").write_text("__global__ void k(float* x) { x[1] = 2.0f; }\n")
    hits, line, _, err = _warm(proj, cache, ".")
    assert hits == n - 2 and "cache miss mypkg/ext.py: a dependency changed: mypkg/extra.cu" in err, err


def test_changed_pins_invalidate_what_depends_on_them(tmp_path):
    proj = _project_tree(tmp_path / "proj")
    cache = tmp_path / "cache"
    _, line, cold, _ = _warm(proj, cache, ".")
    n = int(re.search(r"(\d+) misses", line).group(1))
    (proj / "requirements.txt").write_text("torch==2.4.0\nnumpy\n")  # sdpa_kernel exists there
    hits, line, found, err = _warm(proj, cache, ".")
    assert hits == 0 and line.endswith(f"; {n} misses: {n} settings changed (pin torch)"), line
    assert [f for f in cold if f[2] == "AIC201"] and not [f for f in found if f[2] == "AIC201"]
    hits, line, again, _ = _warm(proj, cache, ".")
    assert hits == n and again == found
