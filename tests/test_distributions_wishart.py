"""``Wishart`` (chapter 3, section 13): PyTorch's values and errors, samples by statistics."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import tensorlib as tl
from tensorlib.distributions import Wishart

_RNG = np.random.default_rng(0)
_A = _RNG.normal(size=(3, 3))
COV = _A @ _A.T + np.eye(3)
KINDS = ["covariance_matrix", "precision_matrix", "scale_tril"]


def _matrix(kind: str) -> np.ndarray:
    return np.linalg.cholesky(COV) if kind == "scale_tril" else COV


@pytest.mark.parity
@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("df", [3.5, [2.5, 6.0]])
def test_values_and_gradients_match_pytorch(kind, df) -> None:
    torch = pytest.importorskip("torch")
    torch.manual_seed(0)
    t_df = torch.tensor(df, dtype=torch.float64, requires_grad=True)
    t_m = torch.tensor(_matrix(kind), requires_grad=True)
    o_df = tl.tensor(np.array(df), requires_grad=True)
    o_m = tl.tensor(_matrix(kind), requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs = torch.distributions.Wishart(t_df, **{kind: t_m})
        ours = Wishart(o_df, **{kind: o_m})
    assert ours.batch_shape == tuple(theirs.batch_shape)
    assert ours.event_shape == tuple(theirs.event_shape)
    value = theirs.sample((4,))
    for name in ("mean", "mode", "variance", "covariance_matrix", "precision_matrix",
                 "scale_tril"):
        np.testing.assert_allclose(getattr(ours, name).detach().numpy(),
                                   getattr(theirs, name).detach().numpy(), rtol=1e-10,
                                   atol=1e-12, err_msg=name)
    mine = ours.log_prob(tl.tensor(value.numpy())).sum() + ours.entropy().sum()
    reference = theirs.log_prob(value).sum() + theirs.entropy().sum()
    assert mine.item() == pytest.approx(reference.item(), rel=1e-10)
    mine.backward()
    reference.backward()
    np.testing.assert_allclose(o_df.grad.numpy(), t_df.grad.numpy(), rtol=1e-9)
    ours_grad, theirs_grad = o_m.grad.numpy(), t_m.grad.numpy()
    if kind == "scale_tril":  # PyTorch also fills the unused upper triangle; tensorlib leaves 0
        ours_grad, theirs_grad = np.tril(ours_grad), np.tril(theirs_grad)
    np.testing.assert_allclose(ours_grad, theirs_grad, rtol=1e-8, atol=1e-10)


@pytest.mark.parity
def test_errors_and_warnings_match_pytorch() -> None:
    torch = pytest.importorskip("torch")
    for lib, cls in ((tl, Wishart), (torch, torch.distributions.Wishart)):
        with pytest.raises(AssertionError, match="Exactly one of covariance_matrix"):
            cls(3.0, covariance_matrix=lib.eye(2), scale_tril=lib.eye(2))
        with pytest.raises(ValueError, match="at least two-dimensional"):
            cls(3.0, covariance_matrix=lib.ones(2))
        with pytest.raises(ValueError, match="expected to be greater than ndim - 1 = 2"):
            cls(2.0, covariance_matrix=lib.eye(3))
        with pytest.warns(UserWarning, match="Low df values detected"):
            cls(2.5, covariance_matrix=lib.eye(3))
        with pytest.raises(ValueError, match="positive_definite|PositiveDefinite"):
            cls(3.0, covariance_matrix=lib.tensor([[1.0, 2.0], [2.0, 1.0]]), validate_args=True)
    assert Wishart(3.0, covariance_matrix=tl.eye(2)).has_rsample is True
    assert repr(Wishart(3.0, covariance_matrix=tl.eye(2)).support) == repr(
        torch.distributions.Wishart(3.0, covariance_matrix=torch.eye(2)).support)


def test_expand() -> None:
    dist = Wishart(tl.tensor([3.0, 4.0]), scale_tril=tl.eye(2)).expand((5, 2))
    assert dist.batch_shape == (5, 2) and dist.event_shape == (2, 2)
    draws = dist.rsample((3,))
    assert tuple(draws.shape) == (3, 5, 2, 2, 2)
    assert tuple(dist.log_prob(draws).shape) == (3, 5, 2)
    np.testing.assert_allclose(dist.mean.numpy()[4, 1], 4.0 * np.eye(2))


def test_sample_moments_and_rsample_gradient() -> None:
    tl.manual_seed(1)
    df = tl.tensor(4.5, dtype=tl.float64, requires_grad=True)
    dist = Wishart(df, covariance_matrix=tl.tensor(COV))
    draws = dist.rsample((20_000,))
    x = draws.detach().numpy()
    assert np.all(np.linalg.eigvalsh(x) > 0)
    mean, var = dist.mean.detach().numpy(), dist.variance.detach().numpy()
    se = np.sqrt(var / x.shape[0])
    assert np.all(np.abs(x.mean(0) - mean) < 4 * se)
    assert np.all(np.abs(x.var(0) / var - 1) < 0.08)
    draws.mean(0).trace().backward()  # d/d df of E[tr X] = tr(cov)
    assert df.grad.item() == pytest.approx(np.trace(COV), rel=0.03)


def test_log_prob_gradcheck() -> None:
    value = tl.tensor(COV * 4.0)

    def log_prob(df, tril):
        return Wishart(df, scale_tril=tril, validate_args=False).log_prob(value)

    df = tl.tensor([3.5, 5.0], dtype=tl.float64, requires_grad=True)
    tril = tl.tensor(np.linalg.cholesky(COV), requires_grad=True)
    assert tl.autograd.gradcheck(log_prob, (df, tril))
