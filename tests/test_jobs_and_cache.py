"""--jobs gives the same output as one process; the cache gives the same
output as no cache, and never trusts an entry it cannot verify."""
import json
import os
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
    # (m01.py's old entry is stale: left alone, it is simply never found again.)
    entries = [e for e in sorted(cache.rglob("*.json")) if json.loads(e.read_text())["path"] != "m01.py"]
    entries[0].write_bytes(entries[0].read_bytes()[:25])
    entries[1].write_bytes(b"\x00\xff not json")
    entries[2].write_bytes(b"")
    entries[3].write_bytes(entries[4].read_bytes())
    doc = json.loads(entries[5].read_text())
    doc["diagnostics"] = [{"path": 1}]
    entries[5].write_text(json.dumps(doc))
    again, r = _lint(proj, "--cache-dir", str(cache), ".")
    assert again == edited and f"cache: {n - 5} unchanged files" in r.stderr
    # A different target is a different key.
    other, r = run_cli("lint", "--no-config", "--gpu", "H100", "-v", "--cache-dir", str(cache), ".", cwd=proj), None
    assert "cache: 0 unchanged files" in other.stderr


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
    assert not list((tmp_path / "c").rglob("*.json"))
    res = run([str(tmp_path)], settings, m, cache_dir=tmp_path / "c")
    assert [d.code for d in res.diagnostics] == ["AIC102"] and res.cache_hits == 0
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
