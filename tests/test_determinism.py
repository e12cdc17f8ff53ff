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
