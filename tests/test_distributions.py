"""tensorlib.distributions (chapter 3, section 13): Categorical, Normal and Bernoulli against
PyTorch's (log_prob, entropy, moments and their gradients), their samples against their laws,
and their argument checks."""

from __future__ import annotations

import numpy as np
import pytest

import tensorlib as tl
from tensorlib.distributions import Bernoulli, Categorical, Distribution, Normal

LOGITS = np.array([[2.0, 0.5, -1.0, 0.0], [0.0, 0.0, 3.0, -2.0]])
PROBS = np.array([[0.1, 0.2, 0.3, 0.4], [0.0, 0.5, 0.5, 0.0]])
ACTIONS = np.array([[1, 3], [0, 2], [3, 1]])  # (3, 2): broadcast against batch_shape (2,)


def make(lib, kind):
    """The same distribution in either library, with its parameter tensor (float64, a leaf)."""
    if kind == "categorical logits":
        p = lib.tensor(LOGITS, requires_grad=True)
        return lib.distributions.Categorical(logits=p), p, lib.tensor(ACTIONS)
    if kind == "categorical probs":
        p = lib.tensor(PROBS, requires_grad=True)
        return lib.distributions.Categorical(probs=p), p, lib.tensor(ACTIONS[:, ::-1].copy())
    if kind == "normal":
        p = lib.tensor(np.array([0.5, -1.0, 2.0]), requires_grad=True)
        scale = lib.tensor(np.array([1.0, 0.5, 3.0]))
        return lib.distributions.Normal(p, scale), p, lib.tensor(np.array([[0.0, 1.0, 2.5]]))
    if kind == "bernoulli probs":
        p = lib.tensor(np.array([0.25, 0.9, 0.5]), requires_grad=True)
        return lib.distributions.Bernoulli(probs=p), p, lib.tensor(np.array([1.0, 0.0, 1.0]))
    p = lib.tensor(np.array([-3.0, 0.0, 40.0]), requires_grad=True)
    return lib.distributions.Bernoulli(logits=p), p, lib.tensor(np.array([0.0, 1.0, 1.0]))


KINDS = ["categorical logits", "categorical probs", "normal", "bernoulli probs", "bernoulli logits"]


@pytest.mark.parity
@pytest.mark.parametrize("kind", KINDS)
def test_log_prob_entropy_and_their_gradients_match_pytorch(kind):
    torch = pytest.importorskip("torch")
    results = []
    for lib in (tl, torch):
        distribution, parameter, value = make(lib, kind)
        log_prob, entropy = distribution.log_prob(value), distribution.entropy()
        (log_prob.sum() + entropy.sum()).backward()
        results.append(
            (log_prob.detach().numpy(), entropy.detach().numpy(), parameter.grad.numpy(),
             tuple(distribution.batch_shape), tuple(distribution.event_shape))
        )
    (ours, theirs) = results
    for mine, reference in zip(ours[:3], theirs[:3], strict=True):
        np.testing.assert_allclose(mine, reference, rtol=1e-10, atol=1e-12)
    assert ours[3:] == theirs[3:]


@pytest.mark.parity
@pytest.mark.parametrize("kind", KINDS)
def test_parameters_and_moments_match_pytorch(kind):
    torch = pytest.importorskip("torch")
    ours, _, _ = make(tl, kind)
    theirs, _, _ = make(torch, kind)
    names = ["mean", "variance", "stddev"] + (["probs", "logits"] if "normal" not in kind else [])
    for name in names:
        mine, reference = getattr(ours, name), getattr(theirs, name)
        np.testing.assert_allclose(
            mine.detach().numpy(), reference.detach().numpy(), rtol=1e-10, equal_nan=True
        )


@pytest.mark.parametrize("kind", KINDS)
def test_sample_shapes_dtypes_and_no_graph(kind):
    distribution, _, _ = make(tl, kind)
    draws = distribution.sample((5, 7))
    assert tuple(draws.shape) == (5, 7, *distribution.batch_shape)
    assert draws.dtype == (np.int64 if "categorical" in kind else np.float64)
    assert not draws.requires_grad
    assert tuple(distribution.sample().shape) == tuple(distribution.batch_shape)
    assert tuple(distribution.sample(3).shape) == (3, *distribution.batch_shape)


def test_categorical_draws_follow_the_probabilities():
    tl.manual_seed(1)
    draws = Categorical(probs=tl.tensor(PROBS)).sample((40_000,)).numpy()
    for row in range(2):
        frequencies = np.bincount(draws[:, row], minlength=4) / 40_000
        np.testing.assert_allclose(frequencies, PROBS[row], atol=0.01)
    assert not np.isin(draws[:, 1], [0, 3]).any()  # probability 0: never drawn


def test_normal_rsample_is_differentiable_and_has_the_moments():
    tl.manual_seed(2)
    loc = tl.tensor([1.0, -2.0], requires_grad=True)
    scale = tl.tensor([0.5, 3.0], requires_grad=True)
    x = Normal(loc, scale).rsample((20_000,))
    x.sum().backward()
    assert loc.grad.tolist() == [20_000.0, 20_000.0]
    epsilon = (x.detach().numpy() - np.array([1.0, -2.0])) / np.array([0.5, 3.0])
    np.testing.assert_allclose(scale.grad.numpy(), epsilon.sum(axis=0), rtol=1e-4)
    np.testing.assert_allclose(x.detach().numpy().mean(axis=0), [1.0, -2.0], atol=0.05)
    np.testing.assert_allclose(x.detach().numpy().std(axis=0), [0.5, 3.0], rtol=0.03)
    assert not Normal(loc, scale).sample().requires_grad


def test_bernoulli_draws_follow_p_and_its_rsample_is_refused():
    tl.manual_seed(3)
    coin = Bernoulli(probs=tl.tensor([0.2, 0.7]))
    np.testing.assert_allclose(coin.sample((40_000,)).numpy().mean(axis=0), [0.2, 0.7], atol=0.01)
    with pytest.raises(NotImplementedError, match="Bernoulli has no reparameterized sample"):
        coin.rsample()


def test_gradcheck_of_log_prob():
    x = tl.tensor([[0.3, -1.2, 0.8]], dtype=tl.float64, requires_grad=True)
    assert tl.autograd.gradcheck(lambda t: Categorical(logits=t).log_prob(tl.tensor([2])), (x,))
    assert tl.autograd.gradcheck(lambda t: Categorical(logits=t).entropy(), (x,))
    loc = tl.tensor([0.3, -0.4], dtype=tl.float64, requires_grad=True)
    scale = tl.tensor([1.3, 0.7], dtype=tl.float64, requires_grad=True)
    value = tl.tensor([0.1, 0.2], dtype=tl.float64)
    assert tl.autograd.gradcheck(lambda m, s: Normal(m, s).log_prob(value), (loc, scale))
    outcomes = tl.tensor([0.0, 1.0], dtype=tl.float64)
    assert tl.autograd.gradcheck(lambda t: Bernoulli(logits=t).log_prob(outcomes), (loc,))


@pytest.mark.parametrize(
    "make_bad, message",
    [
        (lambda: Categorical(), "Either `probs` or `logits` must be specified"),
        (lambda: Categorical(probs=tl.ones(2), logits=tl.ones(2)), "but not both"),
        (lambda: Categorical(probs=tl.tensor([0.5, -0.1])), "probs must be finite and >= 0"),
        (lambda: Categorical(probs=tl.zeros(3)), "needs a positive sum"),
        (lambda: Categorical(logits=tl.tensor(1.0)), "at least one dimension"),
        (
            lambda: Categorical(logits=tl.zeros(3)).log_prob(tl.tensor([3])),
            "integers in \\[0, 3\\)",
        ),
        (lambda: Normal(0.0, 0.0), "scale must be > 0, got 0.0"),
        (lambda: Bernoulli(probs=tl.tensor([1.5])), "probs must lie in \\[0, 1\\]"),
        (lambda: Bernoulli(logits=tl.zeros(1)).log_prob(tl.tensor([0.5])), "0s and 1s"),
        (lambda: Categorical(logits=tl.zeros(3)).sample((-1,)), "sample_shape must be"),
    ],
)
def test_bad_arguments_raise_value_error(make_bad, message):
    with pytest.raises(ValueError, match=message):
        make_bad()


def test_validation_can_be_turned_off_as_in_pytorch():
    assert Normal(0.0, -1.0, validate_args=False).scale.item() == -1.0
    Distribution.set_default_validate_args(False)
    try:
        assert Categorical(logits=tl.zeros(3)).log_prob(tl.tensor([1])).shape == (1,)
        Normal(0.0, 0.0)  # not checked
    finally:
        Distribution.set_default_validate_args(True)
    with pytest.raises(ValueError):
        Normal(0.0, 0.0)


def test_numbers_become_float32_parameters_and_repr_names_them():
    normal = Normal(0.0, 1.0)
    assert normal.loc.dtype == np.float32 and normal.batch_shape == ()
    assert repr(normal) == "Normal(loc: 0.0, scale: 1.0)"
    assert repr(Categorical(logits=tl.zeros(2, 3))) == "Categorical(logits: shape (2, 3))"
    assert Categorical(probs=[0.5, 0.5]).probs.dtype == np.float32
    assert np.isnan(Categorical(probs=[0.5, 0.5]).mean.item())
    np.testing.assert_allclose(Categorical(logits=tl.zeros(4)).perplexity().item(), 4.0)
