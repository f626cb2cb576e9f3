"""Chapter 2's builders and statistics (sections 12, 20.1, 20.2): histc, histogram, isin,
heaviside, gcd, lcm, logspace, ldexp, block_diag, cartesian_prod, combinations, vander, cummax,
cummin, cov, corrcoef, trapezoid, cumulative_trapezoid, against PyTorch."""

from __future__ import annotations

import numpy as np
import pytest

import tensorlib as tl

NAN = float("nan")
RNG = np.random.default_rng(7)
M = RNG.standard_normal((3, 6))
V = RNG.standard_normal(4)

DIFFERENTIABLE = {
    "cummax": lambda L, a: L.cummax(a, 1).values,
    "cummin-dim0": lambda L, a: a.cummin(0).values,
    "cov": lambda L, a: L.cov(a),
    "cov-correction0": lambda L, a: L.cov(a, correction=0),
    "corrcoef": lambda L, a: L.corrcoef(a),
    "trapezoid": lambda L, a: L.trapezoid(a),
    "trapezoid-x": lambda L, a: L.trapezoid(a, L.tensor(np.cumsum(np.abs(M[0])))),
    "trapezoid-dx-dim0": lambda L, a: L.trapezoid(a, dx=0.5, dim=0),
    "cumulative_trapezoid": lambda L, a: L.cumulative_trapezoid(a, dx=2.0),
    "block_diag": lambda L, a: L.block_diag(a[:2, :3], a[2], a[0, :1].reshape(())),
    "cartesian_prod": lambda L, a: L.cartesian_prod(a[0, :3], a[1, :2], a[2, :2]),
    "combinations": lambda L, a: L.combinations(a[0], r=3),
    "combinations-replacement": lambda L, a: L.combinations(a[1, :4], with_replacement=True),
    # non-negative exponents: PyTorch 2.13's ldexp gives a 0 gradient for a negative integer one
    "ldexp": lambda L, a: L.ldexp(a, L.tensor([[1, 2, 3, 0, 2, 1]] * 3)),
}


@pytest.mark.parity
@pytest.mark.parametrize("name", list(DIFFERENTIABLE))
def test_values_and_gradients_match_pytorch(name):
    torch = pytest.importorskip("torch")
    results = []
    for lib in (tl, torch):
        a = lib.tensor(M, requires_grad=True)
        out = DIFFERENTIABLE[name](lib, a)
        weights = np.random.default_rng(1).standard_normal(tuple(out.shape))
        (out * lib.tensor(weights)).sum().backward()
        results.append((out.detach().numpy(), a.grad.numpy()))
    (ours, our_grad), (theirs, their_grad) = results
    assert ours.shape == theirs.shape and ours.dtype == theirs.dtype
    np.testing.assert_allclose(ours, theirs, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(our_grad, their_grad, rtol=1e-9, atol=1e-12)


OUTSIDE = {
    "cummax-nan-ties": lambda L: tuple(L.cummax(L.tensor([1.0, 3.0, 2.0, 3.0, NAN, 5.0, NAN]), 0)),
    "cummin-ints": lambda L: tuple(L.cummin(L.tensor([3, 1, 2, 1]), 0)),
    "histc": lambda L: L.histc(L.tensor([1.0, 2.0, 1.0, 4.0]), bins=4, min=0, max=3),
    "histc-own-range": lambda L: L.histc(L.tensor([1.0, 2.0, 1.0]), bins=4),
    "histogram": lambda L: tuple(L.histogram(L.tensor([1.0, 2.0, 1.0]), bins=4)),
    "isin": lambda L: L.isin(L.tensor([1, 2, 3]), L.tensor([2, 5])),
    "isin-invert": lambda L: L.isin(L.tensor([1, 2, 3]), 2, invert=True),
    "heaviside": lambda L: L.heaviside(L.tensor([-1.0, 0.0, 2.0]), L.tensor([0.5])),
    "gcd-lcm": lambda L: (L.gcd(L.tensor([4, 6, 0]), L.tensor([6, 9, 5])),
                          L.lcm(L.tensor([4, 6, 0]), L.tensor([6, 9, 5]))),
    "logspace": lambda L: (L.logspace(0, 2, 3), L.logspace(-1.0, 1.0, 5, base=2.0)),
    "vander-ints": lambda L: L.vander(L.tensor([1, 2, 3])),
    # PyTorch 2.13's own vander backward raises (an in-place change it makes): values only here,
    # the gradient is checked by gradcheck below
    "vander": lambda L: L.vander(L.tensor(M[0])),
    "vander-N-increasing": lambda L: L.vander(L.tensor(M[1, :3]), N=4, increasing=True),
    "ldexp-negative": lambda L: L.ldexp(L.tensor(M[0]), L.tensor([1, -2, 3, 0, -1, 1])),
    "combinations-too-many": lambda L: L.combinations(L.tensor([1, 2]), r=3),
}


@pytest.mark.parity
@pytest.mark.parametrize("name", list(OUTSIDE))
def test_outside_the_graph_match_pytorch(name):
    torch = pytest.importorskip("torch")
    ours, theirs = OUTSIDE[name](tl), OUTSIDE[name](torch)
    ours = ours if isinstance(ours, tuple) else (ours,)
    theirs = theirs if isinstance(theirs, tuple) else (theirs,)
    for mine, reference in zip(ours, theirs, strict=True):
        assert tuple(mine.shape) == tuple(reference.shape)
        assert str(mine.dtype).split(".")[-1] == str(reference.dtype).split(".")[-1]
        np.testing.assert_allclose(mine.numpy(), reference.numpy(), rtol=1e-7)


def test_gradchecks_and_errors():
    a = tl.tensor(M, requires_grad=True)
    assert tl.autograd.gradcheck(lambda x: tl.cov(x) + tl.corrcoef(x), (a,))
    assert tl.autograd.gradcheck(lambda x: tl.vander(x[0], N=4), (a,))
    zero = tl.tensor([0.0, 2.0], dtype=tl.float64, requires_grad=True)
    tl.vander(zero, N=3).sum().backward()
    assert zero.grad.tolist() == [1.0, 5.0]  # d/dx (x^2 + x + 1) = 2x + 1, no NaN at 0
    ones = tl.tensor([1] * a.shape[1])  # weights of 1: the unweighted covariance
    np.testing.assert_allclose(tl.cov(a, fweights=ones).detach().numpy(),
                               tl.cov(a).detach().numpy(), rtol=1e-12)
    with pytest.raises(RuntimeError, match="1D"):
        tl.combinations(tl.ones(2, 2))
    with pytest.raises(RuntimeError, match="max must be larger"):
        tl.histc(tl.ones(3), bins=2, min=2, max=1)


# cov's weights (fweights, aweights; differentiable in the input and aweights, as PyTorch's), and
# one variable of shape (1, N) giving a 0-d covariance and correlation, as torch's squeeze does
def test_cov_weights_match_numpy_and_gradcheck():
    rng = np.random.default_rng(0)
    x, counts, weights = rng.normal(size=(3, 6)), rng.integers(1, 4, 6), rng.uniform(0.5, 2, 6)
    for kwargs, numpy_kwargs in [
        ({"fweights": tl.tensor(counts)}, {"fweights": counts}),
        ({"aweights": tl.tensor(weights)}, {"aweights": weights}),
        ({"fweights": tl.tensor(counts), "aweights": tl.tensor(weights)},
         {"fweights": counts, "aweights": weights}),
    ]:
        ours = tl.cov(tl.tensor(x), **kwargs).numpy()
        np.testing.assert_allclose(ours, np.cov(x, **numpy_kwargs), rtol=1e-12)
    assert tl.autograd.gradcheck(
        lambda a, w: tl.cov(a, fweights=tl.tensor(counts), aweights=w, correction=0),
        (tl.tensor(x, requires_grad=True), tl.tensor(weights, requires_grad=True)))


@pytest.mark.parametrize("bad, message", [
    ({"fweights": tl.tensor([1.0, 2.0])}, "fweights to have integral dtype"),
    ({"aweights": tl.tensor([1, 2])}, "aweights to have floating point dtype"),
    ({"fweights": tl.tensor([1, 2, 3])}, "same numel as there are observations"),
    ({"fweights": tl.tensor([1, -2])}, "fweights cannot be negative"),
])
def test_cov_weights_are_checked(bad, message):
    with pytest.raises(RuntimeError, match=message):
        tl.cov(tl.tensor([[1.0, 2.0], [3.0, 5.0]]), **bad)


@pytest.mark.parity
@pytest.mark.parametrize("case", ["fweights", "aweights", "both", "one variable", "corrcoef"])
def test_cov_matches_pytorch(case):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(1)
    x, counts, weights = rng.normal(size=(3, 5)), rng.integers(0, 4, 5), rng.uniform(0.5, 2, 5)
    results = []
    for lib in (tl, torch):
        a = lib.tensor(x[:1] if case in ("one variable", "corrcoef") else x, requires_grad=True)
        w = lib.tensor(weights, requires_grad=True)
        f = lib.tensor(counts)
        if case == "corrcoef":
            out = lib.corrcoef(a)
        else:
            out = lib.cov(a, correction=1, fweights=f if case in ("fweights", "both") else None,
                          aweights=w if case in ("aweights", "both") else None)
        (out * 1.5).sum().backward()
        results.append((out.detach().numpy(), a.grad.numpy(),
                        None if w.grad is None else w.grad.numpy()))
    for ours, theirs in zip(*results, strict=True):
        if theirs is None:
            assert ours is None
        else:
            assert ours.shape == theirs.shape
            np.testing.assert_allclose(ours, theirs, rtol=1e-10, atol=1e-12)
