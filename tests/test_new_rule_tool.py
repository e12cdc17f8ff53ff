"""tools/new_rule.py writes a rule the registry discovers, with its docs, data and table lines,
touching nothing else (issue 26: adding a rule is one module plus its data and docs)."""

import shutil
import subprocess
import sys

from conftest import ROOT


def _copy(tmp_path):
    repo = tmp_path / "repo"
    shutil.copytree(ROOT / "src", repo / "src", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(ROOT / "rules", repo / "rules")
    shutil.copytree(ROOT / "version_matrix", repo / "version_matrix")
    shutil.copy(ROOT / "README.md", repo / "README.md")
    return repo


def test_a_new_rule_is_discovered_with_the_next_free_code(tmp_path):
    repo = _copy(tmp_path)
    before = {p.relative_to(repo) for p in repo.rglob("*") if p.is_file()}
    r = subprocess.run([sys.executable, str(ROOT / "tools" / "new_rule.py"), "tf32-ignored", "--family", "1",
                        "--severity", "warning", "--root", str(repo)], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    after = {p.relative_to(repo) for p in repo.rglob("*") if p.is_file()}
    new = sorted(str(p) for p in after - before)
    code = r.stdout.split()[0]
    assert new == [f"rules/{code}.toml", "src/aicompat/rules/tf32_ignored.py", "version_matrix/tf32_ignored.toml"]
    changed = sorted(str(p) for p in before if (repo / p).read_bytes() != (ROOT / p).read_bytes())
    assert changed == ["README.md", "rules/README.md", "rules/codes.toml", "src/aicompat/rules/_index.py",
                       "version_matrix/README.md"]
    probe = ("from aicompat.rules.registry import RULE_CLASSES, CODES, MESSAGE_NUMBERS\n"
             f"cls = [c for c in RULE_CLASSES if c.code == {code!r}]\n"
             "print(cls[0].name, CODES[cls[0].code], MESSAGE_NUMBERS[cls[0].code], len(set(MESSAGE_NUMBERS.values())) "
             "== len(MESSAGE_NUMBERS))\n")
    got = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120,
                         env={"PYTHONPATH": str(repo / "src"), "PATH": "/usr/bin:/bin"})
    assert got.returncode == 0, got.stderr
    name, listed, pylint, distinct = got.stdout.split()
    assert (name, listed, distinct) == ("tf32-ignored", "tf32-ignored", "True") and pylint.startswith("1")
    assert f"| {code} | tf32-ignored |" in (repo / "README.md").read_text()
    assert f"{code} tf32-ignored" in (repo / "rules" / "README.md").read_text()
    # The registry's light index lists it (``aicompat rules`` reads it; the probe above checked it).
    index = subprocess.run([sys.executable, "-c", "from aicompat.rules import _index; print(_index.MODULES[%r])" % code],
                           capture_output=True, text=True, timeout=60, env={"PYTHONPATH": str(repo / "src")})
    assert index.stdout.split() == ["tf32_ignored"], index.stderr
    again = subprocess.run([sys.executable, str(ROOT / "tools" / "new_rule.py"), "tf32-ignored", "--family", "1",
                            "--root", str(repo)], capture_output=True, text=True, timeout=60)
    assert again.returncode == 2 and "is taken" in again.stderr
