"""Lazy layers and uninitialised tensors (section 11.5 of chapter 4), with PyTorch 2.13 parity."""

from __future__ import annotations

import copy

import numpy as np
import pytest

import tensorlib as tl
from tensorlib import nn
from tensorlib.nn.parameter import UninitializedBuffer, UninitializedParameter, is_lazy

# (lazy class, ordinary class, constructor args, input shape, weight shape after the call)
CASES = [
    ("LazyLinear", "Linear", (4,), (2, 3), (4, 3)),
    ("LazyConv1d", "Conv1d", (4, 3), (2, 3, 7), (4, 3, 3)),
    ("LazyConv2d", "Conv2d", (4, 3), (2, 3, 5, 5), (4, 3, 3, 3)),
    ("LazyConv2d", "Conv2d", (4, 3), (3, 5, 5), (4, 3, 3, 3)),  # unbatched
    ("LazyConv3d", "Conv3d", (4, 2), (1, 3, 4, 4, 4), (4, 3, 2, 2, 2)),
    ("LazyConvTranspose1d", "ConvTranspose1d", (4, 3), (2, 3, 7), (3, 4, 3)),
    ("LazyConvTranspose2d", "ConvTranspose2d", (4, 3), (2, 3, 5, 5), (3, 4, 3, 3)),
    ("LazyConvTranspose3d", "ConvTranspose3d", (4, 2), (1, 3, 3, 3, 3), (3, 4, 2, 2, 2)),
    ("LazyBatchNorm1d", "BatchNorm1d", (), (4, 3), (3,)),
    ("LazyBatchNorm2d", "BatchNorm2d", (), (2, 3, 4, 4), (3,)),
    ("LazyBatchNorm3d", "BatchNorm3d", (), (2, 3, 2, 2, 2), (3,)),
    ("LazyInstanceNorm1d", "InstanceNorm1d", (), (2, 3, 5), (3,)),
    ("LazyInstanceNorm2d", "InstanceNorm2d", (), (2, 3, 4, 4), (3,)),
    ("LazyInstanceNorm3d", "InstanceNorm3d", (), (2, 3, 2, 2, 2), (3,)),
]


@pytest.mark.parametrize("lazy, ordinary, args, shape, weight_shape", CASES)
def test_first_call_materialises_in_place(lazy, ordinary, args, shape, weight_shape) -> None:
    tl.manual_seed(0)
    module = getattr(nn, lazy)(*args)
    assert module.has_uninitialized_params()
    weight = module.weight
    assert isinstance(weight, UninitializedParameter) and is_lazy(weight)
    optimizer = tl.optim.SGD(module.parameters(), lr=0.1)  # built before the first call
    out = module(tl.tensor(np.random.default_rng(0).standard_normal(shape).astype(np.float32)))
    assert type(module) is getattr(nn, ordinary)
    assert module.weight is weight and type(weight) is nn.Parameter
    assert module.weight.shape == weight_shape
    assert not hasattr(module, "has_uninitialized_params")  # an ordinary layer now, as PyTorch
    assert optimizer.param_groups[0]["params"][0] is weight
    before = weight.numpy().copy()
    out.pow(2).sum().backward()
    optimizer.step()
    assert not np.array_equal(before, weight.numpy())


def test_lazy_linear_initial_values_follow_the_generator() -> None:
    tl.manual_seed(3)
    lazy = nn.LazyLinear(4)
    lazy(tl.ones(1, 5))
    tl.manual_seed(3)
    plain = nn.Linear(5, 4)
    np.testing.assert_array_equal(lazy.weight.numpy(), plain.weight.numpy())
    np.testing.assert_array_equal(lazy.bias.numpy(), plain.bias.numpy())


def test_uninitialized_state_dict_and_loading() -> None:
    lazy = nn.LazyLinear(4)
    state = lazy.state_dict()
    assert list(state) == ["weight", "bias"]
    assert all(isinstance(v, UninitializedParameter) for v in state.values())
    # lazy into lazy: nothing to copy, nothing missing
    assert nn.LazyLinear(4).load_state_dict(state).missing_keys == []
    # a real checkpoint materialises the lazy layer to its shapes
    source = nn.Linear(3, 4)
    target = nn.LazyLinear(4)
    target.load_state_dict(source.state_dict())
    assert target.weight.shape == (4, 3) and target.in_features == 0
    np.testing.assert_array_equal(target.weight.numpy(), source.weight.numpy())
    target(tl.ones(2, 3))
    assert type(target) is nn.Linear and target.in_features == 3
    # an uninitialised value into an initialised layer: PyTorch's error
    with pytest.raises(RuntimeError, match="Can't access the shape of an uninitialized"):
        nn.Linear(3, 4).load_state_dict(nn.LazyLinear(4).state_dict())


def test_lazy_norm_state_dict_keys() -> None:
    norm = nn.LazyBatchNorm2d()
    keys = ["weight", "bias", "running_mean", "running_var", "num_batches_tracked"]
    assert list(norm.state_dict()) == keys
    assert isinstance(norm.running_mean, UninitializedBuffer)
    assert list(nn.LazyInstanceNorm1d(affine=False, track_running_stats=False).state_dict()) == []
    assert nn.LazyBatchNorm1d(bias=False).bias is None


def test_errors() -> None:
    with pytest.raises(RuntimeError, match="Expected 3D \\(unbatched\\) or 4D \\(batched\\) input"):
        nn.LazyConv2d(4, 3)(tl.ones(3, 3))
    with pytest.raises(ValueError, match="in_channels must be divisible by groups"):
        nn.LazyConv2d(4, 3, groups=2)(tl.ones(1, 3, 5, 5))
    with pytest.raises(RuntimeError, match="Can't access the shape of an uninitialized"):
        _ = UninitializedParameter().shape


def test_uninitialized_tensors() -> None:
    param = UninitializedParameter(dtype=tl.float64)
    assert repr(param) == "<UninitializedParameter>" and param.requires_grad
    clone = copy.deepcopy(param)
    assert isinstance(clone, UninitializedParameter) and clone is not param
    param.materialize((2, 3))
    assert type(param) is nn.Parameter and param.dtype == tl.float64 and param.shape == (2, 3)
    buffer = UninitializedBuffer()
    assert not buffer.requires_grad and repr(buffer) == "<UninitializedBuffer>"
    buffer.materialize((4,), dtype=tl.float16)
    assert type(buffer) is tl.Tensor and buffer.dtype == tl.float16
    assert not is_lazy(buffer) and not is_lazy(tl.ones(1))
    lazy_model = copy.deepcopy(nn.Sequential(nn.LazyLinear(2)))
    assert lazy_model(tl.ones(1, 3)).shape == (1, 2)


@pytest.mark.parity
@pytest.mark.parametrize("lazy, ordinary, args, shape, weight_shape", CASES)
def test_matches_pytorch(lazy, ordinary, args, shape, weight_shape) -> None:
    torch = pytest.importorskip("torch")
    theirs, ours = getattr(torch.nn, lazy)(*args), getattr(nn, lazy)(*args)
    assert list(theirs.state_dict()) == list(ours.state_dict())
    assert [repr(v) for v in theirs.state_dict().values()] == [
        repr(v) for v in ours.state_dict().values()
    ]
    assert theirs.has_uninitialized_params() == ours.has_uninitialized_params()
    x = np.random.default_rng(1).standard_normal(shape).astype(np.float32)
    theirs(torch.tensor(x))
    ours(tl.tensor(x))
    assert type(theirs).__name__ == type(ours).__name__ == ordinary
    assert list(theirs.state_dict()) == list(ours.state_dict())
    for key, value in theirs.state_dict().items():
        assert tuple(value.shape) == tuple(ours.state_dict()[key].shape), key
    # the materialised PyTorch layer's values load into a fresh lazy layer of each library; as
    # in PyTorch the recorded size stays 0 until the call, which an affine InstanceNorm refuses
    fresh_theirs, fresh = getattr(torch.nn, lazy)(*args), getattr(nn, lazy)(*args)
    fresh_theirs.load_state_dict(theirs.state_dict())
    fresh.load_state_dict(theirs.state_dict())
    try:
        out_theirs = fresh_theirs.eval()(torch.tensor(x)).detach().numpy()
    except ValueError:
        with pytest.raises(ValueError, match="does not match num_features"):
            fresh.eval()(tl.tensor(x))
        return
    out_ours = fresh.eval()(tl.tensor(x)).numpy()
    np.testing.assert_allclose(out_ours, out_theirs, rtol=1e-5, atol=1e-5)


@pytest.mark.parity
def test_lazy_linear_loaded_then_called_matches_pytorch() -> None:
    torch = pytest.importorskip("torch")
    source = torch.nn.Linear(3, 4)
    theirs, ours = torch.nn.LazyLinear(4), nn.LazyLinear(4)
    theirs.load_state_dict(source.state_dict())
    ours.load_state_dict(source.state_dict())
    assert (theirs.in_features, type(theirs).__name__) == (ours.in_features, type(ours).__name__)
    theirs(torch.ones(1, 3))
    ours(tl.ones(1, 3))
    assert repr(theirs) == repr(ours)
    with pytest.raises(AssertionError, match="The in_features inferred from input: 5"):
        lazy = nn.LazyLinear(4)
        lazy.load_state_dict(source.state_dict())
        lazy(tl.ones(1, 5))
