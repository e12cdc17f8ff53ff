"""AIC104 pickle-cuda-object: data flow from creation to serialisation."""
import textwrap

import pytest
from conftest import lint


def aic104(code, pins=None):
    return [d for d in lint(textwrap.dedent(code), pins=pins, select=["AIC104"])]


@pytest.mark.parametrize("code", [
    """
    import torch
    ev = torch.cuda.Event(enable_timing=True)
    state = {"step": 1}
    state.update({"timer": ev})
    torch.save(state, "c.pt")
    """,
    """
    import torch, copy
    class Model(torch.nn.Module):
        def __init__(self):
            super().__init__()
            s = torch.cuda.Stream()
            self.side = s
    model = Model()
    backup = copy.deepcopy(model)
    """,
    """
    import torch
    graphed = torch.cuda.make_graphed_callables(module, (x,))
    torch.save(graphed, "g.pt")
    """,
    """
    import torch
    hist = []
    hist.append(open("log.txt", "w"))
    torch.save({"history": hist}, "h.pt")
    """,
    """
    import torch
    torch.save({"gen": (x for x in range(3))}, "g.pt")
    """,
])
def test_flagged(code):
    d = aic104(code)
    assert [x.code for x in d] == ["AIC104"], [x.message for x in d]
    assert "created at line" in d[0].message and "?" not in d[0].message


@pytest.mark.parametrize("code", [
    """
    import torch
    s = torch.cuda.Stream()
    with torch.cuda.stream(s):
        y = model(x)
    torch.save(model.state_dict(), "m.pt")
    """,
    """
    import torch
    ev = torch.cuda.Event()
    state = {"elapsed": ev.elapsed_time(ev)}
    torch.save(state, "c.pt")
    """,
    """
    import torch, pickle
    s = torch.cuda.Stream()
    try:
        blob = pickle.dumps({"s": s})
    except TypeError:
        blob = None
    """,
])
def test_not_flagged(code):
    assert aic104(code) == []


def test_generator_follows_the_pinned_release():
    code = "import torch\ng = torch.Generator()\ntorch.save({'g': g}, 'g.pt')\n"
    assert aic104(code, pins={"torch": ">=2.3,<2.5"})[0].targets[-2:] == ["torch==2.3.0", "torch==2.3.1"]
    assert aic104(code, pins={"torch": "2.6.0"}) == []


# -- instances followed through the value model ------------------------------------
def _msg(sink, what, via, line, error):
    return (f"{sink}: the saved object holds a {what} (via {via}) created at line {line}: \"TypeError: cannot "
            f"pickle '{error}' object\"; save state_dict()s and plain values instead")


FEEDER = """
import torch


class Feeder:
    def __init__(self, data):
        self.data = data
        self.position = 0
        self.stream = torch.cuda.Stream()
{hook}

def save(feeder: Feeder, path: str):
    torch.save({{"feeder": feeder, "step": 10}}, path)


save(Feeder(torch.randn(8, 4)), "ckpt.pt")
"""

HOOKS_KEEPING_THE_STREAM = {
    "getstate-copy": """
    def __getstate__(self):
        state = self.__dict__.copy()
        state["position"] = 0
        return state
""",
    "getstate-vars": """
    def __getstate__(self):
        return dict(vars(self))
""",
    "reduce-args": """
    def __reduce__(self):
        return (Feeder, (self.data,), {"stream": self.stream})
""",
}

HOOKS_DROPPING_THE_STREAM = {
    "getstate-pop": """
    def __getstate__(self):
        state = dict(self.__dict__)
        state.pop("stream", None)
        return state
""",
    "getstate-comprehension": """
    def __getstate__(self):
        return {k: v for k, v in self.__dict__.items() if k not in ("stream",)}
""",
    "getstate-replaced": """
    def __getstate__(self):
        state = self.__dict__.copy()
        state["stream"] = None
        return state
""",
    "reduce-ctor": """
    def __reduce__(self):
        return (Feeder, (self.data,))
""",
}


@pytest.mark.parametrize("hook", list(HOOKS_KEEPING_THE_STREAM.values()), ids=list(HOOKS_KEEPING_THE_STREAM))
def test_pickling_hook_that_keeps_the_stream_is_flagged(hook):
    d = aic104(FEEDER.format(hook=hook))
    assert [(x.code, x.line, x.column) for x in d] == [("AIC104", hook.count("\n") + 13, 5)], [x.message for x in d]
    assert "CUDA stream" in d[0].message and "created at line 9" in d[0].message


@pytest.mark.parametrize("hook", list(HOOKS_DROPPING_THE_STREAM.values()), ids=list(HOOKS_DROPPING_THE_STREAM))
def test_pickling_hook_that_drops_the_stream_is_clean(hook):
    assert aic104(FEEDER.format(hook=hook)) == []


def test_no_hook_names_the_attribute():
    d = aic104(FEEDER.format(hook=""))
    assert [(x.line, x.column, x.message) for x in d] == [
        (13, 5, _msg("torch.save", "CUDA stream", "obj['feeder'].stream", 9, "Stream"))]


EMA = """
import copy

import torch
from torch import nn


class SideStreamBlock(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.proj = nn.Linear(dim, dim)
        self.side = torch.cuda.Stream()
{hook}

class EMA:
    def __init__(self, model: nn.Module):
        self.shadow = copy.deepcopy(model).eval()


model = SideStreamBlock(64).to("cuda").half()
ema = EMA(model)
torch.save(model, "block.pt")
"""

DEEPCOPY_HOOK = """
    def __deepcopy__(self, memo):
        twin = SideStreamBlock(self.proj.in_features)
        twin.load_state_dict(self.state_dict())
        return twin
"""


def test_deepcopy_and_save_of_a_module_holding_a_stream():
    d = aic104(EMA.format(hook=""))
    assert [(x.line, x.column, x.message) for x in d] == [
        (17, 23, _msg("copy.deepcopy", "CUDA stream", "model.side", 12, "Stream")),
        (22, 1, _msg("torch.save", "CUDA stream", "model.side", 12, "Stream")),
    ]


def test_deepcopy_hook_copies_without_pickling_but_save_still_pickles():
    d = aic104(EMA.format(hook=DEEPCOPY_HOOK))
    assert [(x.line, x.column) for x in d] == [(27, 1)], [x.message for x in d]
    assert "torch.save" in d[0].message


RECIPE = """
import dataclasses
import pickle

import torch


@dataclasses.dataclass
class StepTimer:
    name: str
    {field}


def dump(timers, path):
    with open(path, "wb") as f:
        pickle.dump(timers, f)


dump([StepTimer("fwd", {arg})], "timers.pkl")
"""


def test_dataclass_field_holding_an_event():
    d = aic104(RECIPE.format(field="start: torch.cuda.Event", arg="torch.cuda.Event(enable_timing=True)"))
    assert [(x.line, x.column, x.message) for x in d] == [
        (16, 9, _msg("pickle.dump", "CUDA event", "timers[0].start", 19, "Event"))]


def test_dataclass_field_holding_the_elapsed_time():
    assert aic104(RECIPE.format(field="elapsed_ms: float", arg="12.5")) == []


# -- torch registers a reducer for torch.cuda.Event on multiprocessing's ForkingPickler --
QUEUE = """
import torch
import {mp} as mp


def producer(queue: mp.Queue, n: int):
    for _ in range(n):
        done = torch.cuda.Event(interprocess=True)
        done.record()
        queue.put({{"event": done, "stream": {stream}}})


if __name__ == "__main__":
    q = mp.Queue()
    producer(q, 4)
"""


@pytest.mark.parametrize("mp", ["torch.multiprocessing", "multiprocessing"])
def test_event_on_a_queue_travels_as_an_ipc_handle(mp):
    assert aic104(QUEUE.format(mp=mp, stream="None")) == []


@pytest.mark.parametrize("mp", ["torch.multiprocessing", "multiprocessing"])
def test_stream_next_to_the_event_on_a_queue_is_flagged(mp):
    d = aic104(QUEUE.format(mp=mp, stream="torch.cuda.current_stream()"))
    assert [(x.line, x.column) for x in d] == [(10, 9)], [x.message for x in d]
    assert "CUDA stream" in d[0].message


def test_event_pickled_directly_still_fails():
    code = QUEUE.format(mp="torch.multiprocessing", stream="None").replace(
        "queue.put(", "pickle.dumps(").replace("import torch\n", "import pickle\nimport torch\n", 1)
    d = aic104(code)
    assert [(x.line, x.column, x.message) for x in d] == [
        (11, 9, _msg("pickle.dumps", "CUDA event", "obj['event']", 9, "Event"))]


# -- processes started with spawn pickle their target and arguments (pickle.toml) ----------
SPAWNED = """
import threading

import torch
import torch.multiprocessing as mp


def evaluate(rank: int, shared: dict):
    torch.cuda.set_device(rank)
    with shared["lock"]:
        print(rank, shared["name"])


def launch(world_size: int):
    shared = {{"name": "eval", "lock": {lock}}}
    {launch}
"""

SPAWN_FAILS = "TypeError: cannot pickle '_thread.lock' object"


@pytest.mark.parametrize("launch, at, sink, what", [
    ("mp.spawn(evaluate, args=(shared,), nprocs=world_size)", (16, 5), "torch.multiprocessing.spawn",
     "an argument pickled for the spawned workers"),
    ("mp.start_processes(evaluate, (shared,), world_size)", (16, 5), "torch.multiprocessing.start_processes",
     "an argument pickled for the started workers"),
    ("mp.get_context('spawn').Process(target=evaluate, args=(0, shared)).start()", (16, 5),
     "torch.multiprocessing.Process", "the target or an argument pickled for the child process"),
])
def test_lock_handed_to_a_spawned_worker(launch, at, sink, what):
    d = aic104(SPAWNED.format(lock="threading.Lock()", launch=launch))
    via = "args[0]['lock']" if "Process" not in sink else "args[1]['lock']"
    assert [(x.line, x.column, x.message) for x in d] == [
        (*at, f"{sink}: {what} holds a lock (via {via}) created at line 15: \"{SPAWN_FAILS}\"; "
              f"create it in the {'target' if 'Process' in sink else 'worker'} function instead")]


@pytest.mark.parametrize("launch", [
    "mp.spawn(evaluate, args=(shared,), nprocs=world_size)",
    "mp.start_processes(evaluate, (shared,), world_size)",
    "mp.get_context('spawn').Process(target=evaluate, args=(0, shared)).start()",
])
def test_worker_made_lock_is_clean(launch):
    # the fix: the worker makes its own lock (a fresh one per process is all it can share anyway)
    assert aic104(SPAWNED.format(lock="None", launch=launch)) == []


@pytest.mark.parametrize("launch", [
    "mp.start_processes(evaluate, (shared,), world_size, start_method='fork')",  # fork copies, never pickles
    "mp.get_context('fork').Process(target=evaluate, args=(0, shared)).start()",
    "mp.Process(target=evaluate, args=(0, shared)).start()",  # default start method: not known here
])
def test_forked_or_unknown_start_method_is_silent(launch):
    assert aic104(SPAWNED.format(lock="threading.Lock()", launch=launch)) == []


def test_set_start_method_spawn_makes_process_pickle():
    code = SPAWNED.format(lock="threading.Lock()", launch="mp.Process(target=evaluate, args=(0, shared)).start()")
    code += "\n\nif __name__ == '__main__':\n    mp.set_start_method('spawn')\n    launch(2)\n"
    assert [(x.line, x.column) for x in aic104(code)] == [(16, 5)]


# -- AveragedModel deep-copies the module it wraps (swa_utils.py L280) ----------------------
SWA_EMA = """
import torch
from torch import nn
from torch.optim.swa_utils import AveragedModel


class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(64, 64)
        self.copy_stream = {init}

    @property
    def stream(self):
        if self.copy_stream is None:
            self.copy_stream = torch.cuda.Stream()
        return self.copy_stream


def train(steps: int):
    model = Encoder().cuda()
    ema = AveragedModel(model)
    for _ in range(steps):
        model(torch.randn(8, 64, device="cuda")).sum().backward()
        ema.update_parameters(model)
    return ema
"""


def test_averaged_model_of_a_module_holding_a_stream():
    d = aic104(SWA_EMA.format(init="torch.cuda.Stream()"))
    assert [(x.line, x.column, x.message) for x in d] == [
        (22, 11, "torch.optim.swa_utils.AveragedModel: the module it deep-copies holds a CUDA stream (via "
                 "model.copy_stream) created at line 11: \"TypeError: cannot pickle 'Stream' object\"; create it "
                 "outside the module, or lazily on first use")]


def test_averaged_model_before_the_lazy_stream_is_made_is_clean():
    assert aic104(SWA_EMA.format(init="None")) == []


def test_lazy_stream_is_there_once_a_method_ran():
    # the property ran (model.stream) before the copy: the stream is copied
    code = SWA_EMA.format(init="None").replace("    ema = AveragedModel(model)\n",
                                           "    model.stream.synchronize()\n    ema = AveragedModel(model)\n")
    assert [(x.line, x.column) for x in aic104(code)] == [(23, 11)]


CLOUD = '''import pickle
import threading

import cloudpickle
import dill
import torch


class Job:
    def __init__(self, fn):
        self.fn = fn
        self.lock = threading.Lock()
        self.done = torch.cuda.Event()


def ship(job, how):
    return {how}(job.{attr})


payload = ship(Job(lambda batch: batch * 2), "x")
'''


def test_cloudpickle_and_dill_pickle_what_they_handle_by_value():
    from conftest import lint

    def found(how, attr):
        return [(d.line, d.message.split(":")[0]) for d in lint(CLOUD.format(how=how, attr=attr)) if d.code == "AIC104"]

    # Observed (cloudpickle 3.1.3, dill 0.4.1): both pickle a lambda by value; dill also a Lock.
    assert found("cloudpickle.dumps", "fn") == []
    assert found("dill.dumps", "fn") == []
    assert found("dill.dumps", "lock") == []
    assert found("cloudpickle.dumps", "lock") == [(17, "cloudpickle.dumps")]
    assert found("dill.dumps", "done") == [(17, "dill.dumps")]  # no serialiser pickles a CUDA event
    assert found("pickle.dumps", "fn") == [(17, "pickle.dumps")]


# Issue 27 item 3: the forms generated code takes to reach a serialiser, each with its twin.
_TIMER = """
import torch


class StepTimer:
    def __init__(self, path):
        self.path = path
        self.timings = []

    def record(self, step):
        start_evt = torch.cuda.Event(enable_timing=True)
        end_evt = torch.cuda.Event(enable_timing=True)
        start_evt.record()
        self.timings.append((step, start_evt, end_evt))

    def save(self):
        torch.save({"timings": TIMINGS}, self.path)
"""


@pytest.mark.parametrize("saved, found", [
    ("self.timings", True),
    ("[(s, a.elapsed_time(b)) for s, a, b in self.timings]", False),  # the fix: plain numbers
])
def test_a_list_attribute_filled_in_another_method(saved, found):
    d = aic104(_TIMER.replace("TIMINGS", saved))
    assert [(x.line, x.column) for x in d] == ([(17, 9)] if found else [])
    if found:
        assert "holds a CUDA event (via obj[\"timings\"][...][1]) created at line 11" in d[0].message


_EVENTS = """
import pickle
import torch


def dump_profile(fh, n_events=4):
    events = {"events": [EVENT for _ in range(n_events)]}
    pickle.dump(events, fh)
"""


@pytest.mark.parametrize("event, found", [
    ("torch.cuda.Event(enable_timing=True)", True),
    ("0.0", False),
])
def test_events_made_by_a_comprehension_inside_a_dict(event, found):
    """Observed on an H200 (torch 2.11.0, issue 27): TypeError: cannot pickle 'Event' object."""
    d = aic104(_EVENTS.replace("EVENT", event))
    assert [x.line for x in d] == ([8] if found else [])


_PARTIAL = """
import functools
import torch


class Checkpointer:
    def __init__(self, model):
        self.model = model
        self.graph = torch.cuda.CUDAGraph()

    def saver(self, path):
        return functools.partial(torch.save, STATE, path)
"""


@pytest.mark.parametrize("state, found", [
    ('{"model": self.model.state_dict(), "graph": self.graph}', True),
    ('{"model": self.model.state_dict()}', False),
])
def test_a_save_bound_by_functools_partial(state, found):
    d = aic104(_PARTIAL.replace("STATE", state))
    assert [x.line for x in d] == ([12] if found else [])
    if found:
        assert d[0].message.startswith("torch.save: the saved object holds a CUDA graph")


# An object kept unless a resumed checkpoint replaces it: ``timer`` is a Timer on the path
# that starts fresh and unknown on the one that resumes. Pickling fails on the first path, so
# the value the object *may* have is asked (Evaluator ``may``), not the merged UNKNOWN.
_RESUME = """
import os
import torch


class Timer:
    def __init__(self):
        self.start = torch.cuda.Event(enable_timing=True)
        self.end = torch.cuda.Event(enable_timing=True)
        self.stream = torch.cuda.Stream()

    def elapsed_ms(self):
        self.end.synchronize()
        return self.start.elapsed_time(self.end)
STATE_HOOK

def load_checkpoint(path):
    ckpt = torch.load(path, weights_only=False)
    return ckpt["step"], ckpt["timer"]


def train(model, opt, path="ckpt.pt", steps=100):
    step = 0
    timer = Timer()
    RESUME
    while step < steps:
        timer.start.record()
        opt.step()
        timer.end.record()
        step += 1
    torch.save({"step": step, "model": model.state_dict(), "timer": SAVED}, path)
"""
_IF_RESUME = "if os.path.exists(path):\n        step, timer = load_checkpoint(path)"
_GETSTATE = """
    def __getstate__(self):
        return {"elapsed": self.elapsed_ms()}
"""


@pytest.mark.parametrize("resume, hook, saved, found", [
    (_IF_RESUME, "", "timer", True),
    # the same Timer reached through a helper that picks it or the loaded one
    ("timer = timer if not os.path.exists(path) else load_checkpoint(path)[1]", "", "timer", True),
    # fixes: save the number, or let the class pickle plain values
    (_IF_RESUME, "", "timer.elapsed_ms()", False),
    (_IF_RESUME, _GETSTATE, "timer", False),
    # replaced on every path: only the unknown loaded object is saved
    ("step, timer = load_checkpoint(path)", "", "timer", False),
])
def test_an_object_merged_with_an_unknown_by_a_resume(resume, hook, saved, found):
    code = _RESUME.replace("RESUME", resume).replace("STATE_HOOK", hook).replace("SAVED", saved)
    d = aic104(code, pins={"torch": "2.1.2"})
    at = code.split("\n").index('    torch.save({"step": step, "model": model.state_dict(), "timer": %s}, path)' % saved) + 1
    assert [(x.line, x.column) for x in d] == ([(at, 5)] if found else []), [x.message for x in d]
    if found:
        assert d[0].message.startswith("torch.save: the saved object holds a CUDA event (via obj['timer'].start) "
                                       "created at line 8")


@pytest.mark.parametrize("test, found", [(">= 8", True), ("< 8", False)])
def test_a_branch_the_world_rules_out_stays_out_of_what_may_be(test, found):
    # ``may`` keeps the known values of the paths that run, and no others: where the GPU
    # rules the Timer's branch out (sm_80 is not < 8), nothing that may be saved holds one.
    code = """
import torch


class Timer:
    def __init__(self):
        self.start = torch.cuda.Event(enable_timing=True)


def checkpoint(step, path, load):
    timer = load(path)
    if torch.cuda.get_device_capability()[0] TEST:
        timer = Timer()
    torch.save({"step": step, "timer": timer}, path)
"""
    assert [x.line for x in aic104(code.replace("TEST", test))] == ([14] if found else [])
