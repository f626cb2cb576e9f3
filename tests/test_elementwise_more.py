"""The rounding, logarithm, predicate, logical and index functions added for PyTorch programs
(chapter 2, section 16): values, dtypes and gradients against PyTorch's, and float64 gradchecks."""

from __future__ import annotations

import numpy as np
import pytest

import tensorlib as tl

SPECIAL = np.array([-2.5, -1.5, -0.5, -0.0, 0.0, 0.4, 0.5, 1.5, 2.5, 3.7, np.inf, -np.inf, np.nan])
POSITIVE = np.array([1e-8, 0.3, 1.0, 2.0, 8.0, 1000.0])
MATRIX = np.array([[0.0, 1.5, -2.0], [3.0, 0.0, 0.0], [-1.0, 2.0, 5.0]])

UNARY = {  # name -> inputs
    "floor": SPECIAL, "ceil": SPECIAL, "trunc": SPECIAL, "round": SPECIAL, "sign": SPECIAL,
    "isnan": SPECIAL, "isinf": SPECIAL, "isfinite": SPECIAL, "signbit": SPECIAL,
    "logical_not": SPECIAL, "expm1": np.concatenate([SPECIAL, [1e-10, 50.0]]),
    "log2": np.concatenate([POSITIVE, [0.0, -1.0]]), "log10": np.concatenate([POSITIVE, [0.0]]),
    "reciprocal": np.array([-2.0, 0.5, 4.0, 0.0]),
}


def torch_or_skip():
    return pytest.importorskip("torch")


@pytest.mark.parity
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary_functions_match_pytorch(name, dtype):
    torch = torch_or_skip()
    values = UNARY[name].astype(dtype)
    ours = getattr(tl, name)(tl.tensor(values))
    theirs = getattr(torch, name)(torch.from_numpy(values))
    assert ours.dtype == theirs.numpy().dtype
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-6, equal_nan=True)
    numbers = ~np.isnan(theirs.numpy())  # (the sign bit of a NaN means nothing)
    assert np.array_equal(np.signbit(ours.numpy())[numbers], np.signbit(theirs.numpy())[numbers])
    method = getattr(tl.tensor(values), name)()
    np.testing.assert_array_equal(method.numpy(), ours.numpy())


@pytest.mark.parity
@pytest.mark.parametrize("name", ["floor", "ceil", "trunc", "round", "sign", "reciprocal"])
def test_integer_inputs_match_pytorch(name):
    torch = torch_or_skip()
    values = np.array([-3, 0, 2, 7])
    ours, theirs = getattr(tl, name)(tl.tensor(values)), getattr(torch, name)(torch.tensor(values))
    assert ours.dtype == theirs.numpy().dtype and ours.tolist() == theirs.tolist()


@pytest.mark.parity
def test_round_with_decimals_matches_pytorch():
    torch = torch_or_skip()
    values = np.array([1.2345, -2.5555, 0.125, 1234.5678])
    for decimals in (1, 2, -1):
        ours = tl.round(tl.tensor(values), decimals=decimals).numpy()
        np.testing.assert_allclose(
            ours, torch.round(torch.from_numpy(values), decimals=decimals).numpy(), rtol=1e-12
        )


@pytest.mark.parity
@pytest.mark.parametrize("name", ["expm1", "log2", "log10", "floor", "round", "sign", "reciprocal"])
def test_gradients_match_pytorch(name):
    torch = torch_or_skip()
    values = np.array([0.3, 1.7, 2.2, 5.0])
    grads = []
    for lib in (tl, torch):
        x = lib.tensor(values, requires_grad=True)
        (getattr(lib, name)(x) * lib.tensor([1.0, -2.0, 3.0, 0.5])).sum().backward()
        grads.append(x.grad.numpy())
    np.testing.assert_allclose(grads[0], grads[1], rtol=1e-12)


@pytest.mark.parametrize("name", ["expm1", "log2", "log10"])
def test_gradcheck(name):
    x = tl.tensor([0.3, 1.7, 2.2], dtype=tl.float64, requires_grad=True)
    assert tl.autograd.gradcheck(getattr(tl, name), (x,))


@pytest.mark.parity
@pytest.mark.parametrize("dim, keepdim", [(1, False), (0, True), ((0, 1), False), (-1, True)])
def test_logsumexp_and_its_gradient_match_pytorch(dim, keepdim):
    torch = torch_or_skip()
    values = np.array([[1.0, 2.0, 3.0], [1000.0, 1000.0, -np.inf], [-5.0, 0.0, 5.0]])
    results = []
    for lib in (tl, torch):
        x = lib.tensor(values, requires_grad=True)
        y = lib.logsumexp(x, dim, keepdim=keepdim)
        (y * y.detach()).sum().backward()
        results.append((y.detach().numpy(), x.grad.numpy()))
    np.testing.assert_allclose(results[0][0], results[1][0], rtol=1e-12)
    np.testing.assert_allclose(results[0][1], results[1][1], rtol=1e-12)


def test_logsumexp_of_a_row_of_minus_infinity_and_gradcheck():
    assert tl.logsumexp(tl.tensor([[-np.inf, -np.inf]]), 1).tolist() == [-np.inf]
    assert tl.tensor([1e4, 1e4]).logsumexp(0).item() == pytest.approx(1e4 + np.log(2))
    x = tl.tensor(np.random.default_rng(0).standard_normal((3, 4)), requires_grad=True)
    assert tl.autograd.gradcheck(lambda t: tl.logsumexp(t, dim=1), (x,))


@pytest.mark.parity
def test_logical_isclose_count_nonzero_nonzero_argsort_match_pytorch():
    torch = torch_or_skip()
    a, b = MATRIX, MATRIX.T.copy()
    for name in ("logical_and", "logical_or", "logical_xor"):
        ours = getattr(tl, name)(tl.tensor(a), tl.tensor(b)).numpy()
        theirs = getattr(torch, name)(torch.from_numpy(a), torch.from_numpy(b)).numpy()
        assert ours.dtype == np.bool_ and np.array_equal(ours, theirs)
    close = tl.isclose(tl.tensor(a), tl.tensor(a + 1e-9)).numpy()
    assert np.array_equal(close, torch.isclose(torch.from_numpy(a), torch.from_numpy(a + 1e-9)))
    for dim in (None, 0, 1, (0, 1)):
        ours = tl.count_nonzero(tl.tensor(a), dim=dim)
        theirs = torch.count_nonzero(torch.from_numpy(a), dim=dim)
        assert ours.dtype == np.int64 and ours.tolist() == theirs.tolist()
    assert tl.nonzero(tl.tensor(a)).tolist() == torch.nonzero(torch.from_numpy(a)).tolist()
    ours_tuple = tl.tensor(a).nonzero(as_tuple=True)
    theirs_tuple = torch.from_numpy(a).nonzero(as_tuple=True)
    assert [t.tolist() for t in ours_tuple] == [t.tolist() for t in theirs_tuple]
    assert [t.tolist() for t in tl.nonzero(tl.tensor(5), as_tuple=True)] == [[0]]
    for descending in (False, True):
        ours = tl.argsort(tl.tensor(a), dim=1, descending=descending)
        theirs = torch.argsort(torch.from_numpy(a), dim=1, descending=descending, stable=True)
        assert ours.dtype == np.int64 and ours.tolist() == theirs.tolist()


TRIG = {
    "tan": np.array([-1.2, -0.3, 0.0, 0.7, 1.4]),
    "atan": np.array([-50.0, -1.0, 0.0, 0.3, 8.0]),
    "asin": np.array([-0.99, -0.5, 0.0, 0.4, 0.9]),
    "acos": np.array([-0.99, -0.5, 0.0, 0.4, 0.9]),
    "sinh": np.array([-3.0, -0.5, 0.0, 0.2, 4.0]),
    "cosh": np.array([-3.0, -0.5, 0.0, 0.2, 4.0]),
}


@pytest.mark.parity
@pytest.mark.parametrize("name", sorted(TRIG))
def test_trigonometric_functions_and_gradients_match_pytorch(name):
    torch = torch_or_skip()
    results = []
    for lib in (tl, torch):
        x = lib.tensor(TRIG[name], requires_grad=True)
        y = getattr(lib, name)(x)
        (y * lib.tensor([1.0, -2.0, 0.5, 3.0, 1.5])).sum().backward()
        results.append((y.detach().numpy(), x.grad.numpy()))
    np.testing.assert_allclose(results[0][0], results[1][0], rtol=1e-12)
    np.testing.assert_allclose(results[0][1], results[1][1], rtol=1e-12)
    assert tl.autograd.gradcheck(getattr(tl, name), (tl.tensor(TRIG[name], requires_grad=True),))
    alias = {"atan": "arctan", "asin": "arcsin", "acos": "arccos"}.get(name)
    if alias:
        assert getattr(tl, alias) is getattr(tl, name)


@pytest.mark.parity
def test_outside_the_domain_asin_and_acos_are_nan_without_warning():
    torch = torch_or_skip()
    values = np.array([-2.0, 1.0, 1.5])
    for name in ("asin", "acos"):
        ours = getattr(tl, name)(tl.tensor(values)).numpy()
        np.testing.assert_array_equal(ours, getattr(torch, name)(torch.from_numpy(values)).numpy())


@pytest.mark.parity
def test_composites_match_pytorch_with_gradients():
    torch = torch_or_skip()
    rng = np.random.default_rng(5)
    a, b, c = (rng.standard_normal((3, 4)) for _ in range(3))
    c = np.abs(c) + 0.5
    cases = {
        "lerp": lambda lib, x, y, z: lib.lerp(x, y, z),
        "lerp scalar": lambda lib, x, y, z: x.lerp(y, 0.3),
        "addcmul": lambda lib, x, y, z: lib.addcmul(x, y, z, value=-0.5),
        "addcdiv": lambda lib, x, y, z: x.addcdiv(y, z, value=2.0),
        "clamp_min/max": lambda lib, x, y, z: lib.clamp_min(x, -0.2) + x.clamp_max(0.3),
    }
    for name, case in cases.items():
        results = []
        for lib in (tl, torch):
            x, y, z = (lib.tensor(v, requires_grad=True) for v in (a, b, c))
            out = case(lib, x, y, z)
            out.sum().backward()
            grads = [None if t.grad is None else t.grad.numpy() for t in (x, y, z)]
            results.append([out.detach().numpy(), *grads])
        for mine, theirs in zip(*results, strict=True):
            assert (mine is None) == (theirs is None), name
            if mine is not None:
                np.testing.assert_allclose(mine, theirs, rtol=1e-12, err_msg=name)


@pytest.mark.parity
def test_shape_and_index_functions_match_pytorch():
    torch = torch_or_skip()
    values = np.arange(24.0).reshape(2, 3, 4)
    ours, theirs = tl.tensor(values), torch.from_numpy(values)
    for source, destination in ((0, -1), ((0, 1), (2, 0)), (2, 0), ([1], [0])):
        assert np.array_equal(
            tl.movedim(ours, source, destination).numpy(),
            torch.movedim(theirs, source, destination).numpy(),
        )
    assert np.array_equal(tl.swapdims(ours, 0, 2).numpy(), torch.swapdims(theirs, 0, 2).numpy())
    for dims in ((2,), (2, 1, 1), (1, 2, 1, 3)):
        assert np.array_equal(tl.tile(ours, dims).numpy(), torch.tile(theirs, dims).numpy())
    assert tl.broadcast_to(tl.ones(3, 1), (2, 3, 4)).shape == (2, 3, 4)
    shapes = [tuple(t.shape) for t in tl.broadcast_tensors(tl.ones(3, 1), tl.ones(4), tl.ones(1))]
    assert shapes == [(3, 4)] * 3
    index = np.array([2, 0, 2])
    x = tl.tensor(values, requires_grad=True)
    tx = torch.tensor(values, requires_grad=True)
    for lib_x, lib, idx in ((x, tl, tl.tensor(index)), (tx, torch, torch.tensor(index))):
        (lib.index_select(lib_x, 1, idx) * 2).sum().backward()
    assert np.array_equal(tl.index_select(x, 1, tl.tensor(index)).detach().numpy(),
                          torch.index_select(tx, 1, torch.tensor(index)).detach().numpy())
    assert np.array_equal(x.grad.numpy(), tx.grad.numpy())  # a position picked twice: 4
    mask = values % 3 == 0
    x.grad = None
    tx.grad = None
    tl.masked_select(x, tl.tensor(mask[0])).sum().backward()
    torch.masked_select(tx, torch.tensor(mask[0])).sum().backward()
    assert np.array_equal(x.grad.numpy(), tx.grad.numpy())
    assert tl.masked_select(x, tl.tensor(mask)).tolist() == values[mask].tolist()


def test_index_select_and_masked_select_refuse_bad_indices():
    with pytest.raises(ValueError, match="index must be a 1-D integer tensor, got float32"):
        tl.index_select(tl.ones(3), 0, tl.tensor([1.0]))
    with pytest.raises(TypeError, match="mask must be a bool tensor, got int64"):
        tl.masked_select(tl.ones(3), tl.tensor([1, 0, 1]))


@pytest.mark.parity
@pytest.mark.parametrize("name", ["float16", "float32", "float64", "int8", "uint8", "int64"])
def test_finfo_and_iinfo_match_pytorch(name):
    torch = torch_or_skip()
    ours_dtype, theirs_dtype = getattr(tl, name), getattr(torch, name)
    if name.startswith("float"):
        ours, theirs = tl.finfo(ours_dtype), torch.finfo(theirs_dtype)
        fields = ("bits", "eps", "max", "min", "tiny", "smallest_normal", "resolution")
    else:
        ours, theirs = tl.iinfo(ours_dtype), torch.iinfo(theirs_dtype)
        fields = ("bits", "max", "min")
    assert {f: getattr(ours, f) for f in fields} == {f: getattr(theirs, f) for f in fields}
    assert ours.dtype == name
    assert tl.finfo().eps == torch.finfo().eps


def test_finfo_and_iinfo_refuse_the_other_kind():
    with pytest.raises(TypeError, match="requires a floating point input type, got int64"):
        tl.finfo(tl.int64)
    with pytest.raises(TypeError, match="requires an integer input type, got float32"):
        tl.iinfo(tl.float32)


@pytest.mark.parity
def test_diagonal_diag_trace_repeat_interleave_meshgrid_match_pytorch():
    torch = torch_or_skip()
    rng = np.random.default_rng(7)
    cube, vector = rng.standard_normal((3, 4, 5)), rng.standard_normal(4)

    def both(fn, *arrays):
        results = []
        for lib in (tl, torch):
            tensors = [lib.tensor(a, requires_grad=True) for a in arrays]
            out = fn(lib, *tensors)
            outs = out if isinstance(out, tuple) else (out,)
            weights = [np.random.default_rng(2).standard_normal(tuple(o.shape)) for o in outs]
            sum(((o * lib.tensor(w)).sum() for o, w in zip(outs, weights, strict=True))).backward()
            results.append(([o.detach().numpy() for o in outs], [t.grad.numpy() for t in tensors]))
        for mine, theirs in zip(results[0][0] + results[0][1], results[1][0] + results[1][1],
                                strict=True):
            np.testing.assert_allclose(mine, theirs, rtol=1e-12)

    for offset, dim1, dim2 in ((0, 0, 1), (1, 0, 1), (-2, 1, 2), (2, 2, 0), (7, 0, 1)):
        both(lambda lib, x, o=offset, a=dim1, b=dim2: lib.diagonal(x, o, a, b), cube)
    for k in (0, 1, -2):
        both(lambda lib, v, k=k: lib.diag(v, k), vector)
        both(lambda lib, m, k=k: m.diag(k), cube[0])
    both(lambda lib, m: lib.trace(m), cube[0])
    for repeats, dim in ((2, None), (3, 1), ([1, 0, 2], 0)):
        both(lambda lib, x, r=repeats, d=dim: lib.repeat_interleave(
            x, r if isinstance(r, int) else lib.tensor(r), dim=d), cube)
    for indexing in ("ij", "xy"):
        both(lambda lib, a, b, c, i=indexing: lib.meshgrid(a, b, c, indexing=i),
             vector, vector[:3], vector[:2])


def test_bad_arguments_of_the_index_functions():
    with pytest.raises(ValueError, match="diagonal: expected at least 2 dims"):
        tl.diagonal(tl.ones(3))
    with pytest.raises(ValueError, match="trace: expected a matrix"):
        tl.trace(tl.ones(2, 2, 2))
    with pytest.raises(ValueError, match="repeats must be integers >= 0"):
        tl.repeat_interleave(tl.ones(3), tl.tensor([1, -1, 2]))
    with pytest.raises(ValueError, match="indexing must be 'ij' or 'xy'"):
        tl.meshgrid(tl.ones(2), indexing="yx")


@pytest.mark.parity
def test_prod_with_zeros_and_its_gradient_match_pytorch():
    torch = torch_or_skip()
    values = np.array([[1.5, 0.0, 3.0, -2.0], [2.0, 0.0, 0.0, 1.0], [0.5, 4.0, -1.0, 2.0]])
    for dim, keepdim in ((None, False), (1, False), (0, True), (-1, True)):
        results = []
        for lib in (tl, torch):
            x = lib.tensor(values, requires_grad=True)
            y = lib.prod(x) if dim is None else lib.prod(x, dim, keepdim=keepdim)
            (y * lib.tensor(np.full(tuple(y.shape), 1.5))).sum().backward()
            results.append((y.detach().numpy(), x.grad.numpy()))
        np.testing.assert_allclose(results[0][0], results[1][0], rtol=1e-12)
        np.testing.assert_allclose(results[0][1], results[1][1], rtol=1e-12)
    assert tl.prod(tl.tensor([2, 3, 4])).dtype == torch.prod(torch.tensor([2, 3, 4])).numpy().dtype
    x = tl.tensor(np.random.default_rng(0).standard_normal((3, 4)), requires_grad=True)
    assert tl.autograd.gradcheck(lambda t: t.prod(1), (x,))


@pytest.mark.parity
def test_outside_the_graph_functions_match_pytorch():
    torch = torch_or_skip()
    data = np.array([3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5])
    for kwargs in ({}, {"return_counts": True}, {"return_inverse": True, "return_counts": True}):
        ours = tl.unique(tl.tensor(data), **kwargs)
        theirs = torch.unique(torch.tensor(data), **kwargs)
        ours, theirs = (ours, theirs) if isinstance(ours, tuple) else ((ours,), (theirs,))
        assert [o.tolist() for o in ours] == [t.tolist() for t in theirs]
    rows = np.array([[1, 2], [3, 4], [1, 2]])
    unique_rows = torch.unique(torch.tensor(rows), dim=0).tolist()
    assert tl.unique(tl.tensor(rows), dim=0).tolist() == unique_rows
    assert tl.bincount(tl.tensor(data), minlength=12).tolist() == torch.bincount(
        torch.tensor(data), minlength=12).tolist()
    weights = np.linspace(0, 1, len(data))
    np.testing.assert_allclose(
        tl.bincount(tl.tensor(data), tl.tensor(weights)).numpy(),
        torch.bincount(torch.tensor(data), torch.tensor(weights)).numpy())
    sequence, values = np.array([1.0, 3.0, 5.0, 7.0]), np.array([[0.0, 3.0], [5.0, 9.0]])
    for right in (False, True):
        assert tl.searchsorted(tl.tensor(sequence), tl.tensor(values), right=right).tolist() == (
            torch.searchsorted(torch.tensor(sequence), torch.tensor(values), right=right).tolist())
        assert tl.bucketize(tl.tensor(values), tl.tensor(sequence), right=right).tolist() == (
            torch.bucketize(torch.tensor(values), torch.tensor(sequence), right=right).tolist())
    batched = np.array([[1.0, 2.0, 3.0], [2.0, 4.0, 6.0]])
    assert tl.searchsorted(tl.tensor(batched), tl.tensor([[2.5], [2.5]])).tolist() == (
        torch.searchsorted(torch.tensor(batched), torch.tensor([[2.5], [2.5]])).tolist())
    for offset in (0, 1, -1):
        assert tl.tril_indices(3, 4, offset).tolist() == torch.tril_indices(3, 4, offset).tolist()
        assert tl.triu_indices(4, 3, offset).tolist() == torch.triu_indices(4, 3, offset).tolist()


@pytest.mark.parity
def test_nan_to_num_std_mean_var_mean_aminmax_match_pytorch():
    torch = torch_or_skip()
    values = np.array([np.nan, np.inf, -np.inf, 1.5, -2.0], dtype=np.float32)
    for kwargs in ({}, {"nan": 1.0, "posinf": 9.0, "neginf": -9.0}):
        x, tx = tl.tensor(values, requires_grad=True), torch.tensor(values, requires_grad=True)
        y, ty = tl.nan_to_num(x, **kwargs), torch.nan_to_num(tx, **kwargs)
        assert np.array_equal(y.detach().numpy(), ty.detach().numpy())
        y.sum().backward()
        ty.sum().backward()
        assert np.array_equal(x.grad.numpy(), tx.grad.numpy())
    matrix = np.random.default_rng(4).standard_normal((3, 5))
    for fn in ("std_mean", "var_mean"):
        for kwargs in ({}, {"dim": 1}, {"dim": 0, "keepdim": True, "correction": 0}):
            ours = getattr(tl, fn)(tl.tensor(matrix), **kwargs)
            theirs = getattr(torch, fn)(torch.tensor(matrix), **kwargs)
            for mine, reference in zip(ours, theirs, strict=True):
                np.testing.assert_allclose(mine.numpy(), reference.numpy(), rtol=1e-12)
    for kwargs in ({}, {"dim": 1}, {"dim": 0, "keepdim": True}):
        ours = tl.aminmax(tl.tensor(matrix), **kwargs)
        theirs = torch.aminmax(torch.tensor(matrix), **kwargs)
        assert [o.tolist() for o in ours] == [t.tolist() for t in theirs]


def test_bincount_and_searchsorted_refuse_bad_arguments():
    with pytest.raises(ValueError, match="bincount: expected a 1-D tensor of integers >= 0"):
        tl.bincount(tl.tensor([1, -1]))
    with pytest.raises(ValueError, match="side must be 'left' or 'right', got 'middle'"):
        tl.searchsorted(tl.tensor([1.0]), tl.tensor([1.0]), side="middle")


@pytest.mark.parity
def test_scatter_and_scatter_add_match_pytorch_with_gradients():
    torch = torch_or_skip()
    rng = np.random.default_rng(11)
    base, src = rng.standard_normal((3, 5)), rng.standard_normal((3, 4))
    index = np.array([[0, 4, 2, 2], [1, 1, 3, 0], [4, 3, 2, 1]])  # row 0 picks 2 twice
    for fn in ("scatter_add", "scatter"):
        results = []
        for lib in (tl, torch):
            x = lib.tensor(base, requires_grad=True)
            # scatter: no repeated position, and src the index's shape (PyTorch's backward
            # refuses a larger one)
            s = lib.tensor(src[:, :2] if fn == "scatter" else src, requires_grad=True)
            idx = lib.tensor(index[:, :2] if fn == "scatter" else index)
            out = getattr(lib, fn)(x, 1, idx, s)
            (out * lib.tensor(np.arange(15.0).reshape(3, 5))).sum().backward()
            results.append((out.detach().numpy(), x.grad.numpy(), s.grad.numpy()))
        for mine, theirs in zip(*results, strict=True):
            np.testing.assert_allclose(mine, theirs, rtol=1e-12, err_msg=fn)
    labels = [2, 0, 1]
    ours = tl.zeros(3, 4).scatter_(1, tl.tensor(labels).unsqueeze(1), 1.0)
    theirs = torch.zeros(3, 4).scatter_(1, torch.tensor(labels).unsqueeze(1), 1.0)
    assert ours.tolist() == theirs.tolist()
    counts = tl.zeros(5).scatter_add_(0, tl.tensor([1, 1, 4]), tl.ones(3))
    assert counts.tolist() == torch.zeros(5).scatter_add_(
        0, torch.tensor([1, 1, 4]), torch.ones(3)).tolist()
    assert tl.scatter(tl.zeros(2, 3), 0, tl.tensor([[1, 0, 1]]), value=7.0).tolist() == (
        torch.scatter(torch.zeros(2, 3), 0, torch.tensor([[1, 0, 1]]), value=7.0).tolist())


def test_scatter_refuses_what_pytorch_refuses():
    with pytest.raises(RuntimeError, match="index .* is out of bounds"):
        tl.scatter(tl.zeros(2, 3), 1, tl.tensor([[3]]), tl.ones(1, 1))
    with pytest.raises(RuntimeError, match="must be no larger than src"):
        tl.scatter_add(tl.zeros(2, 3), 1, tl.tensor([[0, 1]]), tl.ones(1, 1))
    with pytest.raises(TypeError, match="give either src"):
        tl.scatter(tl.zeros(2), 0, tl.tensor([0]))
    leaf = tl.zeros(3, requires_grad=True)
    with pytest.raises(RuntimeError):
        leaf.scatter_(0, tl.tensor([1]), 1.0)  # a leaf that requires grad, as in PyTorch
