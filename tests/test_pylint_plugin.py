"""The pylint plugin: pylint's own test utilities, and a real pylint run."""
import os
import subprocess
import sys

import pytest

pylint = pytest.importorskip("pylint", reason="pylint is not installed (pip install -e '.[test]' installs it)")

import astroid  # noqa: E402
from pylint.testutils import CheckerTestCase, MessageTest  # noqa: E402

from aicompat.pylint_plugin import MESSAGE_NUMBERS, AicompatChecker, msgid  # noqa: E402
from aicompat.rules.registry import CODES  # noqa: E402

BAD = ("import torch\nfrom flash_attn import flash_attn_func\nq = torch.randn(1, 8, 4, 192)\n"
       "v = torch.randn(1, 8, 4, 128)\nout = flash_attn_func(q, q, v)\n")


class TestAicompatChecker(CheckerTestCase):
    CHECKER_CLASS = AicompatChecker
    CONFIG = {"aicompat_gpu": ["A100"], "aicompat_python": "3.11", "aicompat_pin": []}

    def test_finding_becomes_a_message(self, tmp_path):
        f = tmp_path / "m.py"
        f.write_text(BAD)
        module = astroid.MANAGER.ast_from_file(str(f))
        msg = ("AIC101 flash_attn_func: V head dim 128 != QK head dim 192 is rejected by FlashAttention 2 on every GPU "
               '("v must have shape (batch_size, seqlen_k, num_heads_k, head_size)"); fails on sm_80 (A100); pad V to 192 and slice the output to 128 there')
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
    assert msgid("AIC203") == "W7323" and msgid("AIC204") == "W7324"  # warning-level rules


def test_message_ids_are_assigned_and_unique():
    """Every code has its own two digits: none derived (number % 10 gave AIC111 the id of AIC101)."""
    assert set(CODES) | {"AIC000"} == set(MESSAGE_NUMBERS)
    assert len(set(MESSAGE_NUMBERS.values())) == len(MESSAGE_NUMBERS)
    assert "99" not in MESSAGE_NUMBERS.values()  # F7399 is the configuration error
    with pytest.raises(KeyError):
        msgid("AIC111")  # unassigned: a new rule must be given a free number, never AIC101's


class TestSizeLimit(CheckerTestCase):
    CHECKER_CLASS = AicompatChecker
    CONFIG = {"aicompat_gpu": ["A100"], "aicompat_python": "3.11", "aicompat_pin": []}

    def test_module_over_the_size_limit_is_aic002(self, tmp_path):
        from aicompat.run.parallel import MAX_FILE_BYTES

        big = BAD.encode() + b"# padding\n" * (MAX_FILE_BYTES // 10)
        module = astroid.parse(BAD, path=str(tmp_path / "big.py"))
        module.file_bytes = big  # what pylint read; parsing 2 MB with astroid here would be slow
        msg = (f"AIC002 not checked: {len(big) / 1e6:.3g} MB is over the {MAX_FILE_BYTES / 1e6:.3g} MB limit "
               "per file (--max-file-size); the run is incomplete")
        with self.assertAddsMessages(
            MessageTest("aicompat-limit-exceeded", line=1, args=(msg,), col_offset=0, end_line=1, end_col_offset=0),
            ignore_position=False,
        ):
            self.checker.process_module(module)


def _pylint(args, cwd, stdin=None):
    env = dict(os.environ)
    from conftest import SRC

    env["PYTHONPATH"] = str(SRC) + os.pathsep + env.get("PYTHONPATH", "")
    return subprocess.run([sys.executable, "-m", "pylint", "--load-plugins=aicompat.pylint_plugin", "--disable=all",
                           "--enable=aicompat", "--score=n", *args], cwd=cwd, capture_output=True, text=True, env=env,
                          timeout=300, input=stdin)


CLEAN = "import torch\nx = torch.randn(3)\n"


def test_from_stdin_lints_the_unsaved_buffer_not_the_saved_file(tmp_path):
    """Editors (VS Code's pylint extension) send the buffer with --from-stdin: its problem is reported
    where the buffer has it, and the saved version's problem (line 5 on disk) is not."""
    (tmp_path / "m.py").write_text(CLEAN)
    r = _pylint(["--aicompat-gpu=A100", "--from-stdin", "m.py"], tmp_path, stdin=BAD)
    assert "m.py:5:6: E7311: AIC101 flash_attn_func: V head dim 128 != QK head dim 192" in r.stdout, r.stdout + r.stderr
    (tmp_path / "m.py").write_text(BAD)
    r = _pylint(["--aicompat-gpu=A100", "--from-stdin", "m.py"], tmp_path, stdin=CLEAN)
    assert "aicompat" not in r.stdout and "E73" not in r.stdout, r.stdout + r.stderr


def test_from_stdin_new_file_that_is_not_on_disk(tmp_path):
    (tmp_path / "pyproject.toml").write_text("[tool.aicompat]\ngpus = ['H100']\n")
    r = _pylint(["--from-stdin", "sub/new_module.py"], tmp_path, stdin=BAD)
    assert "No such file" not in r.stdout and "internal-error" not in r.stdout, r.stdout
    assert "new_module.py:5:6: E7311" in r.stdout and "fails on sm_90 (H100)" in r.stdout, r.stdout + r.stderr


def test_options_pin_range_and_repeated_gpus(tmp_path):
    (tmp_path / "m.py").write_text(BAD + "from torch.nn.attention.flex_attention import flex_attention\n")
    r = _pylint(["--aicompat-gpu=A100", "--aicompat-gpu", "H100", "--aicompat-pin", "torch>=2.1,<2.4",
                 "--aicompat-pin=flash-attn==2.6.3", "m.py"], tmp_path)
    assert "fails on sm_80 (A100), sm_90 (H100)" in r.stdout, r.stdout + r.stderr
    assert ("m.py:6:46: E7321: AIC201 torch.nn.attention.flex_attention.flex_attention is not in torch 2.1.0–2.3.1 "
            "(added in 2.5.0); pins allow torch 2.1.0–2.3.1") in r.stdout, r.stdout + r.stderr


def test_configuration_mistake_is_a_config_error_not_an_internal_error(tmp_path):
    (tmp_path / "m.py").write_text(BAD)
    r = _pylint(["--aicompat-gpu=sm_99", "m.py"], tmp_path)
    assert "m.py:1:0: F7399: aicompat: --gpu: unknown GPU or arch 'sm_99'" in r.stdout, r.stdout + r.stderr
    assert "(aicompat-config-error)" in r.stdout and "internal-error" not in r.stdout
    (tmp_path / "pyproject.toml").write_text("[tool.aicompat]\nselect = ['AIC9']\n")
    r = _pylint(["m.py"], tmp_path)
    assert "F7399: aicompat: " in r.stdout and "select: unknown rule code 'AIC9'" in r.stdout, r.stdout + r.stderr


def test_warning_level_rule_is_a_pylint_warning(tmp_path):
    (tmp_path / "m.py").write_text("import torch\n\nwith torch.cuda.amp.autocast():\n    pass\n")
    r = _pylint(["--aicompat-pin=torch==2.6.0", "m.py"], tmp_path)
    assert "m.py:3:5: W7323: AIC203 torch.cuda.amp.autocast is deprecated" in r.stdout, r.stdout + r.stderr
    assert "(aicompat-deprecated-api)" in r.stdout


def test_plugin_applies_the_cli_time_limit(tmp_path):
    """The plugin runs the CLI's lint path, limits included: [tool.aicompat] timeout applies."""
    (tmp_path / "pyproject.toml").write_text("[tool.aicompat]\ntimeout = 0.001\n")
    (tmp_path / "m.py").write_text(BAD)
    r = _pylint(["m.py"], tmp_path)
    assert ("m.py:1:0: E7302: AIC002 not checked: analysis used more than the 0.001 s CPU-time limit per file (--timeout); "
            "the run is incomplete (aicompat-limit-exceeded)") in r.stdout, r.stdout + r.stderr


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
