"""Chapter 3, section 13: the transforms added with the constraint registry (Softplus,
LowerCholesky, PositiveDefinite, CorrCholesky, StickBreaking, Independent, Reshape, Cat, Stack,
CumulativeDistribution) and ``biject_to`` / ``transform_to``, against PyTorch 2.13: forward,
inverse, log-determinant, shapes, domains and which transform each constraint gets; float64
gradchecks through the differentiable ones."""

from __future__ import annotations

import numpy as np
import pytest

import tensorlib as tl
from tensorlib.distributions import Normal, constraints
from tensorlib.distributions.constraint_registry import (
    ConstraintRegistry,
    biject_to,
    transform_to,
)
from tensorlib.distributions.transforms import (
    AffineTransform,
    CatTransform,
    CorrCholeskyTransform,
    ExpTransform,
    IndependentTransform,
    ReshapeTransform,
    SoftplusTransform,
    StackTransform,
    StickBreakingTransform,
)

F64 = np.float64
X_VEC = [[-1.5, 0.2, 0.7, 2.0, -0.3, 1.1], [0.0, 0.5, -2.0, 0.4, 0.9, -1.0]]
SQUARE = [[[0.5, 9.0, 1.0], [-1.0, 0.2, 2.0], [0.3, -0.4, -0.1]]]


def _t(lib, values):
    return lib.tensor(np.asarray(values, dtype=F64))


def _np(x):
    return x.detach().numpy() if hasattr(x, "detach") else np.asarray(x)


def _transforms(lib):
    """(name, transform, x) built alike in either library."""
    T = lib.distributions.transforms
    D = lib.distributions
    return [
        ("softplus", T.SoftplusTransform(), _t(lib, X_VEC)),
        ("stick_breaking", T.StickBreakingTransform(), _t(lib, X_VEC)),
        ("corr_cholesky", T.CorrCholeskyTransform(), _t(lib, X_VEC)),
        ("lower_cholesky", T.LowerCholeskyTransform(), _t(lib, SQUARE)),
        ("positive_definite", T.PositiveDefiniteTransform(), _t(lib, SQUARE)),
        ("independent", T.IndependentTransform(T.ExpTransform(), 1), _t(lib, X_VEC)),
        ("independent2", T.IndependentTransform(T.StickBreakingTransform(), 1), _t(lib, X_VEC)),
        ("reshape", T.ReshapeTransform((6,), (2, 3)), _t(lib, X_VEC)),
        ("cat", T.CatTransform([T.ExpTransform(), T.AffineTransform(1.0, 2.0)], 1, [2, 4]),
         _t(lib, X_VEC)),
        ("cat_event", T.CatTransform([T.IndependentTransform(T.ExpTransform(), 1),
                                      T.SoftplusTransform()], -1, [3, 3]), _t(lib, X_VEC)),
        ("stack", T.StackTransform([T.ExpTransform(), T.SigmoidTransform()], 0),
         _t(lib, X_VEC)),
        ("cdf", T.CumulativeDistributionTransform(D.Normal(_t(lib, 0.5), _t(lib, 2.0))),
         _t(lib, X_VEC)),
    ]


NAMES = [name for name, _, _ in _transforms(tl)]
NO_LOG_DET = {"lower_cholesky", "positive_definite"}


@pytest.mark.parity
@pytest.mark.parametrize("name", NAMES)
def test_transform_matches_pytorch(name):
    torch = pytest.importorskip("torch")
    ours, x = {n: (t, v) for n, t, v in _transforms(tl)}[name]
    theirs, tx = {n: (t, v) for n, t, v in _transforms(torch)}[name]
    y, ty = ours(x), theirs(tx)
    np.testing.assert_allclose(_np(y), _np(ty), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(_np(ours.inv(y)), _np(theirs.inv(ty)), rtol=1e-9, atol=1e-9)
    if name not in NO_LOG_DET:
        np.testing.assert_allclose(_np(ours.log_abs_det_jacobian(x, y)),
                                   _np(theirs.log_abs_det_jacobian(tx, ty)),
                                   rtol=1e-10, atol=1e-12)
    assert ours.bijective == theirs.bijective
    assert ours.forward_shape(tuple(x.shape)) == tuple(theirs.forward_shape(tx.shape))
    assert ours.inverse_shape(tuple(y.shape)) == tuple(theirs.inverse_shape(ty.shape))
    assert repr(ours.domain) == repr(theirs.domain)
    assert repr(ours.codomain) == repr(theirs.codomain)
    assert ours.domain.event_dim == theirs.domain.event_dim
    assert ours.codomain.event_dim == theirs.codomain.event_dim
    if name != "cat_event":  # parts of different event_dim: PyTorch's check fails there too
        assert bool(ours.codomain.check(y).all())


@pytest.mark.parametrize("name", sorted(set(NAMES) - NO_LOG_DET - {"reshape"}))
def test_transform_gradcheck(name):
    transform, x = {n: (t, v) for n, t, v in _transforms(tl)}[name]
    x = x.detach().requires_grad_()
    assert tl.autograd.gradcheck(lambda v: transform(v), (x,))
    assert tl.autograd.gradcheck(lambda v: transform.log_abs_det_jacobian(v, transform(v)), (x,))


@pytest.mark.parametrize("transform", [SoftplusTransform(), StickBreakingTransform(),
                                       CorrCholeskyTransform()])
def test_log_det_equals_the_autograd_jacobian(transform):
    from tensorlib.autograd.functional import jacobian

    x = tl.tensor(np.array(X_VEC[0], dtype=F64))
    y = transform(x)
    if isinstance(transform, SoftplusTransform):
        keep = list(range(6))
    elif isinstance(transform, StickBreakingTransform):
        keep = list(range(6))
    else:
        keep = list(np.flatnonzero(np.tril(np.ones((4, 4)), -1)))
    jac = jacobian(lambda v: transform(v).reshape(-1)[keep], x).numpy()
    total = transform.log_abs_det_jacobian(x, y).sum().item()
    assert np.isclose(total, np.linalg.slogdet(jac)[1])


def test_transform_errors():
    with pytest.raises(ValueError, match="in_shape, out_shape have different numbers"):
        ReshapeTransform((2,), (3,))
    with pytest.raises(ValueError, match="Shape mismatch"):
        ReshapeTransform((6,), (2, 3)).forward_shape((4, 5))
    with pytest.raises(ValueError, match="Too few dimensions on input"):
        StickBreakingTransform().forward_shape(())
    with pytest.raises(ValueError, match="Input is not a flattend lower-diagonal number"):
        CorrCholeskyTransform().forward_shape((4,))
    with pytest.raises(ValueError, match="2 transforms but 1 lengths"):
        CatTransform([ExpTransform(), ExpTransform()], 0, [1])
    with pytest.raises(ValueError, match="expects 2 entries along dim 0"):
        StackTransform([ExpTransform(), ExpTransform()], 0)(tl.zeros(3))
    with pytest.raises(ValueError, match="expects a sequence of Transforms"):
        CatTransform(["exp"])


def test_with_cache_and_inverse_identity():
    for t in (IndependentTransform(ExpTransform(), 1), ReshapeTransform((2,), (2, 1)),
              CatTransform([ExpTransform()]), StackTransform([ExpTransform()])):
        cached = t.with_cache(1)
        assert cached._cache_size == 1 and cached.with_cache(1) is cached
        assert t.inv.inv is t
    x = tl.tensor([[0.5, -0.2]])
    cached = IndependentTransform(ExpTransform(), 1, cache_size=1)
    y = cached(x)
    assert cached.inv(y) is x


# -- the registries ----------------------------------------------------------------------------

def _constraints(C):
    return [
        C.real, C.positive, C.nonnegative, C.greater_than(2.0), C.greater_than_eq(-1.0),
        C.less_than(1.0), C.unit_interval, C.interval(-1.0, 3.0), C.half_open_interval(0.0, 1.0),
        C.simplex, C.corr_cholesky, C.lower_cholesky, C.positive_definite,
        C.positive_semidefinite, C.real_vector, C.independent(C.positive, 1),
        C.cat([C.positive, C.real], -1, [2, 4]), C.stack([C.positive, C.unit_interval], 0),
        C.boolean,
    ]


@pytest.mark.parity
@pytest.mark.parametrize("registry", ["biject_to", "transform_to"])
@pytest.mark.parametrize("index", range(19))
def test_registry_matches_pytorch(registry, index):
    torch = pytest.importorskip("torch")
    TC = torch.distributions.constraints
    ours_c, theirs_c = _constraints(constraints)[index], _constraints(TC)[index]
    ours_r = {"biject_to": biject_to, "transform_to": transform_to}[registry]
    theirs_r = getattr(torch.distributions, registry)
    try:
        theirs = theirs_r(theirs_c)
    except NotImplementedError as error:
        with pytest.raises(NotImplementedError, match=str(error)):
            ours_r(ours_c)
        return
    ours = ours_r(ours_c)
    assert repr(ours) == repr(theirs)
    shape = (2, 6) if ours.domain.event_dim < 2 else (2, 3, 3)
    if isinstance(ours_c, type(constraints.stack([]))):
        shape = (2, 6)
    values = np.linspace(-1.5, 1.7, int(np.prod(shape))).reshape(shape)
    x, tx = tl.tensor(values), torch.tensor(values)
    y, ty = ours(x), theirs(tx)
    np.testing.assert_allclose(_np(y), _np(ty), rtol=1e-12, atol=1e-12)
    assert bool(ours_c.check(y).all())
    if ours.bijective:
        np.testing.assert_allclose(_np(ours.log_abs_det_jacobian(x, y)),
                                   _np(theirs.log_abs_det_jacobian(tx, ty)), rtol=1e-10,
                                   atol=1e-12)
        np.testing.assert_allclose(_np(ours.inv(y)), values, rtol=1e-8, atol=1e-8)


def test_registry_register_and_errors():
    mine = ConstraintRegistry()

    @mine.register(constraints.positive)
    def _exp(constraint):
        return ExpTransform()

    assert isinstance(mine(constraints.greater_than(3.0)), ExpTransform)
    mine.register(type(constraints.simplex), lambda c: StickBreakingTransform())
    assert isinstance(mine(constraints.simplex), StickBreakingTransform)
    with pytest.raises(TypeError, match="Expected constraint to be either a Constraint subclass "
                       "or instance, but got 42"):
        mine.register(42, lambda c: ExpTransform())
    with pytest.raises(NotImplementedError, match="Cannot transform _Real constraints"):
        mine(constraints.real)


def test_transform_to_a_normal_scale_is_differentiable():
    raw = tl.tensor([-5.0, 0.0, 5.0], dtype=tl.float64, requires_grad=True)
    scale = transform_to(Normal.arg_constraints["scale"])(raw)
    assert bool((scale > 0).all())
    assert tl.autograd.gradcheck(lambda r: transform_to(constraints.positive)(r), (raw,))
    assert isinstance(transform_to(constraints.interval(0.0, 2.0)).parts[1], AffineTransform)
