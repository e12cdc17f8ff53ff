"""The CUDA kernel corpus (fixtures/kernels) against the real nvcc.

Every kernel is compiled for every target of fixtures/kernels/manifest.toml and
the verdict (ok / fail / empty) and first error line must equal the manifest.
The compile logic is fixtures/kernels/regenerate.py, imported from its path.
Runs only where nvcc is installed; about 700 small compiles, parallel.
"""
from __future__ import annotations

import importlib.util
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ELSE = re.compile(r"^\s*#\s*else\b", re.M)

ROOT = Path(__file__).resolve().parent.parent
KDIR = ROOT / "fixtures" / "kernels"

if shutil.which("nvcc") is None:
    pytest.skip("nvcc not found: the kernel corpus is checked only where the CUDA toolkit is installed",
                allow_module_level=True)


def _load_regen():
    spec = importlib.util.spec_from_file_location("aicompat_kernel_regenerate", KDIR / "regenerate.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod  # dataclasses need the module registered
    spec.loader.exec_module(mod)
    return mod


regen = _load_regen()


@pytest.fixture(scope="module")
def manifest():
    return regen.load_manifest(KDIR / "manifest.toml")


@pytest.fixture(scope="module")
def kernels():
    return regen.load_kernels(KDIR)


def test_manifest_covers_every_file_and_target_once(manifest, kernels):
    assert manifest["targets"] == regen.TARGETS
    entries = manifest["kernel"]
    files = sorted(p.name for p in regen.kernel_files(KDIR))
    assert sorted(e["file"] for e in entries.values()) == files, "manifest and *.cu files differ"
    problems = []
    for name, e in entries.items():
        k = next(k for k in kernels if k.path.name == e["file"])
        if k.name != name:
            problems.append(f"{name}: file {e['file']} declares kernel {k.name}")
        if (e["features"], e["guard"]) != (k.features, k.guard):
            problems.append(f"{name}: features/guard differ from the file header")
        seen = [t for v in regen.VERDICTS for t in e[v]]
        if sorted(seen) != sorted(regen.TARGETS) or len(seen) != len(set(seen)):
            problems.append(f"{name}: targets not partitioned into ok/fail/empty: {seen}")
        errs = e.get("errors", {})
        if sorted(errs) != sorted(e["fail"]):
            problems.append(f"{name}: errors.* keys {sorted(errs)} != fail {sorted(e['fail'])}")
        if e["empty"] and ELSE.search(k.path.read_text()):
            problems.append(f"{name}: 'empty' targets, but the source has an #else branch")
    assert not problems, "\n".join(problems)


def test_kernel_headers(kernels):
    assert 35 <= len(kernels) <= 60
    for k in kernels:
        text = k.path.read_text()
        assert k.features, f"{k.name}: no feature ids"
        if k.guard == "drops":
            assert "#if" in text and not ELSE.search(text), f"{k.name}: a 'drops' kernel guards its body with no #else"
        if k.guard == "none":
            assert "#if" not in text, f"{k.name}: guard none but has #if"


def test_every_verdict_matches_real_nvcc(manifest, kernels):
    """Compile the whole matrix (device passes; the host_check cell with a full `nvcc -c`)."""
    from concurrent.futures import ThreadPoolExecutor

    entries = manifest["kernel"]
    by_name = {k.name: k for k in kernels}
    cells = []
    for name, e in sorted(entries.items()):
        for t in manifest["targets"]:
            mode = "c" if e.get("host_check") == t else "cubin"
            cells.append((by_name[name], t, mode))
    cells.sort(key=lambda c: (c[2] != "c", "cuda/ptx" not in c[0].path.read_text(), c[0].name, c[1]))
    with ThreadPoolExecutor(max_workers=regen.default_jobs()) as ex:
        results = list(ex.map(lambda c: (c, regen.compile_one(c[0].path, c[1], c[2])), cells))
    mismatches = []
    for (k, t, mode), r in results:
        e = entries[k.name]
        want = next(v for v in regen.VERDICTS if t in e[v])
        if r.verdict != want:
            detail = f": {r.error}" if r.error else ""
            mismatches.append(f"{k.name} {t} [{mode}]: manifest {want}, nvcc {r.verdict}{detail}")
        elif want == "fail" and r.error != e["errors"][t]:
            mismatches.append(f"{k.name} {t}: error text changed:\n   manifest: {e['errors'][t]}\n   nvcc:     {r.error}")
    assert not mismatches, f"{len(mismatches)} of {len(results)} cells differ from manifest.toml " \
                           f"(rerun fixtures/kernels/regenerate.py if the toolkit changed):\n" + "\n".join(mismatches)


def test_manifest_records_this_nvcc(manifest):
    head = (KDIR / "manifest.toml").read_text().splitlines()[:3]
    assert any(regen.nvcc_version() in ln for ln in head), (head, regen.nvcc_version())


def _dryrun_images(src: Path, arch: str) -> list[str]:
    p = subprocess.run(["nvcc", "--dryrun", "-c", f"-arch={arch}", "-o", "/dev/null", str(src)],
                       capture_output=True, text=True, check=True)
    fatbin = next(ln for ln in p.stderr.splitlines() if "fatbinary" in ln)
    return sorted(re.findall(r"--image3=kind=(\w+),sm=(\w+)", fatbin))


def test_arch_sm90a_shorthand(tmp_path):
    """`-arch=sm_90a` is not just sm_90a SASS + compute_90a PTX: nvcc 13.0 also builds and
    ptxas-checks a plain compute_90 PTX, so an UNGUARDED wgmma kernel fails under -arch=sm_90a
    (while `-gencode arch=compute_90a,code=sm_90a` compiles it) and only a guarded one passes."""
    unguarded = KDIR / "wgmma_mma_bf16.cu"
    guarded = KDIR / "guard_wgmma_feat_sm90_all.cu"
    assert _dryrun_images(unguarded, "sm_90a") == [("elf", "90a"), ("ptx", "90"), ("ptx", "90a")]

    def nvcc_c(src, *flags):
        return subprocess.run(["nvcc", "-c", *flags, "-o", str(tmp_path / (src.stem + ".o")), str(src)],
                              capture_output=True, text=True, timeout=regen.COMPILE_TIMEOUT, cwd=tmp_path)

    bad = nvcc_c(unguarded, "-arch=sm_90a")
    assert bad.returncode != 0
    assert re.search(r"compute_90\.ptx.*Instruction 'wgmma\.fence' not supported on \.target 'sm_90'", bad.stderr), \
        bad.stderr
    good = nvcc_c(guarded, "-arch=sm_90a")
    assert good.returncode == 0, good.stderr
    gencode = nvcc_c(unguarded, "-gencode", "arch=compute_90a,code=sm_90a")
    assert gencode.returncode == 0, gencode.stderr
