"""Chapter 2, section 16.1 (*The incomplete gamma functions and the Hurwitz zeta function*):
``special.gammainc``/``gammaincc`` (``torch.igamma``/``igammac``, ``Tensor.igamma``/``igammac``
and their in-place forms) and ``special.zeta``: values against PyTorch at the edges and across
the ranges (float64 and float32), against SciPy where PyTorch is less exact (large ``a``), the
gradient in ``x`` (float64 gradchecks, PyTorch's values), and PyTorch's errors (no derivative in
``a`` nor of ``zeta``, tensors only, no integer dtypes)."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

import tensorlib as tl

INF, NAN = math.inf, math.nan
# both signs of 0, negatives, tiny, moderate and large values, the infinities and NaN
EDGES = [0.0, -0.0, -1.0, -0.5, 1e-3, 0.5, 1.0, 2.0, 10.0, 1e3, 1e5, INF, -INF, NAN]
ZETA_EDGES = [*EDGES, 1.5, -7.0, -7.5, 3.3, 1 + 1e-9, 20.0]


def _grid(values):
    pairs = list(itertools.product(values, values))
    return np.array([a for a, _ in pairs]), np.array([x for _, x in pairs])


def _same(ours, theirs, rtol):
    """Equal NaN positions, equal infinities, finite values within ``rtol``."""
    np.testing.assert_array_equal(np.isnan(ours), np.isnan(theirs))
    np.testing.assert_allclose(ours, theirs, rtol=rtol, atol=0, equal_nan=True)


def _random_pairs(seed, low, high, size=4000):
    """``a`` log-uniform in [10^low, 10^high], ``x`` around it (both sides of x = a + 1)."""
    rng = np.random.default_rng(seed)
    a = 10 ** rng.uniform(low, high, size)
    spread = rng.choice([0.001, 0.01, 0.1, 1.0, 3.0], size)
    return a, a * np.exp(rng.normal(size=size) * spread)


@pytest.mark.parity
@pytest.mark.parametrize("name", ["gammainc", "gammaincc"])
def test_edges_match_pytorch(name):
    torch = pytest.importorskip("torch")
    a, x = _grid(EDGES)
    ours = getattr(tl.special, name)(tl.tensor(a), tl.tensor(x)).numpy()
    theirs = getattr(torch.special, name)(torch.tensor(a), torch.tensor(x)).numpy()
    # PyTorch's large-a expansion is good to about 1e-10 at a = x = 1000 (the sum to 1e-15)
    _same(ours, theirs, rtol=1e-9)
    small = np.abs(a) < 20
    _same(ours[small], theirs[small], rtol=1e-12)


@pytest.mark.parity
@pytest.mark.parametrize(("low", "high", "rtol"), [(-3, 1, 1e-12), (1, 4, 1e-8)])
def test_values_match_pytorch_in_float64(low, high, rtol):
    torch = pytest.importorskip("torch")
    a, x = _random_pairs(0, low, high)
    for name in ("gammainc", "gammaincc"):
        ours = getattr(tl.special, name)(tl.tensor(a), tl.tensor(x)).numpy()
        theirs = getattr(torch.special, name)(torch.tensor(a), torch.tensor(x)).numpy()
        normal = theirs > 1e-280  # subnormal results carry fewer digits in both
        np.testing.assert_allclose(ours[normal], theirs[normal], rtol=rtol, atol=0)
        assert (ours[~normal] < 1e-270).all()


def test_values_match_scipy_where_pytorch_is_less_exact():
    special = pytest.importorskip("scipy.special")
    a, x = _random_pairs(1, -3, 4)
    ours = tl.special.gammainc(tl.tensor(a), tl.tensor(x)).numpy()
    upper = tl.special.gammaincc(tl.tensor(a), tl.tensor(x)).numpy()
    for values, theirs in ((ours, special.gammainc(a, x)), (upper, special.gammaincc(a, x))):
        normal = theirs > 1e-280
        np.testing.assert_allclose(values[normal], theirs[normal], rtol=1e-10, atol=0)


def test_large_a_against_the_wilson_hilferty_limit():
    # P(a, x) -> Phi(3 sqrt(a) ((x/a)^(1/3) - 1 + 1/(9a))) with an error O(1/a): at a = 10^6 and
    # 10^8 the sum agrees to 1e-5 where PyTorch is off by 1e-5 and 0.36 (its values: 1.83466e-6
    # and 1.31094e-6 at the second pair)
    a = np.array([987064.5269579957, 92397302.35503462])
    x = np.array([982472.0917300233, 92353030.7071906])
    z = 3 * np.sqrt(a) * ((x / a) ** (1 / 3) - 1 + 1 / (9 * a))
    normal = np.array([0.5 * math.erfc(-v / math.sqrt(2)) for v in z])
    ours = tl.special.gammainc(tl.tensor(a), tl.tensor(x)).numpy()
    np.testing.assert_allclose(ours, normal, rtol=1e-5)


def test_identities():
    x = np.array([1e-3, 0.2, 1.0, 7.0, 30.0, 700.0])
    p = tl.special.gammainc(tl.tensor(np.ones_like(x)), tl.tensor(x)).numpy()
    np.testing.assert_allclose(p, -np.expm1(-x), rtol=1e-14)
    half = tl.special.gammainc(tl.tensor(np.full_like(x, 0.5)), tl.tensor(x)).numpy()
    np.testing.assert_allclose(half, [math.erf(math.sqrt(v)) for v in x], rtol=1e-14)
    # Q(n, x) = e^-x sum_{k<n} x^k / k!, far in the tail (x = 40, n = 5: 1e-11)
    q = tl.special.gammaincc(tl.tensor(np.array([5.0, 30.0])), tl.tensor(np.array([40.0, 40.0])))
    q = q.numpy()
    poisson = [math.exp(-40.0) * math.fsum(40.0**k / math.factorial(k) for k in range(n))
               for n in (5, 30)]
    np.testing.assert_allclose(q, poisson, rtol=1e-13)


@pytest.mark.parity
@pytest.mark.parametrize("name", ["gammainc", "gammaincc"])
def test_float32_matches_pytorch(name):
    torch = pytest.importorskip("torch")
    a, x = _random_pairs(2, -2, 3, size=2000)
    a, x = a.astype(np.float32), x.astype(np.float32)
    ours = getattr(tl.special, name)(tl.tensor(a), tl.tensor(x)).numpy()
    theirs = getattr(torch.special, name)(torch.tensor(a), torch.tensor(x)).numpy()
    assert ours.dtype == np.float32
    # PyTorch computes in float32, whose exponential loses relative digits in the far tails;
    # tensorlib computes in float64 and rounds once
    np.testing.assert_allclose(ours, theirs, rtol=2e-5, atol=1e-10)
    exact = getattr(tl.special, name)(tl.tensor(a.astype(np.float64)),
                                      tl.tensor(x.astype(np.float64))).numpy()
    np.testing.assert_array_equal(ours, exact.astype(np.float32))
    # a float32 tensor with a float64 0-d one stays float32, as PyTorch
    mixed = tl.special.gammainc(tl.tensor(a[:3]), tl.tensor(2.0, dtype=tl.float64))
    assert mixed.dtype == tl.float32


@pytest.mark.parity
@pytest.mark.parametrize("name", ["gammainc", "gammaincc"])
def test_gradient_in_x_matches_pytorch_at_the_edges(name):
    torch = pytest.importorskip("torch")
    a, x = _grid(EDGES)
    ours_x = tl.tensor(x, requires_grad=True)
    getattr(tl.special, name)(tl.tensor(a), ours_x).sum().backward()
    theirs_x = torch.tensor(x, requires_grad=True)
    getattr(torch.special, name)(torch.tensor(a), theirs_x).sum().backward()
    # both use x^(a-1) e^-x / Gamma(a) as one exponential, whose exponent's rounding grows with a
    _same(ours_x.grad.numpy(), theirs_x.grad.numpy(), rtol=1e-9)
    small = np.abs(a) < 20
    _same(ours_x.grad.numpy()[small], theirs_x.grad.numpy()[small], rtol=1e-12)


@pytest.mark.parametrize("name", ["gammainc", "gammaincc"])
def test_gradcheck_in_x(name):
    a = tl.tensor(np.array([[0.3], [1.0], [4.5], [60.0]]))  # broadcast: a (4, 1), x (3,)
    x = tl.tensor(np.array([0.7, 3.0, 55.0]), requires_grad=True)
    assert tl.autograd.gradcheck(lambda t: getattr(tl.special, name)(a, t), (x,))
    assert tl.autograd.gradgradcheck(lambda t: getattr(tl.special, name)(a, t), (x,))


@pytest.mark.parametrize(("name", "op"), [("gammainc", "igamma"), ("gammaincc", "igammac")])
def test_no_derivative_in_a(name, op):
    a = tl.tensor([2.0], requires_grad=True)
    y = getattr(tl.special, name)(a, tl.tensor([1.0], requires_grad=True))
    with pytest.raises(NotImplementedError,
                       match=f"the derivative for '{op}: input' is not implemented"):
        y.sum().backward()


def test_errors_as_pytorch():
    x = tl.tensor([1.0, 2.0])
    with pytest.raises(TypeError, match=r"special_gammainc\(\): argument 'other' \(position 2\) "
                                        "must be Tensor, not float"):
        tl.special.gammainc(x, 2.0)
    with pytest.raises(TypeError, match=r"igamma\(\): argument 'other' \(position 1\)"):
        x.igamma(2.0)
    with pytest.raises(NotImplementedError, match="\"igamma_cpu\" not implemented for 'Long'"):
        tl.igamma(tl.tensor([1, 2]), tl.tensor([1, 2]))
    # an integer a with a float x is promoted, as PyTorch
    np.testing.assert_allclose(tl.tensor([1, 2]).igamma(x).numpy(), [1 - math.exp(-1),
                               1 - 3 * math.exp(-2)], rtol=1e-6)


@pytest.mark.parity
def test_names_methods_and_in_place():
    torch = pytest.importorskip("torch")
    a, x = np.array([0.5, 2.0, 9.0]), np.array([1.0, 3.0, 4.0])
    assert tl.igamma(tl.tensor(a), tl.tensor(x)).numpy().tolist() == (
        tl.special.gammainc(tl.tensor(a), tl.tensor(x)).numpy().tolist())
    for name in ("igamma", "igammac"):
        expected = getattr(torch.tensor(a), name)(torch.tensor(x)).numpy()
        np.testing.assert_allclose(getattr(tl.tensor(a), name)(tl.tensor(x)).numpy(), expected,
                                   rtol=1e-14)
        ours = tl.tensor(a)
        assert getattr(ours, name + "_")(tl.tensor(x)) is ours
        np.testing.assert_allclose(ours.numpy(), expected, rtol=1e-14)
    for name in ("gammainc", "gammaincc", "zeta"):
        assert name in tl.special.__all__ and getattr(tl.special, name).__doc__


@pytest.mark.parity
def test_zeta_edges_match_pytorch():
    torch = pytest.importorskip("torch")
    s, q = _grid(ZETA_EDGES)
    ours = tl.special.zeta(tl.tensor(s), tl.tensor(q)).numpy()
    theirs = torch.special.zeta(torch.tensor(s), torch.tensor(q)).numpy()
    _same(ours, theirs, rtol=1e-13)


@pytest.mark.parity
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_zeta_values_match_pytorch(dtype):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(3)
    s = 1 + 10 ** rng.uniform(-6, 2, 3000)
    q = 10 ** rng.uniform(-3, 3, 3000) * rng.choice([1, -1], 3000)
    s[q < 0] = np.round(s[q < 0]) + 1  # negative q: integer s (else NaN)
    s, q = s.astype(dtype), q.astype(dtype)
    ours = tl.special.zeta(tl.tensor(s), tl.tensor(q)).numpy()
    theirs = torch.special.zeta(torch.tensor(s), torch.tensor(q)).numpy()
    assert ours.dtype == np.dtype(dtype)
    tiny = np.finfo(dtype).tiny
    normal = np.isfinite(theirs) & (np.abs(theirs) > tiny) & (np.abs(theirs) < 1 / tiny)
    rtol = 1e-13 if dtype == "float64" else 2e-6
    np.testing.assert_allclose(ours[normal], theirs[normal], rtol=rtol, atol=0)


@pytest.mark.parity
def test_zeta_numbers_integers_and_no_derivative():
    torch = pytest.importorskip("torch")
    q = np.array([1.0, 2.0, 0.5])
    np.testing.assert_allclose(tl.special.zeta(2.0, tl.tensor(q)).numpy(),
                               torch.special.zeta(2.0, torch.tensor(q)).numpy(), rtol=1e-15)
    np.testing.assert_allclose(tl.special.zeta(tl.tensor(q + 2), 3).numpy(),
                               torch.special.zeta(torch.tensor(q + 2), 3).numpy(), rtol=1e-15)
    ints = tl.special.zeta(tl.tensor([2, 3]), tl.tensor([1, 2]))
    assert ints.dtype == tl.float32
    np.testing.assert_allclose(ints.numpy(), [math.pi**2 / 6, 1.2020569 - 1], rtol=1e-6)
    with pytest.raises(TypeError, match="special_zeta"):
        tl.special.zeta(2.0, 3.0)
    s = tl.tensor([2.0, 3.0], requires_grad=True)
    y = tl.special.zeta(s, tl.tensor([1.0, 2.0]))
    with pytest.raises(NotImplementedError, match="the derivative for 'zeta' is not implemented"):
        y.sum().backward()


# special.zeta's gradient in q: -grad * s * zeta(s + 1, q), PyTorch's (only s has none)
def test_zeta_gradient_in_q_gradchecks():
    s = tl.tensor([2.0, 3.5, 2.5], dtype=tl.float64)
    q = tl.tensor([[0.4], [1.5], [7.0]], dtype=tl.float64, requires_grad=True)
    assert tl.autograd.gradcheck(lambda t: tl.special.zeta(s, t), (q,))
    assert tl.autograd.gradgradcheck(lambda t: tl.special.zeta(s, t), (q,))
    assert tl.autograd.gradcheck(lambda t: tl.special.zeta(3.0, t), (q,))


@pytest.mark.parity
def test_zeta_gradient_in_q_matches_pytorch():
    torch = pytest.importorskip("torch")
    s, q = np.array([2.0, 3.0, 4.5]), np.array([[1.5], [2.0], [0.3]])
    grads = []
    for lib in (tl, torch):
        qt = lib.tensor(q, dtype=lib.float64, requires_grad=True)
        y = lib.special.zeta(lib.tensor(s, dtype=lib.float64), qt)
        (y * lib.tensor(np.arange(9.0).reshape(3, 3), dtype=lib.float64)).sum().backward()
        q1 = lib.tensor(q, dtype=lib.float64, requires_grad=True)
        lib.special.zeta(2.0, q1).sum().backward()
        grads.append((qt.grad.numpy(), q1.grad.numpy()))
    for ours, theirs in zip(*grads, strict=True):
        np.testing.assert_allclose(ours, theirs, rtol=1e-13)


def test_zeta_raises_only_when_s_needs_a_gradient():
    s = tl.tensor([2.0, 3.0], requires_grad=True)
    q = tl.tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(NotImplementedError, match="the derivative for 'zeta' is not implemented"):
        tl.special.zeta(s, q).sum().backward()
    with pytest.raises(NotImplementedError, match="the derivative for 'zeta' is not implemented"):
        tl.special.zeta(s, 2.0).sum().backward()
    tl.special.zeta(s.detach(), q).sum().backward()
    assert q.grad is not None and q.grad.shape == (2,)
