"""Chapter 2, section 24.1: second-order gradients (``create_graph=True``): each op's recorded
backward (``backward_graph``) against PyTorch's double backward, gradchecks of first derivatives,
``.grad`` with a graph, the refusal of an op without a recorded backward, and the second-order
functions built on it (``autograd.functional.hessian``, ``hvp``, ``vhp``, ``tensorlib.func``)."""

from __future__ import annotations

import numpy as np
import pytest

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
}


def _second_derivatives(lib, functional, name, arrays):
    """Each input's gradient of ``sum(w * dL/dx)`` where ``dL/dx`` is recorded with
    ``create_graph=True``, ``L = sum(u * op(inputs))``: the double backward, in both directions."""
    op = OPS[name][0]
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
    x = tl.tensor([1.0, 2.0, 3.0], dtype=tl.float64, requires_grad=True)
    w = tl.tensor([0.5, 0.5, 0.5], dtype=tl.float64, requires_grad=True)
    loss = (x.cumprod(0) * w).sum() + (w * w).sum()
    with pytest.raises(NotImplementedError, match=r"backward of Cumprod is not differentiable.*"
                                                   r"ops supported: .*MatMul"):
        loss.backward(create_graph=True)
    assert x.grad is None and w.grad is None  # checked before any gradient is computed
    loss.backward()  # the first-order pass still runs, and the graph was not freed
    np.testing.assert_allclose(w.grad.numpy(), [1.0 + 1.0, 2.0 + 1.0, 6.0 + 1.0])  # cumprod + 2w
    assert "Cumprod" not in tl.engine.higher_order.differentiable_ops()


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
