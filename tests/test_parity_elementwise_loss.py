"""F.binary_cross_entropy, F.smooth_l1_loss, F.huber_loss and their modules against PyTorch 2.13,
with gradchecks."""

from __future__ import annotations

import numpy as np
import pytest

import tensorlib as tl
import tensorlib.nn.functional as F
from tensorlib import nn
from tensorlib.autograd import gradcheck

REDUCTIONS = ["mean", "sum", "none"]


def test_bce_clamps_the_log_at_minus_100_and_keeps_the_gradient_finite() -> None:
    x = tl.tensor([0.0, 1.0, 0.5], dtype=tl.float64, requires_grad=True)
    y = tl.tensor([1.0, 0.0, 1.0], dtype=tl.float64)
    loss = F.binary_cross_entropy(x, y, reduction="none")
    np.testing.assert_allclose(loss.detach().numpy(), [100.0, 100.0, np.log(2)], rtol=1e-12)
    loss.sum().backward()
    # (x - y) / max(x(1-x), 1e-12)
    np.testing.assert_allclose(x.grad.numpy(), [-1e12, 1e12, -2.0], rtol=1e-12)


def test_losses_refuse_what_pytorch_refuses() -> None:
    with pytest.raises(ValueError, match="between 0 and 1"):
        F.binary_cross_entropy(tl.tensor([1.5]), tl.tensor([1.0]))
    with pytest.raises(ValueError, match="same shape"):
        F.binary_cross_entropy(tl.tensor([[0.5]]), tl.tensor([1.0]))
    with pytest.raises(ValueError, match="negative values for beta"):
        F.smooth_l1_loss(tl.zeros(2), tl.zeros(2), beta=-1.0)
    with pytest.raises(ValueError, match="non-positive values for delta"):
        F.huber_loss(tl.zeros(2), tl.zeros(2), delta=0.0)
    with pytest.raises(ValueError, match="reduction"):
        nn.HuberLoss("avg")


def test_gradchecks() -> None:
    rng = np.random.default_rng(0)
    x = tl.tensor(rng.random((3, 4)) * 0.8 + 0.1, requires_grad=True)
    y = tl.tensor(rng.random((3, 4)), requires_grad=True)
    weight = tl.tensor(rng.random(4))
    assert gradcheck(lambda x, y: F.binary_cross_entropy(x, y, weight), (x, y))
    a = tl.tensor(rng.standard_normal((3, 4)) * 2, requires_grad=True)
    b = tl.tensor(rng.standard_normal((3, 4)), requires_grad=True)
    for beta in (0.0, 0.5, 1.0):
        assert gradcheck(
            lambda a, b, beta=beta: F.smooth_l1_loss(a, b, beta=beta, reduction="sum"), (a, b)
        )
    assert gradcheck(lambda a, b: F.huber_loss(a, b, delta=0.7), (a, b))


@pytest.mark.parity
@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("with_weight", [False, True], ids=["no-weight", "weight"])
def test_binary_cross_entropy_matches_pytorch(reduction: str, with_weight: bool) -> None:
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(1)
    x = np.concatenate([rng.random(10), [0.0, 1.0, 1e-30]]).reshape(13, 1) * np.ones((1, 2))
    y = rng.random((13, 2))
    w = rng.random(2) if with_weight else None
    ours_x, theirs_x = tl.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    ours_y, theirs_y = tl.tensor(y, requires_grad=True), torch.tensor(y, requires_grad=True)
    ours = F.binary_cross_entropy(
        ours_x, ours_y, None if w is None else tl.tensor(w), reduction=reduction
    )
    theirs = torch.nn.functional.binary_cross_entropy(
        theirs_x, theirs_y, None if w is None else torch.from_numpy(w), reduction=reduction
    )
    np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(), rtol=1e-10)
    ours.sum().backward()
    theirs.sum().backward()
    # 1e12-sized at x = 1e-30: rounding order
    np.testing.assert_allclose(ours_x.grad.numpy(), theirs_x.grad.numpy(), rtol=1e-8)
    np.testing.assert_allclose(ours_y.grad.numpy(), theirs_y.grad.numpy(), rtol=1e-10)
    module = nn.BCELoss(None if w is None else tl.tensor(w), reduction=reduction)
    np.testing.assert_allclose(
        module(tl.tensor(x), tl.tensor(y)).numpy(), theirs.detach().numpy(), rtol=1e-10
    )


@pytest.mark.parity
@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize(
    "name, option, value",
    [
        ("smooth_l1_loss", "beta", 1.0),
        ("smooth_l1_loss", "beta", 0.3),
        ("smooth_l1_loss", "beta", 0.0),
        ("huber_loss", "delta", 1.0),
        ("huber_loss", "delta", 2.5),
    ],
)
def test_robust_losses_match_pytorch(name: str, option: str, value: float, reduction: str) -> None:
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(2)
    x, y = rng.standard_normal((4, 5)) * 3, rng.standard_normal((4, 5))
    x[0, 0] = y[0, 0]  # d = 0: the gradient is 0 in both
    ours_x, theirs_x = tl.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    ours = getattr(F, name)(ours_x, tl.tensor(y), reduction=reduction, **{option: value})
    theirs = getattr(torch.nn.functional, name)(
        theirs_x, torch.from_numpy(y), reduction=reduction, **{option: value}
    )
    np.testing.assert_allclose(
        ours.detach().numpy(), theirs.detach().numpy(), rtol=1e-12, atol=1e-14
    )
    ours.sum().backward()
    theirs.sum().backward()
    np.testing.assert_allclose(ours_x.grad.numpy(), theirs_x.grad.numpy(), rtol=1e-12, atol=1e-14)
    module = (
        nn.SmoothL1Loss(reduction=reduction, beta=value)
        if name == "smooth_l1_loss"
        else nn.HuberLoss(reduction, value)
    )
    np.testing.assert_allclose(
        module(tl.tensor(x), tl.tensor(y)).numpy(), theirs.detach().numpy(), rtol=1e-12
    )


@pytest.mark.parity
def test_module_names_and_reprs_match_pytorch() -> None:
    torch = pytest.importorskip("torch")
    for name in ("BCELoss", "SmoothL1Loss", "HuberLoss", "Dropout2d", "BatchNorm1d", "BatchNorm2d"):
        assert hasattr(nn, name) and hasattr(torch.nn, name)
    assert repr(nn.BCELoss()) == repr(torch.nn.BCELoss())
    assert repr(nn.BatchNorm1d(5)) == repr(torch.nn.BatchNorm1d(5))
    from tensorlib.nn.modules.linear import NonDynamicallyQuantizableLinear

    layer = NonDynamicallyQuantizableLinear(3, 2)
    assert isinstance(layer, nn.Linear)
    assert repr(layer) == repr(torch.nn.modules.linear.NonDynamicallyQuantizableLinear(3, 2))
    assert list(layer.state_dict()) == list(
        torch.nn.modules.linear.NonDynamicallyQuantizableLinear(3, 2).state_dict()
    )
