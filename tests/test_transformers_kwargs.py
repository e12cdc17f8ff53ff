"""transformers from_pretrained keywords per release (version_matrix/transformers_kwargs.toml,
tools/read_transformers_kwargs.py): a keyword a release no longer reads reaches the model
class's __init__ (AIC202: TypeError), one it warns is deprecated is AIC203. Every failing case
has a fixed twin that is clean."""
from pathlib import Path

from conftest import lint

from aicompat.base.toml_compat import tomllib

ROOT = Path(__file__).resolve().parent.parent


def found(code, pin=None, select=("AIC202", "AIC203")):
    diags = lint(code, pins={"transformers": pin} if pin else {}, select=list(select))
    return [(d.code, d.line, d.column, d.message) for d in diags]


# A model-loading helper fed from an argparse namespace.
LOADER = '''\
import argparse

import torch
from transformers import AutoModelForCausalLM, BitsAndBytesConfig


def load_model(name, **kwargs):
    return AutoModelForCausalLM.from_pretrained(name, device_map="auto", **kwargs)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--model", default="meta-llama/Llama-3.1-8B")
    parser.add_argument("--hf-token", default=None)
    parser.add_argument("--int8", action="store_true")
    args = parser.parse_args()
{body}
    return load_model(args.model, **load_kwargs)
'''

OLD = '''\
    load_kwargs = {"use_auth_token": args.hf_token, "load_in_8bit": args.int8}
'''
NEW = '''\
    load_kwargs = {"token": args.hf_token, "dtype": torch.bfloat16}
    if args.int8:
        load_kwargs["quantization_config"] = BitsAndBytesConfig(load_in_8bit=True)
'''


def test_removed_keywords_reach_the_model_class_on_5x():
    code = LOADER.format(body=OLD)
    assert found(code, "5.0.0") == [  # at the ``**kwargs`` splat that passes them
        ("AIC202", 8, 74, "AutoModelForCausalLM.from_pretrained: transformers 5.0.0 does not read load_in_8bit (read "
                          "in 4.30.0–4.57.6): it is handed to the model class, whose __init__ raises TypeError "
                          "(unexpected keyword argument 'load_in_8bit'); use "
                          "quantization_config=BitsAndBytesConfig(load_in_8bit=True)"),
        ("AIC202", 8, 74, "AutoModelForCausalLM.from_pretrained: transformers 5.0.0 does not read use_auth_token (read "
                          "in 4.30.0–4.57.6): it is handed to the model class, whose __init__ raises TypeError "
                          "(unexpected keyword argument 'use_auth_token'); use token=..."),
    ]
    assert found(LOADER.format(body=NEW), "5.0.0") == []  # fixed twin


def test_the_same_keywords_warn_on_4x():
    got = found(LOADER.format(body=OLD), "4.45.0")
    assert [(c, ln) for c, ln, _, _ in got] == [("AIC203", 8), ("AIC203", 8)]
    assert got[1][3] == ('from_pretrained(use_auth_token=...) is deprecated since transformers 4.31.0 (warns in 4.45.0: '
                         '"The `use_auth_token` argument is deprecated and will be removed in v5 of Transformers. Please '
                         'use `token` instead."); use token=...')
    assert got[0][3].startswith("from_pretrained(load_in_8bit=...) is deprecated since transformers 4.38.0 (warns in "
                                "4.45.0: \"The `load_in_4bit` and `load_in_8bit` arguments are deprecated")
    assert found(LOADER.format(body=NEW), "4.45.0") == []


def test_unpinned_is_judged_on_the_newest_release():
    code = 'from transformers import AutoModel\nm = AutoModel.from_pretrained("x", use_auth_token="hf_x")\n'
    (only,) = found(code)
    assert only[:3] == ("AIC202", 2, 36)
    assert only[3].endswith("; use token=...; transformers unpinned: judged on the newest release 5.24.0")
    assert "unless it takes **kwargs (in 5.24.0 only Ernie4_5_VL_MoeForConditionalGeneration, ZayaForCausalLM do)" \
        in only[3]
    assert found(code.replace("use_auth_token", "token")) == []


FA2 = '''\
from transformers import LlamaForCausalLM


def build(path):
    return LlamaForCausalLM.from_pretrained(path, {kw})
'''


def test_use_flash_attention_2_before_during_and_after():
    code = FA2.format(kw="use_flash_attention_2=True")
    # not read yet in 4.33 (read from 4.34.0): TypeError in the model's __init__; the fix is the release
    (before,) = found(code, "4.33.0")
    assert before[0] == "AIC202" and before[3].endswith(
        "does not read use_flash_attention_2 (read in 4.34.0–4.52.4): it is handed to the model class, whose "
        "__init__ raises TypeError (unexpected keyword argument 'use_flash_attention_2'); pin transformers>=4.34.0")
    # read and deprecated (the hand-read warning, deprecations.toml) in 4.40
    assert [c for c, *_ in found(code, "4.40.0")] == ["AIC203"]
    # no longer read from 4.53.0: AIC202 only (the deprecation is over)
    (after,) = found(code, "4.55.0")
    assert after[:3] == ("AIC202", 5, 51)
    assert "does not read use_flash_attention_2 (read in 4.34.0–4.52.4)" in after[3]
    fixed = FA2.format(kw='attn_implementation="flash_attention_2"')
    assert found(fixed, "4.55.0") == [] and found(fixed, "4.40.0") == []


def test_remote_code_and_literals_that_do_not_warn():
    remote = ('from transformers import AutoModelForCausalLM\n'
              'm = AutoModelForCausalLM.from_pretrained("x", trust_remote_code=True, load_in_8bit=True)\n')
    assert found(remote, "5.0.0") == []  # the checkpoint's own class: what its __init__ takes is unknown
    off = 'from transformers import AutoModelForCausalLM\nm = AutoModelForCausalLM.from_pretrained("x", load_in_8bit=False)\n'
    assert found(off, "4.45.0") == []  # `if load_in_4bit or load_in_8bit:` never warns for False
    assert [c for c, *_ in found(off, "5.0.0")] == ["AIC202"]  # but 5.x hands it on whatever its value


def test_torch_dtype_warns_only_where_from_pretrained_warns():
    code = 'import torch\nfrom transformers import AutoModel\nm = AutoModel.from_pretrained("x", torch_dtype=torch.float16)\n'
    assert [c for c, *_ in found(code, "4.57.6")] == ["AIC203"]
    assert found(code, "5.24.0") == []  # 5.x reads it "for BC" without a warning (modeling_utils.py L4156)
    assert found(code.replace("torch_dtype=", "dtype="), "4.57.6") == []


def test_table_reads_every_release():
    with open(ROOT / "version_matrix" / "transformers_kwargs.toml", "rb") as fh:
        t = tomllib.load(fh)
    with open(ROOT / "version_matrix" / "releases.toml", "rb") as fh:
        releases = tomllib.load(fh)["package"]["transformers"]["releases"]
    assert t["read"]["wheels"]["releases"] == releases
    assert len(t["read"]["wheels"]["files"]) == len(releases)
    kw = t["keyword"]
    assert kw["use_auth_token"]["read"] == ["4.30.0-4.57.6"] and kw["use_auth_token"]["warns"] == ["4.31.0-4.57.6"]
    assert kw["load_in_8bit"]["warns"] == ["4.38.0-4.57.6"] and kw["load_in_8bit"]["when"] == "truthy"
    assert kw["low_cpu_mem_usage"]["dropped"] == ["5.0.0-5.24.0"]  # popped and ignored ("Not used anymore")
