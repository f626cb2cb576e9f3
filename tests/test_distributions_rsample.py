"""Reparameterized gamma-family samples: the implicit gradients of chapter 3, section 13."""
from __future__ import annotations

import math

import numpy as np
import pytest

import tensorlib as tl
import tensorlib.distributions as D
from tensorlib.distributions.dirichlet import _dirichlet_grad
from tensorlib.distributions.gamma import _standard_gamma_grad

ALPHAS = [1e-3, 0.05, 0.3, 1.0, 2.5, 8.0, 30.0, 500.0, 1e5]
GAMMA_FAMILY = ["Gamma", "Chi2", "Beta", "Dirichlet", "StudentT", "InverseGamma",
                "FisherSnedecor"]


def _gamma_cdf(a: float, x: float) -> float:
    prefactor = math.exp(a * math.log(x) - x - math.lgamma(a))
    if x < a + 1:
        term = total = 1.0 / a
        n = 0
        while term > 1e-17 * total:
            n += 1
            term *= x / (a + n)
            total += term
        return total * prefactor
    b, c, d = x + 1 - a, 1e300, 1 / (x + 1 - a)
    h = d
    for i in range(1, 10_000):
        an = -i * (i - a)
        b += 2
        d = 1 / (an * d + b)
        c = b + an / c
        h *= d * c
        if abs(d * c - 1) < 1e-16:
            break
    return 1 - prefactor * h


def _gamma_icdf(a: float, u: float) -> float:
    lo, hi = -700.0, math.log(10 * a + 10)
    for _ in range(200):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if _gamma_cdf(a, math.exp(mid)) < u else (lo, mid)
    return math.exp((lo + hi) / 2)


@pytest.mark.parametrize("a", [0.05, 0.5, 1.0, 3.0, 30.0, 500.0])
@pytest.mark.parametrize("u", [0.01, 0.3, 0.7, 0.99])
def test_gamma_grad_matches_inverse_cdf_difference(a: float, u: float) -> None:
    h = 1e-6 * a
    fd = (_gamma_icdf(a + h, u) - _gamma_icdf(a - h, u)) / (2 * h)
    ours = float(_standard_gamma_grad(np.array(_gamma_icdf(a, u)), np.array(a)))
    assert ours == pytest.approx(fd, rel=1e-6)


@pytest.mark.parity
@pytest.mark.parametrize("a", ALPHAS)
def test_standard_gamma_grad_matches_torch(a: float) -> None:
    torch = pytest.importorskip("torch")
    torch.manual_seed(0)
    x = torch._standard_gamma(torch.full((500,), a, dtype=torch.float64))
    x = x.clamp(min=1e-300)
    theirs = torch._standard_gamma_grad(torch.full_like(x, a), x).numpy()
    ours = _standard_gamma_grad(x.numpy(), np.full(500, a))
    # PyTorch's fitted approximations are good to about 1e-3 relative
    np.testing.assert_allclose(ours, theirs, rtol=2e-3)


@pytest.mark.parity
@pytest.mark.parametrize("a,b", [(0.01, 0.5), (0.1, 3.0), (0.5, 1.5), (1.0, 1.0), (2.0, 3.0),
                                 (10.0, 0.2), (30.0, 50.0), (500.0, 700.0), (1e4, 2.0)])
def test_dirichlet_grad_matches_torch(a: float, b: float) -> None:
    torch = pytest.importorskip("torch")
    torch.manual_seed(0)
    x = torch.distributions.Beta(torch.tensor(a, dtype=torch.float64),
                                 torch.tensor(b, dtype=torch.float64)).sample((500,))
    x = x.clamp(1e-300, 1 - 1e-16)
    theirs = torch._dirichlet_grad(x, torch.full_like(x, a), torch.full_like(x, a + b)).numpy()
    ours = _dirichlet_grad(x.numpy(), np.full(500, a), np.full(500, a + b))
    np.testing.assert_allclose(ours, theirs, rtol=5e-3)


@pytest.mark.parity
@pytest.mark.parametrize("name", GAMMA_FAMILY)
def test_has_rsample_matches_torch(name: str) -> None:
    torch = pytest.importorskip("torch")
    args = {"Gamma": (2.0, 1.0), "Chi2": (3.0,), "Beta": (2.0, 3.0), "Dirichlet": ([1.0, 2.0],),
            "StudentT": (3.0,), "InverseGamma": (2.0, 1.0), "FisherSnedecor": (3.0, 5.0)}[name]
    ours = getattr(D, name)(*[tl.tensor(v) for v in args])
    theirs = getattr(torch.distributions, name)(*[torch.tensor(v) for v in args])
    assert ours.has_rsample is theirs.has_rsample is True


@pytest.mark.parametrize("name", GAMMA_FAMILY)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_rsample_shape_dtype_and_finite_gradient(name: str, dtype: str) -> None:
    tl.manual_seed(1)
    dt = getattr(tl, dtype)
    p = tl.tensor(np.array([[0.4, 2.0, 9.0]]), dtype=dt, requires_grad=True)
    args = {"Gamma": (p, 1.5), "Chi2": (p,), "Beta": (p, p * 2), "Dirichlet": (p,),
            "StudentT": (p,), "InverseGamma": (p, 1.5), "FisherSnedecor": (p, p + 1)}[name]
    d = getattr(D, name)(*args)
    x = d.rsample((6,))
    assert tuple(x.shape) == (6, *d.batch_shape, *d.event_shape)
    assert x.dtype == dt and x.requires_grad
    x.sum().backward()
    assert p.grad is not None and p.grad.dtype == dt and np.isfinite(p.grad.numpy()).all()


def test_sample_has_no_graph() -> None:
    p = tl.tensor([1.0, 2.0], requires_grad=True)
    assert not D.Gamma(p, 1.0).sample((3,)).requires_grad
    assert not D.FisherSnedecor(p, p).sample((3,)).requires_grad


def test_gamma_monte_carlo_gradient() -> None:
    tl.manual_seed(0)
    alpha = tl.tensor([0.2, 1.0, 4.0, 40.0], dtype=tl.float64, requires_grad=True)
    x = D.Gamma(alpha, 2.0).rsample((20_000,))
    x.pow(2).mean(0).sum().backward()
    a = alpha.detach().numpy()
    draws = x.detach().numpy()
    per_draw = 2 * draws * _standard_gamma_grad(draws * 2.0, a) / 2.0
    se = per_draw.std(0) / math.sqrt(draws.shape[0])
    assert np.all(np.abs(alpha.grad.numpy() - (2 * a + 1) / 4.0) < 4 * se)


def test_dirichlet_gradient_keeps_the_simplex() -> None:
    tl.manual_seed(2)
    alpha = tl.tensor([0.3, 1.0, 7.0], dtype=tl.float64, requires_grad=True)
    D.Dirichlet(alpha).rsample((50,)).sum().backward()  # sum of coordinates is 1 for every draw
    np.testing.assert_allclose(alpha.grad.numpy(), 0.0, atol=1e-12)


def test_beta_monte_carlo_gradient() -> None:
    tl.manual_seed(3)
    a = tl.tensor([0.5, 2.0, 30.0], dtype=tl.float64, requires_grad=True)
    b = tl.tensor([1.5, 2.0, 10.0], dtype=tl.float64, requires_grad=True)
    D.Beta(a, b).rsample((5_000,)).mean(0).sum().backward()
    an, bn = a.detach().numpy(), b.detach().numpy()
    np.testing.assert_allclose(a.grad.numpy(), bn / (an + bn) ** 2, rtol=0.05, atol=2e-3)
    np.testing.assert_allclose(b.grad.numpy(), -an / (an + bn) ** 2, rtol=0.05, atol=2e-3)


def test_student_t_rsample_is_differentiable_in_loc_and_scale() -> None:
    loc = tl.tensor([0.5], dtype=tl.float64, requires_grad=True)
    scale = tl.tensor([2.0], dtype=tl.float64, requires_grad=True)
    tl.manual_seed(4)
    x = D.StudentT(5.0, loc, scale).rsample((10,))
    x.sum().backward()
    assert loc.grad.item() == pytest.approx(10.0)
    np.testing.assert_allclose(scale.grad.numpy(), ((x.detach().numpy() - 0.5) / 2.0).sum(0))


@pytest.mark.parity
def test_gradients_at_the_ends_match_pytorch() -> None:
    # a draw of exactly 0 (PyTorch: 0) and a Dirichlet coordinate of exactly 1
    torch = pytest.importorskip("torch")
    x, a = np.array([0.0, 1e-300]), np.array([0.5, 0.01])
    theirs = torch._standard_gamma_grad(torch.tensor(a), torch.tensor(x)).numpy()
    np.testing.assert_allclose(_standard_gamma_grad(x, a), theirs, atol=1e-200)
    x, a, total = np.array([0.0, 1.0]), np.array([0.01, 2.0]), np.array([3.0, 2.001])
    theirs = torch._dirichlet_grad(torch.tensor(x), torch.tensor(a), torch.tensor(total)).numpy()
    np.testing.assert_allclose(_dirichlet_grad(x, a, total), theirs, rtol=2e-3)
