"""Fractional max pooling (chapter 4, section 10.8): PyTorch's windows given the same samples."""

from __future__ import annotations

import numpy as np
import pytest

import tensorlib as tl
import tensorlib.nn.functional as F
from tensorlib import nn
from tensorlib.autograd import gradcheck

CASES_2D = [((2, 3, 7, 9), (2, 3), (4, 5)), ((1, 2, 10, 10), 3, 5), ((3, 7, 9), 2, (3, 4)),
            ((1, 1, 5, 5), 2, 1)]
CASES_3D = [((2, 3, 7, 9, 8), (2, 3, 2), (4, 5, 3)), ((1, 2, 6, 6, 6), 2, 3)]


def test_windows_cover_the_input_and_pick_maxima() -> None:
    x = tl.tensor(np.arange(1.0, 50.0).reshape(1, 1, 7, 7))
    out, idx = F.fractional_max_pool2d(x, 2, output_size=4, return_indices=True,
                                       _random_samples=tl.tensor(np.array([[[0.25, 0.75]]])))
    assert out.shape == (1, 1, 4, 4) and idx.dtype == tl.int64
    np.testing.assert_array_equal(out.numpy().ravel(), x.numpy().ravel()[idx.numpy().ravel()])
    assert out.numpy()[0, 0, -1, -1] == 49.0  # the last window is flush with the end


def test_random_samples_come_from_the_generator() -> None:
    x = tl.tensor(np.random.default_rng(0).standard_normal((2, 3, 9, 9)))
    tl.manual_seed(5)
    first = nn.FractionalMaxPool2d(2, output_ratio=0.5)(x)
    tl.manual_seed(5)
    again = F.fractional_max_pool2d(x, 2, output_ratio=(0.5, 0.5))
    np.testing.assert_array_equal(first.numpy(), again.numpy())
    assert first.shape == (2, 3, 4, 4)
    assert nn.FractionalMaxPool3d(2, output_size=(2, 3, 3))(tl.ones(1, 2, 5, 6, 6)).shape == (
        1, 2, 2, 3, 3)


def test_gradcheck() -> None:
    x = tl.tensor(np.random.default_rng(1).standard_normal((1, 2, 6, 6)), requires_grad=True)
    samples = tl.tensor(np.array([[[0.3, 0.6], [0.9, 0.1]]]))
    assert gradcheck(lambda t: F.fractional_max_pool2d(t, 2, output_size=3,
                                                       _random_samples=samples), (x,))
    y = tl.tensor(np.random.default_rng(2).standard_normal((1, 1, 4, 5, 4)), requires_grad=True)
    samples3 = tl.tensor(np.array([[[0.2, 0.5, 0.8]]]))
    assert gradcheck(lambda t: F.fractional_max_pool3d(t, 2, output_size=(2, 3, 2),
                                                       _random_samples=samples3), (y,))


def test_errors() -> None:
    with pytest.raises(ValueError, match="requires specifying either an output_size or an"):
        F.fractional_max_pool2d(tl.ones(1, 1, 4, 4), 2)
    with pytest.raises(RuntimeError, match="pool height 2 too large relative to input height 7"):
        F.fractional_max_pool2d(tl.ones(1, 1, 7, 9), 2, output_size=(8, 5))
    with pytest.raises(ValueError, match="expected a 3-D or 4-D input"):
        F.fractional_max_pool2d(tl.ones(4, 4), 2, output_size=2)
    with pytest.raises(ValueError, match="requires specifying either an output size, or a pool"):
        nn.FractionalMaxPool2d(2)
    with pytest.raises(ValueError, match="only one of output_size and output_ratio"):
        nn.FractionalMaxPool2d(2, output_size=3, output_ratio=0.5)
    with pytest.raises(ValueError, match="output_ratio must be between 0 and 1 \\(got 1.5\\)"):
        nn.FractionalMaxPool3d(2, output_ratio=1.5)


@pytest.mark.parity
@pytest.mark.parametrize("shape, kernel, out", CASES_2D)
def test_matches_pytorch_2d(shape, kernel, out) -> None:
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(0)
    x = rng.standard_normal(shape)
    samples = rng.uniform(size=(shape[0] if len(shape) == 4 else 1, shape[-3], 2))
    ours = tl.tensor(x, requires_grad=True)
    theirs = torch.tensor(x, requires_grad=True)
    a, ai = F.fractional_max_pool2d(ours, kernel, output_size=out, return_indices=True,
                                    _random_samples=tl.tensor(samples))
    b, bi = torch.nn.functional.fractional_max_pool2d(
        theirs, kernel, output_size=out, return_indices=True,
        _random_samples=torch.tensor(samples))
    np.testing.assert_array_equal(a.numpy(), b.detach().numpy())
    np.testing.assert_array_equal(ai.numpy(), bi.numpy())
    a.sum().backward()
    b.sum().backward()
    np.testing.assert_array_equal(ours.grad.numpy(), theirs.grad.numpy())


@pytest.mark.parity
@pytest.mark.parametrize("shape, kernel, out", CASES_3D)
def test_matches_pytorch_3d(shape, kernel, out) -> None:
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(1)
    x = rng.standard_normal(shape)
    samples = rng.uniform(size=(shape[0], shape[1], 3))
    a, ai = F.fractional_max_pool3d(tl.tensor(x), kernel, output_size=out, return_indices=True,
                                    _random_samples=tl.tensor(samples))
    b, bi = torch.nn.functional.fractional_max_pool3d(
        torch.tensor(x), kernel, output_size=out, return_indices=True,
        _random_samples=torch.tensor(samples))
    np.testing.assert_array_equal(a.numpy(), b.numpy())
    np.testing.assert_array_equal(ai.numpy(), bi.numpy())
    module = nn.FractionalMaxPool3d(kernel, output_size=out, return_indices=True,
                                    _random_samples=tl.tensor(samples))
    reference = torch.nn.FractionalMaxPool3d(kernel, output_size=out, return_indices=True,
                                             _random_samples=torch.tensor(samples))
    np.testing.assert_array_equal(module(tl.tensor(x))[0].numpy(),
                                  reference(torch.tensor(x))[0].numpy())
    assert list(module.state_dict()) == list(reference.state_dict())


# --- the *_with_indices forms (PyTorch's F.fractional_max_pool2d_with_indices / 3d) ---------


def test_with_indices_always_returns_the_pair_and_gradcheck() -> None:
    rng = np.random.default_rng(3)
    x = tl.tensor(rng.standard_normal((1, 2, 6, 6)), requires_grad=True)
    u = tl.tensor(rng.uniform(size=(1, 2, 2)))
    out, idx = F.fractional_max_pool2d_with_indices(x, 2, output_size=3, _random_samples=u)
    ref, ref_idx = F.fractional_max_pool2d(x, 2, output_size=3, return_indices=True,
                                           _random_samples=u)
    np.testing.assert_array_equal(out.numpy(), ref.numpy())
    np.testing.assert_array_equal(idx.numpy(), ref_idx.numpy())
    assert gradcheck(lambda t: F.fractional_max_pool2d_with_indices(
        t, 2, output_size=3, _random_samples=u)[0], (x,))
    x3 = tl.tensor(rng.standard_normal((1, 1, 5, 6, 5)), requires_grad=True)
    u3 = tl.tensor(rng.uniform(size=(1, 1, 3)))
    pair = F.fractional_max_pool3d_with_indices(x3, 2, output_size=(2, 3, 2), return_indices=False,
                                                _random_samples=u3)
    assert isinstance(pair, tuple) and len(pair) == 2 and pair[1].dtype == tl.int64
    assert gradcheck(lambda t: F.fractional_max_pool3d_with_indices(
        t, 2, output_size=(2, 3, 2), _random_samples=u3)[0], (x3,))


def test_with_indices_errors() -> None:
    with pytest.raises(ValueError, match="fractional_max_pool2d requires specifying either"):
        F.fractional_max_pool2d_with_indices(tl.ones(1, 1, 4, 4), 2)
    with pytest.raises(ValueError, match="fractional_max_pool3d requires specifying either"):
        F.fractional_max_pool3d_with_indices(tl.ones(1, 1, 4, 4, 4), 2)
    with pytest.raises(RuntimeError, match="pool height 2 too large relative to input height 7"):
        F.fractional_max_pool2d_with_indices(tl.ones(1, 1, 7, 9), 2, output_size=(8, 5))


@pytest.mark.parity
@pytest.mark.parametrize("dims, shape, kernel, out", [
    (2, (2, 3, 7, 9), (2, 3), (4, 5)), (2, (3, 7, 9), 2, (3, 4)),
    (3, (2, 3, 7, 9, 8), (2, 3, 2), (4, 5, 3)), (3, (2, 6, 6, 6), 2, 3),
])
@pytest.mark.parametrize("return_indices", [False, True])
def test_with_indices_match_pytorch(dims, shape, kernel, out, return_indices) -> None:
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(dims)
    x = rng.standard_normal(shape)
    samples = rng.uniform(size=(shape[0] if len(shape) == dims + 2 else 1, shape[-dims - 1], dims))
    name = f"fractional_max_pool{dims}d_with_indices"
    ours = tl.tensor(x, requires_grad=True)
    theirs = torch.tensor(x, requires_grad=True)
    a, ai = getattr(F, name)(ours, kernel, out, None, return_indices, tl.tensor(samples))
    b, bi = getattr(torch.nn.functional, name)(theirs, kernel, out, None, return_indices,
                                               torch.tensor(samples))
    np.testing.assert_array_equal(a.numpy(), b.detach().numpy())
    np.testing.assert_array_equal(ai.numpy(), bi.numpy())
    a.sum().backward()
    b.sum().backward()
    np.testing.assert_array_equal(ours.grad.numpy(), theirs.grad.numpy())
