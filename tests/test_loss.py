"""Losses of ``tensorlib.nn.functional`` where PyTorch's answer is easy to get wrong.

Masked classes (``-inf`` logits) give finite losses and gradients, an ignored row of ``-inf``
does not poison the mean, ``-inf`` at the target gives ``inf``; float16 losses over many elements
keep a gradient (they accumulate in float32).
"""

from __future__ import annotations

import numpy as np
import pytest
from _probe import NEG, assert_matches_pytorch, functional, grad_of

import tensorlib as tl
import tensorlib.nn.functional as F


def test_float16_mse_and_bce_with_logits_over_many_elements_have_gradients():
    y = tl.tensor(np.zeros(70000, dtype=np.float16), requires_grad=True)
    F.mse_loss(y, tl.ones(70000, dtype=tl.float16)).backward()
    np.testing.assert_allclose(y.grad.numpy()[:3].astype(np.float64), -2 / 70000, rtol=5e-3)
    z = tl.tensor(np.zeros(70000, dtype=np.float16), requires_grad=True)
    F.binary_cross_entropy_with_logits(z, tl.ones(70000, dtype=tl.float16)).backward()
    np.testing.assert_allclose(z.grad.numpy()[:3].astype(np.float64), -0.5 / 70000, rtol=5e-3)


def test_cross_entropy_with_a_masked_class():
    logits = tl.tensor([[0.0, -np.inf, 3.0]], requires_grad=True)
    loss = F.cross_entropy(logits, tl.tensor([2]))
    assert abs(loss.item() - 0.048587) < 1e-5  # PyTorch: 0.0486
    loss.backward()
    np.testing.assert_allclose(logits.grad.numpy(), [[0.047426, 0.0, -0.047426]], atol=1e-5)


def test_cross_entropy_ignored_row_of_minus_inf_does_not_poison_the_mean():
    logits = tl.tensor([[0.0, -np.inf, 3.0], [-np.inf, -np.inf, -np.inf]], requires_grad=True)
    loss = F.cross_entropy(logits, tl.tensor([2, -100]))
    assert abs(loss.item() - 0.048587) < 1e-5
    loss.backward()
    assert np.all(np.isfinite(logits.grad.numpy())) and logits.grad.numpy()[1].tolist() == [
        0.0,
        0.0,
        0.0,
    ]


def test_cross_entropy_with_minus_inf_at_the_target_is_inf():
    loss = F.cross_entropy(tl.tensor([[0.0, -np.inf, 3.0]]), tl.tensor([1]))
    assert loss.item() == np.inf


def test_nll_loss_with_minus_inf_log_probabilities():
    log_probs = tl.tensor([[-0.1, -np.inf, -2.0]], requires_grad=True)
    loss = F.nll_loss(log_probs, tl.tensor([0]))
    assert abs(loss.item() - 0.1) < 1e-6
    loss.backward()
    assert log_probs.grad.tolist() == [[-1.0, 0.0, 0.0]]


def _cross_entropy(lib, logits, target):
    return functional(lib).cross_entropy(lib.tensor(logits), lib.tensor(target))


PROBE = {
    "nll_loss with -inf": lambda lib: functional(lib).nll_loss(
        lib.tensor([[-0.1, NEG, -2.0]]), lib.tensor([0])
    ),
    "float16 mse_loss gradient": lambda lib: grad_of(
        lib,
        np.zeros(70000),
        lambda t: functional(lib).mse_loss(t, lib.ones(70000, dtype=lib.float16)),
        np.float16,
    ),
    "float16 BCE-with-logits gradient": lambda lib: grad_of(
        lib,
        np.zeros(70000),
        lambda t: functional(lib).binary_cross_entropy_with_logits(
            t, lib.ones(70000, dtype=lib.float16)
        ),
        np.float16,
    ),
    "cross_entropy with a -inf logit": lambda lib: _cross_entropy(lib, [[0.0, NEG, 3.0]], [2]),
    "cross_entropy, -inf at the target": lambda lib: _cross_entropy(lib, [[0.0, NEG, 3.0]], [1]),
    "cross_entropy, ignored -inf row": lambda lib: _cross_entropy(
        lib, [[0.0, NEG, 3.0], [NEG, NEG, NEG]], [2, -100]
    ),
}


@pytest.mark.parity
@pytest.mark.parametrize("case", list(PROBE))
def test_matches_pytorch(case):
    assert_matches_pytorch(case, PROBE[case])


# Probability targets that require grad: d loss / d target = -log_softmax(input) times the weights,
# (1 - label_smoothing), the reduction (it raised NotImplementedError)
SOFT_OPTIONS = {
    "mean": {},
    "sum, weights": {"reduction": "sum", "weight": [1.0, 2.0, 0.5]},
    "none, smoothing": {"reduction": "none", "label_smoothing": 0.2},
    "mean, weights, smoothing": {"weight": [0.3, 1.0, 2.0], "label_smoothing": 0.1},
}


def _soft_call(lib, x, t, options):
    options = dict(options)
    if "weight" in options:
        options["weight"] = lib.tensor(options["weight"], dtype=lib.float64)
    return functional(lib).cross_entropy(x, t, **options)


@pytest.mark.parametrize("options", list(SOFT_OPTIONS))
@pytest.mark.parametrize("shape", [(4, 3), (3,), (2, 3, 2)])
def test_cross_entropy_soft_target_gradcheck(options, shape):
    rng = np.random.default_rng(0)
    x = tl.tensor(rng.normal(size=shape), requires_grad=True)
    probs = rng.dirichlet(np.ones(3), size=int(np.prod(shape)) // 3)
    target = np.moveaxis(probs.reshape(shape[:1] + shape[2:] + (3,)), -1, 1) if len(shape) > 1 \
        else probs[0]
    t = tl.tensor(target, requires_grad=True)
    assert tl.autograd.gradcheck(lambda a, b: _soft_call(tl, a, b, SOFT_OPTIONS[options]), (x, t))


def test_cross_entropy_soft_target_gradient_is_minus_log_softmax():
    x = tl.tensor([[1.0, 2.0, 0.5], [0.1, -1.0, 3.0]], dtype=tl.float64)
    t = tl.tensor([[0.2, 0.5, 0.3], [1.0, 0.0, 0.0]], dtype=tl.float64, requires_grad=True)
    F.cross_entropy(x, t).backward()
    np.testing.assert_allclose(t.grad.numpy(), -x.log_softmax(dim=1).numpy() / 2, rtol=1e-14)
    with pytest.raises(ValueError, match="probability targets must have the input's shape"):
        F.cross_entropy(x, tl.tensor([[0.5, 0.5]], dtype=tl.float64, requires_grad=True))


@pytest.mark.parity
@pytest.mark.parametrize("options", list(SOFT_OPTIONS))
def test_cross_entropy_soft_target_gradients_match_pytorch(options):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(4)
    logits, target = rng.normal(size=(5, 3)), rng.dirichlet(np.ones(3), size=5)
    upstream = rng.normal(size=(5,))
    results = []
    for lib in (tl, torch):
        x = lib.tensor(logits, requires_grad=True)
        t = lib.tensor(target, requires_grad=True)
        loss = _soft_call(lib, x, t, SOFT_OPTIONS[options])
        (loss * lib.tensor(upstream if loss.ndim else 1.0)).sum().backward()
        results.append((loss.detach().numpy(), x.grad.numpy(), t.grad.numpy()))
    for ours, theirs in zip(*results, strict=True):
        np.testing.assert_allclose(ours, theirs, rtol=1e-12, atol=1e-14)


@pytest.mark.parity
def test_linear_cross_entropy_soft_target_gradients_match_pytorch():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(5)
    h, w, target = rng.normal(size=(4, 3)), rng.normal(size=(5, 3)), rng.dirichlet(np.ones(5), 4)
    results = []
    for lib in (tl, torch):
        x, weight = lib.tensor(h, requires_grad=True), lib.tensor(w, requires_grad=True)
        t = lib.tensor(target, requires_grad=True)
        functional(lib).linear_cross_entropy(x, weight, t).backward()
        results.append((x.grad.numpy(), weight.grad.numpy(), t.grad.numpy()))
    for ours, theirs in zip(*results, strict=True):
        np.testing.assert_allclose(ours, theirs, rtol=1e-12, atol=1e-14)


@pytest.mark.parity
def test_probability_targets_refuse_a_nonnegative_ignore_index():
    torch = pytest.importorskip("torch")
    x = np.random.default_rng(0).normal(size=(3, 4))
    t = np.random.default_rng(1).dirichlet(np.ones(4), size=3)
    for ignore_index in (0, 2, 7):
        for lib in (torch, tl):
            with pytest.raises(RuntimeError, match="ignore_index is not supported for floating"):
                lib.nn.functional.cross_entropy(lib.tensor(x), lib.tensor(t),
                                                ignore_index=ignore_index)
            with pytest.raises(RuntimeError, match="ignore_index is not supported for floating"):
                lib.nn.CrossEntropyLoss(ignore_index=ignore_index)(lib.tensor(x), lib.tensor(t))
    for ignore_index in (-100, -1):
        ours = tl.nn.functional.cross_entropy(tl.tensor(x), tl.tensor(t), ignore_index=ignore_index)
        theirs = torch.nn.functional.cross_entropy(torch.tensor(x), torch.tensor(t),
                                                   ignore_index=ignore_index)
        np.testing.assert_allclose(ours.item(), theirs.item(), rtol=1e-12)
