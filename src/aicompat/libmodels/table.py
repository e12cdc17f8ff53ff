"""The library table: every fact about a library that the value model uses, in one object.

The engine (core/engine.py) builds it once per matrix (``libraries(matrix)``) and hands it
to the evaluator, the guards and the test forms, so model/ names no library itself
(tests/test_no_library_names.py). Each entry is a set, a name or a function prepared once;
the evaluator is hot, so reading one costs an attribute load and nothing else.

Where the facts come from:
- the tensor shape model, torch and einops calls, dtypes: torch_shapes.py, einops_patterns.py;
- the torch/CUDA environment of one world and runtime probes: environment.py, probes.py
  (version_matrix/probes.toml);
- ``inspect.signature(f).parameters``: signatures.py;
- argparse parsers, options and namespaces: argparse_args.py;
- methods that return the object they are called on, and library calls whose result is an
  object of a known type (``numpy.zeros`` -> numpy.ndarray): version_matrix/returns_self.toml;
- calls that never return, skip marks, parametrized tables: testing.py (pytest, unittest);
- kernel-selection conventions of other projects (support checks, the capability
  parameter): version_matrix/dispatch.toml ``[selection.*]``.
"""

from __future__ import annotations

from typing import Any

from . import argparse_args, environment, probes, signatures, testing
from . import torch_shapes as shapes
from .environment import DeviceProps, PyVersionInfo, TorchVersion

# The class a project's own classes are taken to derive from when they do not define a
# method themselves: ``Model().cuda().train()`` stays the ``Model()`` instance.
_INSTANCE_BASE = "torch.nn.Module"


def value_attribute(base, attr: str) -> Any:
    """``<value>.<attr>`` of a library value that is no tensor (device properties,
    ``sys.version_info``, an argparse namespace, a signature's parameters); NotImplemented
    for any other value."""
    if isinstance(base, (DeviceProps, PyVersionInfo)) and attr in ("major", "minor"):
        return getattr(base, attr)
    if isinstance(base, argparse_args.Namespace):
        return argparse_args.attribute(base, attr)
    return signatures.attribute_value(base, attr)


class Libraries:
    """The library facts the value model reads (see the module docstring for their sources)."""

    __slots__ = (
        # the tensor shape model
        "shape_model", "layer_type", "apply_layer", "tensor_attribute", "tensor_index", "index_slice",
        "tensor_method", "shaping_methods", "binary", "matmul", "dtype_of", "size_args", "method_size_args",
        # the environment of one world
        "environment", "name_value", "call_value", "version_type", "version_method", "ordered_types",
        "value_attribute", "probe_names", "world_tokens",
        # inspect.signature
        "signature_call", "signature_contains",
        # argparse
        "mutators", "mutated", "parse_methods", "parsed",
        # methods that return self; calls whose result is an object of a known library type
        "returns_self", "instance_returns_self", "call_results",
        # test frameworks and exits
        "exit_calls", "exit_methods", "skip_if", "skip_unless", "marks_variable", "parametrize", "param",
        # kernel-selection conventions
        "support_methods", "support_prefixes", "capability_params",
    )

    def __init__(self, returns_self: dict[str, frozenset[str]], selection: dict[str, dict[str, Any]],
                 call_results: dict[str, str] | None = None) -> None:
        # -- the tensor shape model (torch_shapes.py) --
        self.shape_model = shapes.model_of  # qualified name -> shapes.function / shapes.layer / None
        self.layer_type = shapes.Layer
        self.apply_layer = shapes.apply_layer
        self.tensor_attribute = shapes.attribute
        self.tensor_index = shapes.index
        self.index_slice = shapes.Slice  # ``x[a:b]``'s slice part
        self.tensor_method = shapes.tensor_method
        self.shaping_methods = shapes.SHAPING_METHODS
        self.binary = shapes.binary
        self.matmul = shapes.matmul
        self.dtype_of = shapes.dtype_of  # canonical dtype name of a value, or None
        self.size_args = shapes.size_args  # which arguments of a call are sizes (read as dims)
        self.method_size_args = shapes.method_size_args  # the same for a tensor method
        # -- one world's environment (environment.py, probes.py) --
        self.environment = environment.Env
        self.name_value = environment.name_value
        self.call_value = environment.call_value
        self.version_type = TorchVersion  # a library's version string that compares as a version
        self.version_method = environment.torch_version_method
        self.ordered_types = (DeviceProps,)  # library values that compare with < and ==
        self.value_attribute = value_attribute
        calls, attrs = probes.load()
        self.probe_names = frozenset(calls) | frozenset(attrs)
        self.world_tokens = probes.world_tokens()  # a module naming none cannot tell worlds apart
        # -- inspect.signature(f).parameters (signatures.py) --
        self.signature_call = signatures.call_value
        self.signature_contains = signatures.contains
        # -- argparse (argparse_args.py) --
        self.mutators = argparse_args.MUTATORS  # methods that change the parser they are called on
        self.mutated = argparse_args.mutated
        self.parse_methods = argparse_args.PARSE_METHODS
        self.parsed = argparse_args.parsed
        # -- methods that return self (returns_self.toml), per library class --
        self.returns_self = returns_self
        self.instance_returns_self = returns_self.get(_INSTANCE_BASE, frozenset())
        self.call_results = call_results or {}  # library call -> the type of what it returns
        # -- test frameworks and exits (testing.py) --
        self.exit_calls = testing.EXIT_CALLS
        self.exit_methods = testing.EXIT_METHODS
        self.skip_if = testing.SKIP_IF
        self.skip_unless = testing.SKIP_UNLESS
        self.marks_variable = testing.MARKS_VARIABLE
        self.parametrize = testing.PARAMETRIZE
        self.param = testing.PARAM
        # -- kernel-selection conventions (dispatch.toml [selection.*]) --
        self.support_methods = frozenset(m for e in selection.values() for m in e.get("methods", ()))
        self.support_prefixes = tuple(sorted({p for e in selection.values() for p in e.get("prefixes", ())}))
        self.capability_params = frozenset(p for e in selection.values() for p in e.get("capability_params", ()))


# One table per matrix; each entry holds its matrix, so the id cannot be reused while cached.
_TABLES: dict[int, tuple[Any, Libraries]] = {}


def libraries(matrix) -> Libraries:
    """The library table for ``matrix`` (matrix.Matrix), built on first use."""
    hit = _TABLES.get(id(matrix))
    if hit is None or hit[0] is not matrix:
        returns_self = {owner: frozenset(e["methods"])
                        for owner, e in matrix.section("returns_self.toml", "returns_self").items()}
        results = {call: e["type"] for call, e in matrix.section("returns_self.toml", "result").items()}
        table = Libraries(returns_self, matrix.section("dispatch.toml", "selection"), results)
        if len(_TABLES) > 8:
            _TABLES.clear()
        hit = _TABLES[id(matrix)] = (matrix, table)
    return hit[1]
