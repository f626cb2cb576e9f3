"""``LKJCholesky`` (chapter 3, section 13): log_prob against PyTorch, samples by statistics."""
from __future__ import annotations

import numpy as np
import pytest

import tensorlib as tl
from tensorlib.distributions import LKJCholesky


@pytest.mark.parity
@pytest.mark.parametrize("dim,eta", [(2, 1.0), (3, 0.5), (4, [1.0, 2.5]), (6, 3.0),
                                     (3, [[0.3], [4.0]])])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_log_prob_and_gradients_match_pytorch(dim, eta, dtype) -> None:
    torch = pytest.importorskip("torch")
    torch.manual_seed(0)
    tdtype = getattr(torch, dtype)
    theirs_eta = torch.tensor(eta, dtype=tdtype, requires_grad=True)
    theirs = torch.distributions.LKJCholesky(dim, theirs_eta)
    value = theirs.sample((3,))
    ours_eta = tl.tensor(np.array(eta, dtype=dtype), requires_grad=True)
    ours = LKJCholesky(dim, ours_eta)
    assert ours.batch_shape == tuple(theirs.batch_shape)
    assert ours.event_shape == tuple(theirs.event_shape)
    ours_value = tl.tensor(value.numpy(), requires_grad=True)
    theirs_value = value.clone().requires_grad_(True)
    mine, reference = ours.log_prob(ours_value), theirs.log_prob(theirs_value)
    assert mine.dtype == getattr(tl, dtype) and tuple(mine.shape) == tuple(reference.shape)
    rtol = 1e-5 if dtype == "float32" else 1e-12
    np.testing.assert_allclose(mine.detach().numpy(), reference.detach().numpy(), rtol=rtol,
                               atol=rtol)
    mine.sum().backward()
    reference.sum().backward()
    np.testing.assert_allclose(ours_eta.grad.numpy(), theirs_eta.grad.numpy(), rtol=rtol * 10)
    np.testing.assert_allclose(ours_value.grad.numpy(), theirs_value.grad.numpy(),
                               rtol=rtol * 10, atol=rtol)


def test_log_prob_gradcheck() -> None:
    tl.manual_seed(7)
    value = LKJCholesky(3, tl.tensor(1.5, dtype=tl.float64)).sample((2,))

    def log_prob(eta, off_diagonal):
        factor = value + tl.tensor(np.tril(np.ones((3, 3)), -1)) * off_diagonal
        return LKJCholesky(3, eta, validate_args=False).log_prob(factor)

    eta = tl.tensor([0.7, 2.0], dtype=tl.float64, requires_grad=True)
    shift = tl.tensor(np.zeros((2, 3, 3)), requires_grad=True)
    assert tl.autograd.gradcheck(log_prob, (eta, shift))


@pytest.mark.parity
def test_errors_repr_constraints_match_pytorch() -> None:
    torch = pytest.importorskip("torch")
    with pytest.raises(ValueError, match="greater than or equal to 2. Found dim=1"):
        LKJCholesky(1)
    with pytest.raises(ValueError):
        torch.distributions.LKJCholesky(1)
    ours, theirs = LKJCholesky(3, 0.5), torch.distributions.LKJCholesky(3, 0.5)
    assert repr(ours) == repr(theirs)
    assert repr(ours.support) == repr(theirs.support)
    assert ours.has_rsample is theirs.has_rsample is False
    with pytest.raises(ValueError, match="support"):
        LKJCholesky(3, 0.5, validate_args=True).log_prob(tl.ones(3, 3))


def test_expand_and_sample_shapes() -> None:
    dist = LKJCholesky(4, tl.tensor([1.0, 2.0])).expand((3, 2))
    assert dist.batch_shape == (3, 2) and dist.event_shape == (4, 4)
    draws = dist.sample((5,))
    assert tuple(draws.shape) == (5, 3, 2, 4, 4)
    assert tuple(dist.log_prob(draws).shape) == (5, 3, 2)


@pytest.mark.parametrize("dim,eta", [(2, 0.5), (3, 0.5), (4, 2.0), (5, 1.0)])
def test_samples_have_the_lkj_marginals(dim, eta) -> None:
    # each correlation r has (r + 1)/2 ~ Beta(b, b), b = eta - 1 + dim/2: var 1/(2 eta + dim - 1)
    tl.manual_seed(5)
    factors = LKJCholesky(dim, eta).sample((20_000,)).numpy().astype(np.float64)
    assert np.all(np.abs(np.triu(factors, 1)) == 0)
    assert np.all(np.diagonal(factors, axis1=-2, axis2=-1) > 0)
    corr = factors @ np.swapaxes(factors, -1, -2)
    np.testing.assert_allclose(np.diagonal(corr, axis1=-2, axis2=-1), 1.0, rtol=1e-5)
    rows, cols = np.tril_indices(dim, -1)
    off = corr[:, rows, cols]
    target = 1 / (2 * eta + dim - 1)
    se = target * np.sqrt(2 / off.shape[0]) * 1.5  # a variance's standard error, with room
    assert np.all(np.abs(off.var(0) - target) < 4 * se)
    assert np.all(np.abs(off.mean(0)) < 4 * np.sqrt(target / off.shape[0]))


def test_samples_follow_log_prob_in_two_dimensions() -> None:
    # dim 2: L = [[1, 0], [r, sqrt(1 - r^2)]], r has density prop. to (1 - r^2)^(eta - 1)
    tl.manual_seed(6)
    eta = 2.5
    r = LKJCholesky(2, eta).sample((40_000,)).numpy()[:, 1, 0].astype(np.float64)
    grid = np.linspace(-1, 1, 2001)
    density = (1 - grid**2) ** (eta - 1)
    cdf = np.cumsum(density) / density.sum()
    empirical = np.searchsorted(np.sort(r), grid) / r.size
    assert np.max(np.abs(cdf - empirical)) < 1.63 / np.sqrt(r.size)
