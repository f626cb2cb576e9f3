"""Reductions as PyTorch computes them: sort and topk, max and min, float16 sums, integer sums,
empty inputs.

- A descending sort or topk reverses the order instead of negating the values, so it is right for
  unsigned integers, the most negative integer and bools; NaN is the largest value.
- float16 reductions accumulate in float32 (a mean over 70,000 halves has a gradient, a norm of
  halves does not overflow).
- ``max()`` and ``min()`` send the gradient to a NaN, ``amax`` at a NaN gives NaN everywhere, and a
  constant's ``std`` has gradient 0.
- Integer and bool sums are int64; reductions of empty tensors give PyTorch's shapes and errors.
"""

from __future__ import annotations

import numpy as np
import pytest
from _probe import NAN, assert_matches_pytorch, grad_of

import tensorlib as tl


# -- descending sort and topk: an order reversal, not a negation
# ----------------------------------------
@pytest.mark.parametrize(
    ("values", "dtype", "expected"),
    [
        ([0, 1, 2, 200], np.uint8, [200, 2, 1, 0]),
        ([-128, 0, 5], np.int8, [5, 0, -128]),
        ([-(2**63), 3, -1], np.int64, [3, -1, -(2**63)]),
        ([False, True, False], np.bool_, [True, False, False]),
        ([1.0, np.nan, 3.0], np.float32, [np.nan, 3.0, 1.0]),  # NaN is the largest, as in PyTorch
    ],
)
def test_descending_sort(values, dtype, expected):
    x = tl.tensor(np.array(values, dtype=dtype))
    got, indices = x.sort(descending=True)
    np.testing.assert_array_equal(got.numpy(), np.array(expected, dtype=dtype))
    np.testing.assert_array_equal(x.numpy()[indices.numpy()], got.numpy())


def test_topk_of_small_integers_and_ties():
    assert tl.tensor(np.array([-128, 0, 5], dtype=np.int8)).topk(1).values.tolist() == [5]
    assert tl.tensor(np.array([0, 1, 2, 200], dtype=np.uint8)).topk(2).values.tolist() == [200, 2]
    assert tl.tensor([3.0, 1.0, 3.0]).topk(2).indices.tolist() == [0, 2]  # ties keep their order
    assert tl.tensor([1.0, float("nan"), 3.0]).topk(1).indices.tolist() == [1]


# -- float16 reductions accumulate in float32
# --------------------------------------------------------
def test_float16_mean_over_many_elements_has_a_gradient():
    x = tl.ones(70000, dtype=tl.float16, requires_grad=True)
    x.mean().backward()
    assert x.grad.dtype == np.float16
    np.testing.assert_allclose(x.grad.numpy()[:3].astype(np.float64), 1 / 70000, rtol=5e-3)
    rows = tl.ones(2, 70000, dtype=tl.float16, requires_grad=True)
    rows.mean(dim=1).sum().backward()
    np.testing.assert_allclose(rows.grad.numpy()[0, :2].astype(np.float64), 1 / 70000, rtol=5e-3)


def test_float16_var_and_norm_over_many_elements():
    x = tl.tensor(np.tile(np.array([0.0, 2.0], dtype=np.float16), 35000), requires_grad=True)
    var = x.var()
    assert abs(float(var.item()) - 1.0) < 1e-2  # PyTorch: 1.0000
    var.backward()
    assert np.all(np.isfinite(x.grad.numpy())) and float(np.abs(x.grad.numpy()).max()) > 0
    norm = tl.tensor(np.array([300.0, 300.0], dtype=np.float16)).norm()
    assert abs(float(norm.item()) - 424.25) < 0.5  # PyTorch: 424.25, not inf


# -- NaN and constants: PyTorch's gradients
# ---------------------------------------------------------------
@pytest.mark.parametrize(
    ("name", "fn", "values", "expected"),
    [
        (
            "max() sends the gradient to the NaN",
            lambda t: t.max(),
            [1.0, NAN, 3.0],
            [0.0, 1.0, 0.0],
        ),
        (
            "min() sends the gradient to the NaN",
            lambda t: t.min(),
            [1.0, NAN, 3.0],
            [0.0, 1.0, 0.0],
        ),
        ("amax() at a NaN: NaN everywhere", lambda t: t.amax(), [1.0, NAN, 3.0], [NAN, NAN, NAN]),
        ("std of a constant: gradient 0", lambda t: t.std(), [2.0, 2.0, 2.0], [0.0, 0.0, 0.0]),
    ],
)
def test_gradients_at_nan_and_constants_match_pytorch(name, fn, values, expected):
    np.testing.assert_array_equal(grad_of(tl, values, fn).numpy(), np.array(expected), err_msg=name)


def test_std_away_from_zero_is_unchanged():
    x = tl.tensor(np.random.default_rng(3).normal(size=(3, 4)), requires_grad=True)
    assert tl.autograd.gradcheck(lambda t: t.std() + t.std(dim=1).sum(), (x,))


# -- empty tensors
# ----------------------------------------------------------------------------------------
def test_empty_tensors_reduce_like_pytorch():
    values, indices = tl.zeros(0, 3).max(dim=1)
    assert values.shape == (0,) and indices.shape == (0,)
    assert tl.zeros(0, 3).amax(dim=1).shape == (0,)
    with pytest.raises(IndexError, match="size 0"):
        tl.zeros(0, 3).max(dim=0)
    with pytest.raises(RuntimeError, match="empty dim"):
        tl.zeros(0, 3).amax(dim=0)


# -- integer and bool sums are int64
# -------------------------------------------------------------------
@pytest.mark.parametrize(
    ("values", "dtype", "dim", "expected"),
    [
        ([200, 200], np.uint8, None, 400),
        ([True, True, False], np.bool_, None, 2),
        ([[100, 100]], np.int8, 1, [200]),
        ([[200], [200]], np.uint8, 0, [400]),
        ([7], np.int32, None, 7),
        ([2**31, 2**31], np.uint32, None, 2**32),
    ],
)
def test_integer_and_bool_sums_are_int64(values, dtype, dim, expected):
    total = tl.tensor(np.array(values, dtype=dtype)).sum(dim)
    assert total.dtype == np.int64 and total.tolist() == expected


PROBE = {
    "float16 var": lambda lib: lib.tensor(np.tile(np.array([0.0, 2.0], np.float16), 35000)).var(),
    "float16 mean gradient": lambda lib: grad_of(
        lib, np.ones(70000), lambda t: t.mean(), np.float16
    ),
    "float16 norm": lambda lib: lib.tensor(np.array([300.0, 300.0], np.float16)).norm(),
    "min() gradient at NaN": lambda lib: grad_of(lib, [1.0, NAN, 3.0], lambda t: t.min()),
    "max() gradient at NaN": lambda lib: grad_of(lib, [1.0, NAN, 3.0], lambda t: t.max()),
    "amax() gradient at NaN": lambda lib: grad_of(lib, [1.0, NAN, 3.0], lambda t: t.amax()),
    "std of a constant": lambda lib: grad_of(lib, [2.0, 2.0, 2.0], lambda t: t.std()),
    "topk with NaN": lambda lib: lib.tensor([1.0, NAN, 3.0]).topk(1).indices,
    "max(dim) of a (0, 3) tensor": lambda lib: lib.zeros(0, 3).max(dim=1).values,
    "max(dim=0) of a (0, 3) tensor": lambda lib: lib.zeros(0, 3).max(dim=0).values,
    "amax(dim) of a (0, 3) tensor": lambda lib: lib.zeros(0, 3).amax(dim=1),
    "uint8 sort descending": lambda lib: (
        lib.tensor(np.array([0, 1, 2, 200], np.uint8)).sort(descending=True).values
    ),
    "int8 topk": lambda lib: lib.tensor(np.array([-128, 0, 5], np.int8)).topk(1).values,
    "bool sort descending": lambda lib: (
        lib.tensor([False, True, False]).sort(descending=True).values
    ),
    "NaN sorts first descending": lambda lib: (
        lib.tensor([1.0, NAN, 3.0]).sort(descending=True).indices
    ),
    "uint8 sum": lambda lib: lib.tensor(np.array([200, 200], np.uint8)).sum(),
    "bool sum": lambda lib: lib.tensor([True, True]).sum(),
    "int8 sum(dim)": lambda lib: lib.tensor(np.array([[100, 100]], np.int8)).sum(1),
}


@pytest.mark.parity
@pytest.mark.parametrize("case", list(PROBE))
def test_matches_pytorch(case):
    assert_matches_pytorch(case, PROBE[case])


# prod's backward at the edge shapes (the OpInfo sweep: a 0-d input over dim 0, an empty input)
def test_prod_backward_at_edge_shapes():
    scalar = tl.tensor(2.5, dtype=tl.float64, requires_grad=True)
    out = tl.prod(scalar, 0)
    assert out.shape == () and out.item() == 2.5
    out.backward()
    assert scalar.grad.item() == 1.0
    empty = tl.tensor(np.zeros(0), requires_grad=True)
    whole, along = tl.prod(empty), tl.prod(empty, 0, keepdim=True)
    assert whole.item() == 1.0 and along.tolist() == [1.0]
    (whole + along.sum()).backward()
    assert empty.grad.shape == (0,)
    wide = tl.tensor(np.zeros((2, 0)), requires_grad=True)
    tl.prod(wide, 1).sum().backward()
    assert wide.grad.shape == (2, 0)
    assert tl.autograd.gradgradcheck(lambda t: tl.prod(t, 0), (scalar,))


@pytest.mark.parity
@pytest.mark.parametrize("shape, dim", [((), 0), ((), None), ((0,), None), ((0,), 0),
                                        ((3, 0), 1), ((3, 0), 0)])
def test_prod_edge_shapes_match_pytorch(shape, dim):
    torch = pytest.importorskip("torch")
    results = []
    for lib in (tl, torch):
        x = lib.tensor(np.full(shape, 1.5), requires_grad=True)
        out = lib.prod(x) if dim is None else lib.prod(x, dim)
        out.sum().backward()
        results.append((out.detach().numpy(), x.grad.numpy()))
    for ours, theirs in zip(*results, strict=True):
        assert ours.shape == theirs.shape
        np.testing.assert_array_equal(ours, theirs)


# torch.var(x, unbiased): a bool in dim's place (var, std, var_mean, std_mean and the methods)
@pytest.mark.parity
@pytest.mark.parametrize("name", ["var", "std", "var_mean", "std_mean", "method var",
                                  "method std"])
@pytest.mark.parametrize("unbiased", [True, False])
def test_unbiased_positional_overload_matches_pytorch(name, unbiased):
    torch = pytest.importorskip("torch")
    values = np.array([[1.0, 2.0, 4.0], [3.0, 5.0, 9.0]])
    results = []
    for lib in (tl, torch):
        x = lib.tensor(values, requires_grad=True)
        if name.startswith("method"):
            out = getattr(x, name.split()[1])(unbiased)
        else:
            out = getattr(lib, name)(x, unbiased)
        outs = out if isinstance(out, tuple) else (out,)
        sum(o.sum() for o in outs).backward()
        results.append([o.detach().numpy() for o in outs] + [x.grad.numpy()])
    for ours, theirs in zip(*results, strict=True):
        np.testing.assert_allclose(ours, theirs, rtol=1e-12)


def test_unbiased_positional_overload_values():
    x = tl.tensor([[1.0, 2.0, 4.0], [3.0, 5.0, 9.0]], dtype=tl.float64)
    assert tl.var(x, False).item() == pytest.approx(40 / 6)  # squares sum to 40; over N = 6
    assert tl.var(x, True).item() == pytest.approx(40 / 5)
    with pytest.raises(TypeError, match="unbiased twice"):
        tl.var(x, True, unbiased=False)


# torch.norm's other p: any number (0, fractional, negative, inf, -inf) and "nuc", with gradients
@pytest.mark.parity
@pytest.mark.parametrize("p, dim", [
    (0, None), (0.5, None), (3, None), (-1, 1), (float("inf"), None), (float("-inf"), 0),
    ("nuc", None), ("fro", (0, 1)), (3, (0, 1)), ("nuc", (1, 2)),
])
def test_norm_every_p_matches_pytorch(p, dim):
    torch = pytest.importorskip("torch")
    shape = (2, 3, 4) if dim == (1, 2) else (3, 4)
    values = np.random.default_rng(0).normal(size=shape)
    results = []
    for lib in (tl, torch):
        x = lib.tensor(values, requires_grad=True)
        out = lib.norm(x, p) if dim is None else lib.norm(x, p, dim)
        out.sum().backward()
        # p = 0: PyTorch leaves the gradient undefined (None), tensorlib's is 0, the derivative
        grad = np.zeros(shape) if x.grad is None else x.grad.numpy()
        results.append((out.detach().numpy(), grad))
    for ours, theirs in zip(*results, strict=True):
        np.testing.assert_allclose(ours, theirs, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("p", [0.5, 3, float("inf"), "nuc"])
def test_norm_every_p_gradcheck(p):
    x = tl.tensor(np.random.default_rng(1).normal(size=(3, 4)), requires_grad=True)
    assert tl.autograd.gradcheck(lambda a: tl.norm(a, p), (x,))
    assert tl.autograd.gradcheck(lambda a: a.norm(p if p != "nuc" else 3, 1), (x,))


def test_norm_refuses_an_unknown_string():
    with pytest.raises(ValueError, match="'fro' or 'nuc'"):
        tl.norm(tl.ones(2, 2), "max")


# 0-d tensors: logsumexp over dim 0 and the running ops keep shape (), as PyTorch
@pytest.mark.parity
@pytest.mark.parametrize("name", ["logsumexp", "cumsum", "cumprod", "logcumsumexp", "cummax",
                                  "cummin"])
def test_zero_dim_reductions_and_running_ops_match_pytorch(name):
    torch = pytest.importorskip("torch")
    results = []
    for lib in (tl, torch):
        x = lib.tensor(2.5, dtype=lib.float64, requires_grad=True)
        out = getattr(lib, name)(x, 0)
        out = out[0] if isinstance(out, tuple) else out
        out.backward()
        results.append((out.detach().numpy(), x.grad.numpy()))
    for ours, theirs in zip(*results, strict=True):
        assert ours.shape == theirs.shape == ()
        np.testing.assert_allclose(ours, theirs, rtol=1e-12)
    assert tl.cumprod(tl.tensor(3), 0).dtype == tl.int64


# prod of an empty input: its gradient's graph survives (a second order gives zeros, as torch)
@pytest.mark.parity
def test_prod_of_an_empty_input_has_a_second_order():
    torch = pytest.importorskip("torch")
    results = []
    for lib in (tl, torch):
        a = lib.zeros(2, 0, dtype=lib.float64, requires_grad=True)
        (g,) = lib.autograd.grad(lib.prod(a, 1).sum(), (a,), create_graph=True)
        (h,) = lib.autograd.grad(g.sum(), (a,), allow_unused=True)
        results.append((tuple(g.shape), tuple(h.shape), h.numpy().tolist()))
    assert results[0] == results[1] == ((2, 0), (2, 0), [[], []])


# norm: dtype= computes in that dtype; 'nuc' without dim needs a 2-D input
@pytest.mark.parity
def test_norm_dtype_and_nuclear_norm_dims_match_pytorch():
    torch = pytest.importorskip("torch")
    x = np.array([[1.0, 2.0, -2.5], [0.5, -1.0, 3.0]], dtype=np.float32)
    calls = [
        lambda lib, t: lib.norm(t, dtype=lib.float64),
        lambda lib, t: lib.norm(t, 3, dtype=lib.float64),
        lambda lib, t: lib.norm(t, 1, 1, True, dtype=lib.float64),
        lambda lib, t: t.norm(dtype=lib.float64),
        lambda lib, t: t.norm("nuc", dtype=lib.float64),
        lambda lib, t: t.norm("fro", dim=(0, 1), dtype=lib.float64),
    ]
    for call in calls:
        ours, theirs = call(tl, tl.tensor(x)), call(torch, torch.tensor(x))
        assert ours.dtype == tl.float64 and tuple(ours.shape) == tuple(theirs.shape)
        np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-12)
    with pytest.raises(RuntimeError, match="should be convertible without narrowing"):
        tl.norm(tl.tensor(x, dtype=tl.float64), dtype=tl.float32)
    with pytest.raises(RuntimeError, match="dim must be a 2-tuple. Got 0 1 2"):
        tl.norm(tl.ones(2, 2, 2), "nuc")
    with pytest.raises(RuntimeError, match="dim must be a 2-tuple. Got 0 1 2"):
        torch.norm(torch.ones(2, 2, 2), "nuc")


def test_norm_dtype_gradcheck():
    x = tl.tensor([[1.0, 2.0, -2.5], [0.5, -1.0, 3.0]], dtype=tl.float64, requires_grad=True)
    assert tl.autograd.gradcheck(lambda t: tl.norm(t, 3, dtype=tl.float64), (x,))
    assert tl.autograd.gradcheck(lambda t: tl.norm(t, "nuc", dtype=tl.float64), (x,))


@pytest.mark.parity
def test_aminmax_returns_a_named_tuple_as_pytorch():
    torch = pytest.importorskip("torch")
    values = np.array([[1.0, 5.0], [3.0, 2.0]])
    ours, theirs = tl.aminmax(tl.tensor(values), dim=1), torch.aminmax(torch.tensor(values), dim=1)
    assert ours._fields == ("min", "max")  # torch.return_types.aminmax's names
    assert ours.min.tolist() == theirs.min.tolist() == [1.0, 2.0]
    assert ours.max.tolist() == theirs.max.tolist() == [5.0, 3.0]
    out = (tl.zeros(0, dtype=tl.float64), tl.zeros(0, dtype=tl.float64))
    result = tl.aminmax(tl.tensor(values), out=out)
    assert result.min is out[0] and result.max is out[1]


@pytest.mark.parity
@pytest.mark.parametrize("call", [
    lambda lib: lib.sum(lib.tensor([1, 2]), dtype=lib.float32),
    lambda lib: lib.tensor([1.5, 2.5]).sum(dtype=lib.int64),  # converted first: 1 + 2
    lambda lib: lib.tensor([[1.0, 2.0]]).sum(1, dtype=lib.float64),
    lambda lib: lib.tensor([1, 2]).mean(dtype=lib.float64),
    lambda lib: lib.mean(lib.tensor([[1.0, 2.0]]), 1, True, dtype=lib.float64),
], ids=["int-to-float", "float-to-int", "dim", "mean-of-ints", "mean-keepdim"])
def test_sum_and_mean_take_dtype_as_pytorch(call):
    torch = pytest.importorskip("torch")
    ours, theirs = call(tl), call(torch)
    assert str(ours.dtype) == str(theirs.dtype).removeprefix("torch.")
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


@pytest.mark.parity
def test_mean_refuses_an_integer_dtype_and_sum_keeps_the_gradients_dtype():
    torch = pytest.importorskip("torch")
    for lib in (tl, torch):
        with pytest.raises(RuntimeError, match="Optional dtype must be either a floating point"):
            lib.tensor([1.0, 2.0]).mean(dtype=lib.int64)
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        total = x.sum(dtype=lib.float64)
        total.backward()
        assert str(total.dtype).endswith("float64") and str(x.grad.dtype).endswith("float32")
        with pytest.raises(RuntimeError, match="Expected out tensor to have dtype double"):
            lib.mean(lib.ones(3), 0, dtype=lib.float64, out=lib.empty(0))


# -- sum, nansum and prod with an integer or bool dtype= return that dtype (the review's 1)
# -------------------------------------------------------------------
_DTYPE_REDUCTIONS = {
    "x.sum(dtype=)": lambda lib, x, dt: x.sum(dtype=dt),
    "sum(x, 0, dtype=)": lambda lib, x, dt: lib.sum(x, 0, dtype=dt),
    "x.sum((0, 1), keepdim=True, dtype=)": lambda lib, x, dt: x.sum((0, 1), True, dtype=dt),
    "nansum(x, dtype=)": lambda lib, x, dt: lib.nansum(x, dtype=dt),
    "x.nansum(1, dtype=)": lambda lib, x, dt: x.nansum(1, dtype=dt),
    "prod(x, dtype=)": lambda lib, x, dt: lib.prod(x, dtype=dt),
    "x.prod(0, dtype=)": lambda lib, x, dt: x.prod(0, dtype=dt),
    "cumsum(x, 1, dtype=)": lambda lib, x, dt: lib.cumsum(x, 1, dtype=dt),
    "x.cumprod(0, dtype=)": lambda lib, x, dt: x.cumprod(0, dtype=dt),
}


def _dtype_reduction(lib, name, dtype, values):
    try:
        x = lib.tensor(values, dtype=lib.int32)
        result = _DTYPE_REDUCTIONS[name](lib, x, getattr(lib, dtype))
    except Exception as error:  # noqa: BLE001 - the comparison is of which error, if any
        return type(error).__name__, str(error)
    return str(result.dtype).removeprefix("torch."), result.tolist()


@pytest.mark.parity
@pytest.mark.parametrize("dtype", ["int32", "int16", "uint8", "int8", "bool", "int64", "float64"])
@pytest.mark.parametrize("name", list(_DTYPE_REDUCTIONS))
def test_integer_and_bool_dtype_of_reductions_matches_pytorch(name, dtype):
    torch = pytest.importorskip("torch")
    values = [[30000, 200, 0], [30000, 100, 3]]  # the sums and products overflow int16 and int8
    assert _dtype_reduction(tl, name, dtype, values) == _dtype_reduction(
        torch, name, dtype, values
    )


@pytest.mark.parity
def test_sum_dtype_wraps_takes_its_out_and_nansum_zeroes_nans_first():
    torch = pytest.importorskip("torch")
    for lib in (tl, torch):
        big = lib.tensor([30000, 30000], dtype=lib.int32)
        total = big.sum(dtype=lib.int16)
        assert str(total.dtype).endswith("int16") and total.item() == -5536
        assert lib.tensor([0, 2, 0]).sum(dtype=lib.bool).item() is True
        out = lib.empty((), dtype=lib.int16)
        assert lib.sum(big, 0, dtype=lib.int16, out=out) is out and out.item() == -5536
        assert lib.prod(big, 0, dtype=lib.int16, out=out) is out and out.item() == -5888
        assert lib.nansum(big, dtype=lib.int16, out=out) is out and out.item() == -5536
        with pytest.raises(RuntimeError, match="Expected out tensor to have dtype int, but got"):
            lib.sum(big, 0, dtype=lib.int32, out=lib.empty((), dtype=lib.int64))
        nan = lib.tensor([float("nan"), 1.5, 2.5])
        assert lib.nansum(nan, dtype=lib.int32).item() == 3  # the NaN is 0 before the cast


# -- an integer or bool dtype= while the input requires grad: refused by autograd, as PyTorch
INTEGER_DTYPE_REDUCTIONS = {
    "sum": lambda L, x, d: L.sum(x, dtype=d),
    "sum-dim": lambda L, x, d: x.sum(1, dtype=d),
    "prod": lambda L, x, d: L.prod(x, dtype=d),
    "prod-dim": lambda L, x, d: x.prod(0, dtype=d),
    "nansum": lambda L, x, d: L.nansum(x, dtype=d),
    "mean": lambda L, x, d: L.mean(x, dtype=d),
    "nanmean": lambda L, x, d: L.nanmean(x, dtype=d),
    "cumsum": lambda L, x, d: L.cumsum(x, 0, dtype=d),
    "cumprod": lambda L, x, d: x.cumprod(1, dtype=d),
}


def _outcome(call):
    try:
        result = call()
    except Exception as error:  # noqa: BLE001 - the type and message are compared
        return type(error).__name__, str(error)
    return "ok", str(result.dtype).split(".")[-1]


@pytest.mark.parity
@pytest.mark.parametrize("dtype", ["int32", "int64", "int16", "uint8", "bool", "float64"])
@pytest.mark.parametrize("name", list(INTEGER_DTYPE_REDUCTIONS))
def test_reduction_to_an_integer_dtype_of_a_grad_input_matches_torch(name, dtype):
    torch = pytest.importorskip("torch")
    call = INTEGER_DTYPE_REDUCTIONS[name]
    outcomes = []
    for lib in (tl, torch):
        x = lib.tensor(np.arange(1.0, 7.0).reshape(2, 3), requires_grad=True)
        target = getattr(lib, dtype)
        outcomes.append(_outcome(lambda: call(lib, x, target)))  # noqa: B023
        with lib.no_grad():  # outside grad mode: a conversion
            outcomes.append(_outcome(lambda: call(lib, x, target)))  # noqa: B023
        outcomes.append(_outcome(lambda: call(lib, x.detach(), target)))  # noqa: B023
    assert outcomes[:3] == outcomes[3:]


def test_sum_to_an_integer_dtype_message_names_the_dtype():
    x = tl.ones(3, requires_grad=True)
    with pytest.raises(RuntimeError, match=r"^Autograd not support dtype: Int$"):
        x.sum(dtype=tl.int32)
    with pytest.raises(RuntimeError, match=r"^Autograd not support dtype: Bool$"):
        tl.prod(x, dtype=tl.bool)
    assert x.detach().sum(dtype=tl.int32).dtype == tl.int32


# -- maximum, minimum, fmax, fmin take tensors only, as PyTorch
@pytest.mark.parity
@pytest.mark.parametrize("other", [2, 2.5, True, np.float64(2.0), None],
                         ids=["int", "float", "bool", "numpy", "None"])
@pytest.mark.parametrize("name", ["maximum", "minimum", "fmax", "fmin"])
def test_elementwise_extrema_refuse_a_number_as_torch(name, other):
    torch = pytest.importorskip("torch")
    messages = []
    for lib in (tl, torch):
        x = lib.tensor([1.0, 3.0])
        for call in (lambda: getattr(lib, name)(x, other),  # noqa: B023
                     lambda: getattr(x, name)(other),  # noqa: B023
                     lambda: getattr(lib, name)(other, x)):  # noqa: B023
            with pytest.raises(TypeError) as caught:
                call()
            messages.append(str(caught.value))
    assert messages[:3] == messages[3:]
    assert messages[0].startswith(f"{name}(): argument 'other' (position 2) must be Tensor, not ")


@pytest.mark.parity
@pytest.mark.parametrize("name", ["maximum", "minimum", "fmax", "fmin"])
def test_elementwise_extrema_of_tensors_still_match_torch(name):
    torch = pytest.importorskip("torch")
    a, b = np.array([1.0, np.nan, 3.0, 2.0]), np.array(2.0)
    ours = getattr(tl, name)(tl.tensor(a), tl.tensor(b)).numpy()
    theirs = getattr(torch, name)(torch.tensor(a), torch.tensor(b)).numpy()
    np.testing.assert_array_equal(ours, theirs)
    np.testing.assert_array_equal(getattr(tl.tensor(a), name)(tl.tensor(b)).numpy(), ours)
