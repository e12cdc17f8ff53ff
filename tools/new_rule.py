"""Write the boilerplate of a new rule (as ruff's scripts/add_rule.py does).

    python3 tools/new_rule.py NAME --family 1 [--module MODULE] [--severity error|warning] [--root DIR]

NAME is the rule's stable name (``tf32-unsupported``); the family is the hundreds digit of what
fails (1 hardware, 2 a release, 3 CUDA compilation, 4 the language; rules/README.md). The tool
takes the next free code and pylint number of the family from rules/codes.toml and writes:

- ``src/aicompat/rules/MODULE.py``: the rule class with its code and name, VALID and INVALID
  example lists to fill, and the hooks it may implement (see aicompat.core.ruleapi);
- ``rules/AICxxx.toml``: the documentation stub (what it does, why it matters, an example, what to
  use instead) that ``aicompat explain`` prints;
- ``version_matrix/MODULE.toml``: a data stub whose every entry must name its source;
- the rule's line in ``rules/codes.toml``, its row in the README rule table and its name in its
  family's row of ``rules/README.md`` (tests/test_docs_tables.py checks all three);
- its line in the registry's index, ``src/aicompat/rules/_index.py`` (tools/gen_rule_index.py
  writes the same; the registry checks it on every lint).

Nothing else needs an edit: the registry discovers the module. The examples and the docs stub
fail their tests until they are filled in.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FAMILIES = {"1": "AIC1xx", "2": "AIC2xx", "3": "AIC3xx", "4": "AIC4xx"}

MODULE = '''"""{code} {name}: TODO one line: what fails, where (facts: version_matrix/{module}.toml).

TODO: why it fails, with the source each fact was read from.
"""

from __future__ import annotations

from ..core.ruleapi import Example, Finding, Rule


class {cls}(Rule):
    code = "{code}"
    name = "{name}"
    tokens = ()  # bytes a file must contain for this rule to parse it (the prefilter)
    call_tails = frozenset()  # last components of the call names check_call reacts to

    VALID = [
        # Example(code, gpus=[...], pins={{...}}): real code that must stay clean (three at least).
    ]
    INVALID = [
        # Example(code, gpus=[...], findings=[(line, column, message)]): its exact findings.
    ]

    def check_call(self, site, qualname: str, fc) -> list[Finding]:
        return []
'''

DOCS = '''code = "{code}"
name = "{name}"
severity = "{severity}"
summary = "TODO one line."
what = """
TODO: what it flags, and what it leaves alone.
"""
why = """
TODO: what goes wrong on the failing target, quoted from the source that says so.
"""
example = """
TODO: a failing program.
"""
example_target = {{gpus = ["A100"]}}
fixed = """
TODO: the same program, fixed.
"""
instead = """
TODO: what to use instead.
"""
# The example's exact findings: [[example_findings]] line = ..., column = ..., message = "..."
example_findings = []
'''

DATA = '''# Facts for {code} {name}. Every entry names its source: the release it was read from (file and
# line), a cited upstream file, or "observed on <GPU>, <release>".
#
# [schema.<section>] says what each [<section>.<key>] entry holds (the matrix loader checks it):
# field = "str" | "list" | "bool" | "int" | "float" | "table", with "?" after it when optional.

[schema.fact]
summary = "str"
'''


def next_free(codes_text: str, family: str) -> tuple[str, str]:
    taken = re.findall(r"^\[(AIC\d{3})\]", codes_text, re.M)
    numbers = set(re.findall(r'^pylint = "(\d\d)"', codes_text, re.M))
    n = max((int(c[3:]) for c in taken if c[3] == family), default=int(family) * 100) + 1
    code = f"AIC{n:03d}"
    own = f"{family}{n % 10}"  # AIC107 -> 17 where it is free, else the family's first free pair
    pylint = own if own not in numbers else next(f"{family}{d}" for d in range(10) if f"{family}{d}" not in numbers)
    return code, pylint


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("name", help="the rule's stable name, lowercase with dashes: tf32-unsupported")
    ap.add_argument("--family", required=True, choices=sorted(FAMILIES))
    ap.add_argument("--module", help="the module's name (default: the name with underscores)")
    ap.add_argument("--severity", default="error", choices=["error", "warning"])
    ap.add_argument("--root", default=str(ROOT), help="the repository to write into (default: this one)")
    args = ap.parse_args(argv)
    if not re.fullmatch(r"[a-z][a-z0-9]*(-[a-z0-9]+)*", args.name):
        ap.error(f"{args.name!r}: a rule name is lowercase words joined by dashes")
    root = Path(args.root)
    module = args.module or args.name.replace("-", "_")
    codes_path = root / "rules" / "codes.toml"
    codes_text = codes_path.read_text()
    if re.search(rf'^name = "{re.escape(args.name)}"$', codes_text, re.M):
        ap.error(f"{args.name!r} is taken (rules/codes.toml): a name is never reused")
    code, pylint = next_free(codes_text, args.family)
    files = {
        root / "src" / "aicompat" / "rules" / f"{module}.py":
            MODULE.format(code=code, name=args.name, module=module,
                          cls="".join(w.capitalize() for w in args.name.split("-"))),
        root / "rules" / f"{code}.toml": DOCS.format(code=code, name=args.name, severity=args.severity),
        root / "version_matrix" / f"{module}.toml": DATA.format(code=code, name=args.name),
    }
    for path in files:
        if path.exists():
            ap.error(f"{path} exists")
    for path, text in files.items():
        path.write_text(text)
    codes_path.write_text(codes_text.rstrip("\n") + f'\n\n[{code}]\nname = "{args.name}"\npylint = "{pylint}"\n')
    index = root / "src" / "aicompat" / "rules" / "_index.py"  # the registry's light index (gen_rule_index.py)
    text = index.read_text()
    lines = list(re.finditer(r'^    "(AIC\d{3})": "[a-z0-9_]+",$', text, re.M))
    before = [m for m in lines if m.group(1) > code]
    at = before[0].start() if before else lines[-1].end() + 1
    index.write_text(text[:at] + f'    "{code}": "{module}",\n' + text[at:])
    readme = root / "README.md"
    text = readme.read_text()
    rows = list(re.finditer(r"^\| (AIC\d{3}) \| [a-z0-9-]+ \|.*$", text, re.M))
    after = [m for m in rows if m.group(1) < code]
    at = (after[-1] if after else rows[0]).end()
    readme.write_text(text[:at] + f"\n| {code} | {args.name} | TODO: what it flags |" + text[at:])
    fam = root / "rules" / "README.md"
    text = fam.read_text()
    m = re.search(rf"^(\| {FAMILIES[args.family]} \| [^|]+ \| )([^|]+?)( \|)$", text, re.M)
    if m:
        text = text[:m.end(2)] + f", {code} {args.name}" + text[m.end(2):]
        fam.write_text(text)
    matrix_readme = root / "version_matrix" / "README.md"
    text = matrix_readme.read_text()
    anchor = re.search(r"^\| file \| what \| used by \|\n\|---\|---\|---\|\n", text, re.M)
    if anchor:
        matrix_readme.write_text(text[:anchor.end()] + f"| {module}.toml | TODO: what it holds | {code} |\n" +
                                 text[anchor.end():])
    print(f"{code} {args.name} (pylint {pylint}): wrote " + ", ".join(str(p.relative_to(root)) for p in files) +
          "; added it to rules/codes.toml, src/aicompat/rules/_index.py, README.md, rules/README.md and "
          "version_matrix/README.md")
    return 0


if __name__ == "__main__":
    sys.exit(main())
