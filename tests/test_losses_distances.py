"""Chapter 2, section 33.1: l1_loss, kl_div, poisson_nll_loss, gaussian_nll_loss, the margin
losses and the distances, values and gradients against PyTorch's, float64 gradchecks, errors."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import tensorlib as tl

RNG = np.random.default_rng(0)
A, B = RNG.standard_normal((4, 3)), RNG.standard_normal((4, 3))
SIGNS = np.array([1.0, -1.0, 1.0, -1.0])
CLASSES = np.array([2, 0, 1, 1])
COUNTS = RNG.poisson(2.0, size=(4, 3)).astype(np.float64)
WEIGHT = np.array([1.0, 2.0, 0.5])

CASES = {
    "l1": lambda L, F, a, b: F.l1_loss(a, b),
    "l1-none": lambda L, F, a, b: F.l1_loss(a, b, reduction="none"),
    "kl-batchmean": lambda L, F, a, b: F.kl_div(F.log_softmax(a, 1), F.softmax(b, 1),
                                              reduction="batchmean"),
    "kl-log-target": lambda L, F, a, b: F.kl_div(F.log_softmax(a, 1), F.log_softmax(b, 1),
                                               reduction="sum", log_target=True),
    "kl-zero-p": lambda L, F, a, b: F.kl_div(F.log_softmax(a, 1), L.tensor(
        np.array([[0.0, 0.5, 0.5]] * 4)), reduction="none"),
    "poisson": lambda L, F, a, b: F.poisson_nll_loss(a, L.tensor(COUNTS), full=True),
    "poisson-rates": lambda L, F, a, b: F.poisson_nll_loss(a.abs(), L.tensor(COUNTS),
                                                          log_input=False, reduction="sum"),
    "gaussian": lambda L, F, a, b: F.gaussian_nll_loss(a, b, b * b + 0.01, full=True),
    "gaussian-per-sample-var": lambda L, F, a, b: F.gaussian_nll_loss(a, b, (b * b)[:, 0]),
    "gaussian-clamped": lambda L, F, a, b: F.gaussian_nll_loss(a, b, b * 0 + 1e-9,
                                                               reduction="none"),
    "margin-ranking": lambda L, F, a, b: F.margin_ranking_loss(a[:, 0], b[:, 0], L.tensor(SIGNS),
                                                               margin=0.1),
    "hinge-embedding": lambda L, F, a, b: F.hinge_embedding_loss(a[:, 1], L.tensor(SIGNS)),
    "soft-margin": lambda L, F, a, b: F.soft_margin_loss(a[:, 2], L.tensor(SIGNS)),
    "multilabel": lambda L, F, a, b: F.multilabel_soft_margin_loss(
        a, (b > 0).double(), weight=L.tensor(WEIGHT)),
    "multi-margin": lambda L, F, a, b: F.multi_margin_loss(a, L.tensor(CLASSES)),
    "multi-margin-p2": lambda L, F, a, b: F.multi_margin_loss(
        a, L.tensor(CLASSES), p=2, margin=0.5, weight=L.tensor(WEIGHT), reduction="none"),
    "cosine-embedding": lambda L, F, a, b: F.cosine_embedding_loss(a, b, L.tensor(SIGNS), 0.1),
    "triplet": lambda L, F, a, b: F.triplet_margin_loss(a, b, a * 0.3 + b, swap=True),
    "triplet-p1": lambda L, F, a, b: F.triplet_margin_loss(a, b, -b, p=1.0, margin=2.0),
    "cdist": lambda L, F, a, b: L.cdist(a, b[:3]),
    "cdist-p1-batched": lambda L, F, a, b: L.cdist(a.reshape(2, 2, 3), b.reshape(2, 2, 3), p=1.0),
    "pdist": lambda L, F, a, b: F.pdist(a, p=3.0),
    "pairwise": lambda L, F, a, b: F.pairwise_distance(a, b, keepdim=True),
    "cosine-similarity": lambda L, F, a, b: F.cosine_similarity(a, b),
    "cosine-similarity-broadcast": lambda L, F, a, b: L.cosine_similarity(a, b[:1], dim=1),
    "cosine-similarity-zero": lambda L, F, a, b: F.cosine_similarity(a * 0, b),
    "normalize": lambda L, F, a, b: F.normalize(a, p=1.0, dim=0),
}


@pytest.mark.parity
@pytest.mark.parametrize("name", list(CASES))
def test_values_and_gradients_match_pytorch(name):
    torch = pytest.importorskip("torch")
    results = []
    for lib in (tl, torch):
        a = lib.tensor(A, requires_grad=True)
        b = lib.tensor(B, requires_grad=True)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out = CASES[name](lib, lib.nn.functional, a, b)
        weights = np.random.default_rng(1).standard_normal(tuple(out.shape))
        (out * lib.tensor(weights)).sum().backward()
        results.append((out.detach().numpy(), a.grad.numpy(),
                        None if b.grad is None else b.grad.numpy()))
    (ours, our_a, our_b), (theirs, their_a, their_b) = results
    assert ours.shape == theirs.shape
    np.testing.assert_allclose(ours, theirs, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(our_a, their_a, rtol=1e-9, atol=1e-12)
    if their_b is not None:
        np.testing.assert_allclose(our_b, their_b, rtol=1e-9, atol=1e-12)


def test_gradchecks():
    F = tl.nn.functional
    a = tl.tensor(A, requires_grad=True)
    b = tl.tensor(B, requires_grad=True)
    signs = tl.tensor(SIGNS)
    assert tl.autograd.gradcheck(lambda x, y: F.kl_div(F.log_softmax(x, 1), F.softmax(y, 1),
                                                       reduction="batchmean"), (a, b))
    assert tl.autograd.gradcheck(lambda x, y: F.gaussian_nll_loss(x, y, y * y + 0.1), (a, b))
    assert tl.autograd.gradcheck(lambda x, y: F.cosine_embedding_loss(x, y, signs), (a, b))
    assert tl.autograd.gradcheck(lambda x, y: tl.cdist(x, y) + 0, (a, b))
    assert tl.autograd.gradcheck(lambda x: F.pdist(x), (a,))


def test_equal_points_have_no_nan_gradient():
    x = tl.tensor(np.array([[1.0, 2.0], [1.0, 2.0]]), requires_grad=True)
    (tl.cdist(x, x).sum() + tl.pdist(x).sum()).backward()
    assert not np.isnan(x.grad.numpy()).any()


def test_kl_div_mean_warns_and_errors_are_clear():
    F = tl.nn.functional
    with pytest.warns(UserWarning, match="batchmean"):
        F.kl_div(tl.zeros(2, 3), tl.ones(2, 3) / 3)
    with pytest.raises(ValueError, match="reduction"):
        F.kl_div(tl.zeros(2), tl.zeros(2), reduction="avg")
    with pytest.raises(ValueError, match="incorrect size"):
        F.gaussian_nll_loss(tl.zeros(2, 3), tl.zeros(2, 3), tl.ones(3, 2))
    with pytest.raises(ValueError, match="negative"):
        F.gaussian_nll_loss(tl.zeros(2), tl.zeros(2), -tl.ones(2))
    with pytest.raises(ValueError, match="same shape"):
        F.l1_loss(tl.zeros(2, 1), tl.zeros(2))
    with pytest.raises(RuntimeError, match="2D"):
        F.pdist(tl.zeros(3))
    with pytest.raises(ValueError, match="p == 1"):
        F.multi_margin_loss(tl.zeros(2, 3), tl.tensor([0, 1]), p=3)
