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
    from aicompat.api import run
    from aicompat.config import build_settings
    from aicompat.matrix import default_matrix
    from aicompat.rules.fp8 import Fp8Unsupported

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
