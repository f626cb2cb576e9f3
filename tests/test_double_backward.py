"""Chapter 2, section 24.1: second-order gradients (``create_graph=True``): each op's recorded
backward (``backward_graph``) against PyTorch's double backward, gradchecks of first derivatives,
``.grad`` with a graph, the refusal of an op without a recorded backward, and the second-order
functions built on it (``autograd.functional.hessian``, ``hvp``, ``vhp``, ``tensorlib.func``)."""

from __future__ import annotations

import numpy as np
import pytest
from _gradgrad import check_gradgrad

import tensorlib as tl
import tensorlib.nn.functional as F

RNG = np.random.default_rng(0)


def _array(shape, low=None):
    values = RNG.standard_normal(shape)
    return np.abs(values) + low if low is not None else values


# name -> (op on (library, functional module, *inputs), input shapes, positive inputs)
OPS = {
    "add": (lambda L, G, a, b: a + b, [(3, 4), (4,)], False),
    "add-scalar": (lambda L, G, a: a + 2.5, [(3,)], False),
    "sub": (lambda L, G, a, b: a - b, [(2, 1, 3), (4, 1)], False),
    "mul": (lambda L, G, a, b: a * b, [(3, 4), (3, 1)], False),
    "mul-scalar": (lambda L, G, a: 3.0 * a * a, [(2, 3)], False),
    "div": (lambda L, G, a, b: a / b, [(3, 4), (4,)], True),
    "rdiv": (lambda L, G, a: 2.0 / a, [(5,)], True),
    "neg": (lambda L, G, a: -a * a, [(3,)], False),
    "pow-scalar": (lambda L, G, a: a ** 3, [(2, 3)], False),
    "pow-fraction": (lambda L, G, a: a ** 2.5, [(4,)], True),
    "pow-tensor": (lambda L, G, a, b: a ** b, [(3, 2), (2,)], True),
    "rpow": (lambda L, G, a: 2.0 ** a, [(4,)], False),
    "exp": (lambda L, G, a: a.exp(), [(3, 2)], False),
    "log": (lambda L, G, a: a.log(), [(4,)], True),
    "sqrt": (lambda L, G, a: a.sqrt(), [(2, 2)], True),
    "sin": (lambda L, G, a: a.sin(), [(5,)], False),
    "cos": (lambda L, G, a: a.cos(), [(5,)], False),
    "tanh": (lambda L, G, a: a.tanh(), [(2, 3)], False),
    "sigmoid": (lambda L, G, a: a.sigmoid(), [(2, 3)], False),
    "relu": (lambda L, G, a: a.relu() * a, [(6,)], False),
    "abs": (lambda L, G, a: a.abs() * a, [(6,)], False),
    "erf": (lambda L, G, a: a.erf(), [(4,)], False),
    "sum-all": (lambda L, G, a: a.sum() * a, [(2, 3)], False),
    "sum-dim": (lambda L, G, a: a.sum(1) ** 2, [(2, 3, 2)], False),
    "sum-keepdim": (lambda L, G, a: a * a.sum((0, 2), keepdim=True), [(2, 3, 2)], False),
    "mean": (lambda L, G, a: a.mean(0) ** 2, [(4, 3)], False),
    "mean-all": (lambda L, G, a: a * a.mean(), [(4, 3)], False),
    "matmul-2d": (lambda L, G, a, b: (a @ b) ** 2, [(3, 4), (4, 2)], False),
    "matmul-vec": (lambda L, G, a, b: (a @ b).sin(), [(3, 4), (4,)], False),
    "matmul-vecmat": (lambda L, G, a, b: (a @ b).sin(), [(4,), (4, 2)], False),
    "matmul-dot": (lambda L, G, a, b: (a @ b) ** 2, [(4,), (4,)], False),
    "matmul-batch": (lambda L, G, a, b: (a @ b) ** 2, [(2, 3, 4), (4, 2)], False),
    "matmul-broadcast": (lambda L, G, a, b: (a @ b).tanh(), [(2, 1, 3, 4), (3, 4, 2)], False),
    "reshape": (lambda L, G, a: a.reshape(3, 2) ** 2, [(2, 3)], False),
    "view": (lambda L, G, a: (a * a).view(-1).sin(), [(2, 3)], False),
    "unsqueeze": (lambda L, G, a: (a.unsqueeze(1) * a).sin(), [(3,)], False),
    "transpose": (lambda L, G, a: a.transpose(0, 1) @ a, [(3, 2)], False),
    "permute": (lambda L, G, a: a.permute(2, 0, 1).sin() * 2, [(2, 3, 2)], False),
    "expand": (lambda L, G, a: a.expand(2, 3, 4) ** 2, [(3, 1)], False),
    "getitem": (lambda L, G, a: a[1:, 0] ** 3 + a[0, ::2].sum(), [(3, 4)], False),
    "getitem-int": (lambda L, G, a: a[1] * a[2], [(3, 4)], False),
    "getitem-repeated": (lambda L, G, a: a[[0, 0, 2]] ** 2, [(3, 2)], False),
    "cat": (lambda L, G, a, b: L.cat([a * a, b.sin()], 1), [(2, 3), (2, 1)], False),
    "stack": (lambda L, G, a, b: L.stack([a * b, b], 0) ** 2, [(3,), (3,)], False),
    "where": (lambda L, G, a, b: L.where(a > 0, a * a, b.exp()), [(3, 2), (2,)], False),
    "masked_fill": (lambda L, G, a: (a * a).masked_fill(a > 0, 1.0), [(5,)], False),
    "clone": (lambda L, G, a: (a * a).clone() * a, [(3,)], False),
    "cast": (lambda L, G, a: (a * a).float().double() * a, [(3,)], False),
    "gelu": (lambda L, G, a: G.gelu(a), [(6,)], False),
    "gelu-tanh": (lambda L, G, a: G.gelu(a, approximate="tanh"), [(6,)], False),
    "silu": (lambda L, G, a: G.silu(a), [(6,)], False),
    "leaky_relu": (lambda L, G, a: G.leaky_relu(a, 0.2) * a, [(6,)], False),
    "softplus": (lambda L, G, a: G.softplus(a, beta=2.0), [(6,)], False),
    "mse_loss": (lambda L, G, a, b: G.mse_loss(a * a, b), [(3, 2), (3, 2)], False),
    "linear": (lambda L, G, x, w, b: G.linear(x, w, b).tanh(), [(4, 3), (2, 3), (2,)], False),
    "linear-3d": (lambda L, G, x, w, b: G.linear(x, w, b) ** 2, [(2, 2, 3), (2, 3), (2,)], False),
    "linear-1d": (lambda L, G, x, w, b: G.linear(x, w, b).sin(), [(3,), (2, 3), (2,)], False),
    "sigmoid-module": (lambda L, G, a: L.nn.Sigmoid()(a) * L.nn.Tanh()(a), [(4,)], False),
    # section 24.1's later ops: elementwise functions
    "clamp": (lambda L, G, a: a.clamp(-0.5, 0.5) * a.sin(), [(8,)], False),
    "clamp-min": (lambda L, G, a: a.clamp(min=0.2) ** 3, [(8,)], False),
    "clip-max": (lambda L, G, a: a.clip(max=-0.1) ** 3, [(8,)], False),
    "clamp-tensor": (lambda L, G, a, lo, hi: a.clamp(lo, lo + hi.abs()) ** 2,
                     [(3, 4), (4,), (3, 1)], False),
    "log1p": (lambda L, G, a: a.log1p(), [(5,)], True),
    "expm1": (lambda L, G, a: a.expm1(), [(5,)], False),
    "tan": (lambda L, G, a: (a * 0.5).tan(), [(5,)], False),
    "sinh": (lambda L, G, a: a.sinh(), [(5,)], False),
    "cosh": (lambda L, G, a: a.cosh(), [(5,)], False),
    "atan": (lambda L, G, a: a.atan(), [(5,)], False),
    "asin": (lambda L, G, a: (a.tanh() * 0.9).asin(), [(5,)], False),
    "acos": (lambda L, G, a: (a.tanh() * 0.9).acos(), [(5,)], False),
    "acosh": (lambda L, G, a: (a + 1).acosh(), [(5,)], True),
    "asinh": (lambda L, G, a: a.asinh(), [(5,)], False),
    "atanh": (lambda L, G, a: (a.tanh() * 0.9).atanh(), [(5,)], False),
    "log2": (lambda L, G, a: a.log2(), [(5,)], True),
    "log10": (lambda L, G, a: a.log10() * a, [(5,)], True),
    # reductions
    "logsumexp": (lambda L, G, a: a.logsumexp(1), [(3, 4)], False),
    "logsumexp-dims": (lambda L, G, a: L.logsumexp(a, (0, 2), keepdim=True) * a,
                       [(2, 3, 2)], False),
    "norm-dim": (lambda L, G, a: a.norm(2, dim=1), [(4, 3)], False),
    "norm-all": (lambda L, G, a: a.norm() * a, [(2, 3)], False),
    "norm-p1": (lambda L, G, a: a.norm(1, dim=0) * a.sum(), [(3, 2)], False),
    "vector_norm": (lambda L, G, a: L.linalg.vector_norm(a, dim=1), [(4, 3)], False),
    "vector_norm-3": (lambda L, G, a: L.linalg.vector_norm(a, 3, dim=0, keepdim=True) * a,
                      [(4, 3)], False),
    "vector_norm-half": (lambda L, G, a: L.linalg.vector_norm(a, 0.5), [(5,)], False),
    "vector_norm-inf": (lambda L, G, a: L.linalg.vector_norm(a, float("inf"), dim=1) * a.sum(),
                        [(3, 4)], False),
    "vector_norm-1": (lambda L, G, a: L.linalg.vector_norm(a, 1) * a, [(4,)], False),
    "var": (lambda L, G, a: a.var(1), [(3, 4)], False),
    "var-all": (lambda L, G, a: a.var(correction=0) * a, [(2, 3)], False),
    "std": (lambda L, G, a: a.std(0), [(4, 3)], False),
    "std-keepdim": (lambda L, G, a: a.std(dim=(0, 2), keepdim=True) * a, [(2, 3, 2)], False),
    "max": (lambda L, G, a: a.max() * a, [(2, 3)], False),
    "min": (lambda L, G, a: a.min() * a, [(2, 3)], False),
    "amax": (lambda L, G, a: a.amax(1) ** 2, [(3, 4)], False),
    "amin": (lambda L, G, a: a.amin((0, 1), keepdim=True) * a, [(3, 4)], False),
    "max-ties": (lambda L, G, a: L.cat([a, a]).amax(0) ** 2 + L.stack([a, a]).max() * a,
                 [(3,)], False),
    "maximum": (lambda L, G, a, b: L.maximum(a, b) ** 2, [(3, 4), (4,)], False),
    "minimum": (lambda L, G, a, b: L.minimum(a * b, b) ** 2, [(3, 4), (4,)], False),
    "maximum-ties": (lambda L, G, a: L.maximum(a, a.detach()) ** 2 * L.minimum(a, a),
                     [(4,)], False),
    "fmax": (lambda L, G, a, b: L.fmax(a, b) ** 2, [(3, 4), (4,)], False),
    "fmin": (lambda L, G, a, b: L.fmin(a * b, b) ** 2, [(3, 4), (4,)], False),
    "max-dim": (lambda L, G, a: (a.max(1).values ** 2).sum() + a.min(0, keepdim=True)[0] * a,
                [(3, 4)], False),
    "sort-topk": (lambda L, G, a: a.sort(1).values ** 2 + a.topk(2, 0).values.sum() * a,
                  [(3, 4)], False),
    "prod": (lambda L, G, a: a.prod(), [(5,)], False),
    "prod-dim": (lambda L, G, a: a.prod(1) * a.sum(), [(3, 4)], False),
    "prod-keepdim": (lambda L, G, a: a.prod(0, keepdim=True) * a, [(3, 2)], False),
    "cumprod": (lambda L, G, a: a.cumprod(1) * a, [(3, 4)], False),
    "gather": (lambda L, G, a: a.gather(1, L.tensor([[0, 2, 0], [1, 1, 3], [3, 0, 0]])) ** 2,
               [(3, 4)], False),
    # shapes, and functions of two tensors
    "roll": (lambda L, G, a: a.roll(1, 0) * a + a.roll((1, -2), (0, 1)) ** 2, [(3, 4)], False),
    "roll-flat": (lambda L, G, a: a.roll(2) * a, [(2, 3)], False),
    "repeat": (lambda L, G, a: a.repeat(2, 1, 3) ** 2, [(3, 2)], False),
    "einsum": (lambda L, G, a, b: L.einsum("bij,bjk->bik", a, b) ** 2, [(2, 3, 4), (2, 4, 2)],
               False),
    "einsum-trace": (lambda L, G, a: L.einsum("ii", a * a) * a + L.einsum("ii->i", a).sin(),
                     [(3, 3)], False),
    "einsum-ellipsis": (lambda L, G, a, b: L.einsum("...ij,j->...i", a, b).tanh(),
                        [(2, 3, 4), (4,)], False),
    "einsum-implicit": (lambda L, G, a, b: L.einsum("ij,kj", a, b * b), [(2, 3), (4, 3)],
                        False),
    "einsum-sum-out": (lambda L, G, a, b: L.einsum("ij,j->", a, b) * a, [(2, 3), (3,)], False),
    "atan2": (lambda L, G, a, b: L.atan2(a, b), [(3, 4), (4,)], False),
    "hypot": (lambda L, G, a, b: L.hypot(a, b), [(3, 4), (4,)], False),
    "logaddexp": (lambda L, G, a, b: L.logaddexp(a, b), [(3, 4), (4,)], False),
    "logaddexp2": (lambda L, G, a, b: L.logaddexp2(a, b), [(3, 4), (4,)], False),
    "copysign": (lambda L, G, a, b: L.copysign(a, b) * a, [(3, 4), (4,)], False),
    "xlogy": (lambda L, G, a, b: L.xlogy(a * a, b), [(3, 4), (4,)], True),
    "fmod": (lambda L, G, a, b: L.fmod(a * 3, b) * a, [(3, 4), (4,)], True),
    # activations
    "elu": (lambda L, G, a: G.elu(a, 0.7), [(6,)], False),
    "celu": (lambda L, G, a: G.celu(a, 1.5), [(6,)], False),
    "selu": (lambda L, G, a: G.selu(a) * a, [(6,)], False),
    "relu6": (lambda L, G, a: G.relu6(a * 4) * a, [(8,)], False),
    "hardtanh": (lambda L, G, a: G.hardtanh(a, -0.5, 0.5) * a, [(8,)], False),
    "hardswish": (lambda L, G, a: G.hardswish(a * 3), [(8,)], False),
    "logsigmoid": (lambda L, G, a: G.logsigmoid(a), [(6,)], False),
    "mish": (lambda L, G, a: G.mish(a), [(6,)], False),
}


def _second_derivatives(lib, functional, name, arrays):
    """Each input's gradient of ``sum(w * dL/dx)`` where ``dL/dx`` is recorded with
    ``create_graph=True``, ``L = sum(u * op(inputs))``: the double backward, in both directions."""
    op = OPS[name][0] if name in OPS else EDGES[name][0]
    inputs = [lib.tensor(a, requires_grad=True) for a in arrays]
    out = op(lib, functional, *inputs)
    u = lib.tensor(np.cos(np.arange(out.numel()) + 1.0).reshape(tuple(out.shape)))
    grads = lib.autograd.grad(out, inputs, grad_outputs=u, create_graph=True)
    total = sum((g * lib.tensor(np.sin(np.arange(g.numel()) + 2.0).reshape(tuple(g.shape)))).sum()
                for g in grads)
    seconds = (lib.autograd.grad(total, inputs, allow_unused=True) if total.requires_grad
               else [None] * len(inputs))  # a gradient that is constant (+, -): no graph
    return [g.detach() for g in grads], [
        np.zeros(a.shape) if s is None else s.numpy() for s, a in zip(seconds, arrays, strict=True)
    ]


@pytest.mark.parity
@pytest.mark.parametrize("name", list(OPS))
def test_second_derivatives_match_pytorch(name):
    torch = pytest.importorskip("torch")
    _, shapes, positive = OPS[name]
    arrays = [_array(shape, 0.5 if positive else None) for shape in shapes]
    firsts, seconds = _second_derivatives(tl, F, name, arrays)
    t_firsts, t_seconds = _second_derivatives(torch, torch.nn.functional, name, arrays)
    for ours, theirs in zip(firsts, t_firsts, strict=True):
        np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-10, atol=1e-12)
    for ours, theirs in zip(seconds, t_seconds, strict=True):
        np.testing.assert_allclose(ours, theirs, rtol=1e-10, atol=1e-12)


# name -> (op, inputs): where the first-order backward has a convention (ties share, a clamp
# bound counts as inside, products and norms at 0), the recorded one keeps it, as PyTorch's
EDGES = {
    "clamp-at-bounds": (lambda L, G, a: a.clamp(-0.5, 0.5) * a.sin() + a.clamp(min=0.2) ** 2,
                        [np.array([-0.5, 0.5, 0.2, -1.0, 1.0, 0.0])]),
    "max-ties": (lambda L, G, a: a.max() * a + a.amax(1) ** 2 + a.amin(0) ** 3,
                 [np.array([[1.0, 3.0, 3.0], [-2.0, 3.0, -2.0]])]),
    "maximum-at-ties": (lambda L, G, a, b: L.maximum(a, b) ** 2 + L.minimum(a, b) * a,
                     [np.array([1.0, 2.0, -1.0]), np.array([1.0, 0.5, -1.0])]),
    "fmax-ties": (lambda L, G, a, b: L.fmax(a, b) ** 2 * L.fmin(b, a),
                  [np.array([1.0, 2.0, -1.0]), np.array([1.0, 0.5, -1.0])]),
    "prod-one-zero": (lambda L, G, a: a.prod() * a + a.prod(0) ** 2,
                      [np.array([[2.0, 0.0, 3.0], [-1.0, 0.5, 1.5]])]),
    "prod-two-zeros": (lambda L, G, a: a.prod(1, keepdim=True) * a,
                       [np.array([[0.0, 2.0, 0.0, 3.0], [1.0, 0.0, 2.0, -1.0]])]),
    "cumprod-zeros": (lambda L, G, a: a.cumprod(1) * a,
                      [np.array([[2.0, 0.0, 3.0, 0.0, 1.5], [0.0, 1.0, -2.0, 0.5, 2.0]])]),
    "norm-at-zero": (lambda L, G, a: a.norm(2, dim=1) + L.linalg.vector_norm(a, 3, dim=1),
                     [np.array([[0.0, 0.0, 0.0], [1.0, 2.0, -2.0]])]),
    "norm-near-zero": (lambda L, G, a: a.norm(2, dim=1) * a.sum(),
                       [np.array([[0.0, 1e-3, 0.0], [1.0, 2.0, -2.0]])]),
    "std-constant": (lambda L, G, a: a.std(1) ** 2 + a.std(), [np.array([[2.0, 2.0, 2.0],
                                                                         [1.0, -1.0, 0.5]])]),
    # where PyTorch's double backward is NaN (below), tensorlib's is finite: see the next test
    "std-constant-times": (lambda L, G, a: a.std(1) * a.sum(), [np.array([[2.0, 2.0, 2.0],
                                                                            [1.0, -1.0, 0.5]])]),
    "hardtanh-edges": (lambda L, G, a: G.hardtanh(a) * a + G.relu6(a * 6) * a + G.hardswish(a * 3),
                       [np.array([-1.0, 1.0, 0.5, -2.0, 0.0])]),
}


NAN_IN_PYTORCH = ("norm-at-zero", "std-constant-times")


@pytest.mark.parity
@pytest.mark.parametrize("name", [name for name in EDGES if name not in NAN_IN_PYTORCH])
def test_second_derivatives_at_the_edges_match_pytorch(name):
    torch = pytest.importorskip("torch")
    arrays = EDGES[name][1]
    firsts, seconds = _second_derivatives(tl, F, name, arrays)
    t_firsts, t_seconds = _second_derivatives(torch, torch.nn.functional, name, arrays)
    for ours, theirs in zip(firsts, t_firsts, strict=True):
        np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-10, atol=1e-12)
    for ours, theirs in zip(seconds, t_seconds, strict=True):
        np.testing.assert_allclose(ours, theirs, rtol=1e-10, atol=1e-12)


@pytest.mark.parity
@pytest.mark.parametrize("name", NAN_IN_PYTORCH)
def test_a_norm_or_std_at_zero_has_a_finite_second_derivative_where_pytorchs_is_nan(name):
    # PyTorch masks grad / y to 0 where y = 0 after dividing, so its double backward meets
    # 0 * inf there; tensorlib divides by 1 in those places and masks: the same first
    # derivative, and the second derivative of the masked (subgradient) formula, finite
    torch = pytest.importorskip("torch")
    arrays = EDGES[name][1]
    firsts, seconds = _second_derivatives(tl, F, name, arrays)
    t_firsts, t_seconds = _second_derivatives(torch, torch.nn.functional, name, arrays)
    np.testing.assert_allclose(firsts[0].numpy(), t_firsts[0].numpy(), rtol=1e-10, atol=1e-12)
    nan = np.isnan(t_seconds[0])
    assert nan.any() and np.isfinite(seconds[0]).all()
    np.testing.assert_allclose(seconds[0][~nan], t_seconds[0][~nan], rtol=1e-10, atol=1e-12)


# the ops section 24.1 gave a recorded backward after the first ones
LATER_OPS = [name for name in list(OPS)[list(OPS).index("clamp"):]
             if name != "maximum-ties"]  # a tie: no derivative for central differences


@pytest.mark.parametrize("name", LATER_OPS)
def test_gradgradcheck_of_the_later_ops(name):
    op, shapes, positive = OPS[name]
    rng = np.random.default_rng(1)
    arrays = [np.abs(rng.standard_normal(s)) + 0.5 if positive else rng.standard_normal(s)
              for s in shapes]
    case = (lambda lib, *xs: op(lib, F, *xs), arrays, tuple(range(len(arrays))))
    check_gradgrad(case, first_rtol=1e-12, first_atol=1e-14)  # the first-order pass's values too
    tl.manual_seed(0)
    inputs = [tl.tensor(a, requires_grad=True) for a in arrays]
    assert tl.autograd.gradgradcheck(lambda *xs: op(tl, F, *xs), inputs)


@pytest.mark.parametrize("name", ["mul", "div", "pow-tensor", "exp", "tanh", "sum-dim",
                                  "matmul-batch", "getitem", "cat", "where", "gelu", "softplus",
                                  "linear-3d", "expand", "permute"])
def test_gradcheck_of_the_recorded_first_derivative(name):
    op, shapes, positive = OPS[name]
    arrays = [_array(shape, 0.5 if positive else None) for shape in shapes]
    inputs = [tl.tensor(a, requires_grad=True) for a in arrays]

    def first_derivative(*xs):  # gradcheck evaluates under no_grad: the gradient needs a graph
        with tl.enable_grad():
            return tl.autograd.grad(op(tl, F, *xs).sum(), xs, create_graph=True)

    assert tl.autograd.gradcheck(first_derivative, inputs)


def test_grad_after_create_graph_has_a_node_and_accumulates_with_its_graph():
    x = tl.tensor([1.0, -2.0, 0.5], dtype=tl.float64, requires_grad=True)
    (x ** 3).sum().backward(create_graph=True)
    assert x.grad.grad_fn is not None
    np.testing.assert_allclose(x.grad.numpy(), 3 * x.detach().numpy() ** 2)
    first = x.grad
    x.grad = None
    first.sum().backward()  # d/dx sum(3 x^2) = 6x
    np.testing.assert_allclose(x.grad.numpy(), 6 * x.detach().numpy())
    x.grad = None
    (x * x).sum().backward(create_graph=True)
    (x * x).sum().backward(create_graph=True)  # added out of place: 4x, with a graph
    assert x.grad.grad_fn is not None
    np.testing.assert_allclose(x.grad.numpy(), 4 * x.detach().numpy())


def test_create_graph_keeps_the_graph_unless_told_and_respects_hooks_and_retain_grad():
    x = tl.tensor([1.0, 2.0], dtype=tl.float64, requires_grad=True)
    h = x * x
    h.retain_grad()
    h.register_hook(lambda g: g * 2)
    loss = (h * x).sum()
    loss.backward(create_graph=True)
    # dL/dh = x, doubled by the hook; dL/dx = h + 2 * x * (2 x) = x^2 + 4 x^2
    np.testing.assert_allclose(h.grad.numpy(), 2 * x.detach().numpy())
    np.testing.assert_allclose(x.grad.numpy(), 5 * x.detach().numpy() ** 2)
    loss.backward()  # the graph was kept
    y = (x.exp() * x).sum()
    tl.autograd.grad(y, x, create_graph=True, retain_graph=False)
    with pytest.raises(RuntimeError, match="second time"):
        tl.autograd.grad(y, x)
    x.grad = None  # x.grad's graph reads h, whose graph reads x: break the cycle (as in PyTorch)


def test_an_op_without_a_recorded_backward_is_refused_before_anything_changes():
    x = tl.tensor([[1.0, 2.0], [3.0, 5.0]], dtype=tl.float64, requires_grad=True)
    w = tl.tensor([0.5, 0.5], dtype=tl.float64, requires_grad=True)
    loss = (tl.linalg.svdvals(x) * w).sum() + (w * w).sum()
    with pytest.raises(NotImplementedError, match=r"backward of SvdVals is not differentiable.*"
                                                   r"ops supported: .*MatMul"):
        loss.backward(create_graph=True)
    assert x.grad is None and w.grad is None  # checked before any gradient is computed
    loss.backward()  # the first-order pass still runs, and the graph was not freed
    s = np.linalg.svd(x.detach().numpy(), compute_uv=False)
    np.testing.assert_allclose(w.grad.numpy(), s + 1.0)  # svdvals(x) + 2w
    ops = tl.engine.higher_order.differentiable_ops()
    assert "SvdVals" not in ops and {"Cumprod", "Clamp", "Norm", "VectorNorm", "Lgamma"} <= set(ops)


def test_create_graph_refuses_an_input_changed_in_place():
    x = tl.tensor([1.0, 2.0], dtype=tl.float64, requires_grad=True)
    h = x * 1.0
    y = h.exp()
    h.add_(1.0)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        tl.autograd.grad(y.sum(), x, create_graph=True)


def test_a_gradient_penalty_matches_central_differences():
    data = np.sin(np.arange(8.0)).reshape(4, 2)
    start = [np.cos(np.arange(6.0)).reshape(3, 2), np.linspace(-0.5, 0.5, 3),
             np.array([0.7, -1.2, 0.4])]

    def penalty(w1, b1, w2):
        x = tl.tensor(data, requires_grad=True)
        out = F.linear(F.gelu(F.linear(x, w1, b1)), w2.reshape(1, 3))
        (dx,) = tl.autograd.grad(out.sum(), x, create_graph=True)
        return (((dx * dx).sum(1).sqrt() - 1) ** 2).mean()

    params = [tl.tensor(p, requires_grad=True) for p in start]
    penalty(*params).backward()
    step = 1e-6
    for k, p in enumerate(params):
        for i in np.ndindex(p.shape):
            up, down = [q.copy() for q in start], [q.copy() for q in start]
            up[k][i] += step
            down[k][i] -= step
            numeric = (penalty(*map(tl.tensor, up)).item()
                       - penalty(*map(tl.tensor, down)).item()) / (2 * step)
            assert abs(p.grad.numpy()[i] - numeric) < 1e-7


@pytest.mark.parity
def test_hessian_hvp_vhp_match_pytorch():
    torch = pytest.importorskip("torch")
    a, b, v, w = RNG.standard_normal(3), RNG.standard_normal((2, 3)), RNG.standard_normal(3), (
        RNG.standard_normal((2, 3)))

    def f(lib):
        return lambda p, q: ((q @ p).tanh() * (p * p).sum()).sum() + (q.exp() * q).mean()

    ours, theirs = tl.autograd.functional, torch.autograd.functional
    point = [(tl.tensor(a), tl.tensor(b)), (torch.tensor(a), torch.tensor(b))]
    hs = [ours.hessian(f(tl), point[0]), theirs.hessian(f(torch), point[1])]
    for i in range(2):
        for j in range(2):
            np.testing.assert_allclose(hs[0][i][j].numpy(), hs[1][i][j].numpy(), rtol=1e-10)
    single = [ours.hessian(lambda p: (p.sin() * p).sum(), tl.tensor(a)),
              theirs.hessian(lambda p: (p.sin() * p).sum(), torch.tensor(a))]
    np.testing.assert_allclose(single[0].numpy(), single[1].numpy(), rtol=1e-12)
    for name in ("hvp", "vhp"):
        out, prods = getattr(ours, name)(f(tl), point[0], (tl.tensor(v), tl.tensor(w)))
        t_out, t_prods = getattr(theirs, name)(f(torch), point[1],
                                               (torch.tensor(v), torch.tensor(w)))
        np.testing.assert_allclose(out.numpy(), t_out.numpy(), rtol=1e-12)
        for x, y in zip(prods, t_prods, strict=True):
            np.testing.assert_allclose(x.numpy(), y.numpy(), rtol=1e-10, atol=1e-12)


@pytest.mark.parity
@pytest.mark.filterwarnings("ignore:`torch.jit.script` is deprecated:DeprecationWarning")
def test_nested_func_transforms_match_pytorch():
    torch = pytest.importorskip("torch")
    a = RNG.standard_normal(4)
    results = []
    for lib in (tl, torch):
        x = lib.tensor(a)

        def f(p):
            return (p.sin() * p.exp()).sum() * p.sum()

        results.append([
            lib.func.grad(lambda p, f=f, lib=lib: lib.func.grad(f)(p).pow(2).sum())(x),
            lib.func.jacrev(lib.func.grad(f))(x),
            lib.func.hessian(f)(x),
        ])
    for ours, theirs in zip(results[0], results[1], strict=True):
        np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-10, atol=1e-12)


def test_third_order_derivatives():
    x = tl.tensor([0.3, -0.7], dtype=tl.float64, requires_grad=True)
    (g,) = tl.autograd.grad((x ** 4).sum(), x, create_graph=True)
    (h,) = tl.autograd.grad(g.sum(), x, create_graph=True)
    (t,) = tl.autograd.grad(h.sum(), x)
    np.testing.assert_allclose(t.numpy(), 24 * x.detach().numpy())


@pytest.mark.parity
def test_a_wgan_gp_penalty_with_norm_matches_pytorch():
    # ((||grad_x D(x)||_2 - 1)^2).mean(), written as WGAN-GP code writes it: grads.norm(2, dim=1)
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(5)
    real, fake, alpha = rng.standard_normal((6, 3)), rng.standard_normal((6, 3)), rng.random((6, 1))
    weights = [rng.standard_normal((4, 3)), rng.standard_normal(4), rng.standard_normal((1, 4))]
    results = []
    for lib in (tl, torch):
        w1, b1, w2 = (lib.tensor(w, requires_grad=True) for w in weights)
        x = lib.tensor(alpha * real + (1 - alpha) * fake, requires_grad=True)
        critic = lib.nn.functional.linear(lib.nn.functional.leaky_relu(
            lib.nn.functional.linear(x, w1, b1), 0.2).clamp(-2.0, 2.0), w2)
        (grads,) = lib.autograd.grad(critic, x, grad_outputs=lib.ones_like(critic),
                                     create_graph=True)
        penalty = ((grads.norm(2, dim=1) - 1) ** 2).mean()
        penalty.backward()
        # b1 reaches the gradient only through masks (constants): None here, zeros in PyTorch
        results.append([penalty.item()] + [np.zeros(w.shape) if w.grad is None else w.grad.numpy()
                                           for w in (w1, b1, w2)])
    np.testing.assert_allclose(results[0][0], results[1][0], rtol=1e-12)
    for ours, theirs in zip(results[0][1:], results[1][1:], strict=True):
        np.testing.assert_allclose(ours, theirs, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("name", ["sign", "floor", "ceil", "round", "trunc"])
def test_piecewise_constant_ops_have_a_zero_recorded_backward(name):
    # x * op(x) * x: the recorded backward of op is a constant 0, so the second derivative is
    # 2 op(x), read at points away from the jumps (central differences agree there)
    x = tl.tensor(np.array([-1.3, 0.4, 2.2, -0.3]), requires_grad=True)
    (g,) = tl.autograd.grad((x * getattr(x, name)() * x).sum(), x, create_graph=True)
    (h,) = tl.autograd.grad(g.sum(), x)
    np.testing.assert_array_equal(h.numpy(), 2 * getattr(np, "fix" if name == "trunc" else name)(
        x.detach().numpy()))
    assert tl.autograd.gradgradcheck(lambda t: t * getattr(t, name)() * t, (x,))


@pytest.mark.parity
@pytest.mark.parametrize("name", ["sign", "floor", "ceil", "round", "trunc"])
def test_piecewise_constant_second_order_matches_pytorch(name):
    torch = pytest.importorskip("torch")
    x0 = np.array([-1.3, 0.4, 2.2, -0.3])
    results = []
    for lib, x in ((tl, tl.tensor(x0, requires_grad=True)),
                   (torch, torch.tensor(x0, requires_grad=True))):
        (g,) = lib.autograd.grad((x * getattr(x, name)() * x).sum(), x, create_graph=True)
        (h,) = lib.autograd.grad((g * g).sum(), x)
        results.append(h.detach().numpy())
    np.testing.assert_allclose(results[0], results[1], rtol=1e-12)
