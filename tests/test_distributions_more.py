"""tensorlib.distributions beyond the first three (chapter 3, section 13): Uniform, Exponential,
Laplace, LogNormal, MultivariateNormal, Independent and OneHotCategorical, and kl_divergence,
against PyTorch's (log_prob, entropy, moments, cdf/icdf, KL and their gradients), their samples
against their laws, and their argument checks."""

from __future__ import annotations

import math

import numpy as np
import pytest

import tensorlib as tl
from tensorlib.distributions import (
    Bernoulli,
    Beta,
    Binomial,
    Categorical,
    Dirichlet,
    Distribution,
    Exponential,
    Gamma,
    Independent,
    Laplace,
    LogNormal,
    MultivariateNormal,
    Normal,
    OneHotCategorical,
    Poisson,
    StudentT,
    Uniform,
    kl_divergence,
    register_kl,
)

COV = np.array([[2.0, 0.6, 0.2], [0.6, 1.0, -0.3], [0.2, -0.3, 0.5]])
COV2 = np.array([[1.0, 0.1, 0.0], [0.1, 0.8, 0.2], [0.0, 0.2, 1.5]])
BATCH_COV = np.stack([COV, COV2])


def leaf(lib, values):
    return lib.tensor(np.array(values, dtype=np.float64), requires_grad=True)


def make(lib, kind):
    """(distribution, its parameter leaves, a value for log_prob), float64, in either library."""
    D = lib.distributions
    if kind == "uniform":
        a, b = leaf(lib, [-1.0, 0.5, 2.0]), leaf(lib, [[3.0, 1.0, 2.5], [0.0, 4.0, 3.0]])
        return D.Uniform(a, b), (a, b), lib.tensor(np.array([-0.5, 0.75, 2.25]))
    if kind == "exponential":
        r = leaf(lib, [[0.5, 2.0, 3.0]])
        return D.Exponential(r), (r,), lib.tensor(np.array([[0.1], [2.0]]))
    if kind == "laplace":
        m, s = leaf(lib, [0.5, -1.0, 2.0]), leaf(lib, [1.0, 0.3, 2.5])
        return D.Laplace(m, s), (m, s), lib.tensor(np.array([[0.0, 1.0, 2.5], [3.0, -1.2, 0.0]]))
    if kind == "lognormal":
        m, s = leaf(lib, [0.5, -1.0, 0.0]), leaf(lib, [1.0, 0.5, 2.0])
        return D.LogNormal(m, s), (m, s), lib.tensor(np.array([0.3, 1.0, 5.0]))
    if kind.startswith("mvn"):
        loc = leaf(lib, [[1.0, -2.0, 0.5], [0.0, 0.3, -0.1]])
        m = leaf(lib, BATCH_COV if kind != "mvn scale_tril" else np.linalg.cholesky(BATCH_COV))
        form = kind.split()[1]
        value = lib.tensor(np.array([[[0.0, 0.0, 0.0]], [[1.5, -1.0, 1.0]]]))  # (2, 1, 3)
        return D.MultivariateNormal(loc, **{form: m}), (loc, m), value
    if kind == "independent":
        m, s = leaf(lib, [[0.5, -1.0, 2.0], [0.0, 1.0, 1.0]]), leaf(lib, [1.0, 0.5, 3.0])
        value = lib.tensor(np.array([[0.0, 1.0, 2.5]]))
        return D.Independent(D.Normal(m, s), 1), (m, s), value
    z = leaf(lib, [[2.0, 0.5, -1.0], [0.0, 0.0, 3.0]])
    value = lib.tensor(np.array([[[0.0, 1.0, 0.0], [0.0, 0.0, 1.0]], [[1.0, 0.0, 0.0]] * 2]))
    return D.OneHotCategorical(logits=z), (z,), value


KINDS = ["uniform", "exponential", "laplace", "lognormal", "mvn covariance_matrix",
         "mvn precision_matrix", "mvn scale_tril", "independent", "onehot"]


def numbers(tensor):
    return tensor.detach().numpy()


@pytest.mark.parity
@pytest.mark.parametrize("kind", KINDS)
def test_log_prob_entropy_moments_and_gradients_match_pytorch(kind):
    torch = pytest.importorskip("torch")
    results = []
    for lib in (tl, torch):
        dist, params, value = make(lib, kind)
        log_prob, entropy = dist.log_prob(value), dist.entropy()
        (log_prob.sum() + entropy.sum() + (dist.mean * dist.variance).sum()).backward()
        results.append(
            [numbers(log_prob), numbers(entropy), numbers(dist.mean), numbers(dist.variance),
             numbers(dist.stddev)] + [p.grad.numpy() for p in params]
            + [tuple(dist.batch_shape), tuple(dist.event_shape)]
        )
    ours, theirs = results
    for mine, reference in zip(ours[:-2], theirs[:-2], strict=True):
        np.testing.assert_allclose(mine, reference, rtol=1e-9, atol=1e-11)
    assert ours[-2:] == theirs[-2:]


@pytest.mark.parity
def test_multivariate_normal_matrices_match_pytorch():
    torch = pytest.importorskip("torch")
    for form in ("covariance_matrix", "precision_matrix", "scale_tril"):
        ours, _, _ = make(tl, f"mvn {form}")
        theirs, _, _ = make(torch, f"mvn {form}")
        for name in ("scale_tril", "covariance_matrix", "precision_matrix"):
            np.testing.assert_allclose(numbers(getattr(ours, name)),
                                       numbers(getattr(theirs, name)), rtol=1e-9, atol=1e-11)


@pytest.mark.parity
@pytest.mark.parametrize("kind", ["uniform", "exponential", "laplace", "lognormal", "normal"])
def test_cdf_and_icdf_match_pytorch_with_gradients(kind):
    torch = pytest.importorskip("torch")
    probabilities = np.array([0.05, 0.5, 0.93]).reshape(3, 1, 1)
    results = []
    for lib in (tl, torch):
        if kind == "normal":
            m, s = leaf(lib, [0.5, -1.0]), leaf(lib, [1.0, 2.0])
            dist, params = lib.distributions.Normal(m, s), (m, s)
        else:
            dist, params, _ = make(lib, kind)
        x = dist.icdf(lib.tensor(probabilities))
        cdf = dist.cdf(x.detach() + 0.01)
        (x.sum() + cdf.sum()).backward()
        results.append([numbers(x), numbers(cdf)] + [p.grad.numpy() for p in params])
    for mine, reference in zip(*results, strict=True):
        np.testing.assert_allclose(mine, reference, rtol=1e-9, atol=1e-11)


def kl_pair(lib, kind):
    """Two distributions of one family, and the float64 leaves they were built from."""
    D, made = lib.distributions, []

    def t(values):
        made.append(leaf(lib, values))
        return made[-1]

    pairs = {
        "normal": lambda: (D.Normal(t([0.5, -1.0]), t([1.0, 0.5])),
                           D.Normal(t([0.0, 1.0]), t([2.0, 0.7]))),
        "bernoulli": lambda: (D.Bernoulli(probs=t([0.2, 0.9, 0.0])),
                              D.Bernoulli(logits=t([0.3, -1.0, 2.0]))),
        "categorical": lambda: (D.Categorical(probs=t([[0.2, 0.3, 0.5], [0.0, 0.4, 0.6]])),
                                D.Categorical(logits=t([[0.1, 0.2, -1.0], [1.0, 0.0, 0.5]]))),
        "onehot": lambda: (D.OneHotCategorical(logits=t([0.5, 0.1, -0.3])),
                           D.OneHotCategorical(probs=t([0.2, 0.2, 0.6]))),
        "uniform": lambda: (D.Uniform(t([0.0, -1.0, 0.5]), t([1.0, 2.0, 1.5])),
                            D.Uniform(t([-0.5]), t([1.6]))),
        "exponential": lambda: (D.Exponential(t([0.5, 2.0])), D.Exponential(t([1.5, 0.3]))),
        "laplace": lambda: (D.Laplace(t([0.5, -1.0]), t([1.0, 0.4])),
                            D.Laplace(t([0.0, 1.0]), t([2.0, 0.6]))),
        "lognormal": lambda: (D.LogNormal(t([0.5]), t([1.0])),
                              D.LogNormal(t([0.0, 1.0]), t([2.0, 0.6]))),
        "mvn": lambda: (D.MultivariateNormal(t([[1.0, -2.0, 0.5], [0.0, 0.3, -0.1]]),
                                             covariance_matrix=t(BATCH_COV)),
                        D.MultivariateNormal(t([0.2, 0.1, 0.0]),
                                             scale_tril=t(np.linalg.cholesky(COV2)))),
        "independent": lambda: (
            D.Independent(D.Normal(t([[0.5, -1.0], [0.0, 2.0]]), t([1.0, 0.5])), 1),
            D.Independent(D.Normal(t([0.0, 1.0]), t([[2.0, 0.7], [1.0, 1.0]])), 1)),
    }
    p, q = pairs[kind]()
    return p, q, made


def assert_kl_matches_pytorch(make_pair, kind, rtol):
    """``kl_divergence(p, q)`` of ``make_pair(lib, kind)`` and its gradients in the pair's leaves
    agree between tensorlib and PyTorch (an infinite KL is compared, and left out of the loss)."""
    torch = pytest.importorskip("torch")
    results = []
    for lib in (tl, torch):
        p, q, leaves = make_pair(lib, kind)
        kl = lib.distributions.kl_divergence(p, q)
        finite = lib.tensor(np.isfinite(numbers(kl)))
        loss = lib.where(finite, kl, lib.zeros_like(kl)).sum()
        grads = lib.autograd.grad(loss, leaves, allow_unused=True)
        results.append([numbers(kl)] + [np.zeros(1) if g is None else g.numpy() for g in grads])
    for mine, reference in zip(*results, strict=True):
        np.testing.assert_allclose(mine, reference, rtol=rtol, atol=1e-11)


KL_KINDS = ["normal", "bernoulli", "categorical", "onehot", "uniform", "exponential", "laplace",
            "lognormal", "mvn", "independent"]


@pytest.mark.parity
@pytest.mark.parametrize("kind", KL_KINDS)
def test_kl_divergence_and_its_gradients_match_pytorch(kind):
    assert_kl_matches_pytorch(kl_pair, kind, 1e-9)


SAMPLED = [  # (distribution, mean, variance) of each coordinate
    (lambda: Uniform(-1.0, 3.0), 1.0, 16 / 12),
    (lambda: Exponential(tl.tensor([0.5, 4.0])), np.array([2.0, 0.25]), np.array([4.0, 0.0625])),
    (lambda: Laplace(1.0, 0.5), 1.0, 0.5),
    (lambda: LogNormal(0.2, 0.5), np.exp(0.325), np.expm1(0.25) * np.exp(0.65)),
    (lambda: MultivariateNormal(tl.tensor([1.0, -2.0, 0.5]), tl.tensor(COV).float()), np.array(
        [1.0, -2.0, 0.5]), np.diag(COV)),
    (lambda: Independent(Normal(tl.tensor([0.0, 3.0]), tl.tensor([1.0, 2.0])), 1),
     np.array([0.0, 3.0]), np.array([1.0, 4.0])),
    (lambda: OneHotCategorical(probs=tl.tensor([0.2, 0.3, 0.5])), np.array([0.2, 0.3, 0.5]),
     np.array([0.16, 0.21, 0.25])),
]


@pytest.mark.parametrize("index", range(len(SAMPLED)))
def test_samples_have_the_law_and_repeat_for_the_same_generator_state(index):
    make_dist, mean, variance = SAMPLED[index]
    dist, n = make_dist(), 200_000
    tl.manual_seed(3)
    draws = dist.sample((n,))
    assert tuple(draws.shape) == (n, *dist.batch_shape, *dist.event_shape)
    x = draws.numpy().astype(np.float64)
    np.testing.assert_allclose(x.mean(0), mean, atol=6 * np.sqrt(np.max(variance) / n) + 1e-3)
    np.testing.assert_allclose(x.var(0), variance, rtol=0.03)
    tl.manual_seed(3)
    assert np.array_equal(dist.sample((n,)).numpy(), draws.numpy())
    assert not np.array_equal(dist.sample((n,)).numpy(), draws.numpy())


def test_multivariate_normal_samples_have_the_covariance():
    tl.manual_seed(4)
    draws = MultivariateNormal(tl.zeros(3, dtype=tl.float64), tl.tensor(COV)).sample((200_000,))
    np.testing.assert_allclose(np.cov(draws.numpy().T), COV, atol=0.03)


def test_rsample_gradients_follow_the_fixed_noise_formulas():
    """Each rsample is a function x(theta, noise): its gradient is that function's, with the
    noise recovered from the draw."""
    low, high = leaf(tl, [0.5, -1.0]), leaf(tl, [2.0, 0.0])
    x = Uniform(low, high).rsample((5,))
    x.sum().backward()
    u = (x.detach().numpy() - [0.5, -1.0]) / np.array([1.5, 1.0])
    np.testing.assert_allclose(low.grad.numpy(), (1 - u).sum(0))
    np.testing.assert_allclose(high.grad.numpy(), u.sum(0))
    rate = leaf(tl, [0.5, 3.0])
    x = Exponential(rate).rsample((5,))
    x.sum().backward()
    np.testing.assert_allclose(rate.grad.numpy(), (-x.detach().numpy() / [0.5, 3.0]).sum(0))
    loc, scale = leaf(tl, [0.5, -1.0]), leaf(tl, [1.0, 2.0])
    for cls in (Laplace, LogNormal):
        loc.grad = scale.grad = None
        x = cls(loc, scale).rsample((5,))
        x.sum().backward()
        y = x.detach().numpy() if cls is Laplace else np.log(x.detach().numpy())
        noise = (y - [0.5, -1.0]) / np.array([1.0, 2.0])
        outer = np.ones_like(y) if cls is Laplace else x.detach().numpy()
        np.testing.assert_allclose(loc.grad.numpy(), outer.sum(0))
        np.testing.assert_allclose(scale.grad.numpy(), (outer * noise).sum(0))
    mu, tril = leaf(tl, [1.0, -2.0, 0.5]), leaf(tl, np.linalg.cholesky(COV))
    x = MultivariateNormal(mu, scale_tril=tril).rsample((4,))
    weights = np.arange(12.0).reshape(4, 3)
    (x * tl.tensor(weights)).sum().backward()
    eps = np.linalg.solve(np.linalg.cholesky(COV), (x.detach().numpy() - mu.detach().numpy()).T).T
    np.testing.assert_allclose(mu.grad.numpy(), weights.sum(0))
    np.testing.assert_allclose(tril.grad.numpy(), weights.T @ eps, atol=1e-12)


@pytest.mark.parametrize("kind", ["uniform", "exponential", "laplace", "lognormal",
                                  "mvn covariance_matrix", "mvn scale_tril", "independent",
                                  "onehot"])
def test_log_prob_passes_gradcheck(kind):
    dist, params, value = make(tl, kind)
    cls = type(dist)

    def log_prob(*leaves):
        if kind == "mvn covariance_matrix":  # a symmetric function of the entries
            cov = (leaves[1] + leaves[1].mT) / 2
            return MultivariateNormal(leaves[0], cov, validate_args=False).log_prob(value)
        if kind == "mvn scale_tril":
            tril = tl.tril(leaves[1])
            return MultivariateNormal(leaves[0], scale_tril=tril).log_prob(value)
        if kind == "independent":
            return Independent(Normal(*leaves), 1).log_prob(value)
        if kind == "onehot":
            return OneHotCategorical(logits=leaves[0]).log_prob(value)
        return cls(*leaves).log_prob(value)

    inputs = tuple(p.detach().requires_grad_() for p in params)
    assert tl.autograd.gradcheck(log_prob, inputs)


def test_float32_by_default_and_python_numbers_take_the_tensor_dtype():
    assert Uniform(0, 1).sample((2,)).dtype == tl.float32
    assert Laplace(tl.tensor([0.0], dtype=tl.float64), 2).scale.dtype == tl.float64
    assert Exponential(2.0).log_prob(1.0).dtype == tl.float32
    assert OneHotCategorical(probs=tl.tensor([0.5, 0.5])).sample((4,)).dtype == tl.float32
    assert Independent(Normal(tl.zeros(2, 3), 1.0), 1).entropy().shape == (2,)
    assert Independent(Normal(tl.zeros(2, 3), 1.0), 2).entropy().shape == ()


BAD = [
    (lambda: Uniform(1.0, 1.0), ValueError, "low must be < high"),
    (lambda: Exponential(tl.tensor([1.0, 0.0])), ValueError, "rate must be > 0"),
    (lambda: Laplace(0.0, -1.0), ValueError, "scale must be > 0"),
    (lambda: LogNormal(0.0, 0.0), ValueError, "scale must be > 0"),
    (lambda: MultivariateNormal(tl.zeros(2)), ValueError, "Exactly one of"),
    (lambda: MultivariateNormal(tl.zeros(2), tl.eye(2), scale_tril=tl.eye(2)), ValueError,
     "Exactly one of"),
    (lambda: MultivariateNormal(tl.tensor(0.0), tl.eye(1)), ValueError, "at least one-dim"),
    (lambda: MultivariateNormal(tl.zeros(2), tl.eye(3)), ValueError, r"shape \(\.\.\., 2, 2\)"),
    (lambda: MultivariateNormal(tl.zeros(2), tl.tensor([[1.0, 2.0], [2.0, 1.0]])), ValueError,
     "symmetric positive definite"),
    (lambda: MultivariateNormal(tl.zeros(2), scale_tril=tl.tensor([[1.0, 1.0], [0.0, 1.0]])),
     ValueError, "lower triangular"),
    (lambda: Independent(Normal(tl.zeros(2), 1.0), 2), ValueError,
     "reinterpreted_batch_ndims <= len"),
    (lambda: OneHotCategorical(), ValueError, "Either `probs` or `logits`"),
    (lambda: Uniform(0.0, 1.0).log_prob(1.5), ValueError, r"in \[low, high\]"),
    (lambda: Exponential(1.0).log_prob(-0.5), ValueError, ">= 0"),
    (lambda: LogNormal(0.0, 1.0).log_prob(0.0), ValueError, "within the support"),
    (lambda: OneHotCategorical(probs=tl.tensor([0.5, 0.5])).log_prob(tl.tensor([1.0, 1.0])),
     ValueError, "one-hot"),
    (lambda: kl_divergence(Laplace(0.0, 1.0), Normal(0.0, 1.0)), NotImplementedError,
     "Laplace and q of type Normal"),
    (lambda: kl_divergence(MultivariateNormal(tl.zeros(2), tl.eye(2)),
                           MultivariateNormal(tl.zeros(3), tl.eye(3))), ValueError,
     "different event shapes"),
    (lambda: kl_divergence(Independent(Normal(tl.zeros(2, 2), 1.0), 1),
                           Independent(Normal(tl.zeros(2, 2), 1.0), 2)), NotImplementedError,
     "reinterpreted_batch_ndims"),
    (lambda: register_kl(int, Normal), TypeError, "subclasses of Distribution"),
]


@pytest.mark.parametrize("index", range(len(BAD)))
def test_bad_arguments_raise_clear_errors(index):
    call, error, message = BAD[index]
    with pytest.raises(error, match=message):
        call()


def test_without_validation_outside_the_support_is_minus_infinity():
    assert Uniform(0.0, 1.0, validate_args=False).log_prob(1.5).item() == float("-inf")
    assert Uniform(-1.0, -1.0, validate_args=False).batch_shape == ()


def test_register_kl_dispatches_to_the_most_specific_pair_and_raises_for_none():
    class MyNormal(Normal):
        pass

    p, q = MyNormal(0.0, 1.0), Normal(1.0, 1.0)
    assert kl_divergence(p, q).item() == pytest.approx(0.5)  # the Normal-Normal entry
    try:
        @register_kl(MyNormal, Normal)
        def _mine(p, q):
            return tl.tensor(-1.0)

        assert kl_divergence(p, q).item() == -1.0
        assert kl_divergence(q, p).item() == pytest.approx(0.5)
    finally:
        from tensorlib.distributions.kl import _KL_REGISTRY
        del _KL_REGISTRY[MyNormal, Normal]
    assert issubclass(OneHotCategorical, Distribution)
    assert kl_divergence(Bernoulli(probs=tl.tensor([0.5])),
                         Bernoulli(probs=tl.tensor([0.0]))).item() == float("inf")
    assert kl_divergence(Categorical(probs=tl.tensor([0.5, 0.5])),
                         Categorical(probs=tl.tensor([1.0, 0.0]))).item() == float("inf")


# ---- the gamma family and the counts --------------------------------------------------------


def make_gamma_family(lib, kind):
    """(distribution, its parameter leaves, a value for log_prob), float64, in either library."""
    D = lib.distributions
    if kind == "gamma":
        a, b = leaf(lib, [0.5, 1.0, 7.5]), leaf(lib, [[2.0], [0.3]])
        return D.Gamma(a, b), (a, b), lib.tensor(np.array([0.2, 1.0, 4.0]))
    if kind == "beta":
        a, b = leaf(lib, [0.5, 2.0, 3.0]), leaf(lib, [1.5, 0.7, 3.0])
        return D.Beta(a, b), (a, b), lib.tensor(np.array([[0.1, 0.5, 0.9], [0.3, 0.99, 0.2]]))
    if kind == "dirichlet":
        c = leaf(lib, [[0.5, 2.0, 3.0], [1.0, 1.0, 4.0]])
        return D.Dirichlet(c), (c,), lib.tensor(np.array([[0.2, 0.3, 0.5]]))
    if kind == "poisson":
        r = leaf(lib, [0.5, 3.0, 20.0])
        return D.Poisson(r), (r,), lib.tensor(np.array([[0.0, 2.0, 25.0], [1.0, 0.0, 18.0]]))
    if kind == "binomial probs":
        p = leaf(lib, [0.2, 0.5, 0.9])
        n = lib.tensor(np.array([7.0, 7.0, 7.0]))
        return D.Binomial(n, probs=p), (p,), lib.tensor(np.array([3.0, 4.0, 6.0]))
    if kind == "binomial logits":
        z = leaf(lib, [-2.0, 0.3, 40.0])
        return D.Binomial(5, logits=z), (z,), lib.tensor(np.array([[0.0, 2.0, 5.0]]))
    df, m, s = leaf(lib, [0.8, 1.5, 5.0]), leaf(lib, [0.5, -1.0, 2.0]), leaf(lib, [1.0, 0.3, 2.5])
    return D.StudentT(df, m, s), (df, m, s), lib.tensor(np.array([0.0, 1.0, 2.5]))


FAMILY = ["gamma", "beta", "dirichlet", "poisson", "binomial probs", "binomial logits", "studentT"]


@pytest.mark.parity
@pytest.mark.parametrize("kind", FAMILY)
def test_gamma_family_log_prob_entropy_moments_and_gradients_match_pytorch(kind):
    torch = pytest.importorskip("torch")
    results = []
    for lib in (tl, torch):
        dist, params, value = make_gamma_family(lib, kind)
        log_prob = dist.log_prob(value)
        entropy = dist.entropy() if kind != "poisson" else log_prob.sum() * 0
        finite = lib.tensor(np.isfinite(numbers(dist.variance)))
        moments = lib.where(finite, dist.mean * dist.variance, lib.zeros_like(dist.variance))
        (log_prob.sum() + entropy.sum() + moments.sum()).backward()
        results.append(
            [numbers(log_prob), numbers(entropy), numbers(dist.mean), numbers(dist.variance)]
            + [p.grad.numpy() for p in params]
            + [tuple(dist.batch_shape), tuple(dist.event_shape)]
        )
    ours, theirs = results
    for mine, reference in zip(ours[:-2], theirs[:-2], strict=True):  # RTOL: see below
        np.testing.assert_allclose(mine, reference, rtol=FAMILY_RTOL, atol=1e-11)
    assert ours[-2:] == theirs[-2:]


# The entropies' and KLs' gradients need digamma's derivative, polygamma(1, x), where PyTorch's
# shorter series is off by up to 5e-10 relative (book/promises.md); values agree to ~1e-15.
FAMILY_RTOL = 1e-8


def family_pair(lib, kind):
    D, made = lib.distributions, []

    def t(values):
        made.append(leaf(lib, values))
        return made[-1]

    pairs = {
        "gamma": lambda: (D.Gamma(t([0.5, 2.0]), t([1.0, 3.0])), D.Gamma(t([1.5]), t([0.7]))),
        "beta": lambda: (D.Beta(t([0.5, 2.0]), t([1.0, 3.0])), D.Beta(t([1.5, 0.4]), t([0.7]))),
        "dirichlet": lambda: (D.Dirichlet(t([[0.5, 2.0, 1.0], [1.0, 1.0, 1.0]])),
                              D.Dirichlet(t([1.5, 0.4, 2.0]))),
        "poisson": lambda: (D.Poisson(t([0.5, 4.0])), D.Poisson(t([2.0, 3.0]))),
        "binomial": lambda: (D.Binomial(lib.tensor(np.array([5.0, 8.0])), probs=t([0.2, 0.6])),
                             D.Binomial(5, logits=t([0.3, -0.5]))),
    }
    p, q = pairs[kind]()
    return p, q, made


@pytest.mark.parity
@pytest.mark.parametrize("kind", ["gamma", "beta", "dirichlet", "poisson", "binomial"])
def test_gamma_family_kl_divergence_matches_pytorch(kind):
    assert_kl_matches_pytorch(family_pair, kind, FAMILY_RTOL)


FAMILY_SAMPLED = [  # (distribution, mean, variance) of each coordinate
    (lambda: Gamma(tl.tensor([0.1, 0.5, 1.0, 7.5, 300.0]), 2.0),
     np.array([0.05, 0.25, 0.5, 3.75, 150.0]), np.array([0.025, 0.125, 0.25, 1.875, 75.0])),
    (lambda: Beta(tl.tensor([0.5, 2.0]), tl.tensor([0.5, 5.0])), np.array([0.5, 2 / 7]),
     np.array([0.125, 10 / 392])),
    (lambda: Dirichlet(tl.tensor([1.0, 2.0, 3.0])), np.array([1, 2, 3]) / 6,
     np.array([5, 8, 9]) / 252),
    (lambda: Poisson(tl.tensor([0.5, 20.0])), np.array([0.5, 20.0]), np.array([0.5, 20.0])),
    (lambda: Binomial(tl.tensor([10.0, 3.0]), probs=tl.tensor([0.1, 0.5])), np.array([1.0, 1.5]),
     np.array([0.9, 0.75])),
    (lambda: StudentT(tl.tensor([5.0, 30.0]), 1.0, 2.0), np.array([1.0, 1.0]),
     np.array([20 / 3, 4 * 30 / 28])),
]


@pytest.mark.parametrize("index", range(len(FAMILY_SAMPLED)))
def test_gamma_family_samples_have_the_law_and_repeat(index):
    make_dist, mean, variance = FAMILY_SAMPLED[index]
    dist, n = make_dist(), 200_000
    tl.manual_seed(6)
    draws = dist.sample((n,))
    assert tuple(draws.shape) == (n, *dist.batch_shape, *dist.event_shape)
    assert draws.dtype == tl.float32
    x = draws.numpy().astype(np.float64)
    np.testing.assert_allclose(x.mean(0), mean, atol=0, rtol=0.01 + 6 * np.sqrt(
        np.max(variance / mean**2) / n))
    np.testing.assert_allclose(x.var(0), variance, rtol=0.05)
    tl.manual_seed(6)
    assert np.array_equal(dist.sample((n,)).numpy(), draws.numpy())


def test_gamma_sampler_matches_the_gamma_cdf():
    """Kolmogorov-Smirnov against the CDF of Gamma(alpha, 1) (integrated log_prob)."""
    for alpha in (0.3, 1.0, 4.0, 50.0):
        tl.manual_seed(7)
        x = np.sort(Gamma(tl.tensor(alpha, dtype=tl.float64), 1.0).sample((20_000,)).numpy())
        grid = np.geomspace(1e-12, x[-1], 400_001)  # fine near 0, where x**(alpha-1) is steep
        density = np.exp(Gamma(tl.tensor(alpha, dtype=tl.float64), 1.0).log_prob(
            tl.tensor(grid)).numpy())
        cdf = np.concatenate([[0.0], np.cumsum((density[1:] + density[:-1]) / 2 * np.diff(grid))])
        cdf += grid[0] ** alpha / math.gamma(alpha + 1)  # the mass below the first point
        empirical = np.arange(1, x.size + 1) / x.size
        assert np.max(np.abs(np.interp(x, grid, cdf) - empirical)) < 1.95 / np.sqrt(x.size)


def test_binomial_entropy_needs_one_total_count_and_poisson_has_none():
    with pytest.raises(NotImplementedError, match="Inhomogeneous total count"):
        Binomial(tl.tensor([2.0, 3.0]), probs=tl.tensor([0.5, 0.5])).entropy()
    with pytest.raises(NotImplementedError, match="Poisson.entropy"):
        Poisson(1.0).entropy()
    with pytest.raises(NotImplementedError, match="rsample"):
        Poisson(1.0).rsample()


FAMILY_BAD = [
    (lambda: Gamma(0.0, 1.0), "concentration must be > 0"),
    (lambda: Gamma(1.0, -1.0), "rate must be > 0"),
    (lambda: Beta(1.0, 0.0), "concentrations must be > 0"),
    (lambda: Dirichlet(tl.tensor(1.0)), "at least one-dimensional"),
    (lambda: Dirichlet(tl.tensor([1.0, -1.0])), "concentration must be > 0"),
    (lambda: Poisson(-1.0), "rate must be >= 0"),
    (lambda: Binomial(2.5, probs=0.5), "whole numbers >= 0"),
    (lambda: Binomial(3, probs=1.5), r"probs must lie in \[0, 1\]"),
    (lambda: Binomial(3), "Either `probs` or `logits`"),
    (lambda: StudentT(0.0), "df must be > 0"),
    (lambda: StudentT(1.0, 0.0, -2.0), "scale must be > 0"),
    (lambda: Gamma(1.0, 1.0).log_prob(0.0), "> 0"),
    (lambda: Beta(1.0, 1.0).log_prob(1.5), r"in \[0, 1\]"),
    (lambda: Dirichlet(tl.tensor([1.0, 1.0])).log_prob(tl.tensor([0.5, 0.6])), "simplex"),
    (lambda: Poisson(1.0).log_prob(1.5), "whole numbers >= 0"),
    (lambda: Binomial(3, probs=0.5).log_prob(4.0), r"in \[0, total_count\]"),
    (lambda: kl_divergence(Binomial(3, probs=0.5), Binomial(4, probs=0.5)),
     "q.total_count > p.total_count"),
]


@pytest.mark.parametrize("index", range(len(FAMILY_BAD)))
def test_gamma_family_bad_arguments_raise_clear_errors(index):
    call, message = FAMILY_BAD[index]
    with pytest.raises((ValueError, NotImplementedError), match=message):
        call()


@pytest.mark.parametrize("kind", ["gamma", "beta", "dirichlet", "poisson", "binomial logits",
                                  "studentT"])
def test_gamma_family_log_prob_passes_gradcheck(kind):
    dist, params, value = make_gamma_family(tl, kind)
    cls = type(dist)

    def log_prob(*leaves):
        if kind == "binomial logits":
            return Binomial(5, logits=leaves[0]).log_prob(value)
        return cls(*leaves).log_prob(value)

    assert tl.autograd.gradcheck(log_prob, tuple(p.detach().requires_grad_() for p in params))
