"""Legal code that nests deeper than Python's recursion limit (issue 29 item 5): the
traversal, the guards and the flow model walk it with loops, and still find the bug."""

from __future__ import annotations

import libcst as cst

BUG = "torch.cuda.amp.autocast()"


def _lint(tmp_path, monkeypatch, capsys, text: str):
    from aicompat.cli import main

    (tmp_path / "m.py").write_text(text)
    monkeypatch.chdir(tmp_path)
    code = main(["lint", "--no-config", "--no-cache", "--gpu", "A100", "--jobs", "1", "m.py"])
    return code, capsys.readouterr().out


def _mode_check(n_terms: int, call: str) -> str:
    """A generated dispatch check: ``mode == 0 or mode == 1 or ...``, then the call."""
    test = " or ".join(f"mode == {i}" for i in range(n_terms))
    return f"import torch\n\n\ndef run(x, mode):\n    ok = {test}\n    if ok:\n        with {call}:\n            return x\n"


def test_a_5000_term_or_chain_still_finds_the_bug_after_it(tmp_path, monkeypatch, capsys):
    code, out = _lint(tmp_path, monkeypatch, capsys, _mode_check(5000, BUG))
    assert "AIC000" not in out and "m.py:7:14: AIC203" in out and code == 1
    fixed = _mode_check(5000, 'torch.amp.autocast("cuda")')
    code, out = _lint(tmp_path, monkeypatch, capsys, fixed)
    assert code == 0 and "AIC" not in out.split("note:")[0]


def _chain(n: int, last: str) -> cst.If:
    src = "".join(f"{'if' if i == 0 else 'elif'} m == {i}:\n    return {i}\n" for i in range(n)) + f"else:\n    {last}\n"
    return cst.ensure_type(cst.parse_module(src).body[0], cst.If)


def test_a_5000_branch_elif_chain_is_judged_by_a_loop():
    from aicompat.model.guards import orelse_terminates, terminates

    class Libs:
        exit_calls: set = set()
        exit_methods: set = set()

    leaves = _chain(5000, "raise ValueError(m)")
    block = cst.IndentedBlock(body=[leaves])
    assert terminates(block, lambda f: None, Libs()) and orelse_terminates(leaves.orelse, lambda f: None, Libs())
    falls_through = _chain(5000, "y = m")
    assert not terminates(cst.IndentedBlock(body=[falls_through]), lambda f: None, Libs())


def _dispatch(n: int, fixed: bool = False) -> tuple[str, dict[str, int]]:
    """A generated ``n``-branch op dispatcher (as code generators and table-driven
    interpreters write them), with a deprecated autocast in a branch's body near the
    end of the chain, a wrong SDPA keyword in a branch's test, and the deprecated
    autocast again after the chain; ``fixed``: the twin with all three fixed. Also the
    line of each, by name."""
    autocast = "torch.amp.autocast('cuda')" if fixed else "torch.cuda.amp.autocast()"
    causal = "is_causal" if fixed else "causal"
    lines = ["import torch", "import torch.nn.functional as F", "", "", "def run(op, q, k, v):"]
    where = {}
    for i in range(n):
        cond = f"op == {i}"
        if i == n // 2:
            cond = f"F.scaled_dot_product_attention(q, k, v, {causal}=True) is None"
            where["test"] = len(lines) + 1
        lines.append(f"    {'if' if i == 0 else 'elif'} {cond}:")
        if i == n - 3:
            where["body"] = len(lines) + 1
            lines += [f"        with {autocast}:", "            return q"]
        else:
            lines.append(f"        return {i}")
    where["after"] = len(lines) + 1
    lines += [f"    with {autocast}:", "        return v", ""]
    return "\n".join(lines), where


def test_a_5000_branch_elif_dispatcher_is_linted_and_placed(tmp_path, monkeypatch, capsys):
    """The whole chain is analysed (no AIC000/AIC001: CPython's AST constructor gets a
    higher recursion limit, positions are generated per branch, the own walks use
    stacks), and each finding sits where it does in a 50-branch dispatcher."""
    found = {}
    for n in (50, 5000):
        text, where = _dispatch(n)
        code, out = _lint(tmp_path, monkeypatch, capsys, text)
        assert code == 1 and "AIC000" not in out and "AIC001" not in out, out[:500]
        got = [line.split(": ", 2) for line in out.splitlines() if line.startswith("m.py:")]
        line_of = {v: k for k, v in where.items()}
        found[n] = sorted((line_of[int(p.split(":")[1])], p.split(":", 2)[2], c, m) for p, c, m in got)
    assert found[50] == found[5000]
    assert [(w, c.split()[0]) for w, _, c, _ in found[5000]] == [("after", "AIC203"), ("body", "AIC203"),
                                                                ("test", "AIC202")]
    text, _ = _dispatch(5000, fixed=True)
    code, out = _lint(tmp_path, monkeypatch, capsys, text)
    assert code == 0 and "AIC" not in out.split("note:")[0], out[:500]
