"""Chapter 4: Bilinear (4.5), Fold (9.3), the 3-D padding layers (9.8), LPPool1d/2d,
AdaptiveMaxPool1d and LocalResponseNorm (10.5): float64 values and gradients against PyTorch,
float64 gradchecks, errors."""

from __future__ import annotations

import numpy as np
import pytest

import tensorlib as tl

F = tl.nn.functional
nn = tl.nn
RNG = np.random.default_rng(11)


def against_torch(ours_fn, theirs_fn, *arrays: np.ndarray, rtol: float = 1e-12) -> None:
    """Values and the gradients of every input, for a random upstream gradient."""
    torch = pytest.importorskip("torch")
    theirs_in = [torch.tensor(a, requires_grad=True) for a in arrays]
    theirs = theirs_fn(*theirs_in)
    upstream = RNG.standard_normal(tuple(theirs.shape))
    (theirs * torch.tensor(upstream)).sum().backward()
    ours_in = [tl.tensor(a, requires_grad=True) for a in arrays]
    ours = ours_fn(*ours_in)
    (ours * tl.tensor(upstream)).sum().backward()
    assert ours.shape == tuple(theirs.shape) and ours.dtype == tl.float64
    np.testing.assert_allclose(ours.numpy(), theirs.detach().numpy(), rtol=rtol, atol=1e-12)
    for mine, their in zip(ours_in, theirs_in, strict=True):
        np.testing.assert_allclose(mine.grad.numpy(), their.grad.numpy(), rtol=rtol, atol=1e-12)


# --- Bilinear ------------------------------------------------------------------------------
@pytest.mark.parity
@pytest.mark.parametrize("lead, bias", [((5,), True), ((2, 3), False), ((), True)])
def test_bilinear_matches_torch(lead, bias) -> None:
    torch = pytest.importorskip("torch")
    arrays = [RNG.standard_normal((*lead, 3)), RNG.standard_normal((*lead, 4)),
              RNG.standard_normal((2, 3, 4))] + ([RNG.standard_normal(2)] if bias else [])
    against_torch(F.bilinear, torch.nn.functional.bilinear, *arrays)


@pytest.mark.parity
def test_bilinear_module_matches_torch() -> None:
    torch = pytest.importorskip("torch")
    ours, theirs = nn.Bilinear(3, 4, 2, dtype=tl.float64), torch.nn.Bilinear(3, 4, 2).double()
    assert repr(ours) == repr(theirs)
    assert repr(nn.Bilinear(3, 4, 2, bias=False)) == repr(torch.nn.Bilinear(3, 4, 2, bias=False))
    assert ours.weight.shape == tuple(theirs.weight.shape) and ours.bias.shape == (2,)
    bound = 1 / np.sqrt(3)
    assert np.abs(ours.weight.numpy()).max() <= bound and np.abs(ours.bias.numpy()).max() <= bound
    ours.load_state_dict(theirs.state_dict())
    x1, x2 = RNG.standard_normal((6, 3)), RNG.standard_normal((6, 4))
    np.testing.assert_allclose(
        ours(tl.tensor(x1), tl.tensor(x2)).numpy(),
        theirs(torch.tensor(x1), torch.tensor(x2)).detach().numpy(), rtol=1e-12, atol=1e-12)
    first, again = (nn.Bilinear(3, 4, 2, generator=tl.Generator(1)) for _ in range(2))
    assert np.array_equal(first.weight.numpy(), again.weight.numpy())


def test_bilinear_gradcheck_and_errors() -> None:
    x1 = tl.tensor(RNG.standard_normal((3, 2)), requires_grad=True)
    x2 = tl.tensor(RNG.standard_normal((3, 4)), requires_grad=True)
    w = tl.tensor(RNG.standard_normal((2, 2, 4)), requires_grad=True)
    b = tl.tensor(RNG.standard_normal(2), requires_grad=True)
    assert tl.autograd.gradcheck(F.bilinear, (x1, x2, w, b))
    with pytest.raises(ValueError, match="bilinear: expected input1"):
        F.bilinear(x1, x2, tl.zeros(2, 3, 4, dtype=tl.float64))
    with pytest.raises(ValueError, match="bilinear: expected input1"):
        F.bilinear(x1, x2[:2], w)
    with pytest.raises(TypeError, match="dtype"):
        F.bilinear(x1, x2, w.float())


# --- Fold -----------------------------------------------------------------------------------
FOLDS = [((5, 6), (2, 3), 1, 1, (2, 1)), ((4, 4), 2, 1, 0, 2), ((7, 5), 3, 2, 1, 1),
         ((3, 3), 1, 1, 0, 1)]


@pytest.mark.parity
@pytest.mark.parametrize("size, kernel, dilation, padding, stride", FOLDS)
@pytest.mark.parametrize("batched", [True, False])
def test_fold_matches_torch(size, kernel, dilation, padding, stride, batched) -> None:
    torch = pytest.importorskip("torch")
    columns = F.unfold(tl.zeros(1, 2, *size), kernel, dilation, padding, stride).shape[1:]
    z = RNG.standard_normal(((2,) if batched else ()) + tuple(columns))
    against_torch(lambda t: F.fold(t, size, kernel, dilation, padding, stride),
                  lambda t: torch.nn.functional.fold(t, size, kernel, dilation, padding, stride), z)
    module = nn.Fold(size, kernel, dilation, padding, stride)
    assert repr(module) == repr(torch.nn.Fold(size, kernel, dilation, padding, stride))


def test_fold_is_the_adjoint_of_unfold() -> None:
    x = RNG.standard_normal((2, 3, 5, 6))
    columns = F.unfold(tl.tensor(x), (2, 3), 1, 1, (2, 1))
    z = RNG.standard_normal(tuple(columns.shape))
    folded = F.fold(tl.tensor(z), (5, 6), (2, 3), 1, 1, (2, 1)).numpy()
    assert abs((columns.numpy() * z).sum() - (x * folded).sum()) < 1e-10
    columns = tl.tensor(RNG.standard_normal((1, 2 * 4, 9)), requires_grad=True)
    assert tl.autograd.gradcheck(lambda t: F.fold(t, (4, 4), 2), (columns,))
    assert tl.autograd.gradcheck(lambda t: F.fold(t, (3, 4), 2, 1, 1, 2), (columns[:, :, :6],))


def test_fold_errors() -> None:
    with pytest.raises(RuntimeError, match="divisible by the product of kernel_size"):
        F.fold(tl.zeros(1, 5, 12), (4, 5), 2)
    with pytest.raises(RuntimeError, match="calculated number of sliding blocks 3 \\* 4 = 12"):
        F.fold(tl.zeros(1, 8, 10), (4, 5), 2)
    with pytest.raises(ValueError, match="fold: expected a 2-D"):
        F.fold(tl.zeros(1, 1, 8, 12), (4, 5), 2)


# --- 3-D padding layers ----------------------------------------------------------------------
@pytest.mark.parity
@pytest.mark.parametrize(
    "name, args",
    [("ZeroPad3d", ((1, 2, 0, 1, 2, 1),)), ("ConstantPad3d", (2, 3.5)),
     ("ReflectionPad3d", ((1, 2, 0, 1, 2, 1),)), ("ReplicationPad3d", (2,)),
     ("CircularPad3d", ((1, 2, 0, 1, 2, 1),))],
)
@pytest.mark.parametrize("shape", [(2, 3, 3, 4, 5), (3, 3, 4, 5)])
def test_pad3d_matches_torch(name, args, shape) -> None:
    torch = pytest.importorskip("torch")
    ours, theirs = getattr(nn, name)(*args), getattr(torch.nn, name)(*args)
    assert repr(ours) == repr(theirs)
    against_torch(ours, theirs, RNG.standard_normal(shape))


def test_pad3d_gradcheck_and_errors() -> None:
    x = tl.tensor(RNG.standard_normal((1, 2, 3, 3, 3)), requires_grad=True)
    assert tl.autograd.gradcheck(nn.ReflectionPad3d(1), (x,))
    assert tl.autograd.gradcheck(nn.CircularPad3d((1, 0, 0, 1, 1, 1)), (x,))
    with pytest.raises(TypeError, match="6 ints"):
        nn.ZeroPad3d((1, 2))


# --- LPPool, AdaptiveMaxPool1d, LocalResponseNorm -----------------------------------------------
@pytest.mark.parity
@pytest.mark.parametrize(
    "norm_type, kernel, stride, ceil_mode", [(2, (2, 3), None, False), (3, 2, 1, True),
                                            (1, 3, 2, False), (1.5, (3, 2), (2, 1), True)],
)
def test_lp_pool2d_matches_torch(norm_type, kernel, stride, ceil_mode) -> None:
    torch = pytest.importorskip("torch")
    x = np.abs(RNG.standard_normal((2, 3, 7, 6))) + 0.1
    ours = nn.LPPool2d(norm_type, kernel, stride, ceil_mode)
    theirs = torch.nn.LPPool2d(norm_type, kernel, stride, ceil_mode)
    assert repr(ours) == repr(theirs)
    against_torch(ours, theirs, x, rtol=1e-10)
    against_torch(ours, theirs, x[0], rtol=1e-10)


@pytest.mark.parity
@pytest.mark.parametrize("norm_type, kernel, stride", [(2, 3, None), (3, 2, 1), (1, 4, 2)])
def test_lp_pool1d_matches_torch(norm_type, kernel, stride) -> None:
    torch = pytest.importorskip("torch")
    x = RNG.standard_normal((2, 3, 9))
    ours = nn.LPPool1d(norm_type, kernel, stride)
    theirs = torch.nn.LPPool1d(norm_type, kernel, stride)
    assert repr(ours) == repr(theirs)
    against_torch(ours, theirs, x if norm_type == 2 else np.abs(x) + 0.1, rtol=1e-10)


@pytest.mark.parity
@pytest.mark.parametrize(
    "shape, size", [((2, 3, 7), 3), ((2, 3, 7), 7), ((3, 9), 4), ((2, 2, 5), 1)]
)
def test_adaptive_max_pool1d_matches_torch(shape, size) -> None:
    torch = pytest.importorskip("torch")
    ours, theirs = nn.AdaptiveMaxPool1d(size), torch.nn.AdaptiveMaxPool1d(size)
    assert repr(ours) == repr(theirs)
    against_torch(ours, theirs, RNG.standard_normal(shape))


@pytest.mark.parity
@pytest.mark.parametrize("shape", [(2, 5, 4), (2, 5, 3, 4), (2, 6, 2, 3, 2)])
@pytest.mark.parametrize("size, alpha, beta, k", [(1, 1e-4, 0.75, 1.0), (2, 0.3, 0.6, 1.5),
                                                  (3, 0.5, 0.75, 2.0), (6, 1.0, 1.0, 1.0)])
def test_local_response_norm_matches_torch(shape, size, alpha, beta, k) -> None:
    torch = pytest.importorskip("torch")
    ours = nn.LocalResponseNorm(size, alpha, beta, k)
    theirs = torch.nn.LocalResponseNorm(size, alpha, beta, k)
    assert repr(ours) == repr(theirs)
    against_torch(ours, theirs, RNG.standard_normal(shape))


def test_pooling_gradchecks() -> None:
    x = tl.tensor(np.abs(RNG.standard_normal((1, 2, 4, 5))) + 0.2, requires_grad=True)
    assert tl.autograd.gradcheck(lambda t: F.lp_pool2d(t, 2.5, 2, 1), (x,))
    assert tl.autograd.gradcheck(lambda t: F.lp_pool1d(t[:, :, 0], 2, 3, 1), (x,))
    assert tl.autograd.gradcheck(lambda t: F.adaptive_max_pool1d(t[:, :, 0], 3), (x,))
    y = tl.tensor(RNG.standard_normal((2, 5, 3)), requires_grad=True)
    assert tl.autograd.gradcheck(lambda t: F.local_response_norm(t, 3, 0.5, 0.75, 1.0), (y,))


def test_pooling_errors() -> None:
    with pytest.raises(ValueError, match="3D or higher"):
        F.local_response_norm(tl.zeros(2, 3), 2)
    with pytest.raises(ValueError, match="adaptive_max_pool1d: expected a 2-D"):
        F.adaptive_max_pool1d(tl.zeros(1, 2, 3, 4), 2)
    values, indices = nn.AdaptiveMaxPool1d(2, return_indices=True)(tl.zeros(1, 2, 6))
    assert values.shape == indices.shape == (1, 2, 2) and indices.dtype == tl.int64
    with pytest.raises(TypeError):
        F.lp_pool1d(tl.zeros(1, 2, 6), 2, (2, 2))
    assert F.local_response_norm(tl.zeros(0, 3, 4), 2).shape == (0, 3, 4)
