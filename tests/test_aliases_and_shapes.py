"""Name resolution through imports/aliases, and head-dim inference."""
import textwrap

import pytest
from conftest import codes, lint

SDPA_FORCED = "with sdpa_kernel(SDPBackend.FLASH_ATTENTION):\n    {call}\n"


@pytest.mark.parametrize("imports,call", [
    ("import torch.nn.functional as F", "F.scaled_dot_product_attention(q, q, v)"),
    ("from torch.nn import functional as F", "F.scaled_dot_product_attention(q, q, v)"),
    ("import torch", "torch.nn.functional.scaled_dot_product_attention(q, q, v)"),
    ("from torch.nn.functional import scaled_dot_product_attention as attn", "attn(q, q, v)"),
    ("from torch.nn.functional import *", "scaled_dot_product_attention(q, q, v)"),
    ("import torch.nn.functional as F\nATTN = F.scaled_dot_product_attention", "ATTN(q, q, v)"),
    ("import torch.nn.functional as F", "F.scaled_dot_product_attention(query=q, key=q, value=v)"),
])
def test_sdpa_aliases(imports, call):
    code = ("import torch\nfrom torch.nn.attention import sdpa_kernel, SDPBackend\n" + imports + "\n"
            "q = torch.randn(2, 8, 128, 64)\nv = torch.randn(2, 8, 128, 32)\n" + SDPA_FORCED.format(call=call))
    assert codes(lint(code, pins={"torch": "2.4.0"})) == ["AIC101"]


@pytest.mark.parametrize("imports,call", [
    ("from flash_attn import flash_attn_func as fa", "fa(q, k, v)"),
    ("import flash_attn", "flash_attn.flash_attn_func(q, k, v)"),
    ("from flash_attn import *", "flash_attn_func(q, k, v)"),
    ("from flash_attn.flash_attn_interface import flash_attn_varlen_func", "flash_attn_varlen_func(q, k, v, cu, cu, 128, 128)"),
    ("import flash_attn.flash_attn_interface as fai", "fai.flash_attn_func(q=q, k=k, v=v)"),
])
def test_fa2_aliases(imports, call):
    code = (imports + "\nimport torch\nq = torch.randn(2, 128, 8, 96)\nk = torch.randn(2, 128, 8, 96)\n"
            "v = torch.randn(2, 128, 8, 64)\nout = " + call + "\n")
    d = lint(code)
    assert codes(d) == ["AIC101"] and "V head dim 64 != QK head dim 96" in d[0].message


def test_function_local_import_and_shapes():
    code = textwrap.dedent("""
        import torch

        def attention(batch, seqlen):
            from flash_attn import flash_attn_func
            HEAD_DIM = 128
            q = torch.empty(batch, seqlen, 16, HEAD_DIM, dtype=torch.bfloat16)
            v = q.new_empty(1)
            k = torch.zeros_like(q)
            v = torch.randn(batch * seqlen, 16 * 64).view(batch, seqlen, 16, 64)
            return flash_attn_func(q, k, v)
    """)
    d = lint(code)
    assert "V head dim 64 != QK head dim 128" in d[0].message


def test_kvpacked():
    code = ("from flash_attn import flash_attn_kvpacked_func\nimport torch\n"
            "q = torch.randn(2, 64, 8, 128)\nkv = torch.randn(2, 64, 2, 8, 64)\nflash_attn_kvpacked_func(q, kv)\n")
    assert "K/V head dim 64 != Q head dim 128" in lint(code)[0].message


def test_transpose_and_permute_follow_the_last_dim():
    code = textwrap.dedent("""
        import torch
        import torch.nn.functional as F
        from torch.nn.attention import sdpa_kernel, SDPBackend
        q = torch.randn(2, 128, 8, 64).transpose(1, 2)
        v = torch.randn(2, 8, 32, 128).permute(0, 1, 3, 2)
        with sdpa_kernel([SDPBackend.FLASH_ATTENTION]):
            F.scaled_dot_product_attention(q, q, v)
    """)
    d = lint(code, pins={"torch": "2.4.0"})
    assert "V head dim 32 != QK head dim 64" in d[0].message
    # transpose(2, 3) moves the head dim away: 128 is no longer last, so nothing is known to differ wrongly.
    same = code.replace(".permute(0, 1, 3, 2)", "").replace("randn(2, 8, 32, 128)", "randn(2, 8, 128, 64)")
    assert lint(same, pins={"torch": "2.4.0"}) == []


@pytest.mark.parametrize("q_expr", [
    "torch.randn(*shape)",            # starred: unknown
    "torch.randn(b, s, h, d)",        # parameters: unknown dims
    "x.view(b, s, h, -1)",            # -1: unknown
    "load_tensor()",                  # a call we cannot see into
])
def test_unknown_dims_are_not_guessed(q_expr):
    code = textwrap.dedent(f"""
        import torch
        from flash_attn import flash_attn_func
        def f(x, shape, b, s, h, d):
            q = {q_expr}
            v = torch.randn(2, 128, 8, 64)
            return flash_attn_func(q, q, v)
    """)
    assert lint(code) == []


def test_unforced_backend_lists_that_allow_efficient_are_fine():
    code = textwrap.dedent("""
        import torch
        import torch.nn.functional as F
        from torch.nn.attention import sdpa_kernel, SDPBackend
        q = torch.randn(2, 8, 128, 64)
        v = torch.randn(2, 8, 128, 32)
        with sdpa_kernel([SDPBackend.FLASH_ATTENTION, SDPBackend.EFFICIENT_ATTENTION]):
            F.scaled_dot_product_attention(q, q, v)
        with sdpa_kernel(SDPBackend.MATH):
            F.scaled_dot_product_attention(q, q, v)
    """)
    assert lint(code, pins={"torch": "2.4.0"}) == []


def test_unrelated_names_are_not_resolved_to_rules():
    code = textwrap.dedent("""
        import torch
        def flash_attn_func(q, k, v):
            return q
        q = torch.randn(2, 128, 8, 192)
        v = torch.randn(2, 128, 8, 128)
        flash_attn_func(q, q, v)
        class M:
            def scaled_dot_product_attention(self, q, k, v):
                return q
        M().scaled_dot_product_attention(q, q, v)
    """)
    assert lint(code) == []
