"""AIC401 against a peer: vermin's own version tests, run through both tools.

    python bench/bench_vermin.py [--vermin 1.9.2] [--python python3.13] [--examples 40]

Not part of CI (it downloads vermin with pip). Steps:

1. ``pip download vermin==X --no-binary :all:`` into bench/.corpus/ (gitignored)
   and unpack the sdist.
2. Read its tests *statically* (``ast``; nothing of vermin's tests is imported
   or run): every ``self.assertOnlyIn(EXPECTED, self.detect(SOURCE))``,
   ``assertDetectMinVersions(SOURCE, EXPECTED)`` and ``visitor =
   self.visit(SOURCE)`` + ``assertOnlyIn(EXPECTED, visitor.minimum_versions())``
   with literal SOURCE, including ``@parameterized_args`` lists. Functions stop
   being read at their first ``self.config...`` call (backports, feature flags
   change what vermin reports). Snippets whose Python 3 minimum is None
   (Python 2 only) are dropped.
3. Run every snippet through vermin (installed into a throwaway venv, one
   subprocess using its ``detect`` API, default config) and through AIC401
   (``aicompat.lint_source`` with ``--python`` 3.8 ... 3.14).
4. AIC401's minimum for a snippet is the oldest target from 3.8 on with no
   AIC401 finding; vermin's is its Python 3 minimum. Both are clamped to 3.8
   (aicompat's stdlib facts start there), and the two are compared.
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import subprocess
import sys
import tarfile
import time
from collections import Counter, defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / "bench" / ".corpus"
sys.path.insert(0, str(ROOT / "src"))

TARGETS = [(3, m) for m in range(8, 15)]
FLOOR = (3, 8)
BEYOND = (3, 15)  # newer than every target checked

DRIVER = r"""
import json, sys
from vermin import Config, detect
out = []
for src in json.load(open(sys.argv[1])):
    cfg = Config()
    try:
        mins = detect(src, config=cfg)
        v3 = mins[1] if isinstance(mins, (list, tuple)) and len(mins) > 1 else None
        out.append({"v3": list(v3) if isinstance(v3, tuple) else v3})
    except Exception as exc:
        out.append({"error": f"{type(exc).__name__}: {exc}"})
json.dump(out, open(sys.argv[2], "w"))
"""


# -- reading vermin's tests ------------------------------------------------------------
def _str(node, env):
    if isinstance(node, ast.Name) and node.id in env:
        return env[node.id]
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        a, b = _str(node.left, env), _str(node.right, env)
        return a + b if isinstance(a, str) and isinstance(b, str) else None
    try:
        v = ast.literal_eval(node)
    except (ValueError, SyntaxError, TypeError):
        return None
    return v


def _v3(expected) -> tuple[int, int] | None | str:
    """Vermin's expectation -> its Python 3 minimum; "py2" when only Python 2."""
    if isinstance(expected, (tuple, list)) and expected and all(isinstance(x, int) for x in expected):
        expected = [tuple(expected)]
    if not isinstance(expected, (tuple, list)):
        return None
    for v in expected:
        if isinstance(v, (tuple, list)) and len(v) == 2 and v[0] == 3:
            return (v[0], v[1])
    return "py2"


def _is_self_call(node, name) -> bool:
    return (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == name
            and isinstance(node.func.value, ast.Name) and node.func.value.id == "self")


def _touches_config(stmt) -> bool:
    for n in ast.walk(stmt):
        if isinstance(n, ast.Attribute) and n.attr == "config" and isinstance(n.value, ast.Name) and n.value.id == "self":
            return True
    return False


def _read_function(fn: ast.FunctionDef, env: dict, out: list, where: str) -> None:
    visits: dict[str, str] = {}

    def stmts(body) -> bool:
        for st in body:
            if _touches_config(st) and not isinstance(st, (ast.If, ast.For, ast.With)):
                return False
            if isinstance(st, ast.Assign) and len(st.targets) == 1 and isinstance(st.targets[0], ast.Name) \
                    and _is_self_call(st.value, "visit") and st.value.args:
                src = _str(st.value.args[0], env)
                if isinstance(src, str):
                    visits[st.targets[0].id] = src
            elif isinstance(st, ast.Expr) and isinstance(st.value, ast.Call):
                c = st.value
                if _is_self_call(c, "assertOnlyIn") and len(c.args) >= 2:
                    exp = _str(c.args[0], env)
                    arg = c.args[1]
                    src = None
                    if _is_self_call(arg, "detect") and arg.args:
                        src = _str(arg.args[0], env)
                    elif (isinstance(arg, ast.Call) and isinstance(arg.func, ast.Attribute)
                          and arg.func.attr == "minimum_versions" and isinstance(arg.func.value, ast.Name)):
                        src = visits.get(arg.func.value.id)
                    if isinstance(src, str):
                        out.append((where, fn.name, src, _v3(exp)))
                elif _is_self_call(c, "assertDetectMinVersions") and len(c.args) >= 2:
                    src, exp = _str(c.args[0], env), _str(c.args[1], env)
                    if isinstance(src, str):
                        out.append((where, fn.name, src, _v3(exp)))
            elif isinstance(st, (ast.If, ast.For, ast.While, ast.With, ast.Try)):
                for body_name in ("body", "orelse", "finalbody"):
                    if not stmts(getattr(st, body_name, []) or []):
                        return False
        return True

    stmts(fn.body)


def read_tests(test_dir: Path) -> list[tuple[str, str, str, object]]:
    out: list = []
    for path in sorted(test_dir.glob("*.py")):
        if path.name in ("__init__.py", "testutils.py"):
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if not (isinstance(node, ast.FunctionDef) and node.name.startswith("test")):
                continue
            params = [a.arg for a in node.args.args[1:]]
            envs = [{}]
            for dec in node.decorator_list:
                if isinstance(dec, ast.Call) and isinstance(dec.func, ast.Attribute) \
                        and dec.func.attr == "parameterized_args" and dec.args:
                    try:
                        rows = ast.literal_eval(dec.args[0])
                    except (ValueError, SyntaxError):
                        rows = []
                    envs = [dict(zip(params, row)) for row in rows if isinstance(row, (list, tuple))]
            for env in envs:
                _read_function(node, env, out, path.stem)
    seen, uniq = set(), []
    for row in out:
        if row[2] not in seen:
            seen.add(row[2])
            uniq.append(row)
    return uniq


# -- running the tools -------------------------------------------------------------------
def fetch_vermin(version: str) -> Path:
    CORPUS.mkdir(parents=True, exist_ok=True)
    sdist = CORPUS / f"vermin-{version}.tar.gz"
    if not sdist.exists():
        env = dict(os.environ, PIP_CONFIG_FILE=os.devnull)
        subprocess.run([sys.executable, "-m", "pip", "download", f"vermin=={version}", "--no-deps",
                        "--no-binary", ":all:", "-d", str(CORPUS), "-q"], check=True, env=env)
    src = CORPUS / f"vermin-{version}"
    if not src.exists():
        with tarfile.open(sdist) as tf:
            tf.extractall(CORPUS, filter="data")
    return src


def vermin_venv(src: Path, python: str) -> Path:
    venv = CORPUS / "vermin-venv"
    py = venv / "bin" / "python"
    if not py.exists():
        subprocess.run([python, "-m", "venv", str(venv)], check=True)
        env = dict(os.environ, PIP_CONFIG_FILE=os.devnull)
        subprocess.run([str(py), "-m", "pip", "install", "-q", str(src)], check=True, env=env)
    return py


def run_vermin(py: Path, sources: list[str]) -> list[dict]:
    inp, outp = CORPUS / "snippets.json", CORPUS / "vermin_out.json"
    inp.write_text(json.dumps(sources))
    subprocess.run([str(py), "-c", DRIVER, str(inp), str(outp)], check=True)
    return json.loads(outp.read_text())


def run_aic401(sources: list[str]) -> list[dict]:
    from aicompat import Target, lint_source

    out = []
    for src in sources:
        failing, parse_error, messages = [], False, []
        for t in TARGETS:
            diags = lint_source(src, Target(gpus=["sm_80"], python=f"{t[0]}.{t[1]}"), select=["AIC401", "AIC001"])
            if any(d.code == "AIC001" for d in diags):
                parse_error = True
                break
            if any(d.code == "AIC401" for d in diags):
                failing.append(t)
                messages = messages or [d.message for d in diags if d.code == "AIC401"]
        clean = [t for t in TARGETS if t not in failing]
        out.append({"parse_error": parse_error, "failing": failing,
                    "min": min(clean) if clean and not parse_error else None,
                    "removed": bool(failing and clean and max(failing) > min(clean)), "messages": messages})
    return out


def _fmt(v) -> str:
    if v is None:
        return "-"
    if v >= BEYOND:
        return ">=3.15"
    return f"{v[0]}.{v[1]}" if v > FLOOR else "<=3.8"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--vermin", default="1.9.2")
    ap.add_argument("--python", default="python3.13", help="interpreter for vermin's venv (its parser is the host's)")
    ap.add_argument("--examples", type=int, default=40, help="disagreements to list")
    args = ap.parse_args(argv)
    src = fetch_vermin(args.vermin)
    rows = [r for r in read_tests(src / "tests") if r[3] != "py2"]
    sources = [r[2] for r in rows]
    t0 = time.perf_counter()
    vm = run_vermin(vermin_venv(src, args.python), sources)
    t_vermin = time.perf_counter() - t0
    t0 = time.perf_counter()
    aic = run_aic401(sources)
    t_aic = time.perf_counter() - t0

    per_cat: dict[str, Counter] = defaultdict(Counter)
    examples = []
    for (cat, test, source, _expected), v, a in zip(rows, vm, aic):
        c = per_cat[cat]
        c["snippets"] += 1
        if "error" in v or v.get("v3") is None:
            c["vermin: no Python 3 result"] += 1
            continue
        if a["parse_error"]:
            c["AIC001 (LibCST cannot parse)"] += 1
            continue
        vv = max(tuple(v["v3"]), FLOOR)
        # Flagged on every target 3.8-3.14: AIC401 says "newer than 3.14"; vermin's 3.15 is the same answer.
        av = max(tuple(a["min"]), FLOOR) if a["min"] else BEYOND
        vv = min(vv, BEYOND)
        if av == vv:
            kind = "agree"
        elif av > vv:
            kind = "AIC401 stricter"
        else:
            kind = "AIC401 looser"
        c[kind] += 1
        if a["removed"]:
            c["AIC401: removed later"] += 1
        if kind != "agree":
            examples.append((cat, test, source, _fmt(vv), _fmt(av), a["messages"][:1]))

    (CORPUS / "results.json").write_text(json.dumps(
        [{"file": r[0], "test": r[1], "source": r[2], "vermin": v, "aic401": a} for r, v, a in zip(rows, vm, aic)],
        indent=1, default=list))
    cols = ["snippets", "agree", "AIC401 stricter", "AIC401 looser", "AIC001 (LibCST cannot parse)",
            "vermin: no Python 3 result", "AIC401: removed later"]
    total = Counter()
    for c in per_cat.values():
        total.update(c)
    print(f"vermin {args.vermin} (venv on {args.python}) vs AIC401; {len(rows)} snippets from vermin's tests; "
          f"vermin {t_vermin:.1f} s, AIC401 {t_aic:.1f} s for {len(TARGETS)} targets each\n")
    print("| test file | " + " | ".join(cols) + " |")
    print("|---|" + "---:|" * len(cols))
    for cat in sorted(per_cat):
        print(f"| {cat} | " + " | ".join(str(per_cat[cat][k]) for k in cols) + " |")
    print("| **all** | " + " | ".join(f"**{total[k]}**" for k in cols) + " |")
    print(f"\nDisagreements (first {args.examples} of {len(examples)}): file, test, snippet, vermin min, AIC401 min\n")
    for cat, test, source, vv, av, msg in examples[:args.examples]:
        snippet = source.strip().replace("\n", "\\n")
        snippet = snippet if len(snippet) <= 70 else snippet[:67] + "..."
        print(f"- {cat}.{test}: `{snippet}` vermin {vv}, AIC401 {av}" + (f" ({msg[0]})" if msg else ""))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
