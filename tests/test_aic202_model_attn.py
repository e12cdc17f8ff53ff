"""AIC202: a transformers model class loaded with an attention implementation it does not declare
in the release (version_matrix/model_classes/transformers.toml, read from the wheels by
tools/read_transformers_attn_support.py). Each failing loader has its fixed twin, clean."""

from conftest import lint

from aicompat.matrix import default_matrix


def aic202(code, pins=None, gpus=("sm_80",)):
    return [(d.line, d.column, d.message) for d in lint(code, gpus=gpus, pins=pins) if d.code == "AIC202"]


# -- the table --------------------------------------------------------------------------------
def test_table_reads_every_release_with_its_wheel():
    m = default_matrix()
    t = m.model_classes("transformers")
    read = t["read"]["transformers"]
    known = m.section("releases.toml", "package")["transformers"]["releases"]
    # every release read is a known one (a release added to releases.toml later is not judged until the
    # generator reads it); all 136 of 4.30.0-5.24.0 were
    assert set(read["releases"]) <= set(known) and len(read["releases"]) >= 136
    for v in read["releases"]:
        assert read["files"][v].startswith(f"transformers-{v}-py3-none-any.whl sha256:")


def test_table_facts_read_in_the_wheels():
    t = default_matrix().model_classes("transformers")
    mistral = t["model"]["mistral"]
    assert "MistralForCausalLM" in mistral["classes"]
    # MistralPreTrainedModel gained _supports_sdpa in 4.37.0 (4.36.2 has only _supports_flash_attn_2)
    assert mistral["sdpa"].startswith("4.37.0-")
    assert mistral["flash_attention_2"].startswith("4.34.0-")
    assert "mistral/modeling_mistral.py" in mistral["source"] and "MistralPreTrainedModel" in mistral["source"]
    # Gemma2 dropped sdpa in 5.21.0 ("_supports_sdpa = False  # sdpa does not support softcapping")
    assert t["model"]["gemma2"]["sdpa"].endswith("-5.20.2")
    checks = {k: e for k, e in t["check"].items()}
    sdpa_4_36 = next(e for e in checks.values() if e["implementation"] == "sdpa" and "4.36.2" in e["releases"])
    assert sdpa_4_36["function"] == "PreTrainedModel._check_and_enable_sdpa"
    assert sdpa_4_36["error"].startswith("{cls} does not support an attention implementation through")
    # 4.55's sdpa check raises only after the model is built: no finding there
    sdpa_4_55 = next(e for e in checks.values() if e["implementation"] == "sdpa" and "4.55.0" in e["releases"])
    assert sdpa_4_55["when"] == "not is_init_check"


# -- loaders --------------------------------------------------------------------------------
REGISTRY = '''\
from transformers import LlamaForCausalLM, MistralForCausalLM

MODEL_CLASSES = {
    "llama": LlamaForCausalLM,
    "mistral": MistralForCausalLM,
}


def build_model(model_type, checkpoint, attn_implementation="sdpa"):
    model_cls = MODEL_CLASSES[model_type]
    return model_cls.from_pretrained(checkpoint, torch_dtype="auto", attn_implementation=attn_implementation)


model = build_model("mistral", "mistralai/Mistral-7B-v0.1")
'''


def test_registry_keyed_by_a_literal():
    got = aic202(REGISTRY, pins={"transformers": "4.36.2"})
    assert got == [(11, 70, 'MistralForCausalLM.from_pretrained: attn_implementation="sdpa" raises ValueError in '
                             'transformers 4.36.2: "MistralForCausalLM does not support an attention implementation '
                             'through torch.nn.functional.scaled_dot_product_attention yet." (pins allow transformers '
                             '4.36.2); use transformers>=4.37.0 (where MistralForCausalLM declares sdpa), or '
                             'attn_implementation="eager" or "flash_attention_2"')]
    # fixed: the release that declares it; or Llama, which declares sdpa in 4.36.2
    assert aic202(REGISTRY, pins={"transformers": "4.37.0"}) == []
    assert aic202(REGISTRY.replace('build_model("mistral"', 'build_model("llama"'),
                  pins={"transformers": "4.36.2"}) == []


def test_a_pin_range_names_the_failing_releases():
    got = aic202(REGISTRY, pins={"transformers": ">=4.36,<4.38"})
    assert len(got) == 1
    assert "raises ValueError in transformers 4.36.0–4.36.2:" in got[0][2]
    assert "(pins allow transformers 4.36.0–4.37.2)" in got[0][2]


CLI = '''\
import argparse

import torch
from transformers import AutoTokenizer, Gemma2ForCausalLM


def parse_args():
    parser = argparse.ArgumentParser(description="Evaluate Gemma 2")
    parser.add_argument("--model", default="google/gemma-2-9b")
    parser.add_argument("--attn-implementation", default="sdpa", choices=["eager", "sdpa", "flash_attention_2"])
    return parser.parse_args()


def main():
    args = parse_args()
    tok = AutoTokenizer.from_pretrained(args.model)
    model = Gemma2ForCausalLM.from_pretrained(
        args.model,
        torch_dtype=torch.bfloat16,
        attn_implementation=args.attn_implementation,
    )
    return tok, model


if __name__ == "__main__":
    main()
'''


def test_cli_argparse_default():
    got = aic202(CLI, pins={"transformers": "5.21.0"})
    assert got == [(20, 9, 'Gemma2ForCausalLM.from_pretrained: attn_implementation="sdpa" raises ValueError in '
                           'transformers 5.21.0: "Gemma2ForCausalLM does not support an attention implementation '
                           'through torch.nn.functional.scaled_dot_product_attention yet." (pins allow transformers '
                           '5.21.0); use attn_implementation="eager" or "flash_attention_2" or "flex_attention"')]
    assert aic202(CLI.replace('default="sdpa"', 'default="eager"'), pins={"transformers": "5.21.0"}) == []
    assert aic202(CLI, pins={"transformers": "5.20.2"}) == []  # before 5.21.0 Gemma 2 declared sdpa


CONFIG = '''\
import torch
import transformers

TRAIN_CONFIG = {
    "model_name": "gpt2",
    "load": {"torch_dtype": torch.float16, "use_flash_attention_2": True},
}


def load(config):
    return transformers.GPT2LMHeadModel.from_pretrained(config["model_name"], **config["load"])


model = load(TRAIN_CONFIG)
'''


def test_flag_from_a_config_dict_before_attn_implementation():
    got = aic202(CONFIG, pins={"transformers": "4.35.2"})
    assert len(got) == 1
    line, col, msg = got[0]
    assert (line, col) == (11, 79)  # the ``**`` that passes it
    assert msg == ('GPT2LMHeadModel.from_pretrained: use_flash_attention_2=True raises ValueError in transformers '
                   '4.35.2: "The current architecture does not support Flash Attention 2.0." (pins allow transformers '
                   '4.35.2); use transformers>=4.40.0 (where GPT2LMHeadModel declares flash_attention_2), or drop '
                   'use_flash_attention_2=True (eager attention)')
    assert aic202(CONFIG.replace(', "use_flash_attention_2": True', ""), pins={"transformers": "4.35.2"}) == []


def test_flex_attention_one_release_early():
    code = ('from transformers import LlamaForCausalLM\n'
            'model = LlamaForCausalLM.from_pretrained("meta-llama/Llama-3.2-1B", attn_implementation="flex_attention")\n')
    got = aic202(code, pins={"transformers": "4.47.1"})
    assert [m for _l, _c, m in got] == [
        'LlamaForCausalLM.from_pretrained: attn_implementation="flex_attention" raises ValueError in transformers '
        '4.47.1: "LlamaForCausalLM does not support an attention implementation through torch\'s flex_attention." '
        '(pins allow transformers 4.47.1); use transformers>=4.48.0 (where LlamaForCausalLM declares flex_attention), '
        'or attn_implementation="eager" or "sdpa" or "flash_attention_2"']
    assert aic202(code, pins={"transformers": "4.48.0"}) == []


def test_release_semantics_4_55_sdpa_is_eager_at_init():
    code = ('from transformers.models.t5.modeling_t5 import T5ForConditionalGeneration\n'
            'model = T5ForConditionalGeneration.from_pretrained("t5-small", attn_implementation="sdpa")\n')
    # 4.55: get_correct_attn_implementation turns the request into eager when the model is built
    assert aic202(code, pins={"transformers": "4.55.0"}) == []
    got = aic202(code, pins={"transformers": "4.56.0"})
    assert len(got) == 1 and "use transformers>=5.15.0 (where T5ForConditionalGeneration declares sdpa)" in got[0][2]
    assert aic202(code.replace('"sdpa"', '"eager"'), pins={"transformers": "4.56.0"}) == []


def test_unpinned_is_judged_on_the_newest_release():
    code = ('import transformers\n'
            'model = transformers.T5ForConditionalGeneration.from_pretrained("t5-small", '
            'attn_implementation="flash_attention_2")\n')
    got = aic202(code)
    assert len(got) == 1
    assert "(transformers unpinned: judged on the newest release 5.24.0)" in got[0][2]
    assert got[0][2].endswith('use attn_implementation="eager" or "sdpa" or "flex_attention"')
    assert aic202(code.replace("flash_attention_2", "sdpa")) == []


def test_unknown_stays_silent():
    # an Auto class with a hub id: which class it builds is not known offline
    auto = ('from transformers import AutoModelForCausalLM\n'
            'model = AutoModelForCausalLM.from_pretrained("mistralai/Mistral-7B-v0.1", attn_implementation="sdpa")\n')
    assert aic202(auto, pins={"transformers": "4.36.2"}) == []
    # the default request never raises: it falls back to eager
    default = ('from transformers import MistralForCausalLM\n'
               'model = MistralForCausalLM.from_pretrained("mistralai/Mistral-7B-v0.1")\n')
    assert aic202(default, pins={"transformers": "4.36.2"}) == []
    # an implementation the value model does not know (a parameter nobody passes)
    param = ('from transformers import MistralForCausalLM\n\n\n'
             'def load(path, attn):\n'
             '    return MistralForCausalLM.from_pretrained(path, attn_implementation=attn)\n')
    assert aic202(param, pins={"transformers": "4.36.2"}) == []


def test_a_caught_value_error_is_handled():
    bare = ('from transformers import MistralForCausalLM\n\n\n'
            'def load(path):\n'
            '    return MistralForCausalLM.from_pretrained(path, attn_implementation="sdpa")\n')
    assert len(aic202(bare, pins={"transformers": "4.36.2"})) == 1
    guarded = ('from transformers import MistralForCausalLM\n\n\n'
               'def load(path):\n'
               '    try:\n'
               '        return MistralForCausalLM.from_pretrained(path, attn_implementation="sdpa")\n'
               '    except ValueError:\n'
               '        return MistralForCausalLM.from_pretrained(path, attn_implementation="eager")\n')
    assert aic202(guarded, pins={"transformers": "4.36.2"}) == []


def test_a_value_the_release_refuses_is_said_once():
    code = ('from transformers import MistralForCausalLM\n'
            'model = MistralForCausalLM.from_pretrained("x", attn_implementation="flash_attention_3")\n')
    got = aic202(code, pins={"transformers": "4.45.0"})
    assert len(got) == 1 and "is not accepted by transformers 4.45.0 (accepted from 4.53.0 on)" in got[0][2]


CAPABILITY = '''\
import torch
from transformers import MistralForCausalLM

ATTN = "flash_attention_2" if torch.cuda.get_device_capability()[0] >= 8 else "sdpa"
model = MistralForCausalLM.from_pretrained("mistralai/Mistral-7B-v0.1", torch_dtype=torch.float16, attn_implementation=ATTN)
'''


def test_a_choice_by_gpu_fails_where_it_picks_the_implementation():
    diags = [d for d in lint(CAPABILITY, gpus=("sm_75", "sm_80"), pins={"transformers": "4.36.2"}) if d.code == "AIC202"]
    assert len(diags) == 1
    assert 'attn_implementation="sdpa" raises ValueError in transformers 4.36.2, where the code picks it on ' \
           'sm_75:' in diags[0].message
    assert "sm_75" in " ".join(diags[0].targets) and "sm_80" not in " ".join(diags[0].targets)
    fixed = CAPABILITY.replace('else "sdpa"', 'else "eager"')
    assert aic202(fixed, gpus=("sm_75", "sm_80"), pins={"transformers": "4.36.2"}) == []
