"""The activations of chapter 2, section 32.1 (leaky_relu, elu, selu, celu, softplus, hardtanh,
relu6, hardsigmoid, hardswish, mish, logsigmoid, softsign, tanhshrink, softshrink, hardshrink,
threshold, prelu, rrelu in evaluation, softmin, glu): values and gradients against PyTorch's,
kinks included, float32 and float64, and float64 gradchecks."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import tensorlib as tl

# every kink and edge of the functions below, and ordinary points
POINTS = np.array([-200.0, -25.0, -6.0, -3.0, -1.0, -0.5, -0.1, 0.0, 0.1, 0.5, 1.0, 3.0, 6.0,
                   7.5, 11.0, 25.0])

CASES = [
    ("leaky_relu", {}), ("leaky_relu", {"negative_slope": 0.2}), ("elu", {}),
    ("elu", {"alpha": 0.5}), ("selu", {}), ("celu", {"alpha": 2.0}), ("softplus", {}),
    ("softplus", {"beta": 2.0, "threshold": 5.0}), ("hardtanh", {}),
    ("hardtanh", {"min_val": -3.0, "max_val": 6.0}), ("relu6", {}), ("hardsigmoid", {}),
    ("hardswish", {}), ("mish", {}), ("logsigmoid", {}), ("softsign", {}), ("tanhshrink", {}),
    ("softshrink", {}), ("softshrink", {"lambd": 1.0}), ("hardshrink", {}),
    ("threshold", {"threshold": 0.5, "value": -2.0}), ("rrelu", {}),
]


@pytest.mark.parity
@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("name, kwargs", CASES, ids=[f"{n}{sorted(k.items())}" for n, k in CASES])
def test_values_and_gradients_match_pytorch(name, kwargs, dtype):
    torch = pytest.importorskip("torch")
    results = []
    for lib in (tl, torch):
        x = lib.tensor(POINTS, dtype=getattr(lib, dtype), requires_grad=True)
        y = getattr(lib.nn.functional, name)(x, **kwargs)
        y.backward(lib.tensor(np.linspace(0.5, 2.0, POINTS.size), dtype=getattr(lib, dtype)))
        results.append((y.detach().numpy(), x.grad.numpy()))
    tolerance = 1e-12 if dtype == "float64" else 2e-6
    if name == "hardsigmoid":  # PyTorch's float64 backward multiplies by 1/6 rounded to float32
        tolerance = 2e-6
    for ours, theirs in zip(*results, strict=True):
        assert ours.dtype == theirs.dtype
        np.testing.assert_allclose(ours, theirs, rtol=tolerance, atol=tolerance)


@pytest.mark.parity
def test_prelu_softmin_glu_match_pytorch():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(0)
    x0, w0 = rng.standard_normal((2, 3, 4)), rng.standard_normal(3)
    results = []
    for lib in (tl, torch):
        F = lib.nn.functional
        x = lib.tensor(x0, requires_grad=True)
        w = lib.tensor(w0, requires_grad=True)
        one = lib.tensor(np.array([0.25]), requires_grad=True)
        outs = [F.prelu(x, w), F.prelu(x, one), F.softmin(x, dim=1), F.glu(x, dim=-1)]
        sum((o * (k + 1)).sum() for k, o in enumerate(outs)).backward()
        results.append([o.detach().numpy() for o in outs] + [x.grad.numpy(), w.grad.numpy(),
                                                             one.grad.numpy()])
    for ours, theirs in zip(*results, strict=True):
        np.testing.assert_allclose(ours, theirs, rtol=1e-12, atol=1e-14)


def test_gradchecks():
    rng = np.random.default_rng(1)
    x = tl.tensor(rng.choice([-1.0, 1.0], 12) * rng.uniform(0.2, 2.5, 12), requires_grad=True)
    F = tl.nn.functional
    for f in (F.leaky_relu, F.elu, F.selu, F.celu, F.softplus, F.mish, F.logsigmoid,
              F.hardswish, F.softsign, F.tanhshrink, lambda a: F.softshrink(a, 0.1)):
        assert tl.autograd.gradcheck(f, (x,))


def test_errors_and_warnings():
    F = tl.nn.functional
    with pytest.raises(ValueError, match="max_val"):
        F.hardtanh(tl.ones(2), 1.0, -1.0)
    with pytest.raises(RuntimeError, match="even"):
        F.glu(tl.ones(3))
    with pytest.raises(ValueError, match="channels"):
        F.prelu(tl.ones(2, 3), tl.ones(2))
    with pytest.raises(NotImplementedError, match="rrelu"):
        F.rrelu(tl.ones(2), training=True)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        F.softmin(tl.ones(2, 3))
    assert any("Implicit dimension" in str(w.message) for w in caught)
    assert F.logsigmoid(tl.tensor([-200.0])).item() == -200.0


@pytest.mark.parity
@pytest.mark.parametrize("shape, weight", [((), (1,)), ((), ()), ((3,), (1,)), ((2, 3), (3,))])
def test_prelu_keeps_the_input_shape_as_pytorch(shape, weight):
    torch = pytest.importorskip("torch")
    values = np.linspace(-2.0, 1.0, int(np.prod(shape))).reshape(shape)
    results = []
    for lib in (tl, torch):
        x = lib.tensor(values, requires_grad=True)
        w = lib.tensor(np.full(weight, 0.25), requires_grad=True)
        out = lib.nn.functional.prelu(x, w)
        (out * 2).sum().backward()
        results.append((out.detach().numpy(), x.grad.numpy(), w.grad.numpy()))
    for ours, theirs in zip(*results, strict=True):
        assert ours.shape == theirs.shape
        np.testing.assert_allclose(ours, theirs, rtol=1e-12)
