"""Tensor.register_hook (chapter 2, section 25.1): what the hooks see and change, in which order,
how often, their removal, and the same calls and gradients as PyTorch's."""

from __future__ import annotations

import gc

import numpy as np
import pytest

import tensorlib as tl
from tensorlib.engine.function import _gradient_hooks


def _scenario(lib, calls):
    """One graph with hooks on a non-leaf, a leaf used twice and a retained tensor."""
    x = lib.tensor([1.0, -2.0, 3.0], dtype=lib.float64, requires_grad=True)
    w = lib.tensor([0.5, 0.25, 2.0], dtype=lib.float64, requires_grad=True)
    h = x * w
    h.retain_grad()
    h.register_hook(lambda g: calls.append(("h", g.tolist())))
    h.register_hook(lambda g: g * 3)
    x.register_hook(lambda g: calls.append(("x", g.tolist())))
    w.register_hook(lambda g: g.clamp(-1.0, 1.0))
    y = (h * h).sum() + (x * 2).sum()
    y.backward()
    return x.grad.tolist(), w.grad.tolist(), h.grad.tolist()


@pytest.mark.parity
def test_hooks_see_and_change_the_gradients_as_in_pytorch():
    torch = pytest.importorskip("torch")
    ours, theirs = [], []
    assert _scenario(tl, ours) == _scenario(torch, theirs)
    assert ours == theirs


@pytest.mark.parity
def test_autograd_grad_runs_the_hooks_as_in_pytorch():
    torch = pytest.importorskip("torch")
    results = []
    for lib in (tl, torch):
        x = lib.tensor([1.0, 2.0], dtype=lib.float64, requires_grad=True)
        h = x.exp()
        h.register_hook(lambda g: g * 10)
        x.register_hook(lambda g: g + 1)
        results.append([g.tolist() for g in lib.autograd.grad((h * h).sum(), [x, h])])
    np.testing.assert_allclose(np.array(results[0]), np.array(results[1]), rtol=1e-12)


def test_a_leaf_used_twice_calls_its_hook_once_with_the_sum():
    w = tl.tensor([1.0, 1.0], requires_grad=True)
    calls = []
    w.register_hook(lambda g: calls.append(g.tolist()))
    (w * 2 + w * 3).sum().backward()
    assert calls == [[5.0, 5.0]] and w.grad.tolist() == [5.0, 5.0]


def test_hooks_run_in_order_and_removal_stops_them():
    x = tl.tensor([1.0, 2.0], requires_grad=True)
    h = x * 1
    order = []
    first = h.register_hook(lambda g: order.append(1))
    h.register_hook(lambda g: order.append(2))
    h.sum().backward(retain_graph=True)
    first.remove()
    first.remove()  # a second remove does nothing
    h.sum().backward()
    assert order == [1, 2, 2]


def test_a_hook_may_change_its_gradient_in_place_and_nothing_else():
    a = tl.tensor([1.0, 2.0], requires_grad=True)
    b = tl.tensor([3.0, 4.0], requires_grad=True)
    s = a + b  # Add hands the same gradient array to both inputs
    a.register_hook(lambda g: g.mul_(10))
    s.sum().backward()
    assert a.grad.tolist() == [10.0, 10.0] and b.grad.tolist() == [1.0, 1.0]


def test_the_handle_is_a_context_manager():
    x = tl.tensor([1.0], requires_grad=True)
    with x.register_hook(lambda g: g * 5):
        (x * 1).sum().backward()
    (x * 1).sum().backward()
    assert x.grad.tolist() == [6.0]


def test_bad_hooks_and_bad_results_are_refused():
    with pytest.raises(RuntimeError, match="doesn't require gradient"):
        tl.tensor([1.0]).register_hook(lambda g: g)
    x = tl.tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(TypeError, match="callable"):
        x.register_hook(3)
    x.register_hook(lambda g: g.sum())
    with pytest.raises(RuntimeError, match="shape"):
        (x * 2).sum().backward()
    assert x.grad is None  # nothing was accumulated
    y = tl.tensor([1.0, 2.0], requires_grad=True)
    y.register_hook(lambda g: g.double())
    with pytest.raises(RuntimeError, match="dtype"):
        (y * 2).sum().backward()


def test_the_registry_forgets_a_tensor_that_is_gone():
    before = len(_gradient_hooks)
    x = tl.tensor([1.0], requires_grad=True)
    x.register_hook(lambda g: None)
    assert len(_gradient_hooks) == before + 1
    del x
    gc.collect()
    assert len(_gradient_hooks) == before


def test_no_hooks_leave_the_pass_unchanged():
    rng = np.random.default_rng(0)
    a = tl.tensor(rng.standard_normal((3, 4)), requires_grad=True)
    (a.exp() * a).sum().backward()
    expected = a.grad.numpy().copy()
    a.grad = None
    a.register_hook(lambda g: None)
    (a.exp() * a).sum().backward()
    np.testing.assert_array_equal(a.grad.numpy(), expected)
