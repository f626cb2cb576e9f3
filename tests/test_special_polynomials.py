"""Chapter 2, section 16.1 (*Orthogonal polynomials*): ``special.chebyshev_polynomial_t``/``u``/
``v``/``w``, their shifted forms, ``hermite_polynomial_h``/``he``, ``laguerre_polynomial_l`` and
``legendre_polynomial_p``: values against PyTorch 2.13 over a grid of points and degrees that
covers its rules (negative, fractional, NaN and infinite degrees; x = +-1 and 0; the switch to
the trigonometric form; Hermite's degree limits), float32, numbers for either argument, no
gradient; and the polynomials against numpy's and their orthogonality."""

from __future__ import annotations

import math

import numpy as np
import pytest

import tensorlib as tl

CHEBYSHEV = [f"{shift}chebyshev_polynomial_{kind}" for shift in ("", "shifted_")
             for kind in "tuvw"]
OTHERS = ["hermite_polynomial_h", "hermite_polynomial_he", "laguerre_polynomial_l",
          "legendre_polynomial_p"]
NAMES = CHEBYSHEV + OTHERS


def _grid():
    rng = np.random.default_rng(0)
    points = np.concatenate([
        [-1.0, -0.5, 0.0, -0.0, 0.3, 0.5, 1.0, 1.5, -2.0, 0.999, 10.0, -30.0, math.inf, -math.inf,
         1 - 2**-53, -1 + 2**-53, 2**-60],
        rng.uniform(-1.2, 1.2, 30), rng.uniform(-4, 4, 10)])
    degrees = np.array([-3, -1, -0.5, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 2.5, 30, 100, 128, 129,
                        512, 513, 1000, math.nan, math.inf, -math.inf])
    x, n = np.meshgrid(points, degrees)
    return x.ravel(), n.ravel()


@pytest.mark.parity
@pytest.mark.parametrize("name", NAMES)
def test_values_match_pytorch(name):
    torch = pytest.importorskip("torch")
    x, n = _grid()
    ours = getattr(tl.special, name)(tl.tensor(x), tl.tensor(n)).numpy()
    theirs = getattr(torch.special, name)(torch.tensor(x), torch.tensor(n)).numpy()
    assert ours.dtype == np.float64
    np.testing.assert_array_equal(np.isnan(ours), np.isnan(theirs))
    np.testing.assert_array_equal(np.isinf(ours), np.isinf(theirs))
    finite = np.isfinite(theirs)
    # the same steps in the same order; PyTorch's compiler may fuse a multiply-add, which moves
    # the last bits near a zero of a high-degree polynomial: measure against the values' scale
    scale = np.maximum(np.abs(theirs), 1.0)
    with np.errstate(invalid="ignore"):
        error = np.abs(ours - theirs)[finite] / scale[finite]
    assert error.max() < 1e-11, error.max()
    exact = finite & (np.abs(n) <= 10)
    np.testing.assert_allclose(ours[exact], theirs[exact], rtol=1e-13, atol=1e-13)


@pytest.mark.parity
@pytest.mark.parametrize("name", NAMES)
def test_nan_point_gives_nan(name):
    torch = pytest.importorskip("torch")
    ours = getattr(tl.special, name)(tl.tensor([math.nan] * 3), tl.tensor([0.0, 1.0, 2.0]))
    theirs = getattr(torch.special, name)(torch.tensor([math.nan] * 3),
                                          torch.tensor([0.0, 1.0, 2.0])).numpy()
    # degree 0 is 1 in both, degree 1 NaN; from degree 2 PyTorch's U, W, Laguerre and Legendre
    # return a value their loop never set (inf here), tensorlib NaN
    assert ours.numpy()[0] == theirs[0] == 1.0
    assert np.isnan(ours.numpy()[1:]).all() and np.isnan(theirs[1])


@pytest.mark.parity
@pytest.mark.parametrize("name", NAMES)
def test_float32_numbers_and_integers_as_pytorch(name):
    torch = pytest.importorskip("torch")
    x = np.linspace(-1.1, 1.1, 45).astype(np.float32)
    ours = getattr(tl.special, name)(tl.tensor(x), 5)
    theirs = getattr(torch.special, name)(torch.tensor(x), 5).numpy()
    assert ours.dtype == tl.float32
    np.testing.assert_allclose(ours.numpy(), theirs, rtol=1e-5, atol=1e-5)
    by_number = getattr(tl.special, name)(0.25, tl.tensor([1.0, 2.0, 3.0]))
    np.testing.assert_allclose(
        by_number.numpy(),
        getattr(torch.special, name)(0.25, torch.tensor([1.0, 2.0, 3.0])).numpy(), rtol=1e-6)
    integers = getattr(tl.special, name)(tl.tensor([1, 2]), tl.tensor([2, 3]))
    assert integers.dtype == tl.float32
    assert getattr(torch.special, name)(torch.tensor([1, 2]), torch.tensor([2, 3])).dtype == (
        torch.float32)
    with pytest.raises(TypeError, match=name):
        getattr(tl.special, name)(0.5, 2)


@pytest.mark.parity
def test_hermite_degree_limits():
    torch = pytest.importorskip("torch")
    # NaN above degree 128 in float32 and 512 in float64; below, the values overflow float32
    # long before (PyTorch, computing in float32, then gets inf - inf = NaN, tensorlib +-inf)
    for dtype, degrees in ((np.float32, [129.0, 200.0]), (np.float64, [513.0, 600.0])):
        for name in ("hermite_polynomial_h", "hermite_polynomial_he"):
            x = np.full(2, 0.1, dtype=dtype)
            ours = getattr(tl.special, name)(tl.tensor(x), tl.tensor(np.array(degrees, dtype)))
            theirs = getattr(torch.special, name)(torch.tensor(x),
                                                  torch.tensor(np.array(degrees, dtype)))
            assert np.isnan(ours.numpy()).all() and np.isnan(theirs.numpy()).all()
    x = np.array([0.1, 2.5])
    np.testing.assert_allclose(
        tl.special.hermite_polynomial_he(tl.tensor(x), 100).numpy(),
        torch.special.hermite_polynomial_he(torch.tensor(x), 100).numpy(), rtol=1e-12)


@pytest.mark.parametrize("name", NAMES)
def test_no_gradient(name):
    y = getattr(tl.special, name)(tl.tensor([0.3], requires_grad=True), 3)
    assert not y.requires_grad and y.grad_fn is None
    assert getattr(tl.special, name).__doc__ and name in tl.special.__all__


def test_against_numpy_and_orthogonality():
    x = np.linspace(-0.95, 0.95, 21)
    coefficients = np.eye(12)
    for degree in range(12):  # both sides of the switch to cos(n acos x)
        np.testing.assert_allclose(
            tl.special.chebyshev_polynomial_t(tl.tensor(x), degree).numpy(),
            np.polynomial.chebyshev.chebval(x, coefficients[degree]), rtol=1e-12, atol=1e-13)
        np.testing.assert_allclose(
            tl.special.legendre_polynomial_p(tl.tensor(x), degree).numpy(),
            np.polynomial.legendre.legval(x, coefficients[degree]), rtol=1e-12, atol=1e-13)
        np.testing.assert_allclose(
            tl.special.hermite_polynomial_he(tl.tensor(x * 3), degree).numpy(),
            np.polynomial.hermite_e.hermeval(x * 3, coefficients[degree]), rtol=1e-12,
            atol=1e-11)
    nodes, weights = np.polynomial.laguerre.laggauss(30)
    degrees = np.arange(8)[:, None] * 1.0
    values = tl.special.laguerre_polynomial_l(tl.tensor(np.broadcast_to(nodes, (8, 30)).copy()),
                                              tl.tensor(degrees)).numpy()
    np.testing.assert_allclose((values * weights) @ values.T, np.eye(8), atol=1e-11)
    shifted = tl.special.shifted_chebyshev_polynomial_w(tl.tensor((x + 1) / 2), 7).numpy()
    np.testing.assert_allclose(shifted, tl.special.chebyshev_polynomial_w(tl.tensor(x), 7).numpy(),
                               rtol=1e-12, atol=1e-12)
