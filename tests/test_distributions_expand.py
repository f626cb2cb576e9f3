"""Chapter 3, section 13: the ``constraints`` module, every distribution's ``arg_constraints``,
``support`` and ``expand``, and ``LogNormal`` as a ``TransformedDistribution``, against PyTorch
2.13 (reprs, ``check`` results, shapes, log_prob/entropy/moments after ``expand``, gradients)."""

from __future__ import annotations

import re

import numpy as np
import pytest

import tensorlib as tl
from tensorlib.distributions import (
    Categorical,
    Distribution,
    LogNormal,
    Normal,
    TransformedDistribution,
    constraints,
    kl_divergence,
)
from tensorlib.distributions.transforms import AffineTransform, ExpTransform

F64 = np.float64


def _t(lib, values, **kw):
    return lib.tensor(np.asarray(values, dtype=F64), **kw)


def _np(x):
    return x.detach().numpy() if hasattr(x, "detach") else np.asarray(x)


# -- constraints -------------------------------------------------------------------------------

CONSTRAINT_CASES = [
    ("boolean", lambda C: C.boolean, [0.0, 1.0, 2.0, 0.5]),
    ("one_hot", lambda C: C.one_hot, [[0.0, 1.0, 0.0], [1.0, 1.0, 0.0], [0.0, 0.0, 0.0]]),
    ("integer_interval", lambda C: C.integer_interval(0, 3), [-1.0, 0.0, 2.5, 3.0, 4.0]),
    ("nonnegative_integer", lambda C: C.nonnegative_integer, [-1.0, 0.0, 1.5, 7.0]),
    ("positive_integer", lambda C: C.positive_integer, [0.0, 1.0, 1.5, 7.0]),
    ("less_than", lambda C: C.less_than(2.0), [1.0, 2.0, 3.0]),
    ("half_open_interval", lambda C: C.half_open_interval(0.0, 1.0), [0.0, 0.5, 1.0, -0.1]),
    ("interval", lambda C: C.interval(0.0, 1.0), [0.0, 0.5, 1.0, -0.1]),
    ("greater_than_eq", lambda C: C.greater_than_eq(1.0), [0.5, 1.0, 2.0]),
    ("multinomial", lambda C: C.multinomial(3), [[1.0, 2.0], [2.0, 2.0], [-1.0, 1.0]]),
    ("simplex", lambda C: C.simplex, [[0.25, 0.75], [0.5, 0.6]]),
    ("lower_triangular", lambda C: C.lower_triangular,
     [[[1.0, 0.0], [2.0, -3.0]], [[1.0, 1.0], [0.0, 1.0]]]),
    ("lower_cholesky", lambda C: C.lower_cholesky,
     [[[1.0, 0.0], [2.0, 3.0]], [[1.0, 0.0], [2.0, -3.0]], [[1.0, 1.0], [0.0, 1.0]]]),
    ("corr_cholesky", lambda C: C.corr_cholesky,
     [[[1.0, 0.0], [0.6, 0.8]], [[1.0, 0.0], [0.6, 0.9]]]),
    ("square", lambda C: C.square, [[[1.0, 2.0], [3.0, 4.0]]]),
    ("symmetric", lambda C: C.symmetric, [[[1.0, 2.0], [2.0, 4.0]], [[1.0, 2.0], [3.0, 4.0]]]),
    ("positive_semidefinite", lambda C: C.positive_semidefinite,
     [[[1.0, 1.0], [1.0, 1.0]], [[1.0, 2.0], [2.0, 1.0]], [[2.0, 0.0], [0.0, 1.0]]]),
    ("positive_definite", lambda C: C.positive_definite,
     [[[1.0, 1.0], [1.0, 1.0]], [[1.0, 2.0], [2.0, 1.0]], [[2.0, 0.5], [0.5, 1.0]]]),
    ("real_vector", lambda C: C.real_vector, [[0.0, float("nan")], [1.0, 2.0]]),
    ("independent", lambda C: C.independent(C.positive, 1), [[1.0, 2.0], [1.0, -2.0]]),
    ("cat", lambda C: C.cat([C.real, C.positive, C.unit_interval], 0, [1, 2, 1]),
     [-1.0, 2.0, -3.0, 0.5]),
    ("cat_dim", lambda C: C.cat([C.positive, C.real], -1, [1, 1]), [[1.0, -1.0], [-1.0, 1.0]]),
    ("stack", lambda C: C.stack([C.positive, C.real], -1), [[1.0, -1.0], [-1.0, 1.0]]),
    ("stack0", lambda C: C.stack([C.positive, C.boolean], 0), [[1.0, -1.0], [0.0, 0.5]]),
]


@pytest.mark.parity
@pytest.mark.parametrize(("name", "make", "values"), CONSTRAINT_CASES,
                         ids=[c[0] for c in CONSTRAINT_CASES])
def test_constraints_match_pytorch(name, make, values):
    torch = pytest.importorskip("torch")
    ours, theirs = make(constraints), make(torch.distributions.constraints)
    assert repr(ours) == repr(theirs)
    assert ours.event_dim == theirs.event_dim
    assert ours.is_discrete == theirs.is_discrete
    got = ours.check(_t(tl, values)).numpy()
    expected = theirs.check(_t(torch, values)).numpy()
    np.testing.assert_array_equal(got, expected)


@pytest.mark.parity
def test_dependent_constraints_match_pytorch():
    torch = pytest.importorskip("torch")
    C, TC = constraints, torch.distributions.constraints
    assert C.is_dependent(C.dependent) and not C.is_dependent(C.real)
    flagged = C.dependent(is_discrete=True, event_dim=1)
    assert (flagged.is_discrete, flagged.event_dim) == (True, 1)
    assert repr(C.dependent) == repr(TC.dependent)
    with pytest.raises(NotImplementedError, match="cannot be determined statically"):
        _ = C.dependent.event_dim
    with pytest.raises(ValueError, match="Cannot determine validity of dependent constraint"):
        C.dependent.check(tl.tensor(0.0))

    class Box:
        @C.dependent_property(is_discrete=False, event_dim=0)
        def support(self):
            return C.interval(0.0, self.top)

    box = Box()
    box.top = 2.0
    assert C.is_dependent(Box.support) and Box.support.event_dim == 0
    assert repr(box.support) == repr(TC.interval(0.0, 2.0))


@pytest.mark.parity
def test_mixture_same_family_constraint_matches_pytorch():
    torch = pytest.importorskip("torch")
    results = []
    for lib in (tl, torch):
        C = lib.distributions.constraints
        constraint = C.MixtureSameFamilyConstraint(C.independent(C.positive, 1))
        value = _t(lib, [[[1.0, 2.0], [1.0, -2.0]], [[0.5, 0.5], [3.0, 1.0]]])
        results.append((repr(constraint), constraint.event_dim,
                        constraint.check(value).tolist()))
    assert results[0] == (results[1][0], results[1][1], results[1][2])
    with pytest.raises(TypeError, match="base_constraint must be a Constraint"):
        constraints.MixtureSameFamilyConstraint("positive")


@pytest.mark.parity
def test_validate_sample_matches_pytorch():
    torch = pytest.importorskip("torch")
    cases = [lambda lib: 0.5, lambda lib: _t(lib, [[0.1, 0.2]]), lambda lib: _t(lib, [0.1] * 4),
             lambda lib: _t(lib, [-1.0, 1.0, 2.0])]
    for make in cases:
        messages = []
        for lib in (tl, torch):
            dist = lib.distributions.Exponential(_t(lib, [1.0, 2.0, 3.0]))
            try:
                dist._validate_sample(make(lib))
                messages.append(None)
            except ValueError as error:
                messages.append(str(error).split(":")[0])
        assert messages[0] == messages[1]
    Normal(tl.zeros(3), 1.0)._validate_sample(tl.zeros(2, 3))


def test_cat_and_stack_errors():
    with pytest.raises(ValueError, match="2 constraints but 1 lengths"):
        constraints.cat([constraints.real, constraints.real], 0, [1])
    with pytest.raises(ValueError, match="dim 1 is out of range"):
        constraints.stack([constraints.real], 1).check(tl.zeros(2))


# -- arg_constraints and support of every class ------------------------------------------------

def _families(lib):
    """(name, distribution) pairs built the same way in either library, float64."""
    D = lib.distributions
    t = lambda v: _t(lib, v)  # noqa: E731
    probs = t([[0.2, 0.3, 0.5], [0.6, 0.3, 0.1]])
    from_rb = lib.distributions.relaxed_bernoulli
    from_rc = lib.distributions.relaxed_categorical
    return [
        ("Normal", D.Normal(t([0.0, 1.0]), t([1.0, 2.0]))),
        ("Bernoulli", D.Bernoulli(probs=t([0.2, 0.7]))),
        ("BernoulliLogits", D.Bernoulli(logits=t([0.2, -0.7]))),
        ("Categorical", D.Categorical(probs=probs)),
        ("CategoricalLogits", D.Categorical(logits=probs)),
        ("Uniform", D.Uniform(t([0.0, 1.0]), t([2.0, 3.0]))),
        ("Exponential", D.Exponential(t([0.5, 2.0]))),
        ("Laplace", D.Laplace(t([0.0, 1.0]), t([1.0, 2.0]))),
        ("LogNormal", D.LogNormal(t([0.0, 1.0]), t([1.0, 0.5]))),
        ("MultivariateNormal", D.MultivariateNormal(
            t([[0.0, 1.0], [1.0, 2.0]]), covariance_matrix=t([[2.0, 0.5], [0.5, 1.0]]))),
        ("Independent", D.Independent(D.Normal(t([[0.0, 1.0]]), t([[1.0, 2.0]])), 1)),
        ("OneHotCategorical", D.OneHotCategorical(probs=probs)),
        ("Gamma", D.Gamma(t([1.5, 3.0]), t([2.0, 0.5]))),
        ("Chi2", D.Chi2(t([1.5, 3.0]))),
        ("Beta", D.Beta(t([1.5, 3.0]), t([2.0, 0.5]))),
        ("Dirichlet", D.Dirichlet(t([[1.5, 3.0, 0.5], [1.0, 2.0, 3.0]]))),
        ("Poisson", D.Poisson(t([0.5, 3.0]))),
        ("Binomial", D.Binomial(t([5.0, 5.0]), probs=t([0.2, 0.7]))),
        ("StudentT", D.StudentT(t([3.0, 5.0]), t([0.0, 1.0]), t([1.0, 2.0]))),
        ("Multinomial", D.Multinomial(4, probs=probs)),
        ("MixtureSameFamily", D.MixtureSameFamily(
            D.Categorical(probs=probs[:, :2]), D.Normal(t([[0.0, 1.0]]), t([[1.0, 2.0]])))),
        ("Cauchy", D.Cauchy(t([0.0, 1.0]), t([1.0, 2.0]))),
        ("Geometric", D.Geometric(t([0.2, 0.7]))),
        ("Gumbel", D.Gumbel(t([0.0, 1.0]), t([1.0, 2.0]))),
        ("HalfNormal", D.HalfNormal(t([1.0, 2.0]))),
        ("HalfCauchy", D.HalfCauchy(t([1.0, 2.0]))),
        ("Weibull", D.Weibull(t([1.0, 2.0]), t([0.5, 3.0]))),
        ("Pareto", D.Pareto(t([1.0, 2.0]), t([3.0, 4.0]))),
        ("RelaxedBernoulli", D.RelaxedBernoulli(t(0.5), probs=t([0.2, 0.7]))),
        ("LogitRelaxedBernoulli", from_rb.LogitRelaxedBernoulli(t(0.5), probs=t([0.2, 0.7]))),
        ("RelaxedOneHotCategorical", D.RelaxedOneHotCategorical(t(0.5), probs=probs)),
        ("ExpRelaxedCategorical", from_rc.ExpRelaxedCategorical(t(0.5), probs=probs)),
        ("TransformedDistribution", D.TransformedDistribution(
            D.Normal(t([0.0, 1.0]), t([1.0, 2.0])), [D.ExpTransform()])),
    ]


def _value(name, dist, lib):
    """A value in the support of shape (1,) + batch_shape + event_shape."""
    grid = {
        "Bernoulli": [1.0, 0.0], "BernoulliLogits": [1.0, 0.0], "Categorical": [2.0, 0.0],
        "CategoricalLogits": [1.0, 2.0], "Poisson": [0.0, 4.0], "Binomial": [2.0, 5.0],
        "Geometric": [0.0, 3.0], "Multinomial": [[1.0, 1.0, 2.0], [0.0, 4.0, 0.0]],
        "OneHotCategorical": [[0.0, 1.0, 0.0], [1.0, 0.0, 0.0]],
        "Dirichlet": [[0.2, 0.3, 0.5], [0.6, 0.1, 0.3]],
        "RelaxedOneHotCategorical": [[0.2, 0.3, 0.5], [0.6, 0.1, 0.3]],
        "ExpRelaxedCategorical": [[-1.2, -0.3, -0.5], [-0.6, -0.1, -2.3]],
        "Beta": [0.3, 0.8], "RelaxedBernoulli": [0.3, 0.8], "Uniform": [1.5, 2.5],
        "Pareto": [1.5, 2.5],
        "MultivariateNormal": [[0.5, 0.5], [1.0, 3.0]], "Independent": [[0.5, 1.5]],
        "Gumbel": [0.5, 1.5],
    }
    values = grid.get(name, [0.5, 1.5])
    if name == "Categorical" or name == "CategoricalLogits":
        return lib.tensor(np.array([values], dtype=np.int64))
    return _t(lib, [values])


def _plain(text):
    """A repr without the library's name in dtypes."""
    return re.sub(r"dtype=(torch|tensorlib)\.", "dtype=", text)


FAMILY_NAMES = [name for name, _ in _families(tl)]


@pytest.mark.parity
@pytest.mark.parametrize("name", FAMILY_NAMES)
def test_arg_constraints_and_support_match_pytorch(name):
    torch = pytest.importorskip("torch")
    ours = dict(_families(tl))[name]
    theirs = dict(_families(torch))[name]
    assert {k: _plain(repr(v)) for k, v in ours.arg_constraints.items()} == {
        k: _plain(repr(v)) for k, v in theirs.arg_constraints.items()}
    assert _plain(repr(ours.support)) == _plain(repr(theirs.support))
    assert ours.support.event_dim == theirs.support.event_dim
    assert ours.support.is_discrete == theirs.support.is_discrete
    value = _value(name, ours, tl)
    assert bool(ours.support.check(value).all())


@pytest.mark.parity
@pytest.mark.parametrize("name", FAMILY_NAMES)
def test_class_level_dependence_matches_pytorch(name):
    torch = pytest.importorskip("torch")
    ours, theirs = type(dict(_families(tl))[name]), type(dict(_families(torch))[name])
    for attr in ("support",):
        a, b = ours.__dict__.get(attr), None
        for klass in theirs.__mro__:
            if attr in klass.__dict__:
                b = klass.__dict__[attr]
                break
        for klass in ours.__mro__:
            if attr in klass.__dict__:
                a = klass.__dict__[attr]
                break
        assert constraints.is_dependent(a) == torch.distributions.constraints.is_dependent(b)


# -- expand ------------------------------------------------------------------------------------

def _compare(a, b, what):
    np.testing.assert_allclose(_np(a), _np(b), rtol=1e-10, atol=1e-12, err_msg=what)


@pytest.mark.parity
@pytest.mark.parametrize("name", FAMILY_NAMES)
def test_expand_matches_pytorch(name):
    torch = pytest.importorskip("torch")
    ours = dict(_families(tl))[name].expand((3, 2))
    theirs = dict(_families(torch))[name].expand(torch.Size((3, 2)))
    assert type(ours).__name__ == type(theirs).__name__
    assert ours.batch_shape == tuple(theirs.batch_shape) == (3, 2)
    assert ours.event_shape == tuple(theirs.event_shape)
    assert ours._validate_args == theirs._validate_args
    value_ours, value_theirs = _value(name, ours, tl), _value(name, theirs, torch)
    _compare(ours.log_prob(value_ours), theirs.log_prob(value_theirs), "log_prob")
    assert tuple(ours.log_prob(value_ours).shape) == tuple(theirs.log_prob(value_theirs).shape)
    for attribute in ("mean", "variance"):
        try:
            expected = getattr(theirs, attribute)
        except NotImplementedError:
            continue
        _compare(getattr(ours, attribute), expected, attribute)
    try:
        expected = theirs.entropy()
    except (NotImplementedError, AttributeError):  # PyTorch's expanded Multinomial: no entropy
        return
    try:
        got = ours.entropy()
    except NotImplementedError:
        return  # (the relaxed ones: no entropy in tensorlib)
    _compare(got, expected, "entropy")


@pytest.mark.parametrize("name", FAMILY_NAMES)
def test_expand_samples_have_the_expanded_shape(name):
    dist = dict(_families(tl))[name].expand((3, 2))
    draws = dist.sample((4,))
    assert tuple(draws.shape) == (4, 3, 2, *dist.event_shape)


def test_expand_shares_parameters_and_gradients():
    mu = tl.tensor([0.0, 1.0], dtype=tl.float64, requires_grad=True)
    wide = Normal(mu, 1.0).expand((3, 2))
    assert np.shares_memory(wide.loc.numpy(), mu.detach().numpy())
    wide.log_prob(tl.zeros(3, 2, dtype=tl.float64)).sum().backward()
    assert mu.grad.tolist() == [0.0, -3.0]


def test_expand_keeps_validate_args_and_the_original():
    base = Normal(tl.zeros(2), 1.0, validate_args=False)
    wide = base.expand([4, 2])
    assert wide._validate_args is False and base.batch_shape == (2,)
    assert wide.expand((5, 4, 2)).batch_shape == (5, 4, 2)


def test_expand_gradcheck_through_rsample_and_log_prob():
    loc = tl.tensor([0.3, -0.5], dtype=tl.float64, requires_grad=True)
    scale = tl.tensor([1.2, 0.7], dtype=tl.float64, requires_grad=True)
    value = tl.tensor([[0.1, 0.2], [1.0, -1.0], [0.5, 2.0]], dtype=tl.float64)

    def log_prob(m, s):
        return LogNormal(m, s).expand((3, 2)).log_prob(value.exp())

    def rsample(m, s):
        tl.manual_seed(4)
        return Normal(m, s).expand((3, 2)).rsample((2,))

    assert tl.autograd.gradcheck(log_prob, (loc, scale))
    assert tl.autograd.gradcheck(rsample, (loc, scale))


def test_expand_errors():
    with pytest.raises(ValueError, match="cannot be broadcast"):
        Normal(tl.zeros(3), 1.0).expand((4,))
    with pytest.raises(ValueError, match="sample_shape must be a sequence of ints"):
        Normal(0.0, 1.0).expand((-1,))

    class Shifted(Normal):
        def __init__(self, loc):
            super().__init__(loc, 1.0)

    with pytest.raises(NotImplementedError, match="Subclass Shifted of Normal that defines a "
                       "custom __init__ method must also define a custom .expand"):
        Shifted(0.0).expand((2,))
    with pytest.raises(NotImplementedError, match="Distribution.expand"):
        Distribution().expand((2,))


@pytest.mark.parity
def test_transformed_distribution_expands_a_broadcast_base_like_pytorch():
    torch = pytest.importorskip("torch")
    results = []
    for lib in (tl, torch):
        D = lib.distributions
        loc = _t(lib, [0.0, 1.0, -2.0])
        dist = D.TransformedDistribution(D.Normal(_t(lib, 0.5), _t(lib, 2.0)),
                                         D.AffineTransform(loc, 3.0))
        value = _t(lib, [[0.3, 1.0, 5.0]])
        results.append((tuple(dist.batch_shape), tuple(dist.base_dist.batch_shape),
                        _np(dist.log_prob(value))))
    assert results[0][:2] == results[1][:2] == ((3,), (3,))
    _compare(results[0][2], results[1][2], "log_prob")


# -- LogNormal as a TransformedDistribution ----------------------------------------------------

@pytest.mark.parity
def test_lognormal_is_a_transformed_normal_and_matches_pytorch():
    torch = pytest.importorskip("torch")
    outs = []
    for lib in (tl, torch):
        D = lib.distributions
        loc, scale = _t(lib, [0.2, -1.0, 0.0]), _t(lib, [0.5, 2.0, 1.0])
        dist = D.LogNormal(loc, scale)
        assert isinstance(dist, D.TransformedDistribution)
        assert isinstance(dist.base_dist, D.Normal)
        value = _t(lib, [0.3, 4.0, 1.0])
        u = _t(lib, [0.1, 0.5, 0.9])
        outs.append([_np(x) for x in (dist.log_prob(value), dist.entropy(), dist.mean,
                                      dist.mode, dist.variance, dist.stddev, dist.cdf(value),
                                      dist.icdf(u))])
        outs[-1].append(_np(D.kl_divergence(dist, D.LogNormal(scale, loc.exp()))))
    for ours, theirs in zip(*outs, strict=True):
        _compare(ours, theirs, "LogNormal")


def test_lognormal_keeps_its_transform_and_validation():
    dist = LogNormal(0.0, 1.0)
    assert isinstance(dist, TransformedDistribution) and dist.has_rsample
    assert dist.transforms == [ExpTransform()]
    assert repr(dist) == "LogNormal(loc: 0.0, scale: 1.0)"
    with pytest.raises(ValueError, match=r"within the support \(GreaterThan\(lower_bound=0.0\)\)"):
        dist.log_prob(-1.0)


def test_kl_of_transformed_pairs_needs_the_same_transforms():
    p = TransformedDistribution(Normal(0.0, 1.0), [AffineTransform(0.0, 2.0)])
    q = TransformedDistribution(Normal(1.0, 1.0), [AffineTransform(0.0, 3.0)])
    with pytest.raises(NotImplementedError):
        kl_divergence(p, q)
    same = kl_divergence(LogNormal(0.0, 1.0), LogNormal(1.0, 2.0))
    assert np.isclose(same.item(), kl_divergence(Normal(0.0, 1.0), Normal(1.0, 2.0)).item())


def test_lognormal_samples_follow_its_moments():
    tl.manual_seed(0)
    draws = LogNormal(0.0, 0.5).sample((200_000,)).numpy().astype(F64)
    mean, var = np.exp(0.125), np.expm1(0.25) * np.exp(0.25)
    assert abs(draws.mean() - mean) < 6 * np.sqrt(var / draws.size)
    assert abs(np.log(draws).std() - 0.5) < 0.005


def test_categorical_expand_keeps_number_of_classes():
    rows = Categorical(logits=tl.tensor([0.0, 1.0, 2.0])).expand((4,))
    assert rows.param_shape == (4, 3) and repr(rows.support) == (
        "IntegerInterval(lower_bound=0, upper_bound=2)")
