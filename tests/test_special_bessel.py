"""Chapter 2, section 16.1 (*Bessel functions, erfcx and log Phi*): ``special.i0``, ``i0e``, ``i1``,
``i1e``, ``erfcx``, ``log_ndtr`` and ``multigammaln`` (``mvlgamma``, ``torch.i0``,
``Tensor.i0``/``mvlgamma``): values against PyTorch across their ranges (large arguments, the
tails, infinities, float32), first derivatives (float64 gradchecks and PyTorch's), and second
derivatives (the recorded backward)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from _gradgrad import check_gradgrad

import tensorlib as tl

SCALED_OR_NOT = ["i0", "i0e", "i1", "i1e"]
# name -> the points that exercise it: the series, the asymptotic branches, the tails
POINTS = {
    "i0": np.concatenate([np.linspace(-40, 40, 801), np.geomspace(1e-9, 713, 400),
                          -np.geomspace(1e-9, 713, 400), [0.0]]),
    "erfcx": np.concatenate([np.linspace(-26, 40, 1321), np.geomspace(1e-9, 1e300, 600),
                             -np.geomspace(1e-9, 26, 300), [0.0]]),
    "log_ndtr": np.concatenate([np.linspace(-45, 45, 1801), -np.geomspace(1e-9, 1e150, 600),
                                np.geomspace(1e-9, 37, 300), [0.0]]),
}
for _name in ("i0e", "i1", "i1e"):
    POINTS[_name] = POINTS["i0"]


def _ours_and_torch(name, values, dtype="float64"):
    torch = pytest.importorskip("torch")
    with np.errstate(over="ignore"):  # float32 points: the largest become inf
        values = values.astype(dtype)
    ours = getattr(tl.special, name)(tl.tensor(values)).numpy()
    theirs = getattr(torch.special, name)(torch.tensor(values)).numpy()
    return ours, theirs


@pytest.mark.parity
@pytest.mark.parametrize("name", [*SCALED_OR_NOT, "erfcx", "log_ndtr"])
def test_values_match_pytorch_in_float64(name):
    ours, theirs = _ours_and_torch(name, POINTS[name])
    assert ours.dtype == np.float64
    # subnormal results carry fewer digits in both; PyTorch's I_0 and I_1 overflow from
    # |x| = 709.8 (it computes e^|x| first), tensorlib's from 713.98, where the value does
    # and e^|x| carries the rounding of |x| times |x|: the unscaled ones agree to 4e-15 |x|
    normal = np.isfinite(theirs) & (np.abs(theirs) > 1e-300)
    grows = np.abs(POINTS[name]) if name in ("i0", "i1") else 1.0
    error = np.abs(ours[normal] - theirs[normal]) / np.abs(theirs[normal])
    bound = (1e-14 if name == "log_ndtr" else 4e-15) * np.maximum(1.0, grows)
    assert (error <= (bound[normal] if name in ("i0", "i1") else bound)).all()
    beyond = np.abs(POINTS[name]) > 713.98 if name in ("i0", "i1") else np.isinf(theirs)
    np.testing.assert_array_equal(np.isfinite(ours), ~beyond)


@pytest.mark.parity
@pytest.mark.parametrize("name", [*SCALED_OR_NOT, "erfcx", "log_ndtr"])
def test_values_match_pytorch_in_float32(name):
    # PyTorch evaluates in float32, tensorlib in float64 rounded once: they differ by PyTorch's
    # rounding, amplified by the condition number (|x| for e^|x|, x^2 for erfc(x / sqrt 2))
    ours, theirs = _ours_and_torch(name, POINTS[name], "float32")
    assert ours.dtype == np.float32
    with np.errstate(over="ignore"):
        x = POINTS[name].astype(np.float32).astype(np.float64)
    both = np.isfinite(theirs) & (np.abs(theirs) > 1e-37)
    condition = np.maximum(1.0, np.abs(x) if name in SCALED_OR_NOT else x * x)[both]
    error = np.abs(ours[both].astype(np.float64) - theirs[both]) / np.abs(theirs[both])
    assert (error <= 5e-7 * condition).all(), float((error / condition).max())  # 4 ulps


@pytest.mark.parity
@pytest.mark.parametrize("name", [*SCALED_OR_NOT, "erfcx", "log_ndtr"])
def test_infinities_nan_and_integers_as_pytorch(name):
    torch = pytest.importorskip("torch")
    special = np.array([np.inf, -np.inf, np.nan, 0.0, -0.0])
    ours, theirs = _ours_and_torch(name, special)
    np.testing.assert_array_equal(ours, theirs)
    number = ~np.isnan(theirs)
    np.testing.assert_array_equal(np.signbit(ours[number]), np.signbit(theirs[number]))
    got = getattr(tl.special, name)(tl.tensor([1, 2]))
    assert got.dtype == tl.float32  # integers in the default dtype, as PyTorch
    np.testing.assert_allclose(got.numpy(), getattr(torch.special, name)(
        torch.tensor([1, 2])).numpy(), rtol=1e-6)


def _grads(lib, name, values):
    x = lib.tensor(values, requires_grad=True)
    (g,) = lib.autograd.grad(getattr(lib.special, name)(x).sum(), x)
    return g.numpy()


@pytest.mark.parity
@pytest.mark.parametrize("name", [*SCALED_OR_NOT, "erfcx", "log_ndtr"])
def test_first_derivatives_match_pytorch(name):
    torch = pytest.importorskip("torch")
    values = np.concatenate([np.linspace(-25, 25, 101), [0.0, 1e-20, -1e-20, 30.5, -42.0]])
    if name == "log_ndtr":  # PyTorch's exp(-(log Phi + x^2 / 2)) loses digits as x^2 grows
        values = values / 3
    np.testing.assert_allclose(_grads(tl, name, values), _grads(torch, name, values),
                               rtol=1e-12, atol=1e-300)


def test_derivative_of_log_ndtr_in_the_far_left_tail():
    # phi(x) / Phi(x) = -x - 1/x + 2/x^3 - 10/x^5 + ... as x -> -inf: finite where both underflow
    x = np.array([-50.0, -1e3, -1e6])
    np.testing.assert_allclose(_grads(tl, "log_ndtr", x), -x - 1 / x + 2 / x ** 3 - 10 / x ** 5,
                               rtol=1e-10)


@pytest.mark.parametrize("name", [*SCALED_OR_NOT, "erfcx", "log_ndtr"])
def test_gradcheck_and_gradgradcheck(name):
    far = [21.0, -24.0] if name in ("i0e", "i1e") else []  # the asymptotic branch, values ~ 0.1
    x = tl.tensor(np.array([-2.3, -0.4, 0.7, 1.9, 3.2, *far]), requires_grad=True)
    f = getattr(tl.special, name)
    assert tl.autograd.gradcheck(f, (x,))
    assert tl.autograd.gradgradcheck(f, (x,))
    check_gradgrad((lambda lib, t: getattr(lib.special, name)(t) * t, [x.detach().numpy()], (0,)),
                   first_rtol=1e-12, first_atol=1e-14)


@pytest.mark.parity
@pytest.mark.parametrize("name", [*SCALED_OR_NOT, "erfcx", "log_ndtr", "multigammaln"])
def test_second_derivatives_match_pytorch(name):
    torch = pytest.importorskip("torch")
    values = np.array([-2.3, -0.4, 0.0, 0.7, 1.9, 4.0 if name == "log_ndtr" else 24.0])
    if name == "multigammaln":
        values = np.array([1.7, 2.2, 3.9, 8.0])
    results = []
    for lib in (tl, torch):
        x = lib.tensor(values, requires_grad=True)
        out = (getattr(lib.special, name)(x, 3) if name == "multigammaln"
               else getattr(lib.special, name)(x))
        (g,) = lib.autograd.grad((out * x).sum(), x, create_graph=True)
        (h,) = lib.autograd.grad((g * g).sum(), x)
        results.append((g.detach().numpy(), h.numpy()))
    for ours, theirs in zip(*results, strict=True):
        np.testing.assert_allclose(ours, theirs, rtol=1e-9 if name == "multigammaln" else 1e-11)


@pytest.mark.parity
def test_multigammaln_and_mvlgamma_match_pytorch():
    torch = pytest.importorskip("torch")
    x = np.array([[1.6, 2.0, 3.3], [7.5, 40.0, 120.25]])
    for p in (1, 2, 3, 5):
        ours = tl.special.multigammaln(tl.tensor(x), p).numpy()
        np.testing.assert_allclose(ours, torch.special.multigammaln(torch.tensor(x), p).numpy(),
                                   rtol=1e-9)
        np.testing.assert_array_equal(tl.mvlgamma(tl.tensor(x), p).numpy(), ours)
        np.testing.assert_array_equal(tl.tensor(x).mvlgamma(p).numpy(), ours)
    one = tl.special.multigammaln(tl.tensor([3, 4]), 2)
    assert one.dtype == tl.float32
    np.testing.assert_allclose(one.numpy(), [0.5 * math.log(math.pi) + math.lgamma(v)
                                             + math.lgamma(v - 0.5) for v in (3, 4)], rtol=1e-6)


def test_multigammaln_errors_as_pytorch():
    x = tl.tensor([2.0])
    with pytest.raises(TypeError, match=r"special_multigammaln\(\): argument 'p' \(position 2\) "
                                        r"must be int, not float"):
        tl.special.multigammaln(x, 1.5)
    with pytest.raises(TypeError, match=r"mvlgamma\(\): argument 'p' \(position 2\)"):
        tl.mvlgamma(x, 1.5)
    with pytest.raises(TypeError, match=r"mvlgamma\(\): argument 'p' \(position 1\)"):
        x.mvlgamma(1.5)
    with pytest.raises(RuntimeError, match="p has to be greater than or equal to 1"):
        tl.special.multigammaln(x, 0)


@pytest.mark.parity
def test_top_level_names_and_methods():
    torch = pytest.importorskip("torch")
    x = np.array([-3.0, 0.5, 12.0])
    assert tl.i0 is tl.special.i0
    np.testing.assert_allclose(tl.tensor(x).i0().numpy(), torch.tensor(x).i0().numpy(),
                               rtol=1e-14)
    for name in ("i0", "i0e", "i1", "i1e", "erfcx", "log_ndtr", "multigammaln"):
        assert name in tl.special.__all__ and getattr(tl.special, name).__doc__
