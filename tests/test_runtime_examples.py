"""Issue 13's examples, as generated code writes them, pinned to torch 2.13.0: calls that run
there (judged wrong by the static tables before the runtime decided) are clean, and calls that
fail there are reported (the runtime introspection is version_matrix/introspect/torch-2.13.0.toml)."""


from conftest import lint

PIN = {"torch": "2.13.0"}


def aic2(code, pins=PIN):
    return [(d.line, d.column, d.code, d.message) for d in lint(code, pins=pins) if d.code.startswith("AIC2")]


RUNS = '''\
import torch
import torch.distributed as dist
import torch.nn.functional as F


def weighted_mse(pred, target, w):
    return F.mse_loss(pred, target, weight=w)


def project(x, W, buf):
    return F.linear(x, W, out=buf)


def setup():
    dev = torch.device(type="cpu")
    eps = torch.finfo(type=torch.float16).eps
    store = dist.FileStore(file_name="/tmp/store", world_size=2)
    return dev, eps, store


def pack(labels):
    onehot = F.one_hot(input=labels, num_classes=10)
    packed = torch.empty(4, dtype=torch.uint4)
    signed = torch.empty(4, dtype=torch.int4)
    legacy = torch.cuda.FloatTensor(3)
    return onehot, packed, signed, legacy, F.scaled_grouped_mm


def on_plugin():
    if hasattr(torch, "supa") and torch.supa.is_available():
        return torch.supa.is_bf16_supported()
    if hasattr(torch, "tpu"):
        return torch.tpu.manual_seed
    return hasattr(torch, "neuron") and torch.neuron.is_available()
'''

FAILS = '''\
import torch


class Net(torch.Module):
    def __init__(self):
        super().__init__()


def build():
    dev = torch.Device("cpu")
    seq = torch.Sequence
    n = torch.get_num_thread()
    mesh = torch.DeviceMesh("cuda", [0, 1])
    u = torch.unique_dim(torch.arange(4), 0)
    torch.set_num_threads(num=4)
    t = torch.from_numpy(ndarray=None)
    grid = torch.linspace(0.0, 1.0)
    return dev, seq, n, mesh, u, t, grid


def prune_and_attend(layer, q, k, v):
    torch.nn.utils.prune.l1_unstructured(layer, name="weight", amount=0.3)
    return torch.nn.attention.flex_attention.flex_attention(q, k, v)
'''

# The same code, fixed: what exists in torch 2.13.0, and the submodules imported.
FIXED = '''\
import torch
import torch.nn as nn
import torch.nn.utils.prune
from torch.distributed.device_mesh import DeviceMesh
from torch.nn.attention.flex_attention import flex_attention


class Net(nn.Module):
    def __init__(self):
        super().__init__()


def build():
    dev = torch.device("cpu")
    n = torch.get_num_threads()
    mesh = DeviceMesh("cuda", [0, 1])
    u = torch.unique(torch.arange(4), dim=0)
    torch.set_num_threads(4)
    t = torch.from_numpy(None)
    grid = torch.linspace(0.0, 1.0, steps=11)
    return dev, n, mesh, u, t, grid


def prune_and_attend(layer, q, k, v):
    torch.nn.utils.prune.l1_unstructured(layer, name="weight", amount=0.3)
    return flex_attention(q, k, v)
'''


def test_code_that_runs_on_2_13_is_clean():
    assert aic2(RUNS) == []


def test_code_that_fails_on_2_13_is_reported():
    assert aic2(FAILS) == EXPECTED


def test_the_fixed_code_is_clean():
    assert aic2(FIXED) == []


EXPECTED = [
    (4, 11, 'AIC201', 'torch.Module does not exist in any torch release (2.0.0–2.15.0); in torch 2.13.0 it is torch.nn.Module'),
    (10, 11, 'AIC201', 'torch.Device does not exist in any torch release (2.0.0–2.15.0); did you mean torch.device, torch.DeviceObjType, torch.get_device?'),
    (11, 11, 'AIC201', 'torch.Sequence does not exist in any torch release (2.0.0–2.15.0); did you mean torch._Sequence?'),
    (12, 9, 'AIC201', 'torch.get_num_thread does not exist in any torch release (2.0.0–2.15.0); did you mean torch.get_num_threads, torch.set_num_threads, torch.init_num_threads?'),
    (13, 12, 'AIC201', 'torch.DeviceMesh does not exist in any torch release (2.0.0–2.15.0); in torch 2.13.0 it is torch.distributed.DeviceMesh'),
    (14, 9, 'AIC201', 'torch.unique_dim does not exist in any torch release (2.0.0–2.15.0); did you mean torch.unique, torch._unique, torch._unique2?'),
    (15, 5, 'AIC202', "torch.set_num_threads: no torch release (2.0.0–2.15.0) accepts keyword 'num'"),
    (16, 9, 'AIC202', "torch.from_numpy: no torch release (2.0.0–2.15.0) accepts keyword 'ndarray'"),
    (17, 12, 'AIC202', "torch.linspace: missing required argument 'steps' in torch 2.13.0"),
    (22, 5, 'AIC201', "torch.nn.utils.prune is not loaded by `import torch` in torch 2.13.0 (AttributeError: module 'torch.nn.utils' has no attribute 'prune'); add `import torch.nn.utils.prune`; pins allow torch 2.13.0"),
    (23, 12, 'AIC201', "torch.nn.attention.flex_attention is not loaded by `import torch` in torch 2.13.0 (AttributeError: module 'torch.nn.attention' has no attribute 'flex_attention'); add `import torch.nn.attention.flex_attention`; pins allow torch 2.13.0"),
]


TE = '''\
import transformer_engine.pytorch as te

with te.fp8_model_init(enabled=True):
    layer = te.Linear(64, 64)
'''


def test_transformer_engine_fp8_model_init_deprecated_from_2_9():
    found = [(d.line, d.column, d.code) for d in lint(TE, pins={"transformer-engine": "2.9.0"}) if d.code == "AIC203"]
    assert found == [(3, 6, "AIC203")]
    assert [d for d in lint(TE, pins={"transformer-engine": "2.8.0"}) if d.code == "AIC203"] == []
    fixed = TE.replace("fp8_model_init", "quantized_model_init")
    assert [d for d in lint(fixed, pins={"transformer-engine": "2.9.0"}) if d.code == "AIC203"] == []


def test_a_deprecation_torch_warns_from_cxx_is_reported():
    # torch 2.13.0's libtorch_python.so: "torch.get_autocast_gpu_dtype() is deprecated. Please use
    # torch.get_autocast_dtype('cuda') instead." (TORCH_WARN_DEPRECATION, no Python source shows it)
    code = "import torch\n\n\ndef amp_dtype():\n    return torch.get_autocast_gpu_dtype()\n"
    found = [(d.line, d.column, d.code) for d in lint(code, pins=PIN) if d.code == "AIC203"]
    assert found == [(5, 12, "AIC203")]
    fixed = "import torch\n\n\ndef amp_dtype():\n    return torch.get_autocast_dtype(\"cuda\")\n"
    assert [d for d in lint(fixed, pins=PIN) if d.code == "AIC203"] == []
