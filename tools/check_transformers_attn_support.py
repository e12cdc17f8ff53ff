"""Check version_matrix/model_classes/transformers.toml against the installed transformers: build a
tiny model of a few classes, save it, and load it back with each attention implementation; the
release must raise its "does not support" ValueError exactly where the table says it does.

    PYTHONPATH=/tmp/tf-4.36.2 python tools/check_transformers_attn_support.py

(transformers installed with ``pip install --target`` from its wheel; torch on the path, CPU is
enough: the class check runs before any kernel). Prints one line per load and exits 1 on a
disagreement. FlashAttention need not be installed: a class that declares it then fails with
ImportError (the package is missing), which is not the class check.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

import tomllib

ROOT = Path(__file__).resolve().parent.parent
TABLE = ROOT / "version_matrix" / "model_classes" / "transformers.toml"
SMALL = dict(hidden_size=32, intermediate_size=64, num_hidden_layers=1, num_attention_heads=4,
             num_key_value_heads=2, vocab_size=128, max_position_embeddings=64)
# class -> (config class, its tiny settings)
CASES = {
    "MistralForCausalLM": ("MistralConfig", SMALL),
    "LlamaForCausalLM": ("LlamaConfig", SMALL),
    "Gemma2ForCausalLM": ("Gemma2Config", dict(SMALL, head_dim=8)),
    "GPT2LMHeadModel": ("GPT2Config", dict(n_embd=32, n_layer=1, n_head=4, vocab_size=128, n_positions=64)),
    "T5ForConditionalGeneration": ("T5Config", dict(d_model=32, d_ff=64, d_kv=8, num_layers=1, num_heads=4,
                                                    vocab_size=128)),
}
IMPLS = ("sdpa", "flash_attention_2", "flex_attention")


def expected(t: dict, cls: str, impl: str, version: str) -> bool | None:
    """Does the table say an explicit request raises? None where it says nothing."""
    sys.path.insert(0, str(ROOT / "src"))
    from aicompat.rules.model_attn_support import _Table

    table = _Table(t)
    if version not in table.at:
        return None
    i = table.at[version]
    declares = table.declares(cls, impl, i)
    if declares is None:
        return None
    return table.check(impl, i) is not None and not declares


def main() -> int:
    import transformers

    version = transformers.__version__
    with open(TABLE, "rb") as fh:
        t = tomllib.load(fh)
    bad = 0
    for cls_name, (config_name, settings) in CASES.items():
        cls = getattr(transformers, cls_name, None)
        if cls is None:
            continue
        config = getattr(transformers, config_name)(**settings)
        with tempfile.TemporaryDirectory() as tmp:
            try:
                cls._from_config(config, attn_implementation="eager").save_pretrained(tmp)
            except TypeError:  # 4.35: no attn_implementation yet
                cls(config).save_pretrained(tmp)
            requests = [("use_flash_attention_2", True, "flash_attention_2")] if version < "4.36" else \
                [("attn_implementation", impl, impl) for impl in IMPLS]
            for keyword, value, impl in requests:
                want = expected(t, cls_name, impl, version)
                try:
                    cls.from_pretrained(tmp, **{keyword: value})
                    got, why = False, "loaded"
                except ValueError as exc:
                    got, why = "does not support" in str(exc), str(exc).split(". ")[0][:110]
                except Exception as exc:  # noqa: BLE001 - anything else is not the class check
                    got, why = False, f"{type(exc).__name__}: {str(exc)[:80]}"
                agree = want is None or want == got
                bad += not agree
                print(f"{version} {cls_name} {keyword}={value!r}: table {want}, raised {got} "
                      f"[{'ok' if agree else 'DISAGREE'}] {why}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
