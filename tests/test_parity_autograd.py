"""Parity of chapter 2's ops with PyTorch: forward values, output dtypes and gradients.

Every case of ``_autograd_cases.CASES`` runs in both libraries on the same inputs, in float32
and float64; the backward pass starts from the same random upstream gradient. Tolerances
follow the dtype: float32 results may differ in the last bits of a few roundings, float64
results must agree to ~1e-8 (a float64 op computed in float32 inside fails here).

Also pinned against torch: the tie rules of max/min, numerical stability of the losses at
extreme logits, and -inf masking before a softmax.
"""

from __future__ import annotations

import numpy as np
import pytest
from _autograd_cases import CASES, OpCase, cotangent, np_dtype, outputs, scalarised
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

torch = pytest.importorskip("torch", reason="PyTorch is not installed: parity tests need it")

import tensorlib as tl  # noqa: E402
import tensorlib.nn.functional as F  # noqa: E402

pytestmark = pytest.mark.parity
torch.set_num_threads(1)

TOL = {np.float32: dict(rtol=2e-5, atol=2e-6), np.float64: dict(rtol=1e-8, atol=1e-10)}
TORCH_DTYPE = {np.float32: torch.float32, np.float64: torch.float64}
NP_OF_TORCH = {
    torch.float32: np.float32,
    torch.float64: np.float64,
    torch.int64: np.int64,
    torch.bool: np.bool_,
}


def make_inputs(case: OpCase, dtype, seed: int = 3):
    arrays = [a.astype(dtype) for a in case.arrays(seed)]
    ours = [tl.tensor(a, requires_grad=case.requires_grad(i)) for i, a in enumerate(arrays)]
    theirs = [torch.tensor(a, requires_grad=case.requires_grad(i)) for i, a in enumerate(arrays)]
    return ours, theirs


def assert_same(ours, theirs, dtype, what):
    expected = theirs.detach().numpy()
    got = ours.numpy()
    assert tuple(ours.shape) == tuple(theirs.shape), (
        f"{what}: torch shape {tuple(theirs.shape)}, got {tuple(ours.shape)}"
    )
    assert np.dtype(ours.dtype) == np.dtype(NP_OF_TORCH[theirs.dtype]), (
        f"{what}: torch dtype {theirs.dtype}, got {ours.dtype}"
    )
    if np.issubdtype(expected.dtype, np.floating):
        np.testing.assert_allclose(got, expected, **TOL[dtype], err_msg=what)
    else:
        np.testing.assert_array_equal(got, expected, err_msg=what)


def backward(lib, case, inputs, result):
    outs = outputs(result)
    if len(outs) == 1 and outs[0].ndim > 0:
        w = cotangent(tuple(outs[0].shape)).astype(np_dtype(lib, outs[0].dtype))
        outs[0].backward(gradient=lib.tensor(w))
    elif len(outs) == 1:
        outs[0].backward()
    else:
        scalarised(lib, case)(*inputs).backward()


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["float32", "float64"])
@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_forward_and_backward_match_torch(case, dtype):
    ours, theirs = make_inputs(case, dtype)
    result_ours = case.fn(tl, *ours)
    result_theirs = case.fn(torch, *theirs)
    outs_ours, outs_theirs = outputs(result_ours), outputs(result_theirs)
    assert len(outs_ours) == len(outs_theirs), (
        f"torch returns {len(outs_theirs)} outputs, got {len(outs_ours)}"
    )
    for k, (a, b) in enumerate(zip(outs_ours, outs_theirs, strict=True)):
        assert_same(a, b, dtype, f"{case.name} output {k}")

    if "forward_parity_only" in case.tags:  # torch's gradient is wrong there (see the case)
        return
    backward(tl, case, ours, result_ours)
    backward(torch, case, theirs, result_theirs)
    for i, (a, b) in enumerate(zip(ours, theirs, strict=True)):
        if not case.requires_grad(i):
            assert a.grad is None
            continue
        assert a.grad is not None, f"{case.name}: input {i} got no gradient"
        assert_same(a.grad, b.grad, dtype, f"{case.name} grad of input {i}")


# ---------------------------------------------------------------------------------------------
# ties
# ---------------------------------------------------------------------------------------------

TIES = np.array([[1.0, 3.0, 3.0, 0.0], [2.0, 2.0, 1.0, 2.0], [5.0, 5.0, 5.0, 5.0]])


@pytest.mark.parametrize("reduce", ["max", "min"])
@pytest.mark.parametrize("dim", [0, 1, -1])
def test_max_min_dim_with_ties_match_torch(reduce, dim):
    x, xt = tl.tensor(TIES, requires_grad=True), torch.tensor(TIES, requires_grad=True)
    v, i = getattr(x, reduce)(dim=dim)
    vt, it = getattr(xt, reduce)(dim=dim)
    np.testing.assert_array_equal(
        i.numpy(), it.numpy(), err_msg="indices of ties differ from torch"
    )
    np.testing.assert_array_equal(v.numpy(), vt.detach().numpy())
    w = cotangent(tuple(v.shape))
    v.backward(gradient=tl.tensor(w))
    vt.backward(gradient=torch.tensor(w))
    np.testing.assert_array_equal(x.grad.numpy(), xt.grad.numpy())


@pytest.mark.parametrize("reduce", ["max", "min"])
def test_full_max_min_with_ties_match_torch(reduce):
    x, xt = tl.tensor(TIES, requires_grad=True), torch.tensor(TIES, requires_grad=True)
    getattr(x, reduce)().backward()
    getattr(xt, reduce)().backward()
    np.testing.assert_allclose(
        x.grad.numpy(), xt.grad.numpy(), rtol=1e-12, err_msg="ties share the gradient evenly"
    )


def test_kinks_at_zero_match_torch():
    # the subgradient chosen at a kink is a convention: relu'(0) = 0, abs'(0) = 0, clamp passes
    # the gradient on its closed interval [min, max]
    data = np.array([-1.0, 0.0, 1.0, 2.0])
    for name in ("relu", "abs", "clamp"):
        x, xt = tl.tensor(data, requires_grad=True), torch.tensor(data, requires_grad=True)
        if name == "clamp":
            y, yt = x.clamp(0.0, 1.0), xt.clamp(0.0, 1.0)
        else:
            y, yt = getattr(x, name)(), getattr(xt, name)()
        y.sum().backward()
        yt.sum().backward()
        np.testing.assert_array_equal(
            x.grad.numpy(), xt.grad.numpy(), err_msg=f"{name} at its kink"
        )


# ---------------------------------------------------------------------------------------------
# stability at extreme values
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["float32", "float64"])
def test_losses_stable_at_extreme_logits(dtype):
    logits = np.array([[1000.0, -1000.0, 0.0], [-500.0, 500.0, 499.0]], dtype=dtype)
    target = np.array([1, 2])
    x, xt = tl.tensor(logits, requires_grad=True), torch.tensor(logits, requires_grad=True)
    loss = F.cross_entropy(x, tl.tensor(target))
    loss_t = torch.nn.functional.cross_entropy(xt, torch.tensor(target))
    assert np.isfinite(loss.item()), f"cross_entropy overflowed: {loss.item()}"
    np.testing.assert_allclose(loss.item(), loss_t.item(), rtol=1e-6)
    loss.backward()
    loss_t.backward()
    np.testing.assert_allclose(x.grad.numpy(), xt.grad.numpy(), rtol=1e-5, atol=1e-7)

    z = np.array([-200.0, -30.0, 0.0, 30.0, 200.0], dtype=dtype)
    y = np.array([1.0, 0.0, 0.5, 1.0, 0.0], dtype=dtype)
    b, bt = tl.tensor(z, requires_grad=True), torch.tensor(z, requires_grad=True)
    out = F.binary_cross_entropy_with_logits(b, tl.tensor(y), reduction="none")
    out_t = torch.nn.functional.binary_cross_entropy_with_logits(
        bt, torch.tensor(y), reduction="none"
    )
    assert np.all(np.isfinite(out.numpy())), f"BCE with logits overflowed: {out.numpy()}"
    np.testing.assert_allclose(out.numpy(), out_t.detach().numpy(), rtol=1e-6)
    out.sum().backward()
    out_t.sum().backward()
    np.testing.assert_allclose(b.grad.numpy(), bt.grad.numpy(), rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["float32", "float64"])
def test_softmax_and_log_softmax_stable_for_large_inputs(dtype):
    data = np.array([[1000.0, 1001.0, 1002.0], [-1000.0, -1001.0, -1000.5]], dtype=dtype)
    for method in ("softmax", "log_softmax"):
        x, xt = tl.tensor(data, requires_grad=True), torch.tensor(data, requires_grad=True)
        out, out_t = getattr(x, method)(dim=1), getattr(xt, method)(dim=1)
        assert np.all(np.isfinite(out.numpy())), f"{method} overflowed: {out.numpy()}"
        np.testing.assert_allclose(out.numpy(), out_t.detach().numpy(), rtol=1e-5, atol=1e-6)
        w = cotangent((2, 3)).astype(dtype)
        out.backward(gradient=tl.tensor(w))
        out_t.backward(gradient=torch.tensor(w))
        np.testing.assert_allclose(x.grad.numpy(), xt.grad.numpy(), rtol=1e-5, atol=1e-6)


def test_masked_fill_minus_inf_then_softmax_matches_torch():
    # causal masking as in attention: -inf scores get probability 0 and a finite zero gradient
    data = np.random.default_rng(1).normal(size=(3, 3))
    mask = np.triu(np.ones((3, 3), dtype=bool), k=1)
    x, xt = tl.tensor(data, requires_grad=True), torch.tensor(data, requires_grad=True)
    p = x.masked_fill(tl.tensor(mask), float("-inf")).softmax(dim=-1)
    pt = xt.masked_fill(torch.tensor(mask), float("-inf")).softmax(dim=-1)
    np.testing.assert_allclose(p.numpy(), pt.detach().numpy(), rtol=1e-12, atol=1e-15)
    w = cotangent((3, 3))
    p.backward(gradient=tl.tensor(w))
    pt.backward(gradient=torch.tensor(w))
    assert np.all(np.isfinite(x.grad.numpy())), (
        f"masked softmax gave non-finite grads: {x.grad.numpy()}"
    )
    np.testing.assert_allclose(x.grad.numpy(), xt.grad.numpy(), rtol=1e-10, atol=1e-14)


SPECIAL = {
    "pow_base_zero": (lambda lib, x, y: x**y, [[0.0, 0.0, 2.0, 0.0]], [[2.0, 3.0, 0.0, 0.5]]),
    "pow_scalar_at_zero": (lambda lib, x, y: x**2 + y**3.0, [[0.0, -1.0]], [[0.0, 2.0]]),
    "activations_far_out": (
        lambda lib, x, y: (
            x.sigmoid()
            + x.tanh()
            + functional(lib).silu(x)
            + functional(lib).gelu(x)
            + functional(lib).gelu(y, approximate="tanh")
        ),
        [[-1000.0, -80.0, -30.0, 30.0, 80.0, 1000.0]],
        [[-1000.0, -80.0, -30.0, 30.0, 80.0, 1000.0]],
    ),
    "log_softmax_minus_inf": (
        lambda lib, x, y: x.log_softmax(dim=-1)[:, :2] + y.softmax(dim=-1)[:, 1:],
        [[0.0, 1.0, float("-inf")], [2.0, -3.0, float("-inf")]],
        [[1.0, 1.0, 1.0], [0.0, 0.0, 0.0]],
    ),
}


def functional(lib):
    return lib.nn.functional


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["float32", "float64"])
@pytest.mark.parametrize("name", list(SPECIAL))
def test_special_values_match_torch(name, dtype):
    """Values where a naive formula overflows, divides 0 by 0 or takes log(0)."""
    fn, a, b = SPECIAL[name]
    a, b = np.array(a, dtype=dtype), np.array(b, dtype=dtype)
    x, y = tl.tensor(a, requires_grad=True), tl.tensor(b, requires_grad=True)
    xt, yt = torch.tensor(a, requires_grad=True), torch.tensor(b, requires_grad=True)
    with np.errstate(all="ignore"):
        out = fn(tl, x, y)
    out_t = fn(torch, xt, yt)
    np.testing.assert_allclose(
        out.numpy(), out_t.detach().numpy(), **TOL[dtype], err_msg=f"{name}: forward"
    )
    w = cotangent(tuple(out.shape)).astype(dtype)
    with np.errstate(all="ignore"):
        out.backward(gradient=tl.tensor(w))
    out_t.backward(gradient=torch.tensor(w))
    for what, ours, theirs in (("x", x, xt), ("y", y, yt)):
        np.testing.assert_allclose(
            ours.grad.numpy(), theirs.grad.numpy(), **TOL[dtype], err_msg=f"{name}: grad of {what}"
        )


BROADCAST_OPS = {
    "add": lambda x, y: x + y,
    "sub": lambda x, y: x - y,
    "mul": lambda x, y: x * y,
    "div": lambda x, y: x / (y * y + 0.5),
    "matmul_like": lambda x, y: (x * y).sum(dim=-1, keepdim=True) * x.softmax(dim=-1),
}


@pytest.mark.parametrize("name", list(BROADCAST_OPS))
@settings(max_examples=15, deadline=None, derandomize=True)
@given(
    shapes=hnp.mutually_broadcastable_shapes(
        num_shapes=2, min_dims=1, max_dims=4, min_side=1, max_side=4
    ),
    seed=st.integers(0, 2**16),
)
def test_broadcasting_float32_matches_torch(name, shapes, seed):
    op = BROADCAST_OPS[name]
    rng = np.random.default_rng(seed)
    a, b = (rng.normal(size=s).astype(np.float32) for s in shapes.input_shapes)
    x, y = tl.tensor(a, requires_grad=True), tl.tensor(b, requires_grad=True)
    xt, yt = torch.tensor(a, requires_grad=True), torch.tensor(b, requires_grad=True)
    out, out_t = op(x, y), op(xt, yt)
    assert_same(out, out_t, np.float32, f"{name} forward")
    w = cotangent(tuple(out.shape)).astype(np.float32)
    out.backward(gradient=tl.tensor(w))
    out_t.backward(gradient=torch.tensor(w))
    assert_same(x.grad, xt.grad, np.float32, f"{name} grad of x")
    assert_same(y.grad, yt.grad, np.float32, f"{name} grad of y")


REDUCE_OPS = {
    "sum": lambda t, d, k: t.sum(dim=d, keepdim=k),
    "mean": lambda t, d, k: t.mean(dim=d, keepdim=k),
    "var": lambda t, d, k: t.var(dim=d, keepdim=k),
    "max": lambda t, d, k: t.max(dim=d, keepdim=k),
    "min": lambda t, d, k: t.min(dim=d, keepdim=k),
    "softmax": lambda t, d, k: t.softmax(dim=d),
    "log_softmax": lambda t, d, k: t.log_softmax(dim=d),
}


@pytest.mark.parametrize("name", list(REDUCE_OPS))
@settings(max_examples=15, deadline=None, derandomize=True)
@given(data=st.data(), seed=st.integers(0, 2**16), keepdim=st.booleans())
def test_reductions_float32_match_torch(name, data, seed, keepdim):
    shape = data.draw(hnp.array_shapes(min_dims=1, max_dims=4, min_side=2, max_side=4))
    dim = data.draw(st.integers(-len(shape), len(shape) - 1), label="dim")
    a = np.random.default_rng(seed).normal(size=shape).astype(np.float32)
    x, xt = tl.tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True)
    outs, outs_t = (
        outputs(REDUCE_OPS[name](x, dim, keepdim)),
        outputs(REDUCE_OPS[name](xt, dim, keepdim)),
    )
    for k, (o, ot) in enumerate(zip(outs, outs_t, strict=True)):
        assert_same(o, ot, np.float32, f"{name}(dim={dim}, keepdim={keepdim}) output {k}")
    w = cotangent(tuple(outs[0].shape)).astype(np.float32)
    outs[0].backward(gradient=tl.tensor(w))
    outs_t[0].backward(gradient=torch.tensor(w))
    assert_same(x.grad, xt.grad, np.float32, f"{name}(dim={dim}, keepdim={keepdim}) grad")


@settings(max_examples=20, deadline=None, derandomize=True)
@given(
    rows=st.integers(1, 5),
    cols=st.integers(1, 4),
    picks=st.lists(st.integers(-5, 4), min_size=0, max_size=8),
    seed=st.integers(0, 2**16),
)
def test_integer_array_indexing_matches_torch(rows, cols, picks, seed):
    index = np.array([p % rows for p in picks] if rows else [], dtype=np.int64)
    index = np.where(np.arange(len(index)) % 2 == 0, index, index - rows)  # mix negative indices in
    a = np.random.default_rng(seed).normal(size=(rows, cols))
    x, xt = tl.tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True)
    out, out_t = x[tl.tensor(index)], xt[torch.tensor(index)]
    assert_same(out, out_t, np.float64, f"x[{index.tolist()}]")
    w = cotangent(tuple(out.shape))
    out.backward(gradient=tl.tensor(w))
    out_t.backward(gradient=torch.tensor(w))
    assert_same(
        x.grad, xt.grad, np.float64, f"grad of x[{index.tolist()}] (repeated indices add up)"
    )


# ---------------------------------------------------------------------------------------------
# engine behaviour side by side
# ---------------------------------------------------------------------------------------------


def test_accumulation_and_reuse_match_torch():
    data = np.array([[0.5, -1.0], [2.0, 0.25]])
    x, xt = tl.tensor(data, requires_grad=True), torch.tensor(data, requires_grad=True)
    for t in (x, xt):
        for _ in range(2):
            y = t * t
            z = (y + y.exp() * t).sum() + (t @ t).sum()
            z.backward()
    np.testing.assert_allclose(x.grad.numpy(), xt.grad.numpy(), rtol=1e-12)


def test_dtype_promotion_matches_torch():
    pairs = [
        (np.ones(2, np.float32), 2.0),
        (np.ones(2, np.float64), 2.0),
        (np.ones(2, np.int64), 2.0),
        (np.ones(2, np.int64), 2),
        (np.ones(2, np.float32), 2),
        (np.ones(2, np.float32), np.float64(2.0)),
        (np.ones(2, np.float32), np.int64(2)),
        (np.ones(2, np.int64), np.int64(2)),
    ]
    for array, scalar in pairs:
        ours = (tl.tensor(array) * scalar).dtype
        theirs = (torch.tensor(array) * scalar).dtype
        assert np.dtype(ours) == np.dtype(NP_OF_TORCH[theirs]), (
            f"{array.dtype} * {scalar!r}: torch {theirs}, got {ours}"
        )
    ours = (tl.tensor(np.ones(2, np.float32)) + tl.tensor(np.ones(2, np.float64))).dtype
    assert ours == np.float64


def test_tensor_tensor_promotion_matches_torch():
    # torch: a higher category wins (int with float gives the float's dtype); within a category
    # the wider dtype wins, except that a 0-d tensor does not widen a dimensioned one
    pairs = [
        (np.ones(2, np.int64), np.ones(2, np.float32)),
        (np.ones(2, np.float32), np.ones(2, np.int64)),
        (np.ones(2, np.bool_), np.ones(2, np.float32)),
        (np.ones(2, np.float32), np.ones(2, np.float64)),
        (np.ones(2, np.int64), np.ones(2, np.float64)),
    ]
    for a, b in pairs:
        ours = (tl.tensor(a) + tl.tensor(b)).dtype
        theirs = (torch.tensor(a) + torch.tensor(b)).dtype
        assert np.dtype(ours) == np.dtype(NP_OF_TORCH[theirs]), (
            f"{a.dtype} + {b.dtype}: torch {theirs}, got {ours}"
        )


def test_zero_dim_tensor_does_not_widen_matches_torch():
    ours = (tl.tensor(np.ones(2, np.float32)) * tl.tensor(np.float64(2.0))).dtype
    theirs = (torch.tensor(np.ones(2, np.float32)) * torch.tensor(np.float64(2.0))).dtype
    assert np.dtype(ours) == np.dtype(NP_OF_TORCH[theirs]), (
        f"float32 (2,) * float64 (): torch {theirs}, got {ours}"
    )


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize(
    ("loss", "label_smoothing"), [("cross_entropy", 0.0), ("cross_entropy", 0.1), ("nll_loss", 0.0)]
)
def test_all_targets_ignored_matches_torch(loss, label_smoothing, reduction):
    # every target ignored: torch's mean is 0/0 = nan, but the gradient is exactly 0 (no row counts)
    logits = np.random.default_rng(3).normal(size=(3, 4))
    target = np.array([-100, -100, -100])
    options = {"reduction": reduction} | (
        {"label_smoothing": label_smoothing} if label_smoothing else {}
    )
    x, xt = tl.tensor(logits, requires_grad=True), torch.tensor(logits, requires_grad=True)
    with np.errstate(all="raise"):  # no warning on the way either
        out = getattr(F, loss)(x, tl.tensor(target), **options)
    out_t = getattr(torch.nn.functional, loss)(xt, torch.tensor(target), **options)
    np.testing.assert_allclose(
        out.numpy(), out_t.detach().numpy(), equal_nan=True, err_msg=f"{loss}: forward"
    )
    upstream = np.ones(out.shape)
    with np.errstate(all="raise"):
        out.backward(gradient=tl.tensor(upstream))
    out_t.backward(gradient=torch.tensor(upstream))
    np.testing.assert_array_equal(
        x.grad.numpy(), xt.grad.numpy(), err_msg=f"{loss}: gradient of an all-ignored batch"
    )
    np.testing.assert_array_equal(x.grad.numpy(), np.zeros((3, 4)))


# ---------------------------------------------------------------------------------------------
# round 2 regressions: ties and NaN of maximum/minimum, var of one element, dtypes of mixed inputs
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["maximum", "minimum"])
def test_elementwise_extremum_ties_and_nan_match_torch(name):
    a_np = np.array([1.0, 2.0, np.nan, 5.0, np.nan, -1.0])
    b_np = np.array([1.0, 3.0, 0.0, 4.0, np.nan, -1.0])
    results = []
    for lib in (tl, torch):
        a, b = lib.tensor(a_np, requires_grad=True), lib.tensor(b_np, requires_grad=True)
        y = getattr(lib, name)(a, b)
        y.backward(gradient=lib.tensor(np.arange(1.0, 7.0)))
        results.append([t.detach().numpy() for t in (y, a.grad, b.grad)])
    for what, ours, theirs in zip(("values", "grad a", "grad b"), *results, strict=True):
        np.testing.assert_array_equal(ours, theirs, err_msg=f"{name} {what}")


@pytest.mark.filterwarnings("ignore:var\\(\\). degrees of freedom:UserWarning")
def test_var_of_one_element_gives_nan_gradient_like_torch():
    grads = []
    for lib in (tl, torch):
        x = lib.tensor(np.array([[1.0, 2.0, 3.0]]), requires_grad=True)
        x.var(dim=0).sum().backward()  # N = 1 <= correction: torch returns nan, no exception
        grads.append(x.grad.numpy())
    np.testing.assert_array_equal(grads[0], grads[1])
    assert np.isnan(grads[0]).all()


def test_mixed_dtypes_match_torch():
    pairs = [
        (lambda lib: lib.where(lib.tensor([True, False]), 1.0, 0.0), "where of two floats"),
        (lambda lib: lib.where(lib.tensor([True, False]), 1, 0), "where of two ints"),
        (lambda lib: lib.arange(3).clamp(0.5), "int tensor clamped by a float"),
        (lambda lib: lib.arange(3).clamp(max=1), "int tensor clamped by an int"),
        (lambda lib: lib.cat([lib.ones(2), lib.arange(2)]), "cat of float32 and int64"),
        (
            lambda lib: lib.cat([lib.arange(2), lib.ones(2, dtype=lib.float64)]),
            "cat of int64 and float64",
        ),
        (lambda lib: lib.stack([lib.ones(2), lib.arange(2)]), "stack of float32 and int64"),
        (lambda lib: lib.ones(2, 2).sum(dim=()), "sum over dim=()"),
    ]
    for make, what in pairs:
        ours, theirs = make(tl), make(torch)
        assert tuple(ours.shape) == tuple(theirs.shape), what
        assert np.dtype(ours.dtype) == np.dtype(NP_OF_TORCH[theirs.dtype]), (
            f"{what}: torch {theirs.dtype}, got {ours.dtype}"
        )
        np.testing.assert_array_equal(ours.numpy(), theirs.numpy(), err_msg=what)


def test_clamp_with_tensor_bounds_at_the_bounds_matches_torch():
    x_np = np.array([-1.0, 0.0, 0.5, 1.0, 2.0])
    lo_np, hi_np = np.array([0.0, 0.0, 0.0, 0.0, 0.0]), np.array([1.0, 1.0, 1.0, 1.0, 1.0])
    results = []
    for lib in (tl, torch):
        x, lo, hi = (lib.tensor(v, requires_grad=True) for v in (x_np, lo_np, hi_np))
        y = x.clamp(min=lo, max=hi)
        y.backward(gradient=lib.tensor(np.arange(1.0, 6.0)))
        results.append([t.detach().numpy() for t in (y, x.grad, lo.grad, hi.grad)])
    for what, ours, theirs in zip(
        ("values", "grad x", "grad min", "grad max"), *results, strict=True
    ):
        np.testing.assert_array_equal(ours, theirs, err_msg=what)


# ---------------------------------------------------------------------------------------------
# In-place changes between forward and backward, a second backward, view, format: as in torch

STALE_OPS = {
    "exp": lambda t: t.exp(),
    "tanh": lambda t: t.tanh(),
    "sigmoid": lambda t: t.sigmoid(),
    "sqrt": lambda t: t.sqrt(),
    "square": lambda t: t * t,
    "softmax_slice": lambda t: t.softmax(-1)[0:1],
    "log_softmax": lambda t: t.log_softmax(-1),
    "relu": lambda t: t.relu(),
    "pow2": lambda t: t**2,
    "log": lambda t: t.log(),
    "abs": lambda t: t.abs(),
    "clamp": lambda t: t.clamp(0.6, 2.0),
    "div_scalar": lambda t: t / 2.0,
    "add": lambda t: t + 1.0,
    "reshape": lambda t: t.reshape(2, 1),
}


def _after_in_place_change(lib, op, where):
    a = lib.tensor([0.5, 1.0], dtype=lib.float64, requires_grad=True)
    b = a * 1
    c = op(b)
    with lib.no_grad():
        {"out": c, "in": b}[where].add_(1.0)
    try:
        c.sum().backward()
    except RuntimeError as error:
        assert "modified by an inplace operation" in str(error)
        return "raises"
    return a.grad.numpy().round(10).tolist()


@pytest.mark.parametrize("where", ["out", "in"])
@pytest.mark.parametrize("name", list(STALE_OPS))
def test_in_place_change_between_forward_and_backward_matches_torch(name, where):
    ours = _after_in_place_change(tl, STALE_OPS[name], where)
    theirs = _after_in_place_change(torch, STALE_OPS[name], where)
    assert ours == theirs, (name, where, ours, theirs)


def test_weight_update_before_backward_matches_torch_when_the_input_needs_no_grad():
    def run(lib):
        x = lib.tensor([[1.0, 2.0]], dtype=lib.float64)
        w = lib.tensor([[0.5], [-1.0]], dtype=lib.float64, requires_grad=True)
        loss = (x @ w).tanh().sum()
        with lib.no_grad():
            w -= 0.1
        try:
            loss.backward()
        except RuntimeError:
            return "raises"
        return w.grad.numpy().round(10).tolist()

    assert run(tl) == run(torch)


@pytest.mark.parametrize(
    "make",
    [
        lambda L, x: (x * x).sum(),
        lambda L, x: (x + 1).sum(),
        lambda L, x: x.exp().mean(),
        lambda L, x: (x * 3).sum(),
        lambda L, x: x.reshape(2, 1)[0:1].sum(),
        lambda L, x: (x / 3).sum(),
        lambda L, x: x.mean(),
    ],
)
def test_second_backward_raises_or_accumulates_as_in_torch(make):
    def run(lib):
        x = lib.tensor([1.0, 2.0], dtype=lib.float64, requires_grad=True)
        loss = make(lib, x)
        loss.backward()
        try:
            loss.backward()
        except RuntimeError as error:
            assert "backward through the graph a second time" in str(error)
            return "raises"
        return x.grad.numpy().tolist()

    assert run(tl) == run(torch)


@pytest.mark.parametrize(
    "shape, transform, view",
    [
        ((2, 3), lambda t: t.t(), (6,)),
        ((2, 3), lambda t: t.t(), (3, 1, 2)),
        ((4, 3), lambda t: t[::2], (6,)),
        ((4, 3), lambda t: t[::2], (2, 3)),
        ((2, 3, 4), lambda t: t.transpose(0, 1), (3, 8)),
        ((2, 3, 4), lambda t: t.transpose(1, 2), (2, 12)),
        ((2, 3, 4), lambda t: t.transpose(1, 2), (8, 3)),
    ],
)
def test_view_refuses_exactly_where_torch_does(shape, transform, view):
    def run(lib):
        t = transform(lib.arange(int(np.prod(shape))).reshape(*shape))
        try:
            return t.view(*view).tolist()
        except RuntimeError as error:
            assert "view size is not compatible" in str(error)
            return "raises"

    assert run(tl) == run(torch)


def test_format_matches_torch():
    assert f"{tl.tensor(2.5):.3f}" == f"{torch.tensor(2.5):.3f}"
    for lib in (tl, torch):
        with pytest.raises(TypeError, match="unsupported format string"):
            f"{lib.tensor([2.5]):.3f}"


def test_norm_gradient_at_zero_matches_torch():
    def run(lib):
        z = lib.zeros(2, 3, dtype=lib.float64, requires_grad=True)
        (z.norm(dim=1).sum() + z.norm()).backward()
        return z.grad.numpy().tolist()

    assert run(tl) == run(torch)


@pytest.mark.parametrize(
    "make",
    [
        lambda L: L.zeros(2, 3).new_zeros(4),
        lambda L: L.ones(2, dtype=L.float64).new_ones(2, 2),
        lambda L: L.ones(1, dtype=L.float64).new_tensor([1, 2]),
        lambda L: L.tensor([1, 2]).type_as(L.ones(1, dtype=L.float64)),
        lambda L: L.zeros(2, 3).masked_fill_(L.tensor([True, False, True]), 2.0),
        lambda L: L.arange(6).reshape(2, 3).cumsum(1),
    ],
)
def test_small_tensor_methods_match_torch(make):
    ours, theirs = make(tl), make(torch)
    assert (
        ours.tolist() == theirs.tolist()
        and str(ours.dtype) == str(theirs.dtype).removeprefix("torch.")
    )
