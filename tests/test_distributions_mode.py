"""``mode`` of the distributions PyTorch gives one, and ``Multinomial.entropy`` (chapter 3, 13)."""
from __future__ import annotations

import numpy as np
import pytest

import tensorlib as tl
import tensorlib.distributions as D

F64 = np.float64
CASES = {
    "Normal": lambda lib: (lib.tensor([0.5, -1.0]), lib.tensor([1.0, 2.0])),
    "Laplace": lambda lib: (lib.tensor([0.5, -1.0]), lib.tensor([1.0, 2.0])),
    "StudentT": lambda lib: (lib.tensor([3.0, 5.0]), lib.tensor([0.5, -1.0])),
    "Exponential": lambda lib: (lib.tensor([0.5, 2.0]),),
    "Gamma": lambda lib: (lib.tensor([0.5, 1.0, 3.0]), lib.tensor([2.0, 1.0, 0.5])),
    "Chi2": lambda lib: (lib.tensor([1.0, 2.0, 5.0]),),
    "Poisson": lambda lib: (lib.tensor([0.5, 2.0, 7.3]),),
    "Uniform": lambda lib: (lib.tensor([0.0, 1.0]), lib.tensor([1.0, 3.0])),
    "Beta": lambda lib: (lib.tensor([0.5, 2.0, 1.0, 3.0]), lib.tensor([0.5, 3.0, 2.0, 0.7])),
    "Dirichlet": lambda lib: (lib.tensor([[0.5, 0.3, 0.9], [2.0, 3.0, 0.5], [1.0, 1.0, 1.0]]),),
    "Bernoulli": lambda lib: (lib.tensor([0.2, 0.5, 0.7]),),
    "Categorical": lambda lib: (lib.tensor([[0.2, 0.5, 0.3], [0.6, 0.1, 0.3]]),),
    "OneHotCategorical": lambda lib: (lib.tensor([[0.2, 0.5, 0.3], [0.6, 0.1, 0.3]]),),
    "OneHotCategoricalStraightThrough": lambda lib: (lib.tensor([[0.2, 0.5, 0.3]]),),
}


@pytest.mark.parity
@pytest.mark.parametrize("name", sorted(CASES))
def test_mode_matches_pytorch(name: str) -> None:
    torch = pytest.importorskip("torch")
    ours = getattr(D, name)(*CASES[name](tl)).mode
    theirs = getattr(torch.distributions, name)(*CASES[name](torch)).mode
    assert tuple(ours.shape) == tuple(theirs.shape)
    assert str(ours.dtype).split(".")[-1] == str(theirs.dtype).split(".")[-1]
    np.testing.assert_allclose(ours.numpy().astype(F64), theirs.numpy().astype(F64), rtol=1e-6)


@pytest.mark.parity
def test_binomial_mvn_and_independent_modes_match_pytorch() -> None:
    torch = pytest.importorskip("torch")
    pairs = []
    for lib in (tl, torch):
        dists = lib.distributions
        pairs.append([
            dists.Binomial(lib.tensor([3.0, 4.0, 10.0]), lib.tensor([0.5, 0.9, 0.01])).mode,
            dists.MultivariateNormal(lib.tensor([1.0, 2.0]), lib.eye(2)).mode,
            dists.Independent(dists.Normal(lib.tensor([[1.0, 2.0]]), 1.0), 1).mode,
        ])
    for mine, reference in zip(*pairs, strict=True):
        np.testing.assert_allclose(mine.numpy(), reference.numpy())


def test_mode_gradients_flow_where_pytorch_has_them() -> None:
    concentration = tl.tensor([2.0, 3.0, 4.0], dtype=tl.float64, requires_grad=True)
    D.Dirichlet(concentration).mode[0].backward()  # (a_0 - 1)/(sum(a) - 3): 1/6
    np.testing.assert_allclose(concentration.grad.numpy(), [1 / 6 - 1 / 36, -1 / 36, -1 / 36])
    rate = tl.tensor([2.0], dtype=tl.float64, requires_grad=True)
    D.Gamma(3.0, rate).mode.sum().backward()
    np.testing.assert_allclose(rate.grad.numpy(), [-0.5])


@pytest.mark.parity
@pytest.mark.parametrize("n", [0, 1, 5, 12, 40])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_multinomial_entropy_matches_pytorch(n: int, dtype: str) -> None:
    torch = pytest.importorskip("torch")
    probs = np.array([[0.2, 0.3, 0.5], [0.01, 0.98, 0.01]], dtype=dtype)
    ours_p = tl.tensor(probs, requires_grad=True)
    theirs_p = torch.tensor(probs, requires_grad=True)
    ours = D.Multinomial(n, probs=ours_p).entropy()
    theirs = torch.distributions.Multinomial(n, probs=theirs_p).entropy()
    assert ours.dtype == getattr(tl, dtype) and tuple(ours.shape) == tuple(theirs.shape)
    rtol = 1e-5 if dtype == "float32" else 1e-10
    np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(), rtol=rtol)
    ours.sum().backward()
    theirs.sum().backward()
    # float32 gradients sum n rounded terms in another order: a looser tolerance
    np.testing.assert_allclose(ours_p.grad.numpy(), theirs_p.grad.numpy(),
                               rtol=3e-3 if dtype == "float32" else 1e-9, atol=1e-10)


def test_multinomial_entropy_is_the_sum_over_outcomes() -> None:
    probs = np.array([0.2, 0.3, 0.5])
    dist = D.Multinomial(3, probs=tl.tensor(probs))
    outcomes = [(i, j, 3 - i - j) for i in range(4) for j in range(4 - i)]
    log_p = dist.log_prob(tl.tensor(np.array(outcomes, dtype=F64))).numpy()
    np.testing.assert_allclose(dist.entropy().item(), -(np.exp(log_p) * log_p).sum(), rtol=1e-6)


def test_multinomial_entropy_gradcheck() -> None:
    def entropy(logits):
        return D.Multinomial(4, logits=logits).entropy()

    logits = tl.tensor([[0.3, -0.2, 1.0], [0.0, 2.0, -1.0]], dtype=tl.float64, requires_grad=True)
    assert tl.autograd.gradcheck(entropy, (logits,))
