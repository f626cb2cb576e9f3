"""Chapter 2, sections 24.1 and 28.1: ``autograd.gradgradcheck`` (its verdict against
``torch.autograd.gradgradcheck`` on many ops, ``grad_outputs`` given or drawn, its messages and
flags), a custom ``autograd.Function``'s backward differentiated under ``create_graph=True``
(second derivatives against PyTorch's) and ``autograd.once_differentiable``."""

from __future__ import annotations

import sys
import warnings

import numpy as np
import pytest

import tensorlib as tl
import tensorlib.nn.functional as F
from tensorlib.autograd import GradcheckError, gradgradcheck, once_differentiable

RNG = np.random.default_rng(0)


def _array(shape, positive=False):
    values = RNG.standard_normal(shape)
    return np.abs(values) + 0.5 if positive else values


# name -> (op on (library, functional module, *inputs), input shapes, positive inputs)
OPS = {
    "mul": (lambda L, G, a, b: a * b * a, [(2, 3), (3,)], False),
    "div": (lambda L, G, a, b: a / b, [(2, 2), (2,)], True),
    "pow": (lambda L, G, a: a ** 3, [(4,)], False),
    "pow-tensor": (lambda L, G, a, b: a ** b, [(3,), (3,)], True),
    "exp": (lambda L, G, a: a.exp(), [(4,)], False),
    "log": (lambda L, G, a: a.log(), [(4,)], True),
    "sqrt": (lambda L, G, a: a.sqrt(), [(4,)], True),
    "sin-cos": (lambda L, G, a: a.sin() * a.cos(), [(4,)], False),
    "tanh": (lambda L, G, a: a.tanh(), [(2, 2)], False),
    "sigmoid": (lambda L, G, a: a.sigmoid(), [(4,)], False),
    "erf": (lambda L, G, a: a.erf(), [(3,)], False),
    "sum-dim": (lambda L, G, a: a.sum(1) ** 2, [(2, 3)], False),
    "mean": (lambda L, G, a: a * a.mean(), [(2, 2)], False),
    "cumsum": (lambda L, G, a: a.cumsum(0) ** 2, [(4,)], False),
    "matmul": (lambda L, G, a, b: (a @ b).tanh(), [(2, 3), (3, 2)], False),
    "reshape-permute": (lambda L, G, a: a.reshape(2, 1, 2).permute(2, 0, 1) ** 2, [(4,)], False),
    "expand": (lambda L, G, a: a.expand(2, 3) ** 3, [(1, 3)], False),
    "getitem": (lambda L, G, a: a[1:, 0] ** 3 + a[[0, 0]].sum(), [(3, 2)], False),
    "cat-stack": (lambda L, G, a, b: L.cat([L.stack([a * a, b.sin() + a]).reshape(4), a * b]),
                  [(2,), (2,)], False),
    "softmax": (lambda L, G, a: a.softmax(-1), [(2, 3)], False),
    "log_softmax": (lambda L, G, a: G.log_softmax(a * a, dim=0), [(3,)], False),
    "gelu": (lambda L, G, a: G.gelu(a), [(4,)], False),
    "silu": (lambda L, G, a: G.silu(a), [(4,)], False),
    "softplus": (lambda L, G, a: G.softplus(a, beta=2.0), [(4,)], False),
    "linear": (lambda L, G, x, w, b: G.linear(x, w, b).tanh(), [(2, 3), (2, 3), (2,)], False),
    "cross_entropy": (lambda L, G, a: G.cross_entropy(a, L.tensor([0, 2])), [(2, 3)], False),
    "two-outputs": (lambda L, G, a, b: (a * b, (a.exp() * b).sum()), [(3,), (3,)], False),
}


def _cotangents(lib, op, inputs):
    """grad_outputs for both libraries: the same values, requiring grad."""
    outputs = op(lib, lib.nn.functional, *inputs)
    outputs = outputs if isinstance(outputs, tuple) else (outputs,)
    return tuple(
        lib.tensor(np.cos(np.arange(y.numel()) + 1.0).reshape(tuple(y.shape)), requires_grad=True)
        for y in outputs
    )


def _verdict(lib, name, arrays):
    op = OPS[name][0]
    inputs = [lib.tensor(a, requires_grad=True) for a in arrays]
    cotangents = _cotangents(lib, op, inputs)
    return lib.autograd.gradgradcheck(
        lambda *xs: op(lib, lib.nn.functional, *xs), inputs, cotangents, raise_exception=False
    )


@pytest.mark.parity
@pytest.mark.parametrize("name", list(OPS))
def test_gradgradcheck_verdict_matches_pytorch(name):
    torch = pytest.importorskip("torch")
    _, shapes, positive = OPS[name]
    arrays = [_array(shape, positive) for shape in shapes]
    assert _verdict(tl, name, arrays) is True
    assert _verdict(torch, name, arrays) is True


@pytest.mark.parametrize("name", ["mul", "matmul", "softmax", "two-outputs", "linear"])
def test_gradgradcheck_draws_grad_outputs_when_none(name):
    op, shapes, positive = OPS[name]
    tl.manual_seed(0)
    inputs = [tl.tensor(_array(shape, positive), requires_grad=True) for shape in shapes]
    assert gradgradcheck(lambda *xs: op(tl, F, *xs), inputs)


def test_grad_outputs_are_drawn_uniformly_in_minus_one_one_from_the_default_generator():
    x = tl.tensor(_array((50,)), requires_grad=True)
    seen = []

    def f(t):
        return t * t

    def spy(outputs, inputs, grad_outputs, **kwargs):
        seen.append(grad_outputs)
        return real(outputs, inputs, grad_outputs, **kwargs)

    real = tl.autograd.grad
    # the module gradgradcheck lives in (the package's name gradcheck is the function, as torch's)
    checks = sys.modules["tensorlib.autograd.gradcheck"]
    tl.manual_seed(3)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(checks, "grad", spy)
        assert gradgradcheck(f, (x,))
    v = seen[0][0]
    assert v.requires_grad and v.dtype == tl.float64 and tuple(v.shape) == (50,)
    values = v.detach().numpy()
    assert values.min() >= -1.0 and values.max() < 1.0 and values.std() > 0.3
    tl.manual_seed(3)
    expected = tl.empty(50, dtype=tl.float64).uniform_(-1.0, 1.0).numpy()
    np.testing.assert_array_equal(values, expected)


class _WrongExp(tl.autograd.Function):
    """Right backward, wrong backward_graph: e^x read as a constant."""

    def forward(self, x):
        self.out = np.exp(x)
        return self.out

    def backward(self, grad):
        return grad * self.out

    def backward_graph(self, grad):
        return grad * tl.tensor(self.out)


def test_gradgradcheck_fails_on_a_wrong_backward_graph_with_and_without_raising():
    x = tl.tensor([0.5, -1.0, 2.0], dtype=tl.float64, requires_grad=True)
    assert tl.autograd.gradcheck(_WrongExp.apply, (x,))
    assert gradgradcheck(_WrongExp.apply, (x,), raise_exception=False) is False
    with pytest.raises(GradcheckError, match=r"Jacobian mismatch for output 0 with respect to "
                                             r"input 0: worst at input element"):
        gradgradcheck(_WrongExp.apply, (x,))
    v = tl.tensor([1.0, 1.0, 1.0], dtype=tl.float64, requires_grad=True)
    assert gradgradcheck(_WrongExp.apply, (x,), (v,), raise_exception=False) is False


def test_gradgradcheck_refuses_an_op_without_a_recorded_backward_by_name():
    x = tl.tensor([0.5, -1.0, 2.0], dtype=tl.float64, requires_grad=True)
    with pytest.raises(NotImplementedError, match="backward of SvdVals is not differentiable"):
        gradgradcheck(lambda t: tl.linalg.svdvals(t.reshape(1, -1)), (x,))


@pytest.mark.parametrize("flag", ["gen_non_contig_grad_outputs", "check_grad_dtypes",
                                  "check_batched_grad", "check_fwd_over_rev", "fast_mode",
                                  "masked"])
def test_unsupported_flags_are_refused_by_name(flag):
    x = tl.tensor([0.5, 2.0], dtype=tl.float64, requires_grad=True)
    with pytest.raises(NotImplementedError, match=f"gradgradcheck: {flag}=True is not supported"):
        gradgradcheck(lambda t: t ** 3, (x,), **{flag: True})


def test_accepted_flags_and_pytorch_consistency_checks():
    x = tl.tensor([0.5, 2.0], dtype=tl.float64, requires_grad=True)
    assert gradgradcheck(lambda t: t ** 3, (x,), nondet_tol=1e-3, check_undefined_grad=False,
                         eps=1e-6, atol=1e-5, rtol=1e-3)
    with pytest.raises(AssertionError, match="at least one of check_fwd_over_rev or "
                                             "check_rev_over_rev to be True"):
        gradgradcheck(lambda t: t ** 3, (x,), check_rev_over_rev=False)
    with pytest.raises(AssertionError, match=r"Setting check_undefined_grad=True requires "
                                             r"check_rev_over_rev to be True"):
        gradgradcheck(lambda t: t ** 3, (x,), check_rev_over_rev=False, check_fwd_over_rev=True)


def test_gradgradcheck_is_exported_where_pytorch_has_it():
    assert tl.autograd.gradgradcheck is gradgradcheck
    assert "gradgradcheck" in tl.autograd.__all__ and "once_differentiable" in tl.autograd.__all__
    assert not hasattr(tl, "gradgradcheck")
    assert not hasattr(tl.testing, "gradgradcheck")


# custom Functions, written once for both libraries
def _custom_ops(lib):
    class Cube(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x ** 3

        @staticmethod
        def backward(ctx, grad):
            (x,) = ctx.saved_tensors
            return grad * 3 * x ** 2

    class ExpSavingOutput(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            out = x.exp()
            ctx.save_for_backward(out)
            return out

        @staticmethod
        def backward(ctx, grad):
            (out,) = ctx.saved_tensors
            return grad * out

    class MulSinScaled(lib.autograd.Function):  # two tensors and a number
        @staticmethod
        def forward(ctx, x, y, scale):
            ctx.save_for_backward(x, y)
            ctx.scale = scale
            return scale * x * y.sin()

        @staticmethod
        def backward(ctx, grad):
            x, y = ctx.saved_tensors
            return grad * ctx.scale * y.sin(), grad * ctx.scale * x * y.cos(), None

    class CubeOnce(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x ** 3

        @staticmethod
        @once_differentiable if lib is tl else _torch_once()
        def backward(ctx, grad):
            (x,) = ctx.saved_tensors
            return grad * 3 * x ** 2

    return Cube, ExpSavingOutput, MulSinScaled, CubeOnce


def _torch_once():
    from torch.autograd.function import once_differentiable as torch_once

    return torch_once


def _custom_second_derivatives(lib, arrays):
    Cube, ExpSavingOutput, MulSinScaled, _ = _custom_ops(lib)
    x, y = (lib.tensor(a, requires_grad=True) for a in arrays)
    u = lib.tensor(np.cos(np.arange(3.0)))
    out = Cube.apply(x) * ExpSavingOutput.apply(y) + MulSinScaled.apply(x, y, 1.5)
    firsts = lib.autograd.grad(out, (x, y), u, create_graph=True)
    total = (firsts[0] * firsts[1]).sum() + (firsts[0] ** 2).sum()
    seconds = lib.autograd.grad(total, (x, y))
    return [g.detach().numpy() for g in (*firsts, *seconds)]


@pytest.mark.parity
def test_custom_function_double_backward_matches_pytorch():
    torch = pytest.importorskip("torch")
    arrays = [_array((3,)), _array((3,))]
    ours = _custom_second_derivatives(tl, arrays)
    theirs = _custom_second_derivatives(torch, arrays)
    for a, b in zip(ours, theirs, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)


def test_custom_function_second_derivative_and_gradgradcheck():
    Cube, ExpSavingOutput, MulSinScaled, _ = _custom_ops(tl)
    x = tl.tensor([-1.0, 0.5, 2.0], dtype=tl.float64, requires_grad=True)
    (g,) = tl.autograd.grad(Cube.apply(x).sum(), x, create_graph=True)
    (h,) = tl.autograd.grad(g.sum(), x)
    np.testing.assert_allclose(h.numpy(), 6 * x.detach().numpy())
    y = tl.tensor([0.3, -0.7, 1.1], dtype=tl.float64, requires_grad=True)
    assert gradgradcheck(Cube.apply, (x,))
    assert gradgradcheck(ExpSavingOutput.apply, (x,))
    assert gradgradcheck(lambda a, b: MulSinScaled.apply(a, b, 2.0), (x, y))
    hessian = tl.autograd.functional.hessian(lambda t: Cube.apply(t).sum(), x)
    np.testing.assert_allclose(hessian.numpy(), np.diag(6 * x.detach().numpy()))


@pytest.mark.parity
def test_a_detached_custom_backward_fails_gradgradcheck_in_both():
    torch = pytest.importorskip("torch")
    verdicts = []
    for lib in (tl, torch):
        class CubeDetached(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_backward(x)
                return x ** 3

            @staticmethod
            def backward(ctx, grad):
                (x,) = ctx.saved_tensors
                return grad * 3 * x.detach() ** 2

        x = lib.tensor([-1.0, 0.5, 2.0], dtype=lib.float64, requires_grad=True)
        assert lib.autograd.gradcheck(CubeDetached.apply, (x,))
        verdicts.append(
            lib.autograd.gradgradcheck(CubeDetached.apply, (x,), raise_exception=False)
        )
    assert verdicts == [False, False]


def test_a_saved_output_changed_in_place_is_caught():
    _, ExpSavingOutput, _, _ = _custom_ops(tl)
    x = tl.tensor([0.5, 1.0], dtype=tl.float64, requires_grad=True)
    y = ExpSavingOutput.apply(x)
    with tl.no_grad():
        y.mul_(2.0)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.sum().backward()


@pytest.mark.parity
def test_once_differentiable_matches_pytorch():
    torch = pytest.importorskip("torch")
    messages, firsts = [], []
    for lib in (tl, torch):
        *_, CubeOnce = _custom_ops(lib)
        x = lib.tensor([-1.0, 0.5, 2.0], dtype=lib.float64, requires_grad=True)
        (plain,) = lib.autograd.grad(CubeOnce.apply(x).sum(), x, create_graph=True)
        assert plain.grad_fn is None and not plain.requires_grad  # the seed needs no grad
        v = lib.ones(3, dtype=lib.float64, requires_grad=True)
        (g,) = lib.autograd.grad(CubeOnce.apply(x), x, v, create_graph=True)
        assert g.requires_grad
        firsts.append(g.detach().numpy())
        with pytest.raises(RuntimeError) as caught:
            g.sum().backward()
        messages.append(str(caught.value))
        assert lib.autograd.gradgradcheck(CubeOnce.apply, (x,), raise_exception=False) is False
    np.testing.assert_allclose(firsts[0], firsts[1])
    assert messages[0] == messages[1] == (
        "trying to differentiate twice a function that was marked with @once_differentiable"
    )


def test_once_differentiable_in_gradgradcheck_raises_gradcheck_error():
    *_, CubeOnce = _custom_ops(tl)
    x = tl.tensor([-1.0, 0.5], dtype=tl.float64, requires_grad=True)
    assert tl.autograd.gradcheck(CubeOnce.apply, (x,))
    with pytest.raises(GradcheckError, match="marked with @once_differentiable"):
        gradgradcheck(CubeOnce.apply, (x,))


class _CubeReturningAnArray(tl.autograd.Function):
    """A custom op whose backward leaves tensorlib for numpy: no graph to record."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x * x

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return (3 * grad * x * x).numpy()


class _CubeOnceReturningAnArray(tl.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x * x

    @staticmethod
    @tl.autograd.once_differentiable
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return (3 * grad * x * x).numpy()


def test_a_custom_backward_returning_an_array_is_refused_under_create_graph():
    # its second derivative would be silently missing: refused by name instead
    x = tl.tensor([1.0, 2.0], dtype=tl.float64, requires_grad=True)
    (first,) = tl.autograd.grad(_CubeReturningAnArray.apply(x).sum(), x)
    np.testing.assert_array_equal(first.numpy(), [3.0, 12.0])
    refused = "_CubeReturningAnArray.backward returned 'ndarray', not a Tensor"
    with pytest.raises(RuntimeError, match=refused):
        tl.autograd.grad(_CubeReturningAnArray.apply(x).sum(), x, create_graph=True)


def test_once_differentiable_accepts_an_array_under_create_graph():
    x = tl.tensor([1.0, 2.0], dtype=tl.float64, requires_grad=True)
    # a seed that does not require grad: a constant gradient, as PyTorch's (requires_grad False)
    (g,) = tl.autograd.grad(_CubeOnceReturningAnArray.apply(x).sum(), x, create_graph=True)
    np.testing.assert_array_equal(g.numpy(), [3.0, 12.0])
    assert not g.requires_grad
    # a gradient that requires grad flows in: differentiating the result raises
    v = tl.tensor([1.0, 1.0], dtype=tl.float64, requires_grad=True)
    (g,) = tl.autograd.grad(_CubeOnceReturningAnArray.apply(x), x, v, create_graph=True)
    np.testing.assert_array_equal(g.numpy(), [3.0, 12.0])
    with pytest.raises(RuntimeError, match="marked with @once_differentiable"):
        g.sum().backward()


# autograd.grad(create_graph=True) returned a detached copy of a grad_outputs tensor that requires
# grad when the backward passed it through unchanged (x + c): the second derivative was lost
def test_grad_passes_a_grad_output_that_requires_grad_through_as_pytorch():
    x = tl.tensor([1.0, 2.0], dtype=tl.float64, requires_grad=True)
    v = tl.tensor([3.0, 4.0], dtype=tl.float64, requires_grad=True)
    (g,) = tl.autograd.grad(x + 0.5, x, v, create_graph=True)
    assert g is v and g.requires_grad  # torch returns v itself
    assert tl.autograd.gradgradcheck(lambda p: p + 0.5, (x,))
    assert tl.autograd.gradgradcheck(lambda p: p % 0.7, (x,))


@pytest.mark.parity
def test_grad_of_a_pass_through_with_create_graph_matches_pytorch():
    torch = pytest.importorskip("torch")
    for lib in (tl, torch):
        x = lib.tensor([1.0, 2.0], dtype=lib.float64, requires_grad=True)
        v = lib.tensor([3.0, 4.0], dtype=lib.float64, requires_grad=True)
        (g,) = lib.autograd.grad(x - 2.0, x, v, create_graph=True)
        (h,) = lib.autograd.grad((g * g).sum(), v)
        assert g.requires_grad and h.tolist() == [6.0, 8.0]


@pytest.mark.parity
def test_backward_create_graph_keeps_a_passed_through_gradient_in_the_graph():
    torch = pytest.importorskip("torch")
    for lib in (tl, torch):
        x = lib.tensor([1.0, 2.0], dtype=lib.float64, requires_grad=True)
        v = lib.tensor([3.0, 4.0], dtype=lib.float64, requires_grad=True)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # torch warns of the reference cycle
            (x + 0.5).backward(v, create_graph=True)
        assert x.grad.requires_grad and x.grad is not v  # a copy in the graph, not detached
        (x.grad * x.grad).sum().backward()
        assert v.grad.tolist() == [6.0, 8.0]
