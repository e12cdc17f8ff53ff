"""The example `aicompat explain` prints for each rule is a complete program:
linting it with the command shown prints exactly the findings shown (line,
column, message), and its fixed twin prints none."""
import shlex

import pytest

from aicompat.base.errors import MatrixError
from aicompat.cli import main
from aicompat.report.ruledocs import EXAMPLE_FILE, load_docs

DOCS = load_docs()
REPEAT = "(line "  # "(line N repeated T times)": the example stands for a larger file


def explain(code, capsys):
    assert main(["explain", code]) == 0
    return capsys.readouterr().out


def section(text, title):
    body = text.split(f"\n## {title}\n", 1)[1]
    return body.split("\n## ", 1)[0].rstrip("\n").split("\n")


def transcript(lines):
    """(program, lint arguments, printed output) of an Example/Fixed section."""
    cmd = next(i for i, line in enumerate(lines) if line.startswith("$ aicompat lint "))
    program = "\n".join(lines[:cmd]).rstrip("\n") + "\n"
    if lines[cmd - 1].startswith(REPEAT):
        program = "\n".join(lines[:cmd - 1]).rstrip("\n") + "\n"
        _, n, _, times, _ = lines[cmd - 1].split()
        rows = program.splitlines(keepends=True)
        i = int(n) - 1
        program = "".join(rows[:i] + rows[i:i + 1] * int(times) + rows[i + 1:])
    args = shlex.split(lines[cmd][2:])[2:]
    assert args[-1] == EXAMPLE_FILE
    return program, args[:-1], lines[cmd + 1:]


def lint_printed(program, args, tmp_path, monkeypatch, capsys):
    """What `aicompat lint` prints for the program, one line per finding."""
    (tmp_path / EXAMPLE_FILE).write_text(program)
    monkeypatch.chdir(tmp_path)
    main(["lint", "--no-config", "--no-cache", "--jobs", "1", *args, EXAMPLE_FILE])
    return [line for line in capsys.readouterr().out.splitlines() if line.startswith(EXAMPLE_FILE + ":")]


@pytest.mark.parametrize("code", sorted(DOCS))
def test_explain_example_prints_what_lint_reports(code, tmp_path, monkeypatch, capsys):
    doc = DOCS[code]
    program, args, shown = transcript(section(explain(code, capsys), "Example"))
    assert shown == [f"{EXAMPLE_FILE}:{f['line']}:{f['column']}: {code} {'[*] ' if f.get('fixable') else ''}"
                     f"{f['message']}" for f in doc.example_findings]
    assert program == doc.program()
    assert args == doc.lint_args()
    assert lint_printed(program, args, tmp_path, monkeypatch, capsys) == shown


@pytest.mark.parametrize("code", sorted(DOCS))
def test_explain_fixed_example_is_clean(code, tmp_path, monkeypatch, capsys):
    program, args, shown = transcript(section(explain(code, capsys), "Fixed"))
    assert shown == ["(no findings)"]
    assert program == DOCS[code].fixed
    assert lint_printed(program, args, tmp_path, monkeypatch, capsys) == []


def test_a_doc_without_its_findings_is_rejected(tmp_path):
    from aicompat.base.data import data_dir

    text = (data_dir("rules") / "AIC204.toml").read_text()
    (tmp_path / "AIC204.toml").write_text(text)
    assert load_docs(tmp_path)["AIC204"].example_findings
    (tmp_path / "AIC204.toml").write_text(text.split("[[example_findings]]")[0])
    with pytest.raises(MatrixError, match="example_findings"):
        load_docs(tmp_path)
