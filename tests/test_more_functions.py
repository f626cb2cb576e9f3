"""Chapter 2's later additions (sections 13.2, 16.1, 18.1, 19.1, 20.1-20.3): cumprod, the functions
of two tensors and the error function, NumPy's views, joins and splits, take_along_dim, diff, the
order statistics (median, kthvalue, quantile) and NaN-skipping sums, and the products built on
MatMul. Values and gradients against PyTorch's, float64 gradchecks, and PyTorch's errors."""

from __future__ import annotations

import math

import numpy as np
import pytest

import tensorlib as tl

NAN = float("nan")


def _run(lib, fn, arrays, grad):
    """``fn(lib, *tensors)`` on float64 leaves made from ``arrays``; its outputs (flattened to a
    list of arrays) and, with ``grad``, the leaves' gradients of a weighted sum of them."""
    leaves = [lib.tensor(a, requires_grad=grad and a.dtype.kind == "f") for a in arrays]
    out = fn(lib, *leaves)
    outs = list(out) if isinstance(out, (tuple, list)) else [out]
    if grad:
        total = 0
        for k, o in enumerate(outs):
            if o.detach().numpy().dtype.kind == "f" and o.requires_grad:
                weights = np.random.default_rng(k).standard_normal(tuple(o.shape))
                total = total + (o * lib.tensor(weights)).sum()
        total.backward()
    grads = [t.grad.numpy() if t.grad is not None else None for t in leaves]
    return [o.detach().numpy() for o in outs], grads


def _arr(*shape, seed=0, dtype=np.float64):
    return np.random.default_rng(seed + len(shape)).standard_normal(shape).astype(dtype)


def _q(lib, *qs):
    """Quantile levels in float64, the inputs' dtype (quantile does not promote)."""
    return lib.tensor(list(qs), dtype=lib.float64)


# (id, fn(lib, *tensors), input arrays, differentiate)
CASES = [
    ("cumprod", lambda L, x: L.cumprod(x, 1), [_arr(3, 5)], True),
    ("cumprod-zeros", lambda L, x: x.cumprod(0),
     [np.array([2.0, 0.0, 3.0, 0.0, 5.0])], True),
    ("cumprod-zeros-2d", lambda L, x: x.cumprod(1),
     [np.array([[0.0, 2.0, 3.0], [1.5, 0.0, 0.0], [1.0, 2.0, 0.0], [0.5, -2.0, 3.0]])], True),
    ("cumprod-int", lambda L, x: x.cumprod(0), [np.array([1, 2, 3, 4])], False),
    ("dot", lambda L, a, b: L.dot(a, b), [_arr(5), _arr(5, seed=1)], True),
    ("vdot", lambda L, a, b: a.vdot(b), [_arr(5), _arr(5, seed=1)], True),
    ("mv", lambda L, a, b: L.mv(a, b), [_arr(3, 4), _arr(4)], True),
    ("addmm", lambda L, c, a, b: L.addmm(c, a, b), [_arr(2), _arr(3, 4), _arr(4, 2)], True),
    ("addmm-beta-alpha", lambda L, c, a, b: c.addmm(a, b, beta=0.5, alpha=-2.0),
     [_arr(3, 2), _arr(3, 4), _arr(4, 2)], True),
    ("addmv", lambda L, c, a, b: L.addmv(c, a, b, alpha=2.0), [_arr(3), _arr(3, 4), _arr(4)], True),
    ("addr", lambda L, c, a, b: L.addr(c, a, b, beta=2.0), [_arr(3, 4), _arr(3), _arr(4)], True),
    ("baddbmm", lambda L, c, a, b: L.baddbmm(c, a, b, beta=0.25),
     [_arr(1, 3, 5), _arr(2, 3, 4), _arr(2, 4, 5)], True),
    ("addbmm", lambda L, c, a, b: L.addbmm(c, a, b), [_arr(3, 5), _arr(2, 3, 4), _arr(2, 4, 5)],
     True),
    ("tensordot-2", lambda L, a, b: L.tensordot(a, b), [_arr(2, 3, 4), _arr(3, 4, 5)], True),
    ("tensordot-0", lambda L, a, b: L.tensordot(a, b, dims=0), [_arr(2, 3), _arr(4)], True),
    ("tensordot-lists", lambda L, a, b: L.tensordot(a, b, dims=([0, 2], [2, 0])),
     [_arr(2, 3, 4), _arr(4, 5, 2)], True),
    ("kron-2d", lambda L, a, b: L.kron(a, b), [_arr(2, 3), _arr(3, 2)], True),
    ("kron-mixed-dims", lambda L, a, b: a.kron(b), [_arr(2, 2, 3), _arr(3)], True),
    ("ravel", lambda L, a: a.t().ravel(), [_arr(3, 4)], True),
    ("unflatten", lambda L, a: a.unflatten(1, (2, -1)), [_arr(3, 6)], True),
    ("flipud-fliplr", lambda L, a: (L.flipud(a), L.fliplr(a)), [_arr(3, 4)], True),
    *[
        (f"rot90-k{k}-dims{d}", lambda L, a, k=k, d=d: L.rot90(a, k, d), [_arr(2, 3, 4)], True)
        for k in (-3, -1, 0, 1, 2, 3, 5)
        for d in ((0, 1), (2, 0), (-1, -2))
    ],
    ("take_along_dim", lambda L, a: L.take_along_dim(a, L.tensor([[0, 2], [1, 1]]), 1),
     [_arr(2, 4)], True),
    ("take_along_dim-broadcast", lambda L, a: a.take_along_dim(L.tensor([[[2]], [[0]]]), dim=2),
     [_arr(2, 3, 4)], True),
    ("take_along_dim-flat", lambda L, a: L.take_along_dim(a, L.tensor([5, 0, 5])),
     [_arr(2, 3)], True),
    ("take", lambda L, a: L.take(a, L.tensor([[0, -1], [3, 3]])), [_arr(2, 3)], True),
    ("hstack-1d", lambda L, a, b: L.hstack([a, b]), [_arr(3), _arr(2)], True),
    ("hstack-2d", lambda L, a, b: L.hstack((a, b)), [_arr(2, 3), _arr(2, 1)], True),
    ("vstack", lambda L, a, b: L.vstack([a, b]), [_arr(3), _arr(2, 3)], True),
    ("row_stack", lambda L, a, b: L.row_stack([a, b]), [_arr(3), _arr(3)], True),
    ("dstack", lambda L, a, b: L.dstack([a, b]), [_arr(2, 3), _arr(2, 3)], True),
    ("column_stack", lambda L, a, b, c: L.column_stack([a, b, c]),
     [_arr(3), _arr(3, 2), _arr(3)], True),
    ("concatenate", lambda L, a, b: L.concatenate([a, b], axis=1), [_arr(2, 3), _arr(2, 1)], True),
    ("atleast", lambda L, a, b, c: (*L.atleast_2d(a, b), L.atleast_3d(c), L.atleast_1d(a)),
     [np.array(1.5), _arr(3), _arr(2, 3)], True),
    ("unbind", lambda L, a: L.unbind(a, 1), [_arr(2, 3, 2)], True),
    ("unbind-negative", lambda L, a: a.unbind(-1), [_arr(2, 3)], True),
    ("tensor_split-int", lambda L, a: L.tensor_split(a, 3), [_arr(7)], True),
    ("tensor_split-more-parts", lambda L, a: L.tensor_split(a, 5, dim=1), [_arr(2, 3)], True),
    ("tensor_split-indices", lambda L, a: a.tensor_split([1, 4, 9], dim=1), [_arr(2, 6)], True),
    ("tensor_split-tensor", lambda L, a: L.tensor_split(a, L.tensor([2, 3])), [_arr(5)], True),
    ("hsplit", lambda L, a: L.hsplit(a, 2), [_arr(2, 4)], True),
    ("hsplit-1d-indices", lambda L, a: a.hsplit([1, 3]), [_arr(5)], True),
    ("vsplit", lambda L, a: L.vsplit(a, [1]), [_arr(3, 2)], True),
    ("dsplit", lambda L, a: L.dsplit(a, 2), [_arr(1, 2, 4)], True),
    ("diff", lambda L, a: L.diff(a), [_arr(3, 5)], True),
    ("diff-n2-dim0", lambda L, a: a.diff(n=2, dim=0), [_arr(4, 3)], True),
    ("diff-prepend-append", lambda L, a, p, q: L.diff(a, 1, -1, p, q),
     [_arr(2, 3), _arr(2, 1), _arr(2, 2)], True),
    ("diff-n-too-large", lambda L, a: L.diff(a, n=5), [_arr(3)], True),
    ("diff-bool", lambda L, a: L.diff(a > 0), [_arr(6)], False),
    ("diff-int", lambda L, a: L.diff(a, n=2), [np.array([1, 4, 9, 16, 25])], False),
    ("median-all", lambda L, a: L.median(a), [_arr(3, 4)], True),
    ("median-odd", lambda L, a: a.median(), [_arr(5)], True),
    ("median-dim", lambda L, a: tuple(L.median(a, 1)), [_arr(3, 4)], True),
    ("median-dim-keepdim", lambda L, a: tuple(a.median(0, keepdim=True)), [_arr(5, 2)], True),
    ("median-nan", lambda L, a: (*L.median(a, 1), L.median(a)),
     [np.array([[1.0, NAN, 0.0, 2.0], [3.0, 2.0, 1.0, 5.0]])], False),
    ("nanmedian", lambda L, a: (*L.nanmedian(a, 1), L.nanmedian(a)),
     [np.array([[1.0, NAN, 0.0, 2.0], [3.0, 2.0, 1.0, 5.0], [NAN, 4.0, NAN, NAN]])], False),
    # a row of NaNs: the value is NaN (PyTorch's index there depends on its selection algorithm)
    ("nanmedian-all-nan", lambda L, a: (L.nanmedian(a, 1).values, L.nanmedian(a[1])),
     [np.array([[1.0, NAN, 0.0, 2.0], [NAN, NAN, NAN, NAN]])], False),
    ("nanmedian-grad", lambda L, a: a.nanmedian(1).values,
     [np.array([[1.0, NAN, 0.0, 2.0], [3.0, 2.0, 1.0, 5.0]])], True),
    ("median-0d", lambda L, a: (L.median(a), *L.median(a, 0)), [np.array(2.5)], True),
    ("kthvalue", lambda L, a: tuple(L.kthvalue(a, 2, 1)), [_arr(3, 4)], True),
    ("kthvalue-keepdim", lambda L, a: tuple(a.kthvalue(3, 0, True)), [_arr(4, 2)], True),
    ("quantile-scalar", lambda L, a: L.quantile(a, 0.3), [_arr(3, 4)], True),
    ("quantile-tensor-dim", lambda L, a: L.quantile(a, _q(L, 0.0, 0.25, 0.5, 1.0), dim=1),
     [_arr(3, 5)], True),
    ("quantile-keepdim", lambda L, a: a.quantile(_q(L, 0.2, 0.7), dim=0, keepdim=True),
     [_arr(4, 3)], True),
    ("quantile-keepdim-all", lambda L, a: a.quantile(0.5, keepdim=True), [_arr(2, 3)], True),
    *[
        (f"quantile-{rule}", lambda L, a, rule=rule: L.quantile(
            a, _q(L, 0.1, 0.5, 0.625, 0.9), dim=-1, interpolation=rule), [_arr(2, 9)], True)
        for rule in ("linear", "lower", "higher", "midpoint", "nearest")
    ],
    ("quantile-nearest-half", lambda L, a: L.quantile(a, _q(L, 0.125, 0.375), dim=0,
                                                     interpolation="nearest"), [_arr(5)], True),
    ("quantile-nan", lambda L, a: L.quantile(a, _q(L, 0.25, 0.5), dim=1),
     [np.array([[1.0, NAN, 3.0], [2.0, 4.0, 6.0]])], False),
    ("nanquantile", lambda L, a: L.nanquantile(a, _q(L, 0.25, 0.5), dim=1),
     [np.array([[1.0, NAN, 3.0], [2.0, 4.0, 6.0], [NAN, NAN, NAN]])], False),
    ("nansum", lambda L, a: (L.nansum(a), a.nansum(1), L.nansum(a, 0, keepdim=True)),
     [np.array([[1.0, NAN, 3.0], [2.0, 4.0, NAN]])], True),
    ("nansum-int", lambda L, a: L.nansum(a), [np.array([1, 2, 3])], False),
    ("nanmean", lambda L, a: (L.nanmean(a), a.nanmean(1), L.nanmean(a, 0)),
     [np.array([[1.0, NAN, 3.0], [2.0, 4.0, NAN]])], True),
    ("atan2", lambda L, a, b: (L.atan2(a, b), a.arctan2(b)), [_arr(3, 4), _arr(4, seed=1)], True),
    ("atan2-quadrants", lambda L, a, b: L.atan2(a, b),
     [np.array([1.0, 1.0, -1.0, -1.0, 0.0, -0.0]), np.array([1.0, -1.0, 1.0, -1.0, -1.0, -1.0])],
     False),
    ("atan2-int", lambda L, a, b: L.atan2(a, b), [np.array([1, -2]), np.array([3, 4])], False),
    ("hypot", lambda L, a, b: L.hypot(a, b), [_arr(3, 4), _arr(3, 1, seed=1)], True),
    ("logaddexp", lambda L, a, b: (L.logaddexp(a, b), a.logaddexp2(b)),
     [_arr(3, 4), _arr(4, seed=1)], True),
    ("logaddexp-large", lambda L, a, b: L.logaddexp(a, b),
     [np.array([1000.0, -1000.0, 0.0]), np.array([1000.0, 5.0, -800.0])], True),
    # a = 0 beside b > 0, b = 0, b < 0, NaN and inf: the slope in a is log b except where b <= 0
    ("xlogy", lambda L, a, b: L.xlogy(a, b),
     [np.array([0.0, 0.5, 2.0, 0.0, 1.5, 0.0, 0.0, 0.0]),
      np.array([0.0, 2.0, 0.5, NAN, 3.0, 3.0, -1.0, np.inf])], True),
    ("xlog1py", lambda L, a, b: L.special.xlog1py(a, b),
     [np.array([0.0, 0.5, 0.0, 0.0, 1.5, 0.0]), np.array([-1.0, 2.0, 3.0, -2.0, 0.5, NAN])], True),
    ("xlogy-number", lambda L, a: (L.xlogy(a, 2.0), L.xlogy(0.5, a.abs() + 1)), [_arr(4)], True),
    ("copysign", lambda L, a, b: L.copysign(a, b),
     [_arr(3, 4), np.array([1.0, -1.0, -0.0, 0.0])], True),
    ("fmod", lambda L, a, b: (L.fmod(a * 3, b), a.fmod(0.7)),
     [_arr(3, 4), np.array([0.9, -1.3, 2.0, -0.6])], True),
    ("fmod-int", lambda L, a: L.fmod(a, 3), [np.array([7, -7, 5, -5])], False),
    ("fmax-fmin", lambda L, a, b: (L.fmax(a, b), L.fmin(a, b)),
     [np.array([1.0, NAN, 3.0, NAN, 2.0]), np.array([2.0, 1.0, NAN, NAN, 2.0])], True),
    ("erf-erfc", lambda L, a: (L.erf(a), a.erfc(), L.erfc(a * 5)), [_arr(3, 4)], True),
    ("erfinv", lambda L, a: L.erfinv(a),
     [np.array([-0.999999, -0.9, -0.5, 0.0, 1e-8, 0.3, 0.99, 0.9999999])], True),
    ("erfinv-edges", lambda L, a: L.erfinv(a), [np.array([-1.0, 1.0, 1.5, -2.0])], False),
    ("sinc", lambda L, a: L.sinc(a), [np.array([0.0, 0.5, -1.0, 2.5, 1e-9])], True),
    ("exp2-frac-deg-rad", lambda L, a: (L.exp2(a), a.frac(), L.deg2rad(a), a.rad2deg()),
     [_arr(3, 4) * 3], True),
    ("logit", lambda L, a: (L.logit(a), a.logit(eps=0.2)),
     [np.array([0.1, 0.25, 0.5, 0.9, 0.15])], True),
    ("float_power", lambda L, a, b: (L.float_power(a, b), a.float_power(2)),
     [np.abs(_arr(3)) + 0.5, _arr(3, seed=2)], True),
    ("true_divide", lambda L, a, b: L.true_divide(a, b), [_arr(3), _arr(3, seed=3)], True),
]


@pytest.mark.parity
@pytest.mark.parametrize("fn, arrays, grad", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_values_and_gradients_match_pytorch(fn, arrays, grad):
    torch = pytest.importorskip("torch")
    (ours, our_grads), (theirs, their_grads) = (_run(lib, fn, arrays, grad) for lib in (tl, torch))
    assert len(ours) == len(theirs)
    for mine, reference in zip(ours, theirs, strict=True):
        assert mine.shape == reference.shape
        assert mine.dtype == reference.dtype
        # float32 results may differ in the last bit (numpy's and PyTorch's float32 kernels)
        tolerance = 1e-12 if mine.dtype != np.float32 else 1e-6
        np.testing.assert_allclose(mine, reference, rtol=tolerance, atol=tolerance)
    for mine, reference in zip(our_grads, their_grads, strict=True):
        if reference is None:
            assert mine is None
        else:
            np.testing.assert_allclose(mine, reference, rtol=1e-10, atol=1e-12)


GRADCHECKS = [
    ("cumprod-zeros", lambda a: a.cumprod(1), [np.array([[0.0, 2.0, 3.0], [1.5, 0.0, 0.0]])]),
    ("cumprod", lambda a: tl.cumprod(a, 0), [_arr(4, 3)]),
    ("addmm", lambda c, a, b: tl.addmm(c, a, b, beta=0.5, alpha=2.0),
     [_arr(2), _arr(3, 4), _arr(4, 2)]),
    ("tensordot", lambda a, b: tl.tensordot(a, b, dims=([1], [0])), [_arr(2, 3), _arr(3, 4)]),
    ("kron", lambda a, b: tl.kron(a, b), [_arr(2, 2), _arr(2, 3)]),
    ("rot90", lambda a: a.rot90(3, (1, 0)), [_arr(2, 3)]),
    ("take_along_dim", lambda a: tl.take_along_dim(a, tl.tensor([[1], [0]]), 1), [_arr(2, 3)]),
    ("diff", lambda a: a.diff(n=2, append=a[:2] * 2), [_arr(5)]),
    ("quantile", lambda a: tl.quantile(a, _q(tl, 0.3, 0.8), dim=1), [_arr(2, 6)]),
    ("median", lambda a: a.median(0).values + a.median(), [_arr(5, 3)]),
    ("nanmean", lambda a: tl.nanmean(a, 1), [np.array([[1.0, NAN, 3.0], [2.0, 4.0, 5.0]])]),
    ("atan2-hypot", lambda a, b: tl.atan2(a, b) + tl.hypot(a, b), [_arr(3), _arr(3, seed=1)]),
    ("logaddexp-xlogy", lambda a, b: tl.logaddexp(a, b) + tl.xlogy(a, b.abs() + 0.1),
     [_arr(3), _arr(3, seed=1)]),
    ("erf-erfinv-sinc", lambda a: tl.erf(a) + tl.erfc(a) + tl.erfinv(a * 0.3) + tl.sinc(a),
     [_arr(5)]),
]


@pytest.mark.parametrize("fn, arrays", [c[1:] for c in GRADCHECKS], ids=[c[0] for c in GRADCHECKS])
def test_gradcheck(fn, arrays):
    inputs = tuple(tl.tensor(a, requires_grad=True) for a in arrays)
    assert tl.autograd.gradcheck(fn, inputs)


def test_cumprod_gradient_is_the_definition_where_entries_are_zero():
    row = [0.5, 0.0, 3.0, 0.0, 2.0]
    x = tl.tensor(row, dtype=tl.float64, requires_grad=True)
    x.cumprod(0).sum().backward()
    expected = [
        sum(math.prod(row[j] for j in range(i + 1) if j != k) for i in range(k, len(row)))
        for k in range(len(row))
    ]
    assert x.grad.tolist() == expected


def test_median_returns_the_lower_middle_and_its_index():
    values, indices = tl.tensor([[4.0, 1.0, 3.0, 2.0]]).median(1)
    assert values.tolist() == [2.0] and indices.tolist() == [3]


def test_quantile_matches_numpy_for_every_rule():
    data = np.random.default_rng(5).standard_normal((3, 11))
    qs = np.linspace(0, 1, 17)
    for rule in ("linear", "lower", "higher", "midpoint", "nearest"):
        ours = tl.quantile(tl.tensor(data), tl.tensor(qs), dim=1, interpolation=rule).numpy()
        np.testing.assert_allclose(ours, np.quantile(data, qs, axis=1, method=rule), rtol=1e-12)


def test_erf_is_exact_in_float32_and_erfinv_inverts_it():
    x = np.linspace(-4, 4, 81).astype(np.float32)
    ours = tl.erf(tl.tensor(x)).numpy()
    np.testing.assert_array_equal(ours, np.array([math.erf(v) for v in x]).astype(np.float32))
    y = np.linspace(-0.9999, 0.9999, 101)
    np.testing.assert_allclose(tl.erf(tl.erfinv(tl.tensor(y))).numpy(), y, rtol=0, atol=1e-15)


def test_beta_zero_does_not_read_the_input():
    out = tl.addmm(tl.full((2, 2), NAN), tl.ones(2, 3), tl.ones(3, 2), beta=0)
    assert out.tolist() == [[3.0, 3.0], [3.0, 3.0]]


# (id, fn(lib), exception types: tensorlib's, PyTorch's)
ERRORS = [
    ("dot-dtypes", lambda L: L.dot(L.ones(2), L.ones(2, dtype=L.float64))),
    ("dot-sizes", lambda L: L.dot(L.ones(2), L.ones(3))),
    ("dot-2d", lambda L: L.dot(L.ones(2, 2), L.ones(2))),
    ("mv-sizes", lambda L: L.mv(L.ones(2, 3), L.ones(2))),
    ("addmm-shape", lambda L: L.addmm(L.ones(3), L.ones(2, 2), L.ones(2, 2))),
    ("tensordot-sizes", lambda L: L.tensordot(L.ones(2, 3), L.ones(2, 3), dims=1)),
    ("rot90-one-dim", lambda L: L.rot90(L.ones(3))),
    ("rot90-same-dims", lambda L: L.rot90(L.ones(2, 2), 1, (0, 0))),
    ("fliplr-1d", lambda L: L.fliplr(L.ones(3))),
    ("unbind-0d", lambda L: L.unbind(L.tensor(1.0))),
    ("hsplit-uneven", lambda L: L.hsplit(L.ones(7), 3)),
    ("vsplit-1d", lambda L: L.vsplit(L.ones(4), 2)),
    ("tensor_split-zero", lambda L: L.tensor_split(L.ones(4), 0)),
    ("kthvalue-k", lambda L: L.kthvalue(L.ones(3), 4)),
    ("quantile-int", lambda L: L.quantile(L.tensor([1, 2]), 0.5)),
    ("quantile-dtype", lambda L: L.quantile(L.ones(3), L.tensor([0.5], dtype=L.float64))),
    ("quantile-range", lambda L: L.quantile(L.ones(3), 1.5)),
    ("quantile-rule", lambda L: L.quantile(L.ones(3), 0.5, interpolation="cubic")),
    ("nanmean-int", lambda L: L.nanmean(L.tensor([1, 2]))),
    ("take-range", lambda L: L.take(L.ones(2, 2), L.tensor([4]))),
    ("take_along_dim-ndim", lambda L: L.take_along_dim(L.ones(2, 2), L.tensor([0]), 1)),
    ("diff-0d", lambda L: L.diff(L.tensor(1.0))),
    ("fmod-int-zero", lambda L: L.fmod(L.tensor([1, 2]), 0)),
    ("frac-int", lambda L: L.frac(L.tensor([1, 2]))),
]


@pytest.mark.parity
@pytest.mark.parametrize("fn", [c[1] for c in ERRORS], ids=[c[0] for c in ERRORS])
def test_refuses_what_pytorch_refuses(fn):
    torch = pytest.importorskip("torch")
    with pytest.raises(Exception):  # noqa: B017 (the type is checked below)
        fn(torch)
    with pytest.raises((RuntimeError, ValueError, TypeError, IndexError)) as raised:
        fn(tl)
    assert str(raised.value)
