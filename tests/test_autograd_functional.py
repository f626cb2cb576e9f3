"""Chapter 2, section 24.2: ``tensorlib.autograd.functional`` (``jacobian``, ``vjp``, ``jvp``)
against ``torch.autograd.functional``: values and layouts for tensor and tuple inputs and outputs,
strict mode, errors, and the second-order functions' refusal."""

from __future__ import annotations

import numpy as np
import pytest

import tensorlib as tl

RNG = np.random.default_rng(3)
X, Y = RNG.standard_normal(3), RNG.standard_normal((2, 3))

FUNCTIONS = {
    "one-one": (lambda L: lambda x: x.tanh() * x.sum(), "x"),
    "one-scalar": (lambda L: lambda x: (x.exp() * x).sum(), "x"),
    "tuple-in": (lambda L: lambda x, y: y @ x.sin(), "xy"),
    "tuple-out": (lambda L: lambda x: (x * 2, x.square().sum(), x.reshape(3, 1) * x), "x"),
    "tuple-both": (lambda L: lambda x, y: (y.exp() * x, (x * y).sum(1), x.cos()), "xy"),
    "unused-input": (lambda L: lambda x, y: x * 3, "xy"),
    "zero-d": (lambda L: lambda x: x.sum() * x.sum(), "x"),
}


def _inputs(lib, which):
    values = {"x": lib.tensor(X), "y": lib.tensor(Y)}
    items = tuple(values[k] for k in which)
    return items[0] if len(items) == 1 else items


def _flat(result):
    if isinstance(result, tuple):
        return [t for r in result for t in _flat(r)]
    return [result]


def _same(ours, theirs):
    assert type(ours) is tuple or not isinstance(theirs, tuple)
    a, b = _flat(ours), _flat(theirs)
    assert len(a) == len(b)
    for u, v in zip(a, b, strict=True):
        assert tuple(u.shape) == tuple(v.shape)
        np.testing.assert_allclose(u.numpy(), v.detach().numpy(), rtol=1e-10, atol=1e-12)


@pytest.mark.parity
@pytest.mark.parametrize("name", list(FUNCTIONS))
def test_jacobian_vjp_jvp_match_pytorch(name):
    torch = pytest.importorskip("torch")
    from torch.autograd import functional as TF

    make, which = FUNCTIONS[name]
    F = tl.autograd.functional
    _same(F.jacobian(make(tl), _inputs(tl, which)), TF.jacobian(make(torch), _inputs(torch, which)))
    outs = make(tl)(*(_inputs(tl, which) if len(which) > 1 else (_inputs(tl, which),)))
    outs = outs if isinstance(outs, tuple) else (outs,)
    vs = tuple(np.random.default_rng(5).standard_normal(tuple(o.shape)) for o in outs)
    us = tuple(np.random.default_rng(6).standard_normal(np.shape({"x": X, "y": Y}[k]))
               for k in which)

    def pack(lib, arrays):
        tensors = tuple(lib.tensor(a) for a in arrays)
        return tensors if len(tensors) > 1 else tensors[0]

    ours = F.vjp(make(tl), _inputs(tl, which), pack(tl, vs))
    theirs = TF.vjp(make(torch), _inputs(torch, which), pack(torch, vs))
    _same(ours[0], theirs[0])
    _same(ours[1], theirs[1])
    ours = F.jvp(make(tl), _inputs(tl, which), pack(tl, us))
    theirs = TF.jvp(make(torch), _inputs(torch, which), pack(torch, us))
    _same(ours[0], theirs[0])
    _same(ours[1], theirs[1])


def test_inputs_are_left_alone_and_v_may_be_left_out():
    F = tl.autograd.functional
    x = tl.tensor(X, requires_grad=True)
    J = F.jacobian(lambda t: t * t, x)
    assert x.grad is None and x.grad_fn is None
    np.testing.assert_allclose(J.numpy(), np.diag(2 * X))
    out, product = F.vjp(lambda t: (t * t).sum(), x)
    assert not out.requires_grad and np.allclose(product.numpy(), 2 * X)
    out, product = F.jvp(lambda t: t * 3, tl.tensor([2.0]))
    assert product.tolist() == [3.0]
    assert F.jacobian(lambda t: t * 2, tl.tensor([1, 2])).tolist() == [[0, 0], [0, 0]]


def test_errors_are_pytorchs():
    F = tl.autograd.functional
    x = tl.tensor(X)
    with pytest.raises(RuntimeError, match="v can only be None"):
        F.vjp(lambda t: t * 2, x)
    with pytest.raises(RuntimeError, match="v can only be None"):
        F.jvp(lambda t: t * 2, x)
    with pytest.raises(RuntimeError, match="invalid size"):
        F.vjp(lambda t: t * 2, x, tl.ones(4))
    with pytest.raises(RuntimeError, match="independent of input 1"):
        F.jacobian(lambda a, b: a * 2, (x, x), strict=True)
    with pytest.raises(TypeError, match="outputs of the user-provided function"):
        F.jacobian(lambda t: 3, x)
    with pytest.raises(TypeError, match="inputs given to jacobian"):
        F.jacobian(lambda t: t, [1.0])
    with pytest.raises(ValueError, match="strategy"):
        F.jacobian(lambda t: t, x, strategy="sideways")
    with pytest.raises(NotImplementedError, match="reverse mode only"):
        F.jacobian(lambda t: t, x, strategy="forward-mode")
    with pytest.raises(NotImplementedError, match="without a graph"):
        F.jacobian(lambda t: t, x, create_graph=True)
    for second in (F.hessian, F.hvp, F.vhp):  # second order runs; an op without it is refused
        with pytest.raises(NotImplementedError, match="the backward of SvdVals"):
            second(lambda t: (tl.linalg.svdvals(t.reshape(1, -1)) * t).sum(), x) if (
                second is F.hessian) else second(
                lambda t: (tl.linalg.svdvals(t.reshape(1, -1)) * t).sum(), x, tl.ones_like(x))
