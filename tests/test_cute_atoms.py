"""CuTe copy and MMA atoms that name an instruction (version_matrix/cuda_atoms.toml): CuTe
compiles each everywhere and puts CUTE_INVALID_CONTROL_PATH (printf + brkpt) where its arch
macro is off, so a kernel that uses one traps at run time there (a warning, never a compile
failure). Checked with nvcc 13.0 against NVIDIA/cutlass 7107b05's include/ (the entries'
sources). Each failing case has its fixed twin."""
import textwrap
from pathlib import Path

from aicompat import Target, lint_paths
from aicompat.cuda.cpp.scan import CudaSource, load_features

TRAP = "compiles to CUTE_INVALID_CONTROL_PATH, a trap at run time"


# A real build for the file: CMake with no CUDA_ARCHITECTURES builds for its default archs,
# taken to be the fleet's (a file with no visible build is judged only for what fails everywhere).
def _cmake(root: Path, *sources: str) -> None:
    if not (root / "setup.py").exists():
        (root / "CMakeLists.txt").write_text("cmake_minimum_required(VERSION 3.24)\nproject(kernels LANGUAGES CXX CUDA)\n"
                                             f"add_library(kernels STATIC {' '.join(sources)})\n")


def lint(tmp_path: Path, text: str, *gpus, name="kernel.cu"):
    p = tmp_path / "csrc" / name
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(textwrap.dedent(text))
    _cmake(tmp_path, f"csrc/{name}")
    diags = lint_paths([p], target=Target(gpus=list(gpus)), use_config=False, select=["AIC301"])
    return [(d.line, d.column, d.targets, d.severity, d.message) for d in diags]


# Written like a Hopper CuTe mainloop's host side (CUTLASS examples/cute/tutorial/hopper/tma_load).
TMA_HOST = """\
    #include <cute/tensor.hpp>
    #include <cute/atom/copy_atom.hpp>
    using namespace cute;

    template <class Params>
    __global__ void gemm_tma_kernel(Params params) {
      (void)params;
    }

    void launch(half_t const* A, int M, int K, cudaStream_t stream) {
      auto gA = make_tensor(make_gmem_ptr(A), make_shape(M, K), make_stride(K, Int<1>{}));
      auto sA_layout = make_layout(make_shape(Int<128>{}, Int<64>{}));
      auto tma_a = make_tma_copy(SM90_TMA_LOAD{}, gA, sA_layout);
      gemm_tma_kernel<<<1, 128, 0, stream>>>(tma_a);
    }
"""


def test_tma_atom_traps_below_hopper(tmp_path):
    got = lint(tmp_path, TMA_HOST, "A100", "H100", "B200")
    # B200: CUTLASS releases differ on sm_100 (3.0: >= 900; 3.6+: == 900 and the 'a'/'f' targets): silent.
    assert [(ln, col, t, sev) for ln, col, t, sev, _ in got] == [(13, 30, ["A100"], "warning")]
    assert got[0][4] == (
        "'SM90_TMA_LOAD' (CuTe cp.async.bulk.tensor atom) compiles to CUTE_INVALID_CONTROL_PATH, a trap at run "
        "time, on every target that runs there (CMakeLists.txt line 3 builds it for CMake's default architectures: "
        "taken to be the fleet's): CuTe emits its instruction only where CUTE_ARCH_TMA_SM90_ENABLED is defined (sm_90, sm_90a); "
        "affects sm_80 (A100)")


def test_tma_atom_in_a_build_for_hopper_only_is_fine(tmp_path):
    """The twin: FlashMLA-style setup.py that builds this file for sm_90a only."""
    (tmp_path / "setup.py").write_text(textwrap.dedent("""\
        from setuptools import setup
        from torch.utils.cpp_extension import BuildExtension, CUDAExtension

        setup(
            name="tma_gemm",
            ext_modules=[CUDAExtension(
                name="tma_gemm_cuda",
                sources=["csrc/kernel.cu"],
                extra_compile_args={"cxx": ["-O3"],
                                    "nvcc": ["-O3", "-gencode", "arch=compute_90a,code=sm_90a"]},
            )],
            cmdclass={"build_ext": BuildExtension},
        )
    """))
    assert lint(tmp_path, TMA_HOST, "A100", "H100") == []


# Written like flash-attention's kernel_traits.h: the epilogue's smem copy atom picked per arch.
STSM_TRAITS = """\
    #include <cute/tensor.hpp>
    using namespace cute;

    template <typename Element>
    struct EpilogueTraits {
      using SmemLayoutO = decltype(make_layout(make_shape(Int<64>{}, Int<128>{})));
      using SmemCopyAtomO = Copy_Atom<SM90_U32x4_STSM_N, Element>;
    };

    template <typename Traits, typename Element>
    __global__ void store_o(Element* out) {
      typename Traits::SmemCopyAtomO atom;
      (void)atom;
      out[threadIdx.x] = Element(0);
    }

    template __global__ void store_o<EpilogueTraits<half_t>, half_t>(half_t*);
"""


def test_stmatrix_atom_traps_on_ampere(tmp_path):
    got = lint(tmp_path, STSM_TRAITS, "A100", "H100")
    assert [(ln, col, t) for ln, col, t, _s, _m in got] == [(7, 35, ["A100"])]
    assert "'SM90_U32x4_STSM_N' (CuTe stmatrix atom)" in got[0][4]
    assert "CUTE_ARCH_STSM_SM90_ENABLED is defined (sm_90, sm_90a)" in got[0][4]


def test_stmatrix_atom_chosen_per_arch_is_fine(tmp_path):
    fixed = STSM_TRAITS.replace(
        "      using SmemCopyAtomO = Copy_Atom<SM90_U32x4_STSM_N, Element>;\n",
        "    #if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900\n"
        "      using SmemCopyAtomO = Copy_Atom<SM90_U32x4_STSM_N, Element>;\n"
        "    #else\n"
        "      using SmemCopyAtomO = Copy_Atom<DefaultCopy, Element>;\n"
        "    #endif\n")
    assert "#else" in fixed
    assert lint(tmp_path, fixed, "A100", "H100") == []


# Written like an Ada FP8 GEMM (vLLM csrc/quantization/fp8 style): the MMA atom of the tiled MMA.
FP8_GEMM = """\
    #include <cute/tensor.hpp>
    #include <cute/atom/mma_atom.hpp>
    using namespace cute;

    using TiledMmaFp8 = TiledMMA<MMA_Atom<SM89_16x8x32_F32E4M3E4M3F32_TN>, Layout<Shape<_2, _2, _1>>>;

    __global__ void fp8_gemm_sm89(float* C, float_e4m3_t const* A, float_e4m3_t const* B) {
      TiledMmaFp8 mma;
      (void)mma;
      C[threadIdx.x] = 0.f;
    }
"""


def test_fp8_mma_atom_traps_on_ampere(tmp_path):
    got = lint(tmp_path, FP8_GEMM, "A100", "L40S", "H100")
    assert [(ln, col, t) for ln, col, t, _s, _m in got] == [(5, 39, ["A100"])]
    assert "'SM89_16x8x32_F32E4M3E4M3F32_TN' (CuTe mma.sync (e4m3/e5m2) atom)" in got[0][4]


def test_fp8_mma_atom_behind_its_arch_guard_is_fine(tmp_path):
    fixed = FP8_GEMM.replace(
        "using TiledMmaFp8 = TiledMMA<MMA_Atom<SM89_16x8x32_F32E4M3E4M3F32_TN>, Layout<Shape<_2, _2, _1>>>;\n",
        "#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 890\n"
        "    using TiledMmaFp8 = TiledMMA<MMA_Atom<SM89_16x8x32_F32E4M3E4M3F32_TN>, Layout<Shape<_2, _2, _1>>>;\n"
        "    #else  // Ampere: fp8 is dequantized to bf16 first\n"
        "    using TiledMmaFp8 = TiledMMA<MMA_Atom<SM80_16x8x16_F32BF16BF16F32_TN>, Layout<Shape<_2, _2, _1>>>;\n"
        "    #endif\n")
    assert "#else" in fixed
    assert lint(tmp_path, fixed, "A100", "L40S", "H100") == []


# Written like a Blackwell epilogue (CUTLASS sm100 collective epilogue): TMEM -> registers.
TMEM_EPILOGUE = """\
    #include <cute/tensor.hpp>
    #include <cute/atom/copy_traits_sm100.hpp>
    using namespace cute;

    __global__ void epilogue_sm100(float* D, uint32_t tmem_base) {
      using TmemLoadAtom = Copy_Atom<SM100_TMEM_LOAD_32dp32b32x, float>;
      TmemLoadAtom atom;
      (void)atom;
      D[threadIdx.x] = 0.f;
    }
"""


def test_tmem_atom_traps_on_hopper(tmp_path):
    got = lint(tmp_path, TMEM_EPILOGUE, "H100", "B200")
    assert [(ln, col, t) for ln, col, t, _s, _m in got] == [(6, 34, ["H100"])]
    assert "'SM100_TMEM_LOAD_32dp32b32x' (CuTe tcgen05.ld/st/cp atom)" in got[0][4]
    assert "CUTE_ARCH_TCGEN05_TMEM_ENABLED is defined (sm_100a)" in got[0][4]


def test_tmem_atom_behind_the_family_guard_is_fine(tmp_path):
    fixed = TMEM_EPILOGUE.replace(
        "      using TmemLoadAtom = Copy_Atom<SM100_TMEM_LOAD_32dp32b32x, float>;\n"
        "      TmemLoadAtom atom;\n      (void)atom;\n",
        "    #if defined(__CUDA_ARCH_FEAT_SM100_ALL)\n"
        "      using TmemLoadAtom = Copy_Atom<SM100_TMEM_LOAD_32dp32b32x, float>;\n"
        "      TmemLoadAtom atom;\n      (void)atom;\n"
        "    #else\n      D[0] = -1.f;\n    #endif\n")
    assert "#else" in fixed
    assert lint(tmp_path, fixed, "H100", "B200") == []


# Written like flash-attention's Ampere kernel_traits.h: the global->shared copy atom.
CP_ASYNC_TRAITS = """\
    #include <cute/tensor.hpp>
    using namespace cute;

    template <typename Element>
    struct Flash_fwd_traits {
      using GmemTiledCopyQKV = decltype(make_tiled_copy(
          Copy_Atom<SM80_CP_ASYNC_CACHEGLOBAL<cute::uint128_t>, Element>{},
          Layout<Shape<_16, _8>>{}, Layout<Shape<_1, _8>>{}));
    };

    template <typename Traits>
    __global__ void flash_fwd(float* O) {
      typename Traits::GmemTiledCopyQKV copy;
      (void)copy;
      O[threadIdx.x] = 0.f;
    }

    template __global__ void flash_fwd<Flash_fwd_traits<half_t>>(float*);
"""


def test_cp_async_atom_traps_on_turing(tmp_path):
    got = lint(tmp_path, CP_ASYNC_TRAITS, "T4", "A100")
    assert [(ln, col, t) for ln, col, t, _s, _m in got] == [(7, 17, ["T4"])]
    assert "'SM80_CP_ASYNC_CACHEGLOBAL' (CuTe cp.async atom)" in got[0][4]


def test_cp_async_atom_chosen_by_a_constant_of_the_arch_is_fine(tmp_path):
    """flash-attention's own form (csrc/flash_attn/src/kernel_traits.h): Has_cp_async is true only
    under '#if __CUDA_ARCH__ >= 800' and std::conditional_t picks the atom by it. Which branch a
    build takes is not evaluated: silent."""
    fixed = CP_ASYNC_TRAITS.replace(
        "    struct Flash_fwd_traits {\n",
        "    struct Flash_fwd_traits {\n"
        "    #if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800\n"
        "      static constexpr bool Has_cp_async = true;\n"
        "    #else\n"
        "      static constexpr bool Has_cp_async = false;\n"
        "    #endif\n"
        "      using Gmem_copy_struct = std::conditional_t<\n"
        "          Has_cp_async,\n"
        "          SM80_CP_ASYNC_CACHEGLOBAL<cute::uint128_t>,\n"
        "          AutoVectorizingCopyWithAssumedAlignment<128>\n"
        "      >;\n").replace("Copy_Atom<SM80_CP_ASYNC_CACHEGLOBAL<cute::uint128_t>, Element>", "Copy_Atom<Gmem_copy_struct, Element>")
    assert "SM80_CP_ASYNC_CACHEGLOBAL<cute::uint128_t>,\n" in fixed
    assert lint(tmp_path, fixed, "T4", "A100") == []


def test_atom_names_match_whole_identifiers_only(matrix):
    """Not inside a longer name, not the sm_103-only TMEM statistics load, and one match per atom."""
    k = load_features(matrix)
    src = CudaSource(
        "struct MY_SM90_TMA_LOAD_2D_WRAPPER {};\n"
        "using Stat = SM100_TMEM_LOAD_STAT_32dp32b32x;\n"
        "using Bulk = SM90_BULK_COPY_AUTO;\n"
        "using Mc = SM90_TMA_LOAD_MULTICAST_OP;\n"
        "using G4 = SM100_TMA_LOAD_2D_GATHER4;\n"
        "using Cp = SM100_UTCCP_128dp256bit_1cta;\n"
        "using Sm75 = SM75_U32x4_LDSM_N;\n", k)
    assert [(o.line, o.token, o.trap) for o in src.occurrences] == [
        (3, "SM90_BULK_COPY_AUTO", "CUTE_ARCH_TMA_SM90_ENABLED"),
        (4, "SM90_TMA_LOAD_MULTICAST_OP", "CUTE_ARCH_TMA_SM90_ENABLED"),
        (5, "SM100_TMA_LOAD_2D_GATHER4", "CUTE_ARCH_TMA_SM100_ENABLED"),
        (6, "SM100_UTCCP_128dp256bit_1cta", "CUTE_ARCH_TCGEN05_TMEM_ENABLED")]


def test_a_projects_own_struct_of_the_same_name_is_not_cutes(matrix):
    """DeepGEMM's deep_gemm/include/deep_gemm/ptx/ld_st.cuh defines its own SM90_U32x2_STSM_N
    (plain asm, judged as PTX) and calls it as ptx::SM90_U32x2_STSM_N; FlashMLA's kerutils defines
    SM100_MMA_* structs of its own. Only CuTe's (unqualified or cute::) name an atom."""
    k = load_features(matrix)
    src = CudaSource(
        "namespace deep_gemm::ptx {\n"
        "template <typename dtype_t>\n"
        "struct SM90_U32x2_STSM_N {\n"
        "  __device__ static void copy(const dtype_t& a, const dtype_t& b, void* smem);\n"
        "};\n"
        "}\n"
        "__device__ void store(float* s) { ptx::SM90_U32x2_STSM_N<float>::copy(1.f, 2.f, s); }\n"
        "using Epi = kerutils::SM90_TMA_STORE;\n"
        "using Cute = cute::SM90_TMA_STORE;\n", k)
    assert [(o.line, o.token) for o in src.occurrences] == [(9, "SM90_TMA_STORE")]


def test_an_atom_compared_with_is_same_is_not_used(matrix):
    """Written like vLLM's csrc/quantization/machete/machete_mainloop.cuh: static_assert and
    if constexpr compare the configured copy op with the atoms; only the alias uses one."""
    k = load_features(matrix)
    src = CudaSource(
        "template <class GmemTiledCopyA>\n"
        "struct Mainloop {\n"
        "  using GmemTiledCopyScale = cute::SM90_TMA_LOAD;\n"
        "  static_assert(cute::is_same_v<GmemTiledCopyA, SM90_TMA_LOAD> ||\n"
        "                    cute::is_same_v<GmemTiledCopyA, SM90_TMA_LOAD_MULTICAST>,\n"
        "                \"GmemTiledCopyA - invalid SM90 TMA copy atom specified.\");\n"
        "};\n", k)
    assert [(o.line, o.token) for o in src.occurrences] == [(3, "SM90_TMA_LOAD")]


# Written like CUTLASS's test/unit/cute/hopper/stsm.cu (also in flash_attn 2.8.3.post2's csrc/cutlass):
# a gtest linked into CUTLASS's unit-test main, which filters SM90_* tests to compute capability 9.0.
UNIT_TEST = """\
    #include "cutlass_unit_test.h"
    #include <cute/tensor.hpp>
    using namespace cute;

    template <class CopyAtom>
    __global__ void stsm_kernel(uint32_t* out) {
      out[threadIdx.x] = 0;
    }

    TEST(SM90_CuTe_Hopper, Stsm)
    {
      using Atom = Copy_Atom<SM90_U32x4_STSM_N, uint16_t>;
      stsm_kernel<Atom><<<1, 32>>>(nullptr);
    }
"""


def test_a_unit_test_the_harness_runs_only_on_hopper_does_not_trap_elsewhere(tmp_path):
    assert lint(tmp_path, UNIT_TEST, "A100", "H100", name="stsm.cu") == []


def test_the_same_test_named_for_ampere_runs_there_and_traps(tmp_path):
    got = lint(tmp_path, UNIT_TEST.replace("TEST(SM90_CuTe_Hopper, Stsm)", "TEST(SM80_CuTe_Ampere, Stsm)"),
               "A100", "H100", name="stsm.cu")
    assert [(ln, col, t) for ln, col, t, _s, _m in got] == [(12, 26, ["A100"])]
    # without the harness's header the test name means nothing: reported as before
    got = lint(tmp_path, UNIT_TEST.replace('#include "cutlass_unit_test.h"', '#include <gtest/gtest.h>'),
               "A100", "H100", name="stsm.cu")
    assert [(ln, t) for ln, _c, t, _s, _m in got] == [(12, ["A100"])]
