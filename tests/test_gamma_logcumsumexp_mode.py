"""``lgamma``, ``digamma``, ``polygamma`` (chapter 2, section 16.1, ``engine.special_ops``; also
``special.gammaln``, ``special.digamma``, ``special.psi``, ``special.polygamma``), ``logcumsumexp``
(section 13.2, ``engine.reductions``), ``mode`` and ``msort`` (section 20.2,
``engine.statistics``): values and gradients against PyTorch (float64 and float32, several shapes,
positive and negative inputs), float64 gradchecks, the definitions they satisfy, the poles and
the errors."""

from __future__ import annotations

import math
from collections import Counter

import numpy as np
import pytest

import tensorlib as tl

# positive and negative non-integers, near the zeros of lgamma (1, 2, -2.457...) and past 10
POINTS = np.concatenate([
    np.linspace(0.013, 30.0, 401), -np.linspace(0.05, 20.95, 211) + 0.0131,
    [1e-6, 1 - 1e-7, 1 + 1e-8, 2 - 1e-9, 2 + 1e-6, 0.5, 2.5, 1.4616321449683622, 150.3, 1e5,
     -2.4570247, -1e-7],
])


def _uniform(shape, seed, low=0.2, high=6.0, negative=True):
    """Inputs away from the poles: positive, and (with ``negative``) every other one negated,
    then moved off the integers."""
    x = np.random.default_rng(seed).uniform(low, high, size=shape)
    if negative:
        x = np.where(np.arange(x.size).reshape(shape) % 2 == 1, -x, x)
        x = np.where(np.abs(x - np.round(x)) < 0.05, x + 0.1, x)
    return x


@pytest.mark.parity
@pytest.mark.parametrize("name", ["lgamma", "digamma", "polygamma 1", "polygamma 2",
                                  "polygamma 5"])
def test_values_match_pytorch_to_float64s_rounding(name):
    torch = pytest.importorskip("torch")
    ours, theirs = {
        "lgamma": (tl.lgamma, torch.lgamma),
        "digamma": (tl.digamma, torch.digamma),
        "polygamma 1": (lambda t: tl.polygamma(1, t), lambda t: torch.polygamma(1, t)),
        "polygamma 2": (lambda t: tl.polygamma(2, t), lambda t: torch.polygamma(2, t)),
        "polygamma 5": (lambda t: tl.polygamma(5, t), lambda t: torch.polygamma(5, t)),
    }[name]
    mine = ours(tl.tensor(POINTS)).numpy()
    reference = theirs(torch.tensor(POINTS)).numpy()
    # PyTorch's trigamma (polygamma 1) is a shorter series, good to ~5e-10; ours to rounding
    rtol = 1e-9 if name == "polygamma 1" else 1e-12
    np.testing.assert_allclose(mine, reference, rtol=rtol, atol=1e-15)


def test_lgamma_and_digamma_match_their_definitions():
    points = POINTS[np.abs(POINTS) < 170]
    expected = [math.log(abs(math.gamma(v))) for v in points]
    # math.gamma is good to a few ulps, but lgamma's relative error is large near its zeros
    np.testing.assert_allclose(tl.lgamma(tl.tensor(points)).numpy(), expected, atol=1e-14,
                               rtol=1e-13)
    # lgamma(1 + z) = -gamma z + O(z^2): all digits kept where math.lgamma's cancel
    z = 1e-8
    assert abs(tl.lgamma(tl.tensor(np.array([1 + z]))).item() / z + 0.5772156649015329) < 1e-7
    x = tl.tensor(points)
    np.testing.assert_allclose((tl.digamma(x + 1) - tl.digamma(x)).numpy(), 1 / points,
                               rtol=1e-12, atol=1e-12)
    ones = tl.tensor(np.array([1.0, 0.5]))
    np.testing.assert_allclose(tl.digamma(ones).numpy(),
                               [-0.5772156649015329, -0.5772156649015329 - 2 * math.log(2)],
                               rtol=1e-15)
    np.testing.assert_allclose(tl.polygamma(1, ones[:1]).item(), math.pi**2 / 6, rtol=1e-15)
    np.testing.assert_allclose(tl.polygamma(3, ones[:1]).item(), math.pi**4 / 15, rtol=1e-14)


@pytest.mark.parity
def test_poles_and_infinities_match_pytorch():
    torch = pytest.importorskip("torch")
    edge = np.array([0.0, -0.0, -1.0, -2.0, 1.0, np.inf, np.nan, 1e-300, -1e-300, 1e308, 171.7,
                     -170.5])
    pairs = [(tl.lgamma, torch.lgamma), (tl.digamma, torch.digamma),
             (tl.special.gammaln, torch.special.gammaln), (tl.special.psi, torch.special.psi)]
    for ours, theirs in pairs:
        np.testing.assert_allclose(ours(tl.tensor(edge)).numpy(),
                                   theirs(torch.tensor(edge)).numpy(), rtol=1e-12)
    finite = edge[[0, 1, 3, 4, 6, 7, 8, 9, 10, 11]]  # PyTorch's trigamma at -1 is 6.6e32, not inf
    np.testing.assert_allclose(tl.polygamma(2, tl.tensor(finite)).numpy(),
                               torch.polygamma(2, torch.tensor(finite)).numpy(), rtol=1e-12)


def _run(lib, fn, array, dtype):
    x = lib.tensor(array, dtype=dtype, requires_grad=True)
    out = fn(lib, x)
    weights = np.random.default_rng(1).standard_normal(tuple(out.shape))
    (out * lib.tensor(weights, dtype=dtype)).sum().backward()
    return out.detach().numpy(), x.grad.numpy()


# (name, function of (library, x), input array)
CASES = [
    ("lgamma", lambda lib, x: lib.lgamma(x), _uniform((3, 4), 0)),
    ("lgamma method 3-d", lambda lib, x: x.lgamma(), _uniform((2, 3, 2), 1)),
    ("gammaln", lambda lib, x: lib.special.gammaln(x), _uniform((5,), 2, 0.01, 40.0)),
    ("digamma", lambda lib, x: lib.digamma(x), _uniform((3, 4), 3)),
    ("digamma method", lambda lib, x: x.digamma(), _uniform((2, 5), 4, 0.5, 25.0, False)),
    ("psi", lambda lib, x: lib.special.psi(x), _uniform((4,), 5)),
    ("special.digamma", lambda lib, x: lib.special.digamma(x), _uniform((4,), 6)),
    ("polygamma 1", lambda lib, x: lib.polygamma(1, x), _uniform((3, 3), 7)),
    ("polygamma 2 method", lambda lib, x: x.polygamma(2), _uniform((3, 3), 8)),
    ("special.polygamma 3", lambda lib, x: lib.special.polygamma(3, x), _uniform((6,), 9)),
    ("logcumsumexp", lambda lib, x: lib.logcumsumexp(x, 1), _uniform((3, 5), 10) * 5),
    ("logcumsumexp dim 0 3-d", lambda lib, x: lib.logcumsumexp(x, 0), _uniform((4, 2, 3), 11)),
    ("logcumsumexp method -1", lambda lib, x: x.logcumsumexp(-1), _uniform((2, 3, 4), 12)),
    ("logcumsumexp 0-d", lambda lib, x: lib.logcumsumexp(x, 0), np.array(1.5)),
    ("logcumsumexp wide range", lambda lib, x: lib.logcumsumexp(x * 300, 0),
     _uniform((6,), 13)),
    ("mode values", lambda lib, x: lib.mode(x.round(), 1).values * x.sum(1),
     _uniform((4, 9), 14, 0.0, 3.0, False)),
    ("mode keepdim dim 0", lambda lib, x: lib.mode((x * 2).round(), 0, keepdim=True).values,
     _uniform((7, 3), 15, 0.0, 2.0, False)),
    ("mode method", lambda lib, x: x.floor().mode().values, _uniform((2, 3, 8), 16, 0.0, 3.0)),
    ("msort", lambda lib, x: lib.msort(x), _uniform((5, 3), 17)),
    ("msort method 1-d", lambda lib, x: x.msort(), _uniform((6,), 18)),
]
IDS = [c[0] for c in CASES]


@pytest.mark.parity
@pytest.mark.parametrize("name, fn, array", CASES, ids=IDS)
def test_values_and_gradients_match_pytorch_float64(name, fn, array):
    torch = pytest.importorskip("torch")
    (ours, our_grad), (theirs, their_grad) = (
        _run(lib, fn, array, lib.float64) for lib in (tl, torch)
    )
    assert ours.shape == theirs.shape and ours.dtype == theirs.dtype
    # PyTorch's trigamma (polygamma 1, digamma's gradient) is good to ~5e-10, ours to rounding
    rtol = 1e-9 if "polygamma 1" in name else 1e-12
    np.testing.assert_allclose(ours, theirs, rtol=rtol, atol=1e-13)
    np.testing.assert_allclose(our_grad, their_grad, rtol=2e-9, atol=1e-12)


@pytest.mark.parity
@pytest.mark.parametrize("name, fn, array", CASES[::2], ids=IDS[::2])
def test_values_and_gradients_match_pytorch_float32(name, fn, array):
    torch = pytest.importorskip("torch")
    (ours, our_grad), (theirs, their_grad) = (
        _run(lib, fn, array, lib.float32) for lib in (tl, torch)
    )
    assert ours.dtype == theirs.dtype == np.float32 and our_grad.dtype == np.float32
    np.testing.assert_allclose(ours, theirs, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(our_grad, their_grad, rtol=1e-4, atol=1e-4)


GRADCHECKS = [c for c in CASES if not c[0].startswith("mode")]


@pytest.mark.parametrize("name, fn, array", GRADCHECKS, ids=[c[0] for c in GRADCHECKS])
def test_gradcheck_float64(name, fn, array):
    x = tl.tensor(array, requires_grad=True)
    assert tl.autograd.gradcheck(lambda t: fn(tl, t), (x,))


def test_mode_gradcheck_with_the_rounding_outside():
    counts = tl.tensor(np.array([[1.0, 2.0, 2.0, 3.0], [4.0, 4.0, 1.0, 1.0]]))
    x = tl.tensor(np.random.default_rng(0).normal(size=(2, 4)) * 0.01, requires_grad=True)
    assert tl.autograd.gradcheck(lambda t: tl.mode(counts + t * 0, 1).values * t.sum(), (x,))
    assert tl.autograd.gradcheck(lambda t: (counts + t).gather(
        1, tl.mode(counts, 1).indices[:, None]), (x,))


@pytest.mark.parity
def test_mode_indices_match_pytorch_on_many_draws():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(3)
    for _ in range(100):
        shape = tuple(rng.integers(1, 7, size=rng.integers(1, 4)))
        dim = int(rng.integers(-len(shape), len(shape)))
        keepdim = bool(rng.integers(0, 2))
        a = rng.integers(0, 3, size=shape).astype(float)  # no NaN: PyTorch's choice varies
        ours = tl.mode(tl.tensor(a), dim, keepdim)
        theirs = torch.mode(torch.tensor(a), dim, keepdim)
        np.testing.assert_array_equal(ours.values.numpy(), theirs.values.numpy())
        np.testing.assert_array_equal(ours.indices.numpy(), theirs.indices.numpy())
    for x in ([True, False, True], [[1, 2], [1, 3]], 3.0):
        ours, theirs = tl.mode(tl.tensor(x), 0), torch.mode(torch.tensor(x), 0)
        assert ours.values.tolist() == theirs.values.tolist()
        assert ours.indices.tolist() == theirs.indices.tolist()


def test_mode_is_the_smallest_most_frequent_value_at_its_last_place():
    rows = np.random.default_rng(4).integers(-2, 3, size=(40, 11))
    picked = tl.mode(tl.tensor(rows), 1)
    for row, value, index in zip(rows, picked.values.tolist(), picked.indices.tolist(),
                                 strict=True):
        counts = Counter(row.tolist())
        top = max(counts.values())
        assert value == min(v for v in counts if counts[v] == top)
        assert index == max(i for i, v in enumerate(row) if v == value)
    assert tl.mode(tl.zeros(2, 0), 0).values.shape == (0,)


def test_logcumsumexp_is_stable_and_matches_its_definition():
    a = np.random.default_rng(5).normal(size=(3, 6))
    np.testing.assert_allclose(tl.logcumsumexp(tl.tensor(a), 1).numpy(),
                               np.log(np.cumsum(np.exp(a), axis=1)), rtol=1e-14)
    big = tl.logcumsumexp(tl.tensor(np.array([1000.0, 1000.0, -1000.0])), 0).numpy()
    np.testing.assert_allclose(big, [1000.0, 1000.0 + math.log(2), 1000.0 + math.log(2)])
    x = tl.tensor(np.array([-1000.0, 0.0, 2.0]), requires_grad=True)
    tl.logcumsumexp(x, 0).backward(tl.tensor(np.array([1.0, -2.0, 0.5])))
    assert np.isfinite(x.grad.numpy()).all() and abs(x.grad[0].item() - 1.0) < 1e-15


@pytest.mark.parametrize("call, error, message", [
    (lambda: tl.polygamma(-1, tl.ones(2)), RuntimeError, "does not support negative n"),
    (lambda: tl.polygamma(1.5, tl.ones(2)), TypeError, "argument 'n'.*must be int, not float"),
    (lambda: tl.lgamma([1.0, 2.0]), TypeError, "lgamma: expected a Tensor, got list"),
    (lambda: tl.special.digamma(3.0), TypeError, "digamma: expected a Tensor, got float"),
    (lambda: tl.logcumsumexp(tl.tensor([1, 2, 3]), 0), NotImplementedError,
     "not implemented for 'int64'"),
    (lambda: tl.logcumsumexp(tl.ones(2, 3), 2), IndexError, "out of range"),
    (lambda: tl.mode(tl.zeros(0)), IndexError, "Expected reduction dim 0 to have non-zero size"),
    (lambda: tl.mode(tl.ones(2, 3), 2), IndexError, "out of range"),
    (lambda: tl.msort([3.0, 1.0]), TypeError, "msort.*must be Tensor, not list"),
])
def test_errors_name_what_came(call, error, message):
    with pytest.raises(error, match=message):
        call()


def test_integer_inputs_compute_in_the_default_dtype():
    assert tl.lgamma(tl.tensor([1, 2, 3])).dtype == tl.float32
    assert tl.digamma(tl.tensor([True])).dtype == tl.float32
    np.testing.assert_allclose(tl.lgamma(tl.tensor([1, 2, 5])).numpy(), [0.0, 0.0, math.log(24)],
                               atol=1e-6)
