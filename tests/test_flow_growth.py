"""Reaching definitions stay linear in long if-chains (issue 11 cost). Backend
selectors written like TransformerEngine's get_attention_backend (1,300 lines, 213
ifs) rebind a handful of flags under nested conditions; each if whose arm held a
nested if that rebinds a flag doubled the flag's definitions (4.2 GB, 130 s on that
file). Counted, not timed: the definitions the flow model holds for the flag."""

from __future__ import annotations

import libcst as cst
from conftest import lint

from aicompat.model.flow import build_scope

BLOCK = '''
    if use_flash_attention and head_dim_{i} > 128:
        if window_size is not None:
            use_flash_attention = False
'''


def _selector(n: int) -> str:
    return ("def get_backend(head_dims, window_size):\n    use_flash_attention = True\n"
            + "".join(BLOCK.format(i=i) for i in range(n)) + "    return use_flash_attention\n")


def _defs_at_end(n: int) -> int:
    fn = cst.parse_module(_selector(n)).body[0]
    scope = build_scope(fn, None, lambda call: False)
    _value, ret, _conds = scope.returns[0]
    return len(scope.env_at[id(ret)]["use_flash_attention"])


def test_definitions_grow_linearly_with_the_chain():
    counts = [_defs_at_end(n) for n in (6, 12)]
    # one True plus one False per block at most: the True reaches by many paths, once
    assert counts[0] <= 7 and counts[1] <= 13, counts


SELECTOR = '''import torch
from flash_attn_interface import flash_attn_func


def select_backend(head_dim, verbose, window):
    use_fa3 = True
    if {guard}:
        use_fa3 = False
    for _ in range(3):
        if head_dim > 256:
            if verbose:
                use_fa3 = False
        if window is not None:
            if window[0] > 0:
                if verbose:
                    use_fa3 = use_fa3 and head_dim <= 128
    return use_fa3


def attend(q, k, v, verbose=False, window=None):
    if select_backend(q.shape[-1], verbose, window):
        return flash_attn_func(q, k, v, causal=True)
    return torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)
'''


def test_a_capability_flag_survives_later_nested_rebinding():
    # The True of use_fa3 reaches the return along several paths; merged into one
    # definition it must still hold only where the capability test let it through.
    fixed = SELECTOR.replace("{guard}", "torch.cuda.get_device_capability()[0] != 9")
    assert [d.code for d in lint(fixed, gpus=["T4", "H100"])] == []


def test_the_same_selector_without_the_capability_test_is_reported():
    broken = SELECTOR.replace("{guard}", "verbose is None")
    got = [(d.code, d.line, d.column) for d in lint(broken, gpus=["T4", "H100"])]
    assert got == [("AIC106", 22, 16)]
