"""Tests of tensorlib.nn.init: gains, fans, the moments and bounds of every initializer against
its formula, in-place semantics, determinism, errors, and parity with torch.nn.init."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

import tensorlib as tl
from tensorlib.nn import init
from tensorlib.random import Generator

NONLINEARITIES = ["linear", "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d",
                  "conv_transpose3d", "sigmoid", "tanh", "relu", "leaky_relu", "selu"]
FAN_SHAPES = [(3, 4), (128, 256), (16, 3, 5, 5), (8, 4, 3), (2, 3, 1, 1, 2), (5, 0, 3)]


def big(dtype=tl.float32, shape=(1000, 1000)):
    return tl.empty(*shape, dtype=dtype)


def assert_std(values: np.ndarray, expected: float, rel: float = 0.01) -> None:
    std = float(np.asarray(values, dtype=np.float64).std())
    assert abs(std / expected - 1) < rel, f"std {std} vs formula {expected}"


# -- gains and fans ----------------------------------------------------------------------------


def test_gains():
    assert init.calculate_gain("linear") == 1
    assert init.calculate_gain("sigmoid") == 1
    assert init.calculate_gain("tanh") == pytest.approx(5 / 3)
    assert init.calculate_gain("relu") == pytest.approx(math.sqrt(2))
    assert init.calculate_gain("selu") == pytest.approx(0.75)
    assert init.calculate_gain("leaky_relu") == pytest.approx(math.sqrt(2 / (1 + 0.01**2)))
    assert init.calculate_gain("leaky_relu", 0.2) == pytest.approx(math.sqrt(2 / 1.04))
    assert init.calculate_gain("leaky_relu", 0) == pytest.approx(math.sqrt(2))
    assert init.calculate_gain("leaky_relu", math.sqrt(5)) == pytest.approx(1 / math.sqrt(3))


def test_relu_gain_restores_the_second_moment():
    z = Generator(0).normal(400_000, dtype=np.float64)
    ratio = np.mean(np.maximum(z, 0) ** 2) / z.var()
    assert init.calculate_gain("relu") ** 2 * ratio == pytest.approx(1, abs=0.01)
    a = 0.3
    leaky = np.mean(np.where(z > 0, z, a * z) ** 2) / z.var()
    assert init.calculate_gain("leaky_relu", a) ** 2 * leaky == pytest.approx(1, abs=0.01)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("softplus",), "Unsupported nonlinearity 'softplus'; expected one of linear"),
        (("ReLU",), "Unsupported nonlinearity 'ReLU'"),
        (("leaky_relu", "0.2"), "negative_slope '0.2' not a valid number"),
        (("leaky_relu", True), "negative_slope True not a valid number"),
    ],
)
def test_gain_errors(args, message):
    with pytest.raises(ValueError, match=message):
        init.calculate_gain(*args)


@pytest.mark.parametrize("shape", FAN_SHAPES)
def test_fans(shape):
    receptive = math.prod(shape[2:])
    assert init._calculate_fan_in_and_fan_out(tl.empty(*shape)) == (
        shape[1] * receptive,
        shape[0] * receptive,
    )


@pytest.mark.parametrize("shape", [(), (7,)])
def test_fans_need_two_dims(shape):
    with pytest.raises(
        ValueError, match=rf"fewer than 2 dimensions \(got shape {re_shape(shape)}\)"
    ):
        init._calculate_fan_in_and_fan_out(tl.empty(*shape))
    for fill in (
        init.xavier_uniform_,
        init.xavier_normal_,
        init.kaiming_uniform_,
        init.kaiming_normal_,
    ):
        with pytest.raises(ValueError, match="fewer than 2 dimensions"):
            fill(tl.empty(*shape))


def re_shape(shape):
    return str(tuple(shape)).replace("(", r"\(").replace(")", r"\)")


# -- every initializer against its formula -----------------------------------------------------


def test_worked_example_128_by_256():
    gen = Generator(0)
    w = tl.empty(128, 256)
    assert_std(
        init.kaiming_normal_(w, nonlinearity="relu", generator=gen).numpy(), math.sqrt(2) / 16, 0.02
    )
    assert_std(init.xavier_normal_(w, generator=gen).numpy(), math.sqrt(2 / 384), 0.02)
    values = init.kaiming_uniform_(w, a=math.sqrt(5), generator=gen).numpy()
    assert np.abs(values).max() <= 1 / 16 and np.abs(values).max() > 0.999 / 16


@pytest.mark.parametrize("dtype", [tl.float32, tl.float64])
def test_uniform_and_normal(dtype):
    gen = Generator(1)
    u = init.uniform_(big(dtype), -2.0, 3.0, generator=gen).numpy()
    assert u.dtype == dtype and u.min() >= -2.0 and u.max() < 3.0
    assert abs(u.mean() - 0.5) < 0.01 and u.min() < -1.99 and u.max() > 2.99
    assert_std(u, 5 / math.sqrt(12))
    n = init.normal_(big(dtype), 1.5, 0.25, generator=gen).numpy()
    assert n.dtype == dtype and abs(n.mean() - 1.5) < 0.002
    assert_std(n, 0.25)


def test_uniform_default_range():
    u = init.uniform_(big(), generator=Generator(2)).numpy()
    assert u.min() >= 0 and u.max() < 1 and abs(u.mean() - 0.5) < 0.002


@pytest.mark.parametrize(("shape", "gain"), [((1000, 1000), 1.0), ((300, 200, 3, 3), 5 / 3)])
def test_xavier(shape, gain):
    gen = Generator(3)
    receptive = math.prod(shape[2:])
    fan_in, fan_out = shape[1] * receptive, shape[0] * receptive
    std = gain * math.sqrt(2 / (fan_in + fan_out))
    u = init.xavier_uniform_(tl.empty(*shape), gain=gain, generator=gen).numpy()
    bound = math.sqrt(3) * std
    assert np.abs(u).max() <= bound * (1 + 1e-6) and np.abs(u).max() > 0.999 * bound
    assert_std(u, std)
    assert_std(init.xavier_normal_(tl.empty(*shape), gain=gain, generator=gen).numpy(), std)


@pytest.mark.parametrize(
    ("a", "mode", "nonlinearity", "gain"),
    [
        (0, "fan_in", "leaky_relu", math.sqrt(2)),
        (0.2, "fan_out", "leaky_relu", math.sqrt(2 / 1.04)),
        (0, "fan_in", "relu", math.sqrt(2)),
        (0, "FAN_OUT", "tanh", 5 / 3),
        (math.sqrt(5), "fan_in", "leaky_relu", 1 / math.sqrt(3)),
        (0, "fan_in", "linear", 1.0),
    ],
)
def test_kaiming(a, mode, nonlinearity, gain):
    shape = (400, 250, 3)
    fan = (250 if mode.lower() == "fan_in" else 400) * 3
    std = gain / math.sqrt(fan)
    gen = Generator(4)
    u = init.kaiming_uniform_(
        tl.empty(*shape), a=a, mode=mode, nonlinearity=nonlinearity, generator=gen
    ).numpy()
    assert np.abs(u).max() <= math.sqrt(3) * std * (1 + 1e-6)
    assert_std(u, std)
    n = init.kaiming_normal_(
        tl.empty(*shape), a=a, mode=mode, nonlinearity=nonlinearity, generator=gen
    ).numpy()
    assert abs(n.mean()) < 0.01 * std * 10
    assert_std(n, std)


def test_default_linear_bound_is_one_over_sqrt_fan_in():
    for n_in in (16, 100, 784):
        w = init.kaiming_uniform_(
            tl.empty(300, n_in), a=math.sqrt(5), generator=Generator(n_in)
        ).numpy()
        assert np.abs(w).max() <= 1 / math.sqrt(n_in)
        assert np.abs(w).max() > 0.99 / math.sqrt(n_in)


def truncated_variance(lo: float, hi: float) -> float:
    """Variance of a standard normal conditioned on [lo, hi]."""
    phi = lambda x: math.exp(-x * x / 2) / math.sqrt(2 * math.pi)  # noqa: E731
    mass = 0.5 * (math.erf(hi / math.sqrt(2)) - math.erf(lo / math.sqrt(2)))
    mean = (phi(lo) - phi(hi)) / mass
    return 1 + (lo * phi(lo) - hi * phi(hi)) / mass - mean**2


@pytest.mark.parametrize(
    ("mean", "std", "a", "b"),
    [(0.0, 1.0, -2.0, 2.0), (0.0, 1.0, -1.0, 1.0), (1.0, 0.5, 0.5, 3.0), (0.0, 0.02, -2.0, 2.0),
     (0.0, 1.0, 2.0, 2.5), (0.0, 1.0, 6.0, 6.5)],
)
def test_trunc_normal(mean, std, a, b):
    values = init.trunc_normal_(
        big(tl.float64, (400, 500)), mean, std, a, b, generator=Generator(5)
    ).numpy()
    assert values.min() >= a and values.max() <= b
    lo, hi = (a - mean) / std, (b - mean) / std
    assert_std(values, std * math.sqrt(truncated_variance(lo, hi)), 0.01)


def test_trunc_normal_errors():
    with pytest.raises(ValueError, match="holds only"):
        init.trunc_normal_(tl.empty(3, 3), 0.0, 1.0, 8.0, 10000.0)
    with pytest.raises(ValueError, match="needs a < b, got a=1.0, b=-1.0"):
        init.trunc_normal_(tl.empty(3, 3), a=1.0, b=-1.0)
    with pytest.raises(ValueError, match="needs std > 0, got 0.0"):
        init.trunc_normal_(tl.empty(3, 3), std=0.0)


def test_constant_zeros_ones_keep_the_dtype():
    assert init.constant_(tl.empty(2, 3), 0.5).tolist() == [[0.5] * 3] * 2
    assert init.zeros_(tl.ones(4, dtype=tl.float64)).tolist() == [0.0] * 4
    ints = init.ones_(tl.zeros(3, dtype=tl.int64))
    assert ints.dtype == tl.int64 and ints.tolist() == [1, 1, 1]


# -- in place, no graph, determinism ------------------------------------------------------------


def test_in_place_on_a_parameter_without_recording_a_graph():
    w = tl.zeros(64, 32, requires_grad=True)
    view = w.numpy()
    out = init.kaiming_uniform_(w, generator=Generator(6))
    assert out is w and w.requires_grad and w.is_leaf and w.grad_fn is None
    assert np.array_equal(view, w.numpy()) and np.abs(view).max() > 0
    loss = (w * w).sum()
    loss.backward()
    np.testing.assert_allclose(w.grad.numpy(), 2 * w.numpy())
    assert tl.is_grad_enabled()


@pytest.mark.parametrize(
    "fill",
    [
        lambda t, g: init.uniform_(t, generator=g),
        lambda t, g: init.normal_(t, generator=g),
        lambda t, g: init.xavier_uniform_(t, generator=g),
        lambda t, g: init.xavier_normal_(t, generator=g),
        lambda t, g: init.kaiming_uniform_(t, generator=g),
        lambda t, g: init.kaiming_normal_(t, generator=g),
        lambda t, g: init.trunc_normal_(t, generator=g),
    ],
)
def test_same_seed_same_tensor(fill):
    a = fill(tl.empty(20, 30), Generator(1)).numpy().copy()
    b = fill(tl.empty(20, 30), Generator(1)).numpy().copy()
    c = fill(tl.empty(20, 30), Generator(2)).numpy().copy()
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, c)


def test_default_generator_is_used_without_generator():
    tl.manual_seed(42)
    a = init.xavier_normal_(tl.empty(5, 7)).numpy().copy()
    tl.manual_seed(42)
    b = init.xavier_normal_(tl.empty(5, 7)).numpy().copy()
    np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(
        init.normal_(tl.empty(5, 7, dtype=tl.float64), generator=Generator(8)).numpy(),
        Generator(8).normal((5, 7), dtype=np.float64),
    )


def test_float32_fill_is_the_float64_fill_rounded():
    a = init.kaiming_normal_(tl.empty(30, 40), generator=Generator(9)).numpy()
    b = init.kaiming_normal_(tl.empty(30, 40, dtype=tl.float64), generator=Generator(9)).numpy()
    np.testing.assert_array_equal(a, b.astype(np.float32))


def test_float16_tensors_get_the_float64_fill_rounded():
    # tensorlib.float16 is a supported float dtype in chapter 3 (round 2): the fills work on it
    for fill in (lambda t, g: init.kaiming_normal_(t, generator=g),
                 lambda t, g: init.trunc_normal_(t, generator=g)):
        half = fill(tl.empty(30, 40, dtype=tl.float16), Generator(9)).numpy()
        full = fill(tl.empty(30, 40, dtype=tl.float64), Generator(9)).numpy()
        assert half.dtype == np.float16
        np.testing.assert_array_equal(half, full.astype(np.float16))


def test_float16_uniform_fills_use_11_bits_and_stay_below_the_upper_bound():
    half = init.uniform_(tl.empty(1000, 1000, dtype=tl.float16), generator=Generator(3)).numpy()
    assert half.max() == 1 - 2**-11  # rounding 24-bit draws to nearest would reach 1.0
    np.testing.assert_array_equal(half, Generator(3).uniform((1000, 1000), dtype=np.float16))
    bound = math.sqrt(6 / 70)
    xavier = init.xavier_uniform_(
        tl.empty(30, 40, dtype=tl.float16), generator=Generator(9)
    ).numpy()
    np.testing.assert_array_equal(
        xavier, Generator(9).uniform((30, 40), -bound, bound, dtype=np.float16)
    )


@pytest.mark.parametrize("fill", ["uniform_", "normal_", "trunc_normal_", "xavier_uniform_",
                                  "xavier_normal_", "kaiming_uniform_", "kaiming_normal_"])
def test_generator_is_resolved_by_tensorlib_random(fill):
    # one resolver for the whole library: the message of tensorlib.random.resolve_generator
    with pytest.raises(TypeError, match="generator must be a tensorlib.Generator, got Generator"):
        getattr(init, fill)(tl.empty(3, 4), generator=np.random.default_rng(0))
    tl.manual_seed(5)
    a = getattr(init, fill)(tl.empty(3, 4)).numpy().copy()
    b = getattr(init, fill)(tl.empty(3, 4), generator=Generator(5)).numpy()
    np.testing.assert_array_equal(a, b)


# -- errors ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("call", "error", "message"),
    [
        (
            lambda: init.kaiming_uniform_(tl.empty(3, 4), mode="fan_avg"),
            ValueError,
            "Mode 'fan_avg' not supported, please use one of fan_in, fan_out",
        ),
        (
            lambda: init.kaiming_normal_(tl.empty(3, 4), nonlinearity="gelu"),
            ValueError,
            "Unsupported nonlinearity 'gelu'",
        ),
        (
            lambda: init.kaiming_normal_(tl.empty(0, 4), nonlinearity="gelu"),
            ValueError,
            "Unsupported nonlinearity 'gelu'",
        ),
        (
            lambda: init.uniform_(tl.zeros(3, dtype=tl.int64)),
            TypeError,
            "uniform_ fills with random floats and needs a floating-point tensor, got dtype int64",
        ),
        (
            lambda: init.normal_(np.zeros(3)),
            TypeError,
            "normal_ expects a tensorlib Tensor, got ndarray",
        ),
        (
            lambda: init.uniform_(tl.empty(3), 1.0, 0.0),
            ValueError,
            "needs a <= b, got a=1.0, b=0.0",
        ),
        (lambda: init.normal_(tl.empty(3), std=-1.0), ValueError, "needs std >= 0, got -1.0"),
        (
            lambda: init.xavier_normal_(tl.empty(3, 3), generator=1),
            TypeError,
            "must be a tensorlib.Generator",
        ),
    ],
)
def test_errors(call, error, message):
    with pytest.raises(error, match=message):
        call()


def test_a_failed_fill_changes_nothing():
    w = tl.ones(3, 4)
    with pytest.raises(ValueError):
        init.kaiming_uniform_(w, mode="bad")
    assert w.tolist() == [[1.0] * 4] * 3


def test_zero_element_kaiming_warns_and_returns():
    w = tl.empty(0, 4)
    with pytest.warns(UserWarning, match="zero-element tensors is a no-op"):
        assert init.kaiming_uniform_(w) is w
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert tuple(init.xavier_uniform_(tl.empty(3, 0)).shape) == (3, 0)


# -- parity with PyTorch -----------------------------------------------------------------------


@pytest.mark.parity
def test_gain_parity():
    torch = pytest.importorskip("torch")
    for name in NONLINEARITIES:
        assert init.calculate_gain(name) == pytest.approx(torch.nn.init.calculate_gain(name))
    for slope in (None, 0, 0.2, 1, 3, math.sqrt(5)):
        assert init.calculate_gain("leaky_relu", slope) == pytest.approx(
            torch.nn.init.calculate_gain("leaky_relu", slope))
    for bad in (("softplus",), ("leaky_relu", "0.2")):
        with pytest.raises(ValueError):
            torch.nn.init.calculate_gain(*bad)
        with pytest.raises(ValueError):
            init.calculate_gain(*bad)


@pytest.mark.parity
@pytest.mark.parametrize("shape", FAN_SHAPES + [(7,)])
def test_fan_parity(shape):
    torch = pytest.importorskip("torch")
    try:
        expected = torch.nn.init._calculate_fan_in_and_fan_out(torch.empty(*shape))
    except ValueError:
        with pytest.raises(ValueError, match="fewer than 2 dimensions"):
            init._calculate_fan_in_and_fan_out(tl.empty(*shape))
        return
    assert init._calculate_fan_in_and_fan_out(tl.empty(*shape)) == expected
    for mode in ("fan_in", "fan_out"):
        assert (
            init._calculate_correct_fan(tl.empty(*shape), mode)
            == torch.nn.init._calculate_correct_fan(torch.empty(*shape), mode)
        )


@pytest.mark.parity
@pytest.mark.parametrize(
    "name, kwargs",
    [
        ("xavier_uniform_", {"gain": 2.0}),
        ("xavier_normal_", {}),
        ("kaiming_uniform_", {"a": math.sqrt(5)}),
        ("kaiming_normal_", {"mode": "fan_out", "nonlinearity": "relu"}),
        ("trunc_normal_", {"std": 0.5, "a": -0.6, "b": 0.9}),
        ("uniform_", {"a": -1.0, "b": 2.0}),
    ],
)
def test_distribution_parity(name, kwargs):
    torch = pytest.importorskip("torch")
    shape = (600, 300, 2)
    ours = getattr(init, name)(tl.empty(*shape), generator=Generator(0), **kwargs).numpy()
    theirs = getattr(torch.nn.init, name)(
        torch.empty(*shape), generator=torch.Generator().manual_seed(0), **kwargs
    ).numpy()
    assert ours.dtype == theirs.dtype
    assert abs(ours.std() / theirs.std() - 1) < 0.01
    assert abs(ours.mean() - theirs.mean()) < 0.01 * theirs.std()
    if "uniform" in name or "trunc" in name:  # bounded: the extremes approach the same bounds
        assert abs(ours.min() - theirs.min()) < 0.01 * theirs.std()
        assert abs(ours.max() - theirs.max()) < 0.01 * theirs.std()
