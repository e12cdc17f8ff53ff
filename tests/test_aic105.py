"""AIC105 on checkpoints written the way training code writes them: a Trainer that keeps its
config dataclass and parsed args on self, saves in one method and resumes in another."""

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
