"""Chapter 7, section 14: activation checkpointing (``tensorlib.utils.checkpoint``): gradients
bitwise equal to those without it, dropout with the generators' states restored, tuple outputs,
non-tensor and keyword arguments, parameters whose inputs need no gradient, checkpoint_sequential,
nested checkpoints, hooks, errors and warnings, and parity with PyTorch's."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import tensorlib as tl
from tensorlib import nn
from tensorlib.utils.checkpoint import checkpoint, checkpoint_sequential


def bits(value):
    array = np.asarray(value.numpy() if isinstance(value, tl.Tensor) else value)
    return array.dtype, array.shape, array.tobytes()


def blocks(depth=4, width=6, p=0.0, dtype=None):
    layers = []
    for k in range(depth):
        layers += [nn.Linear(width, width, generator=tl.Generator(k)), nn.GELU()]
        if p:
            layers.append(nn.Dropout(p))
    model = nn.Sequential(*layers)
    return model.double() if dtype == "float64" else model


def step(model, x, run):
    """Loss, every parameter gradient and the input's gradient after one backward through run."""
    model.zero_grad()
    if x.requires_grad:
        x.grad = None
    tl.manual_seed(3)
    loss = run(model, x).square().mean()
    loss.backward()
    grads = [p.grad for p in model.parameters()] + ([x.grad] if x.requires_grad else [])
    return [bits(loss.detach())] + [bits(g) for g in grads]


RUNS = {
    "plain": lambda m, x: m(x),
    "whole": lambda m, x: checkpoint(m, x, use_reentrant=False),
    "reentrant": lambda m, x: checkpoint(m, x, use_reentrant=True),
    "no-rng": lambda m, x: checkpoint(m, x, use_reentrant=False, preserve_rng_state=False),
    "seq2": lambda m, x: checkpoint_sequential(m, 2, x, use_reentrant=False),
    "seq3": lambda m, x: checkpoint_sequential(m, 3, x, use_reentrant=True),
    "seq-all": lambda m, x: checkpoint_sequential(m, len(m), x, use_reentrant=False),
    "seq1": lambda m, x: checkpoint_sequential(m, 1, x, use_reentrant=False),
}


@pytest.mark.parametrize("name", [n for n in RUNS if n not in ("plain", "no-rng")])
@pytest.mark.parametrize("p", [0.0, 0.3])
@pytest.mark.parametrize("input_grad", [True, False])
def test_gradients_are_bitwise_those_without_checkpointing(name, p, input_grad):
    model = blocks(p=p)
    x = tl.randn(5, 6, generator=tl.Generator(9)).requires_grad_(input_grad)
    assert step(model, x, RUNS[name]) == step(model, x, RUNS["plain"])


def test_without_preserved_rng_state_dropout_draws_another_mask():
    model = blocks(p=0.5)
    x = tl.randn(5, 6, generator=tl.Generator(9)).requires_grad_()
    plain, unpreserved = step(model, x, RUNS["plain"]), step(model, x, RUNS["no-rng"])
    assert plain[0] == unpreserved[0]  # the forward is the same
    assert plain[1:] != unpreserved[1:]


def test_a_dropout_layers_own_generator_is_restored_and_left_as_it_would_be():
    lin = nn.Linear(4, 4, generator=tl.Generator(0))
    drop = nn.Dropout(0.5, generator=tl.Generator(5))
    x = tl.randn(3, 4, generator=tl.Generator(1)).requires_grad_()

    def run(use):
        lin.zero_grad()
        drop.generator.manual_seed(5)
        y = use(lambda h: drop(lin(h)), x)
        y.sum().backward()
        return bits(lin.weight.grad), bits(drop.generator.get_state())

    plain = run(lambda f, h: f(h))
    assert run(lambda f, h: checkpoint(f, h, use_reentrant=False)) == plain
    assert run(lambda f, h: checkpoint(drop, lin(h), use_reentrant=False)) == plain


def test_the_default_generator_continues_as_without_checkpointing():
    model = blocks(p=0.5)
    x = tl.randn(5, 6, generator=tl.Generator(9))
    for run in (RUNS["plain"], RUNS["seq2"]):
        step(model, x, run)
        after = bits(tl.get_rng_state())
        if run is RUNS["plain"]:
            expected = after
    assert after == expected


def test_tuple_outputs_non_tensor_arguments_and_keyword_arguments():
    weight = tl.randn(3, 3, dtype=tl.float64, generator=tl.Generator(0)).requires_grad_()

    def f(a, label, b=None, scale=1.0):
        h = a @ weight * scale
        return h, label, {"total": (h * b).sum(), "half": h.to(tl.float32)}, 7

    a = tl.randn(2, 3, dtype=tl.float64, generator=tl.Generator(1)).requires_grad_()
    b = tl.randn(2, 3, dtype=tl.float64, generator=tl.Generator(2)).requires_grad_()
    results = []
    for use in (lambda *args, **kw: f(*args, **kw),
                lambda *args, **kw: checkpoint(f, *args, use_reentrant=False, **kw)):
        for t in (a, b, weight):
            t.grad = None
        h, label, parts, seven = use(a, "x", b=b, scale=2.0)
        assert (label, seven) == ("x", 7) and parts["half"].dtype == tl.float32
        assert h.requires_grad and parts["total"].requires_grad
        (h.square().sum() + parts["total"] + parts["half"].sum()).backward()
        results.append([bits(t.grad) for t in (a, b, weight)])
    assert results[0] == results[1]


def test_unused_outputs_and_outputs_that_need_no_gradient():
    w = tl.ones(3).requires_grad_()
    x = tl.ones(3)
    used, constant = checkpoint(lambda v: (v * w, v.detach() * 2), x, use_reentrant=False)
    # the recomputed constant needs no gradient; used gets zeros, as in PyTorch's reentrant variant
    constant.sum().backward(retain_graph=True)  # one node for both outputs: keep it
    np.testing.assert_array_equal(w.grad.numpy(), np.zeros(3))
    used.sum().backward()
    np.testing.assert_array_equal(w.grad.numpy(), np.ones(3))


def test_parameters_get_gradients_when_no_input_requires_grad():
    model = blocks()
    x = tl.randn(5, 6, generator=tl.Generator(9))
    y = checkpoint(model, x, use_reentrant=True)
    assert y.requires_grad
    assert step(model, x, RUNS["reentrant"]) == step(model, x, RUNS["plain"])


def test_autograd_grad_reaches_inputs_and_captured_parameters_without_touching_grad():
    model = blocks()
    x = tl.randn(5, 6, generator=tl.Generator(9)).requires_grad_()
    wanted = [x, model[0].weight, model[6].bias]
    expected = tl.autograd.grad(model(x).sum(), wanted)
    got = tl.autograd.grad(checkpoint_sequential(model, 2, x, use_reentrant=False).sum(), wanted)
    assert [bits(g) for g in got] == [bits(g) for g in expected]
    assert all(p.grad is None for p in model.parameters()) and x.grad is None


def test_nested_checkpoints():
    model = blocks(depth=6, p=0.3)

    def run(m, x):
        def outer(h):
            h = checkpoint(m[0:4], h, use_reentrant=False)
            return checkpoint_sequential(m[4:12], 2, h, use_reentrant=False)

        return checkpoint(outer, x, use_reentrant=False) + m[12:](x)

    x = tl.randn(5, 6, generator=tl.Generator(9)).requires_grad_()
    plain = lambda m, x: m[0:12](x) + m[12:](x)  # noqa: E731
    assert step(model, x, run) == step(model, x, plain)


def test_hooks_see_the_whole_gradient_once_and_retain_graph_allows_a_second_pass():
    lin = nn.Linear(3, 3, generator=tl.Generator(0))
    seen = []
    lin.weight.register_hook(lambda g: seen.append(bits(g)))
    x = tl.randn(2, 3, generator=tl.Generator(1)).requires_grad_()
    (lin(x).sum() + lin(x * 2).sum()).backward()
    y = checkpoint(lambda h: lin(h).sum() + lin(h * 2).sum(), x, use_reentrant=False)
    y.backward(retain_graph=True)
    assert len(seen) == 2 and seen[0] == seen[1]
    y.backward()
    assert len(seen) == 3
    with pytest.raises(RuntimeError, match="second time"):
        y.backward()


def test_an_input_changed_in_place_before_backward_raises():
    lin = nn.Linear(3, 3)
    h = tl.randn(2, 3).requires_grad_() * 1
    y = checkpoint(lin, h, use_reentrant=False)
    with tl.no_grad():
        h.add_(1)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.sum().backward()


def test_under_no_grad_it_is_a_plain_call():
    lin = nn.Linear(3, 3)
    with tl.no_grad():
        y = checkpoint(lin, tl.ones(2, 3), use_reentrant=False)
    assert not y.requires_grad and y.grad_fn is None


def test_context_fn_wraps_the_forward_and_the_recomputation():
    log = []

    class Note:
        def __init__(self, name):
            self.name = name

        def __enter__(self):
            log.append((self.name, tl.is_grad_enabled()))

        def __exit__(self, *exc):
            return None

    x = tl.ones(2).requires_grad_()
    y = checkpoint(lambda v: v * 3, x, use_reentrant=False,
                   context_fn=lambda: (Note("forward"), Note("recompute")))
    y.sum().backward()
    assert log == [("forward", True), ("recompute", True)]
    np.testing.assert_array_equal(x.grad.numpy(), [3.0, 3.0])


def test_a_function_that_recomputes_differently_is_caught():
    calls = []

    def changing(v):
        calls.append(1)
        return v[: len(calls)] * 2

    x = tl.ones(4).requires_grad_()
    y = checkpoint(changing, x, use_reentrant=False)
    with pytest.raises(RuntimeError, match="different metadata"):
        y.sum().backward()
    calls.clear()

    def dtype_changing(v):
        calls.append(1)
        return v * 2 if len(calls) == 1 else v.double() * 2

    y = checkpoint(dtype_changing, x, use_reentrant=False, determinism_check="none")
    y.sum().backward()  # not checked: the gradient is that of the recomputed function
    np.testing.assert_array_equal(x.grad.numpy(), [2.0] * 4)


def test_errors_name_what_was_expected():
    x = tl.ones(2).requires_grad_()
    with pytest.raises(TypeError, match="callable, got int"):
        checkpoint(5, x, use_reentrant=False)
    with pytest.raises(ValueError, match="Unexpected keyword arguments: scale"):
        checkpoint(lambda v, scale: v * scale, x, scale=2, use_reentrant=True)
    with pytest.raises(ValueError, match="only supported when use_reentrant=False"):
        checkpoint(lambda v: v, x, use_reentrant=True, debug=True)
    with pytest.raises(ValueError, match="incompatible with non-default context_fn"):
        checkpoint(lambda v: v, x, use_reentrant=False, debug=True,
                   context_fn=lambda: (warnings.catch_warnings(), warnings.catch_warnings()))
    with pytest.raises(ValueError, match="determinism_check should be one of"):
        checkpoint(lambda v: v, x, use_reentrant=False, determinism_check="strict")
    with pytest.raises(TypeError, match=r"functions must be callable, got \['str'\]"):
        checkpoint_sequential([tl.abs, "relu"], 1, x, use_reentrant=False)
    for segments in (0, 3, 1.0):
        with pytest.raises(ValueError, match="segments must be an int from 1 to 2"):
            checkpoint_sequential([tl.abs, tl.abs], segments, x, use_reentrant=False)
    with pytest.raises(ValueError, match="Unexpected keyword arguments: extra"):
        checkpoint_sequential([tl.abs], 1, x, use_reentrant=False, extra=1)


def test_leaving_out_use_reentrant_warns_as_pytorch_does():
    x = tl.ones(2).requires_grad_()
    with pytest.warns(UserWarning, match="use_reentrant parameter should be passed explicitly"):
        y = checkpoint(lambda v: v * 2, x)
    y.sum().backward()
    with pytest.warns(UserWarning, match="checkpoint_sequential: the use_reentrant parameter"):
        checkpoint_sequential([tl.abs, tl.abs], 2, x)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        checkpoint(lambda v: v * 2, x, use_reentrant=False)
        checkpoint_sequential([tl.abs, tl.abs], 2, x, use_reentrant=True)


def test_reachable_as_in_pytorch():
    assert tl.utils.checkpoint.checkpoint is checkpoint
    assert set(tl.utils.checkpoint.__all__) >= {"checkpoint", "checkpoint_sequential",
                                                 "noop_context_fn"}


def test_gradcheck_through_a_checkpoint():
    w = tl.randn(3, 3, dtype=tl.float64, generator=tl.Generator(0))

    def f(a, b):
        return checkpoint(lambda u, v: ((u @ w).tanh() * v, u.sum()), a, b,
                          use_reentrant=False)[0]

    a = tl.randn(2, 3, dtype=tl.float64, generator=tl.Generator(1)).requires_grad_()
    b = tl.randn(2, 3, dtype=tl.float64, generator=tl.Generator(2)).requires_grad_()
    assert tl.autograd.gradcheck(f, (a, b))


@pytest.mark.parity
@pytest.mark.parametrize("segments", [0, 1, 2, 3])
@pytest.mark.parametrize("reentrant", [True, False])
@pytest.mark.parametrize("shape", [(4, 5), (2, 3, 5)])
def test_gradients_match_pytorch(segments, reentrant, shape):
    torch = pytest.importorskip("torch")
    from torch.utils.checkpoint import checkpoint as torch_checkpoint
    from torch.utils.checkpoint import checkpoint_sequential as torch_sequential

    rng = np.random.default_rng(segments + len(shape))
    weights = [(rng.standard_normal((5, 5)), rng.standard_normal(5)) for _ in range(3)]
    data = rng.standard_normal(shape)
    results = []
    for lib, ckpt, seq in ((tl, checkpoint, checkpoint_sequential),
                           (torch, torch_checkpoint, torch_sequential)):
        layers = []
        for w, b in weights:
            linear = lib.nn.Linear(5, 5).double()
            with lib.no_grad():
                linear.weight.copy_(lib.tensor(w))
                linear.bias.copy_(lib.tensor(b))
            layers += [linear, lib.nn.GELU(), lib.nn.Tanh()]
        model = lib.nn.Sequential(*layers)
        x = lib.tensor(data, requires_grad=True)
        if segments == 0:
            y = ckpt(lambda h, m=model: (m(h), h.sum()), x, use_reentrant=reentrant)[0]
        else:
            y = seq(model, segments, x, use_reentrant=reentrant)
        (y * y).sum().backward()
        results.append([y.detach().numpy(), x.grad.numpy()]
                       + [p.grad.numpy() for p in model.parameters()])
    for ours, theirs in zip(*results, strict=True):
        np.testing.assert_allclose(ours, theirs, rtol=1e-12, atol=1e-13)


@pytest.mark.parity
def test_parameters_without_input_gradient_match_pytorchs_non_reentrant():
    torch = pytest.importorskip("torch")
    from torch.utils.checkpoint import checkpoint as torch_checkpoint

    rng = np.random.default_rng(0)
    w, data = rng.standard_normal((4, 3)), rng.standard_normal((2, 4))
    grads = []
    for lib, ckpt in ((tl, checkpoint), (torch, torch_checkpoint)):
        weight = lib.tensor(w, requires_grad=True)
        y = ckpt(lambda h, s, weight=weight: (h @ weight).sin() * s, lib.tensor(data), 1.5,
                 use_reentrant=False)
        y.sum().backward()
        grads.append(weight.grad.numpy())
    np.testing.assert_allclose(grads[0], grads[1], rtol=1e-12, atol=1e-14)


def test_outputs_without_floating_point_tensors_pass_through():
    x = tl.randn(2, 3, generator=tl.Generator(0)).requires_grad_()
    index = checkpoint(lambda v: v.argmax(dim=1), x, use_reentrant=False)
    assert index.dtype == tl.int64 and not index.requires_grad
    assert checkpoint(lambda v: ("none", 3), x, use_reentrant=False) == ("none", 3)
