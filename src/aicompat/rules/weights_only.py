"""AIC105 load-weights-only: ``torch.load`` with the default ``weights_only`` of a
file the same code saved with objects the weights-only unpickler refuses (facts:
version_matrix/pickle.toml [weights_only], read in the 2.5.1/2.6.0 sources and
observed with torch 2.13.0).

From torch 2.6 ``torch.load`` unpickles only tensors, containers and an
allow-list of types unless ``weights_only=False`` is passed. A training script
that saves ``{"model": model.state_dict(), "args": args}`` and resumes from it
then fails on resume. The save is found in the same file, by the value of the
path both calls use; an unknown path or object says nothing. numpy values (an
RNG state from ``np.random.get_state()``, ``np.float64`` scalars, arrays) are
known by the calls that make them (returns_self.toml [result.*]); no release
2.4.0-2.15.0 allows a numpy global by default (pickle.toml ``releases``).
"""

from __future__ import annotations

import libcst as cst
from packaging.version import Version

from ..core.ruleapi import DictValue, Example, Finding, Instance, Layer, LibObject, PathValue, Rule, Seq, options
from ..core.ruleapi import api_query as q
from ..core.ruleapi import argparse_args as cli_args
from ._shared import saved_objects

_MAX_DEPTH = 6
_TRAIN = ("import argparse\n\nimport torch\n\n\n"
          "def save_checkpoint(model, args, path):\n"
          "    torch.save({\"model\": model.state_dict(), \"args\": %s}, path)\n\n\n"
          "def resume(model, path):\n"
          "    state = torch.load(path%s)\n"
          "    model.load_state_dict(state[\"model\"])\n\n\n"
          "def main():\n"
          "    parser = argparse.ArgumentParser()\n"
          "    parser.add_argument(\"--lr\", type=float, default=3e-4)\n"
          "    args = parser.parse_args()\n"
          "    model = torch.nn.Linear(8, 8)\n"
          "    save_checkpoint(model, args, \"ckpt.pt\")\n"
          "    resume(model, \"ckpt.pt\")\n")


_NUMPY = ("import numpy as np\nimport torch\n\nCKPT = 'ckpt/last.pt'\n\n\ndef save(model, step):\n"
          "    rng = np.random.get_state()%s\n"
          "    torch.save({'model': model.state_dict(), 'step': step, 'numpy_rng': rng}, CKPT)\n\n\n"
          "def resume(model):\n    ckpt = torch.load(CKPT)\n    model.load_state_dict(ckpt['model'])\n"
          "    return ckpt['step']\n")


class LoadWeightsOnly(Rule):
    code = "AIC105"
    name = "load-weights-only"
    tokens = (b"load",)
    call_tails = frozenset({"load"})

    VALID = [
        Example(_TRAIN % ("vars(args)", ""), pins={"torch": "2.6.0"}),
        Example(_TRAIN % ("args", ", weights_only=False"), pins={"torch": "2.6.0"}),
        Example(_TRAIN % ("args", ""), pins={"torch": "2.5.1"}),
        # The twin of the numpy example below: its own checkpoint, trusted.
        Example((_NUMPY % "").replace("torch.load(CKPT)", "torch.load(CKPT, weights_only=False)"),
                pins={"torch": "2.13.0"}),
    ]
    INVALID = [
        Example(_TRAIN % ("args", ""), pins={"torch": ">=2.5,<2.8"},
                findings=[
                    (11, 13, "torch.load: 'ckpt.pt' is saved at line 7 holding an argparse.Namespace (via "
                             "['args']), which the default weights_only=True refuses from torch 2.6.0: "
                             "\"UnpicklingError: Weights only load failed ... Unsupported global: GLOBAL "
                             "argparse.Namespace was not an allowed global by default\"; fails with torch "
                             "2.6.0–2.7.1. Save plain values (vars(args), dataclasses.asdict(cfg), "
                             "model.state_dict()), or allow the class with "
                             "torch.serialization.add_safe_globals([...])"),
                ]),
        Example("import dataclasses\n\nimport torch\n\n\n@dataclasses.dataclass\nclass TrainConfig:\n"
                "    lr: float = 3e-4\n    warmup: int = 100\n\n\nCKPT = 'run/last.pt'\n\n\n"
                "def save(step, cfg):\n    torch.save({'step': step, 'config': cfg}, CKPT)\n\n\n"
                "def load():\n    return torch.load(CKPT, map_location='cpu')\n\n\nsave(10, TrainConfig())\n",
                pins={"torch": "2.6.0"},
                findings=[
                    (20, 12, "torch.load: 'run/last.pt' is saved at line 16 holding an instance of TrainConfig "
                             "(via ['config']), which the default weights_only=True refuses from torch 2.6.0: "
                             "\"UnpicklingError: Weights only load failed ... Unsupported global: GLOBAL "
                             "<module>.TrainConfig was not an allowed global by default\"; fails with torch 2.6.0. "
                             "Save plain values (vars(args), dataclasses.asdict(cfg), model.state_dict()), or "
                             "allow the class with torch.serialization.add_safe_globals([...])"),
                ]),
        Example("import torch\nmodel = torch.nn.Linear(16, 16)\ntorch.save(model, 'model.pt')\n"
                "restored = torch.load('model.pt', weights_only=True)\n", pins={"torch": "2.5.1"},
                findings=[
                    (4, 12, "torch.load: 'model.pt' is saved at line 3 holding a torch.nn.Linear, which "
                            "weights_only=True refuses: \"UnpicklingError: Weights only load failed ... "
                            "Unsupported global: GLOBAL … was not an allowed global by default\"; "
                            "fails with torch 2.5.1. Save plain values (vars(args), dataclasses.asdict(cfg), "
                            "model.state_dict()), or allow the class with "
                            "torch.serialization.add_safe_globals([...])"),
                ]),
        Example(_NUMPY % "", pins={"torch": "2.13.0"},
                findings=[
                    (13, 12, "torch.load: 'ckpt/last.pt' is saved at line 9 holding a numpy.ndarray "
                             "(np.random.get_state()) (via ['numpy_rng']), which the default weights_only=True "
                             "refuses from torch 2.6.0: \"UnpicklingError: Weights only load failed ... Unsupported "
                             "global: GLOBAL numpy._core.multiarray._reconstruct was not an allowed global by "
                             "default\"; fails with torch 2.13.0. Save plain values (arr.tolist(), x.item()), pass "
                             "weights_only=False for a file you trust, or allow numpy's globals around the load "
                             "with torch.serialization.safe_globals([...]) (torch 2.5+; the error names each) or "
                             "add_safe_globals([...])"),
                ]),
    ]

    def __init__(self, matrix) -> None:
        super().__init__(matrix)
        self.entries = matrix.section("pickle.toml", "weights_only")

    def known_names(self) -> set[str]:
        return set(self.entries) | {s for e in self.entries.values() for s in e["savers"]}

    # Most ``.load(`` calls are no torch.load: where the call runs is asked only for one (``reach_own``).
    reach_own = frozenset({"check_call"})

    def check_call(self, site, qualname, fc):
        e = self.entries.get(qualname)
        if e is None or not fc.ctx.worlds or site.has_star:
            return []
        forced = False
        flag = site.kw.get(e["flag"])
        if flag is not None:
            v = fc.value_everywhere(flag)
            if v is not True and v is not None:
                return []  # weights_only=False, or unknown: nothing to claim
            forced = v is True
        if site.arg(*e["pickle_module"]) is not None and not forced:
            return []  # a pickle_module keeps the old default (False)
        failing = self._failing(fc, e, forced)
        if not failing or self._allowed(fc, e):
            return []
        path_expr = site.arg(*e["arg"])
        if path_expr is None:
            return []
        path = fc.value_everywhere(path_expr)
        storage = saved_objects.storage(path, path_expr, fc.loc[0], fc, e)
        if storage is None:
            return []
        for call, owner, stmt in saved_objects.saves(fc, e):
            saved = self._saved(call, owner, stmt, storage, fc, e)
            if saved is None:
                continue
            what, glob, where = saved
            label = q.span(failing)
            since = e["default_true_from"]
            reason = f"the default weights_only=True refuses from torch {since}" if not forced \
                else "weights_only=True refuses"
            shown = repr(path) if isinstance(path, str) else repr(str(path)) if isinstance(path, PathValue) \
                else fc.module.code_for_node(path_expr)
            fix = next((f for prefix, f in e.get("fixes", {}).items() if glob.startswith(prefix)),
                       "Save plain values (vars(args), dataclasses.asdict(cfg), model.state_dict()), or allow the "
                       "class with torch.serialization.add_safe_globals([...])")
            msg = (f"{qualname}: {shown} is saved at line {{line:save}} holding {what}"
                   f"{f' (via {where})' if where else ''}, which {reason}: "
                   f"\"{e['error'].format(**{'global': glob})}\"; fails with torch {label}. {fix}")
            return [Finding(site.node, msg, extra_targets=tuple(f"torch=={v}" for v in failing),
                            refs={"save": call})]
        return []

    def _failing(self, fc, e: dict, forced: bool) -> list[Version]:
        releases = q.releases_in_scope(fc, "torch")
        if not releases:
            known = fc.matrix.releases("torch")
            releases = known[-1:]  # unpinned: the newest release, as the API rules assume
        since = Version(e["default_true_from"])
        return [v for v in releases if forced or v >= since]

    def _allowed(self, fc, e: dict) -> bool:
        """Does the file allow-list classes (add_safe_globals / safe_globals)? Which ones is
        not followed: any such call keeps the rule silent."""
        for name in e["allow_calls"]:
            for call, _owner, _stmt in fc.model.calls_named(name.rsplit(".", 1)[-1]):
                if fc.resolve(call.func) == name:
                    return True
        return False

    def _saved(self, call: cst.Call, owner, stmt, storage, fc, e: dict):
        """(what, the GLOBAL the error names, path inside the object) of a refused object a save
        to ``storage`` (the load's, ``_storage``) writes, or None."""
        got = saved_objects.save_args(call, e)
        if got is None:
            return None
        obj, where = got
        worlds = sorted(fc.ctx.worlds, key=lambda w: (w.arch, str(w.torch)))
        if not worlds:
            return None
        ev = fc.evaluator(worlds[0])
        loc = (owner, stmt)
        if saved_objects.storage(ev.at(loc, {}, lambda: ev.eval(where)), where, owner, fc, e) != storage:
            return None
        return _refused(ev.at(loc, {}, lambda: ev.eval(obj)), e, "", 0, fc.module.code_for_node)


def _made_by(o, code) -> str:
    """`` (np.random.get_state())``: the library call a value was made by, where it is not the
    type's own name (a call whose result holds the object, returns_self.toml [result.*])."""
    call = o.origin
    if not isinstance(call, cst.Call):
        return ""
    func = code(call.func)
    if func.rsplit(".", 1)[-1] == o.qualname.rsplit(".", 1)[-1]:
        return ""  # the type's own constructor (torch.optim.AdamW(...))
    return f" ({func}({'...' if call.args else ''}))"


def _refused(v, e: dict, path: str, depth: int, code):
    refused = e["refused"]
    if depth > _MAX_DEPTH:
        return None
    for o in options(v):
        if isinstance(o, Instance) and "instance" in refused:
            # pickled by reference to the module that defines it: __main__ for a script
            return f"an instance of {o.cls.name}", f"<module>.{o.cls.name}", path
        if isinstance(o, cli_args.Namespace) and "argparse.Namespace" in refused:
            return "an argparse.Namespace", "argparse.Namespace", path
        if isinstance(o, Layer) and "torch.nn." in refused:
            o = LibObject(f"torch.nn.{o.kind}")  # a layer the shape model knows (nn.Linear(...))
        if isinstance(o, LibObject) and any(o.qualname == r or (r.endswith(".") and o.qualname.startswith(r))
                                            for r in refused):
            # The error names the defining module (torch.nn.modules.linear.Linear), not the alias;
            # [globals] the GLOBAL the pickle of a library type holds (numpy.ndarray's _reconstruct).
            glob = e.get("globals", {}).get(o.qualname) or (o.qualname if o.qualname in refused else "…")
            return f"a {o.qualname}{_made_by(o, code)}", glob, path
        if isinstance(o, (tuple, Seq)):
            for i, x in enumerate(o if isinstance(o, tuple) else o.items):
                hit = _refused(x, e, f"{path}[{i}]", depth + 1, code)
                if hit:
                    return hit
        elif isinstance(o, DictValue):
            for k, x in o.items:
                hit = _refused(x, e, f"{path}[{k!r}]", depth + 1, code)
                if hit:
                    return hit
    return None
