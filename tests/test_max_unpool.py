"""Chapter 4, section 10.6: ``return_indices`` of max pooling, the ``*_with_indices`` functions
and max unpooling, values, indices and gradients against PyTorch's, float64 gradchecks, errors."""

from __future__ import annotations

import numpy as np
import pytest

import tensorlib as tl

F = tl.nn.functional
RNG = np.random.default_rng(0)

POOLS = [  # (input shape, function, positional arguments after the input)
    ((2, 3, 9), "max_pool1d", (3, 2, 1)),
    ((3, 10), "max_pool1d", (2,)),
    ((2, 3, 9), "max_pool1d", (2, 2, 0, 2, True)),
    ((2, 3, 7, 6), "max_pool2d", (3, 2, 1)),
    ((3, 7, 6), "max_pool2d", (2, 1, 0, 2)),
    ((2, 3, 7, 6), "max_pool2d", ((2, 3), (2, 1), (1, 1), 1, True)),
    ((2, 2, 5, 6, 7), "max_pool3d", (3, 2, 1)),
    ((2, 4, 5, 6), "max_pool3d", ((2, 3, 2), 1, 0, (1, 1, 2))),
]
ADAPTIVE = [
    ((2, 3, 7), "adaptive_max_pool1d", 3),
    ((3, 8), "adaptive_max_pool1d", 8),
    ((2, 3, 7, 5), "adaptive_max_pool2d", (3, 2)),
    ((3, 7, 5), "adaptive_max_pool2d", (3, None)),
]


def _both(torch, x):
    return tl.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)


@pytest.mark.parity
@pytest.mark.parametrize("shape, name, args", POOLS + ADAPTIVE)
def test_pooling_indices_values_and_gradients_match_pytorch(shape, name, args):
    torch = pytest.importorskip("torch")
    args = args if isinstance(args, tuple) and name.startswith("max") else (args,)
    x = RNG.standard_normal(shape)
    ours, theirs = _both(torch, x)
    (a, ia) = getattr(F, name)(ours, *args, return_indices=True)
    (b, ib) = getattr(torch.nn.functional, name)(theirs, *args, return_indices=True)
    assert ia.dtype == np.int64 and ia.shape == tuple(ib.shape)
    np.testing.assert_array_equal(ia.numpy(), ib.numpy())
    np.testing.assert_allclose(a.numpy(), b.detach().numpy(), rtol=0, atol=0)
    weights = RNG.standard_normal(a.shape)
    (a * tl.tensor(weights)).sum().backward()
    (b * torch.tensor(weights)).sum().backward()
    np.testing.assert_allclose(ours.grad.numpy(), theirs.grad.numpy(), rtol=1e-12, atol=1e-12)
    # the *_with_indices form returns the same pair
    c, ic = getattr(F, name + "_with_indices")(tl.tensor(x), *args)
    np.testing.assert_array_equal(ic.numpy(), ia.numpy())
    np.testing.assert_array_equal(c.numpy(), a.detach().numpy())


@pytest.mark.parity
@pytest.mark.parametrize("dims, shape, kernel, stride, padding, output_size", [
    (1, (2, 3, 10), 3, None, 0, None),
    (1, (2, 3, 10), 3, None, 0, [10]),
    (1, (3, 9), 3, 2, 1, None),
    (2, (2, 3, 7, 6), 2, None, 0, (7, 6)),
    (2, (2, 3, 7, 5), 3, 2, 1, None),
    (2, (3, 7, 6), 2, 2, 0, [1, 3, 7, 6]),
    (3, (2, 2, 4, 6, 6), 2, None, 0, None),
    (3, (2, 5, 6, 7), 3, 2, 1, (5, 6, 7)),
])
def test_unpooling_matches_pytorch(dims, shape, kernel, stride, padding, output_size):
    torch = pytest.importorskip("torch")
    x = RNG.standard_normal(shape)
    pool, unpool = f"max_pool{dims}d", f"max_unpool{dims}d"
    a, ia = getattr(F, pool)(tl.tensor(x), kernel, stride, padding, return_indices=True)
    b, ib = getattr(torch.nn.functional, pool)(torch.tensor(x), kernel, stride, padding,
                                                return_indices=True)
    values = RNG.standard_normal(a.shape)
    ours, theirs = _both(torch, values)
    y = getattr(F, unpool)(ours, ia, kernel, stride, padding, output_size)
    z = getattr(torch.nn.functional, unpool)(theirs, ib, kernel, stride, padding, output_size)
    np.testing.assert_array_equal(y.detach().numpy(), z.detach().numpy())
    weights = RNG.standard_normal(y.shape)
    (y * tl.tensor(weights)).sum().backward()
    (z * torch.tensor(weights)).sum().backward()
    np.testing.assert_allclose(ours.grad.numpy(), theirs.grad.numpy(), rtol=0, atol=0)
    # the module form
    module = getattr(tl.nn, f"MaxUnpool{dims}d")(kernel, stride, padding)
    reference = getattr(torch.nn, f"MaxUnpool{dims}d")(kernel, stride, padding)
    assert repr(module) == repr(reference)
    np.testing.assert_array_equal(module(ours, ia, output_size).detach().numpy(),
                                  z.detach().numpy())


@pytest.mark.parity
@pytest.mark.parametrize("dims", [1, 2, 3])
def test_pooling_modules_return_indices_as_pytorch(dims):
    torch = pytest.importorskip("torch")
    x = RNG.standard_normal((2, 3) + (6,) * dims)
    ours = getattr(tl.nn, f"MaxPool{dims}d")(3, 2, 1, 1, True, True)
    theirs = getattr(torch.nn, f"MaxPool{dims}d")(3, 2, 1, 1, True, True)
    (a, ia), (b, ib) = ours(tl.tensor(x)), theirs(torch.tensor(x))
    np.testing.assert_array_equal(ia.numpy(), ib.numpy())
    np.testing.assert_array_equal(a.numpy(), b.numpy())
    assert repr(ours) == repr(theirs)
    if dims < 3:
        ours = getattr(tl.nn, f"AdaptiveMaxPool{dims}d")(4, True)
        theirs = getattr(torch.nn, f"AdaptiveMaxPool{dims}d")(4, True)
        np.testing.assert_array_equal(ours(tl.tensor(x))[1].numpy(),
                                      theirs(torch.tensor(x))[1].numpy())


def test_gradchecks():
    x = tl.tensor(RNG.standard_normal((2, 2, 6, 5)), requires_grad=True)
    _, where = F.max_pool2d(x, 2, return_indices=True)
    values = tl.tensor(RNG.standard_normal(tuple(where.shape)), requires_grad=True)
    assert tl.autograd.gradcheck(lambda v: F.max_unpool2d(v, where, 2, output_size=(6, 5)),
                                 (values,))
    assert tl.autograd.gradcheck(lambda v: F.max_pool2d(v, 3, 2, 1, return_indices=True)[0], (x,))
    volume = tl.tensor(RNG.standard_normal((1, 2, 4, 4, 4)), requires_grad=True)
    assert tl.autograd.gradcheck(
        lambda v: F.max_unpool3d(*F.max_pool3d(v, 2, return_indices=True), 2), (volume,)
    )
    seq = tl.tensor(RNG.standard_normal((2, 3, 10)), requires_grad=True)
    assert tl.autograd.gradcheck(
        lambda v: F.max_unpool1d(*F.max_pool1d(v, 3, return_indices=True), 3, output_size=[10]),
        (seq,),
    )
    assert tl.autograd.gradcheck(
        lambda v: F.adaptive_max_pool1d(v, 4, return_indices=True)[0], (seq,)
    )


def test_indices_are_not_differentiable_and_unpool_keeps_the_maxima():
    x = tl.tensor(np.abs(RNG.standard_normal((1, 1, 4, 4))) + 0.1, requires_grad=True)
    y, where = F.max_pool2d(x, 2, return_indices=True)
    assert y.requires_grad and not where.requires_grad
    back = F.max_unpool2d(y, where, 2)
    np.testing.assert_array_equal(F.max_pool2d(back, 2).detach().numpy(), y.detach().numpy())
    assert (back.detach().numpy() != 0).sum() == 4


def test_errors_are_clear():
    y, where = F.max_pool2d(tl.tensor(RNG.standard_normal((1, 1, 4, 4))), 2, return_indices=True)
    first = int(where.numpy().ravel()[0]) + 100  # the first invalid index, as PyTorch reports
    with pytest.raises(RuntimeError, match=f"invalid max index: {first} "):
        F.max_unpool2d(y, where + 100, 2)
    with pytest.raises(RuntimeError, match="int64"):
        F.max_unpool2d(y, where.to(tl.int32), 2)
    with pytest.raises(RuntimeError, match="indices of the input's shape"):
        F.max_unpool2d(y, where[..., :1], 2)
    with pytest.raises(ValueError, match="dim 0 must be between 2 and 6"):
        F.max_unpool2d(y, where, 2, output_size=(6, 4))
    with pytest.raises(ValueError, match="containing 2 or 4 elements"):
        F.max_unpool2d(y, where, 2, output_size=(4, 4, 4))
    with pytest.raises(ValueError, match="3-D or 4-D input"):
        F.max_unpool2d(y[0, 0], where[0, 0], 2)
    with pytest.raises(TypeError):
        F.max_unpool2d(y, where.numpy(), 2)
