"""What test frameworks and the interpreter do to where code runs: calls that never
return, skip marks and the conditions they skip on, parametrized tables. The value
model (model/guards.py, guard_forms.py, test_params.py) reads these through the
library table (table.py) and names none of them itself.

Read from pytest 9.0.3 (site-packages/_pytest) and CPython 3.11 (Lib/unittest/case.py).
"""

from __future__ import annotations

# Calls that never return: the code after them does not run.
EXIT_CALLS = frozenset({
    "sys.exit", "os._exit",  # raise SystemExit / end the process (CPython 3.11 Python/sysmodule.c, posixmodule.c)
    "exit", "quit",  # site.py's Quitter: raises SystemExit
    # _pytest/outcomes.py: exit L98-100 raises Exit, skip L137-139 Skipped, fail L161-163 Failed,
    # xfail L191-193 XFailed (all exported by pytest/__init__.py L47-51)
    "pytest.skip", "pytest.fail", "pytest.xfail", "pytest.exit",
})
# Methods that never return, on whatever receiver: unittest/case.py L697-699
# TestCase.skipTest raises SkipTest.
EXIT_METHODS = frozenset({"skipTest"})

# Decorators that skip a test where their condition is true: _pytest/skipping.py L89-136
# (evaluate_condition: a string condition is eval()'d, anything else bool()'d);
# unittest/case.py L167-173 skipIf.
SKIP_IF = frozenset({"pytest.mark.skipif", "unittest.skipIf", "unittest.case.skipIf"})
# ... and where it is false: unittest/case.py L175-181 skipUnless.
SKIP_UNLESS = frozenset({"unittest.skipUnless", "unittest.case.skipUnless"})
# The module- or class-level variable whose marks apply to every test under it:
# _pytest/mark/structures.py L410-435 get_unpacked_marks reads ``pytestmark``.
MARKS_VARIABLE = "pytestmark"

# A test function runs once per row of this decorator's table (argnames, argvalues):
# _pytest/mark/structures.py L188-197 ParameterSet._for_parametrize.
PARAMETRIZE = frozenset({"pytest.mark.parametrize"})
# One row with its own marks: _pytest/mark/__init__.py L49 param(*values, marks=(), id=None).
PARAM = frozenset({"pytest.param"})
