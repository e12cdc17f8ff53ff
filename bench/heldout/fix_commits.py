"""Re-extract the held-out fix-commit pairs and score an aicompat tree on them.

Usage:
    python3 bench/heldout/fix_commits.py --src /work/base27/src [--mirrors /work/.mirror]
        [--work /tmp/fixcorpus] [--manifest bench/heldout/fix_commits.toml] [--json OUT]

For every [[pair]] of the manifest the file at `parent` (before) and at `commit`
(after) is written to WORK/<id>/before/<path> and WORK/<id>/after/<path>, then
`python3 -m aicompat lint --no-cache --format json` runs on each with the
pair's target. A pair is found when a before-file finding has a code starting
with `expect_code` and a message matching `expect_match`; fixed-clean when no
after-file finding does. Every other finding is listed with the manifest's
verdict when the manifest has one for that (file, code, line).
Standard library only (Python 3.10: the manifest is read by a small parser
for the TOML subset the manifest uses).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent


def _split_top(text: str, sep: str) -> list[str]:
    """Split text on sep outside strings, brackets and braces."""
    out, depth, cur, in_str, esc = [], 0, [], False, False
    for ch in text:
        if in_str:
            cur.append(ch)
            if esc:
                esc = False
            elif ch == "\\":
                esc = True
            elif ch == '"':
                in_str = False
            continue
        if ch == '"':
            in_str = True
        elif ch in "[{":
            depth += 1
        elif ch in "]}":
            depth -= 1
        if ch == sep and depth == 0:
            out.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
    if "".join(cur).strip():
        out.append("".join(cur))
    return out


def _value(text: str):
    text = text.strip()
    if text.startswith('"'):
        return json.loads(text)
    if text in ("true", "false"):
        return text == "true"
    if text.startswith("["):
        return [_value(t) for t in _split_top(text[1:-1], ",") if t.strip()]
    if text.startswith("{"):
        table = {}
        for item in _split_top(text[1:-1], ","):
            key, _, val = item.partition("=")
            table[key.strip()] = _value(val)
        return table
    return int(text)


def _depth(text: str) -> int:
    """Open brackets and braces minus closed ones, outside strings."""
    depth, in_str, esc = 0, False, False
    for ch in text:
        if in_str:
            if esc:
                esc = False
            elif ch == "\\":
                esc = True
            elif ch == '"':
                in_str = False
        elif ch == '"':
            in_str = True
        elif ch in "[{":
            depth += 1
        elif ch in "]}":
            depth -= 1
    return depth


def _strip_comment(line: str) -> str:
    in_str, esc = False, False
    for i, ch in enumerate(line):
        if in_str:
            if esc:
                esc = False
            elif ch == "\\":
                esc = True
            elif ch == '"':
                in_str = False
        elif ch == '"':
            in_str = True
        elif ch == "#":
            return line[:i]
    return line


def load_manifest(path: Path) -> list[dict]:
    try:
        import tomllib  # type: ignore[import-not-found]

        return tomllib.loads(path.read_text())["pair"]
    except ImportError:
        pass
    pairs: list[dict] = []
    pending = ""
    for raw in path.read_text().splitlines():
        line = _strip_comment(raw).strip()
        if not line and not pending:
            continue
        if line == "[[pair]]":
            pairs.append({})
            continue
        pending = (pending + " " + line).strip()
        key, _, val = pending.partition("=")
        val = val.strip()
        if val and _depth(val) <= 0:
            pairs[-1][key.strip()] = _value(val)
            pending = ""
    return pairs


def extract(pair: dict, mirrors: Path, work: Path) -> Path:
    git_dir = mirrors / pair["repo"].replace("/", "+") / "repo"
    base = work / pair["id"]
    for side, rev in (("before", pair["parent"]), ("after", pair["commit"])):
        for rel in [pair["path"], *pair.get("extra_paths", [])]:
            blob = subprocess.run(
                ["git", "--git-dir", str(git_dir), "show", f"{rev}:{rel}"],
                capture_output=True,
                check=True,
            ).stdout
            dest = base / side / rel
            dest.parent.mkdir(parents=True, exist_ok=True)
            dest.write_bytes(blob)
    return base


def lint(src: Path, cwd: Path, pair: dict) -> list[dict]:
    target = pair.get("target", {})
    cmd = ["nice", sys.executable, "-m", "aicompat", "lint", "--no-cache", "--no-config"]
    cmd += ["--format", "json", "--exit-zero", "-j", "1"]
    if target.get("gpus"):
        cmd += ["--gpu", ",".join(target["gpus"])]
    for pin in target.get("pins", []):
        cmd += ["--pin", pin]
    if target.get("python"):
        cmd += ["--python", target["python"]]
    if target.get("cuda"):
        cmd += ["--cuda", target["cuda"]]
    cmd.append(pair["path"])
    env = dict(os.environ, PYTHONPATH=str(src))
    res = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True)
    try:
        return json.loads(res.stdout)["diagnostics"]
    except (json.JSONDecodeError, KeyError):
        return [{"code": "ERROR", "line": 0, "message": (res.stdout + res.stderr)[-300:]}]


def matches(diag: dict, pair: dict) -> bool:
    return diag["code"].startswith(pair["expect_code"]) and bool(
        re.search(pair["expect_match"], diag["message"])
    )


def score(pair: dict, src: Path, mirrors: Path, work: Path) -> dict:
    base = extract(pair, mirrors, work)
    res: dict = {"id": pair["id"], "half": pair["half"], "knowable": pair["statically_knowable"]}
    others = []
    verdicts = {
        (o["file"], o["code"], o["line"]): o for o in pair.get("other_findings", [])
    }
    for side in ("before", "after"):
        diags = lint(src, base / side, pair)
        hit = [d for d in diags if matches(d, pair)]
        res[side + "_hit"] = bool(hit)
        for d in diags:
            if d in hit:
                continue
            known = verdicts.get((side, d["code"], d["line"]), {})
            others.append(
                {
                    "file": side,
                    "code": d["code"],
                    "line": d["line"],
                    "verdict": known.get("verdict", "unjudged"),
                    "message": d["message"][:160],
                }
            )
    res["found"] = res["before_hit"]
    res["fixed_clean"] = not res["after_hit"]
    res["others"] = others
    res["agrees"] = (
        res["found"] == pair.get("baseline_found")
        and res["fixed_clean"] == pair.get("baseline_fixed_clean")
    )
    return res


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--src", required=True, type=Path, help="aicompat src/ tree")
    ap.add_argument("--mirrors", default=Path("/work/.mirror"), type=Path)
    ap.add_argument("--work", default=Path("/tmp/fixcorpus"), type=Path)
    ap.add_argument("--manifest", default=HERE / "fix_commits.toml", type=Path)
    ap.add_argument("--only", default="", help="comma-separated pair ids")
    ap.add_argument("--json", type=Path, help="also write the per-pair results here")
    args = ap.parse_args()
    pairs = load_manifest(args.manifest)
    if args.only:
        keep = set(args.only.split(","))
        pairs = [p for p in pairs if p["id"] in keep]
    results = []
    for pair in pairs:
        r = score(pair, args.src.resolve(), args.mirrors, args.work)
        results.append(r)
        flag = "" if r["agrees"] else "  (differs from manifest baseline)"
        print(
            f"{r['id']:28} {r['half']:8} knowable={str(r['knowable']):5} "
            f"found={str(r['found']):5} fixed_clean={str(r['fixed_clean']):5} "
            f"others={len(r['others'])}{flag}"
        )
        for o in r["others"]:
            print(f"    {o['file']:6} {o['code']} l{o['line']} [{o['verdict']}] {o['message']}")
    for half in ("tune", "heldout"):
        rs = [r for r in results if r["half"] == half]
        know = [r for r in rs if r["knowable"]]
        verdict_counts: dict[str, int] = {}
        for r in rs:
            for o in r["others"]:
                verdict_counts[o["verdict"]] = verdict_counts.get(o["verdict"], 0) + 1
        print(
            f"[{half}] pairs={len(rs)} found={sum(r['found'] for r in know)}/{len(know)} knowable"
            f" (found on non-knowable: {sum(r['found'] for r in rs if not r['knowable'])})"
            f" fixed_clean={sum(r['fixed_clean'] for r in rs)}/{len(rs)}"
            f" other_findings={sum(len(r['others']) for r in rs)} {verdict_counts}"
        )
    if args.json:
        args.json.write_text(json.dumps(results, indent=1))
    return 0 if all(r["agrees"] for r in results) else 1


if __name__ == "__main__":
    raise SystemExit(main())
