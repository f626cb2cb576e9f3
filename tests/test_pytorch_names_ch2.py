"""PyTorch names chapter 2 added late: creation functions (``range``, ``asarray``,
``scalar_tensor``, ``frombuffer``, ``fill``), process switches (``set_default_tensor_type``,
inter-op threads, ``set_warn_always``, ``is_inference_mode_enabled``), ``argwhere``,
``adjoint``, ``as_strided``, ``index_reduce``, the random in-place draws ``cauchy_`` and
``geometric_``, ``Tensor.bernoulli``, ``fill_diagonal_``, ``tensorlib.func.linearize`` and
``tensorlib.linalg``'s ``matrix_exp``, LU, ``_ex`` forms, ``cond``, ``tensorinv``,
``tensorsolve``, ``vander``, ``diagonal`` and ``matmul``.

Parity with torch 2.13 (marker ``parity``), error messages, and float64 gradchecks.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

import tensorlib as tl
from tensorlib.autograd import gradcheck

L = tl.linalg


def _leaf(*shape: int, seed: int = 0, scale: float = 1.0) -> tl.Tensor:
    values = np.random.default_rng(seed).normal(size=shape) * scale
    return tl.tensor(values, dtype=tl.float64, requires_grad=True)


# --- creation functions and process switches ------------------------------------------------


@pytest.mark.parity
@pytest.mark.parametrize("args", [(1, 4), (0, 1, 0.25), (0, 5), (3, 0, -1), (1, 2.5, 0.5)])
def test_range_matches_torch(args):
    torch = pytest.importorskip("torch")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        expected = torch.range(*args)
    with pytest.warns(UserWarning, match="torch.range is deprecated") as caught:
        got = tl.range(*args)
    assert str(caught[0].message) == (
        "torch.range is deprecated and will be removed in a future release because its behavior "
        "is inconsistent with Python's range builtin. Instead, use torch.arange, which produces "
        "values in [start, end).")
    assert got.dtype == tl.float32 and got.tolist() == expected.tolist()


def test_range_errors():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(RuntimeError, match="step must be nonzero"):
            tl.range(0, 3, 0)
        with pytest.raises(RuntimeError, match="inconsistent with step sign"):
            tl.range(3, 0, 1)
        assert tl.range(0, 3, dtype=tl.float64).dtype == tl.float64


@pytest.mark.parity
def test_scalar_tensor_matches_torch():
    torch = pytest.importorskip("torch")
    for value in (3, 2.5, True):
        got, expected = tl.scalar_tensor(value), torch.scalar_tensor(value)
        assert got.shape == () and got.item() == expected.item() and got.dtype == tl.float32
    assert tl.scalar_tensor(2, dtype=tl.int64).dtype == tl.int64
    assert tl.scalar_tensor(1.5, requires_grad=True).requires_grad


@pytest.mark.parity
def test_frombuffer_matches_torch_and_shares_memory():
    torch = pytest.importorskip("torch")
    raw = bytearray(np.arange(4, dtype=np.int32).tobytes())
    for kwargs in ({}, {"count": 2}, {"offset": 4}, {"offset": 4, "count": 1}):
        got = tl.frombuffer(raw, dtype=tl.int32, **kwargs)
        assert got.tolist() == torch.frombuffer(raw, dtype=torch.int32, **kwargs).tolist()
    view = tl.frombuffer(raw, dtype=tl.int32)
    raw[0] = 7
    assert view.tolist()[0] == 7


@pytest.mark.parametrize(
    "buffer, kwargs, match",
    [
        (b"", {}, r"both buffer length \(0\) and count \(-1\) must not be 0"),
        (bytearray(b"123"), {}, r"must be a multiple of element size \(4\)"),
        (bytearray(8), {"offset": 9}, r"offset \(9 bytes\) must be non-negative"),
        (bytearray(8), {"count": 3}, r"requested buffer length \(3 \* 4 bytes\)"),
        (bytearray(8), {"count": 0}, r"and count \(0\) must not be 0"),
    ],
)
def test_frombuffer_errors(buffer, kwargs, match):
    with pytest.raises(ValueError, match=match):
        tl.frombuffer(buffer, dtype=tl.int32, **kwargs)


@pytest.mark.parity
def test_asarray_copy_dtype_and_requires_grad():
    torch = pytest.importorskip("torch")
    assert tl.asarray([1, 2]).dtype == tl.int64 and tl.asarray([1.0, 2]).dtype == tl.float32
    assert str(torch.asarray([1.0, 2]).dtype) == "torch.float32"
    source = np.zeros(2)
    shared, copied = tl.asarray(source), tl.asarray(source, copy=True)
    source[0] = 1.0
    assert shared.tolist() == [1.0, 0.0] and copied.tolist() == [0.0, 0.0]
    x = tl.zeros(2, requires_grad=True)
    assert tl.asarray(x) is x
    assert not tl.asarray(x, requires_grad=False).requires_grad
    assert tl.asarray(x, copy=True).grad_fn is None
    assert tl.asarray(source, requires_grad=True).requires_grad
    with pytest.raises(ValueError, match="can't alias arbitrary sequence into a tensor"):
        tl.asarray([1, 2], copy=False)
    with pytest.raises(ValueError, match="can't alias tensor with dtype"):
        tl.asarray(source, dtype=tl.float32, copy=False)
    with pytest.raises(ValueError, match="can't alias tensor with dtype"):
        tl.asarray(x, dtype=tl.float64, copy=False)


@pytest.mark.parity
def test_fill_typename_is_storage_warn_always():
    torch = pytest.importorskip("torch")
    assert tl.fill(tl.zeros(2, dtype=tl.int64), 2.7).tolist() == torch.fill(
        torch.zeros(2, dtype=torch.int64), 2.7).tolist()
    assert tl.fill(tl.zeros(2), tl.tensor(3.0)).tolist() == [3.0, 3.0]
    with pytest.raises(RuntimeError, match="0-dimension value tensor"):
        tl.fill(tl.zeros(2), tl.ones(2))
    for dtype in ("float32", "int64", "float16", "bool"):
        expected = torch.typename(torch.zeros(2, dtype=getattr(torch, dtype)))
        assert tl.typename(tl.zeros(2, dtype=getattr(tl, dtype))) == expected
    assert tl.typename(3) == torch.typename(3) == "int"
    assert tl.typename(int) == torch.typename(int) == "int"
    assert tl.typename(np.zeros) == torch.typename(np.zeros) == "numpy.zeros"
    assert tl.typename(tl.nn.Linear) == "tensorlib.nn.modules.linear.Linear"
    assert tl.typename(tl.nn.Linear(1, 1)) == "tensorlib.nn.modules.linear.Linear"
    assert tl.is_storage(tl.zeros(2)) is False
    assert tl.is_warn_always_enabled() is False
    tl.set_warn_always(True)
    try:
        assert tl.is_warn_always_enabled() is True
    finally:
        tl.set_warn_always(False)


def test_set_default_tensor_type():
    with pytest.warns(UserWarning, match=r"set_default_tensor_type\(\) is deprecated"):
        tl.set_default_tensor_type(tl.DoubleTensor)
    try:
        assert tl.get_default_dtype() == tl.float64 and tl.zeros(1).dtype == tl.float64
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            tl.set_default_tensor_type("torch.FloatTensor")
            assert tl.get_default_dtype() == tl.float32
            with pytest.raises(TypeError, match="only floating-point types"):
                tl.set_default_tensor_type(tl.LongTensor)
            with pytest.raises(TypeError, match="only floating-point types"):
                tl.set_default_tensor_type("torch.LongTensor")
            with pytest.raises(ValueError, match="CUDA type"):
                tl.set_default_tensor_type("torch.cuda.FloatTensor")
            with pytest.raises(TypeError, match="invalid type object"):
                tl.set_default_tensor_type(tl.float64)
    finally:
        tl.set_default_dtype(tl.float32)


def test_interop_threads_rules(monkeypatch):
    from tensorlib.engine import parallel

    monkeypatch.setattr(parallel, "_interop_threads", 0)
    monkeypatch.setattr(parallel, "_interop_frozen", False)
    assert tl.get_num_interop_threads() == tl.get_num_threads()
    with pytest.raises(RuntimeError, match="expects a positive integer"):
        tl.set_num_interop_threads(0)
    with pytest.raises(RuntimeError, match="expects an int, but got float"):
        tl.set_num_interop_threads(2.0)
    with pytest.raises(RuntimeError, match="expects an int, but got bool"):
        tl.set_num_interop_threads(True)
    tl.set_num_interop_threads(3)
    assert tl.get_num_interop_threads() == 3
    with pytest.raises(RuntimeError, match="cannot set number of interop threads"):
        tl.set_num_interop_threads(4)


def test_inference_mode_flag():
    assert not tl.is_inference_mode_enabled()
    with tl.no_grad():
        assert not tl.is_inference_mode_enabled()
    with tl.inference_mode():
        assert tl.is_inference_mode_enabled()
        with tl.inference_mode(False):
            assert tl.is_inference_mode_enabled()
        x = tl.zeros(2)
    assert not tl.is_inference_mode_enabled()
    assert x.is_inference() is False  # tensorlib makes no inference tensors (PyTorch: True)


# --- argwhere, adjoint, as_strided, index_reduce, Tensor methods ----------------------------


@pytest.mark.parity
@pytest.mark.parametrize("values", [[[1, 0], [0, 2]], 3.0, 0.0, [[0.0, 0.0]], [[[1, 0, 2]]]])
def test_argwhere_matches_torch(values):
    torch = pytest.importorskip("torch")
    expected = torch.argwhere(torch.tensor(values))
    for got in (tl.argwhere(tl.tensor(values)), tl.tensor(values).argwhere()):
        assert got.dtype == tl.int64 and got.shape == tuple(expected.shape)
        assert got.tolist() == expected.tolist()


def test_adjoint():
    x = _leaf(2, 3, 4)
    assert tl.adjoint(x).shape == (2, 4, 3)
    assert gradcheck(tl.adjoint, (x,))
    with pytest.raises(RuntimeError, match="only supported on matrices or batches of matrices"):
        tl.adjoint(tl.zeros(3))


@pytest.mark.parity
@pytest.mark.parametrize(
    "size, stride, offset", [((3, 3), (2, 1), 1), ((4, 3), (1, 1), None), ((2, 2), (1, 3), None),
                             ((2, 3), (0, 1), 2)],
)
def test_as_strided_matches_torch(size, stride, offset):
    torch = pytest.importorskip("torch")
    base, tbase = tl.arange(12.0)[1:], torch.arange(12.0)[1:]
    got, expected = base.as_strided(size, stride, offset), tbase.as_strided(size, stride, offset)
    assert got.tolist() == expected.tolist() and got.stride() == expected.stride()
    assert tl.as_strided(base, size, stride, offset).tolist() == expected.tolist()
    assert np.shares_memory(got.numpy(), base.numpy())


def test_as_strided_gradient_and_errors():
    x = _leaf(8)
    assert gradcheck(lambda t: t.as_strided((3, 3), (1, 1)), (x,))
    assert gradcheck(lambda t: (t * 1)[2:].as_strided((2, 2), (2, 1), 3), (x,))
    y = tl.zeros(6, dtype=tl.float64, requires_grad=True)
    tl.as_strided(y, (4, 3), (1, 1)).sum().backward()
    assert y.grad.tolist() == [1.0, 2.0, 3.0, 3.0, 2.0, 1.0]
    with pytest.raises(RuntimeError, match=r"setStorage: sizes \[4, 4\], strides \[4, 1\]"):
        tl.arange(12.0).as_strided((4, 4), (4, 1), 1)
    with pytest.raises(RuntimeError, match="mismatch in length of strides and shape"):
        tl.arange(12.0).as_strided((2, 2), (1,))


@pytest.mark.parity
@pytest.mark.parametrize("reduce", ["prod", "mean", "amax", "amin"])
@pytest.mark.parametrize("include_self", [True, False])
@pytest.mark.parametrize("dim", [0, 1])
def test_index_reduce_matches_torch(reduce, include_self, dim):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(1)
    base, source = rng.normal(size=(3, 4)), rng.normal(size=(3, 4))
    source = source[:, :3] if dim == 1 else source
    index = [0, 2, 0]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torch: "index_reduce() is in beta"
        expected = torch.tensor(base).index_reduce(
            dim, torch.tensor(index), torch.tensor(source), reduce, include_self=include_self)
    got = tl.tensor(base).index_reduce(dim, tl.tensor(index), tl.tensor(source), reduce,
                                       include_self=include_self)
    np.testing.assert_allclose(got.numpy(), expected.numpy(), rtol=1e-12)
    inplace = tl.tensor(base)
    inplace.index_reduce_(dim, tl.tensor(index), tl.tensor(source), reduce,
                          include_self=include_self)
    np.testing.assert_allclose(inplace.numpy(), expected.numpy(), rtol=1e-12)


def test_index_reduce_gradient_and_errors():
    index = tl.tensor([0, 2, 0])
    assert gradcheck(lambda a, s: a.index_reduce(0, index, s, "prod"), (_leaf(3, 2), _leaf(3, 2)))
    assert gradcheck(lambda a, s: tl.index_reduce(a, 0, index, s, "mean", include_self=False),
                     (_leaf(3, 2), _leaf(3, 2, seed=1)))
    with pytest.raises(RuntimeError, match="Expected reduce to be one of prod, mean, amax or amin"):
        tl.ones(3, 2).index_reduce(0, index, tl.ones(3, 2), "sum")
    with pytest.raises(RuntimeError, match=r"Number of indices \(2\) should be equal"):
        tl.ones(3, 2).index_reduce(0, tl.tensor([0, 1]), tl.ones(3, 2), "prod")


@pytest.mark.parity
@pytest.mark.parametrize("shape, wrap", [((3, 3), False), ((2, 3), False), ((7, 3), True),
                                         ((7, 3), False), ((3, 3, 3), False)])
def test_fill_diagonal_matches_torch(shape, wrap):
    torch = pytest.importorskip("torch")
    expected = torch.zeros(*shape).fill_diagonal_(2.0, wrap=wrap)
    assert tl.zeros(*shape).fill_diagonal_(2.0, wrap=wrap).tolist() == expected.tolist()


def test_fill_diagonal_errors_and_graph():
    with pytest.raises(RuntimeError, match="dimensions must larger than 1"):
        tl.zeros(3).fill_diagonal_(1)
    with pytest.raises(RuntimeError, match="all dimensions of input must be of equal length"):
        tl.zeros(3, 4, 5).fill_diagonal_(1)
    assert gradcheck(lambda t: (t * 1).fill_diagonal_(0.5), (_leaf(3, 3),))


def test_random_draws_in_place():
    gen = tl.Generator().manual_seed(0)
    heavy = tl.zeros(20001, dtype=tl.float64).cauchy_(3.0, 2.0, generator=gen)
    assert abs(heavy.median().item() - 3.0) < 0.1
    trials = tl.zeros(20000, dtype=tl.float64).geometric_(0.25, generator=gen)
    assert trials.min().item() >= 1 and abs(trials.mean().item() - 4.0) < 0.15
    counts = tl.zeros(5, dtype=tl.int64).geometric_(0.5, generator=gen)
    assert counts.dtype == tl.int64 and counts.min().item() >= 1
    with pytest.raises(RuntimeError, match=r"geometric_ expects p to be in \(0, 1\), but got p=1"):
        tl.zeros(3).geometric_(1)
    with pytest.raises(RuntimeError, match="cauchy_ expects sigma > 0.0, but found sigma=0"):
        tl.zeros(3).cauchy_(0, 0)
    with pytest.raises(TypeError, match="cauchy_: expected a floating-point tensor"):
        tl.zeros(3, dtype=tl.int64).cauchy_()


def test_bernoulli_method_uses_the_generator():
    probabilities = tl.tensor([0.0, 1.0, 0.3, 0.7] * 50)
    first = probabilities.bernoulli(generator=tl.Generator().manual_seed(5))
    second = probabilities.bernoulli(generator=tl.Generator().manual_seed(5))
    assert first.tolist() == second.tolist() and first.dtype == tl.float32
    assert first[0].item() == 0.0 and first[1].item() == 1.0
    assert set(probabilities.bernoulli(0.5).tolist()) <= {0.0, 1.0}
    with pytest.raises(RuntimeError, match=r"expected every probability in \[0, 1\]"):
        tl.tensor([1.5]).bernoulli()


@pytest.mark.parity
def test_cov_corrcoef_histogram_get_device_methods():
    torch = pytest.importorskip("torch")
    x = np.random.default_rng(2).normal(size=(3, 6))
    np.testing.assert_allclose(tl.tensor(x).cov().numpy(), torch.tensor(x).cov().numpy())
    np.testing.assert_allclose(tl.tensor(x).cov(correction=0).numpy(),
                               torch.tensor(x).cov(correction=0).numpy())
    np.testing.assert_allclose(tl.tensor(x).corrcoef().numpy(),
                               torch.tensor(x).corrcoef().numpy())
    hist, edges = tl.tensor(x).histogram(4)
    expected = torch.tensor(x).histogram(4)
    np.testing.assert_allclose(hist.numpy(), expected.hist.numpy())
    np.testing.assert_allclose(edges.numpy(), expected.bin_edges.numpy())
    assert tl.zeros(2).get_device() == torch.zeros(2).get_device() == -1


# --- tensorlib.func.linearize ---------------------------------------------------------------


def test_linearize():
    x = tl.tensor([0.5, 1.0, 2.0], dtype=tl.float64)
    output, jvp_fn = tl.func.linearize(lambda t: t.sin() * t, x)
    assert not output.requires_grad
    np.testing.assert_allclose(output.numpy(), np.sin(x.numpy()) * x.numpy())
    tangent = tl.tensor([1.0, -2.0, 0.5], dtype=tl.float64)
    expected = (np.cos(x.numpy()) * x.numpy() + np.sin(x.numpy())) * tangent.numpy()
    np.testing.assert_allclose(jvp_fn(tangent).numpy(), expected)
    with pytest.raises(RuntimeError, match="expected 1 tangents, one per primal, got 2"):
        jvp_fn(tangent, tangent)


@pytest.mark.parity
def test_functional_call_through_func():
    torch = pytest.importorskip("torch")
    tl.manual_seed(0)
    model = tl.nn.Linear(3, 2)
    weight, bias = tl.ones(2, 3), tl.zeros(2)
    out = tl.func.functional_call(model, ({"weight": weight}, {"bias": bias}), (tl.ones(1, 3),))
    assert out.tolist() == [[3.0, 3.0]]
    with pytest.raises(RuntimeError, match="Unexpected key"):
        tl.func.functional_call(model, {"weight": weight, "extra": bias}, (tl.ones(1, 3),),
                                strict=True)
    tmodel = torch.nn.Linear(3, 2)
    texpected = torch.func.functional_call(
        tmodel, ({"weight": torch.ones(2, 3)}, {"bias": torch.zeros(2)}), (torch.ones(1, 3),))
    assert texpected.tolist() == out.tolist()


# --- tensorlib.linalg -----------------------------------------------------------------------


@pytest.mark.parity
@pytest.mark.parametrize("scale", [0.1, 1.0, 8.0])
def test_matrix_exp_matches_torch(scale):
    torch = pytest.importorskip("torch")
    a = np.random.default_rng(3).normal(size=(2, 3, 3)) * scale
    expected = torch.linalg.matrix_exp(torch.tensor(a)).numpy()
    np.testing.assert_allclose(L.matrix_exp(tl.tensor(a)).numpy(), expected, rtol=1e-10)
    np.testing.assert_allclose(tl.matrix_exp(tl.tensor(a)).numpy(), expected, rtol=1e-10)
    got32 = L.matrix_exp(tl.tensor(a, dtype=tl.float32))
    assert got32.dtype == tl.float32


def test_matrix_exp_gradient_and_errors():
    assert gradcheck(L.matrix_exp, (_leaf(3, 3),))
    assert gradcheck(L.matrix_exp, (_leaf(2, 4, 4, scale=3.0),))
    with pytest.raises(RuntimeError, match="A must be batches of square matrices"):
        L.matrix_exp(tl.zeros(2, 3))


@pytest.mark.parity
@pytest.mark.parametrize("p", [None, 2, -2, "fro", "nuc", math.inf, -math.inf, 1, -1])
def test_cond_matches_torch(p):
    torch = pytest.importorskip("torch")
    a = np.random.default_rng(4).normal(size=(2, 3, 3))
    expected = torch.linalg.cond(torch.tensor(a), p).numpy()
    np.testing.assert_allclose(L.cond(tl.tensor(a), p).numpy(), expected, rtol=1e-10)
    singular = np.array([[1.0, 2.0], [2.0, 4.0]])
    if p not in (None, 2, -2):
        assert L.cond(tl.tensor(singular), p).item() == math.inf
    assert gradcheck(lambda t: L.cond(t, p), (_leaf(3, 3, seed=5),))


def test_cond_errors():
    with pytest.raises(RuntimeError, match="linalg.cond got an invalid norm type: 3"):
        L.cond(tl.eye(2), 3)
    with pytest.raises(RuntimeError, match="A must be batches of square matrices"):
        L.cond(tl.zeros(2, 3), 1)
    assert L.cond(tl.zeros(2, 3) + tl.eye(2, 3)).shape == ()


@pytest.mark.parity
@pytest.mark.parametrize("shape", [(3, 3), (2, 4, 4), (3, 2), (2, 4)])
def test_lu_and_lu_factor_match_torch(shape):
    torch = pytest.importorskip("torch")
    a = np.random.default_rng(6).normal(size=shape)
    for got, expected in zip(L.lu(tl.tensor(a)), torch.linalg.lu(torch.tensor(a)), strict=True):
        np.testing.assert_allclose(got.numpy(), expected.numpy(), atol=1e-12)
    lu, pivots = L.lu_factor(tl.tensor(a))
    tlu, tpivots = torch.linalg.lu_factor(torch.tensor(a))
    np.testing.assert_allclose(lu.numpy(), tlu.numpy(), atol=1e-12)
    assert pivots.dtype == tl.int32 and pivots.tolist() == tpivots.tolist()


@pytest.mark.parity
@pytest.mark.parametrize("left, adjoint", [(True, False), (True, True), (False, False),
                                           (False, True)])
def test_lu_solve_matches_torch_and_is_differentiable(left, adjoint):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(7)
    a, b = rng.normal(size=(2, 3, 3)), rng.normal(size=(2, 3, 2) if left else (2, 2, 3))
    tlu, tpivots = torch.linalg.lu_factor(torch.tensor(a))
    expected = torch.linalg.lu_solve(tlu, tpivots, torch.tensor(b), left=left, adjoint=adjoint)
    lu, pivots = L.lu_factor(tl.tensor(a))
    got = L.lu_solve(lu, pivots, tl.tensor(b), left=left, adjoint=adjoint)
    np.testing.assert_allclose(got.numpy(), expected.numpy(), rtol=1e-10)
    lu_leaf = tl.tensor(lu.numpy(), requires_grad=True)
    b_leaf = tl.tensor(b, requires_grad=True)
    assert gradcheck(lambda f, r: L.lu_solve(f, pivots, r, left=left, adjoint=adjoint),
                     (lu_leaf, b_leaf))


def test_lu_errors():
    with pytest.raises(RuntimeError, match="LU without pivoting is not implemented on the CPU"):
        L.lu_factor(tl.eye(2), pivot=False)
    with pytest.raises(RuntimeError, match=r"U\[1,1\] is zero and using it on lu_solve"):
        L.lu_factor(tl.zeros(2, 2))
    with pytest.raises(RuntimeError, match=r"U\[2,2\] is zero"):  # PyTorch's 1-based index
        L.lu_factor(tl.tensor([[1.0, 2.0], [2.0, 4.0]]))
    assert L.lu(tl.zeros(2, 2)).U.tolist() == [[0.0, 0.0], [0.0, 0.0]]


@pytest.mark.parity
def test_ex_forms_match_torch():
    torch = pytest.importorskip("torch")
    batch = np.stack([np.array([[1.0, 2.0], [2.0, 4.0]]), 2 * np.eye(2)])
    inverse, info = L.inv_ex(tl.tensor(batch))
    tinfo = torch.linalg.inv_ex(torch.tensor(batch)).info
    assert info.dtype == tl.int32 and info.tolist() == tinfo.tolist() == [2, 0]
    assert np.isnan(inverse.numpy()[0]).all()
    assert inverse.numpy()[1].tolist() == [[0.5, 0], [0, 0.5]]
    not_pd = tl.tensor([[1.0, 2.0], [2.0, 1.0]])
    assert L.cholesky_ex(not_pd).info.item() == torch.linalg.cholesky_ex(
        torch.tensor([[1.0, 2.0], [2.0, 1.0]])).info.item() == 2
    result, info = L.solve_ex(tl.tensor(batch), tl.ones(2, 2, dtype=tl.float64))
    assert info.tolist() == [2, 0] and result.numpy()[1].tolist() == [0.5, 0.5]
    spd = np.array([[4.0, 1.0], [1.0, 3.0]])
    factor, info = L.cholesky_ex(tl.tensor(spd), upper=True)
    np.testing.assert_allclose(factor.numpy(), torch.linalg.cholesky(
        torch.tensor(spd), upper=True).numpy())
    with pytest.raises(L.LinAlgError, match="singular"):
        L.inv_ex(tl.tensor(batch), check_errors=True)


def test_ex_forms_are_differentiable_when_they_succeed():
    spd = _leaf(3, 3)
    assert gradcheck(lambda a: L.inv_ex(a).inverse, (_leaf(3, 3),))
    assert gradcheck(lambda a: L.cholesky_ex(a @ a.mT + tl.eye(3, dtype=tl.float64)).L, (spd,))
    assert gradcheck(lambda a, b: L.solve_ex(a, b).result, (_leaf(3, 3), _leaf(3, 2, seed=1)))


@pytest.mark.parity
def test_tensorinv_tensorsolve_match_torch():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(8)
    a = rng.normal(size=(4, 6, 8, 3))
    np.testing.assert_allclose(L.tensorinv(tl.tensor(a), ind=2).numpy(),
                               torch.linalg.tensorinv(torch.tensor(a), ind=2).numpy(), rtol=1e-9)
    a, b = rng.normal(size=(2, 3, 6)), rng.normal(size=(2, 3))
    np.testing.assert_allclose(L.tensorsolve(tl.tensor(a), tl.tensor(b)).numpy(),
                               torch.linalg.tensorsolve(torch.tensor(a), torch.tensor(b)).numpy())
    a = rng.normal(size=(6, 2, 3))
    np.testing.assert_allclose(
        L.tensorsolve(tl.tensor(a), tl.tensor(b), dims=(0,)).numpy(),
        torch.linalg.tensorsolve(torch.tensor(a), torch.tensor(b), dims=(0,)).numpy())
    assert gradcheck(lambda t: L.tensorinv(t, ind=1), (_leaf(4, 2, 2),))
    assert gradcheck(L.tensorsolve, (_leaf(2, 3, 6), _leaf(2, 3, seed=1)))
    with pytest.raises(RuntimeError, match="Expected a strictly positive integer for 'ind'"):
        L.tensorinv(tl.zeros(4, 2, 2), ind=0)
    with pytest.raises(RuntimeError, match=r"but got 3 != 2"):
        L.tensorinv(tl.zeros(2, 3), ind=1)


@pytest.mark.parity
def test_vander_diagonal_matmul_match_torch():
    torch = pytest.importorskip("torch")
    for values, n in (([1, 2, 3], None), ([1.0, 2.0, 3.0], 2), ([[0.5, 2.0], [1.0, -1.0]], 4)):
        got = L.vander(tl.tensor(values), N=n)
        expected = torch.linalg.vander(torch.tensor(values), N=n)
        assert got.tolist() == expected.tolist() and got.dtype.name == str(expected.dtype)[6:]
    assert gradcheck(lambda t: L.vander(t, N=4), (tl.tensor([0.0, 1.5, -2.0], dtype=tl.float64,
                                                               requires_grad=True),))
    with pytest.raises(RuntimeError, match="N must be greater than 1."):
        L.vander(tl.tensor([1.0, 2.0]), N=1)
    a = np.arange(24.0).reshape(2, 3, 4)
    assert L.diagonal(tl.tensor(a), offset=1).tolist() == torch.linalg.diagonal(
        torch.tensor(a), offset=1).tolist()
    assert L.diagonal(tl.tensor(a), dim1=0, dim2=2).tolist() == torch.linalg.diagonal(
        torch.tensor(a), dim1=0, dim2=2).tolist()
    b = np.arange(8.0).reshape(4, 2)
    assert L.matmul(tl.tensor(a), tl.tensor(b)).tolist() == torch.linalg.matmul(
        torch.tensor(a), torch.tensor(b)).tolist()
