"""tools/runtime_truth.py runs each fact in its own interpreter; what it records of a failure
is the exception line, and a hang is a timeout, not a stalled run."""

import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
spec = importlib.util.spec_from_file_location("runtime_truth", ROOT / "tools" / "runtime_truth.py")
truth = importlib.util.module_from_spec(spec)
spec.loader.exec_module(truth)


def test_a_failing_fact_records_its_exception_line():
    r = truth.run_fact("""
        def load():
            raise ValueError("Weights only load failed. \\x1b[1mdo this\\x1b[0m\\nsecond line of the message")
        load()
    """, timeout=30)
    assert r["outcome"] == "error"
    assert r["error"] == "ValueError: Weights only load failed. do this"


def test_a_fact_that_passes_records_its_value_and_a_hang_times_out():
    assert truth.run_fact("print(json.dumps({'value': [9, 0]}))", timeout=30)["value"] == [9, 0]
    assert truth.run_fact("import time\ntime.sleep(30)", timeout=1)["outcome"] == "timeout"


def test_every_fact_names_what_the_matrix_expects():
    for name, (need, expected, program) in truth.FACTS.items():
        assert expected and "json.dumps" in program, name
