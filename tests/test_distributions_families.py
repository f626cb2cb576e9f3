"""Chapter 3, section 13: LogisticNormal, OneHotCategoricalStraightThrough, InverseGamma,
Kumaraswamy and NegativeBinomial against PyTorch 2.13 (log_prob, entropy, mean, mode, variance,
arg_constraints, support, expand), their samples against their laws (fixed seeds; the
generators differ from PyTorch's), and float64 gradchecks through rsample and log_prob."""

from __future__ import annotations

import re

import numpy as np
import pytest

import tensorlib as tl
from tensorlib.distributions import (
    FisherSnedecor,
    GeneralizedPareto,
    InverseGamma,
    Kumaraswamy,
    LogisticNormal,
    NegativeBinomial,
    OneHotCategoricalStraightThrough,
    TransformedDistribution,
)

F64 = np.float64


def _t(lib, values, **kw):
    return lib.tensor(np.asarray(values, dtype=F64), **kw)


def _np(x):
    return x.detach().numpy() if hasattr(x, "detach") else np.asarray(x)


def _make(lib, name):
    """(distribution, a value in its support), float64, in either library."""
    D = lib.distributions
    if name == "logistic_normal":
        return (D.LogisticNormal(_t(lib, [[0.2, -0.5, 1.0], [0.0, 0.3, -1.2]]),
                                 _t(lib, [1.0, 0.5, 2.0])),
                _t(lib, [[0.1, 0.2, 0.3, 0.4], [0.25, 0.25, 0.4, 0.1]]))
    if name == "logistic_normal_scalar":
        return D.LogisticNormal(_t(lib, 0.3), _t(lib, 1.5)), _t(lib, [0.3, 0.7])
    if name == "straight_through":
        return (D.OneHotCategoricalStraightThrough(logits=_t(lib, [[0.5, -1.0, 2.0],
                                                                   [0.0, 0.0, 1.0]])),
                _t(lib, [[0.0, 0.0, 1.0], [1.0, 0.0, 0.0]]))
    if name == "inverse_gamma":
        return (D.InverseGamma(_t(lib, [0.5, 1.5, 3.0, 7.0]), _t(lib, [2.0, 0.5, 1.0, 3.0])),
                _t(lib, [0.3, 1.0, 2.5, 0.1]))
    if name == "kumaraswamy":
        return (D.Kumaraswamy(_t(lib, [0.5, 2.0, 3.0, 1.0]), _t(lib, [2.0, 0.5, 3.0, 1.0])),
                _t(lib, [0.1, 0.5, 0.7, 0.99]))
    if name == "negative_binomial":
        return (D.NegativeBinomial(_t(lib, [2.0, 7.5, 0.5, 3.0]),
                                   probs=_t(lib, [0.3, 0.6, 0.0, 0.9])),
                _t(lib, [0.0, 4.0, 2.0, 11.0]))
    if name == "negative_binomial_logits":
        return (D.NegativeBinomial(_t(lib, [2.0, 7.5]), logits=_t(lib, [-0.5, 1.5])),
                _t(lib, [3.0, 0.0]))
    if name == "generalized_pareto":  # float32: PyTorch's isclose there fails for float64
        f32 = lambda v: lib.tensor(np.asarray(v, dtype=np.float32))  # noqa: E731
        return (D.GeneralizedPareto(f32([1.0, 0.0, -1.0, 2.0]), f32([2.0, 0.5, 1.0, 3.0]),
                                    f32([-0.5, 0.0, 0.3, 1.5])),
                f32([2.0, 0.7, 0.5, 10.0]))
    if name == "fisher_snedecor":
        return (D.FisherSnedecor(_t(lib, [1.0, 3.0, 10.0, 2.5]), _t(lib, [1.5, 5.0, 20.0, 4.5])),
                _t(lib, [0.3, 1.0, 2.5, 0.1]))
    if name == "continuous_bernoulli":
        return (D.ContinuousBernoulli(_t(lib, [0.1, 0.4995, 0.5, 0.7, 0.999])),
                _t(lib, [0.3, 0.0, 0.5, 1.0, 0.9]))
    if name == "continuous_bernoulli_logits":
        return D.ContinuousBernoulli(logits=_t(lib, [-2.0, 0.001, 3.0])), _t(lib, [0.3, 0.5, 0.9])
    if name == "von_mises":
        return (D.VonMises(_t(lib, [0.5, -2.0, 3.0, 0.0]), _t(lib, [0.3, 2.0, 3.75, 20.0])),
                _t(lib, [0.0, 1.5, -3.0, 7.0]))
    if name == "lowrank_mvn":
        return (D.LowRankMultivariateNormal(
                    _t(lib, [[0.0, 1.0, -1.0], [0.5, 0.0, 2.0]]),
                    _t(lib, [[1.0, 0.0], [0.5, 1.0], [0.0, -1.0]]), _t(lib, [0.5, 1.0, 0.2])),
                _t(lib, [[0.3, -1.0, 0.5], [1.0, 1.0, 1.0]]))
    raise KeyError(name)


NAMES = ["logistic_normal", "logistic_normal_scalar", "straight_through", "inverse_gamma",
         "kumaraswamy", "negative_binomial", "negative_binomial_logits", "generalized_pareto",
         "fisher_snedecor", "continuous_bernoulli", "continuous_bernoulli_logits", "von_mises",
         "lowrank_mvn"]


def _close(a, b, what):
    single = _np(a).dtype == np.float32
    np.testing.assert_allclose(_np(a), _np(b), rtol=2e-6 if single else 1e-10,
                               atol=1e-6 if single else 1e-12, err_msg=what, equal_nan=True)


def _plain(text):
    return re.sub(r"\s+", "", re.sub(r"dtype=(torch|tensorlib)\.", "dtype=", text))


@pytest.mark.parity
@pytest.mark.parametrize("name", NAMES)
def test_family_matches_pytorch(name):
    torch = pytest.importorskip("torch")
    ours, value = _make(tl, name)
    theirs, tvalue = _make(torch, name)
    assert type(ours).__name__ == type(theirs).__name__
    assert ours.batch_shape == tuple(theirs.batch_shape)
    assert ours.event_shape == tuple(theirs.event_shape)
    _close(ours.log_prob(value), theirs.log_prob(tvalue), "log_prob")
    for attribute in ("mean", "mode", "variance", "entropy"):
        try:
            expected = getattr(theirs, attribute)
            expected = expected() if callable(expected) else expected
        except NotImplementedError:
            continue
        try:
            got = getattr(ours, attribute)
            got = got() if callable(got) else got
        except NotImplementedError:
            continue
        _close(got, expected, attribute)
    assert {k: _plain(repr(v)) for k, v in ours.arg_constraints.items()} == {
        k: _plain(repr(v)) for k, v in theirs.arg_constraints.items()}
    assert _plain(repr(ours.support)) == _plain(repr(theirs.support))
    wide, twide = ours.expand((5, *ours.batch_shape)), theirs.expand((5, *theirs.batch_shape))
    assert type(wide) is type(ours) and wide.batch_shape == tuple(twide.batch_shape)
    _close(wide.log_prob(value), twide.log_prob(tvalue), "expanded log_prob")
    assert ours.has_rsample == theirs.has_rsample
    for method in ("cdf", "icdf", "log_survival_function", "log_cdf"):
        if name == "generalized_pareto":
            u = np.array([0.1, 0.3, 0.6, 0.9], dtype=np.float32)
            argument = (value, tvalue) if method != "icdf" else (tl.tensor(u), torch.tensor(u))
            _close(getattr(ours, method)(argument[0]), getattr(theirs, method)(argument[1]),
                   method)
    if name.startswith("continuous_bernoulli"):
        u = [0.05, 0.5, 0.9][: ours.batch_shape[0]] + [0.3] * (ours.batch_shape[0] - 3)
        _close(ours.cdf(value), theirs.cdf(tvalue), "cdf")
        _close(ours.icdf(_t(tl, u)), theirs.icdf(_t(torch, u)), "icdf")
        ef = torch.distributions.ExponentialFamily
        _close(tl.distributions.ExponentialFamily.entropy(ours), ef.entropy(theirs),
               "ExponentialFamily.entropy")


@pytest.mark.parametrize(("make", "mean", "variance"), [
    (lambda: InverseGamma(tl.tensor([8.0, 10.0]), 2.0), [2 / 7, 2 / 9],
     [4 / (49 * 6), 4 / (81 * 8)]),
    (lambda: Kumaraswamy(2.0, tl.tensor([0.5, 3.0])), None, None),
    (lambda: NegativeBinomial(tl.tensor([2.0, 7.5]), probs=tl.tensor([0.3, 0.6])),
     [2 * 0.3 / 0.7, 7.5 * 0.6 / 0.4], [2 * 0.3 / 0.49, 7.5 * 0.6 / 0.16]),
    (lambda: GeneralizedPareto(1.0, 2.0, tl.tensor([-0.5, 0.0, 0.1])), [2 / 1.5 + 1, 3.0,
     1 + 2 / 0.9], [4 / (2.25 * 2), 4.0, 4 / (0.81 * 0.8)]),
    (lambda: FisherSnedecor(tl.tensor([3.0, 10.0]), tl.tensor([12.0, 20.0])), [1.2, 20 / 18],
     [2 * 144 * 13 / (3 * 100 * 8), 2 * 400 * 28 / (10 * 324 * 16)]),
])
def test_samples_follow_the_moments(make, mean, variance):
    tl.manual_seed(3)
    dist = make()
    draws = dist.sample((400_000,)).numpy().astype(F64)
    mean = dist.mean.numpy() if mean is None else np.array(mean)
    variance = dist.variance.numpy() if variance is None else np.array(variance)
    np.testing.assert_allclose(dist.mean.numpy(), mean, rtol=1e-6)
    np.testing.assert_allclose(dist.variance.numpy(), variance, rtol=1e-6)
    assert (np.abs(draws.mean(0) - mean) < 6 * np.sqrt(variance / len(draws))).all()
    assert (np.abs(draws.var(0) / variance - 1) < 0.05).all()


def test_negative_binomial_frequencies_match_its_probabilities():
    tl.manual_seed(5)
    dist = NegativeBinomial(3.0, probs=0.4)
    draws = dist.sample((200_000,)).numpy().astype(int)
    expected = np.exp(dist.log_prob(tl.tensor(np.arange(8.0))).numpy())
    observed = np.bincount(draws, minlength=8)[:8] / len(draws)
    assert np.abs(observed - expected).max() < 6 * np.sqrt(0.25 / len(draws))


def test_logistic_normal_is_the_stick_broken_normal():
    tl.manual_seed(1)
    dist = LogisticNormal(tl.tensor([0.5, -0.5]), tl.tensor([0.2, 0.3]))
    assert isinstance(dist, TransformedDistribution) and dist.event_shape == (3,)
    draws = dist.rsample((50_000,)).numpy().astype(F64)
    assert np.allclose(draws.sum(-1), 1, atol=1e-6)
    x = np.log(draws[:, :2]) - np.log(1 - np.cumsum(draws[:, :2], -1)) + np.log([2.0, 1.0])
    assert np.allclose(x.mean(0), [0.5, -0.5], atol=0.01)
    assert np.allclose(x.std(0), [0.2, 0.3], atol=0.01)


def test_gradchecks():
    loc = tl.tensor([0.2, -0.4], dtype=tl.float64, requires_grad=True)
    scale = tl.tensor([0.7, 1.3], dtype=tl.float64, requires_grad=True)
    point = tl.tensor([0.2, 0.5, 0.3], dtype=tl.float64)

    def logistic_rsample(m, s):
        tl.manual_seed(0)
        return LogisticNormal(m, s).rsample((3,))

    assert tl.autograd.gradcheck(logistic_rsample, (loc, scale))
    assert tl.autograd.gradcheck(lambda m, s: LogisticNormal(m, s).log_prob(point), (loc, scale))
    a = tl.tensor([0.8, 2.0], dtype=tl.float64, requires_grad=True)
    b = tl.tensor([1.5, 3.0], dtype=tl.float64, requires_grad=True)
    x = tl.tensor([0.3, 0.6], dtype=tl.float64)

    def kumaraswamy_rsample(a, b):
        tl.manual_seed(0)
        return Kumaraswamy(a, b).rsample((4,))

    assert tl.autograd.gradcheck(kumaraswamy_rsample, (a, b))
    for fn in (lambda a, b: Kumaraswamy(a, b).log_prob(x),
               lambda a, b: Kumaraswamy(a, b).entropy(),
               lambda a, b: Kumaraswamy(a, b).variance,
               lambda a, b: InverseGamma(a + 2, b).log_prob(x),
               lambda a, b: InverseGamma(a + 2, b).entropy(),
               lambda a, b: NegativeBinomial(a, logits=b - 2).log_prob(tl.tensor([0.0, 3.0]))):
        assert tl.autograd.gradcheck(fn, (a, b))


def test_straight_through_gradient_is_that_of_the_probabilities():
    logits = tl.tensor([0.5, -1.0, 2.0], dtype=tl.float64, requires_grad=True)
    dist = OneHotCategoricalStraightThrough(logits=logits)
    dist.sample()  # caching probs in sample() must not cut the gradient of rsample
    draw = dist.rsample()
    assert draw.sum().item() == 1.0
    weights = tl.tensor([1.0, 2.0, 3.0], dtype=tl.float64)
    (draw * weights).sum().backward()
    p = dist.probs.detach().numpy()
    assert np.allclose(logits.grad.numpy(), p * (weights.numpy() - (p * weights.numpy()).sum()))


def test_von_mises_and_continuous_bernoulli_samples():
    tl.manual_seed(9)
    circle = tl.distributions.VonMises(tl.tensor([0.5, 3.0]), tl.tensor([0.3, 8.0]))
    angles = circle.sample((200_000,)).numpy().astype(F64)
    assert ((angles >= -np.pi) & (angles < np.pi)).all()
    mean_vector = np.exp(1j * angles).mean(0)
    assert np.allclose(1 - np.abs(mean_vector), circle.variance.numpy(), atol=0.005)
    assert abs(np.angle(mean_vector)[1] - 3.0) < 0.01
    bern = tl.distributions.ContinuousBernoulli(tl.tensor([0.1, 0.5, 0.8]))
    draws = bern.sample((200_000,)).numpy().astype(F64)
    assert np.allclose(draws.mean(0), bern.mean.numpy(), atol=0.003)
    assert np.allclose(draws.var(0), bern.variance.numpy(), atol=0.002)


def test_von_mises_and_continuous_bernoulli_gradchecks():
    D = tl.distributions
    probs = tl.tensor([0.2, 0.7, 0.95], dtype=tl.float64, requires_grad=True)
    u = tl.tensor([0.1, 0.5, 0.8], dtype=tl.float64)
    x = tl.tensor([0.3, 0.6, 0.99], dtype=tl.float64)
    assert tl.autograd.gradcheck(lambda p: D.ContinuousBernoulli(p).icdf(u), (probs,))
    assert tl.autograd.gradcheck(lambda p: D.ContinuousBernoulli(p).log_prob(x), (probs,))
    assert tl.autograd.gradcheck(lambda p: D.ContinuousBernoulli(p).entropy(), (probs,))
    loc = tl.tensor([0.5, -1.0], dtype=tl.float64, requires_grad=True)
    kappa = tl.tensor([0.7, 6.0], dtype=tl.float64, requires_grad=True)
    angle = tl.tensor([0.1, 2.0], dtype=tl.float64)
    assert tl.autograd.gradcheck(lambda m, k: D.VonMises(m, k).log_prob(angle), (loc, kappa))
    assert tl.autograd.gradcheck(lambda m, k: D.VonMises(m, k).variance, (loc, kappa))


@pytest.mark.parity
def test_lowrank_matrices_match_pytorch():
    torch = pytest.importorskip("torch")
    ours, _ = _make(tl, "lowrank_mvn")
    theirs, _ = _make(torch, "lowrank_mvn")
    for attribute in ("covariance_matrix", "precision_matrix", "scale_tril", "variance"):
        _close(getattr(ours, attribute), getattr(theirs, attribute), attribute)


def test_lowrank_samples_and_gradcheck():
    D = tl.distributions
    tl.manual_seed(4)
    w = tl.tensor([[1.0, 0.0], [0.5, 1.0], [0.0, -1.0]], dtype=tl.float64)
    d = tl.tensor([0.5, 1.0, 0.2], dtype=tl.float64)
    dist = D.LowRankMultivariateNormal(tl.tensor([0.0, 1.0, -1.0], dtype=tl.float64), w, d)
    draws = dist.sample((200_000,)).numpy()
    assert np.allclose(np.cov(draws.T), dist.covariance_matrix.numpy(), atol=0.02)
    loc = tl.tensor([0.0, 1.0, -1.0], dtype=tl.float64, requires_grad=True)
    w = w.detach().requires_grad_()
    d = d.detach().requires_grad_()
    x = tl.tensor([0.3, -1.0, 0.5], dtype=tl.float64)
    assert tl.autograd.gradcheck(
        lambda m, w, d: D.LowRankMultivariateNormal(m, w, d).log_prob(x), (loc, w, d))

    def draws_of(m, w, d):
        tl.manual_seed(1)
        return D.LowRankMultivariateNormal(m, w, d).rsample((2,))

    assert tl.autograd.gradcheck(draws_of, (loc, w, d))
    with pytest.raises(ValueError, match="cov_factor must be a batch of matrices with shape 3"):
        D.LowRankMultivariateNormal(tl.zeros(3), tl.zeros(2, 1), tl.ones(3))
    with pytest.raises(ValueError, match="Incompatible batch shapes"):
        D.LowRankMultivariateNormal(tl.zeros(2, 3), tl.zeros(4, 3, 1), tl.ones(3))


def test_argument_checks():
    with pytest.raises(ValueError, match="total_count must be >= 0"):
        NegativeBinomial(-1.0, probs=0.5)
    with pytest.raises(ValueError, match=r"probs must lie in \[0, 1\)"):
        NegativeBinomial(2.0, probs=1.0)
    with pytest.raises(ValueError, match="whole numbers >= 0"):
        NegativeBinomial(2.0, probs=0.5).log_prob(1.5)
    with pytest.raises(ValueError, match="Either `probs` or `logits` must be specified"):
        NegativeBinomial(2.0)
    with pytest.raises(ValueError, match="within the support"):
        Kumaraswamy(1.0, 2.0).log_prob(1.5)
    with pytest.raises(ValueError, match="must be > 0"):
        InverseGamma(-1.0, 1.0)
    with pytest.raises(ValueError, match="GeneralizedPareto: scale must be > 0"):
        GeneralizedPareto(0.0, -1.0, 0.5)
    with pytest.raises(ValueError, match="must lie in the support"):
        GeneralizedPareto(0.0, 1.0, -0.5).log_prob(3.0)
    with pytest.raises(ValueError, match="df1 and df2 must be > 0"):
        FisherSnedecor(0.0, 1.0)
    with pytest.raises(ValueError, match="VonMises: concentration must be > 0"):
        tl.distributions.VonMises(0.0, 0.0)
    with pytest.raises(ValueError, match="The parameter probs has invalid values"):
        tl.distributions.ContinuousBernoulli(1.5, validate_args=True)
    with pytest.raises(ValueError, match="must lie in"):
        tl.distributions.ContinuousBernoulli(0.3).log_prob(1.5)


def test_generalized_pareto_gradcheck_through_rsample_and_log_prob():
    params = tuple(tl.tensor(v, dtype=tl.float64, requires_grad=True)
                   for v in ([0.5, -1.0], [1.5, 0.7], [0.2, -0.3]))

    def draws(loc, scale, xi):
        tl.manual_seed(2)
        return GeneralizedPareto(loc, scale, xi).rsample((3,))

    assert tl.autograd.gradcheck(draws, params)
    x = tl.tensor([1.0, -0.5], dtype=tl.float64)
    assert tl.autograd.gradcheck(lambda m, s, k: GeneralizedPareto(m, s, k).log_prob(x), params)
    d1 = tl.tensor([3.0, 10.0], dtype=tl.float64, requires_grad=True)
    d2 = tl.tensor([12.0, 20.0], dtype=tl.float64, requires_grad=True)
    y = tl.tensor([0.7, 2.0], dtype=tl.float64)
    assert tl.autograd.gradcheck(lambda a, b: FisherSnedecor(a, b).log_prob(y), (d1, d2))


# -- ExponentialFamily -------------------------------------------------------------------------

def _exp_families(lib):
    D = lib.distributions
    t = lambda v: _t(lib, v)  # noqa: E731
    return {
        "Normal": D.Normal(t([0.5, -1.0]), t([1.5, 0.3])),
        "Bernoulli": D.Bernoulli(t([0.2, 0.9])),
        "Exponential": D.Exponential(t([0.5, 3.0])),
        "Gamma": D.Gamma(t([0.7, 4.0]), t([2.0, 0.5])),
        "Chi2": D.Chi2(t([1.5, 4.0])),
        "Beta": D.Beta(t([0.7, 4.0]), t([2.0, 0.5])),
        "Dirichlet": D.Dirichlet(t([[0.7, 4.0, 1.0], [2.0, 0.5, 3.0]])),
        "Poisson": D.Poisson(t([0.5, 3.0])),
        "ContinuousBernoulli": D.ContinuousBernoulli(t([0.2, 0.9])),
    }


@pytest.mark.parity
@pytest.mark.parametrize("name", list(_exp_families(tl)))
def test_exponential_family_pieces_match_pytorch(name):
    torch = pytest.importorskip("torch")
    ours, theirs = _exp_families(tl)[name], _exp_families(torch)[name]
    assert isinstance(ours, tl.distributions.ExponentialFamily)
    assert isinstance(theirs, torch.distributions.ExponentialFamily)
    for a, b in zip(ours._natural_params, theirs._natural_params, strict=True):
        _close(a, b, "natural parameter")
    _close(ours._log_normalizer(*ours._natural_params),
           theirs._log_normalizer(*theirs._natural_params), "log normalizer")
    base_entropy = tl.distributions.ExponentialFamily.entropy
    if name in ("Poisson", "Beta", "Dirichlet"):  # no _mean_carrier_measure, in both
        with pytest.raises(NotImplementedError, match=f"{name}.entropy"):
            base_entropy(ours)
        with pytest.raises(NotImplementedError):
            torch.distributions.ExponentialFamily.entropy(theirs)
        return
    by_autograd = base_entropy(ours)
    _close(by_autograd, torch.distributions.ExponentialFamily.entropy(theirs), "entropy")
    _close(by_autograd, ours.entropy(), "closed form")


@pytest.mark.parity
def test_bregman_kl_matches_pytorch():
    torch = pytest.importorskip("torch")
    results = []
    for lib in (tl, torch):
        D = lib.distributions
        p = D.ContinuousBernoulli(_t(lib, [0.2, 0.7, 0.4999]))
        q = D.ContinuousBernoulli(_t(lib, [0.6, 0.1, 0.3]))
        results.append(_np(D.kl_divergence(p, q)))
    _close(results[0], results[1], "KL")
    normal = tl.distributions.kl.kl_divergence  # the closed form still wins for Normal pairs
    p, q = tl.distributions.Normal(0.0, 1.0), tl.distributions.Normal(1.0, 2.0)
    bregman = tl.distributions.kl._kl_expfamily_expfamily(p, q)
    assert np.isclose(normal(p, q).item(), bregman.item(), atol=1e-6)
    with pytest.raises(NotImplementedError, match="different exponential families"):
        kl = tl.distributions.kl_divergence
        kl(tl.distributions.Exponential(1.0), tl.distributions.Poisson(1.0))
