"""The value model through the rules, on code written the way repositories write it:
each failing case beside its fixed twin, which must be clean."""
from conftest import lint


def messages(code, gpus, **kw):
    return [f"{d.line}:{d.code} {d.message}" for d in lint(code, gpus=gpus, **kw) if d.code != "AIC001"]


MLA_HELPER = '''import torch
import torch.nn.functional as F
from flash_attn import flash_attn_func


class MLAConfig:
    def __init__(self, qk_nope_head_dim=128, qk_rope_head_dim=64, v_head_dim=128):
        self.qk_nope_head_dim = qk_nope_head_dim
        self.qk_rope_head_dim = qk_rope_head_dim
        self.v_head_dim = v_head_dim


def attention_block(q, k, v):
    return flash_attn_func(q, k, v, causal=True)


def run_layer(cfg, bsz, seqlen, heads):
    qk_dim = cfg.qk_nope_head_dim + cfg.qk_rope_head_dim
    q = torch.randn(bsz, seqlen, heads, qk_dim)
    k = torch.randn(bsz, seqlen, heads, qk_dim)
    v = torch.randn(bsz, seqlen, heads, cfg.v_head_dim)
    {fix}
    return attention_block(q, k, v)


run_layer(MLAConfig(), 2, 256, 16)
'''


def test_finding_in_a_helper_names_the_call_that_makes_it_fail():
    got = messages(MLA_HELPER.replace("{fix}", "pass"), ["A100"])
    assert got == ['14:AIC101 flash_attn_func: V head dim 128 != QK head dim 192 (called at line 23) is rejected by '
                   'FlashAttention 2 on every GPU ("v must have shape (batch_size, seqlen_k, num_heads_k, head_size)"); '
                   'fails on sm_80 (A100); pad V to 192 and slice the output to 128 there']


def test_helper_fixed_by_padding_v_is_clean():
    fixed = MLA_HELPER.replace("{fix}", "v = F.pad(v, [0, qk_dim - cfg.v_head_dim])")
    assert messages(fixed, ["A100"]) == []


def test_two_callers_are_not_mixed():
    # One call passes equal dims, the other does not: only the bad call is named.
    code = """import torch
from flash_attn import flash_attn_func


def attention_block(q, k, v):
    return flash_attn_func(q, k, v)


q = torch.randn(2, 128, 8, 192)
attention_block(q, q, torch.randn(2, 128, 8, 192))
attention_block(q, q, torch.randn(2, 128, 8, 128))
"""
    got = messages(code, ["A100"])
    assert len(got) == 1 and got[0].startswith("6:AIC101") and "(called at line 11)" in got[0]
    fixed = code.replace("torch.randn(2, 128, 8, 128))", "torch.randn(2, 128, 8, 192))")
    assert messages(fixed, ["A100"]) == []


FP8_FLAG = '''import torch


class Fp8Linear(torch.nn.Module):
    def __init__(self, weight):
        super().__init__()
        self.weight = weight
        self.use_fp8 = torch.cuda.get_device_capability() >= ({major}, {minor})

    def forward(self, x, scale_a, scale_b):
        if self.use_fp8:
            return torch._scaled_mm(x, self.weight, scale_a=scale_a, scale_b=scale_b)
        return x @ self.weight
'''


def test_capability_flag_stored_on_self_guards_the_call():
    assert messages(FP8_FLAG.format(major=8, minor=9), ["A100", "H100"]) == []


def test_a_wrong_threshold_stored_on_self_is_still_reported():
    got = messages(FP8_FLAG.format(major=8, minor=0), ["A100", "H100"])
    assert len(got) == 1 and got[0].startswith("12:AIC102 torch._scaled_mm") and ("fails on sm_80 (A100); " in got[0])


ARCH_FSTRING = '''import os
import torch
from torch.utils.cpp_extension import load

{arch}
os.environ["TORCH_CUDA_ARCH_LIST"] = ARCH
ext = load(name="fused_norm", sources=["fused_norm.cu"])
'''


def test_fstring_with_an_unknown_part_is_not_its_known_parts():
    # The running GPU's capability differs per fleet member: no constant, nothing to report
    # (it was read as "." and reported as an arch list torch rejects).
    code = ARCH_FSTRING.format(arch='major, minor = torch.cuda.get_device_capability()\nARCH = f"{major}.{minor}"')
    assert messages(code, ["A100", "H100"]) == []


def test_fstring_of_module_constants_is_followed():
    code = ARCH_FSTRING.format(arch='CC_MAJOR, CC_MINOR = 9, 0\nARCH = f"{CC_MAJOR}.{CC_MINOR}+PTX"')
    got = messages(code, ["A100", "H100"])
    assert len(got) == 1 and "TORCH_CUDA_ARCH_LIST='9.0+PTX' builds sm_90" in got[0] and "sm_80 (A100)" in got[0]
    fixed = ARCH_FSTRING.format(arch='ARCHS = ["8.0", "9.0"]\nARCH = ";".join(ARCHS) + "+PTX"')
    assert messages(fixed, ["A100", "H100"]) == []


COMPILE_SPLAT = '''import torch

CFG = {{"compile": {{"backend": "{backend}", "mode": "max-autotune"}}}}


def build(model):
    return torch.compile(model, **CFG["compile"])
'''


def test_compile_options_through_a_config_splat():
    got = messages(COMPILE_SPLAT.format(backend="tensorrt_llm"), ["H100"], pins={"torch": "2.8.0"})
    assert len(got) == 1 and got[0].startswith("7:AIC103") and 'backend="tensorrt_llm"' in got[0]
    assert messages(COMPILE_SPLAT.format(backend="inductor"), ["H100"], pins={"torch": "2.8.0"}) == []


TE_TRAINER = '''import torch
import transformer_engine.pytorch as te
from transformer_engine.common import recipe


def make_recipe(kind):
    if kind == "mxfp8"{mx_guard}:
        return recipe.MXFP8BlockScaling()
    return recipe.DelayedScaling(amax_history_len=16, amax_compute_algo="max")


class Trainer:
    def __init__(self, model, kind="mxfp8"):
        self.model = model
        self.recipe = make_recipe(kind)

    def step(self, batch):
        with te.fp8_autocast(enabled=True, fp8_recipe=self.recipe):
            return self.model(batch)


trainer = Trainer(te.Linear(1024, 1024).cuda())
'''


def test_te_recipe_returned_by_a_helper_is_followed():
    got = messages(TE_TRAINER.format(mx_guard=""), ["H100", "B200"], select=["AIC102"])
    assert len(got) == 1 and got[0].startswith("18:AIC102 fp8_autocast with MXFP8BlockScaling") \
        and ("fails on sm_90 (H100); " in got[0])
    fixed = TE_TRAINER.format(mx_guard=" and torch.cuda.get_device_capability()[0] == 10")
    assert messages(fixed, ["H100", "B200"], select=["AIC102"]) == []


TE_PICK = '''import torch
import transformer_engine.pytorch as te
from transformer_engine.common import recipe

major, minor = torch.cuda.get_device_capability()
FP8_RECIPE = recipe.MXFP8BlockScaling() if {cond} else recipe.Float8CurrentScaling()


def forward_fp8(layer, x):
    with te.autocast(enabled=True, recipe=FP8_RECIPE):
        return layer(x)
'''


def test_te_recipe_chosen_by_a_conditional_is_judged_per_gpu():
    got = messages(TE_PICK.format(cond="major >= 10"), ["H100", "B200", "RTX 5090"], select=["AIC102"])
    assert len(got) == 1 and got[0].startswith("10:AIC102 autocast with MXFP8BlockScaling") \
        and ("fails on sm_120 (RTX 5090); " in got[0])
    assert messages(TE_PICK.format(cond="major == 10"), ["H100", "B200", "RTX 5090"], select=["AIC102"]) == []


def test_te_recipe_unknown_switch_reports_the_options_that_fail():
    # A user switch the analysis cannot see: either recipe may run, and MXFP8 fails on Hopper.
    code = TE_PICK.replace("major, minor = torch.cuda.get_device_capability()", "import os").format(
        cond='os.environ.get("FP8_RECIPE") == "mxfp8"')
    got = messages(code, ["H100", "B200"], select=["AIC102"])
    assert len(got) == 1 and "MXFP8BlockScaling" in got[0] and ("fails on sm_90 (H100); " in got[0])
    # A recipe object the analysis cannot see is not guessed at.
    unseen = TE_PICK.format(cond="major >= 10").replace("recipe=FP8_RECIPE", "recipe=layer.fp8_recipe")
    assert messages(unseen, ["H100", "B200", "RTX 5090"], select=["AIC102"]) == []


SDPA_KWARGS = '''import torch
import torch.nn.functional as F

SDPA_HAS_GQA = torch.__version__ >= "2.5"


class Attention(torch.nn.Module):
    def __init__(self, n_heads=32, n_kv_heads=8):
        super().__init__()
        self.n_heads, self.n_kv_heads = n_heads, n_kv_heads

    def forward(self, q, k, v):
        sdpa_kwargs = {{"is_causal": True}}
{build}
        return F.scaled_dot_product_attention(q, k, v, **sdpa_kwargs)
'''


def test_kwargs_dict_that_differs_by_branch_is_judged_per_option():
    # Whether K has fewer heads than Q is known only at run time: both dicts may be passed.
    grouped = '        if k.size(1) != q.size(1):\n            sdpa_kwargs["enable_gqa"] = True'
    got = messages(SDPA_KWARGS.format(build=grouped), ["A100"], pins={"torch": "2.4.0"}, select=["AIC202"])
    assert len(got) == 1 and got[0].startswith("16:AIC202") and "keyword 'enable_gqa'" in got[0]
    # Added only where the release has it: clean on every release of the range.
    gated = '        if SDPA_HAS_GQA:\n            sdpa_kwargs["enable_gqa"] = True'
    assert messages(SDPA_KWARGS.format(build=gated), ["A100"], pins={"torch": ">=2.4,<2.6"}, select=["AIC202"]) == []


def test_a_definition_overridden_under_a_guard_reaches_only_where_the_guard_fails():
    # The first dict reaches the call only where the override's test is false.
    override = ('        sdpa_kwargs = {"is_causal": True, "enable_gqa": True}\n'
                '        if not SDPA_HAS_GQA:\n            sdpa_kwargs = {"is_causal": True}')
    code = SDPA_KWARGS.format(build=override)
    assert messages(code, ["A100"], pins={"torch": ">=2.4,<2.6"}, select=["AIC202"]) == []
    wrong = code.replace("if not SDPA_HAS_GQA:", "if SDPA_HAS_GQA:")
    got = messages(wrong, ["A100"], pins={"torch": ">=2.4,<2.6"}, select=["AIC202"])
    assert len(got) == 1 and "not accepted by torch 2.4.0–2.4.1" in got[0]


MLA_ASSEMBLE = '''import torch
import torch.nn.functional as F
from flash_attn import flash_attn_func

NOPE, ROPE, V_DIM = 128, 64, 128


def mla_attention(q_nope, q_pe, k_nope, k_pe, v):
    bsz, seqlen, heads, _ = q_nope.shape
    q = q_pe.new_empty(bsz, seqlen, heads, NOPE + ROPE)
    q[..., :NOPE] = q_nope
    q[..., NOPE:] = q_pe
    k = k_pe.new_zeros((bsz, seqlen, heads, NOPE + ROPE))
    k[..., :NOPE] = k_nope
    k[..., NOPE:] = k_pe
    {fix}
    return flash_attn_func(q, k, v, causal=True)


x = torch.randn(2, 256, 16, NOPE)
pe = torch.randn(2, 256, 16, ROPE)
mla_attention(x, pe, x, pe, torch.randn(2, 256, 16, V_DIM))
'''


def test_tensor_made_by_new_empty_and_filled_by_slices_keeps_its_shape():
    got = messages(MLA_ASSEMBLE.replace("{fix}", "pass"), ["A100"])
    assert len(got) == 1 and got[0].startswith("17:AIC101 flash_attn_func: V head dim 128 != QK head dim 192")
    fixed = MLA_ASSEMBLE.replace("{fix}", "v = F.pad(v, [0, NOPE + ROPE - V_DIM])")
    assert messages(fixed, ["A100"]) == []


# -- splats into known calls, classmethods, classes looked up in dicts ---------------------------------
FA3_INPUTS = '''import torch
from flash_attn_interface import flash_attn_func

QK_HEAD_DIM, V_HEAD_DIM = 192, {v}


def make_inputs(batch, seqlen, heads, device="cuda"):
    opts = {{"device": device, "dtype": torch.bfloat16}}
    q_shape = (batch, seqlen, heads, QK_HEAD_DIM)
    v_shape = (batch, seqlen, heads, V_HEAD_DIM)
    return torch.randn(*q_shape, **opts), torch.randn(*q_shape, **opts), torch.randn(*v_shape, **opts)


def bench():
    q, k, v = make_inputs(2, 4096, 16)
    return flash_attn_func(q, k, v, causal=True)
'''


def test_factory_arguments_splatted_from_tuples_and_dicts():
    assert messages(FA3_INPUTS.format(v=128), ["H100", "B200"]) == [
        "16:AIC101 flash_attn_func: V head dim 128 != QK head dim 192 is Hopper-only (FlashAttention 3: "
        '"Only Hopper supports different V headdim"); fails on sm_100 (B200); pad V to 192 and slice the output to 128 there']
    # equal head dims: nothing for AIC101 (AIC106 still says FA3's default build has no sm_100 kernel)
    assert [m for m in messages(FA3_INPUTS.format(v=192), ["H100", "B200"]) if ":AIC101 " in m] == []


CONFIG_FROM_DICT = '''from dataclasses import dataclass

import torch
from flash_attn import flash_attn_func

LITE = {{"heads": 16, "qk_head_dim": 192, "v_head_dim": {v}}}


@dataclass
class AttnConfig:
    heads: int
    qk_head_dim: int
    v_head_dim: int

    @classmethod
    def from_dict(cls, d: dict) -> "AttnConfig":
        return cls(**d)


def prefill(x, config: dict = LITE):
    cfg = AttnConfig.from_dict(config)
    q = x.new_empty(x.shape[0], x.shape[1], cfg.heads, cfg.qk_head_dim)
    v = x.new_empty(x.shape[0], x.shape[1], cfg.heads, cfg.v_head_dim)
    return flash_attn_func(q, q, v)
'''


def test_config_built_by_a_classmethod_from_a_dict():
    assert [m.split(" is ")[0] for m in messages(CONFIG_FROM_DICT.format(v=128), ["A100"])] == [
        "24:AIC101 flash_attn_func: V head dim 128 != QK head dim 192"]
    assert messages(CONFIG_FROM_DICT.format(v=192), ["A100"]) == []


RECIPE_TABLE = '''import transformer_engine.pytorch as te
from transformer_engine.common import recipe

RECIPES = {{"delayed": recipe.DelayedScaling, "mxfp8": recipe.MXFP8BlockScaling}}
PRECISION = {{"recipe": "{name}"}}


def train_step(layer, x):
    with te.fp8_autocast(enabled=True, fp8_recipe=RECIPES[PRECISION["recipe"]]()):
        return layer(x)
'''


def test_recipe_class_looked_up_in_a_table_then_made():
    got = messages(RECIPE_TABLE.format(name="mxfp8"), ["H100"], pins={"transformer-engine": "2.8.0"})
    assert [m.split(" (")[0] for m in got] == ["9:AIC102 fp8_autocast with MXFP8BlockScaling"]
    assert messages(RECIPE_TABLE.format(name="delayed"), ["H100"], pins={"transformer-engine": "2.8.0"}) == []


# -- command-line defaults ---------------------------------------------------------------------------
ARGS = '''import argparse

import torch


def get_args():
    p = argparse.ArgumentParser()
    p.add_argument("--compile-mode", {mode})
    p.add_argument("--no-compile", dest="compile", action="store_false")
    return p.parse_args()


def main(model):
    args = get_args()
    if args.compile:
        model = torch.compile(model, mode=args.compile_mode)
    return model
'''


def test_argparse_default_is_the_value_of_a_run_without_arguments():
    pins = {"torch": "2.5.0"}
    got = messages(ARGS.format(mode='default="max_autotune"'), ["A100"], pins=pins)
    assert len(got) == 1 and got[0].startswith('16:AIC103 torch.compile: mode="max_autotune" is not a mode of torch 2.5.0')
    assert messages(ARGS.format(mode='default="max-autotune"'), ["A100"], pins=pins) == []
    # No default: the user gives it; unknown stays unknown.
    assert messages(ARGS.format(mode='help="torch.compile mode"'), ["A100"], pins=pins) == []
    assert messages(ARGS.format(mode='default="max_autotune", required=True'), ["A100"], pins=pins) == []


def test_code_under_a_cli_switch_runs_whenever_the_user_passes_it():
    # flash-attention hopper/test_kvcache.py: a keyword no release accepts, under ``if args.validate:``.
    code = '''import argparse

import flash_attn_interface as fa3

parser = argparse.ArgumentParser()
parser.add_argument("--validate", action="store_true")
args = parser.parse_args()


def main(q, k_cache, v_cache):
    if args.validate:
        return fa3.flash_attn_with_kvcache(q=q, k_cache=k_cache, v_cache=v_cache, gqa_decoding=True)
'''
    assert [m.split(": ")[0] for m in messages(code, ["H100"])] == ["12:AIC202 flash_attn_interface.flash_attn_with_kvcache"]


def test_store_true_flag_off_by_default_guards_like_false():
    code = '''import argparse

import torch
import transformer_engine.pytorch as te

parser = argparse.ArgumentParser()
parser.add_argument("--fp8", action="{action}")
args = parser.parse_args()


def step(layer, x):
    with te.fp8_autocast(enabled=args.fp8):
        return layer(x)
'''
    assert messages(code.format(action="store_true"), ["A100"], pins={"transformer-engine": "2.8.0"}) == []
    got = messages(code.format(action="store_false"), ["A100"], pins={"transformer-engine": "2.8.0"})
    assert [m.split(" (")[0] for m in got] == ["12:AIC102 fp8_autocast with DelayedScaling"]


# -- loops that build a list --------------------------------------------------------------------------
GENCODE = '''from torch.utils.cpp_extension import load

ARCHS = {archs}


def arch_flags(archs):
    flags = []
    for arch in archs:
        num = arch.replace(".", "")
        flags.append(f"-gencode=arch=compute_{{num}},code=sm_{{num}}")
    return flags


ext = load(name="k", sources=["k.cu"], extra_cuda_cflags=["-O3"] + arch_flags(ARCHS))
'''


def test_flags_built_by_a_loop_over_a_constant_list():
    got = messages(GENCODE.format(archs='["8.0", "8.9"]'), ["A100", "H100"])
    assert len(got) == 1 and got[0].startswith("14:AIC302 load extra_cuda_cflags builds sm_80, sm_89: ")
    assert "no code for sm_90 (H100)" in got[0]
    assert messages(GENCODE.format(archs='["8.0", "9.0"]'), ["A100", "H100"]) == []
    # Items the model does not know (read at run time): no finding, not a guess.
    unknown = GENCODE.format(archs='["8.0", "8.9"]').replace("arch_flags(ARCHS)", "arch_flags(open('archs').read().split())")
    assert messages(unknown, ["A100", "H100"]) == []
