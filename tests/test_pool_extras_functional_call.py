"""Chapter 4: ``divisor_override`` of the 2-D and 3-D average poolings (section 10),
``adaptive_max_pool3d`` and ``AdaptiveMaxPool3d`` (section 10.3), and
``nn.utils.stateless.functional_call`` (section 11.1): values and gradients against PyTorch's,
float64 gradchecks, errors."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import tensorlib as tl
from tensorlib.nn.utils.stateless import functional_call

RNG = np.random.default_rng(0)
F = tl.nn.functional


def _run(lib, fn, x_np, seed=1):
    """``fn(lib, x)`` on a float64 leaf; the output and x's gradient for random weights."""
    x = lib.tensor(x_np, requires_grad=True)
    out = fn(lib, x)
    first = out[0] if isinstance(out, tuple) else out
    weights = np.random.default_rng(seed).standard_normal(tuple(first.shape))
    (first * lib.tensor(weights)).sum().backward()
    extra = out[1].numpy() if isinstance(out, tuple) else None
    return first.detach().numpy(), x.grad.numpy(), extra


def _compare(fn, x_np):
    torch = pytest.importorskip("torch")
    ours, our_grad, our_extra = _run(tl, fn, x_np)
    theirs, their_grad, their_extra = _run(torch, fn, x_np)
    assert ours.shape == theirs.shape
    np.testing.assert_allclose(ours, theirs, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(our_grad, their_grad, rtol=1e-10, atol=1e-12)
    if their_extra is not None:
        assert our_extra.dtype == np.int64
        np.testing.assert_array_equal(our_extra, their_extra)


# ---- divisor_override ---------------------------------------------------------------------

AVG_2D = [  # (shape, kernel, stride, padding, ceil_mode, count_include_pad, divisor_override)
    ((2, 3, 7, 6), 3, 2, 1, False, True, 5),
    ((2, 3, 7, 6), 3, 2, 1, True, False, 4),
    ((1, 2, 5, 5), (2, 3), (1, 2), (1, 0), True, True, 1),
    ((2, 2, 6, 4), 2, None, 0, False, True, -3),
    ((3, 6, 5), 2, 1, 1, False, False, 7),  # unbatched
]
AVG_3D = [
    ((2, 2, 5, 4, 5), 3, 2, 1, False, True, 5),
    ((1, 3, 4, 5, 6), (2, 3, 2), 2, 1, True, False, 2),
    ((2, 4, 4, 3), 2, 1, 0, False, True, 9),  # unbatched
]


@pytest.mark.parity
@pytest.mark.parametrize("config", AVG_2D)
def test_avg_pool2d_divisor_override_matches_pytorch(config):
    shape, *args = config
    _compare(lambda L, x: L.nn.functional.avg_pool2d(x, *args), RNG.standard_normal(shape))
    # the module, keywords, PyTorch's argument names
    k, s, p, ceil, include, divisor = args
    _compare(lambda L, x: L.nn.AvgPool2d(k, s, p, ceil_mode=ceil, count_include_pad=include,
                                         divisor_override=divisor)(x),
             RNG.standard_normal(shape))


@pytest.mark.parity
@pytest.mark.parametrize("config", AVG_3D)
def test_avg_pool3d_divisor_override_matches_pytorch(config):
    shape, *args = config
    _compare(lambda L, x: L.nn.functional.avg_pool3d(x, *args), RNG.standard_normal(shape))
    _compare(lambda L, x: L.nn.AvgPool3d(*args)(x), RNG.standard_normal(shape))


def test_divisor_override_is_the_window_sum_over_the_divisor():
    x_np = RNG.standard_normal((2, 3, 6, 4))
    sums = x_np.reshape(2, 3, 3, 2, 2, 2).sum(axis=(3, 5))
    ours = F.avg_pool2d(tl.tensor(x_np), 2, divisor_override=3).numpy()
    np.testing.assert_allclose(ours, sums / 3, rtol=1e-13)
    # the default is unchanged: the window mean
    np.testing.assert_allclose(F.avg_pool2d(tl.tensor(x_np), 2).numpy(), sums / 4, rtol=1e-13)


def test_divisor_override_gradchecks():
    x = tl.tensor(RNG.standard_normal((2, 2, 5, 6)), requires_grad=True)
    assert tl.autograd.gradcheck(
        lambda t: F.avg_pool2d(t, 3, 2, 1, True, False, divisor_override=4), (x,))
    v = tl.tensor(RNG.standard_normal((1, 2, 4, 5, 3)), requires_grad=True)
    assert tl.autograd.gradcheck(lambda t: F.avg_pool3d(t, 2, 1, 1, divisor_override=-2), (v,))


@pytest.mark.parity
def test_avg_pool_modules_print_and_keep_divisor_override_as_pytorch():
    torch = pytest.importorskip("torch")
    for name, args in [("AvgPool2d", (3, 2, 1)), ("AvgPool3d", ((1, 2, 2), None, 0))]:
        ours = getattr(tl.nn, name)(*args, divisor_override=3)
        theirs = getattr(torch.nn, name)(*args, divisor_override=3)
        assert repr(ours) == repr(theirs)
        assert ours.divisor_override == theirs.divisor_override == 3
        assert getattr(tl.nn, name)(2).divisor_override is None


@pytest.mark.parity
@pytest.mark.parametrize("bad", [0, 2.0, True])
def test_divisor_override_errors_match_pytorch(bad):
    torch = pytest.importorskip("torch")
    for dims in (2, 3):
        shape = (1, 1) + (4,) * dims
        name = f"avg_pool{dims}d"
        with pytest.raises(Exception) as theirs:
            getattr(torch.nn.functional, name)(torch.zeros(shape), 2, divisor_override=bad)
        with pytest.raises(type(theirs.value)) as ours:
            getattr(F, name)(tl.zeros(shape), 2, divisor_override=bad)
        if bad == 0:
            assert str(ours.value) == str(theirs.value) == "divisor must be not zero"
        else:
            assert "divisor_override" in str(ours.value) and "must be int" in str(ours.value)
    layer = tl.nn.AvgPool2d(2, divisor_override=0)  # accepted, refused when called, as PyTorch
    with pytest.raises(RuntimeError, match="divisor must be not zero"):
        layer(tl.zeros(1, 1, 4, 4))


# ---- adaptive_max_pool3d ---------------------------------------------------------------------

ADAPTIVE_3D = [  # (shape, output_size)
    ((2, 3, 5, 7, 4), (2, 3, None)),
    ((2, 3, 5, 7, 4), 2),
    ((1, 2, 4, 4, 4), (4, 4, 4)),
    ((2, 2, 3, 5, 6), (3, 4, 4)),  # overlapping windows on two axes
    ((3, 6, 5, 4), (4, None, 3)),  # unbatched
]


@pytest.mark.parity
@pytest.mark.parametrize("shape,output_size", ADAPTIVE_3D)
def test_adaptive_max_pool3d_matches_pytorch(shape, output_size):
    x_np = RNG.standard_normal(shape)
    _compare(lambda L, x: L.nn.functional.adaptive_max_pool3d(x, output_size), x_np)
    _compare(lambda L, x: L.nn.functional.adaptive_max_pool3d(x, output_size, True), x_np)
    _compare(lambda L, x: L.nn.functional.adaptive_max_pool3d_with_indices(x, output_size), x_np)
    _compare(lambda L, x: L.nn.AdaptiveMaxPool3d(output_size, return_indices=True)(x), x_np)


@pytest.mark.parity
def test_adaptive_max_pool3d_ties_and_unpooling_match_pytorch():
    torch = pytest.importorskip("torch")
    x_np = RNG.integers(0, 3, size=(2, 2, 5, 6, 4)).astype(np.float64)  # many ties
    _compare(lambda L, x: L.nn.functional.adaptive_max_pool3d(x, (2, 3, 3), True), x_np)
    ours, where = F.adaptive_max_pool3d(tl.tensor(x_np), (2, 3, 2), True)
    theirs, their_where = torch.nn.functional.adaptive_max_pool3d(
        torch.tensor(x_np), (2, 3, 2), True)
    unpooled = F.max_unpool3d(ours, where, (3, 2, 2), output_size=(5, 6, 4))
    expected = torch.nn.functional.max_unpool3d(theirs, their_where, (3, 2, 2),
                                                output_size=(5, 6, 4))
    np.testing.assert_array_equal(unpooled.numpy(), expected.numpy())


@pytest.mark.parity
def test_adaptive_max_pool3d_module_prints_as_pytorch():
    torch = pytest.importorskip("torch")
    for args in [((2, None, 3),), (2, True), ((1, 1, 1),)]:
        assert repr(tl.nn.AdaptiveMaxPool3d(*args)) == repr(torch.nn.AdaptiveMaxPool3d(*args))


def test_adaptive_max_pool3d_gradcheck_and_grad_fn():
    x = tl.tensor(RNG.standard_normal((2, 2, 5, 4, 5)), requires_grad=True)
    assert tl.autograd.gradcheck(lambda t: F.adaptive_max_pool3d(t, (3, 3, 2)), (x,))
    assert F.adaptive_max_pool3d(x, 2).grad_fn.name() == "AdaptiveMaxPool3dBackward"
    assert F.adaptive_max_pool2d(x[0], 2).grad_fn.name() == "AdaptiveMaxPool2dBackward"


def test_adaptive_max_pool3d_errors():
    with pytest.raises(ValueError, match="expected a 4-D or 5-D input"):
        F.adaptive_max_pool3d(tl.zeros(2, 3, 4), 2)
    with pytest.raises(ValueError, match="output_size must have 3 entries"):
        F.adaptive_max_pool3d(tl.zeros(1, 1, 4, 4, 4), (2, 2))
    with pytest.raises(TypeError, match="int64"):
        F.adaptive_max_pool3d(tl.zeros(1, 1, 4, 4, 4, dtype=tl.int64), 2)


# ---- functional_call -------------------------------------------------------------------------


def _model(lib):
    """The same small network in either library; its tensors come from ``_values``."""
    return lib.nn.Sequential(lib.nn.Linear(3, 4), lib.nn.BatchNorm1d(4), lib.nn.Tanh(),
                             lib.nn.Linear(4, 2))


def _values(lib, requires_grad=True):
    rng = np.random.default_rng(5)
    shapes = {"0.weight": (4, 3), "0.bias": (4,), "1.weight": (4,), "1.bias": (4,),
              "3.weight": (2, 4), "3.bias": (2,)}
    values = {name: lib.tensor(rng.standard_normal(shape), requires_grad=requires_grad)
              for name, shape in shapes.items()}
    values["1.running_mean"] = lib.tensor(rng.standard_normal(4))
    values["1.running_var"] = lib.tensor(rng.random(4) + 0.5)
    values["1.num_batches_tracked"] = lib.tensor(3)
    return values


@pytest.mark.parity
@pytest.mark.parametrize("training", [True, False])
@pytest.mark.parametrize("batch", [2, 5])
def test_functional_call_matches_pytorch(training, batch):
    torch = pytest.importorskip("torch")
    x_np = np.random.default_rng(batch).standard_normal((batch, 3))
    results = []
    for lib, call in ((tl, functional_call), (torch, torch.func.functional_call)):
        model = _model(lib).double().train(training)
        own = {**dict(model.named_parameters()), **dict(model.named_buffers())}
        values = _values(lib)
        out = call(model, values, lib.tensor(x_np), strict=True)
        weights = np.random.default_rng(7).standard_normal(tuple(out.shape))
        (out * lib.tensor(weights)).sum().backward()
        now = {**dict(model.named_parameters()), **dict(model.named_buffers())}
        assert all(now[name] is own[name] for name in own)  # restored
        assert all(p.grad is None for p in model.parameters())  # the module's own got none
        results.append((out.detach().numpy(), {n: v.grad.numpy() for n, v in values.items()
                                               if v.grad is not None},
                        values["1.running_mean"].numpy()))
    (ours, our_grads, our_mean), (theirs, their_grads, their_mean) = results
    np.testing.assert_allclose(ours, theirs, rtol=1e-10, atol=1e-12)
    assert set(our_grads) == set(their_grads)
    for name in our_grads:
        np.testing.assert_allclose(our_grads[name], their_grads[name], rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(our_mean, their_mean, rtol=1e-12)  # the given buffer, updated


def test_functional_call_gradcheck_and_per_sample_gradients():
    layer = tl.nn.Linear(3, 2, dtype=tl.float64)
    x = tl.tensor(RNG.standard_normal((4, 3)))
    w = tl.tensor(RNG.standard_normal((2, 3)), requires_grad=True)
    b = tl.tensor(RNG.standard_normal(2), requires_grad=True)
    assert tl.autograd.gradcheck(
        lambda w, b: functional_call(layer, ({"weight": w}, {"bias": b}), (x,)), (w, b))
    # per-sample gradients of 0.5 |W x_i + b|^2 with respect to W: (W x_i + b) x_i^T
    for i in range(4):
        out = functional_call(layer, {"weight": w, "bias": b}, x[i])
        (grad,) = tl.autograd.grad((out * out).sum() * 0.5, w)
        expected = np.outer(w.detach().numpy() @ x.numpy()[i] + b.detach().numpy(), x.numpy()[i])
        np.testing.assert_allclose(grad.numpy(), expected, rtol=1e-12)


def test_functional_call_first_order_maml_step():
    """An inner step on a copy of the weights, then the outer loss at the adapted weights."""
    layer = tl.nn.Linear(2, 1, bias=False, dtype=tl.float64)
    x, y = tl.tensor(RNG.standard_normal((5, 2))), tl.tensor(RNG.standard_normal((5, 1)))
    theta = layer.weight.detach().clone().requires_grad_()
    inner = ((functional_call(layer, {"weight": theta}, x) - y) ** 2).mean()
    (step,) = tl.autograd.grad(inner, theta)
    adapted = (theta - 0.1 * step.detach()).detach().requires_grad_()
    outer = ((functional_call(layer, {"weight": adapted}, x) - y) ** 2).mean()
    (outer_grad,) = tl.autograd.grad(outer, adapted)
    a, xs, ys = adapted.detach().numpy(), x.numpy(), y.numpy()
    np.testing.assert_allclose(outer_grad.numpy(), 2 / 5 * (xs @ a.T - ys).T @ xs, rtol=1e-12)


def test_functional_call_restores_when_forward_raises_and_removes_new_attributes():
    class Failing(tl.nn.Module):
        def __init__(self):
            super().__init__()
            self.inner = tl.nn.Linear(2, 2)

        def forward(self, x, fail=True):
            if fail:
                raise KeyError("forward failed")
            return self.inner(x) + self.extra

    model = Failing()
    weight = model.inner.weight
    with pytest.raises(KeyError, match="forward failed"):
        functional_call(model, {"inner.weight": tl.zeros(2, 2), "extra": tl.ones(2)},
                        (tl.ones(1, 2),))
    assert model.inner.weight is weight and isinstance(model.inner.weight, tl.nn.Parameter)
    assert not hasattr(model, "extra")
    out = functional_call(model, {"inner.weight": tl.zeros(2, 2), "inner.bias": tl.zeros(2),
                                  "extra": tl.ones(2)}, tl.ones(1, 2), {"fail": False})
    np.testing.assert_array_equal(out.numpy(), [[1.0, 1.0]])
    assert not hasattr(model, "extra") and model.inner.weight is weight


class _Tied:
    """A model whose two linear layers share one weight, in either library."""

    @staticmethod
    def make(lib):
        model = lib.nn.Sequential(lib.nn.Linear(2, 2, bias=False), lib.nn.Linear(2, 2, bias=False))
        model[1].weight = model[0].weight
        return model.double()


@pytest.mark.parity
@pytest.mark.parametrize("tie_weights", [True, False])
def test_functional_call_tied_weights_match_pytorch(tie_weights):
    torch = pytest.importorskip("torch")
    w_np = RNG.standard_normal((2, 2))
    x_np = RNG.standard_normal((3, 2))
    outputs = []
    for lib, call in ((tl, functional_call), (torch, torch.func.functional_call)):
        model = _Tied.make(lib)
        with lib.no_grad():
            model[0].weight.copy_(lib.tensor(np.eye(2)))
        out = call(model, {"0.weight": lib.tensor(w_np)}, lib.tensor(x_np),
                   tie_weights=tie_weights)
        outputs.append(out.detach().numpy())
    np.testing.assert_allclose(outputs[0], outputs[1], rtol=1e-12)


@pytest.mark.parity
def test_functional_call_errors_match_pytorch():
    torch = pytest.importorskip("torch")
    cases = [
        lambda lib, m: ({"0.weight": lib.zeros(4, 3), "foo": lib.zeros(1)}, {"strict": True}),
        lambda lib, m: (({"0.weight": lib.zeros(4, 3)}, {"0.weight": lib.zeros(4, 3)}), {}),
        lambda lib, m: (3, {}),
        lambda lib, m: ([{"0.weight": lib.zeros(4, 3)}, 3], {}),
    ]
    for case in cases:
        errors = []
        for lib, call in ((tl, functional_call), (torch, torch.func.functional_call)):
            model = _model(lib)
            dicts, options = case(lib, model)
            with pytest.raises(Exception) as caught:
                call(model, dicts, (lib.zeros(2, 3),), **options)
            errors.append(caught.value)
        ours, theirs = errors
        assert type(ours) is type(theirs)
        assert str(ours) == str(theirs)
    # tied names given two different tensors
    messages = []
    for lib, call in ((tl, functional_call), (torch, torch.func.functional_call)):
        with pytest.raises(ValueError) as caught:
            call(_Tied.make(lib), {"0.weight": lib.zeros(2, 2), "1.weight": lib.ones(2, 2)},
                 lib.zeros(1, 2))
        messages.append(str(caught.value))
    assert messages[0] == messages[1]


def test_functional_call_error_messages():
    model = _model(tl)
    with pytest.raises(AttributeError, match="Sequential has no attribute `7`"):
        functional_call(model, {"7.weight": tl.zeros(1)}, tl.zeros(2, 3))
    with pytest.raises(TypeError, match="not an instance of Tensor"):
        functional_call(model, {"0.weight": np.zeros((4, 3))}, tl.zeros(2, 3))
    with pytest.raises(RuntimeError, match=r"Missing key\(s\): '0.bias'"):
        functional_call(model, {}, tl.zeros(2, 3), strict=True)
    assert all(isinstance(p, tl.nn.Parameter) for p in model.parameters())


def test_functional_call_is_reexported():
    assert tl.nn.utils.stateless.functional_call is functional_call
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        func = getattr(tl, "func", None)
    if func is not None and hasattr(func, "functional_call"):
        assert func.functional_call is functional_call
