"""Bad input gets a diagnostic; the run goes on; nothing is imported or executed."""
import json

from conftest import lint, run_cli

GOOD_BAD = ("import torch\nfrom flash_attn import flash_attn_func\nq = torch.randn(1, 8, 4, 192)\n"
            "v = torch.randn(1, 8, 4, 128)\nflash_attn_func(q, q, v)\n")


def test_parse_error_reported_with_position_and_run_goes_on(tmp_path):
    (tmp_path / "a_broken.py").write_text("import torch\nfrom flash_attn import flash_attn_func\ndef f(q:\n    return 1\n")
    (tmp_path / "b_good.py").write_text(GOOD_BAD)
    r = run_cli("lint", "--no-config", "--format", "json", str(tmp_path), cwd=tmp_path)
    doc = json.loads(r.stdout)
    got = [(d["path"], d["code"], d["line"]) for d in doc["diagnostics"]]
    assert got[0][:2] == ("a_broken.py", "AIC001") and got[0][2] == 3
    assert ("b_good.py", "AIC101", 5) in got
    assert r.returncode == 1 and "Traceback" not in r.stderr


def test_python2_and_conflict_markers():
    d = lint("import torch\nprint 'fp8'\n")
    assert [x.code for x in d] == ["AIC001"] and "print" in d[0].message
    d = lint("import torch\n<<<<<<< HEAD\nx = torch.float8_e4m3fn\n=======\nx = 1\n>>>>>>> branch\n")
    assert [x.code for x in d] == ["AIC001"] and d[0].line == 2


def test_undecodable_and_binary_files(tmp_path):
    (tmp_path / "latin.py").write_bytes(b"import torch  # caf\xe9\nx = torch.float8_e4m3fn\n")
    (tmp_path / "declared.py").write_bytes(b"# -*- coding: latin-1 -*-\nimport torch  # caf\xe9\nx = torch._scaled_mm(a, b, scale_a=sa, scale_b=sb)\n")
    (tmp_path / "blob.py").write_bytes(b"\x00\x01float8\xff\xfe" * 50)
    r = run_cli("lint", "--no-config", "--gpu", "A100", "--format", "json", str(tmp_path), cwd=tmp_path)
    assert "Traceback" not in r.stderr
    by_path = {}
    for d in json.loads(r.stdout)["diagnostics"]:
        by_path.setdefault(d["path"], []).append(d["code"])
    assert by_path["latin.py"] == ["AIC001"]
    assert by_path["declared.py"] == ["AIC102"]  # PEP 263 declaration honoured
    assert by_path["blob.py"] == ["AIC001"]


def test_analyzer_never_executes_the_code(tmp_path):
    marker = tmp_path / "executed"
    (tmp_path / "evil.py").write_text(
        f"import torch\nopen({str(marker)!r}, 'w').write('x')\nimport flash_attn\n"
        f"torch._scaled_mm(a, b, scale_a=sa, scale_b=sb)\n"
    )
    r = run_cli("lint", "--no-config", str(tmp_path), cwd=tmp_path)
    assert r.returncode == 1 and not marker.exists()


def test_prefilter_on_and_off_agree(tmp_path):
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent / "fixtures"
    outs = []
    for extra in ([], ["--no-prefilter"]):
        r = run_cli("lint", "--no-config", "--format", "json", *extra, str(root), cwd=root)
        outs.append(json.loads(r.stdout)["diagnostics"])
    assert outs[0] == outs[1] and outs[0]


def test_rule_exception_becomes_internal_error_and_run_goes_on(tmp_path, monkeypatch):
    from aicompat import Target
    from aicompat.matrix import default_matrix
    from aicompat.rules.fp8 import Fp8Unsupported
    from aicompat.run.api import run
    from aicompat.run.config import build_settings

    def boom(self, *a, **k):
        raise KeyError("bug")

    monkeypatch.setattr(Fp8Unsupported, "check_call", boom)
    (tmp_path / "a.py").write_text("import torch\ntorch._scaled_mm(a, b, scale_a=sa, scale_b=sb)\n")
    (tmp_path / "b.py").write_text(GOOD_BAD)
    m = default_matrix()
    res = run([str(tmp_path)], build_settings(m, cli=Target(gpus=["A100"]), no_config=True), m)
    got = {(d.path.rsplit("/", 1)[-1], d.code) for d in res.diagnostics}
    assert ("a.py", "AIC000") in got and ("b.py", "AIC101") in got
    msg = next(d.message for d in res.diagnostics if d.code == "AIC000")
    assert "AIC102 fp8-unsupported" in msg and "KeyError" in msg


def test_deep_nesting_does_not_crash(tmp_path):
    deep = "import torch\nx = " + "(" * 2000 + "1" + ")" * 2000 + "\ny = torch.float8_e4m3fn\n"
    (tmp_path / "deep.py").write_text(deep)
    r = run_cli("lint", "--no-config", str(tmp_path), cwd=tmp_path)
    assert "Traceback" not in r.stderr and r.returncode in (1, 3)


# -- more bad input: each file gets a diagnostic or a reason, the run goes on --

FP8 = "import torch\nx = torch._scaled_mm(a, b, scale_a=sa, scale_b=sb)\n"  # AIC102 on an A100


def _lint_tree(tmp_path, *extra):
    """JSON diagnostics by file name, the exit code and stderr of one CLI run."""
    r = run_cli("lint", "--no-config", "--no-cache", "--gpu", "A100", "--format", "json", "-v", *extra, ".",
                cwd=tmp_path)
    assert "Traceback" not in r.stderr, r.stderr
    by_path = {}
    for d in json.loads(r.stdout)["diagnostics"]:
        by_path.setdefault(d["path"], []).append((d["code"], d["line"], d["message"]))
    return by_path, r.returncode, r.stderr


def test_encodings_line_endings_and_odd_bytes(tmp_path):
    (tmp_path / "bom.py").write_bytes(b"\xef\xbb\xbf" + FP8.encode())
    (tmp_path / "crlf.py").write_bytes(FP8.replace("\n", "\r\n").encode())
    (tmp_path / "cp1252.py").write_bytes(b"# -*- coding: cp1252 -*-\n# \x93quoted\x94\n" + FP8.encode())
    (tmp_path / "unknown_codec.py").write_bytes(b"# coding: klingon\n" + FP8.encode())
    (tmp_path / "nul.py").write_bytes(b"import torch\nx = 1\x00\ny = torch._scaled_mm(a, b, scale_a=sa, scale_b=sb)\n")
    (tmp_path / "empty.py").write_bytes(b"")
    (tmp_path / "long_line.py").write_text(FP8 + "z = '" + "x" * 1_000_000 + "'  # " + "y" * 100_000 + "\n")
    (tmp_path / "tabs.py").write_text("import torch\nif True:\n        x = 1\n\ty = torch._scaled_mm(a, b, scale_a=sa, scale_b=sb)\n")
    by_path, code, err = _lint_tree(tmp_path)
    # BOM, CRLF and a declared legacy encoding are read as the source they are.
    for name in ("bom.py", "crlf.py", "cp1252.py", "long_line.py"):
        assert by_path[name] == [("AIC102", 2 + (name == "cp1252.py") * 2, by_path[name][0][2])], name
    for name in ("unknown_codec.py", "nul.py", "tabs.py"):
        assert [c for c, _, _ in by_path[name]] == ["AIC001"], name
    assert "klingon" in by_path["unknown_codec.py"][0][2]
    assert "tab" in by_path["tabs.py"][0][2].lower()
    assert "empty.py" not in by_path and "skipped empty.py: no token any rule reacts to" in err
    assert code == 1


def test_huge_file_is_reported_not_parsed(tmp_path):
    (tmp_path / "big.py").write_text(FP8 + "W = [\n" + "    [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8],\n" * 120_000
                                     + "]\n")
    (tmp_path / "small.py").write_text(FP8)
    assert (tmp_path / "big.py").stat().st_size > 5_000_000
    by_path, code, _ = _lint_tree(tmp_path)
    assert [c for c, _, _ in by_path["big.py"]] == ["AIC002"] and "MB limit" in by_path["big.py"][0][2]
    assert [c for c, _, _ in by_path["small.py"]] == ["AIC102"]
    assert code == 3  # a file went unchecked: the run is incomplete


def test_links_fifos_and_unreadable_files_are_skipped_with_a_reason(tmp_path, monkeypatch, capsys):
    import os
    from pathlib import Path

    from aicompat.cli import main

    (tmp_path / "loop.py").symlink_to("loop.py")
    (tmp_path / "ping.py").symlink_to("pong.py")
    (tmp_path / "pong.py").symlink_to("ping.py")
    (tmp_path / "dangling.py").symlink_to("nowhere.py")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "up").symlink_to("..", target_is_directory=True)  # a directory loop
    os.mkfifo(tmp_path / "fifo.py")  # reading it would block forever
    (tmp_path / "secret.py").write_text(FP8)
    (tmp_path / "ok.py").write_text(FP8)
    from aicompat.run import api

    real_read = api.read_capped

    def read_capped(path, *a):  # we run as root, where chmod 000 does not stop a read
        if Path(path).name == "secret.py":
            raise PermissionError(13, "Permission denied", str(path))
        return real_read(path, *a)

    monkeypatch.setattr(api, "read_capped", read_capped)
    monkeypatch.chdir(tmp_path)
    code = main(["lint", "--no-config", "--no-cache", "--gpu", "A100", "--jobs", "1", "-v", "."])
    out, err = capsys.readouterr()
    assert "ok.py:2:5: AIC102" in out
    # Not read, so not checked: the run is incomplete (issue 25), never a finding a baseline could hide.
    assert "secret.py:1:1: AIC002 not checked: cannot read file: Permission denied; the run is incomplete" in out
    for line in ("skipped loop.py: symlink loop", "skipped ping.py: symlink loop", "skipped pong.py: symlink loop",
                 "skipped dangling.py: dangling symlink", "skipped fifo.py: not a regular file"):
        assert line in err
    assert code == 3
    # Named directly on the command line, they are skipped the same way.
    assert main(["lint", "--no-config", "--no-cache", "-v", "fifo.py", "loop.py"]) == 0
    assert "skipped fifo.py: not a regular file" in capsys.readouterr().err


def test_too_deep_and_broken_files_agree_with_and_without_prefilter(tmp_path):
    """Files that mention nothing aicompat checks get no AIC001 either way,
    whether they are too deep for the parser or merely invalid."""
    (tmp_path / "deep_plain.py").write_text("x = " + "(" * 2000 + "1" + ")" * 2000 + "\n")
    (tmp_path / "broken_plain.py").write_text("def f(:\n")
    (tmp_path / "deep_fp8.py").write_text("import torch\nx = " + "(" * 2000 + "torch.float8_e4m3fn" + ")" * 2000 + "\n")
    outs = [_lint_tree(tmp_path, *extra)[0] for extra in ([], ["--no-prefilter"])]
    assert outs[0] == outs[1]
    assert set(outs[0]) == {"deep_fp8.py"} and [c for c, _, _ in outs[0]["deep_fp8.py"]] == ["AIC001"]


def test_internal_error_makes_the_run_incomplete_in_process_and_in_workers(tmp_path, monkeypatch, capsys):
    from aicompat.cli import main
    from aicompat.rules.fp8 import Fp8Unsupported
    from aicompat.run import parallel

    def boom(self, *a, **k):
        raise KeyError("bug")

    monkeypatch.setattr(Fp8Unsupported, "check_call", boom)  # inherited by forked workers
    monkeypatch.setitem(parallel.MIN_PARALLEL_BYTES, "fork", 0)  # two tiny files: use the workers anyway
    (tmp_path / "a.py").write_text(FP8)
    (tmp_path / "b.py").write_text(GOOD_BAD)
    monkeypatch.chdir(tmp_path)
    for jobs in ("1", "2"):
        code = main(["lint", "--no-config", "--no-cache", "--gpu", "A100", "--jobs", jobs, "-v", "."])
        out, err = capsys.readouterr()
        assert code == 3, jobs
        assert "a.py:2:5: AIC000 internal error: rule AIC102 fp8-unsupported failed: KeyError" in out
        assert "b.py:5:1: AIC101" in out
        assert f"parsed on {jobs} process" in err


def test_a_worker_that_dies_costs_one_file(tmp_path, monkeypatch):
    import os
    import signal

    from aicompat.rules.fp8 import Fp8Unsupported

    def crash(self, *a, **k):  # as a crash in native code or the OOM killer would
        os.kill(os.getpid(), signal.SIGKILL)

    monkeypatch.setattr(Fp8Unsupported, "check_call", crash)
    # The largest file: the parent lints the smallest itself (see lint_parallel).
    res = _run_api(tmp_path, {"a.py": FP8 + "#" * 500, "b.py": GOOD_BAD, "c.py": GOOD_BAD}, jobs=2, pool=True)
    assert res["a.py"] == ["AIC000"] and res["b.py"] == res["c.py"] == ["AIC101"]


def _run_api(tmp_path, files, jobs=1, timeout=None, pool=False):
    from aicompat import Target
    from aicompat.matrix import default_matrix
    from aicompat.run import parallel
    from aicompat.run.api import run
    from aicompat.run.config import build_settings

    for name, text in files.items():
        (tmp_path / name).write_text(text)
    m = default_matrix()
    saved = dict(parallel.MIN_PARALLEL_BYTES)
    if pool:
        parallel.MIN_PARALLEL_BYTES.update(fork=0, spawn=0)
    try:
        res = run([str(tmp_path)], build_settings(m, cli=Target(gpus=["A100"]), no_config=True), m, jobs=jobs,
                  timeout=timeout)
    finally:
        parallel.MIN_PARALLEL_BYTES.update(saved)
    assert res.workers == (jobs if pool else 1)
    out = {}
    for d in res.diagnostics:
        out.setdefault(d.path.rsplit("/", 1)[-1], []).append(d.code)
    return out


def test_time_limit_per_file_in_process_and_in_workers(tmp_path, monkeypatch):
    """A rule that never returns: the file gets AIC002, the others their findings."""
    from aicompat.rules.fp8 import Fp8Unsupported

    def hang(self, *a, **k):
        while True:
            pass

    monkeypatch.setattr(Fp8Unsupported, "check_call", hang)
    files = {"a_hangs.py": FP8 + "#" * 500, "b.py": GOOD_BAD, "c.py": GOOD_BAD}  # largest: goes to a worker
    for jobs, pool in ((1, False), (2, True)):
        res = _run_api(tmp_path, files, jobs=jobs, timeout=0.5, pool=pool)
        assert res == {"a_hangs.py": ["AIC002"], "b.py": ["AIC101"], "c.py": ["AIC101"]}, jobs


def test_time_limit_is_reported_by_the_cli(tmp_path, monkeypatch, capsys):
    import signal

    from aicompat.cli import main
    from aicompat.rules.fp8 import Fp8Unsupported

    def hang(self, *a, **k):
        while True:
            pass

    monkeypatch.setattr(Fp8Unsupported, "check_call", hang)
    (tmp_path / "a.py").write_text(FP8)
    monkeypatch.chdir(tmp_path)
    code = main(["lint", "--no-config", "--no-cache", "--gpu", "A100", "--jobs", "1", "--timeout", "0.3", "."])
    out = capsys.readouterr().out
    assert code == 3 and "a.py:1:1: AIC002 not checked: analysis used more than the 0.3 s CPU-time limit" in out
    assert signal.getsignal(signal.SIGALRM) in (signal.SIG_DFL, None)  # the timers' handlers were put back
    assert signal.getsignal(signal.SIGPROF) in (signal.SIG_DFL, None)
    assert signal.getitimer(signal.ITIMER_REAL) == signal.getitimer(signal.ITIMER_PROF) == (0.0, 0.0)


def test_linting_imports_nothing_runs_nothing_and_writes_only_its_cache(tmp_path):
    """Modules whose import would print, write a file and import a package
    with the same side effects; after linting (workers and cache on) none of
    it happened and the only new files are the cache's."""
    proj = tmp_path / "proj"
    (proj / "evilpkg").mkdir(parents=True)
    marker = tmp_path / "imported"
    side_effects = f"print('SIDE-EFFECT')\nopen({str(marker)!r}, 'a').write(__name__)\n"
    (proj / "evilpkg" / "__init__.py").write_text("import torch\n" + side_effects + "torch._scaled_mm(a, b, scale_a=sa, scale_b=sb)\n")
    (proj / "main.py").write_text("import torch\nimport evilpkg\nfrom evilpkg import thing\n" + side_effects
                                  + "x = torch._scaled_mm(a, b, scale_a=sa, scale_b=sb)\nif __name__ == '__main__':\n    exec('1')\n")
    (proj / "conftest.py").write_text(side_effects)  # not even the files pytest would import
    before = {p for p in proj.rglob("*")}
    cache = proj / ".aicompat_cache"
    for _ in range(2):  # cold, then warm from the cache
        # python -m puts the working folder first on sys.path: an import of
        # evilpkg or main by aicompat would find them.
        r = run_cli("lint", "--no-config", "--gpu", "A100", "--jobs", "2", "--cache-dir", str(cache), ".", cwd=proj)
        assert r.returncode == 1 and "AIC102" in r.stdout
        assert "SIDE-EFFECT" not in r.stdout + r.stderr and not marker.exists()
    new = {p for p in proj.rglob("*")} - before
    assert new and all(p == cache or cache in p.parents for p in new)
    assert not list(proj.rglob("__pycache__"))
