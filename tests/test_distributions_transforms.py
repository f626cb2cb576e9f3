"""tensorlib.distributions' transforms, TransformedDistribution, constraints and the families
built on them (chapter 3, section 13): Gumbel, Cauchy, HalfNormal, HalfCauchy, Chi2, Geometric,
Weibull, Pareto, Multinomial and MixtureSameFamily, against PyTorch's (log_prob, entropy,
moments, cdf/icdf, shapes and gradients), float64 gradchecks through rsample and log_prob, their
samples against their laws, their argument checks, and SAC's squashed Gaussian end to end."""

from __future__ import annotations

import math

import numpy as np
import pytest

import tensorlib as tl
from tensorlib.distributions import (
    AbsTransform,
    AffineTransform,
    Categorical,
    Cauchy,
    Chi2,
    ComposeTransform,
    ExpTransform,
    Geometric,
    Gumbel,
    HalfCauchy,
    HalfNormal,
    Independent,
    MixtureSameFamily,
    Multinomial,
    Normal,
    Pareto,
    PowerTransform,
    RelaxedBernoulli,
    RelaxedOneHotCategorical,
    SoftmaxTransform,
    TanhTransform,
    Transform,
    TransformedDistribution,
    Weibull,
    constraints,
    identity_transform,
)


def leaf(lib, values):
    return lib.tensor(np.array(values, dtype=np.float64), requires_grad=True)


def f64(lib, values):
    return lib.tensor(np.array(values, dtype=np.float64))


def make(lib, kind):
    """(distribution, its parameter leaves, a value for log_prob), float64, in either library."""
    D = lib.distributions
    T = D.transforms
    if kind == "gumbel":
        m, s = leaf(lib, [0.5, -1.0, 2.0]), leaf(lib, [[2.0, 0.3, 1.0]])
        return D.Gumbel(m, s), (m, s), f64(lib, [0.7, -2.5, 4.0])
    if kind == "cauchy":
        m, s = leaf(lib, [0.5, -1.0]), leaf(lib, [2.0, 0.3])
        return D.Cauchy(m, s), (m, s), f64(lib, [[0.7, 2.5], [-3.0, 0.0]])
    if kind == "half_normal":
        s = leaf(lib, [0.5, 2.0])
        return D.HalfNormal(s), (s,), f64(lib, [0.7, 2.5])
    if kind == "half_cauchy":
        s = leaf(lib, [0.5, 2.0])
        return D.HalfCauchy(s), (s,), f64(lib, [0.7, 2.5])
    if kind == "chi2":
        k = leaf(lib, [0.5, 3.0])
        return D.Chi2(k), (k,), f64(lib, [0.7, 2.5])
    if kind == "geometric":
        p = leaf(lib, [0.3, 0.8])
        return D.Geometric(p), (p,), f64(lib, [0.0, 3.0])
    if kind == "geometric logits":
        z = leaf(lib, [0.3, -2.0])
        return D.Geometric(logits=z), (z,), f64(lib, [2.0, 0.0])
    if kind == "weibull":
        s, c = leaf(lib, [0.5, 2.0]), leaf(lib, [1.5, 0.7])
        return D.Weibull(s, c), (s, c), f64(lib, [0.7, 2.5])
    if kind == "pareto":
        s, a = leaf(lib, [0.5, 2.0]), leaf(lib, [2.5, 3.7])
        return D.Pareto(s, a), (s, a), f64(lib, [0.7, 2.5])
    if kind == "tanh normal":
        m, s = leaf(lib, [0.5, 2.0]), leaf(lib, [1.5, 0.7])
        dist = D.TransformedDistribution(D.Normal(m, s), [T.TanhTransform(cache_size=1)])
        return dist, (m, s), f64(lib, [0.3, -0.9])
    if kind == "sigmoid affine":
        m, s = leaf(lib, [0.5, 2.0]), leaf(lib, [1.5, 0.7])
        transforms = [T.SigmoidTransform(), T.AffineTransform(1.0, -3.0)]
        return D.TransformedDistribution(D.Normal(m, s), transforms), (m, s), f64(lib, [0.2, -1.5])
    if kind == "exp power":
        m, s = leaf(lib, [0.5, 2.0, 0.1]), leaf(lib, [1.5, 0.7, 1.0])
        transforms = [T.ExpTransform(), T.PowerTransform(f64(lib, 2.0))]
        return D.TransformedDistribution(D.Normal(m, s), transforms), (m, s), f64(lib, [0.7, 2, 1])
    if kind == "affine vector":
        m, s = leaf(lib, [[0.5, 2.0, 0.1]]), leaf(lib, [1.5, 0.7, 1.0])
        t = T.AffineTransform(f64(lib, [1.0, 2.0, 3.0]), f64(lib, [0.5, -2.0, 3.0]), event_dim=1)
        return D.TransformedDistribution(D.Normal(m, s), t), (m, s), f64(lib, [0.7, 2.5, 1.1])
    if kind == "multinomial":
        p = leaf(lib, [[0.2, 0.3, 0.5], [0.1, 0.6, 0.3]])
        return D.Multinomial(5, probs=p), (p,), f64(lib, [[1.0, 1.0, 3.0], [0.0, 0.0, 5.0]])
    if kind == "multinomial logits":
        z = leaf(lib, [0.2, -0.3, 1.5])
        return D.Multinomial(4, logits=z), (z,), f64(lib, [[1.0, 1.0, 2.0], [0.0, 4.0, 0.0]])
    if kind == "mixture":
        w, m = leaf(lib, [[0.1, 0.5], [1.0, -1.0]]), leaf(lib, [[0.0, 2.0], [1.0, -1.0]])
        s = leaf(lib, [[1.0, 0.5], [2.0, 1.0]])
        dist = D.MixtureSameFamily(D.Categorical(logits=w), D.Normal(m, s))
        return dist, (w, m, s), f64(lib, [[0.3, 1.0], [2.0, -0.5]])
    if kind == "mixture vector":
        w, m = leaf(lib, [0.1, 0.5]), leaf(lib, [[0.0, 2.0, 1.0], [1.0, -1.0, 0.0]])
        s = leaf(lib, [[1.0, 0.5, 1.0], [2.0, 1.0, 1.5]])
        dist = D.MixtureSameFamily(D.Categorical(logits=w), D.Independent(D.Normal(m, s), 1))
        return dist, (w, m, s), f64(lib, [[0.3, 1.0, 2.0], [0.0, 0.0, 0.0]])
    if kind == "relaxed bernoulli":
        t, p = leaf(lib, [0.5, 2.0]), leaf(lib, [0.3, 0.8])
        return D.RelaxedBernoulli(t, probs=p), (t, p), f64(lib, [[0.2, 0.9], [0.6, 0.01]])
    if kind == "logit relaxed bernoulli":
        t, z = leaf(lib, 0.7), leaf(lib, [0.3, -2.0])
        return D.relaxed_bernoulli.LogitRelaxedBernoulli(t, logits=z), (t, z), f64(lib, [1.5, -0.3])
    if kind == "relaxed one hot":
        t, z = leaf(lib, 0.5), leaf(lib, [[0.3, -1.0, 0.5], [1.0, 0.0, 0.2]])
        return D.RelaxedOneHotCategorical(t, logits=z), (t, z), f64(
            lib, [[0.2, 0.3, 0.5], [0.7, 0.2, 0.1]])
    if kind == "exp relaxed categorical":
        t, p = leaf(lib, 0.7), leaf(lib, [0.2, 0.3, 0.5])
        dist = D.relaxed_categorical.ExpRelaxedCategorical(t, probs=p)
        return dist, (t, p), f64(lib, np.log([0.6, 0.3, 0.1]))
    raise ValueError(kind)


KINDS = ["gumbel", "cauchy", "half_normal", "half_cauchy", "chi2", "geometric",
         "geometric logits", "weibull", "pareto", "tanh normal", "sigmoid affine", "exp power",
         "affine vector", "multinomial", "multinomial logits", "mixture", "mixture vector",
         "relaxed bernoulli", "logit relaxed bernoulli", "relaxed one hot",
         "exp relaxed categorical"]
HAS_ENTROPY = {"gumbel", "cauchy", "half_normal", "half_cauchy", "chi2", "geometric",
               "geometric logits", "weibull", "pareto"}
HAS_MOMENTS = HAS_ENTROPY | {"multinomial", "multinomial logits", "mixture", "mixture vector"}
FINITE_MOMENTS = HAS_MOMENTS - {"cauchy", "half_cauchy"}


def numbers(t):
    return t.detach().numpy()


@pytest.mark.parity
@pytest.mark.parametrize("kind", KINDS)
def test_log_prob_entropy_moments_shapes_and_gradients_match_pytorch(kind):
    torch = pytest.importorskip("torch")
    results = []
    for lib in (tl, torch):
        dist, params, value = make(lib, kind)
        log_prob = dist.log_prob(value)
        outputs = [log_prob]
        total = log_prob.sum()
        if kind in HAS_ENTROPY:
            outputs.append(dist.entropy())
            total = total + outputs[-1].sum()
        if kind in HAS_MOMENTS:
            outputs += [dist.mean, dist.variance]
        if kind in FINITE_MOMENTS:
            total = total + (dist.mean * dist.variance).sum()
        total.backward()
        results.append(
            [numbers(o) for o in outputs] + [p.grad.numpy() for p in params]
            + [tuple(dist.batch_shape), tuple(dist.event_shape), tuple(dist.sample((2,)).shape),
               dist.has_rsample]
        )
    ours, theirs = results
    for mine, reference in zip(ours[:-4], theirs[:-4], strict=True):
        assert mine.shape == reference.shape
        np.testing.assert_allclose(mine, reference, rtol=1e-9, atol=1e-11)
    assert ours[-4:] == theirs[-4:]


@pytest.mark.parity
@pytest.mark.parametrize("kind", ["gumbel", "cauchy", "half_normal", "half_cauchy", "weibull",
                                  "pareto", "tanh normal", "sigmoid affine", "exp power"])
def test_cdf_icdf_and_modes_match_pytorch(kind):
    torch = pytest.importorskip("torch")
    results = []
    for lib in (tl, torch):
        dist, params, value = make(lib, kind)
        three = kind in ("gumbel", "exp power")
        probability = f64(lib, [0.2, 0.5, 0.9] if three else [0.2, 0.9])
        cdf, icdf = dist.cdf(value), dist.icdf(probability)
        (cdf.sum() + icdf.sum()).backward()
        row = [numbers(cdf), numbers(icdf)] + [p.grad.numpy() for p in params]
        if kind in HAS_ENTROPY and kind != "weibull":
            row.append(numbers(dist.mode))
        results.append(row)
    for mine, reference in zip(*results, strict=True):
        np.testing.assert_allclose(mine, reference, rtol=1e-9, atol=1e-11)


@pytest.mark.parity
@pytest.mark.parametrize("name", ["Exp", "Sigmoid", "Tanh", "Abs", "Affine", "Power", "Softmax",
                                  "Compose", "Inverse"])
def test_transforms_match_pytorch(name):
    torch = pytest.importorskip("torch")

    def build(lib):
        T = lib.distributions.transforms
        return {
            "Exp": T.ExpTransform(), "Sigmoid": T.SigmoidTransform(),
            "Tanh": T.TanhTransform(), "Abs": T.AbsTransform(),
            "Affine": T.AffineTransform(f64(lib, [1.0, -2.0, 0.5]), -3.0),
            "Power": T.PowerTransform(f64(lib, 2.5)), "Softmax": T.SoftmaxTransform(),
            "Compose": T.ComposeTransform([T.AffineTransform(0.5, 2.0), T.TanhTransform()]),
            "Inverse": T.ExpTransform().inv,
        }[name]

    x = np.array([[0.3, 1.2, 2.0], [0.1, 0.7, 4.0]])
    results = []
    for lib in (tl, torch):
        t = build(lib)
        xs = f64(lib, x)
        y = t(xs)
        row = [numbers(y), numbers(t.inv(y)), t.domain.event_dim, t.codomain.event_dim,
               repr(t.domain), repr(t.codomain), t.bijective]
        if name not in ("Softmax", "Abs"):  # neither library has their log-determinants
            row.append(numbers(t.log_abs_det_jacobian(xs, y)))
        results.append(row)
    ours, theirs = results
    for mine, reference in zip(ours, theirs, strict=True):
        if isinstance(mine, np.ndarray):
            np.testing.assert_allclose(mine, reference, rtol=1e-9, atol=1e-12)
        else:
            assert mine == reference


@pytest.mark.parity
def test_sac_squashed_gaussian_end_to_end_matches_pytorch():
    """SAC's policy: rsample an action through a cached tanh, score it, backpropagate. The draws
    differ between the libraries (different generators), so the same noise is fed to both."""
    torch = pytest.importorskip("torch")
    tl.manual_seed(0)
    noise = tl.randn((5, 2, 3), dtype=tl.float64).numpy()
    noise[0, 1, 2] = 40.0  # saturates tanh: atanh(1) would be infinite without the cache
    grads = []
    for lib in (tl, torch):
        D = lib.distributions
        mu, log_std = leaf(lib, [[0.2, -0.4, 1.0], [2.0, 5.0, -3.0]]), leaf(lib, [[-1.0] * 3] * 2)
        std = log_std.exp()
        squash = D.transforms.TanhTransform(cache_size=1)
        pi = D.TransformedDistribution(D.Normal(mu, std), [squash])
        action = pi.transforms[0](mu + std * lib.tensor(noise))  # rsample with fixed noise
        log_pi = pi.log_prob(action).sum(-1)
        assert tuple(log_pi.shape) == (5, 2) and tuple(pi.rsample().shape) == (2, 3)
        assert np.isfinite(numbers(log_pi)).all()
        (log_pi.mean() + action.pow(2).mean()).backward()
        grads.append([numbers(log_pi), mu.grad.numpy(), log_std.grad.numpy()])
    for mine, reference in zip(*grads, strict=True):
        np.testing.assert_allclose(mine, reference, rtol=1e-9, atol=1e-10)


def test_sac_pattern_rsample_and_log_prob_run_unchanged():
    tl.manual_seed(3)
    mu = tl.zeros(4, 2, requires_grad=True)
    std = tl.ones(4, 2, requires_grad=True)
    pi = TransformedDistribution(Normal(mu, std), [TanhTransform(cache_size=1)])
    action = pi.rsample()
    log_pi = pi.log_prob(action).sum(axis=-1)
    assert action.dtype == tl.float32 and tuple(log_pi.shape) == (4,)
    assert float(action.abs().max()) < 1
    log_pi.sum().backward()
    assert mu.grad is not None and std.grad is not None
    assert np.isfinite(mu.grad.numpy()).all() and np.isfinite(std.grad.numpy()).all()


RSAMPLED = {
    "gumbel": lambda p: Gumbel(p[0], p[1]), "cauchy": lambda p: Cauchy(p[0], p[1]),
    "half_normal": lambda p: HalfNormal(p[1]), "half_cauchy": lambda p: HalfCauchy(p[1]),
    "weibull": lambda p: Weibull(p[1], p[0].exp()), "pareto": lambda p: Pareto(p[1], p[0] + 2),
    "tanh normal": lambda p: TransformedDistribution(Normal(p[0], p[1]), TanhTransform()),
    "relaxed bernoulli": lambda p: RelaxedBernoulli(p[1], logits=p[0]),
    "relaxed one hot": lambda p: RelaxedOneHotCategorical(p[1][0], logits=p[0] * p[1]),
    "affine exp": lambda p: TransformedDistribution(
        Normal(p[0], p[1]), [AffineTransform(0.5, p[1]), ExpTransform()]),
}


@pytest.mark.parametrize("kind", list(RSAMPLED))
def test_rsample_and_log_prob_pass_gradcheck(kind):
    params = (leaf(tl, [0.3, -0.2]), leaf(tl, [0.8, 1.7]))

    def rsample(a, b):
        tl.manual_seed(11)
        return RSAMPLED[kind]((a, b)).rsample((3,))

    def log_prob(a, b):
        return RSAMPLED[kind]((a, b)).log_prob(value)

    value = rsample(*params).detach()
    assert tl.autograd.gradcheck(rsample, params)
    assert tl.autograd.gradcheck(log_prob, params)


@pytest.mark.parametrize("kind", ["geometric", "multinomial", "mixture", "mixture vector",
                                  "relaxed bernoulli", "relaxed one hot"])
def test_log_prob_passes_gradcheck_for_the_discrete_and_mixture_families(kind):
    dist, params, value = make(tl, kind)
    factory = {
        "geometric": lambda p: Geometric(p[0]),
        "multinomial": lambda p: Multinomial(5, probs=p[0]),
        "mixture": lambda p: MixtureSameFamily(Categorical(logits=p[0]), Normal(p[1], p[2])),
        "mixture vector": lambda p: MixtureSameFamily(
            Categorical(logits=p[0]), Independent(Normal(p[1], p[2]), 1)),
        "relaxed bernoulli": lambda p: RelaxedBernoulli(p[0], probs=p[1]),
        "relaxed one hot": lambda p: RelaxedOneHotCategorical(p[0], logits=p[1]),
    }[kind]
    leaves = tuple(p.detach().requires_grad_() for p in params)
    assert tl.autograd.gradcheck(lambda *p: factory(p).log_prob(value), leaves)


SAMPLED = [  # distribution, its mean, its variance
    (Gumbel(0.5, 2.0), 0.5 + 2 * 0.5772156649, math.pi**2 * 4 / 6),
    (HalfNormal(1.5), 1.5 * math.sqrt(2 / math.pi), 2.25 * (1 - 2 / math.pi)),
    (Chi2(4.0), 4.0, 8.0),
    (Geometric(0.3), 1 / 0.3 - 1, (1 / 0.3 - 1) / 0.3),
    (Weibull(2.0, 3.0), 2 * math.gamma(1 + 1 / 3),
     4 * (math.gamma(1 + 2 / 3) - math.gamma(1 + 1 / 3) ** 2)),
    (Pareto(1.0, 5.0), 1.25, 5 / (16 * 3)),
    (MixtureSameFamily(Categorical(tl.tensor([0.3, 0.7])),
                       Normal(tl.tensor([-2.0, 1.0]), tl.tensor([0.5, 1.0]))),
     0.1, 0.3 * 0.25 + 0.7 * 1.0 + 0.3 * 2.1**2 + 0.7 * 0.9**2),
]


@pytest.mark.parametrize("index", range(len(SAMPLED)))
def test_samples_have_the_law_and_repeat_for_the_same_generator_state(index):
    dist, mean, variance = SAMPLED[index]
    tl.manual_seed(21)
    x = dist.sample((200_000,)).numpy().astype(np.float64)
    tl.manual_seed(21)
    again = dist.sample((200_000,)).numpy().astype(np.float64)
    np.testing.assert_array_equal(x, again)
    assert abs(x.mean() - mean) < 0.02 * max(1.0, abs(mean))
    assert abs(x.var() - variance) < 0.04 * max(1.0, variance)


def test_cauchy_draws_follow_their_cdf_and_multinomial_counts_sum_to_total_count():
    tl.manual_seed(4)
    for dist in (Cauchy(1.0, 2.0), HalfCauchy(2.0)):
        x = dist.sample((100_000,))
        for q in (0.25, 0.5, 0.75):
            assert abs((x.numpy() < dist.icdf(q).numpy()).mean() - q) < 0.01
    counts = Multinomial(7, tl.tensor([[0.2, 0.8], [0.5, 0.5]])).sample((1000,))
    assert tuple(counts.shape) == (1000, 2, 2) and counts.dtype == tl.float32
    np.testing.assert_array_equal(counts.numpy().sum(-1), 7)
    np.testing.assert_allclose(counts.numpy().mean(0)[:, 0], [1.4, 3.5], atol=0.15)


def test_transform_caching_inverse_identity_and_equality():
    x = tl.tensor([20.0, 0.5])
    cached, plain = TanhTransform(cache_size=1), TanhTransform()
    y = cached(x)
    assert cached.inv(y) is x
    assert math.isinf(plain.inv(plain(x))[0].item())
    t = ComposeTransform([ExpTransform(), AffineTransform(1.0, 2.0)])
    assert t.inv.inv is t and t.inv(t(x)).numpy()[1] == pytest.approx(0.5)
    assert ExpTransform() == ExpTransform() and ExpTransform().inv == ExpTransform().inv
    assert AffineTransform(1.0, 2.0) == AffineTransform(1.0, 2.0) != AffineTransform(1.0, 3.0)
    assert identity_transform(x) is x and identity_transform.inv(x) is x
    assert t.sign == 1 and AffineTransform(0.0, -2.0).sign == -1 and TanhTransform().event_dim == 0
    assert SoftmaxTransform().domain.event_dim == 1 and SoftmaxTransform().event_dim == 1
    assert AbsTransform().codomain is constraints.positive
    assert bool(constraints.simplex.check(tl.tensor([0.25, 0.75])))
    assert not bool(constraints.interval(-1.0, 1.0).check(tl.tensor(1.5)))
    assert TanhTransform(cache_size=1).with_cache(0) == TanhTransform()
    assert isinstance(PowerTransform(2.0).with_cache(1), PowerTransform)


class Square(Transform):
    """A transform written by a user, from ``_call``, ``_inverse`` and ``log_abs_det_jacobian``."""

    domain = constraints.positive
    codomain = constraints.positive
    bijective = True
    sign = 1

    def _call(self, x):
        return x * x

    def _inverse(self, y):
        return y.sqrt()

    def log_abs_det_jacobian(self, x, y):
        return (2 * x).log()


def test_a_user_transform_gives_the_change_of_variables_density():
    base = Pareto(1.0, 3.0)
    squared = TransformedDistribution(base, Square())
    y = tl.tensor([1.5, 4.0])
    expected = base.log_prob(y.sqrt()) - (2 * y.sqrt()).log()
    np.testing.assert_allclose(squared.log_prob(y).numpy(), expected.numpy(), rtol=1e-6)
    assert squared.support is constraints.positive


BAD = [
    (lambda: TanhTransform(cache_size=2), ValueError, "cache_size must be 0 or 1"),
    (lambda: TransformedDistribution(Normal(0.0, 1.0), "exp"), ValueError,
     "transforms must be a Transform or list"),
    (lambda: TransformedDistribution(Normal(0.0, 1.0), [ExpTransform(), "exp"]), ValueError,
     "transforms must be a Transform or a list of Transforms"),
    (lambda: TransformedDistribution(Normal(0.0, 1.0), SoftmaxTransform()), ValueError,
     "base_distribution needs to have shape with size at least 1"),
    (lambda: TransformedDistribution(Normal(0.0, 1.0), TanhTransform()).log_prob(1.5),
     ValueError, r"within the support \(Interval\(lower_bound=-1.0, upper_bound=1.0\)\)"),
    (lambda: SoftmaxTransform().forward_shape(()), ValueError, "Too few dimensions on input"),
    (lambda: SoftmaxTransform().log_abs_det_jacobian(tl.zeros(2), tl.zeros(2)),
     NotImplementedError, "^$"),
    (lambda: Gumbel(0.0, -1.0), ValueError, "Gumbel: scale must be > 0"),
    (lambda: Cauchy(0.0, 0.0), ValueError, "Cauchy: scale must be > 0"),
    (lambda: HalfNormal(-1.0), ValueError, "HalfNormal: scale must be > 0"),
    (lambda: HalfCauchy(0.0), ValueError, "HalfCauchy: scale must be > 0"),
    (lambda: HalfNormal(1.0).log_prob(-0.5), ValueError, "within the support"),
    (lambda: Chi2(-1.0), ValueError, "concentration must be > 0"),
    (lambda: Geometric(tl.tensor([0.0, 0.5])), ValueError, r"probs must be in \(0, 1\]"),
    (lambda: Geometric(0.5, logits=0.0), ValueError, "Either `probs` or `logits`"),
    (lambda: Geometric(0.5).log_prob(1.5), ValueError, "integers >= 0"),
    (lambda: Weibull(1.0, 0.0), ValueError, "Weibull: concentration must be > 0"),
    (lambda: Weibull(-1.0, 1.0), ValueError, "Weibull: scale must be > 0"),
    (lambda: Pareto(0.0, 1.0), ValueError, "Pareto: scale must be > 0"),
    (lambda: Pareto(1.0, 0.0), ValueError, "rate must be > 0"),
    (lambda: Pareto(2.0, 1.0).log_prob(1.0), ValueError, "GreaterThanEq"),
    (lambda: RelaxedBernoulli(1.0, probs=0.5).log_prob(1.5), ValueError, r"Interval\(lower"),
    (lambda: RelaxedOneHotCategorical(1.0, probs=tl.tensor([0.5, 0.5])).log_prob(
        tl.tensor([0.5, 0.6])), ValueError, r"support \(Simplex\(\)\)"),
    (lambda: RelaxedBernoulli(1.0), ValueError, "Either `probs` or `logits`"),
    (lambda: Multinomial(2.5, tl.tensor([0.5, 0.5])), NotImplementedError,
     "inhomogeneous total_count is not supported"),
    (lambda: Multinomial(3, tl.tensor([0.5, 0.5])).log_prob(tl.tensor([3.0, 1.0])), ValueError,
     r"summing to at most total_count \(3\)"),
    (lambda: MixtureSameFamily(Normal(0.0, 1.0), Normal(tl.zeros(2), 1.0)), ValueError,
     "needs to be an  instance of torch.distributions.Categorical"),
    (lambda: MixtureSameFamily(Categorical(tl.ones(2)), "normal"), ValueError,
     "needs to be an instance of torch.distributions.Distribution"),
    (lambda: MixtureSameFamily(Categorical(tl.ones(3)), Normal(tl.zeros(2), 1.0)), ValueError,
     r"`mixture_distribution component` \(3\) does not equal"),
    (lambda: MixtureSameFamily(Categorical(tl.ones(3, 2)), Normal(tl.zeros(4, 2), 1.0)),
     ValueError, "is not compatible with"),
]


@pytest.mark.parametrize("index", range(len(BAD)))
def test_bad_arguments_raise_clear_errors(index):
    call, error, message = BAD[index]
    with pytest.raises(error, match=message):
        call()


def test_without_validation_half_normal_is_minus_infinity_below_zero():
    assert HalfNormal(1.0, validate_args=False).log_prob(-0.5).item() == float("-inf")
    assert HalfCauchy(1.0, validate_args=False).log_prob(-0.5).item() == float("-inf")


def test_relaxed_draws_tend_to_coins_and_one_hot_vectors_as_the_temperature_falls():
    tl.manual_seed(9)
    cold = RelaxedBernoulli(tl.tensor(0.02), probs=tl.tensor(0.3)).sample((20_000,)).numpy()
    assert ((cold < 0.01) | (cold > 0.99)).mean() > 0.9
    assert abs((cold > 0.5).mean() - 0.3) < 0.02
    draws = RelaxedOneHotCategorical(tl.tensor(0.02), probs=tl.tensor([0.2, 0.3, 0.5])).sample(
        (20_000,)).numpy()
    np.testing.assert_allclose(draws.sum(-1), 1.0, atol=1e-5)
    assert (draws.max(-1) > 0.99).mean() > 0.9
    np.testing.assert_allclose(np.bincount(draws.argmax(-1), minlength=3) / 20_000,
                               [0.2, 0.3, 0.5], atol=0.02)
    warm = RelaxedOneHotCategorical(tl.tensor(1.0), logits=tl.zeros(3))
    assert warm.batch_shape == () and warm.event_shape == (3,)
    assert warm.support is constraints.simplex
