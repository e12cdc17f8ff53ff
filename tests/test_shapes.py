"""The symbolic dims (aicompat.values.symbolic) and the tensor shape model (aicompat.libmodels.torch_shapes).

The cross-checks at the end run the same operations on real torch meta tensors
(free: no storage) and compare shapes; they skip where torch is not installed.
"""
import random

import pytest

from aicompat.libmodels.einops_patterns import parse_side
from aicompat.libmodels.torch_shapes import (
    DTYPE_ALIASES,
    DTYPE_SIZES,
    Layer,
    Slice,
    apply_layer,
    attribute,
    binary,
    function,
    index,
    layer,
    matmul,
    method_size_args,
    size_args,
    tensor_method,
)
from aicompat.values import UNKNOWN, Module, Seq, Tensor
from aicompat.values.symbolic import (
    Sym,
    add,
    div_exact,
    floordiv,
    mul,
    normalize,
    provably_nonneg,
    proven_eq,
    proven_ne,
    sub,
)

B, S, H, D = (Sym.var(n) for n in ("b", "s", "H", "D"))
NOPE, ROPE, V, RANK = (Sym.var(n) for n in ("qk_nope", "qk_rope", "v_head", "kv_lora_rank"))


def shape_of(v):
    assert isinstance(v, Tensor), v
    return v.shape


# ---------------------------------------------------------------- symbolic

class TestSym:
    def test_arithmetic_is_exact_and_normalizes(self):
        assert H * (NOPE + V) == H * NOPE + H * V
        assert (D + 64) - D == 64 and isinstance((D + 64) - D, int)
        assert D - D == 0 and isinstance(D - D, int)
        assert 2 * D == D + D and D * 2 == D + D
        assert 3 - D == -(D - 3)
        assert (H * D) * 0 == 0

    def test_equal_syms_hash_alike_and_constants_match_ints(self):
        assert len({H * D, D * H, Sym.var("H") * Sym.var("D")}) == 1
        const = Sym({(): 7})
        assert const == 7 and hash(const) == hash(7)
        assert normalize(const) == 7 and isinstance(normalize(const), int)
        assert normalize(D) is D

    def test_no_truth_value(self):
        with pytest.raises(TypeError):
            bool(D)

    def test_repr_reads_as_python(self):
        assert repr(H * NOPE + H * V) == "H*qk_nope + H*v_head"
        assert repr(D - 3) == "D - 3" and repr(2 * D * D) == "2*D**2"

    @pytest.mark.parametrize("a,b,expected", [
        (12, 4, 3),
        (12, 5, None),
        (0, D, 0),
        (H * D, H, D),
        (H * NOPE + H * V, NOPE + V, H),
        (H * NOPE + H * V, H, NOPE + V),
        (2 * D + 2, 2, D + 1),
        (2 * D + 1, 2, None),  # depends on D: not provable
        (D * D - 1, D - 1, D + 1),
        (D * D + 1, D + 1, None),
        (128, H, None),
        (D, 0, None),
        (H * D, D * D, None),
    ])
    def test_div_exact(self, a, b, expected):
        assert div_exact(a, b) == expected

    def test_floordiv_is_python_for_ints_and_exact_for_syms(self):
        assert floordiv(7, 2) == 3 and floordiv(-7, 2) == -4
        assert floordiv(H * 64, H) == 64
        assert floordiv(D, 2) is UNKNOWN and floordiv(UNKNOWN, 2) is UNKNOWN and floordiv(4, 0) is UNKNOWN

    def test_helpers_propagate_unknown(self):
        assert add(D, UNKNOWN) is UNKNOWN and sub(UNKNOWN, 1) is UNKNOWN and mul(H, UNKNOWN) is UNKNOWN
        assert mul(0, UNKNOWN) == 0  # no elements whatever the other size
        assert add(D, 64) == D + 64 and mul(H, 2) == 2 * H

    @pytest.mark.parametrize("a,b,eq,ne", [
        (D, D, True, False),
        (D + 64, D, False, True),
        (NOPE + ROPE, V, False, False),  # unrelated symbols: neither proven
        (192, 128, False, True),
        (128, 128, True, False),
        (D, 128, False, False),
        (2 * D, D, False, False),  # equal when D is 0: not proven unequal
        (UNKNOWN, 128, False, False),
        (UNKNOWN, UNKNOWN, False, False),
        (H * (NOPE + V), H * NOPE + H * V, True, False),
    ])
    def test_proven(self, a, b, eq, ne):
        assert proven_eq(a, b) is eq and proven_eq(b, a) is eq
        assert proven_ne(a, b) is ne and proven_ne(b, a) is ne

    def test_nonneg_assumes_symbols_are_sizes(self):
        assert provably_nonneg(H * D + 3) and provably_nonneg(0)
        assert not provably_nonneg(D - 1) and not provably_nonneg(UNKNOWN)

    def test_subs(self):
        assert (H * D + 1).subs({"H": 4, "D": 8}) == 33
        assert (H * D).subs({"H": 2}) == 2 * D

    def test_division_agrees_with_numbers(self):
        rng = random.Random(11)
        names = ["x", "y", "z"]
        for _ in range(200):
            q = _random_poly(rng, names)
            d = _random_poly(rng, names)
            if d == 0:
                continue
            got = div_exact(q * d, d)
            assert got is not None and proven_eq(got, q), (q, d, got)
            env = {n: rng.randint(1, 9) for n in names}
            r = div_exact(q * d + 1, d)
            if r is not None:  # only when provable: then it holds at every point
                assert _at(r, env) * _at(d, env) == _at(q * d + 1, env)


def _random_poly(rng, names):
    out = rng.randint(0, 3)
    for _ in range(rng.randint(1, 3)):
        term = rng.randint(1, 4)
        for n in rng.sample(names, rng.randint(0, 2)):
            term = term * Sym.var(n)
        out = out + term
    return out


def _at(x, env):
    return x.subs(env) if isinstance(x, Sym) else x


# ---------------------------------------------------------------- shapes with names

class TestViewsAndSplits:
    def test_view_infers_minus_one_by_exact_division(self):
        t = Tensor((B, S, H * D))
        assert shape_of(tensor_method(t, "view", (B, S, H, -1))) == (B, S, H, D)
        assert shape_of(tensor_method(t, "reshape", ((B, S, -1, D),))) == (B, S, H, D)
        assert shape_of(tensor_method(Tensor((B, S, D)), "view", (B, S, H, -1))) == (B, S, H, UNKNOWN)
        assert shape_of(tensor_method(Tensor(None), "view", (B, -1))) == (B, UNKNOWN)
        assert shape_of(tensor_method(t, "view", (UNKNOWN, D))) == (UNKNOWN, D)
        assert shape_of(tensor_method(t, "view", (UNKNOWN,))) is None  # maybe a whole shape: rank unknown

    def test_view_dtype_is_a_bitcast(self):
        fp8 = Module("torch.float8_e4m3fn")
        assert tensor_method(Tensor((4, D), "torch.uint8"), "view", (fp8,)) == Tensor((4, D), "torch.float8_e4m3fn")
        assert shape_of(tensor_method(Tensor((4, D), "torch.float32"), "view", (Module("torch.uint8"),))) == (4, 4 * D)
        assert shape_of(tensor_method(Tensor((4, 2 * D), "torch.float16"), "view", (Module("torch.float"),))) == (4, D)
        assert shape_of(tensor_method(Tensor((4, D)), "view", (fp8,))) == (4, UNKNOWN)  # source size unknown

    def test_unflatten_and_flatten(self):
        t = Tensor((B, S, H * D))
        assert shape_of(tensor_method(t, "unflatten", (-1, (H, -1)))) == (B, S, H, D)
        assert shape_of(tensor_method(Tensor((B, S, H, D)), "flatten", (2,))) == (B, S, H * D)
        middle = tensor_method(Tensor((B, S, H, D)), "flatten", (), {"start_dim": 1, "end_dim": 2})
        assert shape_of(middle) == (B, S * H, D)

    def test_split_by_sections_and_by_size(self):
        kv = Tensor((B, S, H, NOPE + V))
        k, v = tensor_method(kv, "split", ([NOPE, V],), {"dim": -1})
        assert k.shape == (B, S, H, NOPE) and v.shape == (B, S, H, V)
        assert [p.shape[-1] for p in tensor_method(Tensor((2, 10)), "split", (4, 1))] == [4, 4, 2]
        halves = tensor_method(Tensor((B, 2 * D)), "split", (D,), {"dim": 1})
        assert [p.shape for p in halves] == [(B, D), (B, D)]

    def test_split_of_unknown_count_is_a_seq(self):
        out = tensor_method(Tensor((B, D)), "split", (64, -1))
        assert out == Seq(items=(), more=Tensor((B, UNKNOWN)))
        out = tensor_method(Tensor((B, H * 64)), "split", (64, -1))
        assert out == Seq(items=(), more=Tensor((B, 64)))

    def test_many_pieces_are_a_seq(self):
        assert tensor_method(Tensor((B, 4096)), "split", (1, 1)) == Seq(items=(), more=Tensor((B, 1)))
        assert tensor_method(Tensor((4096, D)), "unbind", ()) == Seq(items=(), more=Tensor((D,)))

    def test_chunk_and_unbind(self):
        a, b = tensor_method(Tensor((B, 2 * D)), "chunk", (2,), {"dim": -1})
        assert a.shape == b.shape == (B, D)
        assert tensor_method(Tensor((B, D)), "chunk", (2, -1)) == Seq(items=(), more=Tensor((B, UNKNOWN)))
        q, _, _ = tensor_method(Tensor((3, B, H, S, D)), "unbind", (0,))
        assert q.shape == (B, H, S, D)
        assert tensor_method(Tensor((B, D)), "unbind", ()) == Seq(items=(), more=Tensor((D,)))

    def test_axes(self):
        t = Tensor((B, S, H, D))
        assert shape_of(tensor_method(t, "transpose", (1, 2))) == (B, H, S, D)
        assert shape_of(tensor_method(t, "swapaxes", (-1, -2))) == (B, S, D, H)
        assert shape_of(tensor_method(t, "permute", (0, 2, 1, 3))) == (B, H, S, D)
        assert shape_of(tensor_method(t, "permute", ((0, 2, 1, 3),))) == (B, H, S, D)
        assert shape_of(tensor_method(t, "permute", (0, 2, 1))) is None
        assert shape_of(tensor_method(t, "movedim", (1, -1))) == (B, H, D, S)
        assert shape_of(tensor_method(t, "transpose", (1, UNKNOWN))) is None

    def test_unsqueeze_squeeze_expand(self):
        t = Tensor((B, S, 1, ROPE))
        assert shape_of(tensor_method(t, "expand", (-1, -1, H, -1))) == (B, S, H, ROPE)
        assert shape_of(tensor_method(Tensor((S, D)), "unsqueeze", (0,))) == (1, S, D)
        assert shape_of(tensor_method(Tensor((S, D)), "unsqueeze", (-1,))) == (S, D, 1)
        assert shape_of(tensor_method(Tensor((1, 4, 1)), "squeeze", ())) == (4,)
        assert shape_of(tensor_method(t, "squeeze", (2,))) == (B, S, ROPE)
        assert shape_of(tensor_method(t, "squeeze", ())) is None  # B or S may be 1

    def test_narrow_repeat_interleave_repeat(self):
        assert shape_of(tensor_method(Tensor((B, D + 64)), "narrow", (-1, 0, D))) == (B, D)
        kv = Tensor((B, H, S, D))
        assert shape_of(tensor_method(kv, "repeat_interleave", (4,), {"dim": 1})) == (B, 4 * H, S, D)
        assert shape_of(tensor_method(Tensor((2, 3)), "repeat_interleave", (2,))) == (12,)
        assert shape_of(tensor_method(kv, "repeat_interleave", (Tensor((H,)),), {"dim": 1})) == (B, UNKNOWN, S, D)
        assert shape_of(tensor_method(Tensor((S, D)), "repeat", (2, 1, 3))) == (2, S, 3 * D)

    def test_same_shape_and_casts(self):
        t = Tensor((B, D), "torch.float32")
        assert tensor_method(t, "contiguous", ()) is t
        assert tensor_method(t, "half", ()) == Tensor((B, D), "torch.float16")
        assert tensor_method(t, "to", ("cuda", Module("torch.bfloat16"))) == Tensor((B, D), "torch.bfloat16")
        assert tensor_method(t, "to", (), {"dtype": Module("torch.half")}) == Tensor((B, D), "torch.float16")
        assert tensor_method(t, "type", ()) is NotImplemented  # a string
        assert tensor_method(t, "frobnicate", ()) is NotImplemented

    def test_size_and_attributes(self):
        t = Tensor((B, S, H * D), "torch.float16")
        assert tensor_method(t, "size", ()) == (B, S, H * D)
        assert tensor_method(t, "size", (-1,)) == H * D
        assert tensor_method(t, "size", (3,)) is UNKNOWN
        assert tensor_method(Tensor(None), "size", ()) is UNKNOWN
        assert attribute(t, "shape") == (B, S, H * D) and attribute(t, "ndim") == 3
        assert attribute(t, "dtype") == Module("torch.float16")
        assert attribute(Tensor((S, D)), "T").shape == (D, S)
        assert attribute(Tensor((B, S, D)), "mT").shape == (B, D, S)
        assert attribute(t, "grad_fn") is NotImplemented
        assert tensor_method(t, "numel", ()) == B * S * H * D


class TestIndexing:
    @pytest.mark.parametrize("idx,expected", [
        (0, (S, D)),
        ((Slice(),), (B, S, D)),
        ((Ellipsis, Slice(None, 64)), (B, S, UNKNOWN)),  # min(64, D): not known
        ((Ellipsis, None), (B, S, D, 1)),
        ((None, Ellipsis, 0), (1, B, S)),
        ((Slice(), -1), (B, D)),
        ((Ellipsis, Slice(None, None, 2)), (B, S, UNKNOWN)),
        ((Tensor((7,), "torch.int64"),), (7, S, D)),
        ((Slice(), Tensor((S, D), "torch.bool")), (B, UNKNOWN)),
        ((Tensor((B, S), "torch.bool"),), (UNKNOWN, D)),
        ((Slice(), Tensor((B,))), (B, UNKNOWN, D)),
        ((Ellipsis, Ellipsis), None),
        ((0, 0, 0, 0), None),
        ((UNKNOWN,), None),
    ])
    def test_index(self, idx, expected):
        assert index(Tensor((B, S, D)), idx).shape == expected

    @pytest.mark.parametrize("dim,sl,expected", [
        (NOPE + ROPE, Slice(None, NOPE), NOPE),
        (NOPE + ROPE, Slice(NOPE, None), ROPE),
        (D + 64, Slice(-64, None), 64),
        (D + 64, Slice(None, -64), D),
        (D, Slice(-64, None), UNKNOWN),  # D may be under 64
        (D, Slice(None, 64), UNKNOWN),
        (2 * D, Slice(D, None), D),
        (10, Slice(2, -3), 5),
        (10, Slice(-100, 100, 3), 4),
    ])
    def test_slice_lengths(self, dim, sl, expected):
        assert index(Tensor((B, dim)), (Slice(), sl)).shape == (B, expected)


class TestBroadcastAndMatmul:
    def test_binary_broadcasts(self):
        assert binary(Tensor((B, 1, D)), Tensor((S, 1))).shape == (B, S, D)
        assert binary(Tensor((B, S, D)), 2.0).shape == (B, S, D)
        assert binary(3, Tensor((D,))).shape == (D,)
        assert binary(Tensor((B, D)), Tensor((B, 64))).shape == (B, 64)
        assert binary(Tensor((B, D)), Tensor((B, H))).shape == (B, UNKNOWN)  # either may be 1
        assert binary(Tensor(None), Tensor((D,))).shape is None
        assert binary("a", Tensor((D,))) is NotImplemented

    def test_binary_dtype(self):
        assert binary(Tensor((2,), "torch.float16"), 2.0).dtype == "torch.float16"
        assert binary(Tensor((2,), "torch.int64"), 2.0).dtype is None
        assert binary(Tensor((2,), "torch.float16"), Tensor((2,), "torch.float32")).dtype is None

    def test_matmul(self):
        q, k = Tensor((B, H, S, NOPE + ROPE)), Tensor((B, H, S, NOPE + ROPE))
        scores = matmul(q, tensor_method(k, "transpose", (-2, -1)))
        assert scores.shape == (B, H, S, S)
        assert matmul(scores, Tensor((B, H, S, V))).shape == (B, H, S, V)
        assert matmul(Tensor((D,)), Tensor((D,))).shape == ()
        assert matmul(Tensor((D,)), Tensor((B, D, H))).shape == (B, H)
        assert matmul(Tensor((B, S, D)), Tensor((D,))).shape == (B, S)
        assert matmul(Tensor((S, D)), 2) is NotImplemented


class TestFunctions:
    @pytest.mark.parametrize("qualname,args,kwargs,expected", [
        ("torch.randn", (B, S, D), {}, (B, S, D)),
        ("torch.zeros", ((B, S),), {}, (B, S)),
        ("torch.ones", (), {"size": (2, D)}, (2, D)),
        ("torch.empty", (Seq((B, 4)),), {}, (B, 4)),
        ("torch.empty", (Seq((B,), more=4),), {}, None),
        ("torch.full", ((B, D), 0.5), {}, (B, D)),
        ("torch.randint", (0, 10, (B, S)), {}, (B, S)),
        ("torch.randint", (10,), {"size": (3,)}, (3,)),
        ("torch.normal", (0.0, 1.0, (B, D)), {}, (B, D)),
        ("torch.arange", (S,), {}, (S,)),
        ("torch.arange", (1, 10, 2), {}, (5,)),
        ("torch.arange", (1, S), {}, (UNKNOWN,)),
    ])
    def test_factories(self, qualname, args, kwargs, expected):
        assert function(qualname, args, kwargs).shape == expected

    def test_factory_dtype_and_like(self):
        t = function("torch.zeros", (B, D), {"dtype": Module("torch.bfloat16")})
        assert t.dtype == "torch.bfloat16"
        assert function("torch.zeros_like", (t,), {}) == t
        assert function("torch.empty_like", (t,), {"dtype": Module("torch.float")}).dtype == "torch.float32"
        assert function("torch.randint", (10,), {}) is NotImplemented  # a size is required

    def test_cat_stack(self):
        a, b = Tensor((B, S, H, NOPE)), Tensor((B, S, H, ROPE))
        assert function("torch.cat", ([a, b],), {"dim": -1}).shape == (B, S, H, NOPE + ROPE)
        assert function("torch.concat", ((a, b), 3), {}).shape == (B, S, H, NOPE + ROPE)
        assert function("torch.cat", ([a, Tensor((0,))],), {"dim": -1}).shape == (B, S, H, NOPE)
        assert function("torch.cat", (Seq((), more=a),), {"dim": -1}).shape is None
        assert function("torch.stack", ([a, a, a],), {"dim": 1}).shape == (B, 3, S, H, NOPE)

    def test_function_forms(self):
        t = Tensor((B, S, 2 * D))
        assert [p.shape for p in function("torch.chunk", (t, 2, -1), {})] == [(B, S, D)] * 2
        parts = function("torch.split", (t,), {"split_size_or_sections": [D, D], "dim": -1})
        assert [p.shape for p in parts] == [(B, S, D)] * 2
        assert function("torch.transpose", (t, 0, 1), {}).shape == (S, B, 2 * D)
        assert function("torch.reshape", (t, (B, -1)), {}).shape == (B, 2 * S * D)
        assert function("torch.flatten", (t,), {"start_dim": 1}).shape == (B, 2 * S * D)
        assert function("torch.narrow", (t, 2, 0, D), {}).shape == (B, S, D)
        assert function("torch.unsqueeze", (t, 1), {}).shape == (B, 1, S, 2 * D)
        assert function("torch.matmul", (t, Tensor((2 * D, H))), {}).shape == (B, S, H)
        assert function("torch.Tensor.view", (t, B, S, 2, D), {}).shape == (B, S, 2, D)
        assert function("torch.softmax", (t, -1), {}).shape == t.shape
        assert function("torch.frobnicate", (t,), {}) is NotImplemented
        assert function("numpy.zeros", ((2, 3),), {}) is NotImplemented

    def test_pad_linear_sdpa(self):
        t = Tensor((B, H, S, D))
        assert function("torch.nn.functional.pad", (t, (0, 64)), {}).shape == (B, H, S, D + 64)
        assert function("torch.nn.functional.pad", (t, (1, 1, 2, 0)), {}).shape == (B, H, S + 2, D + 2)
        assert function("torch.nn.functional.pad", (t, (1,)), {}).shape is None
        w = Tensor((H * V, RANK))
        assert function("torch.nn.functional.linear", (Tensor((B, S, RANK)), w), {}).shape == (B, S, H * V)
        out = function("torch.nn.functional.scaled_dot_product_attention", (t, t, Tensor((B, H, S, V))), {})
        assert out.shape == (B, H, S, V)

    def test_einsum(self):
        q, k = Tensor((B, H, S, D)), Tensor((B, H, 7, D))
        assert function("torch.einsum", ("bhqd,bhkd->bhqk", q, k), {}).shape == (B, H, S, 7)
        assert function("torch.einsum", ("ij,jk", Tensor((2, 3)), Tensor((3, 5))), {}).shape == (2, 5)
        assert function("torch.einsum", ("...d,...d->...", q, q), {}).shape == (B, H, S)


class TestEinops:
    def test_parse(self):
        assert parse_side("b (h d) ... 1") == [
            (False, ["b"]), (True, ["h", "d"]), (False, ["..."]), (False, ["1"])]
        assert parse_side("b (h (d))") is None and parse_side("b h)") is None

    @pytest.mark.parametrize("shape,pattern,axes,expected", [
        ((B, S, H * D), "b s (h d) -> b h s d", {"h": H}, (B, H, S, D)),
        ((B, S, H * D), "b s (h d) -> b h s d", {"d": D}, (B, H, S, D)),
        ((B, S, 512), "b s (h d) -> b h s d", {"h": 8}, (B, 8, S, 64)),
        ((B, S, D), "b s (h d) -> b h s d", {"h": 8}, (B, 8, S, UNKNOWN)),
        ((B, H, S, D), "b h s d -> b s (h d)", {}, (B, S, H * D)),
        ((B, H, S, D), "b ... d -> (b ...) d", {}, (B * H * S, D)),
        ((B, S, D), "b s d -> b 1 s d", {}, (B, 1, S, D)),
        ((B, 1, S), "b 1 s -> b s", {}, (B, S)),
        ((B, S, D), "b s d -> b s () d", {}, (B, S, 1, D)),
        (None, "b s d -> d s b", {"d": 64}, (64, UNKNOWN, UNKNOWN)),
        ((B, S), "b s d -> b s d", {}, None),  # rank mismatch: einops would raise
    ])
    def test_rearrange(self, shape, pattern, axes, expected):
        assert function("einops.rearrange", (Tensor(shape), pattern), axes).shape == expected

    def test_repeat_reduce_and_lists(self):
        t = Tensor((B, S, D))
        assert function("einops.repeat", (t, "b s d -> b h s d"), {"h": H}).shape == (B, H, S, D)
        assert function("einops.reduce", (t, "b s d -> b d", "mean"), {}).shape == (B, D)
        assert function("einops.rearrange", ([t, t], "n b s d -> b s (n d)"), {}).shape == (B, S, 2 * D)
        assert function("einops.rearrange", (t,), {}) is NotImplemented


class TestLayers:
    def test_linear_and_embedding(self):
        lin = layer("torch.nn.Linear", (RANK, H * (NOPE + V)), {"bias": False})
        assert lin == Layer("Linear", (("bias", False), ("in_features", RANK), ("out_features", H * (NOPE + V))))
        assert lin.param("out_features") == H * (NOPE + V)
        assert apply_layer(lin, Tensor((B, S, RANK))).shape == (B, S, H * NOPE + H * V)
        emb = layer("torch.nn.Embedding", (32000, D), {})
        assert apply_layer(emb, Tensor((B, S), "torch.int64")) == Tensor((B, S, D), "torch.float32")

    def test_identity_layers_and_unknowns(self):
        x = Tensor((B, S, D), "torch.bfloat16")
        for name in ("LayerNorm", "RMSNorm", "Dropout", "GELU", "SiLU", "ReLU", "Identity"):
            assert apply_layer(layer(f"torch.nn.{name}", (D,), {}), x) is x
        assert layer("torch.nn.Conv2d", (3, 8, 3), {}) is NotImplemented
        assert layer("torch.nn.Linear", (1, 2, 3, 4, 5, 6), {}) is NotImplemented
        assert apply_layer(layer("torch.nn.Linear", (D, 4), {}), Tensor(None)).shape is None

    def test_layers_on_inputs_not_known_to_be_tensors(self):
        # a layer's output is a tensor whatever went in; its shape is unknown then
        assert apply_layer(layer("torch.nn.Linear", (D, 4), {}), UNKNOWN) == Tensor(None)
        assert apply_layer(layer("torch.nn.Embedding", (100, D), {}), UNKNOWN) == Tensor(None, "torch.float32")

    def test_lazy_linear_and_parameter(self):
        lazy = layer("torch.nn.LazyLinear", (H * D,), {"bias": False})
        assert apply_layer(lazy, Tensor((B, S, 7))).shape == (B, S, H * D)
        w = Tensor((H * D, D), "torch.bfloat16")
        assert layer("torch.nn.Parameter", (w,), {"requires_grad": False}) is w  # the parameter is its data
        assert function("torch.nn.functional.linear", (Tensor((B, S, D)), w), {}).shape == (B, S, H * D)
        assert layer("torch.nn.Parameter", (UNKNOWN,), {}) is NotImplemented

    def test_which_arguments_are_sizes(self):
        # one size each: the value model may name an unknown one
        assert {0, 1, "in_features", "out_features"} <= set(size_args("torch.nn.Linear").ints)
        assert size_args("torch.nn.Embedding").ints == (0, 1, "num_embeddings", "embedding_dim")
        assert size_args("einops.rearrange").all_keywords
        # a size or a sequence of them: only what is written out item by item
        assert method_size_args("view").varargs and method_size_args("view").shapes == ("size",)
        assert method_size_args("unflatten").shapes == (1, "sizes")
        assert 0 in method_size_args("split").shapes and not method_size_args("split").varargs
        assert method_size_args("swapaxes") == method_size_args("transpose") == size_args("torch.nn.ReLU") \
            == size_args("torch.nn.functional.linear")


# ---------------------------------------------------------------- DeepSeek-V2/V3 multi-head latent attention

def mla_qk_and_v(hidden, num_heads, qk_nope, qk_rope, v_head, kv_lora_rank, b, s):
    """The shapes of DeepSeek's MLA key/value path, step by step as the model code writes it."""
    kv_b_proj = layer("torch.nn.Linear", (kv_lora_rank, num_heads * (qk_nope + v_head)), {"bias": False})
    compressed_kv = function("torch.randn", (b, s, kv_lora_rank), {})
    k_pe = function("torch.randn", (b, s, 1, qk_rope), {})
    kv = apply_layer(kv_b_proj, compressed_kv)
    kv = tensor_method(kv, "view", (b, s, num_heads, qk_nope + v_head))
    k_nope, value_states = tensor_method(kv, "split", ([qk_nope, v_head],), {"dim": -1})
    key_states = function("torch.cat", ([k_nope, tensor_method(k_pe, "expand", (-1, -1, num_heads, -1))],),
                          {"dim": -1})
    return key_states, value_states


class TestMLA:
    def test_concrete_dims(self):
        k, v = mla_qk_and_v(hidden=5120, num_heads=128, qk_nope=128, qk_rope=64, v_head=128, kv_lora_rank=512,
                            b=2, s=16)
        assert k.shape == (2, 16, 128, 192) and v.shape == (2, 16, 128, 128)
        assert proven_ne(k.shape[-1], v.shape[-1])

    def test_unrelated_symbols_prove_nothing(self):
        k, v = mla_qk_and_v(5120, H, NOPE, ROPE, V, RANK, B, S)
        assert k.shape == (B, S, H, NOPE + ROPE) and v.shape == (B, S, H, V)
        assert not proven_ne(k.shape[-1], v.shape[-1]) and not proven_eq(k.shape[-1], v.shape[-1])

    def test_symbols_with_known_offsets(self):
        k, v = mla_qk_and_v(5120, H, D, 64, D, RANK, B, S)  # v_head_dim == qk_nope_head_dim == D
        assert k.shape[-1] == D + 64 and v.shape[-1] == D
        assert proven_ne(k.shape[-1], v.shape[-1])
        k, v = mla_qk_and_v(5120, H, D, 0, D, RANK, B, S)
        assert proven_eq(k.shape[-1], v.shape[-1])


def test_dtype_table_aliases_resolve():
    for alias, name in DTYPE_ALIASES.items():
        assert name in DTYPE_SIZES, alias


# ---------------------------------------------------------------- cross-checks against real torch (meta tensors)

class T:
    """A tensor argument of a cross-check case: a meta tensor for torch, a Tensor for the model."""

    def __init__(self, *shape, dtype="torch.float32"):
        self.shape, self.dtype = shape, dtype


def _for_torch(x, torch):
    if isinstance(x, T):
        return torch.empty(x.shape, device="meta", dtype=getattr(torch, x.dtype.split(".")[1]))
    if isinstance(x, Slice):
        return slice(x.lower, x.upper, x.step)
    if isinstance(x, Module):
        return getattr(torch, x.name.split(".")[1])
    if isinstance(x, (list, tuple)):
        return type(x)(_for_torch(i, torch) for i in x)
    if isinstance(x, dict):
        return {k: _for_torch(v, torch) for k, v in x.items()}
    return x


def _for_model(x):
    if isinstance(x, T):
        return Tensor(x.shape, x.dtype)
    if isinstance(x, (list, tuple)):
        return type(x)(_for_model(i) for i in x)
    if isinstance(x, dict):
        return {k: _for_model(v) for k, v in x.items()}
    return x


def _resolve(qualname):
    import importlib

    mod, _, attr = qualname.rpartition(".")
    return getattr(importlib.import_module(mod), attr)


def _shapes(v):
    """Shapes of a result: a tuple for one tensor, a list of them for several."""
    if isinstance(v, (list, tuple)) and v and not isinstance(v[0], int) and hasattr(v[0], "shape"):
        return [tuple(x.shape) for x in v]
    if hasattr(v, "shape"):
        return tuple(v.shape)
    return v


# (how, target, args, kwargs): how is "method" (target a Tensor method, args[0] the tensor),
# "function" (target a qualname), "index" (args = (tensor, idx)), "binary" or "matmul".
CROSS_CASES = [
    ("method", "view", (T(2, 3, 4), 6, -1), {}),
    ("method", "view", (T(2, 3, 4), (-1,)), {}),
    ("method", "reshape", (T(2, 3, 4), 4, -1, 2), {}),
    ("method", "view", (T(2, 8, dtype="torch.float32"), Module("torch.uint8")), {}),
    ("method", "view", (T(2, 8, dtype="torch.uint8"), Module("torch.float16")), {}),
    ("method", "view", (T(2, 8, dtype="torch.uint8"), Module("torch.float8_e4m3fn")), {}),
    ("method", "unflatten", (T(2, 12), 1, (3, -1)), {}),
    ("method", "flatten", (T(2, 3, 4, 5), 1, 2), {}),
    ("method", "flatten", (T(2, 3, 4, 5),), {"start_dim": -2}),
    ("method", "flatten", (T(),), {}),
    ("method", "split", (T(2, 10), 4, 1), {}),
    ("method", "split", (T(2, 10), [3, 7]), {"dim": -1}),
    ("method", "split", (T(0, 3), 2), {}),
    ("method", "chunk", (T(5, 2), 3), {}),
    ("method", "chunk", (T(6, 2), 4), {}),
    ("method", "chunk", (T(0, 3), 3), {}),
    ("method", "chunk", (T(2, 8), 2), {"dim": -1}),
    ("method", "unbind", (T(3, 2, 4), 1), {}),
    ("method", "transpose", (T(2, 3, 4), 0, -1), {}),
    ("method", "swapaxes", (T(2, 3, 4), 1, 2), {}),
    ("method", "permute", (T(2, 3, 4, 5), 3, 1, 0, 2), {}),
    ("method", "permute", (T(2, 3, 4), (2, 0, 1)), {}),
    ("method", "movedim", (T(2, 3, 4, 5), 0, -1), {}),
    ("method", "movedim", (T(2, 3, 4, 5), (0, 1), (3, 0)), {}),
    ("method", "unsqueeze", (T(2, 3), -1), {}),
    ("method", "unsqueeze", (T(2, 3), 1), {}),
    ("method", "squeeze", (T(1, 3, 1, 4),), {}),
    ("method", "squeeze", (T(1, 3, 1, 4), 2), {}),
    ("method", "squeeze", (T(1, 3, 1, 4), 1), {}),
    ("method", "squeeze", (T(1, 3, 1, 4), (0, 2)), {}),
    ("method", "expand", (T(2, 1, 4), -1, 3, -1), {}),
    ("method", "expand", (T(2, 1, 4), 5, 2, 3, 4), {}),
    ("method", "narrow", (T(2, 10), 1, 2, 5), {}),
    ("method", "repeat_interleave", (T(2, 3), 2), {}),
    ("method", "repeat_interleave", (T(2, 3, 4), 3), {"dim": 1}),
    ("method", "repeat", (T(2, 3), 2, 1, 2), {}),
    ("method", "t", (T(2, 3),), {}),
    ("method", "sum", (T(2, 3, 4), -1), {}),
    ("method", "mean", (T(2, 3, 4), (0, 2)), {"keepdim": True}),
    ("method", "sum", (T(2, 3, 4),), {}),
    ("method", "half", (T(2, 3),), {}),
    ("method", "new_empty", (T(2, 3, dtype="torch.float16"), 4, 5), {}),
    ("method", "new_zeros", (T(2, 3, dtype="torch.bfloat16"), (4, 5)), {}),
    ("method", "new_ones", (T(2, 3),), {"size": (6,)}),
    ("method", "new_full", (T(2, 3, dtype="torch.float16"), (4, 5), 1.0), {}),
    ("method", "new_empty", (T(2, 3, dtype="torch.float16"), (4,)), {"dtype": Module("torch.float32")}),
    ("index", None, (T(2, 3, 4), 0), {}),
    ("index", None, (T(2, 3, 4), (Ellipsis, Slice(None, 2))), {}),
    ("index", None, (T(2, 3, 4), (None, Slice(), None, -1)), {}),
    ("index", None, (T(2, 3, 10), (Slice(), Slice(1, None), Slice(-7, -2, 2))), {}),
    ("index", None, (T(2, 3, 4), (Slice(), T(5, 6, dtype="torch.int64"))), {}),
    ("index", None, (T(2, 3, 4), (Ellipsis, [0, 2])), {}),
    ("binary", None, (T(2, 1, 4), T(3, 1)), {}),
    ("binary", None, (T(4), 2.0), {}),
    ("matmul", None, (T(2, 3, 4), T(4, 5)), {}),
    ("matmul", None, (T(4), T(7, 4, 5)), {}),
    ("matmul", None, (T(2, 1, 3, 4), T(5, 4, 6)), {}),
    ("matmul", None, (T(2, 3, 4), T(4)), {}),
    ("function", "torch.randn", (2, 3), {}),
    ("function", "torch.zeros", ((2, 3),), {}),
    ("function", "torch.ones", (), {"size": (4,)}),
    ("function", "torch.full", ((2, 2), 1.5), {}),
    ("function", "torch.randint", (0, 5, (3, 2)), {}),
    ("function", "torch.arange", (10,), {}),
    ("function", "torch.arange", (1, 10, 4), {}),
    ("function", "torch.zeros_like", (T(3, 4),), {}),
    ("function", "torch.cat", ([T(2, 3), T(5, 3)],), {}),
    ("function", "torch.cat", ([T(2, 3), T(2, 4), T(0)],), {"dim": 1}),
    ("function", "torch.stack", ([T(2, 3), T(2, 3)],), {"dim": -1}),
    ("function", "torch.split", (T(7, 2), [2, 5]), {}),
    ("function", "torch.chunk", (T(7, 2), 2), {}),
    ("function", "torch.unbind", (T(3, 2),), {"dim": 1}),
    ("function", "torch.transpose", (T(2, 3), 0, 1), {}),
    ("function", "torch.permute", (T(2, 3, 4), (1, 2, 0)), {}),
    ("function", "torch.reshape", (T(2, 3, 4), (-1, 4)), {}),
    ("function", "torch.flatten", (T(2, 3, 4),), {"start_dim": 1}),
    ("function", "torch.narrow", (T(2, 8), 1, 0, 3), {}),
    ("function", "torch.repeat_interleave", (T(2, 3), 2), {"dim": 0}),
    ("function", "torch.squeeze", (T(1, 2, 1),), {}),
    ("function", "torch.unsqueeze", (T(2, 3), 0), {}),
    ("function", "torch.matmul", (T(3, 4), T(4, 2)), {}),
    ("function", "torch.einsum", ("bhqd,bhkd->bhqk", T(2, 3, 4, 5), T(2, 3, 6, 5)), {}),
    ("function", "torch.einsum", ("Ab,bC", T(2, 3), T(3, 4)), {}),
    ("function", "torch.einsum", ("...d,...d->...", T(2, 3, 4), T(3, 4)), {}),
    ("function", "torch.nn.functional.pad", (T(2, 3, 4), (1, 2)), {}),
    ("function", "torch.nn.functional.pad", (T(2, 3, 4), (1, 2, 0, 3, 1, 1)), {}),
    ("function", "torch.nn.functional.linear", (T(2, 3, 4), T(5, 4)), {}),
    ("function", "torch.nn.functional.scaled_dot_product_attention", (T(2, 4, 8, 16), T(2, 4, 8, 16),
                                                                        T(2, 4, 8, 32)), {}),
    ("function", "einops.rearrange", (T(2, 6, 8), "b s (h d) -> b h s d"), {"h": 2}),
    ("function", "einops.rearrange", (T(2, 3, 4, 5), "b h s d -> b s (h d)"), {}),
    ("function", "einops.rearrange", (T(2, 3, 4, 5), "b ... d -> (b ...) d"), {}),
    ("function", "einops.rearrange", (T(2, 3, 4), "b s d -> b 1 s () d"), {}),
    ("function", "einops.repeat", (T(2, 3), "b d -> b h d"), {"h": 4}),
    ("function", "einops.repeat", (T(2, 3), "b d -> b (d r)"), {"r": 2}),
    ("function", "einops.reduce", (T(2, 3, 4), "b s d -> b d", "mean"), {}),
]


def _ids(case):
    how, target, args, _ = case
    first = args[0] if args else ""
    return f"{how}-{target or ''}-{getattr(first, 'shape', first)}"


@pytest.fixture(scope="module")
def torch():
    return pytest.importorskip("torch")


@pytest.mark.parametrize("case", CROSS_CASES, ids=[_ids(c) for c in CROSS_CASES])
def test_model_matches_torch(torch, case):
    how, target, args, kwargs = case
    if target and target.startswith("einops."):
        pytest.importorskip("einops")
    real_args, real_kwargs = _for_torch(args, torch), _for_torch(kwargs, torch)
    model_args, model_kwargs = _for_model(args), _for_model(kwargs)
    if how == "method":
        real = getattr(real_args[0], target)(*real_args[1:], **real_kwargs)
        model = tensor_method(model_args[0], target, model_args[1:], model_kwargs)
    elif how == "index":
        real = real_args[0][real_args[1]]
        model = index(*model_args)
    elif how == "binary":
        real = real_args[0] + real_args[1]
        model = binary(*model_args)
    elif how == "matmul":
        real = real_args[0] @ real_args[1]
        model = matmul(*model_args)
    else:
        real = _resolve(target)(*real_args, **real_kwargs)
        model = function(target, model_args, model_kwargs)
    if isinstance(model, Tensor) and isinstance(real, torch.Tensor) and model.dtype is not None:
        assert model.dtype == str(real.dtype)
    assert _shapes(model) == _shapes(real)


@pytest.mark.filterwarnings("ignore:ComplexHalf support is experimental")
def test_dtype_sizes_match_torch(torch):
    for name, size in DTYPE_SIZES.items():
        dt = getattr(torch, name.split(".")[1], None)
        if dt is None:  # a dtype this torch release lacks
            continue
        assert str(dt) == name and torch.empty((), dtype=dt, device="meta").element_size() == size
    for alias, name in DTYPE_ALIASES.items():
        assert str(getattr(torch, alias.split(".")[1])) == name


# ---------------------------------------------------------------- random chains with named dims vs torch

class Chain:
    """One tensor followed through random operations twice: as a meta tensor
    with concrete sizes, and as a model Tensor whose dims are Syms of those sizes."""

    def __init__(self, torch, rng):
        self.torch, self.rng = torch, rng
        self.env: dict = {}
        dims = [self.fresh() for _ in range(rng.randint(2, 4))]
        self.real = torch.empty([self.env[str(d)] for d in dims], device="meta")
        self.model = Tensor(tuple(dims))

    def fresh(self, lo=2, hi=5):
        name = f"d{len(self.env)}"
        self.env[name] = self.rng.randint(lo, hi)
        return Sym.var(name)

    def value(self, d):
        return d.subs(self.env) if isinstance(d, Sym) else d

    def step(self):
        rng, rank = self.rng, len(self.model.shape)
        op = rng.choice(["transpose", "permute", "flatten", "split_view", "unsqueeze_expand", "cat_split",
                         "chunk", "slice", "linear", "pad", "rearrange", "repeat_interleave"])
        getattr(self, op)(rng, rank)
        return op

    def apply(self, name, args, kwargs=None, real_args=None):
        kwargs = kwargs or {}
        real_args = args if real_args is None else real_args
        self.real = getattr(self.real, name)(*real_args, **kwargs)
        self.model = tensor_method(self.model, name, args, kwargs)

    def transpose(self, rng, rank):
        self.apply("transpose", (rng.randrange(rank), -1 - rng.randrange(rank)))

    def permute(self, rng, rank):
        order = list(range(rank))
        rng.shuffle(order)
        self.apply("permute", tuple(order))

    def flatten(self, rng, rank):
        if rank > 1:
            start = rng.randrange(rank - 1)
            self.apply("flatten", (start, start + 1))

    def split_view(self, rng, rank):
        # Split a dim d into (k, d / k) through view(..., k, -1, ...), k a fresh name.
        i = rng.randrange(rank)
        k = self.fresh(1, 3)
        self.real = self.real.unsqueeze(i).expand(*[-1] * i, self.env[str(k)], *[-1] * (rank - i))
        self.model = tensor_method(self.model, "unsqueeze", (i,))
        self.model = tensor_method(self.model, "expand", (*[-1] * i, k, *[-1] * (rank - i)))
        self.real = self.real.flatten(i, i + 1)
        self.model = tensor_method(self.model, "flatten", (i, i + 1))
        shape = list(self.model.shape)
        new = shape[:i] + [k, -1] + shape[i + 1:]
        self.apply("reshape", tuple(new), real_args=tuple(self.value(d) for d in new))

    def unsqueeze_expand(self, rng, rank):
        i = rng.randint(0, rank)
        k = self.fresh()
        self.apply("unsqueeze", (i,))
        sizes = [-1] * (rank + 1)
        sizes[i] = k
        self.apply("expand", tuple(sizes), real_args=tuple(self.value(d) for d in sizes))

    def cat_split(self, rng, rank):
        i = rng.randrange(rank)
        extra = self.fresh()
        other_shape = list(self.model.shape)
        other_shape[i] = extra
        old = self.model.shape[i]
        other = self.torch.empty([self.value(d) for d in other_shape], device="meta")
        self.real = self.torch.cat([self.real, other], dim=i)
        self.model = function("torch.cat", ([self.model, Tensor(tuple(other_shape))],), {"dim": i})
        part = rng.randrange(2)
        self.real = self.real.split([self.value(old), self.env[str(extra)]], dim=i)[part]
        self.model = tensor_method(self.model, "split", ([old, extra], i))[part]

    def chunk(self, rng, rank):
        i = rng.randrange(rank)
        self.apply("repeat_interleave", (2, i))
        self.real = self.real.chunk(2, i)[1]
        self.model = tensor_method(self.model, "chunk", (2, i))[1]

    def slice(self, rng, rank):
        # x[..., :a] and x[..., a:] on a dim a + b.
        i = rng.randrange(rank)
        a, old = self.fresh(), self.model.shape[i]
        self.real = self.torch.cat([self.torch.empty([*self.real.shape[:i], self.env[str(a)],
                                                      *self.real.shape[i + 1:]], device="meta"), self.real], i)
        self.model = function("torch.cat", ([Tensor(_replace(self.model.shape, i, a)), self.model],), {"dim": i})
        bound = Slice(a, None) if rng.randrange(2) else Slice(None, a)
        idx = (Slice(),) * i + (bound,)
        real_bound = slice(*(None if b is None else self.value(b) for b in (bound.lower, bound.upper)))
        self.real = self.real[(slice(None),) * i + (real_bound,)]
        self.model = index(self.model, idx)
        assert self.model.shape[i] == (old if bound.lower is not None else a)

    def linear(self, rng, rank):
        out = self.fresh()
        weight = self.torch.empty(self.env[str(out)], self.real.shape[-1], device="meta")
        self.real = self.torch.nn.functional.linear(self.real, weight)
        self.model = apply_layer(layer("torch.nn.Linear", (self.model.shape[-1], out), {}), self.model)

    def pad(self, rng, rank):
        pads = tuple(rng.randint(0, 2) for _ in range(2 * rng.randint(1, rank)))
        self.real = self.torch.nn.functional.pad(self.real, pads)
        self.model = function("torch.nn.functional.pad", (self.model, pads), {})

    def rearrange(self, rng, rank):
        einops = pytest.importorskip("einops")
        names = [f"a{k}" for k in range(rank)]
        order = names[:]
        rng.shuffle(order)
        pattern = " ".join(names) + " -> " + " ".join(order)
        self.real = einops.rearrange(self.real, pattern)
        self.model = function("einops.rearrange", (self.model, pattern), {})

    def repeat_interleave(self, rng, rank):
        self.apply("repeat_interleave", (rng.randint(1, 3),), {"dim": rng.randrange(rank)})


def _replace(shape, i, d):
    return shape[:i] + (d,) + shape[i + 1:]


@pytest.mark.parametrize("seed", range(40))
def test_named_dims_agree_with_torch(torch, seed):
    rng = random.Random(seed)
    chain = Chain(torch, rng)
    for _ in range(6):
        if len(chain.model.shape) > 6:
            break
        op = chain.step()
        shape = chain.model.shape
        assert shape is not None and UNKNOWN not in shape, (op, shape)  # these ops are all exact
        assert tuple(chain.value(d) for d in shape) == tuple(chain.real.shape), (op, shape, chain.env)
