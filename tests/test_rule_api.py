"""The engine knows no rule: rules plug in through aicompat.core.ruleapi and the
registry, and provide the context other rules read (with-blocks, function
marks, the exception hierarchy) through generic hooks and version_matrix data."""
import io
import re
import tokenize
from pathlib import Path

import libcst as cst
import pytest
from conftest import SRC, codes, lint

from aicompat.base.toml_compat import tomllib
from aicompat.core.ruleapi import Example, Finding, Rule
from aicompat.rules import registry

# The linter (run/) sits above the rules and hands them to the engine (tests/test_layers.py keeps
# the layers below it from importing them); it too knows no rule.
ENGINE_MODULES = ["core/engine.py", "model/evaluate.py", "model/guards.py", "syntax/walk.py", "syntax/index.py",
                  "core/ruleapi.py"]
# What only a rule may know: rule codes past the engine's own AIC0xx, and the
# libraries and library calls the rules judge.
RULE_KNOWLEDGE = re.compile(
    r"AIC[1-9]\d\d|torch\.compile|_dynamo|sdpa|sdp_kernel|SDPBackend|fp8|float8|_scaled_mm|flash_attn"
    r"|transformer_engine|pickle|deepcopy|attn_implementation", re.IGNORECASE)


def _code_tokens(path: Path):
    """Names, strings and numbers of a module, without comments and docstrings."""
    prev = tokenize.NEWLINE
    for tok in tokenize.generate_tokens(io.StringIO(path.read_text()).readline):
        kind = tok.type
        if kind == tokenize.STRING and prev in (tokenize.NEWLINE, tokenize.NL, tokenize.INDENT, tokenize.DEDENT):
            pass  # a docstring or a bare string statement
        elif kind not in (tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT):
            yield tok
        if kind not in (tokenize.COMMENT, tokenize.NL):
            prev = kind


@pytest.mark.parametrize("name", ENGINE_MODULES)
def test_engine_module_imports_no_rule(name):
    tree = cst.parse_module((SRC / "aicompat" / name).read_text())
    imported = set()
    for node in _walk_imports(tree):
        if isinstance(node, cst.ImportFrom):
            mod = cst.Module([]).code_for_node(node.module) if node.module else ""
            imported.add("." * len(node.relative) + mod)
            if mod == "" and not isinstance(node.names, cst.ImportStar):
                imported |= {"." + a.name.value for a in node.names}
        else:
            imported |= {cst.Module([]).code_for_node(a.name) for a in node.names}
    assert not [m for m in imported if m.lstrip(".").startswith("rules") or "aicompat.rules" in m], imported


def _walk_imports(tree):
    found = []

    class V(cst.CSTVisitor):
        def visit_Import(self, node):
            found.append(node)

        def visit_ImportFrom(self, node):
            found.append(node)

    tree.visit(V())
    return found


def test_ruleapi_stands_on_the_layers_below_the_engine():
    """ruleapi re-exports what rules need of the value model; it never imports the engine or a rule."""
    tree = cst.parse_module((SRC / "aicompat" / "core" / "ruleapi.py").read_text())
    local = [n for n in _walk_imports(tree) if isinstance(n, cst.ImportFrom) and n.relative]
    below = ("values", "fs.", "syntax.", "libmodels", "model", "matrix", "base.")
    mods = [cst.Module([]).code_for_node(n.module) for n in local]
    assert mods and all(m.startswith(below) for m in mods), mods


@pytest.mark.parametrize("name", ENGINE_MODULES + ["run/linter.py"])
def test_engine_module_names_no_rule_knowledge(name):
    hits = [(t.start[0], t.string) for t in _code_tokens(SRC / "aicompat" / name) if RULE_KNOWLEDGE.search(t.string)]
    assert hits == []


def test_the_knowledge_check_sees_code_but_not_docs(tmp_path):
    sample = tmp_path / "m.py"
    sample.write_text('"""About torch.compile."""\n# sdpa\nx = 1\nQ = "torch.compile"\n')
    assert [t.string for t in _code_tokens(sample) if RULE_KNOWLEDGE.search(t.string)] == ['"torch.compile"']


# -- a rule the engine has never seen, with its own data ----------------------------
DATA = tomllib.loads('''
[launch."gridlib.launch"]
error = "gridlib.LaunchError: launch inside a quiet block"
source = "a made-up library for this test"

[quiet."gridlib.quiet"]
source = "a made-up library for this test"

[jit."gridlib.jit"]
source = "a made-up library for this test"
''')


class QuietLaunch(Rule):
    code = "AIC999"
    name = "quiet-launch"
    tokens = (b"gridlib",)
    call_tails = frozenset(q.rsplit(".", 1)[-1] for q in DATA["launch"])
    VALID = [Example("import gridlib\ngridlib.launch()\n")]
    INVALID = [Example("import gridlib\nwith gridlib.quiet():\n    gridlib.launch()\n",
                       findings=[(3, 5, 'gridlib.launch in gridlib.quiet: "gridlib.LaunchError: launch inside a quiet block"')])]

    def with_context(self, call, qualname, fc):
        return {"gridlib.quiet": True} if qualname in DATA["quiet"] else None

    def function_marks(self):
        return dict.fromkeys(DATA["jit"], "gridlib.jitted")

    def check_call(self, site, qualname, fc):
        entry = DATA["launch"].get(qualname)
        if entry is None or fc.ctx.caught("LookupError"):
            return []
        where = [k for k in ("gridlib.quiet", "gridlib.jitted") if fc.ctx.facts.get(k)]
        if not where:
            return []
        return [Finding(site.node, f"{qualname} in {', '.join(where)}: \"{entry['error']}\"",
                        frozenset(w.arch for w in fc.ctx.worlds))]


@pytest.fixture
def with_quiet_launch(monkeypatch):
    monkeypatch.setattr(registry, "RULE_CLASSES", [*registry.RULE_CLASSES, QuietLaunch])


def aic999(code):
    return [d.message for d in lint(code, select=["AIC999"])]


@pytest.mark.usefixtures("with_quiet_launch")
class TestANewRuleNeedsNoEngineEdit:
    def test_its_examples(self):
        assert aic999(QuietLaunch.VALID[0].code) == []
        assert "quiet" in aic999(QuietLaunch.INVALID[0].code)[0]

    def test_with_context_reaches_the_body_only(self):
        code = "import gridlib as g\nwith open('f') as fh, g.quiet():\n    g.launch()\ng.launch()\n"
        assert [d.line for d in lint(code, select=["AIC999"])] == [3]

    def test_a_with_around_a_def_does_not_cover_its_body(self):
        assert aic999("import gridlib\nwith gridlib.quiet():\n    def f():\n        gridlib.launch()\n") == []

    def test_function_marked_by_a_later_call(self):
        code = "import gridlib\n\ndef step():\n    gridlib.launch()\n\nfast = gridlib.jit(step)\n"
        assert aic999(code) == ['gridlib.launch in gridlib.jitted: "gridlib.LaunchError: launch inside a quiet block"']

    def test_function_marked_by_a_decorator_and_its_nested_defs(self):
        code = "import gridlib\n\n@gridlib.jit(opt=2)\ndef step():\n    def inner():\n        gridlib.launch()\n"
        assert len(aic999(code)) == 1

    def test_a_same_named_callable_of_another_library_marks_nothing(self):
        code = "import gridlib\nimport otherlib\n\ndef step():\n    gridlib.launch()\n\nfast = otherlib.jit(step)\n"
        assert aic999(code) == []

    def test_the_exception_hierarchy_comes_from_data(self):
        # KeyError is a LookupError: a LookupError the rule raises is not caught by it.
        body = ("import gridlib\nwith gridlib.quiet():\n    try:\n        gridlib.launch()\n"
                "    except {}:\n        pass\n")
        assert aic999(body.format("LookupError")) == []
        assert len(aic999(body.format("KeyError"))) == 1
        assert aic999(body.format("Exception")) == []


# -- the context the shipped rules provide, through the same hooks -------------------
FP8_CAST = "import torch\n\ndef quant(x):\n    return x.to(torch.float8_e4m3fn)\n\n"


@pytest.mark.parametrize("compile_line,flagged", [
    ("cq = torch.compile(quant)\n", True),
    ("cq = torch.compile(mode='max-autotune')(quant)\n", True),
    ("cq = torch._dynamo.optimize('inductor')(quant)\n", True),
    ("def main():\n    return torch.compile(quant)\n", True),
    # Not torch.compile: MLX's compile, a regex's compile, a method of something else.
    ("import mlx.core as mx\ncq = mx.compile(quant)\n", False),
    ("import re\nrx = re.compile(quant)\n", False),
    ("cq = jit.compile(quant)\n", False),
    ("cq = quant\n", False),
])
def test_fp8_cast_only_in_a_function_handed_to_torch_compile(compile_line, flagged):
    d = lint(FP8_CAST + compile_line, gpus=["A100"], select=["AIC102"])
    assert bool(d) == flagged, [x.message for x in d]


def test_compiled_marks_survive_deselecting_the_rule_that_declares_them():
    # AIC103 declares torch.compile's marks; selection decides what is reported, not what guards know.
    code = FP8_CAST + "cq = torch.compile(quant)\n"
    assert codes(lint(code, gpus=["A100"], select=["AIC102"])) == ["AIC102"]
    assert codes(lint(code, gpus=["H100"], select=["AIC102"])) == []


def test_compiled_cast_handler_is_the_exception_fp8_toml_names(monkeypatch):
    """A handler silences the compiled FP8 cast only when it catches fp8.toml's compiled_cast exception."""
    from aicompat.matrix import default_matrix

    code = ("import torch\n@torch.compile\ndef quant(x):\n    try:\n        return x.to(torch.float8_e4m3fn)\n"
            "    except RuntimeError:\n        return x\n")
    assert lint(code, gpus=["A100"], select=["AIC102"]) == []
    monkeypatch.setitem(default_matrix().section("fp8.toml", "compiled_cast")["fp8e4nv"], "exception", "ValueError")
    assert codes(lint(code, gpus=["A100"], select=["AIC102"])) == ["AIC102"]
    assert lint(code.replace("RuntimeError", "ValueError"), gpus=["A100"], select=["AIC102"]) == []


SDPA = ("import torch\nimport torch.nn.functional as F\nfrom torch.nn.attention import sdpa_kernel, SDPBackend\n"
        "q = torch.randn(2, 8, 128, 192)\nv = torch.randn(2, 8, 128, 128)\n")


@pytest.mark.parametrize("with_line,flagged", [
    ("with sdpa_kernel(SDPBackend.FLASH_ATTENTION):\n", True),
    ("with sdpa_kernel(backends=[SDPBackend.FLASH_ATTENTION]):\n", True),
    ("with sdpa_kernel([SDPBackend.FLASH_ATTENTION, SDPBackend.MATH]):\n", False),
    # A later item overrides an earlier one, as a nested with does (torch sets, not intersects).
    ("with sdpa_kernel(SDPBackend.MATH), sdpa_kernel(SDPBackend.FLASH_ATTENTION):\n", True),
    ("with sdpa_kernel(SDPBackend.FLASH_ATTENTION), sdpa_kernel(SDPBackend.MATH):\n", False),
    ("with torch.backends.cuda.sdp_kernel(enable_math=False, enable_mem_efficient=False, enable_cudnn=False):\n",
     True),
    ("with torch.backends.cuda.sdp_kernel(enable_math=False):\n", False),
])
def test_sdpa_backends_a_with_leaves_enabled(with_line, flagged):
    d = lint(SDPA + with_line + "    F.scaled_dot_product_attention(q, q, v)\n", gpus=["H100"], select=["AIC101"])
    assert bool(d) == flagged, [x.message for x in d]


@pytest.mark.parametrize("handler,flagged", [
    ("ModuleNotFoundError", False),
    ("ImportError", False),
    ("Exception", False),
    ("LookupError", True),
    ("AttributeError", True),
])
def test_import_guard_handlers_follow_the_exception_hierarchy(handler, flagged):
    d = lint(f"try:\n    import tomllib\nexcept {handler}:\n    tomllib = None\n", python="3.10", select=["AIC401"])
    assert bool(d) == flagged, [x.message for x in d]


def test_exception_aliases_catch_their_class(matrix):
    assert {"IOError", "EnvironmentError", "OSError"} <= matrix.handlers["FileNotFoundError"]
    assert "ImportError" not in matrix.handlers["AttributeError"]


def test_shared_facts_are_declared_and_provided_by_rules_shared():
    """A fact one rule reads is declared in rules/_shared/facts.py and provided there, never by
    another rule's module (issue 26)."""
    from aicompat.rules.registry import PROVIDERS, SHARED_FACTS

    rules_dir = SRC / "aicompat" / "rules"
    read = set()
    for path in rules_dir.rglob("*.py"):
        text = path.read_text()
        read |= set(re.findall(r"fc\.ctx\.(?:facts\.get|fact_worlds)\(\s*\"(\w+)\"", text))
        read |= set(re.findall(r"fc\.ctx\.facts\[\s*\"(\w+)\"\s*\]", text))
        if "_shared" not in path.parts:
            assert "def with_context" not in text and "def function_marks" not in text, path
    assert read and read <= set(SHARED_FACTS), read - set(SHARED_FACTS)
    provided = {f.key for cls in PROVIDERS for f in cls.FACTS}
    assert provided == set(SHARED_FACTS)


class StrictLaunch(Rule):
    """A made-up rule whose verdict needs the module's last ``gridlib.MODE = ...``, wherever
    that sits: the call hands its judgement to ``fc.later``."""

    code = "AIC998"
    name = "strict-launch"
    tokens = (b"gridlib",)
    call_tails = frozenset({"launch"})

    def check_assign(self, node, fc):
        for t in node.targets:
            if fc.resolve(t.target) == "gridlib.MODE" and isinstance(node.value, cst.SimpleString):
                fc.state["mode"] = node.value.evaluated_value
        return []

    def check_call(self, site, qualname, fc):
        if qualname != "gridlib.launch":
            return []
        worlds = frozenset(w.arch for w in fc.ctx.worlds)

        def judge():
            if fc.state.get("mode") != "strict":
                return []
            # The guard context is the call's again: its worlds are the ones it ran in.
            assert frozenset(w.arch for w in fc.ctx.worlds) == worlds
            return [Finding(site.node, "gridlib.launch in strict mode", worlds)]
        fc.later(judge)
        return []


@pytest.mark.parametrize("mode, lines", [("strict", [5]), ("lenient", [])])
def test_a_check_handed_to_later_sees_the_whole_module(monkeypatch, mode, lines):
    monkeypatch.setattr(registry, "RULE_CLASSES", [*registry.RULE_CLASSES, StrictLaunch])
    code = ("import gridlib\nimport torch\n\ndef run():\n    gridlib.launch()\n\n\n"
            f"def configure():\n    gridlib.MODE = {mode!r}\n")
    got = lint(code, select=["AIC998"], gpus=["A100", "H100"])
    assert [d.line for d in got] == lines
    assert all(d.targets == ["A100", "H100"] for d in got)
