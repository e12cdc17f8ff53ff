"""AIC105 and numpy in a checkpoint: torch's weights-only unpickler allows no numpy global by
default in any release 2.4.0-2.15.0 (version_matrix/pickle.toml [weights_only] releases), so an
RNG state from np.random.get_state() (a tuple holding an ndarray), numpy scalars and arrays fail
the default torch.load from 2.6.0; random.getstate() (a tuple of ints) loads. Observed with torch
2.13.0 CPU and numpy 2.4.6 / 1.26.4 (pickle.toml observed)."""

import pytest
from conftest import lint

# A training loop that saves its RNG states to resume exactly, and a resume that restores them.
RESUMABLE = '''\
import random

import numpy as np
import torch


def rng_state():
    return {{
        "python": random.getstate(),
        "numpy": {numpy_state},
        "torch": torch.get_rng_state(),
    }}


def save_checkpoint(model, optimizer, step, path):
    torch.save({{
        "model": model.state_dict(),
        "optimizer": optimizer.state_dict(),
        "step": step,
        "rng": rng_state(),
    }}, path)


def load_checkpoint(model, optimizer, path):
    {allow}ckpt = torch.load(path, map_location="cpu"{flag})
    model.load_state_dict(ckpt["model"])
    optimizer.load_state_dict(ckpt["optimizer"])
    random.setstate(ckpt["rng"]["python"])
    return ckpt["step"]


def train(steps=100, path="checkpoints/last.pt"):
    model = torch.nn.Linear(32, 32)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for step in range(steps):
        if step % 10 == 0:
            save_checkpoint(model, optimizer, step, path)
    return load_checkpoint(model, optimizer, path)
'''


def found(numpy_state="np.random.get_state()", allow="", flag="", pins=None):
    code = RESUMABLE.format(numpy_state=numpy_state, allow=allow, flag=flag)
    return [(d.line, d.message) for d in lint(code, pins=pins or {"torch": "2.6.0"}) if d.code == "AIC105"]


def test_a_numpy_rng_state_in_the_checkpoint_breaks_resume():
    assert found() == [(25, "torch.load: 'checkpoints/last.pt' is saved at line 16 holding a numpy.ndarray (np.random.get_state()) "
                            "(via ['rng']['numpy']), which the default weights_only=True refuses from torch 2.6.0: "
                            "\"UnpicklingError: Weights only load failed ... Unsupported global: GLOBAL "
                            "numpy._core.multiarray._reconstruct was not an allowed global by default\"; fails with "
                            "torch 2.6.0. Save plain values (arr.tolist(), x.item()), pass weights_only=False for a "
                            "file you trust, or allow numpy's globals around the load with "
                            "torch.serialization.safe_globals([...]) (torch 2.5+; the error names each) or "
                            "add_safe_globals([...])")]


def test_every_release_from_the_default_change_refuses_it():
    got = found(pins={"torch": ">=2.5,<2.16"})
    assert [line for line, _m in got] == [25] and "fails with torch 2.6.0–2.15.0" in got[0][1]
    assert found(pins={"torch": "2.5.1"}) == []  # weights_only defaults to False before 2.6.0


@pytest.mark.parametrize("twin", [
    {"flag": ", weights_only=False"},  # a checkpoint the code wrote itself: trusted
    {"allow": "with torch.serialization.safe_globals([np._core.multiarray._reconstruct, np.ndarray, np.dtype,\n"
              "                                        np.dtypes.UInt32DType]):\n        "},
    {"numpy_state": "np.random.default_rng(0).bit_generator.state"},  # a dict of str and int: loads
    {"numpy_state": "None"},
])
def test_the_fixed_twins_are_clean(twin):
    assert found(**twin) == []


def test_add_safe_globals_at_import_is_clean():
    code = RESUMABLE.format(numpy_state="np.random.get_state()", allow="", flag="").replace(
        "import torch\n", "import torch\n\ntorch.serialization.add_safe_globals([np._core.multiarray._reconstruct, "
                          "np.ndarray, np.dtype, np.dtypes.UInt32DType])\n", 1)
    assert [d for d in lint(code, pins={"torch": "2.6.0"}) if d.code == "AIC105"] == []


# Metrics kept as numpy scalars and a validation array, saved through one self.<attr> path.
EVALUATOR = '''\
import numpy as np
import torch


class Evaluator:
    def __init__(self, out="eval/metrics.pt"):
        self.out = out

    def save(self, losses):
        mean = np.float64({loss})
        torch.save({{"mean_loss": {saved}, "curve": {curve}}}, self.out)

    def load(self):
        return torch.load(self.out)
'''


@pytest.mark.parametrize("loss, saved, curve, want", [
    ("sum(losses) / len(losses)", "mean", "[]",
     "holding a numpy.generic (np.float64(...)) (via ['mean_loss']), which the default weights_only=True refuses "
     "from torch 2.6.0: \"UnpicklingError: Weights only load failed ... Unsupported global: GLOBAL "
     "numpy._core.multiarray.scalar was not an allowed global by default\""),
    ("0.0", "mean.item()", "np.zeros(8)",
     "holding a numpy.ndarray (np.zeros(...)) (via ['curve']), which the default weights_only=True refuses from "
     "torch 2.6.0: \"UnpicklingError: Weights only load failed ... Unsupported global: GLOBAL "
     "numpy._core.multiarray._reconstruct was not an allowed global by default\""),
    ("0.0", "mean.item()", "np.zeros(8).tolist()", None),  # the fixed twin: plain floats
])
def test_numpy_scalars_and_arrays_through_a_self_attribute(loss, saved, curve, want):
    code = EVALUATOR.format(loss=loss, saved=saved, curve=curve)
    got = [d.message for d in lint(code, pins={"torch": "2.13.0"}) if d.code == "AIC105"]
    if want is None:
        assert got == []
    else:
        assert len(got) == 1 and got[0].startswith("torch.load: 'eval/metrics.pt' is saved at line 11 ") and want in got[0]


def test_a_numpy_array_saved_to_a_bytes_buffer():
    code = ("import io\n\nimport numpy as np\nimport torch\n\n\ndef roundtrip(features):\n"
            "    buf = io.BytesIO()\n    torch.save({'features': np.asarray(features)}, buf)\n    buf.seek(0)\n"
            "    return torch.load(buf)\n")
    got = [(d.line, d.message.split(", which")[0]) for d in lint(code, pins={"torch": "2.13.0"}) if d.code == "AIC105"]
    assert got == [(11, "torch.load: buf is saved at line 9 holding a numpy.ndarray (np.asarray(...)) "
                        "(via ['features'])")]
    fixed = code.replace("np.asarray(features)", "torch.as_tensor(np.asarray(features))")
    assert [d for d in lint(fixed, pins={"torch": "2.13.0"}) if d.code == "AIC105"] == []


def test_python_random_state_alone_is_allowed():
    code = ("import random\nimport torch\n\nstate = {'py': random.getstate(), 'step': 3}\n"
            "torch.save(state, 'rng.pt')\nrestored = torch.load('rng.pt')\n")
    assert [d for d in lint(code, pins={"torch": "2.13.0"}) if d.code == "AIC105"] == []
