"""AIC106 attention-kernel-limits: what a FlashAttention kernel refuses whatever
the V head dim (AIC101 covers V != QK): the GPUs its device check accepts in the
releases in scope, and the largest head dim (facts: version_matrix/attention.toml
[limit.*], read in every flash-attn tag)."""

from __future__ import annotations

from ...core.ruleapi import UNKNOWN, Example, Finding, Rule, Tensor, dotted
from .._shared.attention_alias import Aliases, narrowed
from .._shared.attention_spans import accepted as _accepted
from .._shared.attention_spans import accepts as _accepts
from .._shared.attention_spans import q_values as _q_values
from .._shared.attention_spans import releases_in_scope
from .._shared.attention_spans import span_of as _span
from .builds import build_targets
from .cudnn import sdpa_cudnn_gate, sdpa_cudnn_head_dim
from .heads import backward_head_dim, sdpa_capability, sdpa_head_dim
from .transformers import TransformersFlash

_FA2 = "from flash_attn import flash_attn_func\n\n\n"


_FA3_FP8 = ("import torch\nfrom flash_attn_interface import flash_attn_func\n\n\n"
            "def quantize(x):\n    return x.to(torch.float8_e4m3fn)\n\n\n"
            "def attend(q, k, v, use_fp8):\n"
            "    if use_fp8:\n        q, k, v = quantize(q), quantize(k), quantize(v)\n"
            "    return flash_attn_func(q, k, v, causal=True)\n\n\n"
            "x = torch.randn(2, 128, 16, 128, device='cuda', dtype=torch.bfloat16)\n"
            "out = attend(x, x, x, use_fp8={flag})\n")


_SDPA_WIDE = ("import torch\nimport torch.nn.functional as F\nfrom torch.nn.attention import SDPBackend, sdpa_kernel\n\n"
              "CFG = {{\"heads\": 4, \"head_dim\": 512}}\n\n\n"
              "def attend(x, cfg):\n"
              "    q = x.view(x.shape[0], x.shape[1], cfg[\"heads\"], cfg[\"head_dim\"]).transpose(1, 2)\n"
              "{body}\n\n"
              "attend(torch.randn(2, 128, 2048, device='cuda', dtype=torch.bfloat16), CFG)\n")
_FORCED = "    with sdpa_kernel({backends}):\n        return F.scaled_dot_product_attention(q, q, q)"

_SDPA_TRAIN = ("import torch\nimport torch.nn.functional as F\nfrom torch import nn\n"
               "from torch.nn.attention import SDPBackend, sdpa_kernel\n\n\n"
               "class Block(nn.Module):\n"
               "    def __init__(self, dim=1600, heads=8):\n"
               "        super().__init__()\n"
               "        self.heads, self.qkv = heads, nn.Linear(dim, 3 * dim)\n\n"
               "    def forward(self, x):\n"
               "        b, s, d = x.shape\n"
               "        q, k, v = self.qkv(x).view(b, s, 3, self.heads, d // self.heads)"
               ".transpose(1, 3).unbind(2)\n"
               "        with sdpa_kernel(SDPBackend.FLASH_ATTENTION):\n"
               "            return F.scaled_dot_product_attention(q, k, v, is_causal=True)\n\n\n"
               "{decorator}def step(model, x):\n"
               "    out = model(x)\n"
               "{tail}\n\n"
               "step(Block().cuda(), torch.randn(4, 256, 1600, device='cuda', dtype=torch.bfloat16))\n")

_FA2_TRAIN = ("import torch\nfrom flash_attn import flash_attn_func\n\n"
              "ARGS = dict(head_dim=256, heads=8, attn_dropout=0.1)\n\n\n"
              "def loss_fn(q, k, v, p):\n"
              "    return flash_attn_func(q, k, v, dropout_p=p, causal=True).float().square().mean()\n\n\n"
              "q = torch.randn(2, 512, ARGS['heads'], ARGS['head_dim'], device='cuda', dtype=torch.bfloat16, "
              "requires_grad=True)\n"
              "loss_fn(q, q, q, ARGS['attn_dropout']).backward()\n")


class AttentionKernelLimits(Rule):
    code = "AIC106"
    # Most assignments set no attention-implementation attribute: where one runs is asked only
    # for those that do (transformers.py check_assign), not for every assignment of a file.
    reach_own = frozenset({"check_assign"})
    name = "attention-kernel-limits"
    tokens = (b"flash_attn", b"scaled_dot_product_attention", b"attn_implementation", b"use_flash_attention_2")

    VALID = [
        Example(_FA2 + "def attend(q, k, v):\n    return flash_attn_func(q, k, v, causal=True)\n",
                gpus=["A100", "H100", "B200"], pins={"flash-attn": "2.8.3"}),
        Example(_FA2 + "def attend(q, k, v):\n    return flash_attn_func(q, k, v, causal=True)\n",
                gpus=["A100", "H100"], pins={"flash-attn": "2.6.3"}),
        Example("import torch\n" + _FA2 + "q = torch.randn(2, 128, 8, 256, dtype=torch.bfloat16, device='cuda')\n"
                "out = flash_attn_func(q, q, q)\n", gpus=["H100"]),
        Example(_FA3_FP8.format(flag="torch.cuda.get_device_capability()[0] >= 9"), gpus=["A100", "H100"]),
        Example(_FA3_FP8.format(flag="True"), gpus=["H100"]),
        # SDPA left to choose falls back to a backend that takes head dim 512 (math).
        Example(_SDPA_WIDE.format(body="    return F.scaled_dot_product_attention(q, q, q)"), gpus=["H100"]),
        Example(_SDPA_WIDE.format(body=_FORCED.format(backends="[SDPBackend.FLASH_ATTENTION, "
                                                               "SDPBackend.EFFICIENT_ATTENTION]")), gpus=["H100"]),
        # No backward runs under no_grad: the training filter does not apply.
        Example(_SDPA_TRAIN.format(decorator="@torch.no_grad()\n", tail="    return out"), gpus=["A10", "H100"]),
        Example(_FA2_TRAIN, gpus=["A10", "H100"], pins={"flash-attn": "2.7.3"}),
        # Nothing in the file trains: the forward alone never meets the training filter.
        Example(_SDPA_TRAIN.format(decorator="", tail="    return out"), gpus=["A10", "H100"]),
    ]
    INVALID = [
        Example(_FA3_FP8.format(flag="True"), gpus=["A100", "H100"],
                findings=[
                    (12, 12, "flash_attn_func: FlashAttention 3 (flash-attn-3 3.0.0+g0251105a2) takes "
                             "torch.float8_e4m3fn inputs only on compute capability 9.0 and newer: \"FlashAttention "
                             "on Ampere/Ada cards only supports fp16 and bf16 data type\"; fails on sm_80 (A100). FP8 "
                             "attention needs Hopper or newer: cast q, k, v to bf16 on compute capability 8.x"),
                ]),
        Example(_FA2 + "def attend(q, k, v):\n    return flash_attn_func(q, k, v, causal=True)\n",
                gpus=["H100", "B200"], pins={"flash-attn": "2.6.3"},
                findings=[
                    (5, 12, "flash_attn_func: FlashAttention 2 (flash-attn 2.6.3) refuses sm_100 (B200): "
                            "\"FlashAttention only supports Ampere GPUs or newer.\"; its device check accepts "
                            "compute capability 8.x and 9.0 only; fails on sm_100 (B200). flash-attn >= 2.7.3 "
                            "accepts compute capability 8.0 and newer"),
                ]),
        Example(_FA2 + "def attend(q, k, v):\n    return flash_attn_func(q, k, v, causal=True)\n",
                gpus=["T4", "A100"],
                findings=[
                    (5, 12, "flash_attn_func: FlashAttention 2 (flash-attn 2.8.3.post2) refuses sm_75 (T4): "
                            "\"FlashAttention only supports Ampere GPUs or newer.\"; its device check accepts "
                            "compute capability 8.0 and newer; fails on sm_75 (T4). FlashAttention 2 needs an "
                            "Ampere or newer GPU: fall back to torch.nn.functional.scaled_dot_product_attention "
                            "there"),
                ]),
        Example("import torch\n" + _FA2 + "def attend(x, heads=8, head_dim=320):\n"
                "    q = x.view(x.shape[0], x.shape[1], heads, head_dim)\n"
                "    return flash_attn_func(q, q, q)\n\n\n"
                "attend(torch.randn(2, 128, 2560, dtype=torch.bfloat16, device='cuda'))\n", gpus=["H100"],
                findings=[
                    (7, 12, "flash_attn_func: head dim 320 is more than FlashAttention 2 supports (256): "
                            "\"FlashAttention forward only supports head dimension at most 256\"; fails on "
                            "sm_90 (H100)"),
                ]),
    ]

    INVALID += [
        Example(_SDPA_WIDE.format(body=_FORCED.format(backends="SDPBackend.FLASH_ATTENTION")), gpus=["H100"],
                findings=[
                    (11, 16, "scaled_dot_product_attention: head dim 512 is more than the flash backend of torch "
                             "2.15.0 accepts (256), and no other SDPA backend is enabled: \"Flash attention "
                             "requires q,k,v to have the same last dimension and to be less than or equal to 256.\"; "
                             "then \"No available kernel. Aborting execution.\"; fails on sm_90 (H100). Also allow "
                             "SDPBackend.EFFICIENT_ATTENTION or SDPBackend.MATH"),
                ]),
        Example(_SDPA_TRAIN.format(decorator="", tail="    out.float().mean().backward()"), gpus=["A10", "H100"],
                findings=[
                    (16, 20, "scaled_dot_product_attention: training with head dim 200 is refused by the flash "
                             "backend of torch 2.15.0, and no other SDPA backend is enabled: \"Flash attention "
                             "currently doesn't support training with head_dim ∈ (192, 224] or (head_dim ∈ (224, "
                             "256] and dropout > 0.0) on SM86-SM89 or SM120-SM121.\"; then \"No available kernel. "
                             "Aborting execution.\"; fails on sm_86 (A10). Also allow SDPBackend.EFFICIENT_ATTENTION "
                             "or SDPBackend.MATH"),
                ]),
        Example(_FA2_TRAIN, gpus=["A10", "H100"], pins={"flash-attn": "2.6.3"},
                findings=[
                    (8, 12, "flash_attn_func: the backward of FlashAttention 2 (flash-attn 2.6.3) takes head dim "
                            "256 and dropout only on compute capability 8.0 and 9.0: \"FlashAttention backward for "
                            "head dim > 192 with dropout requires A100/A800 or H100/H800\"; fails on sm_86 (A10). "
                            "flash-attn >= 2.7.3 has no such check"),
                ]),
    ]

    INVALID += [
        # torch 2.1: the flash backend took head dims up to 128 (multiples of 8) only.
        Example("import torch\nimport torch.nn.functional as F\n\n"
                "q = torch.randn(8, 12, 1024, 160, device='cuda', dtype=torch.float16)\n"
                "with torch.backends.cuda.sdp_kernel(enable_math=False, enable_mem_efficient=False):\n"
                "    out = F.scaled_dot_product_attention(q, q, q, is_causal=True)\n",
                gpus=["A100"], pins={"torch": "2.1.0"},
                findings=[
                    (6, 11, "scaled_dot_product_attention: head dim 160 is more than the flash backend of torch "
                            "2.1.0 accepts (128), and no other SDPA backend is enabled: \"Flash attention "
                            "requires q,k,v to have the same last dimension and to be a multiple of 8 and less than "
                            "or equal to 128.\"; then \"No available kernel. Aborting execution.\"; fails on "
                            "sm_80 (A100). Also allow SDPBackend.EFFICIENT_ATTENTION or SDPBackend.MATH"),
                ]),
    ]

    _SGL = ("import torch\nfrom sgl_kernel.flash_attn import flash_attn_with_kvcache\n\n\n"
            "def decode(q, k_cache, v_cache, cache_seqlens):\n"
            "{guard}    return flash_attn_with_kvcache(q, k_cache, v_cache, cache_seqlens=cache_seqlens, causal=True)\n")
    VALID += [
        # sgl-kernel 0.1.2 and later: no device check, kernels for 8.x and 9.x
        Example(_SGL.format(guard=""), gpus=["A100", "H100"]),
        Example(_SGL.format(guard="    if torch.cuda.get_device_capability()[0] >= 10:\n"
                                  "        raise NotImplementedError('sgl-kernel FA3 has no Blackwell kernels')\n"),
                gpus=["H100", "B200"]),
    ]
    INVALID += [
        Example(_SGL.format(guard=""), gpus=["H100", "B200"],
                findings=[
                    (6, 12, "flash_attn_with_kvcache: sgl-kernel FlashAttention 3 (sglang-kernel 0.4.10) refuses "
                            "sm_100 (B200): \"no kernel image is available for execution on the device\"; the wheel's "
                            "flash_ops library holds kernels for sm_80, sm_86 and sm_90 only (flash_attn_with_kvcache "
                            "has no device check of its own); fails on sm_100 (B200). sgl-kernel builds its "
                            "FlashAttention 3 for compute capability 8.x and 9.x only: use another attention backend "
                            "elsewhere"),
                ]),
        # sgl-kernel 0.1.0 (published under its earlier name) ran FA3 on 9.x only.
        Example(_SGL.format(guard=""), gpus=["A100", "H100"], pins={"sgl-kernel": "0.1.0"},
                findings=[
                    (6, 12, "flash_attn_with_kvcache: sgl-kernel FlashAttention 3 (sglang-kernel 0.1.0) refuses "
                            "sm_80 (A100): \"flash_attn at sgl-kernel is only supported on sm90 and cu123 above\"; "
                            "its device check accepts compute capability 9.x; fails on sm_80 (A100). sgl-kernel 0.1.1 "
                            "and later also run FlashAttention 3 on compute capability 8.x; use another attention "
                            "backend elsewhere"),
                ]),
    ]

    # The GPU range of each SDPA backend per torch release ([limit.sdpa_backend_range]).
    _SDPA_RANGE = ("import torch\nimport torch.nn.functional as F\nfrom torch.nn.attention import SDPBackend, "
                   "sdpa_kernel\n\n\n"
                   "def attend(q, k, v):\n"
                   "    with sdpa_kernel([SDPBackend.FLASH_ATTENTION, SDPBackend.CUDNN_ATTENTION{more}]):\n"
                   "        return F.scaled_dot_product_attention(q, k, v, is_causal=True)\n")
    VALID += [Example(_SDPA_RANGE.format(more=", SDPBackend.MATH"), gpus=["H100", "B200"], pins={"torch": "2.6.0"}),
              Example(_SDPA_RANGE.format(more=""), gpus=["H100", "B200"], pins={"torch": "2.8.0"})]
    INVALID += [
        Example(_SDPA_RANGE.format(more=""), gpus=["H100", "B200"], pins={"torch": "2.6.0"},
                findings=[
                    (8, 16, "scaled_dot_product_attention: in torch 2.6.0 the SDPA backends left enabled "
                             "(SDPBackend.CUDNN_ATTENTION, SDPBackend.FLASH_ATTENTION) leave this GPU out: \"cuDNN MHA "
                             "only supports gpu architectures in the range [sm80, sm90]; Flash attention only supports "
                             "gpu architectures in the range [sm80, sm90]\"; then \"No available kernel. Aborting "
                             "execution.\"; fails on sm_100 (B200). Also allow SDPBackend.MATH, or use torch >= 2.8.0"),
                ]),
    ]

    # torch 2.15.0 (read like 2.8-2.14): flash and cuDNN take [sm80, sm121]; no release takes sm_75 for them.
    INVALID += [
        Example(_SDPA_RANGE.format(more=""), gpus=["T4", "A100"], pins={"torch": "2.15.0"},
                findings=[
                    (8, 16, "scaled_dot_product_attention: in torch 2.15.0 the SDPA backends left enabled "
                             "(SDPBackend.CUDNN_ATTENTION, SDPBackend.FLASH_ATTENTION) leave this GPU out: \"cuDNN MHA "
                             "only supports gpu architectures in the range [sm80, sm121]; Flash attention only supports "
                             "gpu architectures in the range [sm80, sm121]\"; then \"No available kernel. Aborting "
                             "execution.\"; fails on sm_75 (T4). Also allow SDPBackend.MATH"),
                ]),
    ]

    # From torch 2.7.0 the flash training filter also covers sm_120/sm_121 (check_..._on_sm86_89_or_120).
    INVALID += [
        Example(_SDPA_TRAIN.format(decorator="", tail="    out.float().mean().backward()"),
                gpus=["RTX 5090", "H100"], pins={"torch": "2.8.0"},
                findings=[
                    (16, 20, "scaled_dot_product_attention: training with head dim 200 is refused by the flash "
                             "backend of torch 2.8.0, and no other SDPA backend is enabled: \"Flash attention "
                             "currently doesn't support training with head_dim ∈ (192, 224] or (head_dim ∈ (224, "
                             "256] and dropout > 0.0) on gpu architectures in the range[sm86, sm89].\"; then \"No "
                             "available kernel. Aborting execution.\"; fails on sm_120 (RTX 5090). Also allow "
                             "SDPBackend.EFFICIENT_ATTENTION or SDPBackend.MATH"),
                ]),
    ]

    # SDPA forced onto cuDNN: its head-dim maximum per release and GPU ([limit.sdpa_cudnn_head_dim]).
    # (_ENV: torch 2.3/2.4 run the cuDNN backend only with TORCH_CUDNN_SDPA_ENABLED=1.)
    _ENV = "import os\n\nos.environ.setdefault(\"TORCH_CUDNN_SDPA_ENABLED\", \"1\")\n"
    _SDPA_CUDNN = ("import contextlib\n\nimport torch\nimport torch.nn.functional as F\n"
                   "from torch.nn.attention import SDPBackend, sdpa_kernel\n\n\n"
                   "@contextlib.contextmanager\ndef cudnn_only():\n"
                   "    with sdpa_kernel({backends}):\n        yield\n\n\n"
                   "def attend(x, heads=8):\n"
                   "    q = x.view(x.shape[0], x.shape[1], heads, x.shape[2] // heads).transpose(1, 2)\n"
                   "    with cudnn_only():\n"
                   "        return F.scaled_dot_product_attention(q, q, q)\n\n\n"
                   "attend(torch.randn(2, 1024, {width}, device='cuda', dtype=torch.bfloat16))\n")
    VALID += [
        Example(_SDPA_CUDNN.format(backends="SDPBackend.CUDNN_ATTENTION", width=1024), gpus=["A100", "B200"]),
        Example(_SDPA_CUDNN.format(backends="SDPBackend.CUDNN_ATTENTION", width=2048), gpus=["H100", "B200"],
                pins={"torch": "2.14.0"}),
        Example(_SDPA_CUDNN.format(backends="[SDPBackend.CUDNN_ATTENTION, SDPBackend.EFFICIENT_ATTENTION]",
                                   width=2048), gpus=["A100"]),
    ]
    INVALID += [
        Example(_SDPA_CUDNN.format(backends="SDPBackend.CUDNN_ATTENTION", width=2048), gpus=["A100", "H100"],
                findings=[
                    (17, 16, "scaled_dot_product_attention: head dim 256 is more than the 128 the cuDNN backend of "
                             "torch 2.15.0 accepts on sm_80 (A100), and no other SDPA backend is enabled: \"head_dim "
                             "should be no more than 128\"; then \"No available kernel. Aborting execution.\"; fails "
                             "on sm_80 (A100). Also allow SDPBackend.EFFICIENT_ATTENTION or SDPBackend.MATH"),
                ]),
        Example(_SDPA_CUDNN.format(backends="SDPBackend.CUDNN_ATTENTION", width=2048), gpus=["H100", "B200"],
                pins={"torch": "2.13.0"},
                findings=[
                    (17, 16, "scaled_dot_product_attention: head dim 256 is more than the 128 the cuDNN backend of "
                             "torch 2.13.0 accepts on sm_100 (B200) with the cuDNN its Linux wheel pins "
                             "(nvidia-cudnn-cu13==9.20.0.48), and no other SDPA backend is enabled: \"head_dim should "
                             "be no more than 128\"; then \"No available kernel. Aborting execution.\"; fails on "
                             "sm_100 (B200). Also allow SDPBackend.EFFICIENT_ATTENTION or SDPBackend.MATH"),
                ]),
        # torch 2.4.0: 256 on every GPU with the cuDNN its wheel pins (9.1.0.70), its own text
        Example(_ENV + _SDPA_CUDNN.format(backends="SDPBackend.CUDNN_ATTENTION", width=2112), gpus=["A100"],
                pins={"torch": "2.4.0"},
                findings=[
                    (20, 16, "scaled_dot_product_attention: head dim 264 is more than the 256 the cuDNN backend of "
                             "torch 2.4.0 accepts on sm_80 (A100) with the cuDNN its Linux wheel pins "
                             "(nvidia-cudnn-cu12==9.1.0.70), and no other SDPA backend is enabled: \"head_dim should be "
                             "a multiple of 8 and no more than 256\"; then \"No available kernel. Aborting "
                             "execution.\"; fails on sm_80 (A100). Also allow SDPBackend.EFFICIENT_ATTENTION or "
                             "SDPBackend.MATH"),
                ]),
        Example(_SDPA_CUDNN.format(backends="SDPBackend.CUDNN_ATTENTION", width=800), gpus=["H100"],
                findings=[
                    (17, 16, "scaled_dot_product_attention: head dim 100 is not a multiple of 8, which the cuDNN "
                             "backend of torch 2.15.0 needs, and no other SDPA backend is enabled: \"head_dim should "
                             "be a multiple of 8\"; then \"No available kernel. Aborting execution.\"; fails on "
                             "sm_90 (H100). Also allow SDPBackend.EFFICIENT_ATTENTION or SDPBackend.MATH"),
                ]),
    ]

    # The cuDNN backward filter (2.14+): on sm_90/sm_10x only d <= 128, 192/128 or 256/256 train.
    _SDPA_CUDNN_TRAIN = ("import torch\nimport torch.nn.functional as F\n"
                         "from torch.nn.attention import SDPBackend, sdpa_kernel\n\n\n"
                         "{decorator}def step(x, heads=8):\n"
                         "    q = x.view(x.shape[0], x.shape[1], heads, x.shape[2] // heads).transpose(1, 2)\n"
                         "    with sdpa_kernel(SDPBackend.CUDNN_ATTENTION):\n"
                         "        out = F.scaled_dot_product_attention(q, q, q, is_causal=True)\n"
                         "{tail}\n\n"
                         "step(torch.randn(2, 1024, 1280, device='cuda', dtype=torch.bfloat16, requires_grad=True))\n")
    VALID += [
        Example(_SDPA_CUDNN_TRAIN.format(decorator="@torch.no_grad()\n", tail="    return out"), gpus=["H100"]),
        Example(_SDPA_CUDNN_TRAIN.format(decorator="", tail="    out.float().mean().backward()"), gpus=["H100"],
                pins={"torch": "2.13.0"}),
    ]
    INVALID += [
        Example(_SDPA_CUDNN_TRAIN.format(decorator="", tail="    out.float().mean().backward()"), gpus=["H100"],
                findings=[
                    (9, 15, "scaled_dot_product_attention: training with head dim 160 is refused by the cuDNN backend "
                            "of torch 2.15.0 on sm_90 (H100) with the cuDNN its Linux wheel pins "
                            "(nvidia-cudnn-cu13==9.26.0.51), and no other SDPA backend is enabled: \"cuDNN SDPA on SM "
                            "9.0/10.x does not support backward with these head dimensions.\"; then \"No available "
                            "kernel. Aborting execution.\"; fails on sm_90 (H100). Also allow "
                            "SDPBackend.EFFICIENT_ATTENTION or SDPBackend.MATH"),
                ]),
    ]

    # torch 2.3/2.4: the cuDNN backend is off unless TORCH_CUDNN_SDPA_ENABLED=1; 2.4 refuses it when
    # an input requires grad ([limit.sdpa_cudnn_gates]).
    _CUDNN_OFF = ("scaled_dot_product_attention: the cuDNN backend of torch 2.4.0 runs only when the environment "
                  "sets TORCH_CUDNN_SDPA_ENABLED=1, which this file does not, and no other SDPA backend is enabled: "
                  "\"The CuDNN backend needs to be enabled by setting the enviornment variable"
                  "`TORCH_CUDNN_SDPA_ENABLED=1`\"; then \"No available kernel. Aborting execution.\"; fails on "
                  "sm_90 (H100) unless the environment sets it. Set os.environ[\"TORCH_CUDNN_SDPA_ENABLED\"] = \"1\" "
                  "before the first attention call, also allow SDPBackend.EFFICIENT_ATTENTION or SDPBackend.MATH, or "
                  "use torch >= 2.5.0")
    VALID += [
        Example(_ENV + _SDPA_CUDNN.format(backends="SDPBackend.CUDNN_ATTENTION", width=1024), gpus=["A100", "H100"],
                pins={"torch": "2.4.0"}),
        Example(_SDPA_CUDNN.format(backends="SDPBackend.CUDNN_ATTENTION", width=1024), gpus=["H100"],
                pins={"torch": "2.5.0"}),
        Example(_ENV + _SDPA_CUDNN_TRAIN.format(decorator="@torch.no_grad()\n", tail="    return out"), gpus=["H100"],
                pins={"torch": "2.4.0"}),
    ]
    INVALID += [
        Example(_SDPA_CUDNN.format(backends="SDPBackend.CUDNN_ATTENTION", width=1024), gpus=["H100"],
                pins={"torch": "2.4.0"}, findings=[(17, 16, _CUDNN_OFF)]),
        Example(_ENV + _SDPA_CUDNN_TRAIN.format(decorator="", tail="    out.float().mean().backward()"),
                gpus=["H100"], pins={"torch": "2.4.0"},
                findings=[(12, 15, "scaled_dot_product_attention: the cuDNN backend of torch 2.4.0 refuses inputs "
                                   "that require grad, and no other SDPA backend is enabled: \"CuDNN does not currently "
                                   "support inputs with requires_grad=True.\"; then \"No available kernel. Aborting "
                                   "execution.\"; fails on sm_90 (H100) where this trains. Also allow "
                                   "SDPBackend.FLASH_ATTENTION or SDPBackend.EFFICIENT_ATTENTION, or use torch >= 2.5.0")]),
    ]

    # FlashAttention 3's default build has sm_80 and sm_90a code only ([limit.fa3_kernels]): Blackwell
    # passes the device check and finds no kernel; the CUDA check exits, so no ``except`` falls back.
    _FA3_MODULE = ("import torch\nimport torch.nn.functional as F\nfrom torch import nn\n\n"
                   "try:\n    from flash_attn_interface import flash_attn_func as fa3_func\n    HAS_FA3 = True\n"
                   "except ImportError:\n    HAS_FA3 = False\n\n"
                   "IS_HOPPER = torch.cuda.is_available() and torch.cuda.get_device_capability()[0] == 9\n\n\n"
                   "class Attention(nn.Module):\n"
                   "    def __init__(self, dim, heads):\n        super().__init__()\n        self.heads = heads\n"
                   "        self.qkv = nn.Linear(dim, 3 * dim)\n        self.use_fa3 = HAS_FA3 and {cond}\n\n"
                   "    def forward(self, x):\n        b, s, d = x.shape\n"
                   "        q, k, v = self.qkv(x).view(b, s, 3, self.heads, d // self.heads).unbind(2)\n"
                   "        if self.use_fa3:\n{call}\n"
                   "        out = F.scaled_dot_product_attention(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2))\n"
                   "        return out.transpose(1, 2)\n")
    _FA3_CALL = "            return fa3_func(q, k, v, causal=True)"
    _FA3_TRY = ("            try:\n                return fa3_func(q, k, v, causal=True)\n"
                "            except RuntimeError:\n                pass")
    _FA3_NO_KERNEL = ("flash_attn_func: FlashAttention 3 (flash-attn-3 3.0.0+g0251105a2) has no kernel for sm_100 (B200): "
                      "its default build compiles sm_80 and sm_90a machine code only, no PTX; the first launch fails "
                      "with \"no kernel image is available for execution on the device\" and exits the process (its "
                      "CUDA check calls exit(1)); fails on sm_100 (B200). Run FlashAttention 3 only where "
                      "torch.cuda.get_device_capability() is 8.x or (9, 0), and "
                      "torch.nn.functional.scaled_dot_product_attention elsewhere")
    VALID += [
        Example(_FA3_MODULE.format(cond="IS_HOPPER", call=_FA3_CALL), gpus=["A100", "H100", "B200"]),
        Example(_FA3_MODULE.format(cond="torch.cuda.is_available()", call=_FA3_CALL), gpus=["A100", "L4", "H100"]),
    ]
    INVALID += [
        Example(_FA3_MODULE.format(cond="torch.cuda.is_available()", call=_FA3_CALL), gpus=["H100", "B200"],
                findings=[(25, 20, _FA3_NO_KERNEL)]),
        Example(_FA3_MODULE.format(cond="torch.cuda.is_available()", call=_FA3_TRY), gpus=["H100", "B200"],
                findings=[(26, 24, _FA3_NO_KERNEL)]),
    ]

    # transformers models told to use FlashAttention run its kernels at the first forward
    # (transformers_attn.toml [kernels.*]); the value is followed through argparse and config dicts.
    _HF_LOAD = ("import argparse\n\nimport torch\nfrom transformers import AutoModelForCausalLM\n\n\n"
                "def parse_args():\n    parser = argparse.ArgumentParser()\n"
                "    parser.add_argument(\"--model\", default=\"meta-llama/Llama-3.2-1B\")\n"
                "    parser.add_argument(\"--attn\", default=\"flash_attention_2\")\n"
                "    return parser.parse_args()\n\n\n"
                "def load_model(name, attn):\n{guard}"
                "    return AutoModelForCausalLM.from_pretrained(name, dtype=torch.bfloat16, attn_implementation=attn)\n\n\n"
                "args = parse_args()\nmodel = load_model(args.model, args.attn).cuda()\n")
    _HF_GUARD = ("    if attn == \"flash_attention_2\" and torch.cuda.get_device_capability()[0] < 8:\n"
                 "        attn = \"sdpa\"\n")
    _HF_CFG = ("import torch\nfrom transformers import AutoConfig, AutoModelForCausalLM, MistralForCausalLM\n\n"
               "CFG = {{\"model\": \"mistralai/Mistral-7B-v0.1\", \"attn_implementation\": \"{impl}\"}}\n\n\n"
               "def build(cfg):\n    config = AutoConfig.from_pretrained(cfg[\"model\"])\n"
               "    config._attn_implementation = cfg[\"attn_implementation\"]\n"
               "    model = AutoModelForCausalLM.from_config(config)\n"
               "    model.set_attn_implementation(cfg[\"attn_implementation\"])\n    return model\n\n\n"
               "build(CFG)\n")
    _HF_FA2 = (" runs FlashAttention 2 (flash-attn 2.8.3.post2) at the first forward, whose device check refuses "
               "sm_75 (T4): \"FlashAttention only supports Ampere GPUs or newer.\"; fails on sm_75 (T4); use "
               "attn_implementation=\"sdpa\" there")
    VALID += [
        Example(_HF_LOAD.format(guard=_HF_GUARD), gpus=["T4", "A100"]),
        Example(_HF_LOAD.format(guard=""), gpus=["A100", "H100", "B200"]),
        Example(_HF_CFG.format(impl="sdpa"), gpus=["T4", "A100"]),
        Example("from transformers import AutoModelForCausalLM\n\n"
                "model = AutoModelForCausalLM.from_pretrained(\"Qwen/Qwen3-8B\", attn_implementation=\"flash_attention_3\")\n",
                gpus=["A100", "H100"]),
        Example("import torch\nfrom transformers import MistralForCausalLM\n\n"
                "m = MistralForCausalLM.from_pretrained(\"x\", use_flash_attention_2=True, torch_dtype=torch.bfloat16)\n",
                gpus=["A100"], pins={"transformers": "4.36.0"}),
        # transformers 4.53-4.57 hand DeepSeek's V to FA3 unpadded: its V head dim check raises first (AIC101)
        Example("from transformers import DeepseekV3ForCausalLM\n\n"
                "m = DeepseekV3ForCausalLM.from_pretrained(\"x\", attn_implementation=\"flash_attention_3\")\n",
                gpus=["H100", "B200"], pins={"transformers": "4.57.1"}),
    ]
    INVALID += [
        Example(_HF_LOAD.format(guard=""), gpus=["T4", "A100"],
                findings=[(15, 12, "AutoModelForCausalLM.from_pretrained: attn_implementation=\"flash_attention_2\"" + _HF_FA2)]),
        Example(_HF_CFG.format(impl="flash_attention_2"), gpus=["T4", "A100"],
                findings=[(9, 5, "config._attn_implementation = \"flash_attention_2\"" + _HF_FA2),
                          (11, 5, "model.set_attn_implementation(\"flash_attention_2\")" + _HF_FA2)]),
        Example("from transformers import AutoModelForCausalLM\n\n"
                "model = AutoModelForCausalLM.from_pretrained(\"Qwen/Qwen3-8B\", attn_implementation=\"flash_attention_3\")\n",
                gpus=["H100", "B200"],
                findings=[(3, 9, "AutoModelForCausalLM.from_pretrained: attn_implementation=\"flash_attention_3\" runs "
                                 "FlashAttention 3 (flash-attn-3 3.0.0+g0251105a2) at the first forward, whose default "
                                 "build has no kernel for sm_100 (B200) (sm_80 and sm_90a machine code only): \"no "
                                 "kernel image is available for execution on the device\", and the process exits; fails "
                                 "on sm_100 (B200); use attn_implementation=\"sdpa\" there")]),
        # transformers 4.34-4.36 raise on a dtype other than fp16/bf16 with FlashAttention 2 (later ones warn)
        Example("import torch\nfrom transformers import MistralForCausalLM\n\n"
                "m = MistralForCausalLM.from_pretrained(\"x\", use_flash_attention_2=True, torch_dtype=torch.float32)\n",
                gpus=["A100"], pins={"transformers": "4.36.0"},
                findings=[(4, 5, "MistralForCausalLM.from_pretrained: use_flash_attention_2=True with "
                                 "torch_dtype=torch.float32 raises ValueError in transformers 4.36.0: \"Flash Attention "
                                 "2.0 only supports torch.float16 and torch.bfloat16 dtypes. You passed torch.float32, "
                                 "this might lead to unexpected behaviour.\"; fails on sm_80 (A100). Load it with "
                                 "torch_dtype=torch.bfloat16 (or torch.float16); later releases only warn")]),
    ]

    def __init__(self, matrix) -> None:
        super().__init__(matrix)
        self.limits: dict[str, list[dict]] = {}
        for e in matrix.section("attention.toml", "limit").values():
            for q in e["calls"]:
                self.limits.setdefault(q, []).append(e)
        self.call_tails = frozenset(q.rsplit(".", 1)[-1] for q in self.limits)

        self.aliases = Aliases(matrix)
        self.call_tails = self.call_tails | frozenset(q.rsplit(".", 1)[-1] for q in self.aliases.names())
        self._as_release: dict = {}  # package -> release, while a wrapper's call is checked
        self.transformers = TransformersFlash(matrix, self.limits)
        self.call_tails = self.call_tails | self.transformers.tails()
        training: dict = next(iter(matrix.section("attention.toml", "training").values()), {})
        self.no_grad = frozenset(training.get("no_grad", ()))

    def known_names(self) -> set[str]:
        return set(self.limits) | self.no_grad | self.aliases.names()

    def check_assign(self, node, fc):
        return self.transformers.check_assign(node, fc)

    def check_call(self, site, qualname, fc):
        if (qualname or dotted(site.node.func) or "").rsplit(".", 1)[-1] in self.transformers.tails():
            return self.transformers.check_call(site, qualname, fc)  # the model's forward runs the kernels
        if site.has_star:
            return []
        # a failure that raises is handled by an ``except RuntimeError``; one that exits is not
        caught = fc.ctx.caught("RuntimeError")
        aliased = self.aliases.resolve(site, qualname, fc)
        qualname = qualname or (dotted(site.node.func) or "")  # ``from .vendored import f``: named as called
        own = [] if self.aliases.foreign(qualname, aliased) else self.limits.get(qualname, [])
        own = [e for e in own if e.get("exits") or not caught]
        out = self._check(site, qualname, own, fc)  # the wrapper's own checks
        for canonical, as_release, worlds in aliased:
            if canonical == qualname or not worlds or caught:
                continue
            # a wrapper: the limits of the kernels it calls, with their release; they have no backward,
            # and their kernels are the wrapper's own build
            entries = [e for e in self.limits.get(canonical, []) if e["kind"] not in ("backward_head_dim",
                                                                                       "build_targets")]
            self._as_release = as_release or {}
            try:
                out += narrowed(fc, worlds, lambda: self._check(site, qualname, entries, fc))
            finally:
                self._as_release = {}
        return out

    def _check(self, site, qualname, entries, fc):
        out = []
        for e in entries:
            kind = e["kind"]
            found = self._capability(site, qualname, e, fc) if kind == "capability" else \
                build_targets(site, qualname, e, fc, self._releases(fc, e["package"]), self._refused(entries, e, fc)) \
                if kind == "build_targets" else \
                self._head_dim(site, qualname, e, fc) if kind == "head_dim_max" else \
                self._dtype_capability(site, qualname, e, fc) if kind == "dtype_capability" else \
                sdpa_head_dim(site, qualname, e, fc) if kind == "sdpa_head_dim" else \
                sdpa_capability(site, qualname, e, fc) if kind == "sdpa_capability" else \
                sdpa_cudnn_head_dim(site, qualname, e, fc) if kind == "sdpa_cudnn_head_dim" else \
                sdpa_cudnn_gate(site, qualname, e, fc) if kind == "sdpa_gate" else \
                backward_head_dim(site, qualname, e, fc, self._refused(entries, e, fc)) \
                if kind == "backward_head_dim" else None
            if found is not None:
                out.append(found)
        return out

    def _refused(self, entries, e, fc):
        """world -> is its GPU refused outright by a capability entry of the same call and package?"""
        caps = [c for c in entries if c["kind"] == "capability" and c["package"] == e["package"]]

        def refused(w) -> bool:
            arch = fc.matrix.archs.get(w.arch)
            spans = [_span(c, v) for c in caps for v in self._releases(fc, c["package"])]
            return arch is not None and any(s is not None and not _accepts(s, arch) for s in spans)
        return refused

    def _releases(self, fc, package: str):
        return releases_in_scope(fc, package, self._as_release)

    def _capability(self, site, qualname, e, fc):
        short = qualname.rsplit(".", 1)[-1]
        failing: dict[str, tuple] = {}
        for v in self._releases(fc, e["package"]):
            span = _span(e, v)
            if span is None:
                continue
            for w in fc.ctx.worlds:
                arch = fc.matrix.archs.get(w.arch)
                if arch is not None and not _accepts(span, arch):
                    failing.setdefault(w.arch, (v, span))
        if not failing:
            return None
        v, span = next(iter(failing.values()))
        accepts = "compute capability " + _exact_words(span["accept"]) if all(a.startswith("==") for a in span["accept"]) \
            else "compute capability " + _accepted(span)
        archs = frozenset(failing)
        label = e["package"] if v is None else f"{e['package']} {v}"
        # a span without a device check of its own says why the GPU fails (no kernel built for it)
        why = span.get("why", f"its device check accepts {accepts}")
        msg = (f"{short}: {e['library']} ({label}) refuses {fc.describe(archs)}: "
               f"\"{span.get('error', e.get('error', ''))}\"; "
               f"{why}; fails on {fc.describe(archs)}. {span['fix']}")
        return Finding(site.node, msg, archs)

    def _dtype_capability(self, site, qualname, e, fc):
        """An input dtype (FP8) that the kernel accepts only on some GPUs."""
        spans = [(v, _span(e, v)) for v in self._releases(fc, e["package"])]
        spans = [(v, s) for v, s in spans if s is not None]
        if not spans:
            return None
        failing, shown = {}, None
        for w, val in _q_values(site, e, fc):
            arch = fc.matrix.archs.get(w.arch)
            if arch is None or not isinstance(val, Tensor) or val.dtype not in e["dtypes"]:
                continue
            for v, span in spans:
                if not _accepts(span, arch):
                    failing.setdefault(w.arch, (v, span))
                    shown = shown or val.dtype
        if not failing:
            return None
        v, span = next(iter(failing.values()))
        short = qualname.rsplit(".", 1)[-1]
        archs = frozenset(failing)
        msg = (f"{short}: {e['library']} ({e['package']} {v}) takes {shown} inputs only on compute capability "
               f"{_accepted(span)}: \"{e['error']}\"; fails on {fc.describe(archs)}. {span['fix']}")
        return Finding(site.node, msg, archs)

    def _head_dim(self, site, qualname, e, fc):
        failing, shown = set(), None
        for w, val in _q_values(site, e, fc):
            d = val.last_dim() if isinstance(val, Tensor) else UNKNOWN
            if isinstance(d, int) and not isinstance(d, bool) and d > e["max"]:
                failing.add(w.arch)
                shown = shown or d
        if not failing:
            return None
        short = qualname.rsplit(".", 1)[-1]
        msg = (f"{short}: head dim {shown} is more than {e['library']} supports ({e['max']}): \"{e['error']}\"; "
               f"fails on {fc.describe(failing)}")
        return Finding(site.node, msg, frozenset(failing))


def _exact_words(accept: list[str]) -> str:
    """["==8.0", "==8.6", "==9.0"] -> '8.x and 9.0 only' (a major with several minors listed is 'M.x')."""
    by_major: dict[str, list[str]] = {}
    for a in accept:
        by_major.setdefault(a[2:].split(".")[0], []).append(a[2:])
    return " and ".join(f"{m}.x" if len(v) > 1 else v[0] for m, v in by_major.items()) + " only"
