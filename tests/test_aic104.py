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
