"""A pull request from anyone: nothing in the linted tree (files, names, links,
a committed cache, the project's own config) may forge results, make --fix
write chosen code or write outside the tree, or make aicompat read outside it.
Every hostile input is made here, in tmp_path."""
import json
import os
import signal
import stat
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from conftest import SRC, run_cli

from aicompat.fs.deps import digest

FP8 = "import torch\nx = torch._scaled_mm(a, b, scale_a=sa, scale_b=sb)\n"
A100 = "[tool.aicompat]\ngpus = ['A100']\n"


def _project(root: Path, files: dict[str, str], pyproject: str = A100) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "pyproject.toml").write_text(pyproject)
    for name, text in files.items():
        (root / name).write_text(text)
    return root


def _lint(cwd, *args, home=None, env=None):
    """The CLI with the default cache (inside the project) and the cache secret under ``home``."""
    e = {"AICOMPAT_CACHE_DIR": ""}
    if home is not None:
        e["XDG_CACHE_HOME"] = str(home)
    e.update(env or {})
    r = run_cli("lint", "-v", *args, cwd=cwd, env=e)
    assert "Traceback" not in r.stderr, r.stderr
    return r


def _entries(proj: Path) -> list[Path]:
    return sorted((proj / ".aicompat_cache").rglob("*.json"))


# -- a committed cache -------------------------------------------------------

def test_a_cache_made_on_another_machine_is_a_miss(tmp_path):
    """An entry committed with the repository (git add -f .aicompat_cache) was made
    under another user's secret: not one result comes from it."""
    proj = _project(tmp_path / "proj", {"a.py": FP8})
    first = _lint(proj, ".", home=tmp_path / "contributor")
    assert first.returncode == 1 and len(_entries(proj)) == 1
    again = _lint(proj, ".", home=tmp_path / "contributor")
    assert "cache: 1 unchanged file" in again.stderr  # its own entry is a hit for the one who made it
    ci = _lint(proj, ".", home=tmp_path / "ci")
    assert "cache: 0 unchanged files" in ci.stderr and "AIC102" in ci.stdout and ci.returncode == 1
    secret = tmp_path / "ci" / "aicompat" / "secret"
    assert stat.S_IMODE(secret.stat().st_mode) == 0o600 and not (proj / "secret").exists()


def test_an_edited_entry_neither_hides_nor_forges_findings(tmp_path):
    proj = _project(tmp_path / "proj", {"a.py": FP8, "clean.py": "import torch\nx = torch.ones(3)\n"})
    home = tmp_path / "home"
    _lint(proj, "--no-prefilter", ".", home=home)
    for entry in _entries(proj):
        doc = json.loads(entry.read_text())
        if doc["file"].endswith("/a.py"):
            doc["diagnostics"] = []  # hide the real finding
        else:
            doc["diagnostics"] = [dict(path="", line=1, column=1, end_line=1, end_column=1, code="AIC102",
                                       rule="fp8-unsupported", severity="error", message="forged", targets=[],
                                       cell=None, cell_line=None)]
        entry.write_text(json.dumps(doc))
    r = _lint(proj, "--no-prefilter", "--format", "json", ".", home=home)
    found = [(d["path"], d["code"]) for d in json.loads(r.stdout)["diagnostics"]]
    assert found == [("a.py", "AIC102")] and "cache: 0 unchanged files" in r.stderr
    assert "2 misses: 2 unreadable entry" in r.stderr


def test_a_fix_is_never_taken_from_the_cache(tmp_path):
    src = "import os\nos.environ['TORCH_CUDA_ARCH_LIST'] = '8.0'\n"
    proj = _project(tmp_path / "proj", {"setup.py": src}, "[tool.aicompat]\ngpus = ['A100', 'H100']\n")
    home = tmp_path / "home"
    _lint(proj, "setup.py", home=home)
    (entry,) = _entries(proj)
    doc = json.loads(entry.read_text())
    for d in doc["diagnostics"]:
        d["fix"] = "__import__('os').system('touch pwned')"
    entry.write_text(json.dumps(doc))
    r = _lint(proj, "--fix", "setup.py", home=home)
    fixed = (proj / "setup.py").read_text()
    assert "pwned" not in fixed and fixed == "import os\nos.environ['TORCH_CUDA_ARCH_LIST'] = '8.0;9.0+PTX'\n", r.stderr


def _forge(cache, file: Path, doc: dict) -> None:
    """An entry for ``file`` with a valid MAC (as if this machine had written it)."""
    real = os.path.realpath(file)
    doc = dict(doc, file=real, digest=digest(file.read_bytes()), settings=cache.settings)
    doc["mac"] = cache._mac(doc)
    key = cache.key(real)
    folder = cache.dir / key[:2]
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{key}.json").write_text(json.dumps(doc))


_BASE = {"parsed": True, "skipped": None, "notes": [], "fixable": False, "reads": {}, "decisions": [],
         "diagnostics": [], "suppressed": []}


def test_cached_reads_are_checked_only_inside_the_project(tmp_path):
    """``reads`` names files whose digests make an entry stale; one naming a file
    outside the project, a link out, or a FIFO is a miss, and is never opened."""
    from aicompat.run.cache import Cache

    proj, outside = tmp_path / "proj", tmp_path / "outside"
    proj.mkdir()
    outside.mkdir()
    (proj / "a.py").write_text("import torch\n")
    (outside / "secret.cu").write_text("secret\n")
    (proj / "kernel.cu").write_text("secret\n")
    os.symlink(outside / "secret.cu", proj / "link.cu")
    os.mkfifo(proj / "pipe.cu")
    secret = digest(b"secret\n")
    cache = Cache(tmp_path / "cache", {"fp": "1"}, proj)
    base = dict(_BASE, tree=str(proj))
    old = signal.signal(signal.SIGALRM, lambda *a: pytest.fail("a FIFO named in reads was opened"))
    signal.alarm(20)
    try:
        for dep in [outside / "secret.cu", proj / "link.cu", proj / "pipe.cu", Path("/dev/zero")]:
            _forge(cache, proj / "a.py", dict(base, reads={str(dep): secret}))
            assert cache.get(proj / "a.py", "a.py", digest(b"import torch\n")) is None, dep
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)
    assert cache.misses == {"the project root changed": 3, "a dependency changed": 1}  # outside: never opened
    _forge(cache, proj / "a.py", dict(base, reads={str(proj / "kernel.cu"): secret}))
    cache._digests.clear()
    assert cache.get(proj / "a.py", "a.py", digest(b"import torch\n")) is not None  # the twin: inside the project


@pytest.mark.parametrize("field, value", [
    ("parsed", "yes"), ("skipped", 3), ("reads", ["x"]), ("diagnostics", {"a": 1}),
    ("diagnostics", [{"path": "", "line": "1"}]), ("fixable", None), ("decisions", [["/x", "yes"]]),
])
def test_every_field_of_an_entry_is_checked(tmp_path, field, value):
    from aicompat.run.cache import Cache

    (tmp_path / "a.py").write_text("import torch\n")
    (tmp_path / "b.py").write_text("import torch\n")
    # A tree other than the run's: the confinement answers (decisions) are checked too.
    cache = Cache(tmp_path / "cache", {"fp": "1"}, tmp_path)
    base = dict(_BASE, tree="/elsewhere")
    _forge(cache, tmp_path / "a.py", base)
    assert cache.get(tmp_path / "a.py", "a.py", digest(b"import torch\n")) is not None
    _forge(cache, tmp_path / "b.py", dict(base, **{field: value}))
    assert cache.get(tmp_path / "b.py", "b.py", digest(b"import torch\n")) is None
    assert cache.misses == {"unreadable entry": 1}


# -- the cache folder --------------------------------------------------------

def test_links_in_the_cache_folder_are_not_written_through(tmp_path):
    from aicompat import __version__
    from aicompat.run.cache import FORMAT

    outside = tmp_path / "outside"
    (outside / "entries").mkdir(parents=True)
    proj = _project(tmp_path / "proj", {"a.py": FP8})
    cache = proj / ".aicompat_cache"
    cache.mkdir()
    os.symlink(outside / "gitignore", cache / ".gitignore")  # dangling: writing would create it
    os.symlink(outside / "tag", cache / "CACHEDIR.TAG")
    os.symlink(outside / "entries", cache / f"v{FORMAT}-{__version__}")
    r = _lint(proj, ".", home=tmp_path / "home")
    assert r.returncode == 1 and "AIC102" in r.stdout
    assert sorted(p.name for p in outside.rglob("*")) == ["entries"]
    # The cache folder itself committed as a link.
    proj2 = _project(tmp_path / "proj2", {"a.py": FP8})
    os.symlink(outside / "entries", proj2 / ".aicompat_cache")
    r = _lint(proj2, ".", home=tmp_path / "home")
    assert r.returncode == 1 and sorted(p.name for p in outside.rglob("*")) == ["entries"]
    # The twin: a plain cache folder is written and used.
    r = _lint(proj2.parent / "proj", ".", home=tmp_path / "home")
    assert r.returncode == 1


def test_config_cache_dir_outside_the_project_is_refused(tmp_path):
    outside = tmp_path / "elsewhere"
    proj = _project(tmp_path / "proj", {"a.py": FP8}, A100 + "cache-dir = '../elsewhere'\n")
    r = _lint(proj, ".", home=tmp_path / "home")
    assert r.returncode == 2 and "cache-dir" in r.stderr and "not inside the project" in r.stderr
    assert not outside.exists()
    # Through a link inside the project: the same.
    (tmp_path / "target").mkdir()
    os.symlink(tmp_path / "target", proj / "build")
    (proj / "pyproject.toml").write_text(A100 + "cache-dir = 'build/cache'\n")
    r = _lint(proj, ".", home=tmp_path / "home")
    assert r.returncode == 2 and not list((tmp_path / "target").iterdir())
    # The user may put it anywhere: on the command line or in the environment.
    r = _lint(proj, "--cache-dir", str(outside), ".", home=tmp_path / "home")
    assert r.returncode == 1 and (outside / ".gitignore").is_file()
    r = _lint(proj, ".", home=tmp_path / "home", env={"AICOMPAT_CACHE_DIR": str(tmp_path / "env-cache")})
    assert r.returncode == 1 and (tmp_path / "env-cache" / ".gitignore").is_file()
    # The twin: a folder inside the project is fine.
    (proj / "pyproject.toml").write_text(A100 + "cache-dir = 'lint-cache'\n")
    r = _lint(proj, ".", home=tmp_path / "home")
    assert r.returncode == 1 and (proj / "lint-cache" / ".gitignore").is_file()


# -- --fix -------------------------------------------------------------------

ARCHS = ["--no-config", "--gpu", "A100", "--gpu", "H100", "--select", "AIC302", "--no-cache"]
BEFORE = "os.environ['TORCH_CUDA_ARCH_LIST'] = '10.0'   # written for B200\n"
AFTER = "os.environ['TORCH_CUDA_ARCH_LIST'] = '8.0;9.0+PTX'   # written for B200\n"


def test_fix_keeps_crlf_newlines_and_the_file_mode(tmp_path):
    p = tmp_path / "setup_env.py"
    p.write_bytes(("import os  # build settings\n\n" + BEFORE).replace("\n", "\r\n").encode())
    p.chmod(0o640)
    r = run_cli("lint", *ARCHS, "--fix", "setup_env.py", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert p.read_bytes() == ("import os  # build settings\n\n" + AFTER).replace("\n", "\r\n").encode()
    assert stat.S_IMODE(p.stat().st_mode) == 0o640 and sorted(x.name for x in tmp_path.iterdir()) == ["setup_env.py"]


def test_fix_keeps_a_declared_latin1_encoding(tmp_path):
    p = tmp_path / "setup_env.py"
    p.write_bytes(("# -*- coding: latin-1 -*-\nimport os  # r\xe9glages\n" + BEFORE).encode("latin-1"))
    r = run_cli("lint", *ARCHS, "--fix", "setup_env.py", cwd=tmp_path)
    assert r.returncode == 0 and "Traceback" not in r.stderr, r.stderr
    assert p.read_bytes() == ("# -*- coding: latin-1 -*-\nimport os  # r\xe9glages\n" + AFTER).encode("latin-1")


@pytest.mark.parametrize("brk", ["\x0c", "\x85", "\u2028", "\x0b", "\x1e"])
def test_fix_counts_lines_as_the_parser_does(tmp_path, brk):
    """str.splitlines also breaks at these; LibCST (and Python) do not: the edit
    must land on the finding, not inside the comment."""
    p = tmp_path / "setup_env.py"
    p.write_text(f"import os  # build{brk}settings\n\n" + BEFORE, encoding="utf-8")
    r = run_cli("lint", *ARCHS, "--fix", "setup_env.py", cwd=tmp_path)
    assert p.read_text(encoding="utf-8") == f"import os  # build{brk}settings\n\n" + AFTER, r.stderr
    assert r.returncode == 0


def test_fix_refuses_a_link_out_of_the_tree(tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    victim = outside / "victim.py"
    victim.write_text("import os\n" + BEFORE)
    proj = tmp_path / "proj"
    proj.mkdir()
    os.symlink(victim, proj / "setup_env.py")
    # Named on the command line (a folder walk does not follow it at all): checked, but not rewritten.
    r = run_cli("lint", *ARCHS, "--fix", "setup_env.py", cwd=proj)
    assert victim.read_text() == "import os\n" + BEFORE and "fixed" not in r.stderr and r.returncode == 1
    d = run_cli("lint", *ARCHS, "--diff", "setup_env.py", cwd=proj)
    assert d.stdout == "" and d.returncode == 0


def test_fix_applies_only_to_the_bytes_checked_and_never_half_writes(tmp_path, monkeypatch):
    from aicompat import Target
    from aicompat.matrix import default_matrix
    from aicompat.report.fix import fixed_source, write_fixed
    from aicompat.run.api import run
    from aicompat.run.config import build_settings

    monkeypatch.chdir(tmp_path)
    p = tmp_path / "setup_env.py"
    p.write_text("import os\n" + BEFORE)
    m = default_matrix()
    settings = build_settings(m, cli=Target(gpus=["A100", "H100"]), no_config=True)
    (f,) = run(["setup_env.py"], settings, m, fixes=True).files
    # Changed after the check (an editor, a formatter): the offsets are stale, nothing is applied.
    p.write_text("import os\n\n" + BEFORE)
    assert fixed_source(f.path, f.diagnostics, str(tmp_path), f.digest) is None
    p.write_text("import os\n" + BEFORE)
    src, old, new = fixed_source(f.path, f.diagnostics, str(tmp_path), f.digest)
    # A failed write (a full disk) leaves the file whole and no temporary file behind.
    with monkeypatch.context() as mp:
        mp.setattr(os, "fsync", lambda fd: (_ for _ in ()).throw(OSError(28, "No space left on device")))
        with pytest.raises(OSError):
            write_fixed(src, new)
    assert p.read_text() == "import os\n" + BEFORE and sorted(x.name for x in tmp_path.iterdir()) == ["setup_env.py"]
    assert write_fixed(src, new) and p.read_text() == "import os\n" + AFTER


# -- names ---------------------------------------------------------------------

def test_file_names_cannot_inject_terminal_escapes_or_ci_commands(tmp_path):
    names = ["a\x1b]0;owned\x07\x1b[2J.py", "b\n::error file=setup.py,line=1::forged.py", "::warning::c.py",
             "d\u202etxt.py"]
    for n in names:
        (tmp_path / n).write_text(FP8)
    (tmp_path / "e\n::notice::skipped.py").write_text("x = 1\n")
    (tmp_path / "f\x1b[31m.py").write_text(FP8.replace(")\n", ")  # noqa: AIC102\n"))
    args = ("lint", "--no-config", "--gpu", "A100", "--pin", "torch==2.8.0", "--no-cache")
    for fmt in ("text", "github"):
        r = run_cli(*args, "-v", "--show-suppressed", "--format", fmt, ".", cwd=tmp_path)
        assert r.returncode == 1 and "Traceback" not in r.stderr, r.stderr
        for stream in (r.stdout, r.stderr):
            assert "\x1b" not in stream and "\u202e" not in stream and "\x07" not in stream
            lines = stream.split("\n")
            if fmt == "text" or stream is r.stderr:
                assert not [ln for ln in lines if ln.lstrip().startswith(("::", "##"))], stream
            else:  # one annotation per finding, each a single line
                assert len([ln for ln in lines if ln.startswith("::")]) == len(names)
    text = run_cli(*args, ".", cwd=tmp_path).stdout
    assert "a\\x1b]0;owned\\x07\\x1b[2J.py:2:5: AIC102" in text and "./::warning::c.py:2:5:" in text
    assert "b\\n::error file=setup.py,line=1::forged.py:2:5:" in text and "d\\u202etxt.py" in text


# -- paths named in the checked code ----------------------------------------------

KERNEL = '__global__ void k() { asm volatile("wgmma.fence.sync.aligned;"); }\n'


def test_paths_in_checked_code_stay_inside_the_project(tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "kern.cu").write_text(KERNEL)
    proj = tmp_path / "proj"
    proj.mkdir()
    (proj / "kern.cu").write_text(KERNEL)
    os.symlink(outside / "kern.cu", proj / "link.cu")
    os.mkfifo(proj / "pipe.cu")
    (proj / "mod.py").write_text(textwrap.dedent(f'''\
        import os
        import torch.utils.cpp_extension as ext
        a = ext.load_inline("a", "", cuda_sources=open("{outside / 'kern.cu'}").read())
        b = ext.load_inline("b", "", cuda_sources=open(os.path.join(os.path.dirname(__file__), "..", "outside", "kern.cu")).read())
        c = ext.load_inline("c", "", cuda_sources=open(os.path.join(os.path.dirname(__file__), "link.cu")).read())
        d = ext.load_inline("d", "", cuda_sources=open(os.path.join(os.path.dirname(__file__), "pipe.cu")).read())
        e = ext.load_inline("e", "", cuda_sources=open(os.path.join(os.path.dirname(__file__), "kern.cu")).read())
    '''))
    r = run_cli("lint", "--no-config", "--gpu", "H100", "--no-cache", "--format", "json", "mod.py", cwd=proj)
    lines = sorted(d["line"] for d in json.loads(r.stdout)["diagnostics"] if d["code"] == "AIC301")
    assert lines == [7], r.stdout  # only the kernel inside the project is read


def test_requirements_outside_the_project_or_not_regular_are_not_read(tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "requirements.txt").write_text("torch==2.1.0\n")
    proj = _project(tmp_path / "proj", {"a.py": "import torch\n"})
    os.symlink(outside / "requirements.txt", proj / "requirements.txt")
    os.mkfifo(proj / "requirements-dev.txt")  # reading it would block forever
    e = dict(os.environ, PYTHONPATH=str(SRC), AICOMPAT_CACHE_DIR="")
    r = subprocess.run([sys.executable, "-m", "aicompat", "lint", "--no-cache", "--format", "json", "."], cwd=proj,
                       env=e, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert "torch" not in json.loads(r.stdout)["target"]["pins"]
    os.unlink(proj / "requirements.txt")  # the twin: a regular file in the project is read
    (proj / "requirements.txt").write_text("torch==2.1.0\n")
    r = subprocess.run([sys.executable, "-m", "aicompat", "lint", "--no-cache", "--format", "json", "."], cwd=proj,
                       env=e, capture_output=True, text=True, timeout=120)
    assert json.loads(r.stdout)["target"]["pins"]["torch"]["spec"] == "==2.1.0"


# -- --gpu auto ------------------------------------------------------------------

def test_gpu_auto_never_runs_nvidia_smi_from_the_current_folder(tmp_path, monkeypatch):
    from aicompat.base.errors import ConfigError
    from aicompat.run.config import local_gpus

    fake = tmp_path / "nvidia-smi"
    fake.write_text(f"#!/bin/sh\necho > {tmp_path / 'ran'}\necho 9.0\n")
    fake.chmod(0o755)
    monkeypatch.chdir(tmp_path)
    for path in (os.pathsep + "/nonexistent", ".", "nonexistent" + os.pathsep + os.pathsep):
        monkeypatch.setenv("PATH", path)
        with pytest.raises(ConfigError, match="nvidia-smi is not on PATH"):
            local_gpus()
        assert not (tmp_path / "ran").exists()
    # The twin: an absolute PATH entry is used.
    monkeypatch.setenv("PATH", str(tmp_path))
    assert local_gpus() == ["sm_90"] and (tmp_path / "ran").exists()


def test_a_link_out_of_the_tree_is_not_linted_by_a_folder_walk(tmp_path):
    """k.cu -> /proc/self/environ, x.py -> ~/secret.py: the outside text must not reach the output."""
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.py").write_text(FP8)
    proj = tmp_path / "proj"
    (proj / "pkg").mkdir(parents=True)
    os.symlink(outside / "secret.py", proj / "pkg" / "evil.py")
    (proj / "pkg" / "real.py").write_text("import torch\n")
    os.symlink(proj / "pkg" / "real.py", proj / "alias.py")  # a link inside the tree is fine
    args = ("lint", "--no-config", "--gpu", "A100", "--no-cache", "-v")
    r = run_cli(*args, ".", cwd=proj)
    assert r.returncode == 0 and "skipped pkg/evil.py: symlink to outside the linted tree" in r.stderr, r.stderr
    assert "alias.py" not in r.stderr and "(2 files" in r.stdout
    # Named on the command line, it is the user's choice.
    assert run_cli(*args, "pkg/evil.py", cwd=proj).returncode == 1


def test_a_pyproject_linked_to_a_device_or_a_fifo_is_never_read(tmp_path):
    # The last open point of issue 16 item 11: pyproject.toml itself was read through a link,
    # so a checked-in `pyproject.toml -> /dev/zero` ran out of memory and a FIFO hung the run.
    from aicompat.base.errors import ConfigError
    from aicompat.matrix import default_matrix
    from aicompat.run.config import build_settings

    for name, make in (("dev", lambda p: os.symlink("/dev/zero", p)), ("fifo", os.mkfifo)):
        proj = tmp_path / name
        proj.mkdir()
        make(proj / "pyproject.toml")
        # Not a regular file: no configuration is read from it (and nothing hangs or blows up).
        assert build_settings(default_matrix(), start=proj).config_file is None
    with pytest.raises(ConfigError, match="not a regular file"):
        from aicompat.run.config import _load_toml

        os.mkfifo(tmp_path / "pipe.toml")
        _load_toml(tmp_path / "pipe.toml")  # a FIFO met between the lookup and the read
    twin = tmp_path / "ok"
    twin.mkdir()
    (twin / "pyproject.toml").write_text('[tool.aicompat]\ngpus = ["H100"]\n')
    assert build_settings(default_matrix(), start=twin).target.archs == ["sm_90"]


def test_fix_writes_only_under_the_paths_it_was_given(tmp_path):
    # bench_hostile item 6: `aicompat lint --fix repo` where repo/setup.py links to ../outside/setup.py
    # (inside the project folder, outside the linted path) rewrote the outside file.
    (tmp_path / "outside").mkdir()
    (tmp_path / "repo").mkdir()
    target = tmp_path / "outside" / "setup.py"
    target.write_text('import os\nos.environ["TORCH_CUDA_ARCH_LIST"] = "7.0"\n')
    (tmp_path / "repo" / "setup.py").symlink_to(target)
    run_cli("lint", "--no-config", "--no-cache", "--fix", "--gpu", "H100", "repo", cwd=tmp_path)
    assert target.read_text() == 'import os\nos.environ["TORCH_CUDA_ARCH_LIST"] = "7.0"\n'
    # The twin: the same file, linted where it is, is fixed.
    run_cli("lint", "--no-config", "--no-cache", "--fix", "--gpu", "H100", "outside", cwd=tmp_path)
    assert '"9.0+PTX"' in target.read_text()


def test_a_stored_fix_is_shown_but_never_handed_to_a_caller_that_applies_fixes(tmp_path):
    from dataclasses import asdict

    from aicompat.base.diagnostics import Diagnostic
    from aicompat.run.cache import Cache

    (tmp_path / "a.py").write_text("import torch\n")
    cache = Cache(tmp_path / "cache", {"fp": "1"}, tmp_path)
    d = asdict(Diagnostic("", 1, 1, 1, 6, "AIC302", "build-arch-flags", "error", "m", ["A100"],
                          fix="__import__('os').system('touch pwned')"))
    _forge(cache, tmp_path / "a.py", dict(_BASE, tree=str(tmp_path), fixable=True, diagnostics=[d]))
    shown = cache.get(tmp_path / "a.py", "a.py", digest(b"import torch\n"))
    assert shown is not None and shown.diagnostics[0].fix == d["fix"]  # displayed, as a message is
    assert cache.get(tmp_path / "a.py", "a.py", digest(b"import torch\n"), fixes=True) is None
    assert cache.misses == {"its findings have fixes": 1}
