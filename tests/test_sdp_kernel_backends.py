"""The legacy ``torch.backends.cuda.sdp_kernel(enable_flash=..., enable_math=...,
enable_mem_efficient=...)`` restricts SDPA's backends as ``sdpa_kernel([...])`` does, in
every release that has it (issue 27 item 2): the flags are read through config dicts,
module constants and positionally, each flag defaulting to True (attention.toml
[sdpa_context."torch.backends.cuda.sdp_kernel"], from the 2.0.0-2.14.1 wheels)."""
from conftest import lint

PRE = '''\
import torch
import torch.nn.functional as F


def attend(b=2, h=16, s=1024):
    q = torch.randn(b, h, s, 192, device="cuda", dtype=torch.bfloat16)
    k = torch.randn(b, h, s, 192, device="cuda", dtype=torch.bfloat16)
    v = torch.randn(b, h, s, 128, device="cuda", dtype=torch.bfloat16)
'''


def _lines(code, pin, gpus=("H100",), select=("AIC101",)):
    return [d.line for d in lint(code, gpus=gpus, pins={"torch": pin}, select=list(select))]


def test_config_dict_splat():
    code = ("FLASH_CFG = dict(enable_flash=True, enable_math=False, enable_mem_efficient=False)\n" + PRE +
            "    with torch.backends.cuda.sdp_kernel(**FLASH_CFG):\n"
            "        return F.scaled_dot_product_attention(q, k, v)\n\n\nattend()\n")
    assert _lines(code, "2.2.2") == [11]
    # from 2.3.0 enable_cudnn (default True) leaves cuDNN on: not flash alone
    assert _lines(code, "2.5.1") == []
    assert _lines(code.replace("enable_mem_efficient=False)", "enable_mem_efficient=False, enable_cudnn=False)"),
                  "2.5.1") == [11]
    assert _lines(code.replace("enable_math=False", "enable_math=True"), "2.2.2") == []  # the twin


def test_flags_from_constants_and_positionally():
    code = ("USE_MATH = False\n" + PRE +
            "    with torch.backends.cuda.sdp_kernel(enable_math=USE_MATH, enable_mem_efficient=USE_MATH):\n"
            "        a = F.scaled_dot_product_attention(q, k, v)\n"
            "    with torch.backends.cuda.sdp_kernel(True, False, False, False):\n"
            "        b = F.scaled_dot_product_attention(q, k, v)\n"
            "    return a, b\n\n\nattend()\n")
    assert _lines(code, "2.5.1") == [13]  # the positional one turns cuDNN off too
    assert _lines(code, "2.2.2")[:1] == [11]  # (four positionals are a TypeError there: AIC202)
    assert _lines(code.replace("USE_MATH = False", "USE_MATH = True").replace("True, False, False, False",
                                                                            "True, True, False, False"),
                  "2.5.1") == []


def test_helper_context_manager_and_aic106():
    code = ("def flash_only():\n"
            "    return torch.backends.cuda.sdp_kernel(**{'enable_math': False, 'enable_mem_efficient': False})\n"
            + PRE.replace("import torch\nimport torch.nn.functional as F\n", "") +
            "    with flash_only():\n"
            "        return F.scaled_dot_product_attention(q, k, v)\n\n\nattend()\n")
    code = "import torch\nimport torch.nn.functional as F\n" + code
    assert _lines(code, "2.2.2") == [12]
    # flash alone on Blackwell before 2.7: the flash backend's [sm80, sm90] range (AIC106)
    assert _lines(code, "2.2.2", gpus=("B200",), select=("AIC106",)) == [12]


def test_unknown_flags_stay_unknown():
    code = ("import sys\n" + PRE +
            "    with torch.backends.cuda.sdp_kernel(enable_math='--math' in sys.argv, enable_mem_efficient=False):\n"
            "        return F.scaled_dot_product_attention(q, k, v)\n\n\nattend()\n")
    assert _lines(code, "2.2.2") == []
