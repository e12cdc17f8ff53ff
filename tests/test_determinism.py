"""A run's findings do not depend on the interpreter's hash seed (set iteration order)."""

import os
import textwrap

from conftest import run_cli

# docs/examples/quickstart_utils.py of TransformerEngine, reduced: a helper no code of the file
# calls (so its worlds have open twins) that splats a kwargs dict defaulted inside it.
SPEEDOMETER = textwrap.dedent('''\
    from typing import Optional

    import torch
    import transformer_engine.pytorch as te


    def speedometer(module, inp, grad, autocast_kwargs: Optional[dict] = None, iters: int = 50):
        if autocast_kwargs is None:
            autocast_kwargs = {"enabled": False}
        for _ in range(iters):
            with te.autocast(**autocast_kwargs):
                out = module(inp)
            out.backward(grad)
    ''')


def test_findings_do_not_depend_on_the_hash_seed(tmp_path):
    (tmp_path / "utils.py").write_text(SPEEDOMETER)
    outs = set()
    for seed in range(6):
        env = dict(os.environ, PYTHONHASHSEED=str(seed))
        r = run_cli("lint", "--no-config", "--no-cache", "--jobs", "1", "--exit-zero", "--gpu", "A100",
                    "--gpu", "H100", "utils.py", cwd=tmp_path, env=env)
        outs.add(r.stdout)
    assert len(outs) == 1, outs
    # The helper's callers may pass any dict (its open twin): FP8 is on only if they say so, which
    # this file does not: no finding, in every seed (a **kwargs the worlds disagree on is not spliced).
    assert outs.pop().startswith("All checks passed"), outs


def test_a_splat_every_world_agrees_on_is_judged(tmp_path):
    from aicompat import Target, lint_source

    base = ("import transformer_engine.pytorch as te\n\n\n"
            "def step(module, inp, kw{param}):\n{body}    with te.autocast(**kw):\n        return module(inp)\n")
    cases = [
        ("", "", False),                                          # a parameter: its dict is not known
        ("=None", "    kw = {'enabled': True}\n", True),           # every world: FP8 on
        ("=None", "    kw = {'recipe': None}\n", True),            # no 'enabled': TE's default is on
        ("=None", "    kw = {'enabled': False}\n", False),
    ]
    for param, body, reported in cases:
        got = lint_source(base.format(param=param, body=body), Target(gpus=["A100", "H100"]), select=["AIC102"])
        assert bool(got) == reported, (body, got)
