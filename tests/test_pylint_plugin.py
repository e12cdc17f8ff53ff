"""The pylint plugin: pylint's own test utilities, and a real pylint run."""
import os
import subprocess
import sys

import pytest

pylint = pytest.importorskip("pylint", reason="pylint is not installed (pip install -e '.[test]' installs it)")

import astroid  # noqa: E402
from pylint.testutils import CheckerTestCase, MessageTest  # noqa: E402

from aicompat.pylint_plugin import AicompatChecker, msgid  # noqa: E402

BAD = ("import torch\nfrom flash_attn import flash_attn_func\nq = torch.randn(1, 8, 4, 192)\n"
       "v = torch.randn(1, 8, 4, 128)\nout = flash_attn_func(q, q, v)\n")


class TestAicompatChecker(CheckerTestCase):
    CHECKER_CLASS = AicompatChecker
    CONFIG = {"aicompat_gpu": ("A100",), "aicompat_python": "3.11", "aicompat_pin": ()}

    def test_finding_becomes_a_message(self, tmp_path):
        f = tmp_path / "m.py"
        f.write_text(BAD)
        module = astroid.MANAGER.ast_from_file(str(f))
        msg = ("AIC101 flash_attn_func: V head dim 128 != QK head dim 192 is rejected by FlashAttention 2 on every GPU "
               '("v must have shape (batch_size, seqlen_k, num_heads_k, head_size)"); fails on sm_80 (A100)')
        with self.assertAddsMessages(
            MessageTest("aicompat-v-headdim-mismatch", line=5, args=(msg,), col_offset=6, end_line=5,
                        end_col_offset=30),
            ignore_position=False,
        ):
            self.checker.process_module(module)

    def test_clean_module(self, tmp_path):
        f = tmp_path / "ok.py"
        f.write_text("import torch\nx = torch.randn(3)\n")
        with self.assertNoMessages():
            self.checker.process_module(astroid.MANAGER.ast_from_file(str(f)))


def test_message_ids_are_stable():
    assert msgid("AIC101") == "E7311" and msgid("AIC302") == "E7332" and msgid("AIC001") == "E7301"


def _pylint(args, cwd):
    env = dict(os.environ)
    from conftest import SRC

    env["PYTHONPATH"] = str(SRC) + os.pathsep + env.get("PYTHONPATH", "")
    return subprocess.run([sys.executable, "-m", "pylint", "--load-plugins=aicompat.pylint_plugin", "--disable=all",
                           "--enable=aicompat", "--score=n", *args], cwd=cwd, capture_output=True, text=True, env=env,
                          timeout=300)


def test_real_pylint_run_options_and_disable(tmp_path):
    (tmp_path / "m.py").write_text(BAD)
    r = _pylint(["--aicompat-gpu=H100", "m.py"], tmp_path)
    assert "m.py:5:6: E7311: AIC101 flash_attn_func: V head dim 128 != QK head dim 192" in r.stdout, r.stdout + r.stderr
    assert "(aicompat-v-headdim-mismatch)" in r.stdout and "fails on sm_90 (H100)" in r.stdout
    (tmp_path / "m.py").write_text(BAD.replace("out = flash_attn_func(q, q, v)",
                                               "out = flash_attn_func(q, q, v)  # pylint: disable=aicompat-v-headdim-mismatch"))
    r = _pylint(["m.py"], tmp_path)
    assert "E7311" not in r.stdout, r.stdout


def test_pyproject_config_is_read(tmp_path):
    (tmp_path / "pyproject.toml").write_text("[tool.aicompat]\ngpus = ['A10']\n")
    (tmp_path / "m.py").write_text("import torch\ny = torch._scaled_mm(a, b, scale_a=s, scale_b=s)\n")
    r = _pylint(["m.py"], tmp_path)
    assert "E7312" in r.stdout and "fails on sm_86 (A10)" in r.stdout, r.stdout + r.stderr


def test_minimum_pinned_pylint(tmp_path):
    """The plugin also works with the oldest pylint the project accepts (pylint>=3.0)."""
    import venv

    from conftest import SRC

    env_dir = tmp_path / "venv"
    venv.EnvBuilder(with_pip=True).create(env_dir)
    py = env_dir / "bin" / "python"
    r = subprocess.run([str(py), "-m", "pip", "install", "-q", "pylint==3.0.0", "libcst>=1.1", "packaging>=22"],
                       capture_output=True, text=True, timeout=600)
    if r.returncode != 0:
        pytest.skip(f"could not install pylint 3.0.0: {r.stderr[-300:]}")
    (tmp_path / "m.py").write_text(BAD)
    env = dict(os.environ, PYTHONPATH=str(SRC))
    r = subprocess.run([str(py), "-m", "pylint", "--load-plugins=aicompat.pylint_plugin", "--disable=all",
                        "--enable=aicompat", "--score=n", "--aicompat-gpu=A100", "m.py"], cwd=tmp_path,
                       capture_output=True, text=True, env=env, timeout=300)
    assert "E7311" in r.stdout and "fails on sm_80 (A100)" in r.stdout, r.stdout + r.stderr
