"""get_total_norm, clip_grads_with_norm_, the old clip_grad_norm and the foreach arguments
(chapter 6, gradient clipping), against torch 2.13."""

from __future__ import annotations

import math

import numpy as np
import pytest

import tensorlib as tl

RNG = np.random.default_rng(0)
GRADS = [RNG.standard_normal((3, 4)) * 5, RNG.standard_normal(4), RNG.standard_normal((2, 2, 2))]


def _params(lib, dtype):
    params = []
    for g in GRADS:
        p = lib.nn.Parameter(lib.zeros(*g.shape, dtype=dtype))
        p.grad = lib.tensor(g, dtype=dtype)
        params.append(p)
    return params


@pytest.mark.parity
@pytest.mark.parametrize("norm_type", [2.0, 1.0, 3.5, math.inf])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_get_total_norm_and_clip_grads_with_norm_match_pytorch(norm_type, dtype):
    torch = pytest.importorskip("torch")
    results = []
    for lib in (tl, torch):
        params = _params(lib, getattr(lib, dtype))
        norm = lib.nn.utils.get_total_norm([p.grad for p in params], norm_type, foreach=None)
        lib.nn.utils.clip_grads_with_norm_(params, 2.0, norm)
        results.append((norm.detach().numpy(), [p.grad.numpy() for p in params]))
    (ours, our_grads), (theirs, their_grads) = results
    assert ours.dtype == theirs.dtype and ours.shape == ()
    np.testing.assert_allclose(ours, theirs, rtol=1e-6)
    for mine, reference in zip(our_grads, their_grads, strict=True):
        np.testing.assert_allclose(mine, reference, rtol=1e-6, atol=1e-7)


@pytest.mark.parity
def test_clip_grad_norm_with_foreach_and_the_old_name_match_pytorch():
    torch = pytest.importorskip("torch")
    results = []
    for lib in (tl, torch):
        first, second = _params(lib, lib.float64), _params(lib, lib.float64)
        total = lib.nn.utils.clip_grad_norm_(first, 1.0, foreach=True)
        with pytest.warns(FutureWarning, match="clip_grad_norm` is now deprecated") as caught:
            old = lib.nn.utils.clip_grad_norm(second, 1.0)
        lib.nn.utils.clip_grad_value_(first, 0.05, foreach=True)
        results.append((total.item(), old.item(), [p.grad.numpy() for p in first + second],
                         str(caught[0].message)))
    (t1, o1, g1, m1), (t2, o2, g2, m2) = results
    assert m1 == m2
    np.testing.assert_allclose([t1, o1], [t2, o2], rtol=1e-12)
    for mine, reference in zip(g1, g2, strict=True):
        np.testing.assert_allclose(mine, reference, rtol=1e-12)


@pytest.mark.parity
def test_empty_inputs_and_errors_match_pytorch():
    torch = pytest.importorskip("torch")
    assert tl.nn.utils.get_total_norm([]).item() == torch.nn.utils.get_total_norm([]).item() == 0
    assert tl.nn.utils.get_total_norm([]).dtype == tl.float32
    bad = tl.nn.Parameter(tl.zeros(2))
    bad.grad = tl.tensor([float("nan"), 1.0])
    with pytest.raises(RuntimeError, match="is non-finite, so it cannot be clipped"):
        tl.nn.utils.get_total_norm([bad.grad], error_if_nonfinite=True)
    with pytest.raises(TypeError, match="expected Tensors, got list at position 0"):
        tl.nn.utils.get_total_norm([[1.0]])
    with pytest.raises(ValueError, match="norm_type must be positive"):
        tl.nn.utils.get_total_norm([bad.grad], norm_type=0)
    p = tl.nn.Parameter(tl.ones(2))
    p.grad = tl.ones(2)
    tl.nn.utils.clip_grads_with_norm_(p, 1.0, 0.5)  # a norm below max_norm: unchanged
    assert p.grad.tolist() == [1.0, 1.0]
