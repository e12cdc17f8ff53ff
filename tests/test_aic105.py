"""AIC105 on checkpoints written the way training code writes them: a Trainer that keeps its
config dataclass and parsed args on self, saves in one method and resumes in another."""

import pytest
from conftest import lint

TRAINER = '''
import argparse
import dataclasses
import os

import torch


@dataclasses.dataclass
class OptimConfig:
    lr: float = 3e-4
    betas: tuple = (0.9, 0.95)


class Trainer:
    def __init__(self, model, cfg: OptimConfig, args, out_dir="checkpoints"):
        self.model = model
        self.cfg = cfg
        self.args = args
        self.path = os.path.join(out_dir, "last.pt")
        self.opt = torch.optim.AdamW(model.parameters(), lr=cfg.lr, betas=cfg.betas)

    def checkpoint(self, step):
        state = {{"step": step, "model": self.model.state_dict(), "optim": self.opt.state_dict()}}
        state["config"] = {config}
        torch.save(state, self.path)

    def resume(self):
        {allow}state = torch.load(self.path, map_location="cpu")
        self.model.load_state_dict(state["model"])
        return state["step"]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=1000)
    args = parser.parse_args()
    trainer = Trainer(torch.nn.Linear(64, 64), OptimConfig(), args)
    trainer.checkpoint(0)
    trainer.resume()
'''


def found(config, allow="", pins=None):
    code = TRAINER.format(config=config, allow=allow)
    return [(d.line, d.message.split(" (via")[0]) for d in lint(code, pins=pins or {"torch": "2.7.1"})
            if d.code == "AIC105"]


def test_a_config_or_namespace_kept_on_self_breaks_resume():
    assert found("self.cfg") == [(29, "torch.load: 'checkpoints/last.pt' is saved at line 26 holding an instance "
                                      "of OptimConfig")]
    assert found("self.args") == [(29, "torch.load: 'checkpoints/last.pt' is saved at line 26 holding an "
                                       "argparse.Namespace")]


def test_plain_values_allow_lists_and_old_releases_are_clean():
    assert found("dataclasses.asdict(self.cfg)") == []
    assert found("vars(self.args)") == []
    assert found("self.cfg", allow="torch.serialization.add_safe_globals([OptimConfig])\n        ") == []
    assert found("self.cfg", pins={"torch": "2.5.1"}) == []  # weights_only defaulted to False then


# Issue 27 item 3: a save and a load of one file that meet in an in-memory buffer or in one
# attribute of a class, not at a known path.
_ROUNDTRIP = """
import io

import torch
from torch import nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)


def clone_through_bytes(net):
    buf = io.BytesIO()
    torch.save(SAVED, buf)
    buf.seek(0)
    return torch.load(buf)
"""


@pytest.mark.parametrize("saved, pin, found", [
    ("Net()", "2.6.0", True),
    ("Net()", "2.5.1", False),  # the default was still weights_only=False
    ("net.state_dict()", "2.6.0", False),
])
def test_a_module_saved_to_a_bytes_buffer_and_loaded_back(saved, pin, found):
    d = lint(_ROUNDTRIP.replace("SAVED", saved), pins={"torch": pin}, select=["AIC105"])
    assert [(x.line, x.column) for x in d] == ([(18, 12)] if found else [])
    if found:
        assert d[0].message.startswith("torch.load: buf is saved at line 16 holding an instance of Net, which the "
                                       "default weights_only=True refuses from torch 2.6.0")


_TRAINER = """
import torch
from torch import nn


class Trainer:
    def __init__(self, ckpt_path, width=256):
        self.ckpt_path = ckpt_path
        self.model = nn.Linear(width, width)

    def save(self):
        torch.save(SAVED, self.ckpt_path)

    def restore(self):
        return torch.load(self.ckpt_path)
"""


@pytest.mark.parametrize("saved, found", [("self.model", True), ("self.model.state_dict()", False)])
def test_a_save_and_a_load_of_one_attribute_path(saved, found):
    d = lint(_TRAINER.replace("SAVED", saved), pins={"torch": ">=2.6"}, select=["AIC105"])
    assert [x.line for x in d] == ([15] if found else [])
    if found:
        assert "torch.load: self.ckpt_path is saved at line 12 holding a torch.nn.Linear" in d[0].message
