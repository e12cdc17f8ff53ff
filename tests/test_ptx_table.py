"""The generated PTX instruction table (version_matrix/ptx_instructions.toml) and the
token matcher that reads it (cuda/cpp/ptx.py, cuda/cpp/scan.py): a sample of forms re-verified
with the real ptxas, exact lines of instructions in multi-line asm blocks, and the
identifier / namespace / block-scale confusions of the old substring patterns."""
import importlib.util
import json
import random
import shutil
import sys
import textwrap

import pytest
from conftest import ROOT, run_cli

from aicompat.cuda.cpp.ptx import instructions
from aicompat.cuda.cpp.scan import CudaSource, load_features


def _gen():
    spec = importlib.util.spec_from_file_location("aicompat_gen_ptx_table", ROOT / "tools" / "gen_ptx_table.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    spec.loader.exec_module(mod)
    return mod


@pytest.fixture(scope="module")
def knowledge(matrix):
    return load_features(matrix)


def test_sampled_forms_agree_with_ptxas(knowledge):
    """~10 forms (CCCL's and the seeds), compiled now for all 23 targets: the table's
    answer for each (the intersection over its matching patterns) is what ptxas does."""
    if shutil.which("ptxas") is None:
        pytest.skip("ptxas not found: the table is re-verified only where the CUDA toolkit is installed")
    gen = _gen()
    if not gen.CCCL_DIR.is_dir():
        pytest.skip(f"CCCL instruction headers not found at {gen.CCCL_DIR}")
    forms, _ = gen.collect(gen.CCCL_DIR)
    inexact = {line.strip("# ").strip() for line in (ROOT / "version_matrix" / "ptx_instructions.toml")
               .read_text().splitlines() if line.startswith("#   ")}
    rng = random.Random(14)
    sample = rng.sample([f for f in forms if f.source.startswith("CCCL")], 6) + \
        rng.sample([f for f in forms if not f.source.startswith("CCCL")], 4)
    targets = gen.all_targets()
    gen.verify(sample, targets)
    problems = []
    for f in sample:
        ins = instructions(f.main)[0]
        req = knowledge.requirement(ins, gen._klass)
        predicted = set(targets) if req is None else set(req.targets)
        if " ".join([ins.opcode, *f.key_with(knowledge.operand_opcodes)[1]]) in inexact:
            ok = predicted >= f.accepted  # recorded as inexact: the union is kept
        else:
            ok = predicted == f.accepted
        if not ok:
            problems.append(f"{f.main.strip()}: table {sorted(predicted)}, ptxas {sorted(f.accepted)}")
    assert not problems, "\n".join(problems)


def test_tokens_of_an_asm_template():
    got = [(i.opcode, i.modifiers) for i in instructions(
        "{\n .reg .pred p;\n setp.ne.b32 p, %4, 0;\n"
        "@p tcgen05.mma.cta_group::2.kind::mxf8f6f4.block_scale [%0], %1, %2, %3, [%5], [%6], p;\n}\n"
        "mov.u32 %0, %%cluster_ctarank;")]
    assert got == [("setp", ("ne", "b32")),
                   ("tcgen05", ("mma", "cta_group::2", "kind::mxf8f6f4", "block_scale")),
                   ("mov", ("u32", "%cluster_ctarank"))]


_MULTILINE = '''\
// SM100 block-scaled GEMM step (CUTLASS style: one asm statement over many lines)
#include <cstdint>

__device__ __forceinline__ void umma_mxf8(uint32_t tmem_c, uint64_t desc_a, uint64_t desc_b,
                                          uint32_t idesc, uint32_t sfa, uint32_t sfb, uint32_t acc) {
  asm volatile(
      "{\\n\\t"
      ".reg .pred p;\\n\\t"
      "setp.ne.b32 p, %4, 0;\\n\\t"
      "tcgen05.mma.cta_group::1.kind::mxf8f6f4.block_scale "
      "[%0], %1, %2, %3, [%5], [%6], p;\\n\\t"
      "}\\n"
      :
      : "r"(tmem_c), "l"(desc_a), "l"(desc_b), "r"(idesc), "r"(acc), "r"(sfa), "r"(sfb));
}

__global__ void gemm(uint32_t* out) {
  umma_mxf8(0, 0, 0, 0, 0, 0, 1);
  asm volatile("wgmma.fence.sync.aligned;\\n"
               "elect.sync _|%0, 0xffffffff;\\n" : "=r"(out[0]));
}
'''


def _lint_cu(tmp_path, text, *gpus):
    (tmp_path / "k.cu").write_text(text)
    # Its build: CMake's default archs, taken to be the fleet's (without one, only what fails
    # on every target of every fleet GPU would be judged).
    (tmp_path / "CMakeLists.txt").write_text("cmake_minimum_required(VERSION 3.24)\n"
                                             "project(k LANGUAGES CXX CUDA)\nadd_library(k STATIC k.cu)\n")
    args = ["lint", "--no-config", "--format", "json", "--select", "AIC301"]
    for g in gpus:
        args += ["--gpu", g]
    r = run_cli(*args, "k.cu", cwd=tmp_path)
    return [(d["line"], d["column"], d["targets"], d["message"]) for d in json.loads(r.stdout)["diagnostics"]]


def test_multiline_asm_points_at_the_instruction_line(tmp_path):
    got = _lint_cu(tmp_path, _MULTILINE, "H100", "B200")
    # tcgen05 on line 10 (not the asm( line 6, not the joined line); wgmma and elect.sync
    # (line 19) its own finding with its own targets; elect.sync (line 20) is fine on both.
    assert [(ln, col, t) for ln, col, t, _ in got] == [(10, 8, ["H100"]), (19, 17, ["B200"])]
    assert "'tcgen05.mma.cta_group::1.kind::mxf8f6f4.block_scale'" in got[0][3]
    assert "'wgmma.fence.sync.aligned'" in got[1][3] and "Accepted by sm_90a:" in got[1][3]


def test_tcgen05_block_scale_is_not_the_sm120_mma_sync(tmp_path, knowledge):
    """kind::mxf8f6f4.block_scale on tcgen05.mma is a B200 instruction; mma.sync's is sm_120a's."""
    src = CudaSource(_MULTILINE.split("__global__")[0], knowledge)
    assert {t for t in ("sm_100a", "sm_103a", "sm_110a", "sm_100f") if src.verdict(t).status == "ok"} == \
        {"sm_100a", "sm_103a", "sm_110a", "sm_100f"}
    assert src.verdict("sm_120a").status == "fail"
    assert _lint_cu(tmp_path, _MULTILINE.split("__global__")[0], "B200") == []
    mma_sync = ('__global__ void k(float* d) { asm volatile("mma.sync.aligned.m16n8k32.row.col.kind::mxf8f6f4.'
                'block_scale.scale_vec::1X.f32.e4m3.e4m3.f32.ue8m0 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, '
                '{%0,%1,%2,%3}, %10, {0, 0}, %10, {0, 0};" : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]) '
                ': "r"(0), "r"(0), "r"(0), "r"(0), "r"(0), "r"(0), "r"(0)); }\n')
    m = CudaSource(mma_sync, knowledge)
    assert [t for t in ("sm_100a", "sm_120a", "sm_121a") if m.verdict(t).status == "ok"] == ["sm_120a", "sm_121a"]


_WRAPPERS = '''\
#include <cuda/ptx>
#include <cstdint>
namespace deep_gemm::ptx {
// the project's own wrapper, guarded inside; not CCCL's cuda::ptx
__device__ __forceinline__ void fence_proxy_async() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("fence.proxy.async;");
#else
  __trap();  // never reached: callers check the arch first
#endif
}
}  // namespace deep_gemm::ptx

__device__ __forceinline__ void mbarrier_arrive_expect_tx(uint64_t* bar, uint32_t bytes) {}

__global__ void k(uint64_t* bar) {
  mbarrier_arrive_expect_tx(bar, 128u);
  deep_gemm::ptx::fence_proxy_async();
}
'''


def test_identifiers_and_a_projects_own_ptx_namespace_do_not_match(tmp_path, knowledge):
    src = CudaSource(_WRAPPERS, knowledge)
    assert [(o.line, o.token) for o in src.occurrences] == [(7, "fence.proxy.async")]
    assert _lint_cu(tmp_path, _WRAPPERS, "A100", "H100") == []


def test_cuda_ptx_calls_match_by_their_cccl_name(tmp_path, knowledge):
    text = textwrap.dedent('''\
        #include <cuda/ptx>
        #include <cstdint>
        __global__ void k(uint64_t* bar) {
          namespace ptx = cuda::ptx;
          ptx::mbarrier_arrive_expect_tx(ptx::sem_release, ptx::scope_cta, ptx::space_shared, bar, 0u);
          cuda::ptx::fence_proxy_async(ptx::space_shared);
        }
    ''')
    src = CudaSource(text, knowledge)
    assert [(o.line, o.feature) for o in src.occurrences] == [
        (5, "cuda::ptx::mbarrier_arrive_expect_tx"), (6, "cuda::ptx::fence_proxy_async")]
    got = _lint_cu(tmp_path, text, "A100", "H100")
    assert [(ln, col, t) for ln, col, t, _ in got] == [(5, 3, ["A100"]), (6, 3, ["A100"])]
    assert "__cuda_ptx_mbarrier_arrive_expect_tx_is_not_supported_before_SM_90__" in got[0][3]


_CUTE_GEMM = '''\
#include <cute/tensor.hpp>
#include <cute/atom/mma_atom.hpp>
using namespace cute;

// Hopper mainloop: one warpgroup MMA atom, bf16 in, fp32 accumulate
using TiledMma = decltype(make_tiled_mma(SM90_64x128x16_F32BF16BF16_SS<GMMA::Major::K, GMMA::Major::K>{}));

template <class Params>
__global__ void gemm_sm90(Params params) {
  TiledMma mma;
  (void)mma;
}
'''


def test_cute_atoms_trap_where_cute_does_not_compile_them(tmp_path, knowledge):
    """CuTe compiles SM90 GMMA atoms everywhere (nvcc accepts), with a trap instead of the
    wgmma where CUTE_ARCH_MMA_SM90A_ENABLED is off: a warning, on every GPU without sm_90a."""
    src = CudaSource(_CUTE_GEMM, knowledge)
    assert [(o.line, o.token) for o in src.occurrences] == [(6, "SM90_64x128x16_F32BF16BF16_SS")]
    assert src.verdict("sm_90a").status == "ok" and src.verdict("sm_90").status == "empty"
    got = _lint_cu(tmp_path, _CUTE_GEMM, "A100", "H100", "B200")
    assert [(ln, col, t) for ln, col, t, _ in got] == [(6, 42, ["A100", "B200"])]
    assert "compiles to CUTE_INVALID_CONTROL_PATH, a trap at run time" in got[0][3]
    assert "CUTE_ARCH_MMA_SM90A_ENABLED is defined (sm_90a)" in got[0][3]
