"""``F.lp_pool3d`` and ``nn.LPPool3d`` (chapter 4, section 10.5): values, gradients, parity."""

from __future__ import annotations

import numpy as np
import pytest

import tensorlib as tl
import tensorlib.nn.functional as F
from tensorlib import nn
from tensorlib.autograd import gradcheck

CASES = [(2.0, 2, None, False), (3.0, (2, 3, 2), 1, True), (1.5, 3, 2, False), (1.0, 2, 1, False)]


def _positive(shape: tuple[int, ...], seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).uniform(0.5, 2.0, shape)


def test_p1_is_sum_pooling() -> None:
    x = tl.tensor(_positive((1, 2, 4, 4, 4)))
    out = F.lp_pool3d(x, 1.0, 2)
    expected = x.numpy().reshape(1, 2, 2, 2, 2, 2, 2, 2).sum(axis=(3, 5, 7))
    np.testing.assert_allclose(out.numpy(), expected, rtol=1e-12)


def test_module_and_unbatched_input() -> None:
    x = tl.tensor(_positive((2, 4, 4, 6)))
    layer = nn.LPPool3d(2, (2, 2, 3))
    assert layer(x).shape == (2, 2, 2, 2)
    assert repr(layer) == (
        "LPPool3d(norm_type=2, kernel_size=(2, 2, 3), stride=None, ceil_mode=False)"
    )


def test_gradcheck() -> None:
    x = tl.tensor(_positive((1, 2, 3, 4, 3)), requires_grad=True)
    assert gradcheck(lambda t: F.lp_pool3d(t, 2.0, 2, 1), (x,))
    assert gradcheck(lambda t: nn.LPPool3d(3.0, (2, 1, 2))(t), (x,))


def test_bad_input() -> None:
    with pytest.raises(TypeError, match="kernel_size must be an int or a triple of ints"):
        F.lp_pool3d(tl.ones(1, 1, 4, 4, 4), 2.0, (2, 2))


@pytest.mark.parity
@pytest.mark.parametrize("norm_type, kernel_size, stride, ceil_mode", CASES)
def test_matches_pytorch(norm_type, kernel_size, stride, ceil_mode) -> None:
    torch = pytest.importorskip("torch")
    x = np.random.default_rng(1).standard_normal((2, 3, 5, 6, 7))
    ours = tl.tensor(x, requires_grad=True)
    theirs = torch.tensor(x, requires_grad=True)
    out = F.lp_pool3d(ours, norm_type, kernel_size, stride, ceil_mode)
    expected = torch.nn.functional.lp_pool3d(theirs, norm_type, kernel_size, stride, ceil_mode)
    np.testing.assert_allclose(out.numpy(), expected.detach().numpy(), rtol=1e-10,
                               equal_nan=True)
    module = nn.LPPool3d(norm_type, kernel_size, stride, ceil_mode)
    assert repr(module) == repr(torch.nn.LPPool3d(norm_type, kernel_size, stride, ceil_mode))
    positive = _positive((1, 2, 4, 5, 6), 2)
    ours, theirs = tl.tensor(positive, requires_grad=True), torch.tensor(positive,
                                                                         requires_grad=True)
    F.lp_pool3d(ours, norm_type, kernel_size, stride, ceil_mode).sum().backward()
    reference = torch.nn.functional.lp_pool3d(theirs, norm_type, kernel_size, stride, ceil_mode)
    reference.sum().backward()
    np.testing.assert_allclose(ours.grad.numpy(), theirs.grad.numpy(), rtol=1e-10)
