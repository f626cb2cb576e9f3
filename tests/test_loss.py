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
