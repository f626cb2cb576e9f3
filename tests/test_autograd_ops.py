"""float64 gradcheck of every differentiable op of chapter 2, and of gradcheck itself.

Three layers:

* every case of ``_autograd_cases.CASES`` (all ops, fixed shapes, edge cases such as repeated
  indices, negative dims, 1-D matmul operands) through ``tensorlib.autograd.gradcheck``;
* property tests (hypothesis, small budgets) over random shapes: broadcasting binary ops,
  batched matmul, unary ops on 0-d to 3-d inputs, reductions over a random (negative or
  positive) dim with and without keepdim;
* explicit values for the cases a numerical gradient cannot see: scatter-add of repeated
  indices, the tie rule of ``max(dim)``, empty dims;

and gradcheck must fail on a wrong gradient: a checker that cannot fail is a bug.
"""

from __future__ import annotations

import re
import warnings

import numpy as np
import pytest
from _autograd_cases import CASES, cotangent, sample, scalarised
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import tensorlib as tl
import tensorlib.nn.functional as F
from tensorlib.autograd import gradcheck

# gradcheck raises on failure like torch's (GradcheckError is a RuntimeError)
GRADCHECK_FAILURE = (RuntimeError, AssertionError, ValueError)
PROPERTY = settings(max_examples=20, deadline=None, derandomize=True)


def leaves(arrays, dtype=np.float64, requires_grad=True):
    return [tl.tensor(np.asarray(a, dtype=dtype), requires_grad=requires_grad) for a in arrays]


def check(fn, arrays):
    """gradcheck ``fn`` (a scalar function) on float64 leaves made from ``arrays``.

    Returns the leaves with ``.grad`` filled by one ``backward`` of ``fn`` (gradcheck itself
    leaves ``.grad`` alone), so callers can check the shapes of the gradients.
    """
    inputs = leaves(arrays)
    assert gradcheck(fn, tuple(inputs)) is True
    assert all(x.grad is None for x in inputs), "gradcheck must leave .grad alone"
    fn(*inputs).backward()
    return inputs


# ---------------------------------------------------------------------------------------------
# every op, fixed shapes
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_gradcheck_every_op(case):
    arrays = case.arrays(seed=7)
    constant = {i: tl.tensor(a) for i, a in enumerate(arrays) if not case.requires_grad(i)}
    varying = [i for i in range(len(arrays)) if case.requires_grad(i)]
    scalar_fn = scalarised(tl, case)

    def fn(*grad_inputs):
        full = dict(constant)
        full.update(zip(varying, grad_inputs, strict=True))
        return scalar_fn(*[full[i] for i in range(len(arrays))])

    check(fn, [arrays[i] for i in varying])


# ---------------------------------------------------------------------------------------------
# property tests over random shapes
# ---------------------------------------------------------------------------------------------

BINARY = {
    "add": (lambda x, y: x + y, "real", "real"),
    "sub": (lambda x, y: x - y, "real", "real"),
    "mul": (lambda x, y: x * y, "real", "real"),
    "div": (lambda x, y: x / y, "real", "nonzero"),
    "pow": (lambda x, y: x**y, "positive", "real"),
    "mse_loss_none": (
        lambda x, y: F.mse_loss(x, y.expand(*x.shape) if x.ndim else y, reduction="none"),
        "real",
        "real",
    ),
}


def weighted(out):
    return (out * tl.tensor(cotangent(tuple(out.shape)))).sum()


@pytest.mark.parametrize("name", list(BINARY))
@PROPERTY
@given(
    shapes=hnp.mutually_broadcastable_shapes(
        num_shapes=2, min_dims=0, max_dims=3, min_side=1, max_side=3
    ),
    seed=st.integers(0, 2**16),
)
def test_gradcheck_binary_broadcasting(name, shapes, seed):
    op, dom_x, dom_y = BINARY[name]
    shape_x, shape_y = shapes.input_shapes
    if name == "mse_loss_none":  # y is broadcast to x with expand: x must hold the full shape
        shape_x = shapes.result_shape
    x, y = check(
        lambda a, b: weighted(op(a, b)),
        [sample(dom_x, shape_x, seed), sample(dom_y, shape_y, seed + 1)],
    )
    assert x.grad.shape == tuple(shape_x), (
        f"grad of x: expected shape {shape_x}, got {x.grad.shape}"
    )
    assert y.grad.shape == tuple(shape_y), (
        f"grad of y: expected shape {shape_y}, got {y.grad.shape}"
    )


@pytest.mark.parametrize("name", list(BINARY))
@PROPERTY
@given(
    shapes=hnp.mutually_broadcastable_shapes(
        num_shapes=2, min_dims=1, max_dims=3, min_side=0, max_side=2
    ),
    seed=st.integers(0, 2**16),
)
def test_binary_broadcasting_with_empty_and_size_one_dims(name, shapes, seed):
    # central differences have nothing to perturb in an empty tensor: check values and shapes
    op, dom_x, dom_y = BINARY[name]
    shape_x, shape_y = shapes.input_shapes
    if name == "mse_loss_none":
        shape_x = shapes.result_shape
    a, b = sample(dom_x, shape_x, seed), sample(dom_y, shape_y, seed + 1)
    x, y = leaves([a, b])
    out = op(x, y)
    assert out.shape == tuple(shapes.result_shape), (
        f"expected shape {shapes.result_shape}, got {out.shape}"
    )
    weighted(out).backward()
    assert x.grad.shape == tuple(shape_x), (
        f"grad of x: expected shape {shape_x}, got {x.grad.shape}"
    )
    assert y.grad.shape == tuple(shape_y), (
        f"grad of y: expected shape {shape_y}, got {y.grad.shape}"
    )
    if out.numpy().size == 0:  # nothing flows back: zero gradients
        assert not np.any(x.grad.numpy()) and not np.any(y.grad.numpy())


@PROPERTY
@given(
    shapes=hnp.mutually_broadcastable_shapes(
        num_shapes=3, min_dims=0, max_dims=3, min_side=1, max_side=3
    ),
    seed=st.integers(0, 2**16),
)
def test_gradcheck_where_broadcasting(shapes, seed):
    shape_c, shape_x, shape_y = shapes.input_shapes
    cond = tl.tensor(np.random.default_rng(seed).random(shape_c) < 0.5)
    check(
        lambda a, b: weighted(tl.where(cond, a, b)),
        [sample("real", shape_x, seed), sample("real", shape_y, seed + 1)],
    )


@PROPERTY
@given(
    batch=hnp.mutually_broadcastable_shapes(
        num_shapes=2, min_dims=0, max_dims=2, min_side=1, max_side=3
    ),
    n=st.integers(1, 3),
    k=st.integers(1, 3),
    m=st.integers(1, 3),
    seed=st.integers(0, 2**16),
)
def test_gradcheck_matmul_batched(batch, n, k, m, seed):
    shape_a = (*batch.input_shapes[0], n, k)
    shape_b = (*batch.input_shapes[1], k, m)
    a, b = check(
        lambda x, y: weighted(x @ y),
        [sample("real", shape_a, seed), sample("real", shape_b, seed + 1)],
    )
    assert a.grad.shape == shape_a and b.grad.shape == shape_b


@pytest.mark.parametrize(
    "shape_a, transposed",
    [((2, 3, 4), False), ((2, 1, 3, 4), False), ((3, 2, 4), True), ((0, 3, 4), False)],
)
def test_matmul_stack_times_matrix(shape_a, transposed):
    """(..., n, k) @ (k, m) runs as one (N, k) @ (k, m) product: values and gradients as the
    stack of products, for a non-contiguous stack and an empty one too."""
    rng = np.random.default_rng(7)
    a_np, b_np = rng.normal(size=shape_a), rng.normal(size=(4, 5))
    a = tl.tensor(a_np, requires_grad=True)
    b = tl.tensor(b_np, requires_grad=True)
    stack = a.transpose(0, 1) if transposed else a
    stack_np = np.swapaxes(a_np, 0, 1) if transposed else a_np
    out = stack @ b
    np.testing.assert_allclose(out.numpy(), np.matmul(stack_np, b_np), rtol=1e-12, atol=1e-12)
    out.sum().backward()
    ones = np.ones(out.shape)
    expected_a = np.matmul(ones, b_np.T)
    np.testing.assert_allclose(
        a.grad.numpy(), np.swapaxes(expected_a, 0, 1) if transposed else expected_a
    )
    expected_b = np.matmul(np.swapaxes(stack_np, -1, -2), ones).reshape(-1, 4, 5).sum(0)
    np.testing.assert_allclose(b.grad.numpy(), expected_b, rtol=1e-12, atol=1e-12)
    if a_np.size:
        check(lambda x, y: weighted((x.transpose(0, 1) if transposed else x) @ y), [a_np, b_np])


UNARY = {
    "exp": (lambda x: x.exp(), "real"),
    "log": (lambda x: x.log(), "positive"),
    "sqrt": (lambda x: x.sqrt(), "positive"),
    "abs": (lambda x: x.abs(), "nonzero"),
    "tanh": (lambda x: x.tanh(), "real"),
    "sigmoid": (lambda x: x.sigmoid(), "real"),
    "relu": (lambda x: x.relu(), "nonzero"),
    "gelu": (lambda x: F.gelu(x), "real"),
    "gelu_tanh": (lambda x: F.gelu(x, approximate="tanh"), "real"),
    "silu": (lambda x: F.silu(x), "real"),
    "neg": (lambda x: -x, "real"),
    "pow_scalar": (lambda x: x**2.5, "positive"),
    "rpow": (lambda x: 3.0**x, "real"),
    "rdiv": (lambda x: 1.0 / x, "nonzero"),
    "clamp": (lambda x: x.clamp(-0.5, 0.5), "off_clamp"),
}


@pytest.mark.parametrize("name", list(UNARY))
@PROPERTY
@given(
    shape=hnp.array_shapes(min_dims=0, max_dims=3, min_side=1, max_side=3),
    seed=st.integers(0, 2**16),
)
def test_gradcheck_unary(name, shape, seed):
    op, domain = UNARY[name]
    (x,) = check(lambda a: weighted(op(a)), [sample(domain, shape, seed)])
    assert x.grad.shape == tuple(shape)


REDUCTIONS = {
    "sum": (lambda x, d, k: x.sum(dim=d, keepdim=k), "real"),
    "mean": (lambda x, d, k: x.mean(dim=d, keepdim=k), "real"),
    "var": (lambda x, d, k: x.var(dim=d, keepdim=k), "real"),
    "max": (lambda x, d, k: x.max(dim=d, keepdim=k)[0], "distinct"),
    "min": (lambda x, d, k: x.min(dim=d, keepdim=k)[0], "distinct"),
    "softmax": (lambda x, d, k: x.softmax(dim=d), "real"),
    "log_softmax": (lambda x, d, k: x.log_softmax(dim=d), "real"),
}


@pytest.mark.parametrize("name", list(REDUCTIONS))
@PROPERTY
@given(data=st.data(), seed=st.integers(0, 2**16), keepdim=st.booleans())
def test_gradcheck_reduction_over_dim(name, data, seed, keepdim):
    op, domain = REDUCTIONS[name]
    # var over a dim of size 1 divides by n - 1 = 0: give var at least 2 elements per dim
    shape = data.draw(
        hnp.array_shapes(min_dims=1, max_dims=3, min_side=2 if name == "var" else 1, max_side=3)
    )
    dim = data.draw(st.integers(-len(shape), len(shape) - 1), label="dim")
    check(lambda a: weighted(op(a, dim, keepdim)), [sample(domain, shape, seed)])


@PROPERTY
@given(
    shape=hnp.array_shapes(min_dims=1, max_dims=4, min_side=1, max_side=3),
    seed=st.integers(0, 2**16),
)
def test_gradcheck_sum_over_several_dims(shape, seed):
    rng = np.random.default_rng(seed)
    dims = tuple(
        int(d) for d in rng.choice(len(shape), size=rng.integers(1, len(shape) + 1), replace=False)
    )
    dims = tuple(d - len(shape) if rng.random() < 0.5 else d for d in dims)  # mix negative dims in
    check(lambda a: weighted(a.sum(dim=dims)), [sample("real", shape, seed)])


@PROPERTY
@given(
    shape=hnp.array_shapes(min_dims=1, max_dims=4, min_side=1, max_side=3),
    seed=st.integers(0, 2**16),
)
def test_gradcheck_permute_and_reshape(shape, seed):
    order = tuple(int(d) for d in np.random.default_rng(seed).permutation(len(shape)))
    check(lambda a: weighted(a.permute(*order).reshape(-1)), [sample("real", shape, seed)])


# ---------------------------------------------------------------------------------------------
# explicit values: what a numerical gradient cannot pin down
# ---------------------------------------------------------------------------------------------


def test_repeated_indices_scatter_add():
    x = tl.tensor(np.arange(12.0).reshape(4, 3), requires_grad=True)
    y = x[tl.tensor(np.array([0, 2, 0, 0, 3]))]
    np.testing.assert_array_equal(y.numpy(), np.arange(12.0).reshape(4, 3)[[0, 2, 0, 0, 3]])
    y.sum().backward()
    expected = np.array([3.0, 0.0, 1.0, 1.0])[:, None] * np.ones((1, 3))
    np.testing.assert_array_equal(
        x.grad.numpy(), expected, err_msg="row 0 is taken 3 times: its grad must be 3"
    )


def test_repeated_pairs_of_indices_scatter_add():
    x = tl.tensor(np.zeros((2, 2)), requires_grad=True)
    y = x[tl.tensor(np.array([1, 1, 0])), tl.tensor(np.array([0, 0, 1]))]
    (y * tl.tensor(np.array([1.0, 2.0, 5.0]))).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), np.array([[0.0, 5.0], [3.0, 0.0]]))


def test_boolean_mask_grad_lands_on_selected():
    mask = np.array([[True, False], [False, True]])
    x = tl.tensor(np.ones((2, 2)), requires_grad=True)
    x[tl.tensor(mask)].sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), mask.astype(np.float64))


def test_max_dim_tie_rule_grad_goes_to_returned_index():
    data = np.array([[1.0, 3.0, 3.0], [2.0, 2.0, 1.0], [0.5, 0.5, 0.5]])
    for reduce in ("max", "min"):
        x = tl.tensor(data if reduce == "max" else -data, requires_grad=True)
        values, indices = getattr(x, reduce)(dim=1)
        assert indices.dtype == tl.int64, (
            f"indices of {reduce}(dim): expected int64, got {indices.dtype}"
        )
        values.sum().backward()
        one_hot = np.zeros_like(data)
        one_hot[np.arange(3), indices.numpy()] = 1.0
        np.testing.assert_array_equal(
            x.grad.numpy(),
            one_hot,
            err_msg=f"{reduce}(dim) must send the whole gradient to the index it returns",
        )
        # the returned index is a true argmax, and (like torch on CPU) the first one
        np.testing.assert_array_equal(indices.numpy(), [1, 0, 0])


def test_full_max_ties_share_the_gradient_evenly():
    # torch's rule for a full reduction: amax backward splits the gradient among the ties
    x = tl.tensor(np.array([[1.0, 3.0, 3.0], [3.0, 2.0, 1.0]]), requires_grad=True)
    x.max().backward()
    np.testing.assert_allclose(x.grad.numpy(), np.array([[0, 1, 1], [1, 0, 0]]) / 3.0)
    x.grad = None
    x.min().backward()
    np.testing.assert_allclose(x.grad.numpy(), np.array([[1, 0, 0], [0, 0, 1]]) / 2.0)


def test_empty_dims_forward_and_backward():
    x = tl.tensor(np.zeros((0, 3)), requires_grad=True)
    b = tl.tensor(np.ones(3), requires_grad=True)
    y = (x * 2.0 + b).exp()
    assert y.shape == (0, 3)
    s = y.sum(dim=0)
    np.testing.assert_array_equal(s.numpy(), np.zeros(3))
    s.sum().backward()
    assert x.grad.shape == (0, 3), (
        f"grad of an empty leaf: expected shape (0, 3), got {x.grad.shape}"
    )
    np.testing.assert_array_equal(
        b.grad.numpy(), np.zeros(3), err_msg="b was broadcast over 0 rows"
    )


def test_empty_dims_shape_ops_and_cat():
    x = tl.tensor(np.zeros((2, 0, 3)), requires_grad=True)
    y = tl.tensor(np.ones((2, 1, 3)), requires_grad=True)
    z = tl.cat([x, y], dim=1).reshape(2, 3).transpose(0, 1)
    assert z.shape == (3, 2)
    weighted(z).backward()
    assert x.grad.shape == (2, 0, 3)
    np.testing.assert_allclose(y.grad.numpy().reshape(2, 3), cotangent((3, 2)).T)


def test_size_one_dims_broadcast_grad_sums():
    x = tl.tensor(np.ones((1, 3, 1)), requires_grad=True)
    y = tl.tensor(np.ones((2, 1, 4)), requires_grad=True)
    (x * y).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), np.full((1, 3, 1), 8.0))
    np.testing.assert_array_equal(y.grad.numpy(), np.full((2, 1, 4), 3.0))


def test_cross_entropy_ignore_index_gets_no_gradient():
    x = tl.tensor(np.random.default_rng(0).normal(size=(4, 3)), requires_grad=True)
    F.cross_entropy(x, tl.tensor(np.array([0, -100, 1, -100]))).backward()
    np.testing.assert_array_equal(x.grad.numpy()[[1, 3]], np.zeros((2, 3)))
    assert np.abs(x.grad.numpy()[[0, 2]]).sum() > 0


# ---------------------------------------------------------------------------------------------
# gradcheck itself
# ---------------------------------------------------------------------------------------------


def _floats(message: str) -> list[float]:
    return [float(s) for s in re.findall(r"[-+]?\d+\.?\d*(?:[eE][-+]?\d+)?", message)]


def test_gradcheck_passes_and_leaves_inputs_unchanged():
    data = np.array([[0.3, -1.2], [2.0, 0.7]])
    x = tl.tensor(data.copy(), requires_grad=True)
    assert gradcheck(lambda a: (a * a).sum(), (x,)) is True
    np.testing.assert_array_equal(
        x.numpy(), data, err_msg="gradcheck must restore the perturbed inputs"
    )


def test_gradcheck_leaves_grad_unchanged():
    # like torch.autograd.gradcheck: None stays None, and an existing gradient is not touched
    x = tl.tensor(np.array([[0.3, -1.2], [2.0, 0.7]]), requires_grad=True)
    y = tl.tensor(np.array([0.5, 1.5]), requires_grad=True)
    existing = tl.tensor(np.array([10.0, -20.0]))
    y.grad = existing
    assert gradcheck(lambda a, b: (a * b).tanh(), (x, y)) is True
    assert x.grad is None, f"gradcheck set .grad of an input that had none: {x.grad}"
    assert y.grad is existing, "gradcheck replaced an existing .grad"
    np.testing.assert_array_equal(
        y.grad.numpy(), [10.0, -20.0], err_msg="gradcheck changed an existing .grad"
    )
    # also when it fails
    assert (
        gradcheck(lambda a, b: (a * b.detach() * b).sum(), (x, y), raise_exception=False) is False
    )
    assert x.grad is None and y.grad is existing
    np.testing.assert_array_equal(y.grad.numpy(), [10.0, -20.0])


def test_gradcheck_fails_on_a_wrong_gradient_and_names_the_worst_element():
    # x * x.detach() has value x**2 (numerical derivative 2x) but autograd sees only one factor
    # (analytic derivative x): the worst element is x[1] = 5, numerical 10 against analytic 5.
    x = tl.tensor(np.array([0.1, 5.0, 0.2]), requires_grad=True)
    with pytest.raises(GRADCHECK_FAILURE) as info:
        gradcheck(lambda a: (a * a.detach()).sum(), (x,))
    message = str(info.value)
    numbers = _floats(message)
    assert any(abs(v - 10.0) < 1e-3 for v in numbers), f"numerical value 10 missing from: {message}"
    assert any(abs(v - 5.0) < 1e-3 for v in numbers), f"analytic value 5 missing from: {message}"


def test_gradcheck_catches_a_one_percent_error():
    # analytic 2.01 x against numerical 2.02 x: 0.5% relative error, above rtol = 1e-3
    x = tl.tensor(np.array([[0.7, -1.3], [1.1, 0.4]]), requires_grad=True)
    with pytest.raises(GRADCHECK_FAILURE):
        gradcheck(lambda a: (a * a + 0.01 * a * a.detach()).sum(), (x,))


def test_gradcheck_checks_every_input():
    # only the second input's gradient is wrong
    x = tl.tensor(np.array([0.5, 1.5]), requires_grad=True)
    y = tl.tensor(np.array([1.0, -2.0]), requires_grad=True)
    with pytest.raises(GRADCHECK_FAILURE):
        gradcheck(lambda a, b: (a * b * b.detach()).sum(), (x, y))


def test_gradcheck_catches_a_wrong_gradient_through_broadcasting():
    # a gradient that ignores the broadcast (y.detach() used in one term) is off by the sum
    x = tl.tensor(np.ones((3, 2)), requires_grad=True)
    y = tl.tensor(np.array([0.5, 2.0]), requires_grad=True)
    with pytest.raises(GRADCHECK_FAILURE):
        gradcheck(lambda a, b: (a * b + a * b.detach() * b).sum(), (x, y))


def test_gradcheck_fails_on_a_function_with_a_wrong_backward():
    # an op written against the engine's extension point, with the factor 2 of d(x^2) forgotten
    class WrongSquare(tl.Function):
        def forward(self, x):
            self.x = x
            return x * x

        def backward(self, grad):
            return (grad * self.x,)

    class RightSquare(tl.Function):
        def forward(self, x):
            self.x = x
            return x * x

        def backward(self, grad):
            return (2.0 * grad * self.x,)

    x = tl.tensor(np.array([[0.5, -1.5], [2.0, 1.0]]), requires_grad=True)
    assert gradcheck(lambda a: RightSquare.apply(a).sum(), (x,)) is True
    with pytest.raises(GRADCHECK_FAILURE):
        gradcheck(lambda a: WrongSquare.apply(a).sum(), (x,))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_stable_ops_do_not_warn_at_extreme_values(dtype):
    # sigmoid(-1000) is 0 and softmax of 1000s is finite: a stable formula never overflows
    stable = {
        "sigmoid": lambda t: t.sigmoid(),
        "tanh": lambda t: t.tanh(),
        "silu": F.silu,
        "gelu": F.gelu,
        "gelu_tanh": lambda t: F.gelu(t, approximate="tanh"),
        "softmax": lambda t: t.softmax(dim=0),
        "log_softmax": lambda t: t.log_softmax(dim=0),
        "bce_with_logits": lambda t: F.binary_cross_entropy_with_logits(t, t.detach() * 0.0 + 0.5),
        "cross_entropy": lambda t: F.cross_entropy(t.reshape(1, -1), tl.tensor([0])),
    }
    data = np.array([-1000.0, -80.0, -30.0, 0.0, 30.0, 80.0, 1000.0], dtype=dtype)
    for name, fn in stable.items():
        x = tl.tensor(data, requires_grad=True)
        with warnings.catch_warnings():
            warnings.simplefilter("error", RuntimeWarning)
            out = fn(x)
            out.backward(gradient=tl.ones_like(out))
        assert np.all(np.isfinite(out.numpy())), f"{name}: non-finite output {out.numpy()}"
        assert np.all(np.isfinite(x.grad.numpy())), f"{name}: non-finite grad {x.grad.numpy()}"


# cat's legacy rule: a 1-D empty tensor joins tensors of any shape (it was refused), and keeps its
# (empty) gradient; unfold of a 0-d tensor is one window of shape (size,), as in PyTorch
@pytest.mark.parity
@pytest.mark.parametrize("dim", [0, 1, -1])
def test_cat_skips_legacy_empty_tensors_as_pytorch(dim):
    torch = pytest.importorskip("torch")
    results = []
    for lib in (tl, torch):
        empty = lib.zeros(0, dtype=lib.float64, requires_grad=True)
        block = lib.ones(2, 2, dtype=lib.float64, requires_grad=True)
        out = lib.cat([empty, block, empty], dim=dim)
        (out * 3).sum().backward()
        results.append((out.detach().numpy(), block.grad.numpy(), empty.grad.numpy()))
    for ours, theirs in zip(*results, strict=True):
        assert ours.shape == theirs.shape
        np.testing.assert_array_equal(ours, theirs)
    assert tl.cat([tl.tensor([]), tl.tensor([])]).shape == (0,)


@pytest.mark.parity
def test_unfold_of_a_zero_dim_tensor_matches_pytorch():
    torch = pytest.importorskip("torch")
    ours = tl.tensor(2.5, dtype=tl.float64, requires_grad=True)
    theirs = torch.tensor(2.5, dtype=torch.float64, requires_grad=True)
    a, b = ours.unfold(0, 1, 1), theirs.unfold(0, 1, 1)
    assert a.shape == tuple(b.shape) == (1,)
    (a * 2).sum().backward()
    (b * 2).sum().backward()
    assert ours.grad.item() == theirs.grad.item() == 2.0
