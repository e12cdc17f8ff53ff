"""The tables that document the rules and the matrix say what the code has (issue 26): the README
rule table, rules/README.md's code families and version_matrix/README.md's files, each checked
against the registry (rules/codes.toml and the discovered rules) and the files on disk."""

import re

from conftest import ROOT

from aicompat.rules.registry import CODES, IMPLEMENTED, RULE_CLASSES

ROW = re.compile(r"^\| (AIC\d{3}) \| ([a-z0-9-]+) \|", re.M)


def test_the_readme_rule_table_lists_every_implemented_code_with_its_name():
    rows = ROW.findall((ROOT / "README.md").read_text())
    assert sorted(rows) == sorted((c, CODES[c]) for c in IMPLEMENTED)


def test_the_code_families_name_every_rule_with_its_name():
    text = (ROOT / "rules" / "README.md").read_text()
    families = {m.group(1): m.group(2) for m in re.finditer(r"^\| (AIC\dxx) \| [^|]+ \| ([^|]+) \|", text, re.M)}
    named = dict(re.findall(r"(AIC\d{3}) ([a-z0-9-]+)", " ".join(families.values())))
    assert all(CODES.get(code) == name for code, name in named.items()), named
    for cls in RULE_CLASSES:
        assert named.get(cls.code) == cls.name, f"{cls.code} is not in its family's row of rules/README.md"


def test_every_rule_has_its_docs_and_its_code_line():
    for cls in RULE_CLASSES:
        doc = (ROOT / "rules" / f"{cls.code}.toml").read_text()
        assert f'code = "{cls.code}"' in doc and f'name = "{cls.name}"' in doc


def test_the_matrix_readme_lists_every_data_file():
    text = (ROOT / "version_matrix" / "README.md").read_text()
    for path in sorted((ROOT / "version_matrix").glob("*.toml")):
        assert path.name in text, f"version_matrix/README.md does not say what {path.name} holds"
    used_by = re.findall(r"AIC\d{3}", text)
    assert set(used_by) <= set(CODES), sorted(set(used_by) - set(CODES))
