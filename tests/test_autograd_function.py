"""PyTorch's custom-op protocol on tensorlib's ``Function``: ``forward(ctx, ...)``,
``backward(ctx, ...)``, ``apply``.

The same class bodies run on both libraries (``_ops(lib)`` builds them on
``lib.autograd.Function``), so the parity tests compare PyTorch's answers with ours for literally
the same code.
"""

from __future__ import annotations

import numpy as np
import pytest

import tensorlib as tl


def _ops(lib):
    class LegendreP3(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return 0.5 * (5 * x**3 - 3 * x)

        @staticmethod
        def backward(ctx, grad_output):
            (x,) = ctx.saved_tensors
            return grad_output * 1.5 * (5 * x**2 - 1)

    class MulAdd(lib.autograd.Function):  # two tensors and a Python number: the number gets None
        @staticmethod
        def forward(ctx, a, b, alpha):
            ctx.save_for_backward(a, b)
            ctx.alpha = alpha
            ctx.seen_needs = ctx.needs_input_grad
            return a * b + alpha * a

        @staticmethod
        def backward(ctx, grad):
            a, b = ctx.saved_tensors
            grad_a = grad * (b + ctx.alpha) if ctx.needs_input_grad[0] else None
            grad_b = grad * a if ctx.needs_input_grad[1] else None
            return grad_a, grad_b, None

    class ArgmaxMask(lib.autograd.Function):  # an output without a gradient
        @staticmethod
        def forward(ctx, x):
            out = (x == x.max()).to(x.dtype)
            ctx.mark_non_differentiable(out)
            return out

        @staticmethod
        def backward(ctx, grad):
            return None

    return LegendreP3, MulAdd, ArgmaxMask


P3, MULADD, ARGMAX = _ops(tl)


def test_one_class_per_concept():
    assert tl.autograd.Function is tl.Function is tl.engine.Function
    assert issubclass(P3, tl.Function)


def test_legendre_forward_backward_and_node_name():
    x = tl.tensor([-1.0, 0.25, 2.0], dtype=tl.float64, requires_grad=True)
    y = P3.apply(x)
    np.testing.assert_allclose(y.numpy(), 0.5 * (5 * x.numpy() ** 3 - 3 * x.numpy()))
    assert y.requires_grad and not y.is_leaf and y.grad_fn.name() == "LegendreP3Backward"
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), 1.5 * (5 * x.numpy() ** 2 - 1))


def test_gradcheck_float64():
    rng = np.random.default_rng(0)
    a = tl.tensor(rng.normal(size=(3, 4)), requires_grad=True)
    b = tl.tensor(rng.normal(size=(3, 4)), requires_grad=True)
    assert tl.autograd.gradcheck(P3.apply, (a,))
    assert tl.autograd.gradcheck(lambda u, v: MULADD.apply(u, v, 0.5), (a, b))
    assert tl.autograd.gradcheck(lambda u: (P3.apply(u) * u).sum(), (a,))  # inside a larger graph


def test_needs_input_grad_and_non_tensor_arguments():
    a = tl.tensor([1.0, 2.0], requires_grad=True)
    b = tl.tensor([3.0, 4.0])  # no grad wanted
    out = MULADD.apply(a, b, 2.0)
    assert out.grad_fn.ctx.seen_needs == (True, False, False)
    out.sum().backward()
    np.testing.assert_allclose(a.grad.numpy(), [5.0, 6.0])
    assert b.grad is None


def test_nothing_recorded_without_grad():
    x = tl.tensor([1.0, 2.0], requires_grad=True)
    with tl.no_grad():
        y = P3.apply(x)
    assert y.grad_fn is None and not y.requires_grad
    z = P3.apply(tl.tensor([1.0, 2.0]))
    assert z.grad_fn is None and not z.requires_grad


def test_forward_is_not_recorded_inside():
    x = tl.tensor([1.0, 2.0], requires_grad=True)
    y = P3.apply(x)
    assert [p is x for p in y.grad_fn.inputs] == [True], (
        "the node's inputs are apply's arguments, not forward's inner ops"
    )


def test_mark_non_differentiable():
    x = tl.tensor([1.0, 3.0, 2.0], requires_grad=True)
    mask = ARGMAX.apply(x)
    assert mask.tolist() == [0.0, 1.0, 0.0] and not mask.requires_grad and mask.grad_fn is None


def test_saved_tensor_changed_in_place_raises():
    x = tl.tensor([1.0, 2.0], requires_grad=True)
    y = P3.apply(x)
    with tl.no_grad():
        x.mul_(2.0)
    with pytest.raises(RuntimeError, match="modified by an inplace operation.*expected version 0"):
        y.sum().backward()


def test_forward_must_return_a_tensor():
    class Pair(tl.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x, x

        @staticmethod
        def backward(ctx, grad):
            return grad

    with pytest.raises(TypeError, match="Pair.forward must return a Tensor"):
        Pair.apply(tl.tensor([1.0], requires_grad=True))


def test_wrong_gradient_shape_is_caught_by_the_engine():
    class Bad(tl.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, grad):
            return grad.sum()

    x = tl.tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(RuntimeError, match="shape"):
        Bad.apply(x).sum().backward()


def test_the_engines_own_protocol_still_works():
    class Square(tl.Function):
        def forward(self, x):
            self.x = x
            return x * x

        def backward(self, grad):
            return 2 * self.x * grad

    x = tl.tensor([3.0], requires_grad=True)
    Square.apply(x).sum().backward()
    assert x.grad.tolist() == [6.0]


@pytest.mark.parity
def test_matches_torch_on_the_same_code():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(1)
    a_np, b_np = rng.normal(size=(2, 3)), rng.normal(size=(2, 3))
    results = {}
    for lib in (tl, torch):
        legendre, muladd, argmax = _ops(lib)
        a = lib.tensor(a_np, requires_grad=True)
        b = lib.tensor(b_np, requires_grad=True)
        y = (legendre.apply(a) * muladd.apply(a, b, 0.5)).sum()
        y.backward()
        mask = argmax.apply(a)
        results[lib.__name__] = (
            y.item(),
            a.grad.numpy().copy(),
            b.grad.numpy().copy(),
            mask.requires_grad,
        )
    ours, theirs = results["tensorlib"], results["torch"]
    assert ours[0] == pytest.approx(theirs[0], rel=1e-12)
    np.testing.assert_allclose(ours[1], theirs[1], rtol=1e-12)
    np.testing.assert_allclose(ours[2], theirs[2], rtol=1e-12)
    assert ours[3] == theirs[3] is False
