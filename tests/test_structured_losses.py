"""Chapter 4, section 11.3: multilabel_margin_loss, triplet_margin_with_distance_loss and
ctc_loss (and their modules), values and gradients against PyTorch's, float64 gradchecks,
errors."""

from __future__ import annotations

import numpy as np
import pytest

import tensorlib as tl

F = tl.nn.functional
RNG = np.random.default_rng(0)


def _both(torch, *arrays):
    ours = [tl.tensor(a, requires_grad=True) for a in arrays]
    theirs = [torch.tensor(a, requires_grad=True) for a in arrays]
    return ours, theirs


def _compare(torch, ours_out, theirs_out, ours_in, theirs_in):
    np.testing.assert_allclose(ours_out.detach().numpy(), theirs_out.detach().numpy(),
                               rtol=1e-12, atol=1e-12)
    weights = RNG.standard_normal(tuple(ours_out.shape))
    (ours_out * tl.tensor(weights)).sum().backward()
    (theirs_out * torch.tensor(weights)).sum().backward()
    for a, b in zip(ours_in, theirs_in, strict=True):
        np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=1e-10, atol=1e-12)


LABELS = [
    np.array([[3, 0, -1, 1, 1], [1, -1, 0, 0, 0], [4, 3, 2, 1, 0], [-1, 2, 2, 2, 2]]),
    np.array([[2, 2, -1, 0, 0], [0, 1, 2, 3, -1], [0, 0, 0, 0, 0], [1, 3, 4, -1, 4]]),
]


@pytest.mark.parity
@pytest.mark.parametrize("labels", LABELS)
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_multilabel_margin_loss_matches_pytorch(labels, reduction):
    torch = pytest.importorskip("torch")
    (x,), (y,) = _both(torch, RNG.standard_normal((4, 5)))
    a = F.multilabel_margin_loss(x, tl.tensor(labels), reduction=reduction)
    b = torch.nn.functional.multilabel_margin_loss(y, torch.tensor(labels), reduction=reduction)
    _compare(torch, a, b, [x], [y])
    (x,), (y,) = _both(torch, RNG.standard_normal(5))  # one sample
    a = tl.nn.MultiLabelMarginLoss(reduction=reduction)(x, tl.tensor(labels[0]))
    b = torch.nn.MultiLabelMarginLoss(reduction=reduction)(y, torch.tensor(labels[0]))
    assert a.shape == tuple(b.shape)
    _compare(torch, a, b, [x], [y])


@pytest.mark.parity
@pytest.mark.parametrize("swap", [False, True])
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("distance", [None, "cosine", "l1"])
def test_triplet_margin_with_distance_loss_matches_pytorch(swap, reduction, distance):
    torch = pytest.importorskip("torch")
    arrays = [RNG.standard_normal((6, 4)) for _ in range(3)]
    ours, theirs = _both(torch, *arrays)
    functions = {
        None: (None, None),
        "cosine": (lambda a, b: 1.0 - F.cosine_similarity(a, b),
                   lambda a, b: 1.0 - torch.nn.functional.cosine_similarity(a, b)),
        "l1": (lambda a, b: (a - b).abs().sum(-1), lambda a, b: (a - b).abs().sum(-1)),
    }[distance]
    a = tl.nn.TripletMarginWithDistanceLoss(distance_function=functions[0], margin=0.7,
                                            swap=swap, reduction=reduction)(*ours)
    b = torch.nn.TripletMarginWithDistanceLoss(distance_function=functions[1], margin=0.7,
                                               swap=swap, reduction=reduction)(*theirs)
    _compare(torch, a, b, ours, theirs)
    assert repr(tl.nn.TripletMarginWithDistanceLoss()) == repr(
        torch.nn.TripletMarginWithDistanceLoss())


def _ctc_case(batched_targets):
    """T=7 steps, N=3 samples, C=5 classes; targets of lengths 3, 1, 0 (and a repeat)."""
    lengths = np.array([3, 1, 0])
    padded = np.array([[1, 2, 2], [4, 0, 0], [0, 0, 0]])
    flat = np.array([1, 2, 2, 4])
    return (padded if batched_targets else flat), np.array([7, 5, 3]), lengths


@pytest.mark.parity
@pytest.mark.parametrize("padded", [True, False])
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("blank", [0, 3])
def test_ctc_loss_matches_pytorch_through_log_softmax(padded, reduction, blank):
    torch = pytest.importorskip("torch")
    targets, inputs, lengths = _ctc_case(padded)
    if blank == 3:
        targets = np.where(targets == 3, 0, targets)
    (z,), (w,) = _both(torch, RNG.standard_normal((7, 3, 5)))
    a = F.ctc_loss(z.log_softmax(2), tl.tensor(targets), tl.tensor(inputs), tl.tensor(lengths),
                   blank=blank, reduction=reduction)
    b = torch.nn.functional.ctc_loss(w.log_softmax(2), torch.tensor(targets),
                                     torch.tensor(inputs), torch.tensor(lengths), blank=blank,
                                     reduction=reduction)
    _compare(torch, a, b, [z], [w])


@pytest.mark.parity
def test_ctc_loss_module_unbatched_and_zero_infinity_match_pytorch():
    torch = pytest.importorskip("torch")
    (z,), (w,) = _both(torch, RNG.standard_normal((6, 4)))
    label = np.array([1, 1, 2])
    a = tl.nn.CTCLoss()(z.log_softmax(1), tl.tensor(label), [6], [3])
    b = torch.nn.CTCLoss()(w.log_softmax(1), torch.tensor(label), torch.tensor(6),
                           torch.tensor(3))
    assert a.shape == tuple(b.shape)
    _compare(torch, a, b, [z], [w])
    # the first sample's input (2 steps) is too short for 1, 1, 2 (4 steps needed)
    targets, inputs, lengths = np.array([[1, 1, 2], [2, 3, 0]]), [2, 6], [3, 2]
    for reduction in ("none", "sum", "mean"):
        (z,), (w,) = _both(torch, RNG.standard_normal((6, 2, 4)))
        a = F.ctc_loss(z.log_softmax(2), tl.tensor(targets), inputs, lengths,
                       reduction=reduction, zero_infinity=True)
        b = torch.nn.functional.ctc_loss(w.log_softmax(2), torch.tensor(targets),
                                         torch.tensor(inputs), torch.tensor(lengths),
                                         reduction=reduction, zero_infinity=True)
        _compare(torch, a, b, [z], [w])
    lp = tl.tensor(RNG.standard_normal((6, 2, 4))).log_softmax(2)
    losses = F.ctc_loss(lp, tl.tensor(targets), inputs, lengths, reduction="none")
    assert np.isinf(losses.numpy()[0]) and np.isfinite(losses.numpy()[1])


def test_ctc_loss_is_the_sum_over_paths_and_its_gradient_is_exact():
    from itertools import product

    lp = tl.tensor(RNG.standard_normal((4, 1, 3))).log_softmax(2).detach()
    total = 0.0
    for path in product(range(3), repeat=4):
        merged = [c for k, c in enumerate(path) if k == 0 or c != path[k - 1]]
        if [c for c in merged if c != 0] == [2, 2]:
            total += np.exp(sum(lp.numpy()[t, 0, c] for t, c in enumerate(path)))
    loss = F.ctc_loss(lp, tl.tensor(np.array([[2, 2]])), [4], [2], reduction="sum")
    np.testing.assert_allclose(loss.item(), -np.log(total), rtol=1e-12)
    # with respect to log_probs themselves, not only through log_softmax
    x = tl.tensor(RNG.standard_normal((5, 2, 4)) - 1.0, requires_grad=True)
    targets = tl.tensor(np.array([[1, 3], [2, 2]]))
    assert tl.autograd.gradcheck(lambda v: F.ctc_loss(v, targets, [5, 5], [2, 2]), (x,))
    assert tl.autograd.gradcheck(
        lambda v: F.ctc_loss(v.log_softmax(2), targets, [5, 4], [2, 2], reduction="sum"), (x,))


def test_gradchecks():
    x = tl.tensor(RNG.standard_normal((3, 5)), requires_grad=True)
    assert tl.autograd.gradcheck(lambda v: F.multilabel_margin_loss(v, tl.tensor(LABELS[0][:3])),
                                 (x,))
    a, p, n = (tl.tensor(RNG.standard_normal((4, 3)), requires_grad=True) for _ in range(3))
    assert tl.autograd.gradcheck(
        lambda a, p, n: F.triplet_margin_with_distance_loss(a, p, n, swap=True, margin=2.0),
        (a, p, n))


def test_errors_are_clear():
    x = tl.tensor(RNG.standard_normal((2, 5)))
    with pytest.raises(RuntimeError, match="out of range"):
        F.multilabel_margin_loss(x, tl.tensor(np.array([[7, -1, 0, 0, 0], [1, -1, 0, 0, 0]])))
    with pytest.raises(RuntimeError, match="inconsistent target size"):
        F.multilabel_margin_loss(x, tl.tensor(np.zeros((2, 3), dtype=np.int64)))
    with pytest.raises(RuntimeError, match="int64"):
        F.multilabel_margin_loss(x, tl.tensor(np.zeros((2, 5), dtype=np.int32)))
    with pytest.raises(ValueError, match="margin must be greater than 0"):
        F.triplet_margin_with_distance_loss(x, x, x, margin=0.0)
    with pytest.raises(ValueError, match="expected margin to be greater than 0"):
        tl.nn.TripletMarginWithDistanceLoss(margin=-1.0)
    with pytest.raises(RuntimeError, match="same number of dimensions"):
        F.triplet_margin_with_distance_loss(x, x[0], x)
    with pytest.raises(ValueError, match="not a valid value for reduction"):
        F.triplet_margin_with_distance_loss(x, x, x, reduction="avg")
    lp = tl.tensor(RNG.standard_normal((4, 2, 3))).log_softmax(2)
    targets = tl.tensor(np.array([[1, 2], [2, 0]]))
    with pytest.raises(ValueError, match=r"input length 5 of sample 0 is not in \[1, 4\]"):
        F.ctc_loss(lp, targets, [5, 4], [2, 1])
    with pytest.raises(ValueError, match="outside"):
        F.ctc_loss(lp, targets, [4, 4], [2, 2])  # sample 1's target holds the blank
    with pytest.raises(ValueError, match="longer than the padded targets"):
        F.ctc_loss(lp, targets, [4, 4], [3, 1])
    with pytest.raises(ValueError, match="add up to 3"):
        F.ctc_loss(lp, tl.tensor(np.array([1, 2, 2, 1])), [4, 4], [2, 1])
    with pytest.raises(ValueError, match="one per sample"):
        F.ctc_loss(lp, targets, [4], [2, 1])
    with pytest.raises(ValueError, match="blank must be in"):
        F.ctc_loss(lp, targets, [4, 4], [2, 1], blank=3)
