"""The version matrix: schema validation names file and entry; every entry has provenance."""
import shutil

import pytest

from aicompat.base.data import data_dir
from aicompat.base.errors import MatrixError
from aicompat.base.toml_compat import tomllib
from aicompat.matrix import SCHEMAS, load_matrix


def test_every_entry_has_a_source(matrix):
    for fname, sections in SCHEMAS.items():
        doc = matrix.files[fname]
        for section in sections:
            entries = {"default": doc[section]} if section == "default" else doc.get(section, {})
            assert entries, f"{fname} has no [{section}] entries"
            for key, e in entries.items():
                assert e.get("source", "").strip(), f"{fname} [{section}.{key}] lacks a source"


def test_gpu_table_covers_the_documented_names(matrix):
    for name, arch in {"a100": "sm_80", "a10": "sm_86", "a40": "sm_86", "rtx 3090": "sm_86", "l4": "sm_89",
                       "l40s": "sm_89", "rtx 4090": "sm_89", "h100": "sm_90", "h200": "sm_90", "gh200": "sm_90",
                       "b200": "sm_100", "gb200": "sm_100", "b300": "sm_103", "gb300": "sm_103", "rtx 5090": "sm_120",
                       "rtx pro 6000": "sm_120", "dgx spark": "sm_121"}.items():
        assert matrix.gpu_names[name] == arch
    assert {"sm_75", "sm_80", "sm_86", "sm_89", "sm_90", "sm_100", "sm_103", "sm_120", "sm_121"} <= set(matrix.archs)


def test_capability_is_not_a_total_order(matrix):
    # sm_120 is newer than sm_100 but lacks MXFP8 in Transformer Engine.
    assert "sm_100" in matrix.feature_archs("te_mxfp8") and "sm_120" not in matrix.feature_archs("te_mxfp8")
    assert matrix.feature_archs("fa3_different_vhead") == frozenset({"sm_90"})


def test_releases_are_sorted_and_known(matrix):
    rel = matrix.releases("torch")
    assert rel == sorted(rel) and str(rel[0]) == "2.0.0"
    assert {"2.4.0", "2.6.0", "2.13.0"} <= {str(v) for v in rel}


def _copy(tmp_path):
    dst = tmp_path / "vm"
    shutil.copytree(data_dir("version_matrix"), dst)
    return dst


@pytest.mark.parametrize("fname,old,new,needle", [
    ("gpus.toml", 'generation = "Hopper"', "", "version_matrix/gpus.toml: [arch.sm_90]: missing 'generation'"),
    ("hardware.toml", 'archs = ["sm_90"]', 'archs = ["sm_95"]', "[feature.fa3_different_vhead] unknown arch(s) ['sm_95']"),
    ("fp8.toml", 'added = "2.7.0"\nkind', 'added = 2.7\nkind', "[dtype.torch.float8_e8m0fnu]: 'added' must be str"),
    ("attention.toml", 'feature = "fa3_different_vhead"\nerror = "If', 'feature = "nope"\nerror = "If',
     "[vhead.fa3] unknown feature 'nope'"),
    ("releases.toml", '"2.0.0", ', '"two", ', "[package.torch] bad version 'two'"),
    # A world carries only its torch release: a symbol of another package would never be read.
    ("symbols.toml", '[symbol."torch._scaled_mm"]\npackage = "torch"',
     '[symbol."flash_attn.flash_attn_with_kvcache"]\npackage = "flash-attn"',
     "[symbol.flash_attn.flash_attn_with_kvcache] only torch symbols are read (package 'flash-attn')"),
    # Fields nothing reads are not data: the schema refuses them.
    ("symbols.toml", 'package = "torch"\nadded = "2.1.0"', 'package = "torch"\nkind = "function"\nadded = "2.1.0"',
     "[symbol.torch._scaled_mm]: unknown field(s) kind"),
])
def test_schema_errors_name_file_and_entry(tmp_path, fname, old, new, needle):
    d = _copy(tmp_path)
    text = (d / fname).read_text()
    assert old in text
    (d / fname).write_text(text.replace(old, new, 1))
    with pytest.raises(MatrixError) as exc:
        load_matrix(d)
    assert needle in str(exc.value)


@pytest.mark.parametrize("old,new,needle", [
    ('enables = "list"\n\n[schema.call]', 'enables = "lst"\n\n[schema.call]', "[schema.attribute] enables: unknown type 'lst'"),
    ('enables = [true]\n', 'enables = true\n', '[attribute.torch.backends.cuda.matmul.allow_tf32]: \'enables\' must be list'),
    ('[call."torch.set_float32_matmul_precision"]\nenables', '[calls."torch.set_float32_matmul_precision"]\nenables',
     "section(s) calls have no [schema.*]"),
    ('source = "torch 2.13.0 wheel torch/__init__.py', 'note = "torch 2.13.0 wheel torch/__init__.py',
     "[call.torch.set_float32_matmul_precision]: missing 'source'"),
])
def test_a_rules_own_data_file_is_checked_by_its_own_schema(tmp_path, old, new, needle):
    # A data file not in SCHEMAS (a rule's own, as tools/new_rule.py writes) declares [schema.*].
    d = _copy(tmp_path)
    text = (d / "tf32.toml").read_text()
    assert old in text
    (d / "tf32.toml").write_text(text.replace(old, new, 1))
    with pytest.raises(MatrixError) as exc:
        load_matrix(d)
    assert needle in str(exc.value)


def test_missing_source_is_rejected(tmp_path):
    d = _copy(tmp_path)
    text = (d / "hardware.toml").read_text()
    start = text.index("[feature.te_nvfp4]")
    src = text.index("source =", start)
    end = text.index("\n", src)
    (d / "hardware.toml").write_text(text[:src] + text[end + 1:])
    with pytest.raises(MatrixError, match=r"\[feature.te_nvfp4\]: missing 'source'"):
        load_matrix(d)


def test_matrix_files_are_plain_toml():
    for path in sorted(data_dir("version_matrix").glob("*.toml")):
        with open(path, "rb") as fh:
            tomllib.load(fh)
