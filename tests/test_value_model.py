"""The value model through the rules, on code written the way repositories write it:
each failing case beside its fixed twin, which must be clean."""
import pytest
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


# A value read through a config dict (issue 27's tune misses): a module-level ``dict(...)`` or
# ``{...}``, or one given as a default parameter, read by key in a loader helper. AIC202 asks
# the value model for the keyword's value, as it judges a literal.
LOADER = '''from transformers import AutoModelForCausalLM

MODEL_CFG = CONFIG


def load_model(name, cfg=MODEL_CFG, **overrides):
    kwargs = {"torch_dtype": cfg["torch_dtype"], "attn_implementation": cfg["attn_implementation"]}
    kwargs.update(overrides)
    return AutoModelForCausalLM.from_pretrained(name, attn_implementation=cfg["attn_implementation"],
                                                torch_dtype=kwargs["torch_dtype"])


def load_default(name):
    return AutoModelForCausalLM.from_pretrained(name, attn_implementation=MODEL_CFG["attn_implementation"])
'''
def _not_accepted(value, added):
    return (f"AIC202 AutoModelForCausalLM.from_pretrained: attn_implementation={value!r} is not accepted by "
            f"transformers 4.46.3 (accepted from {added} on); 4.46.3 takes 'eager', 'flash_attention_2', 'sdpa'")


_NOT_ACCEPTED = _not_accepted("flash_attention_3", "4.53.0")


def _loader(config):
    return messages(LOADER.replace("CONFIG", config), ["H100"], pins={"transformers": "4.46.3"})


def test_a_config_dict_call_read_by_key():
    got = _loader('dict(attn_implementation="flash_attention_3", torch_dtype="bfloat16")')
    assert got == [f"9:{_NOT_ACCEPTED}", f"14:{_NOT_ACCEPTED}"]


def test_a_config_dict_literal_read_by_key():
    got = _loader('{"attn_implementation": "flex_attention", "torch_dtype": "bfloat16"}')
    flex = _not_accepted("flex_attention", "4.47.0")
    assert got == [f"9:{flex}", f"14:{flex}"]


def test_a_config_dict_with_a_value_the_release_takes_is_clean():
    assert _loader('dict(attn_implementation="sdpa", torch_dtype="bfloat16")') == []
    assert _loader('{"attn_implementation": "flash_attention_2", "torch_dtype": "bfloat16"}') == []


def test_a_config_dict_judged_on_a_release_that_takes_it_is_clean():
    code = LOADER.replace("CONFIG", 'dict(attn_implementation="flash_attention_3")')
    assert messages(code, ["H100"], pins={"transformers": "4.53.0"}) == []


def test_a_config_value_chosen_by_a_flag_is_judged_on_the_path_that_passes_it():
    code = '''import os
from transformers import AutoModelForCausalLM

ATTN = {"fast": "flash_attention_3", "safe": "sdpa"}


def load(name, fast):
    impl = ATTN["fast"] if fast else ATTN["safe"]
    return AutoModelForCausalLM.from_pretrained(name, attn_implementation=impl)


load("m", fast=os.environ.get("FAST") == "1")
'''
    assert messages(code, ["H100"], pins={"transformers": "4.46.3"}) == [f"9:{_NOT_ACCEPTED}"]
    fixed = code.replace('"fast": "flash_attention_3"', '"fast": "flash_attention_2"')
    assert messages(fixed, ["H100"], pins={"transformers": "4.46.3"}) == []


# Head dims through nn.Module attributes, nn.Linear outputs and head splits (issue 27 item 2):
# the number of heads is unknown (a config read, a tensor-parallel world size), yet splitting
# ``heads * 192`` into ``heads`` gives 192 whatever it is (model/dims.py names the unknown).
_FA3_HOPPER_ONLY = ("flash_attn_func: V head dim 128 != QK head dim 192 is Hopper-only (FlashAttention 3: \"Only "
                    "Hopper supports different V headdim\"); fails on sm_80 (A100), sm_100 (B200); pad V to 192 and "
                    "slice the output to 128 there")
_FLEET = ["A100", "H100", "B200"]


def v_headdim(code, gpus=tuple(_FLEET), **kw):
    """AIC101's findings alone: the head dims are what these cases are about (another rule may
    also speak of the kernel on one GPU)."""
    return messages(code, list(gpus), select=["AIC101"], **kw)

MLA_CFG_DICT = '''import torch
import torch.nn as nn
from flash_attn_interface import flash_attn_func


class MLA(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.n_heads = cfg["n_heads"]
        self.qk_nope = 128
        self.qk_rope = 64
        self.qk_head_dim = self.qk_nope + self.qk_rope
        self.v_head_dim = V_HEAD_DIM
        self.wq = nn.Linear(cfg["dim"], self.n_heads * self.qk_head_dim)
        self.wkv = nn.Linear(cfg["dim"], self.n_heads * (self.qk_nope + self.v_head_dim))
        self.wk_rope = nn.Linear(cfg["dim"], self.qk_rope)

    def forward(self, x):
        b, s, _ = x.shape
        q = self.wq(x).view(b, s, self.n_heads, -1)
        kv = self.wkv(x).view(b, s, self.n_heads, -1)
        k_nope, v = kv.split([self.qk_nope, self.v_head_dim], dim=-1)
        k_rope = self.wk_rope(x).view(b, s, 1, -1).expand(-1, -1, self.n_heads, -1)
        k = torch.cat([k_nope, k_rope], dim=-1)
        return flash_attn_func(q, k, v, causal=True)
'''


def test_mla_module_with_heads_from_a_config_dict():
    assert v_headdim(MLA_CFG_DICT.replace("V_HEAD_DIM", "128"), _FLEET) == [f"25:AIC101 {_FA3_HOPPER_ONLY}"]


def test_mla_module_with_equal_head_dims_is_clean():
    assert v_headdim(MLA_CFG_DICT.replace("V_HEAD_DIM", "192"), _FLEET) == []


def test_mla_module_that_pads_v_is_clean():
    padded = MLA_CFG_DICT.replace("V_HEAD_DIM", "128").replace(
        "        return flash_attn_func(q, k, v, causal=True)",
        "        v = nn.functional.pad(v, [0, self.qk_head_dim - self.v_head_dim])\n"
        "        return flash_attn_func(q, k, v, causal=True)[..., :self.v_head_dim]")
    assert v_headdim(padded, _FLEET) == []


DEEPSEEK_MLA = '''from dataclasses import dataclass

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
from einops import rearrange
from flash_attn_interface import flash_attn_func

world_size = dist.get_world_size() if dist.is_initialized() else 1


@dataclass
class ModelArgs:
    dim: int = 2048
    n_heads: int = 16
    kv_lora_rank: int = 512
    qk_nope_head_dim: int = 128
    qk_rope_head_dim: int = 64
    v_head_dim: int = V_HEAD_DIM


class MLA(nn.Module):
    def __init__(self, args: ModelArgs):
        super().__init__()
        self.n_local_heads = args.n_heads // world_size
        self.kv_lora_rank = args.kv_lora_rank
        self.qk_nope_head_dim = args.qk_nope_head_dim
        self.qk_rope_head_dim = args.qk_rope_head_dim
        self.qk_head_dim = args.qk_nope_head_dim + args.qk_rope_head_dim
        self.v_head_dim = args.v_head_dim
        self.wq = nn.Linear(args.dim, self.n_local_heads * self.qk_head_dim, bias=False)
        self.wkv_a = nn.Linear(args.dim, self.kv_lora_rank + self.qk_rope_head_dim, bias=False)
        self.wkv_b = nn.Linear(self.kv_lora_rank, self.n_local_heads * (self.qk_nope_head_dim + self.v_head_dim),
                               bias=False)
        self.softmax_scale = self.qk_head_dim ** -0.5

    def forward(self, x: torch.Tensor):
        bsz, seqlen, _ = x.size()
        q = SPLIT_Q
        q_nope, q_pe = torch.split(q, [self.qk_nope_head_dim, self.qk_rope_head_dim], dim=-1)
        kv, k_pe = torch.split(self.wkv_a(x), [self.kv_lora_rank, self.qk_rope_head_dim], dim=-1)
        kv = SPLIT_KV
        k_nope, v = torch.split(kv, [self.qk_nope_head_dim, self.v_head_dim], dim=-1)
        k = torch.cat([k_nope, k_pe.unsqueeze(2).expand(-1, -1, self.n_local_heads, -1)], dim=-1)
        q = torch.cat([q_nope, q_pe], dim=-1)
        out = flash_attn_func(q, k, v, softmax_scale=self.softmax_scale, causal=True)
        return out.flatten(2)
'''
# Each way the code splits a projection into heads, applied to q and to kv alike.
_HEAD_SPLITS = [
    "{p}.view(bsz, seqlen, self.n_local_heads, -1)",
    "{p}.reshape(bsz, seqlen, self.n_local_heads, -1)",
    "{p}.unflatten(-1, (self.n_local_heads, -1))",
    'rearrange({p}, "b s (h d) -> b s h d", h=self.n_local_heads)',
    "{p}.view(bsz, seqlen, -1, HEAD_DIM)",
]


def _deepseek(split, v_head_dim="128"):
    q = split.format(p="self.wq(x)").replace("HEAD_DIM", "self.qk_head_dim")
    kv = split.format(p="self.wkv_b(kv)").replace("HEAD_DIM", "self.qk_nope_head_dim + self.v_head_dim")
    return DEEPSEEK_MLA.replace("SPLIT_Q", q).replace("SPLIT_KV", kv).replace("V_HEAD_DIM", v_head_dim)


@pytest.mark.parametrize("split", _HEAD_SPLITS)
def test_deepseek_style_mla_with_tensor_parallel_heads(split):
    assert v_headdim(_deepseek(split), _FLEET) == [f"47:AIC101 {_FA3_HOPPER_ONLY}"]


@pytest.mark.parametrize("split", _HEAD_SPLITS)
def test_deepseek_style_mla_with_equal_head_dims_is_clean(split):
    assert v_headdim(_deepseek(split, v_head_dim="192"), _FLEET) == []


SDPA_MLA = '''import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel


class LatentAttention(nn.Module):
    def __init__(self, dim, n_heads, qk_head_dim=192, v_head_dim=128):
        super().__init__()
        self.n_heads = n_heads
        self.qk_head_dim = qk_head_dim
        self.v_head_dim = v_head_dim
        self.q_proj = nn.Linear(dim, n_heads * qk_head_dim, bias=False)
        self.k_proj = nn.Linear(dim, n_heads * qk_head_dim, bias=False)
        self.v_weight = nn.Parameter(torch.empty(n_heads * v_head_dim, dim))

    def forward(self, x):
        b, s, _ = x.shape
        q = self.q_proj(x).view(b, s, self.n_heads, -1).transpose(1, 2)
        k = self.k_proj(x).view(b, s, self.n_heads, -1).transpose(1, 2)
        v = F.linear(x, self.v_weight).view(b, s, self.n_heads, -1).transpose(1, 2)
        FIX
        with sdpa_kernel(SDPBackend.FLASH_ATTENTION):
            out = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return out.transpose(1, 2).reshape(b, s, -1)
'''


def test_sdpa_layout_after_transpose_and_a_functional_linear():
    # SDPA takes (batch, heads, seq, head_dim): the head dim is the last one after transpose(1, 2).
    got = v_headdim(SDPA_MLA.replace("FIX", "pass"), ["H100"], pins={"torch": "2.5.0"})
    assert got == ['24:AIC101 scaled_dot_product_attention: V head dim 128 != QK head dim 192 with only the flash '
                   'backend enabled, which needs equal head dims ("Flash attention requires q,k,v to have the same '
                   'last dimension and to be less than or equal to 256."; then "No available kernel"); fails on '
                   'sm_90 (H100); pad V to 192 and slice the output to 128 there']


def test_sdpa_layout_with_v_padded_is_clean():
    fixed = SDPA_MLA.replace("FIX", "v = F.pad(v, [0, self.qk_head_dim - self.v_head_dim])")
    assert v_headdim(fixed, ["H100"], pins={"torch": "2.5.0"}) == []


LLAMA_GQA = '''from dataclasses import dataclass

import torch
import torch.distributed as dist
import torch.nn as nn
from flash_attn import flash_attn_func


@dataclass
class ModelArgs:
    dim: int = 8192
    n_heads: int = N_HEADS
    n_kv_heads: int = 8


class Attention(nn.Module):
    def __init__(self, args: ModelArgs):
        super().__init__()
        tp = dist.get_world_size()
        self.n_local_heads = args.n_heads // tp
        self.n_local_kv_heads = args.n_kv_heads // tp
        self.head_dim = args.dim // args.n_heads
        self.wq = nn.Linear(args.dim, args.n_heads // tp * self.head_dim, bias=False)
        self.wk = nn.Linear(args.dim, self.n_local_kv_heads * self.head_dim, bias=False)
        self.wv = nn.Linear(args.dim, self.n_local_kv_heads * self.head_dim, bias=False)

    def forward(self, x):
        bsz, seqlen, _ = x.shape
        q = self.wq(x).view(bsz, seqlen, self.n_local_heads, -1)
        k = self.wk(x).view(bsz, seqlen, self.n_local_kv_heads, -1)
        v = self.wv(x).view(bsz, seqlen, self.n_local_kv_heads, -1)
        return flash_attn_func(q, k, v, causal=True)
'''


def test_gqa_head_dim_from_dim_over_heads_split_per_rank():
    got = messages(LLAMA_GQA.replace("N_HEADS", "16"), ["A100", "H100"], select=["AIC106"])
    assert got == ['32:AIC106 flash_attn_func: head dim 512 is more than FlashAttention 2 supports (256): '
                   '"FlashAttention forward only supports head dimension at most 256"; fails on sm_80 (A100), '
                   'sm_90 (H100)']


def test_gqa_head_dim_the_kernel_takes_is_clean():
    assert messages(LLAMA_GQA.replace("N_HEADS", "64"), ["A100", "H100"], select=["AIC106"]) == []


def test_leading_dims_not_read_from_the_input_are_not_assumed():
    # ``bsz, seqlen = x.shape[:2]`` leaves the rank of x open: view(bsz, seqlen, h, -1) may
    # fold other dims into the last one, so the head dim is not known and nothing is said.
    code = MLA_CFG_DICT.replace("V_HEAD_DIM", "128").replace("b, s, _ = x.shape", "b, s = x.shape[:2]")
    assert v_headdim(code, _FLEET) == []
    # A name rebound before the unpack: the value unpacked is the new one.
    code = MLA_CFG_DICT.replace("V_HEAD_DIM", "128").replace(
        "        b, s, _ = x.shape\n", "        x = self.norm(x) if x.dim() == 3 else x\n        b, s, _ = x.shape\n")
    assert v_headdim(code, _FLEET) == [f"26:AIC101 {_FA3_HOPPER_ONLY}"]


def test_a_named_dim_compared_with_a_constant_stays_undecided():
    # ``x.shape[-1] in (...)`` of a dim only named: the branch may run, so the call is judged.
    code = MLA_CFG_DICT.replace("V_HEAD_DIM", "128").replace(
        "        return flash_attn_func(q, k, v, causal=True)",
        "        if x.shape[-1] in (2048, 4096):\n            return flash_attn_func(q, k, v, causal=True)\n"
        "        return None")
    assert v_headdim(code, _FLEET) == [f"26:AIC101 {_FA3_HOPPER_ONLY}"]


HF_STYLE = '''import torch
import torch.nn as nn
from flash_attn_interface import flash_attn_func


class DeepseekV2Attention(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.config = config
        self.q_proj = nn.Linear(config.hidden_size, config.num_attention_heads * 192, bias=False)
        self.v_proj = nn.Linear(config.hidden_size, config.num_attention_heads * V_DIM, bias=False)

    def forward(self, hidden_states):
        bsz, q_len, _ = hidden_states.size()
        cfg = self.config
        q = self.q_proj(hidden_states).view(bsz, q_len, self.config.num_attention_heads, -1)
        k = q
        v = self.v_proj(hidden_states).view(bsz, q_len, cfg.num_attention_heads, -1)
        return flash_attn_func(q, k, v)
'''


def test_heads_read_through_a_config_object_stored_on_the_module():
    # ``config.num_attention_heads`` in __init__, ``self.config...`` and a local copy in forward:
    # one value, read through the attribute that stores the config.
    assert v_headdim(HF_STYLE.replace("V_DIM", "128"), _FLEET) == [f"19:AIC101 {_FA3_HOPPER_ONLY}"]
    assert v_headdim(HF_STYLE.replace("V_DIM", "192"), _FLEET) == []
