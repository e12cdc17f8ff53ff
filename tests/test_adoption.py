"""What a team adopting aicompat meets (issue 30): fixes only the pinned torch accepts, file
suppressions that say which codes, ruff's conventions (.gitignore, per-file-ignores,
--extend-select, --statistics, fixable markers, --gpu with commas, did-you-mean), and a note
when the API rules judge an unpinned torch. Each failing case has its fixed twin."""

import json
import subprocess
import textwrap

from conftest import run_cli

# A build helper as projects write it: the arch list set before load().
BUILD = textwrap.dedent("""\
    import os

    from torch.utils.cpp_extension import load


    def build_kernels(src_dir, verbose=False):
        # every GPU of the cluster
        os.environ["TORCH_CUDA_ARCH_LIST"] = "{archs}"
        return load(name="fused_ops", sources=[os.path.join(src_dir, "fused_ops.cu")], verbose=verbose)
    """)

FLEET = ["--gpu", "A100,H100,B200"]


def _project(tmp_path, archs: str, torch_pin: str):
    (tmp_path / "pyproject.toml").write_text(textwrap.dedent(f"""\
        [project]
        name = "fused"
        version = "0.1"
        dependencies = ["{torch_pin}"]
        """))
    (tmp_path / "build.py").write_text(BUILD.format(archs=archs))


def _json(r):
    return json.loads(r.stdout)["diagnostics"]


def test_fix_writes_the_arch_list_the_pinned_torch_accepts(tmp_path):
    """torch 2.4's cpp_extension.py has no 10.0 entry (supported_arches ends at 9.0a): the fix
    for a B200 member is 9.0 PTX, which the driver JIT-compiles, not '10.0', which 2.4 refuses."""
    _project(tmp_path, "8.0", "torch==2.4.0")
    args = ["lint", *FLEET, "--select", "AIC302", "--no-cache"]
    r = run_cli(*args, "--format", "json", "build.py", cwd=tmp_path)
    [d] = _json(r)
    assert d["message"].endswith('use TORCH_CUDA_ARCH_LIST="8.0;9.0+PTX"'), d["message"]
    assert run_cli(*args, "--fix", "build.py", cwd=tmp_path).returncode == 0
    assert 'os.environ["TORCH_CUDA_ARCH_LIST"] = "8.0;9.0+PTX"' in (tmp_path / "build.py").read_text()
    assert run_cli(*args, "build.py", cwd=tmp_path).returncode == 0


def test_the_newest_torch_gets_its_own_entries(tmp_path):
    """The twin: torch 2.8 accepts 10.0, so the fix builds a B200 cubin."""
    _project(tmp_path, "8.0", "torch==2.8.0")
    r = run_cli("lint", *FLEET, "--select", "AIC302", "--no-cache", "--format", "json", "build.py", cwd=tmp_path)
    [d] = _json(r)
    assert d["message"].endswith('use TORCH_CUDA_ARCH_LIST="8.0;9.0;10.0+PTX"'), d["message"]


def test_an_entry_a_pinned_release_refuses_is_named_with_the_release(tmp_path):
    """'10.0' is fine for torch 2.6 but refused by 2.5 (the range spans both): said, with a value both accept."""
    _project(tmp_path, "8.0;9.0;10.0+PTX", "torch>=2.5,<2.7")
    r = run_cli("lint", *FLEET, "--select", "AIC302", "--no-cache", "--format", "json", "build.py", cwd=tmp_path)
    msgs = [d["message"] for d in _json(r)]
    assert any("torch 2.5.0 to 2.5.1 rejects '10.0+PTX'" in m and m.endswith('use TORCH_CUDA_ARCH_LIST="8.0;9.0+PTX"')
               for m in msgs), msgs
    _project(tmp_path, "8.0;9.0+PTX", "torch>=2.5,<2.7")
    assert run_cli("lint", *FLEET, "--select", "AIC302", "--no-cache", "build.py", cwd=tmp_path).returncode == 0


PICKLE = textwrap.dedent("""\
    import torch


    class Trainer:
        def __init__(self, model):
            self.model = model
            self.stream = torch.cuda.Stream()

        def checkpoint(self, path):
            torch.save(self.__dict__, path)
    """)


def test_ignore_file_with_codes_hides_only_those(tmp_path):
    (tmp_path / "train.py").write_text("# aicompat: ignore-file[AIC203]\n" + PICKLE)
    r = run_cli("lint", "--no-config", "--no-cache", "--gpu", "A100", "--format", "json", "train.py", cwd=tmp_path)
    assert [d["code"] for d in _json(r)] == ["AIC104"]
    (tmp_path / "train.py").write_text("# aicompat: ignore-file[AIC104]\n" + PICKLE)
    r = run_cli("lint", "--no-config", "--no-cache", "--gpu", "A100", "train.py", cwd=tmp_path)
    assert r.returncode == 0 and "1 suppressed" in r.stdout


def test_an_unknown_code_in_ignore_file_is_an_error(tmp_path):
    (tmp_path / "train.py").write_text("# aicompat: ignore-file[AIC1O4]\n" + PICKLE)
    r = run_cli("lint", "--no-config", "--no-cache", "--gpu", "A100", "--format", "json", "train.py", cwd=tmp_path)
    got = sorted((d["code"], d["line"], d["column"]) for d in _json(r))
    assert got == [("AIC003", 1, 25), ("AIC104", 11, 9)]


def test_unused_suppressions_are_opt_in(tmp_path):
    code = PICKLE.replace("torch.save(self.__dict__, path)",
                          "torch.save(self.model.state_dict(), path)  # noqa: AIC104, E501")
    (tmp_path / "train.py").write_text(code)
    base = ["lint", "--no-config", "--no-cache", "--gpu", "A100", "--format", "json", "train.py"]
    assert _json(run_cli(*base, cwd=tmp_path)) == []
    found = _json(run_cli(*base, "--extend-select", "AIC004", cwd=tmp_path))
    assert [(d["code"], d["line"]) for d in found] == [("AIC004", 10)]
    assert "AIC104: no AIC104 finding on this line" in found[0]["message"]
    # The twin: the comment still suppresses a finding, so it is used (E501 is another tool's).
    (tmp_path / "train.py").write_text(PICKLE.replace("__dict__, path)", "__dict__, path)  # noqa: AIC104, E501"))
    assert _json(run_cli(*base, "--extend-select", "AIC004", cwd=tmp_path)) == []


def _git(tmp_path):
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)


def test_gitignored_folders_are_not_walked(tmp_path):
    _git(tmp_path)
    (tmp_path / ".gitignore").write_text("# generated\n/outputs/\n*.tmp.py\n!keep.tmp.py\n")
    for rel in ("src/train.py", "outputs/run1/train.py", "src/scratch.tmp.py", "src/keep.tmp.py", "nested/x/train.py"):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(PICKLE)
    (tmp_path / "nested" / ".gitignore").write_text("x/\n")
    args = ["lint", "--no-config", "--no-cache", "--gpu", "A100", "--format", "json", "."]
    paths = sorted({d["path"] for d in _json(run_cli(*args, cwd=tmp_path))})
    assert paths == ["src/keep.tmp.py", "src/train.py"]
    everything = sorted({d["path"] for d in _json(run_cli(*args, "--no-respect-gitignore", cwd=tmp_path))})
    assert everything == ["nested/x/train.py", "outputs/run1/train.py", "src/keep.tmp.py", "src/scratch.tmp.py",
                          "src/train.py"]
    # A file named on the command line is checked whatever .gitignore says.
    named = _json(run_cli(*args[:-1], "outputs/run1/train.py", cwd=tmp_path))
    assert [d["path"] for d in named] == ["outputs/run1/train.py"]


def test_outside_a_git_work_tree_gitignore_means_nothing(tmp_path):
    (tmp_path / ".gitignore").write_text("*.py\n")
    (tmp_path / "train.py").write_text(PICKLE)
    r = run_cli("lint", "--no-config", "--no-cache", "--gpu", "A100", ".", cwd=tmp_path)
    assert "AIC104" in r.stdout


def test_per_file_ignores(tmp_path):
    (tmp_path / "pyproject.toml").write_text(textwrap.dedent("""\
        [tool.aicompat]
        gpus = ["A100"]
        pins = ["torch==2.8.0"]
        per-file-ignores = { "tests/**" = ["AIC104"], "bench_*.py" = ["AIC1"] }
        """))
    for rel in ("tests/unit/test_ckpt.py", "bench_ckpt.py", "src/train.py"):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(PICKLE)
    r = run_cli("lint", "--no-cache", "--format", "json", ".", cwd=tmp_path)
    assert [d["path"] for d in _json(r)] == ["src/train.py"]
    assert json.loads(r.stdout)["summary"]["suppressed"] == 2
    (tmp_path / "pyproject.toml").write_text('[tool.aicompat]\nper-file-ignores = { "tests/**" = ["AIC1O4"] }\n')
    r = run_cli("lint", "--no-cache", ".", cwd=tmp_path)
    assert r.returncode == 2 and "per-file-ignores: 'tests/**': unknown rule code 'AIC1O4'" in r.stderr


def test_statistics_counts_only_and_marks_fixable(tmp_path):
    _project(tmp_path, "8.0", "torch==2.8.0")
    (tmp_path / "train.py").write_text(PICKLE)
    r = run_cli("lint", *FLEET, "--no-cache", "--statistics", ".", cwd=tmp_path)
    assert r.stdout.splitlines() == ["    1  AIC104  pickle-cuda-object", "    1  AIC302  build-arch-flags [*]",
                                     "[*] 1 fixable with --fix."]
    text = run_cli("lint", *FLEET, "--no-cache", ".", cwd=tmp_path).stdout
    assert "build.py:8:42: AIC302 [*] TORCH_CUDA_ARCH_LIST" in text and "train.py:10:9: AIC104 torch.save" in text
    assert "[*] 1 fixable with --fix" in text
    shown = run_cli("lint", *FLEET, "--no-cache", "--show-fixes", "build.py", cwd=tmp_path).stdout
    assert 'fix: build.py:8:42: AIC302: replace 8:42-8:47 with "8.0;9.0;10.0+PTX"' in shown


def test_fixable_findings_come_from_the_cache_but_fix_checks_again(tmp_path):
    _project(tmp_path, "8.0", "torch==2.8.0")
    cache = ["--cache-dir", str(tmp_path / "cache")]
    first = run_cli("lint", *FLEET, *cache, "-v", "build.py", cwd=tmp_path)
    again = run_cli("lint", *FLEET, *cache, "-v", "--show-fixes", "build.py", cwd=tmp_path)
    assert "cache: 1 unchanged files" in again.stderr, again.stderr  # before: a miss, "its findings have fixes"
    assert first.stdout.splitlines()[0] == again.stdout.splitlines()[0]
    assert "build.py:8:42: AIC302 [*] TORCH_CUDA_ARCH_LIST" in again.stdout
    assert 'fix: build.py:8:42: AIC302: replace 8:42-8:47 with "8.0;9.0;10.0+PTX"' in again.stdout
    fixed = run_cli("lint", *FLEET, *cache, "--fix", "build.py", cwd=tmp_path)  # from a fresh check
    assert "fixed 1 file" in fixed.stderr and '"8.0;9.0;10.0+PTX"' in (tmp_path / "build.py").read_text()


def test_gpu_takes_commas_and_a_mistyped_flag_gets_a_suggestion(tmp_path):
    (tmp_path / "train.py").write_text(PICKLE)
    one = run_cli("lint", "--no-config", "--no-cache", "-v", "--gpu", "A100,H100", "train.py", cwd=tmp_path)
    two = run_cli("lint", "--no-config", "--no-cache", "-v", "--gpu", "A100", "--gpu", "H100", "train.py", cwd=tmp_path)
    assert "gpus sm_80, sm_90 (--gpu)" in one.stderr and one.stdout == two.stdout
    r = run_cli("lint", "--gpus", "A100", "train.py", cwd=tmp_path)
    assert r.returncode == 2
    assert "usage: aicompat lint" in r.stderr and "(did you mean --gpu?)" in r.stderr


def test_unpinned_torch_is_said(tmp_path):
    (tmp_path / "train.py").write_text(PICKLE)
    r = run_cli("lint", "--no-config", "--no-cache", "--gpu", "A100", "train.py", cwd=tmp_path)
    assert "note: no torch pin: the API rules judged torch 2.15.0, the newest release aicompat knows" in r.stdout
    pinned = run_cli("lint", "--no-config", "--no-cache", "--gpu", "A100", "--pin", "torch==2.8.0", "train.py",
                     cwd=tmp_path)
    assert "no torch pin" not in pinned.stdout


def test_demo_runs_from_any_folder(tmp_path):
    r = run_cli("demo", "--gpu", "A100", "--format", "json", cwd=tmp_path)
    assert r.returncode == 1, r.stderr
    found = {(d["path"], d["code"]) for d in _json(r)}
    assert ("fixtures/demo/fp8_linear.py", "AIC102") in found
    assert not list(tmp_path.iterdir())  # no cache, nothing written where it ran


def test_exclusive_extras_are_separate_installs(tmp_path):
    """``cuda = ["torch>=2.7.0"]`` and ``npu = ["torch==2.7.1"]`` are never installed together: the
    cuda install is checked on 2.7.0 onward (its mode typo fails on every release from 2.7.0), not
    only on the npu extra's 2.7.1, which the intersection ``==2.7.1,>=2.7.0`` gave."""
    (tmp_path / "pyproject.toml").write_text(textwrap.dedent("""\
        [project]
        name = "serve"
        version = "0.1"
        dependencies = ["numpy"]

        [project.optional-dependencies]
        cuda = ["torch>=2.7.0"]
        npu = ["torch==2.7.1"]
        """))
    (tmp_path / "serve.py").write_text("import torch\n\n\ndef compiled(model, cfg):\n"
                                       "    return torch.compile(model, mode=cfg.get('mode', 'reduce-overhead'))\n")
    r = run_cli("lint", "--gpu", "A100", "--no-cache", "--format", "json", "-v", "serve.py", cwd=tmp_path)
    doc = json.loads(r.stdout)
    assert doc["target"]["pins"]["torch"]["releases"][:2] == ["2.7.0", "2.7.1"]
    assert len(doc["target"]["pins"]["torch"]["releases"]) > 2
    assert any("extras and markers are separate installs" in n and "extra npu" in n and "extra cuda" in n
               for n in doc["notes"]), doc["notes"]


def test_a_marker_pin_is_its_own_environment(tmp_path):
    (tmp_path / "requirements.txt").write_text("torch==2.4.0; platform_machine == 'aarch64'\ntorch==2.8.0; "
                                               "platform_machine == 'x86_64'\n")
    (tmp_path / "serve.py").write_text("import torch\n")
    r = run_cli("lint", "--gpu", "A100", "--no-cache", "--format", "json", "serve.py", cwd=tmp_path)
    assert json.loads(r.stdout)["target"]["pins"]["torch"]["releases"] == ["2.4.0", "2.8.0"]


LOAD = textwrap.dedent("""\
    import torch


    def resume(model, path):
        state = torch.load(path, map_location="cpu")
        model.load_state_dict(state["model"])
        return state["step"]
    """)


def test_a_default_change_is_informational_unless_selected(tmp_path):
    """AIC204 is reported, but a run with only it passes; --select AIC204 (or AIC2) makes it count."""
    (tmp_path / "resume.py").write_text(LOAD)
    args = ["lint", "--no-config", "--no-cache", "--gpu", "A100", "--pin", "torch>=2.4,<2.8", "resume.py"]
    r = run_cli(*args, cwd=tmp_path)
    assert r.returncode == 0 and "AIC204 torch.load: the default of weights_only" in r.stdout
    assert "1 of them is informational" in r.stdout
    assert run_cli(*args, "--select", "AIC204", cwd=tmp_path).returncode == 1
    assert run_cli(*args, "--extend-select", "AIC2", cwd=tmp_path).returncode == 1


def test_pins_on_one_side_of_a_change_are_not_reported(tmp_path):
    (tmp_path / "resume.py").write_text(LOAD)
    for pin in ("torch==2.4.0", "torch>=2.6,<2.9"):
        r = run_cli("lint", "--no-config", "--no-cache", "--gpu", "A100", "--pin", pin, "--format", "json",
                    "resume.py", cwd=tmp_path)
        assert [d["code"] for d in _json(r)] == [], pin


def test_gitignore_of_the_folder_linted_applies_below_it(tmp_path):
    """Linting ``.`` from a package folder of the work tree: that folder's .gitignore also
    holds for its subfolders (``./models/x.py`` is walked as ``models``, whose parent is ``.``)."""
    _git(tmp_path)
    pkg = tmp_path / "pkg"
    (pkg / "models" / "generated").mkdir(parents=True)
    (pkg / ".gitignore").write_text("generated/\n*_scratch.py\n")
    for rel in ("train.py", "models/generated/model.py", "models/net_scratch.py", "models/net.py"):
        (pkg / rel).write_text(PICKLE)
    r = run_cli("lint", "--no-config", "--no-cache", "--gpu", "A100", "--format", "json", ".", cwd=pkg)
    assert sorted({d["path"] for d in _json(r)}) == ["models/net.py", "train.py"]


TRAIN = textwrap.dedent("""\
    import argparse

    import torch

    CKPT = "checkpoints/last.pt"


    class Net(torch.nn.Module):
        def __init__(self, dim):
            super().__init__()
            self.proj = torch.nn.Linear(dim, dim)


    def train(steps, args, dim=64):
        model = Net(dim)
        opt = torch.optim.AdamW(model.parameters(), lr=3e-4)
        for _ in range(steps):
            opt.step()
        torch.save({"model": model.state_dict(), "optimizer": opt.state_dict(), "steps": steps, EXTRA}, CKPT)


    def resume(dim=64):
        model = Net(dim)
        state = torch.load(CKPT, map_location="cpu")
        model.load_state_dict(state["model"])
        return state["steps"]


    def main():
        parser = argparse.ArgumentParser()
        parser.add_argument("--steps", type=int, default=100)
        args = parser.parse_args()
        train(100, args)
        resume()


    if __name__ == "__main__":
        main()
    """)


def test_a_load_of_a_file_saved_with_state_dicts_only_is_not_a_default_change(tmp_path):
    """Issue 30: torch.load of a checkpoint the same code saves with a module's and an optimizer's
    state_dict() and plain values loads the same under either default of weights_only; saving the
    argparse namespace too makes the default matter (AIC105 says why it fails from 2.6)."""
    args = ["lint", "--no-config", "--no-cache", "--gpu", "A100", "--pin", "torch>=2.4,<2.8", "--format", "json",
            "--select", "AIC204,AIC105", "train.py"]
    (tmp_path / "train.py").write_text(TRAIN.replace(", EXTRA", ', "lr": 3e-4, "betas": (0.9, 0.95)'))
    assert [d["code"] for d in _json(run_cli(*args, cwd=tmp_path))] == []
    (tmp_path / "train.py").write_text(TRAIN.replace(", EXTRA", ', "args": args'))
    assert sorted(d["code"] for d in _json(run_cli(*args, cwd=tmp_path))) == ["AIC105", "AIC204"]
