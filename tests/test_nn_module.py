"""The module system of chapter 4 (tensorlib.nn.Module and its containers).

Written from the spec (PyTorch's behaviour), not from the implementation: registration by
attribute assignment, dotted names in registration order, weight tying counted once, cycles
rejected, train/eval recursion, buffers, state_dict round trips and the strict/non-strict
load rules, Sequential/ModuleList/ModuleDict/Identity, and the nested repr.
"""

from __future__ import annotations

import re

import numpy as np
import pytest

import tensorlib as tl
from tensorlib import nn

# ----------------------------------------------------------------------------- helpers


def tensor(data, dtype=np.float32, requires_grad=False):
    """A tensorlib tensor holding ``data`` as ``dtype`` (float32, the layers' default)."""
    return tl.tensor(np.asarray(data, dtype=dtype), requires_grad=requires_grad)


def to_numpy(x) -> np.ndarray | None:
    """The values of a tensor (or array) as a numpy array; ``None`` stays ``None``."""
    if x is None:
        return None
    if isinstance(x, np.ndarray):
        return x
    return np.asarray(x.numpy())


def snapshot(module) -> dict[str, np.ndarray]:
    """A deep copy of every parameter and buffer of ``module`` by name."""
    values = {name: to_numpy(p).copy() for name, p in module.named_parameters()}
    values.update({name: to_numpy(b).copy() for name, b in module.named_buffers()})
    return values


def randn(rng, *shape):
    return tensor(rng.standard_normal(shape))


class Attention(nn.Module):
    def __init__(self, width: int = 4):
        super().__init__()
        self.qkv = nn.Linear(width, 3 * width)
        self.proj = nn.Linear(width, width, bias=False)

    def forward(self, x):
        # the module tree is what these tests are about; qkv takes part so that it gets a gradient
        return self.proj(x) + self.qkv(x).sum() * 0.01


class Block(nn.Module):
    def __init__(self, width: int = 4):
        super().__init__()
        self.attn = Attention(width)
        self.mlp = nn.Linear(width, width)

    def forward(self, x):
        return self.mlp(self.attn(x))


class Model(nn.Module):
    """scale, two blocks, a head; a persistent and a non-persistent buffer."""

    def __init__(self, width: int = 4, depth: int = 2):
        super().__init__()
        self.scale = nn.Parameter(tensor(np.ones(width)))
        self.blocks = nn.ModuleList([Block(width) for _ in range(depth)])
        self.head = nn.Linear(width, 3)
        self.register_buffer("steps", tensor(np.zeros(1)))
        self.register_buffer("cache", tensor(np.zeros(2)), persistent=False)

    def forward(self, x):
        x = x * self.scale
        for block in self.blocks:
            x = block(x)
        return self.head(x)


BLOCK_NAMES = ["attn.qkv.weight", "attn.qkv.bias", "attn.proj.weight", "mlp.weight", "mlp.bias"]
MODEL_NAMES = (
    ["scale"]
    + [f"blocks.0.{n}" for n in BLOCK_NAMES]
    + [f"blocks.1.{n}" for n in BLOCK_NAMES]
    + ["head.weight", "head.bias"]
)


# ----------------------------------------------------------------------------- registration


def test_named_parameters_dotted_names_in_registration_order():
    model = Model()
    assert [name for name, _ in model.named_parameters()] == MODEL_NAMES


def test_parameters_match_named_parameters_and_have_the_right_shapes():
    model = Model()
    named = list(model.named_parameters())
    params = list(model.parameters())
    assert len(params) == len(named)
    assert all(p is q for p, (_, q) in zip(params, named, strict=True))
    shapes = {name: tuple(p.shape) for name, p in named}
    assert shapes["blocks.0.attn.qkv.weight"] == (12, 4)
    assert shapes["blocks.1.attn.proj.weight"] == (4, 4)
    assert shapes["head.bias"] == (3,)
    assert sum(int(np.prod(p.shape)) for p in params) == 4 + 2 * (48 + 12 + 16 + 16 + 4) + 12 + 3


def test_parameter_is_a_tensor_that_requires_grad():
    p = nn.Parameter(tensor([1.0, 2.0]))
    assert isinstance(p, tl.Tensor)
    assert p.requires_grad
    np.testing.assert_array_equal(to_numpy(p), [1.0, 2.0])
    for _, q in Model().named_parameters():
        assert isinstance(q, nn.Parameter)
        assert q.requires_grad


def test_plain_tensor_attribute_is_not_a_parameter():
    model = nn.Module()
    model.plain = tensor([1.0, 2.0], requires_grad=True)
    model.weight = nn.Parameter(tensor([3.0]))
    assert [name for name, _ in model.named_parameters()] == ["weight"]


def test_reassigning_a_parameter_keeps_one_entry():
    layer = nn.Linear(3, 2)
    layer.bias = nn.Parameter(tensor(np.zeros(2)))
    names = [name for name, _ in layer.named_parameters()]
    assert sorted(names) == ["bias", "weight"]
    np.testing.assert_array_equal(to_numpy(dict(layer.named_parameters())["bias"]), [0.0, 0.0])


def test_children_and_named_children_are_direct_children_in_order():
    model = Model()
    assert [name for name, _ in model.named_children()] == ["blocks", "head"]
    children = list(model.children())
    assert children[0] is model.blocks and children[1] is model.head
    assert [name for name, _ in model.blocks[0].named_children()] == ["attn", "mlp"]


def test_named_modules_preorder_with_root_first():
    model = Model(depth=1)
    named = list(model.named_modules())
    assert [name for name, _ in named] == [
        "",
        "blocks",
        "blocks.0",
        "blocks.0.attn",
        "blocks.0.attn.qkv",
        "blocks.0.attn.proj",
        "blocks.0.mlp",
        "head",
    ]
    assert named[0][1] is model
    assert [m for _, m in named] == list(model.modules())


def test_a_module_registered_twice_is_listed_once():
    shared = nn.Linear(2, 2)
    model = nn.Module()
    model.a = shared
    model.b = shared
    assert len(list(model.modules())) == 2  # the root and the shared Linear
    assert [name for name, _ in model.named_parameters()] == ["a.weight", "a.bias"]


# ----------------------------------------------------------------------------- tying, cycles


class Tied(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(10, 4)
        self.head = nn.Linear(4, 10, bias=False)
        self.head.weight = self.emb.weight  # weight tying: one Parameter, two users

    def forward(self, ids):
        return self.head(self.emb(ids))


def test_tied_parameter_is_counted_and_returned_once():
    model = Tied()
    assert model.head.weight is model.emb.weight
    params = list(model.parameters())
    assert len(params) == 1
    assert params[0] is model.emb.weight
    assert [name for name, _ in model.named_parameters()] == ["emb.weight"]
    assert sum(int(np.prod(p.shape)) for p in model.parameters()) == 40


def test_tied_parameter_gradient_sums_both_uses():
    model = Tied()
    ids = tl.tensor(np.array([1, 3, 1]))
    out = model(ids)
    out.sum().backward()
    w = to_numpy(model.emb.weight)
    # d/dW of sum(E[ids] W^T): the embedding use adds sum_j W[j] to rows ids, the head use
    # adds sum_i E[ids_i] to every row.
    expected = np.zeros_like(w)
    for i in [1, 3, 1]:
        expected[i] += w.sum(axis=0)
    expected += w[[1, 3, 1]].sum(axis=0)
    np.testing.assert_allclose(to_numpy(model.emb.weight.grad), expected, rtol=1e-4, atol=1e-5)


def test_registering_a_module_inside_itself_is_rejected():
    module = nn.Module()
    with pytest.raises((ValueError, RuntimeError), match=r"(?i)cycle|itself|ancestor|contain"):
        module.me = module
    assert list(module.children()) == []


def test_a_longer_cycle_is_rejected_and_nothing_changes():
    a, b, c = nn.Linear(2, 2), nn.Module(), nn.Module()
    b.a = a
    c.b = b
    with pytest.raises((ValueError, RuntimeError), match=r"(?i)cycle|itself|ancestor|contain"):
        a.c = c
    assert list(a.children()) == []
    assert [name for name, _ in c.named_parameters()] == ["b.a.weight", "b.a.bias"]


def test_cycle_through_containers_is_rejected():
    outer = nn.Sequential(nn.Linear(2, 2))
    inner = nn.ModuleList([outer])
    with pytest.raises((ValueError, RuntimeError), match=r"(?i)cycle|itself|ancestor|contain"):
        outer.loop = inner
    assert len(list(outer.children())) == 1


# ----------------------------------------------------------------------------- modes, grads, apply


def test_train_and_eval_recurse_and_return_self():
    model = Model()
    assert all(m.training for m in model.modules())
    assert model.eval() is model
    assert not any(m.training for m in model.modules())
    assert model.train() is model
    assert all(m.training for m in model.modules())
    model.train(False)
    assert not any(m.training for m in model.modules())
    model.blocks.train()  # a subtree only
    assert model.blocks[1].attn.qkv.training and not model.head.training and not model.training


def test_zero_grad_clears_every_gradient():
    rng = np.random.default_rng(0)
    model = Model()
    model(randn(rng, 5, 4)).sum().backward()
    assert all(p.grad is not None for p in model.parameters())
    assert any(np.any(to_numpy(p.grad) != 0) for p in model.parameters())
    model.zero_grad()
    for name, p in model.named_parameters():
        assert p.grad is None or not np.any(to_numpy(p.grad)), name


def test_gradients_accumulate_over_two_backward_passes():
    rng = np.random.default_rng(1)
    model = nn.Linear(3, 2)
    x = randn(rng, 4, 3)
    model(x).sum().backward()
    first = to_numpy(model.weight.grad).copy()
    model(x).sum().backward()
    np.testing.assert_allclose(to_numpy(model.weight.grad), 2 * first, rtol=1e-6)


def test_apply_visits_every_module_once_children_first_and_returns_self():
    model = Model(depth=1)
    seen = []
    assert model.apply(seen.append) is model
    assert len(seen) == len(list(model.modules()))
    assert {id(m) for m in seen} == {id(m) for m in model.modules()}
    assert seen[-1] is model  # PyTorch applies fn to the children, then to the module itself
    assert seen.index(model.blocks[0].attn.qkv) < seen.index(model.blocks[0].attn)


def test_call_dispatches_to_forward():
    class Double(nn.Module):
        def forward(self, x, scale=1.0):
            return x * (2.0 * scale)

    x = tensor([1.0, -2.0])
    np.testing.assert_array_equal(to_numpy(Double()(x)), [2.0, -4.0])
    np.testing.assert_array_equal(to_numpy(Double()(x, scale=3.0)), [6.0, -12.0])


# ----------------------------------------------------------------------------- buffers


def test_buffers_are_named_and_not_parameters():
    model = Model()
    assert [name for name, _ in model.named_buffers()] == ["steps", "cache"]
    assert len(list(model.buffers())) == 2
    assert "steps" not in dict(model.named_parameters())

    outer = nn.Module()
    outer.inner = model
    assert [name for name, _ in outer.named_buffers()] == ["inner.steps", "inner.cache"]


def test_non_persistent_buffers_are_left_out_of_the_state_dict():
    state = Model().state_dict()
    assert "steps" in state
    assert "cache" not in state
    assert set(state) == set(MODEL_NAMES) | {"steps"}


def test_state_dict_parameters_in_registration_order():
    keys = [k for k in Model().state_dict() if k != "steps"]
    assert keys == MODEL_NAMES


# ----------------------------------------------------------------------------- state_dict


def test_state_dict_round_trip_into_a_fresh_model_gives_equal_outputs():
    rng = np.random.default_rng(2)
    tl.manual_seed(0)
    source = Model()
    tl.manual_seed(1)
    target = Model()
    x = randn(rng, 6, 4)
    assert not np.allclose(to_numpy(source(x)), to_numpy(target(x)))
    result = target.load_state_dict(source.state_dict())
    assert list(result.missing_keys) == [] and list(result.unexpected_keys) == []
    np.testing.assert_array_equal(to_numpy(source(x)), to_numpy(target(x)))
    for name, p in target.named_parameters():
        assert p is not dict(source.named_parameters())[name]  # values copied, not objects shared


def test_state_dict_round_trip_restores_buffers():
    source, target = Model(), Model()
    source.steps = tensor([7.0])  # assigning to a registered buffer name updates the buffer
    target.load_state_dict(source.state_dict())
    np.testing.assert_array_equal(to_numpy(dict(target.named_buffers())["steps"]), [7.0])


def test_load_keeps_tied_parameters_tied():
    source, target = Tied(), Tied()
    target.load_state_dict(source.state_dict())
    assert target.head.weight is target.emb.weight
    np.testing.assert_array_equal(to_numpy(target.emb.weight), to_numpy(source.emb.weight))


def _corrupted_state(model):
    state = dict(model.state_dict())
    del state["head.bias"]  # missing
    state["extra.weight"] = tensor(np.zeros(3))  # unexpected
    state["head.weight"] = tensor(np.zeros((3, 5)))  # shape mismatch: (3, 4) expected
    state["blocks.0.mlp.bias"] = tensor(np.full(4, 123.0))  # valid: must not be loaded either
    return state


def test_strict_load_reports_every_problem_in_one_error_and_changes_nothing():
    model = Model()
    before = snapshot(model)
    with pytest.raises((RuntimeError, ValueError, KeyError)) as info:
        model.load_state_dict(_corrupted_state(model))
    message = str(info.value)
    assert "head.bias" in message, message  # missing
    assert "extra.weight" in message, message  # unexpected
    assert "head.weight" in message, message  # shape mismatch, with both shapes
    assert re.search(r"3,\s*5", message) and re.search(r"3,\s*4", message), message
    after = snapshot(model)
    for name in before:
        np.testing.assert_array_equal(after[name], before[name], err_msg=name)


@pytest.mark.parametrize("problem", ["missing", "unexpected", "shape"])
def test_strict_load_rejects_each_problem_alone(problem):
    model = Model()
    state = dict(model.state_dict())
    state["blocks.1.mlp.bias"] = tensor(np.full(4, 5.0))
    if problem == "missing":
        del state["blocks.0.attn.qkv.weight"]
        key = "blocks.0.attn.qkv.weight"
    elif problem == "unexpected":
        state["blocks.2.mlp.bias"] = tensor(np.zeros(4))
        key = "blocks.2.mlp.bias"
    else:
        state["scale"] = tensor(np.ones(5))
        key = "scale"
    before = snapshot(model)
    with pytest.raises((RuntimeError, ValueError, KeyError), match=re.escape(key)):
        model.load_state_dict(state)
    np.testing.assert_array_equal(snapshot(model)["blocks.1.mlp.bias"], before["blocks.1.mlp.bias"])


def test_non_strict_load_returns_missing_and_unexpected_keys_and_loads_the_rest():
    model = Model()
    state = dict(model.state_dict())
    old_head_bias = to_numpy(model.head.bias).copy()
    del state["head.bias"]
    state["extra.weight"] = tensor(np.zeros(3))
    state["blocks.0.mlp.bias"] = tensor(np.full(4, 123.0))
    result = model.load_state_dict(state, strict=False)
    assert list(result.missing_keys) == ["head.bias"]
    assert list(result.unexpected_keys) == ["extra.weight"]
    np.testing.assert_array_equal(to_numpy(model.blocks[0].mlp.bias), np.full(4, 123.0))
    np.testing.assert_array_equal(to_numpy(model.head.bias), old_head_bias)


def test_loaded_values_are_copies():
    """Loaded values are copies: changing the source's state afterwards leaves the target alone."""
    source, target = nn.Linear(3, 2), nn.Linear(3, 2)
    target.load_state_dict(source.state_dict())
    source.load_state_dict({"weight": tensor(np.zeros((2, 3))), "bias": tensor(np.zeros(2))})
    assert np.any(to_numpy(target.weight) != 0)


# ----------------------------------------------------------------------------- containers


def test_sequential_names_children_by_position_and_indexes():
    first, act, last = nn.Linear(4, 3), nn.ReLU(), nn.Linear(3, 2)
    seq = nn.Sequential(first, act, last)
    assert [name for name, _ in seq.named_children()] == ["0", "1", "2"]
    assert [name for name, _ in seq.named_parameters()] == [
        "0.weight",
        "0.bias",
        "2.weight",
        "2.bias",
    ]
    assert len(seq) == 3
    assert seq[0] is first and seq[1] is act and seq[-1] is last
    assert list(seq) == [first, act, last]
    with pytest.raises(IndexError):
        seq[3]
    sliced = seq[1:]
    assert isinstance(sliced, nn.Sequential) and len(sliced) == 2 and sliced[0] is act


def test_sequential_forward_chains_its_children():
    rng = np.random.default_rng(3)
    seq = nn.Sequential(nn.Linear(4, 3), nn.ReLU(), nn.Linear(3, 2))
    x = randn(rng, 5, 4)
    expected = seq[2](seq[1](seq[0](x)))
    np.testing.assert_array_equal(to_numpy(seq(x)), to_numpy(expected))
    assert tuple(seq(x).shape) == (5, 2)


def test_module_list_registers_appends_extends_and_indexes():
    layers = nn.ModuleList([nn.Linear(2, 2)])
    assert layers.append(nn.Linear(2, 3)) is layers
    layers.extend([nn.ReLU(), nn.Linear(3, 1)])
    assert len(layers) == 4
    assert isinstance(layers[-1], nn.Linear) and tuple(layers[-1].weight.shape) == (1, 3)
    assert [name for name, _ in layers.named_children()] == ["0", "1", "2", "3"]
    assert [name for name, _ in layers.named_parameters()] == [
        "0.weight", "0.bias", "1.weight", "1.bias", "3.weight", "3.bias",
    ]
    assert [type(m).__name__ for m in layers] == ["Linear", "Linear", "ReLU", "Linear"]
    replacement = nn.Linear(2, 2, bias=False)
    layers[0] = replacement
    assert layers[0] is replacement
    assert [name for name, _ in layers.named_parameters()][0] == "0.weight"
    assert "0.bias" not in dict(layers.named_parameters())


def test_module_list_rejects_non_modules():
    with pytest.raises((TypeError, ValueError)):
        nn.ModuleList([nn.Linear(2, 2), 3])


def test_module_dict_keeps_insertion_order_and_registers():
    heads = nn.ModuleDict({"cls": nn.Linear(4, 3), "act": nn.Tanh()})
    heads["box"] = nn.Linear(4, 2)
    assert list(heads.keys()) == ["cls", "act", "box"]
    assert len(heads) == 3 and "box" in heads and "nope" not in heads
    assert heads["act"] is list(heads.values())[1]
    assert [k for k, _ in heads.items()] == ["cls", "act", "box"]
    assert [name for name, _ in heads.named_parameters()] == [
        "cls.weight",
        "cls.bias",
        "box.weight",
        "box.bias",
    ]
    outer = nn.Module()
    outer.heads = heads
    assert "heads.box.bias" in outer.state_dict()


def test_identity_returns_its_input():
    x = tensor([[1.0, -2.0], [3.0, 0.5]], requires_grad=True)
    y = nn.Identity()(x)
    np.testing.assert_array_equal(to_numpy(y), to_numpy(x))
    assert list(nn.Identity().parameters()) == []


# ----------------------------------------------------------------------------- repr


def test_repr_is_nested_like_pytorch():
    model = nn.Sequential(nn.Sequential(nn.Linear(2, 3)), nn.ReLU())
    lines = repr(model).splitlines()
    assert lines[0] == "Sequential("
    assert lines[1] == "  (0): Sequential("
    assert lines[2] == "    (0): Linear(in_features=2, out_features=3, bias=True)"
    assert lines[3] == "  )"
    assert lines[4] == "  (1): ReLU()"
    assert lines[5] == ")"
    assert len(lines) == 6


def test_repr_of_a_custom_module_names_its_children():
    text = repr(Model(depth=1))
    assert text.startswith("Model(")
    assert "(blocks): ModuleList(" in text
    assert "(attn): Attention(" in text
    assert "(head): Linear(in_features=4, out_features=3, bias=True)" in text
    assert "0x" not in text  # no memory addresses


# ----------------------------------------------------------------------------- review fixes


@pytest.mark.parametrize(
    "value, got",
    [
        (
            [[1.0, 2.0, 3.0], [4.0]],
            "expected a Tensor or array (any object with __array__) for key 'weight', got list",
        ),
        ("abc", "expected a Tensor or array (any object with __array__) for key 'weight', got str"),
        (1.5, "expected a Tensor or array (any object with __array__) for key 'weight', got float"),
        (
            np.array(["a", "b", "c"]),
            "expected a numeric array for key 'weight', got numpy.ndarray of dtype <U1",
        ),
    ],
)
def test_load_state_dict_names_a_value_that_is_not_a_tensor_and_changes_nothing(value, got):
    model = nn.Linear(3, 1)
    before = snapshot(model)
    with pytest.raises(TypeError, match=re.escape(got)):
        model.load_state_dict({"weight": value, "bias": tensor(np.zeros(1))})
    for name, array in snapshot(model).items():
        np.testing.assert_array_equal(array, before[name], err_msg=name)


def test_load_state_dict_accepts_numpy_arrays():
    model = nn.Linear(3, 1)
    model.load_state_dict({"weight": np.ones((1, 3)), "bias": np.zeros(1)})
    np.testing.assert_array_equal(to_numpy(model.weight), np.ones((1, 3), dtype=np.float32))


def test_module_to_accepts_pytorchs_forms():
    model = nn.Sequential(nn.Linear(2, 3), nn.LayerNorm(3))
    weights = list(model.parameters())
    assert model.to("cpu") is model and model.cpu() is model
    assert model.to(tl.device("cpu")) is model
    assert model.to(tl.float64) is model
    assert all(p.dtype == np.float64 for p in model.parameters())
    model.to("cpu", tl.float32)
    assert all(p.dtype == np.float32 for p in model.parameters())
    model.to(device="cpu", dtype=tl.float64)
    assert all(p.dtype == np.float64 for p in model.parameters())
    model.to(tl.zeros(1, dtype=tl.float32))  # to(tensor): that tensor's dtype
    assert all(p.dtype == np.float32 for p in model.parameters())
    assert list(model.parameters()) == weights  # the same Parameter objects, cast in place


class ArrayLike:
    """Not a numpy array, not a Tensor: only ``__array__``, as a torch tensor or an xarray has."""

    def __init__(self, values):
        self.values = np.asarray(values)

    def __array__(self, dtype=None, copy=None):
        return self.values if dtype is None else self.values.astype(dtype)


class Refuses:
    """Has ``__array__`` but cannot give one (like a torch tensor that requires grad)."""

    def __array__(self, dtype=None, copy=None):
        raise RuntimeError("Can't call numpy() on Tensor that requires grad")


def test_load_state_dict_accepts_any_object_with_array():
    model = nn.Linear(3, 1)
    model.load_state_dict({"weight": ArrayLike([[1.0, 2.0, 3.0]]), "bias": ArrayLike([4.0])})
    np.testing.assert_array_equal(
        to_numpy(model.weight), np.array([[1.0, 2.0, 3.0]], dtype=np.float32)
    )
    np.testing.assert_array_equal(to_numpy(model.bias), np.array([4.0], dtype=np.float32))
    assert model.weight.dtype == np.float32  # cast to the target's dtype


def test_load_state_dict_names_the_full_type_when_array_fails_and_changes_nothing():
    model = nn.Linear(3, 1)
    before = snapshot(model)
    name = f"{Refuses.__module__}.Refuses"
    with pytest.raises(
        TypeError,
        match=re.escape(
            f"the value for key 'weight', a {name}, cannot be converted to an array: Can't call"
        ),
    ):
        model.load_state_dict({"weight": Refuses(), "bias": np.zeros(1)})
    with pytest.raises(TypeError, match=re.escape(f"got {__name__}.Attention")):
        model.load_state_dict({"weight": Attention(), "bias": np.zeros(1)})
    for key, array in snapshot(model).items():
        np.testing.assert_array_equal(array, before[key], err_msg=key)


@pytest.mark.parametrize(
    "method, dtype", [("half", np.float16), ("float", np.float32), ("double", np.float64)]
)
def test_half_float_double_cast_in_place_and_return_self(method, dtype):
    model = nn.Sequential(nn.Linear(2, 3), nn.LayerNorm(3), nn.Embedding(4, 3))
    start = np.float32 if dtype is not np.float32 else np.float64
    model.to(start)
    weights = list(model.parameters())
    values = {name: to_numpy(p).astype(np.float64) for name, p in model.named_parameters()}
    model[0].weight.grad = tl.zeros(3, 2, dtype=start)
    assert getattr(model, method)() is model
    assert list(model.parameters()) == weights  # the same Parameter objects
    for name, p in model.named_parameters():
        assert p.dtype == dtype, name
        np.testing.assert_array_equal(
            to_numpy(p), values[name].astype(start).astype(dtype), err_msg=name
        )
    assert model[0].weight.grad is None  # a gradient of the old dtype is dropped
    assert model[0](tl.ones(5, 2, dtype=dtype)).dtype == dtype


def test_module_to_rejects_integer_dtypes_and_other_devices():
    model = nn.Linear(2, 3)
    with pytest.raises(
        TypeError,
        match=r"nn.Module.to only accepts floating point dtypes, but got desired dtype=int64",
    ):
        model.to(tl.int64)
    with pytest.raises(ValueError, match=r"tensorlib runs on the CPU only, got device 'cuda'"):
        model.to("cuda")
    with pytest.raises(ValueError, match=r"CPU only"):
        model.to(device="cuda:0", dtype=tl.float64)
    assert model.weight.dtype == np.float32 and model.weight.requires_grad


def test_module_dict_views_have_docstrings():
    for name in ("keys", "values", "items"):
        assert getattr(nn.ModuleDict, name).__doc__, name


_MODULE_METHODS = (
    # registration, calling, hooks, walking the tree, modes and casts, state_dict, printing
    "register_parameter", "register_buffer", "add_module", "register_module", "forward",
    "register_forward_pre_hook", "register_forward_hook", "register_full_backward_pre_hook",
    "register_full_backward_hook", "register_state_dict_pre_hook", "register_state_dict_post_hook",
    "register_load_state_dict_pre_hook", "register_load_state_dict_post_hook",
    "register_backward_hook",
    "named_modules", "modules", "named_children", "children", "named_parameters", "parameters",
    "named_buffers", "buffers", "get_submodule", "get_parameter", "get_buffer", "set_submodule",
    "apply",
    "train", "eval", "requires_grad_", "zero_grad", "to", "cpu", "share_memory", "double", "float",
    "half", "type", "to_empty", "compile",
    "state_dict", "load_state_dict", "get_extra_state", "set_extra_state", "extra_repr",
)


def test_module_is_one_class_with_every_method_documented():
    """Module is one class, as torch.nn.Module: no bases but object, every public method its own and
    documented."""
    assert tl.nn.Module.__mro__ == (tl.nn.Module, object)
    for name in _MODULE_METHODS:
        assert name in vars(tl.nn.Module), f"Module.{name} is not defined by Module itself"
        assert getattr(tl.nn.Module, name).__doc__, f"Module.{name} has no docstring"
    public = {
        name
        for name in vars(tl.nn.Module)
        if not name.startswith("_") and callable(getattr(tl.nn.Module, name))
    }
    assert public == set(_MODULE_METHODS), public ^ set(_MODULE_METHODS)


def test_a_module_subclassed_early_has_every_capability():
    """A learner's module, defined before any library layer is used, works with every method and
    inside any container."""

    class Scale(nn.Module):
        def __init__(self):
            super().__init__()
            self.weight = nn.Parameter(tl.ones(3))
            self.register_buffer("count", tl.zeros(1))

        def forward(self, x):
            return x * self.weight

    early = Scale()
    model = nn.Sequential(nn.Linear(3, 3), early)
    assert [name for name, _ in model.named_parameters()] == ["0.weight", "0.bias", "1.weight"]
    assert [name for name, _ in model.named_buffers()] == ["1.count"]
    assert model.get_submodule("1") is early and list(model.children())[1] is early
    model(tl.ones(2, 3)).sum().backward()
    assert early.weight.grad is not None
    model.zero_grad()
    assert early.weight.grad is None
    assert (
        model.eval() is model and not early.training and model.train() is model and early.training
    )
    state = model.state_dict()
    assert list(state) == ["0.weight", "0.bias", "1.weight", "1.count"]
    fresh = nn.Sequential(nn.Linear(3, 3), Scale())
    assert repr(fresh.load_state_dict(state)) == "<All keys matched successfully>"
    early.double()
    assert early.weight.dtype == np.float64 and early.count.dtype == np.float64
    assert repr(model).splitlines()[-2] == "  (1): Scale()"
    assert "weight" in dir(early) and "count" in dir(early)
    seen: list[str] = []
    model.apply(lambda module: seen.append(type(module).__name__))
    assert seen == ["Linear", "Scale", "Sequential"]


def test_linear_and_conv_share_pytorchs_default_init():
    generator = tl.Generator(0)
    weight, bias = tl.empty(4, 3, 2, 2), tl.empty(4)
    assert tl.nn.init.default_init_(weight, bias, generator=generator) is weight
    bound = 1 / np.sqrt(3 * 2 * 2)
    assert np.abs(weight.numpy()).max() <= bound and np.abs(bias.numpy()).max() <= bound
    conv = tl.nn.Conv2d(3, 4, 2, generator=tl.Generator(0))
    assert np.array_equal(conv.weight.detach().numpy(), weight.numpy())
    assert np.array_equal(conv.bias.detach().numpy(), bias.numpy())
