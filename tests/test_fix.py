"""--fix / --diff: formatting and comments kept, idempotent, the result parses."""
import libcst as cst
from conftest import run_cli

SRC = ("import os  # build settings\n"
       "\n"
       "os.environ['TORCH_CUDA_ARCH_LIST'] = '10.0'   # written for B200\n"
       "os.environ.setdefault(\"TORCH_CUDA_ARCH_LIST\", \"8.0\")\n")


def test_fix_rewrites_arch_lists_to_cover_the_fleet(tmp_path):
    p = tmp_path / "setup_env.py"
    p.write_text(SRC)
    args = ["lint", "--no-config", "--gpu", "A100", "--gpu", "H100", "--select", "AIC302"]
    diff = run_cli(*args, "--diff", "setup_env.py", cwd=tmp_path)
    assert diff.returncode == 1 and "-os.environ['TORCH_CUDA_ARCH_LIST'] = '10.0'" in diff.stdout
    assert p.read_text() == SRC  # --diff changes nothing
    r = run_cli(*args, "--fix", "setup_env.py", cwd=tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    new = p.read_text()
    assert new == ("import os  # build settings\n"
                   "\n"
                   "os.environ['TORCH_CUDA_ARCH_LIST'] = '8.0;9.0+PTX'   # written for B200\n"
                   "os.environ.setdefault(\"TORCH_CUDA_ARCH_LIST\", \"8.0;9.0+PTX\")\n")
    cst.parse_module(new)
    # Idempotent: a second --fix changes nothing and finds nothing.
    r2 = run_cli(*args, "--fix", "setup_env.py", cwd=tmp_path)
    assert r2.returncode == 0 and p.read_text() == new and "fixed" not in r2.stderr
