"""Chapter 2, section 16.1 (*Bessel functions of both kinds and the Airy function*):
``special.bessel_j0``/``j1``/``y0``/``y1``, ``modified_bessel_i0``/``i1``/``k0``/``k1``,
``scaled_modified_bessel_k0``/``k1``, ``spherical_bessel_j0`` and ``airy_ai``: values against
SciPy to about 1e-14 (relative to the function's size), against PyTorch 2.13 (whose J, Y and Ai
are up to ~1e-6 off in places: checked loosely there, exactly at the edges), float32, and no
gradient, as PyTorch's."""

from __future__ import annotations

import math

import numpy as np
import pytest

import tensorlib as tl

NAMES = ["bessel_j0", "bessel_j1", "bessel_y0", "bessel_y1", "modified_bessel_i0",
         "modified_bessel_i1", "modified_bessel_k0", "modified_bessel_k1",
         "scaled_modified_bessel_k0", "scaled_modified_bessel_k1", "spherical_bessel_j0",
         "airy_ai"]
# the branches and their borders (2, 25, 0.1, +-1, zeta = 20), tiny and large values
POINTS = np.concatenate([
    np.linspace(-60, 60, 12001), np.geomspace(1e-300, 1e4, 1500), -np.geomspace(1e-300, 1e4, 1500),
    [0.0, -0.0, 2.0, 25.0, 0.1, np.nextafter(2.0, 0), np.nextafter(25.0, 0), 1.0, -1.0,
     -(30.0 ** (2 / 3)), 700.0, 713.0],
])
EDGES = np.array([0.0, -0.0, -1.0, 1e-300, 1e-5, 1.0, -5.0, 30.0, 100.0, 700.0, 800.0, 1e5,
                  math.inf, -math.inf, math.nan])


def _scipy(name):
    special = pytest.importorskip("scipy.special")
    return {
        "bessel_j0": special.j0, "bessel_j1": special.j1, "bessel_y0": special.y0,
        "bessel_y1": special.y1, "modified_bessel_i0": special.i0,
        "modified_bessel_i1": special.i1, "modified_bessel_k0": special.k0,
        "modified_bessel_k1": special.k1, "scaled_modified_bessel_k0": special.k0e,
        "scaled_modified_bessel_k1": special.k1e,
        "spherical_bessel_j0": lambda x: special.spherical_jn(0, x),
        "airy_ai": lambda x: special.airy(x)[0],
    }[name]


def _size(name, x, reference):
    """What an error is measured against: the value, or for the oscillating functions the
    envelope of their oscillation (near a zero only absolute accuracy is possible)."""
    with np.errstate(divide="ignore", over="ignore"):
        if name.startswith("bessel_"):
            return np.maximum(np.abs(reference), np.minimum(1, np.sqrt(2 / (np.pi * np.abs(x)))))
        if name == "spherical_bessel_j0":
            return np.maximum(np.abs(reference), np.minimum(1, 1 / np.abs(x)))
        if name == "airy_ai":
            return np.maximum(np.abs(reference), np.where(x < 0, np.minimum(
                1, np.abs(x) ** -0.25 / math.sqrt(math.pi)), 0))
    return np.abs(reference)


@pytest.mark.parametrize("name", NAMES)
def test_values_match_scipy(name):
    with np.errstate(all="ignore"):
        theirs = _scipy(name)(POINTS)
    ours = getattr(tl.special, name)(tl.tensor(POINTS)).numpy()
    # beyond |x| = 1e3 both lose the digits of the phase that rounding x - pi/4 drops; I0 and I1
    # overflow from 713.98 here, from 709.8 in SciPy
    check = np.isfinite(theirs) & (np.abs(theirs) > 1e-300) & (np.abs(POINTS) < 1e3)
    with np.errstate(invalid="ignore"):
        error = np.abs(ours - theirs)[check] / _size(name, POINTS, theirs)[check]
    bound = np.full(error.shape, 1e-14)
    if name == "airy_ai":  # its phase 2/3 |x|^(3/2) carries that number's rounding
        bound = 1e-14 * np.maximum(1.0, 2 / 3 * np.abs(POINTS[check]) ** 1.5)
    if name in ("modified_bessel_i0", "modified_bessel_i1"):  # e^|x| carries |x|'s rounding
        bound = 4e-15 * np.maximum(1.0, np.abs(POINTS[check]))
    assert (error < bound).all(), (name, error.max())


@pytest.mark.parity
@pytest.mark.parametrize("name", NAMES)
def test_edges_match_pytorch(name):
    torch = pytest.importorskip("torch")
    ours = getattr(tl.special, name)(tl.tensor(EDGES)).numpy()
    theirs = getattr(torch.special, name)(torch.tensor(EDGES)).numpy()
    np.testing.assert_array_equal(np.isnan(ours), np.isnan(theirs))
    np.testing.assert_array_equal(np.isposinf(ours), np.isposinf(theirs))
    np.testing.assert_array_equal(np.isneginf(ours), np.isneginf(theirs))
    np.testing.assert_array_equal(ours == 0, theirs == 0)
    np.testing.assert_array_equal(np.signbit(ours[ours == 0]), np.signbit(theirs[theirs == 0]))
    finite = np.isfinite(theirs) & (np.abs(EDGES) < 1e4)
    np.testing.assert_allclose(ours[finite], theirs[finite], rtol=1e-5, atol=1e-6)


@pytest.mark.parity
@pytest.mark.parametrize("name", NAMES)
def test_values_match_pytorch(name):
    torch = pytest.importorskip("torch")
    x = np.linspace(-60, 60, 6001)
    ours = getattr(tl.special, name)(tl.tensor(x)).numpy()
    theirs = getattr(torch.special, name)(torch.tensor(x)).numpy()
    np.testing.assert_array_equal(np.isnan(ours), np.isnan(theirs))
    finite = np.isfinite(theirs) & np.isfinite(ours) & (theirs != 0)
    with np.errstate(invalid="ignore"):
        error = np.abs(ours - theirs)[finite] / _size(name, x, theirs)[finite]
    # PyTorch 2.13's J, Y are up to 9e-7 off near x = 5, its Ai 3e-6 near x = -2.1
    loose = name.startswith("bessel_") or name == "airy_ai"
    assert error.max() < (1e-5 if loose else 1e-14), error.max()
    assert np.median(error) < 5e-15


@pytest.mark.parity
@pytest.mark.parametrize("name", NAMES)
def test_float32_and_integers_as_pytorch(name):
    torch = pytest.importorskip("torch")
    x = np.linspace(-40, 40, 801).astype(np.float32)
    ours = getattr(tl.special, name)(tl.tensor(x))
    theirs = getattr(torch.special, name)(torch.tensor(x)).numpy()
    assert ours.dtype == tl.float32
    finite = np.isfinite(theirs)
    np.testing.assert_array_equal(np.isfinite(ours.numpy()), finite)
    finite &= theirs != 0  # i1(0), and Ai where float32 underflows (in both)
    with np.errstate(invalid="ignore"):
        error = np.abs(ours.numpy() - theirs)[finite] / _size(name, x, theirs)[finite]
    assert error.max() < (3e-5 if name == "airy_ai" else 1e-5)  # PyTorch's Ai: see above
    integers = getattr(tl.special, name)(tl.tensor([1, 2, 3]))
    assert integers.dtype == tl.float32
    assert getattr(torch.special, name)(torch.tensor([1, 2, 3])).dtype == torch.float32


@pytest.mark.parametrize("name", NAMES)
def test_no_gradient_as_pytorch(name):
    x = tl.tensor(np.array([0.5, 1.5]), requires_grad=True)
    y = getattr(tl.special, name)(x)
    assert not y.requires_grad and y.grad_fn is None
    assert getattr(tl.special, name).__doc__ and name in tl.special.__all__


def test_identities():
    x = np.array([0.05, 0.3, 1.9, 2.1, 7.5, 24.0, 26.0, 40.0, 300.0])
    t = tl.tensor(x)
    j0, j1 = tl.special.bessel_j0(t).numpy(), tl.special.bessel_j1(t).numpy()
    y0, y1 = tl.special.bessel_y0(t).numpy(), tl.special.bessel_y1(t).numpy()
    np.testing.assert_allclose(j1 * y0 - j0 * y1, 2 / (np.pi * x), rtol=1e-13)
    i0, i1 = tl.special.modified_bessel_i0(t).numpy(), tl.special.modified_bessel_i1(t).numpy()
    k0, k1 = tl.special.modified_bessel_k0(t).numpy(), tl.special.modified_bessel_k1(t).numpy()
    np.testing.assert_allclose(i0 * k1 + i1 * k0, 1 / x, rtol=1e-13)
    np.testing.assert_allclose(i0, tl.special.i0(t).numpy(), rtol=0)
    scaled = tl.special.scaled_modified_bessel_k1(t).numpy()
    np.testing.assert_allclose(scaled * np.exp(-x), k1, rtol=1e-14)
    # Ai(x) = (1/pi) sqrt(x/3) K_{1/3}(2/3 x^{3/2}), and Ai's first zero
    zero = tl.special.airy_ai(tl.tensor(np.array([-2.338107410459767]))).item()
    assert abs(zero) < 1e-15
