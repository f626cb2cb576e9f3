"""Chapter 2, section 28.2: ``tensorlib.autograd.graph`` (saved-tensor hooks, multi-grad hooks,
``Node``, gradient edges, ``increment_version``), against ``torch.autograd.graph``."""

from __future__ import annotations

import threading

import numpy as np
import pytest

import tensorlib as tl
from tensorlib.autograd import graph


def _square_op(lib):
    """A custom op saving its input and its output, written once for either library."""

    class Square(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            y = x * x
            ctx.save_for_backward(x, y)
            return y

        @staticmethod
        def backward(ctx, grad):
            x, _ = ctx.saved_tensors
            return grad * 2 * x

    return Square


def _run_hooks_program(lib):
    """Which tensors are packed, unpacked, and the gradient, with nested hooks."""
    log = []
    square = _square_op(lib)
    x = lib.tensor([1.0, -2.0, 3.0], dtype=lib.float64, requires_grad=True)

    def pack(tag):
        def hook(t):
            log.append(("pack", tag, tuple(t.shape), t is x))
            return (tag, t.clone())
        return hook

    def unpack(packed):
        log.append(("unpack", packed[0]))
        return packed[1]

    with lib.autograd.graph.saved_tensors_hooks(pack("outer"), unpack):
        with lib.autograd.graph.saved_tensors_hooks(pack("inner"), unpack):
            y = square.apply(x)
        z = square.apply(y)
    z.sum().backward()
    return log, x.grad.tolist()


def test_hooks_pack_each_saved_tensor_and_unpack_on_use():
    log, grad = _run_hooks_program(tl)
    assert [e for e in log if e[0] == "pack"] == [
        ("pack", "inner", (3,), True), ("pack", "inner", (3,), False),
        ("pack", "outer", (3,), False), ("pack", "outer", (3,), False),
    ]
    assert log.count(("unpack", "inner")) == 2 and log.count(("unpack", "outer")) == 2
    assert np.allclose(grad, [4 * v**3 for v in (1.0, -2.0, 3.0)])


@pytest.mark.parity
def test_hooks_parity():
    torch = pytest.importorskip("torch")
    assert _run_hooks_program(tl) == _run_hooks_program(torch)


def test_engine_ops_are_not_packed():
    calls = []
    x = tl.tensor([1.0, 2.0], requires_grad=True)
    with graph.saved_tensors_hooks(lambda t: calls.append(t) or t, lambda t: t):
        (x * x).sum().backward()
    assert calls == [] and x.grad.tolist() == [2.0, 4.0]


def test_unpack_is_called_on_every_access():
    seen = []

    class Twice(tl.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * 2

        @staticmethod
        def backward(ctx, grad):
            first, second = ctx.saved_tensors, ctx.saved_tensors
            return grad * 2 + 0 * (first[0] + second[0])

    x = tl.ones(2, requires_grad=True)
    with graph.saved_tensors_hooks(lambda t: t, lambda t: seen.append(1) or t):
        y = Twice.apply(x)
    y.sum().backward()
    assert len(seen) == 2


def test_packed_tensors_skip_the_in_place_check_as_in_pytorch():
    square = _square_op(tl)
    x = tl.tensor([1.0, 2.0], requires_grad=True)
    with graph.saved_tensors_hooks(lambda t: t.detach().clone(), lambda t: t):
        y = square.apply(x)
    with tl.no_grad():
        x.mul_(3.0)
    y.sum().backward()  # the packed copy holds the old values
    assert x.grad.tolist() == [2.0, 4.0]


def test_hooks_are_used_only_when_the_op_is_recorded():
    calls = []
    square = _square_op(tl)
    with graph.saved_tensors_hooks(lambda t: calls.append(t) or t, lambda t: t):
        square.apply(tl.ones(2))  # nothing requires grad
        with tl.no_grad():
            square.apply(tl.ones(2, requires_grad=True))
    assert calls == []


def test_unpack_must_return_a_tensor():
    square = _square_op(tl)
    with graph.saved_tensors_hooks(lambda t: t, lambda t: 3):
        y = square.apply(tl.ones(2, requires_grad=True))
    with pytest.raises(TypeError, match="expected to be a Tensor but got result of type int"):
        y.sum().backward()


def test_hooks_must_be_callable():
    with pytest.raises(TypeError, match="must be callable, got int and int"):
        with graph.saved_tensors_hooks(1, 2):
            pass
    assert graph.saved_tensors_hooks.__enter__  # the stack was left empty
    with graph.disable_saved_tensors_hooks("still usable"):
        pass


def test_hooks_are_per_thread():
    calls = []
    square = _square_op(tl)
    x = tl.ones(2, requires_grad=True)

    def other():
        square.apply(x)

    with graph.saved_tensors_hooks(lambda t: calls.append(t) or t, lambda t: t):
        thread = threading.Thread(target=other)
        thread.start()
        thread.join()
    assert calls == []


def test_save_on_cpu_keeps_the_tensors():
    square = _square_op(tl)
    x = tl.tensor([1.0, 2.0], dtype=tl.float64, requires_grad=True)
    with graph.save_on_cpu(pin_memory=True):
        y = square.apply(x)
    saved = y.grad_fn.ctx.saved_tensors
    assert saved[0] is x and saved[1] is y
    assert tl.autograd.gradcheck(
        lambda t: square.apply(t), (x,)
    )


@pytest.mark.parity
def test_save_on_cpu_gradient_parity():
    torch = pytest.importorskip("torch")
    grads = []
    for lib in (tl, torch):
        x = lib.tensor([1.0, -2.0], dtype=lib.float64, requires_grad=True)
        with lib.autograd.graph.save_on_cpu(pin_memory=False):
            _square_op(lib).apply(x).sum().backward()
        grads.append(x.grad.tolist())
    assert grads[0] == grads[1]


@pytest.mark.parity
def test_disable_saved_tensors_hooks_parity():
    torch = pytest.importorskip("torch")
    for lib in (tl, torch):
        g = lib.autograd.graph
        with g.disable_saved_tensors_hooks("no hooks here"):
            with pytest.raises(RuntimeError, match="no hooks here"):
                with g.saved_tensors_hooks(lambda t: t, lambda t: t):
                    pass
            with g.disable_saved_tensors_hooks("nested"):
                pass
        with g.saved_tensors_hooks(lambda t: t, lambda t: t):
            with pytest.raises(RuntimeError, match="too late"):
                with g.disable_saved_tensors_hooks("too late"):
                    pass
        with g.saved_tensors_hooks(lambda t: t, lambda t: t):  # enabled again after the block
            pass


def _multi_program(lib, mode):
    g = lib.autograd.graph
    a = lib.tensor([1.0, 2.0], dtype=lib.float64, requires_grad=True)
    b = lib.tensor([3.0, 4.0], dtype=lib.float64, requires_grad=True)
    c = a * 1.5  # a non-leaf among them
    seen = []
    if mode == "all":
        def fn(grads):
            seen.append([None if t is None else t.tolist() for t in grads])
    else:
        def fn(grad):
            seen.append(grad.tolist())
    handle = g.register_multi_grad_hook((a, b, c), fn, mode=mode)
    (c * 2).sum().backward(retain_graph=True)
    (b * b).sum().backward()
    if mode == "all":  # "any": which of two gradients of one step is first is the engine's order
        (a * 2 + b * b).sum().backward()
        (c * b).sum().backward(retain_graph=True)
    (c.exp() * 3).sum().backward(retain_graph=True)  # c before a
    handle.remove()
    (a * b).sum().backward()
    return seen


@pytest.mark.parity
@pytest.mark.parametrize("mode", ["all", "any"])
def test_register_multi_grad_hook_parity(mode):
    torch = pytest.importorskip("torch")
    assert _multi_program(tl, mode) == _multi_program(torch, mode)


def test_register_multi_grad_hook_all_reports_none_for_unreached():
    assert _multi_program(tl, "all")[:2] == [
        [[2.0 * 1.5, 2.0 * 1.5], None, [2.0, 2.0]], [None, [6.0, 8.0], None]
    ]


def test_register_multi_grad_hook_with_autograd_grad():
    a = tl.tensor([1.0, 2.0], dtype=tl.float64, requires_grad=True)
    b = tl.tensor([3.0, 4.0], dtype=tl.float64, requires_grad=True)
    seen = []
    graph.register_multi_grad_hook((a, b), lambda grads: seen.append(grads))
    tl.autograd.grad((a * b).sum(), (a,))  # PyTorch refuses leaves under autograd.grad here
    assert [None if g is None else g.tolist() for g in seen[0]] == [[3.0, 4.0], [1.0, 2.0]]


def test_register_multi_grad_hook_in_a_recorded_pass():
    a = tl.tensor([1.0, 2.0], dtype=tl.float64, requires_grad=True)
    seen = []
    graph.register_multi_grad_hook((a,), lambda grads: seen.append(grads[0].tolist()))
    (g,) = tl.autograd.grad((a ** 3).sum(), a, create_graph=True)
    assert seen == [[3.0, 12.0]]
    g.sum().backward()
    assert seen == [[3.0, 12.0], [6.0, 12.0]]


@pytest.mark.parity
def test_register_multi_grad_hook_errors_parity():
    torch = pytest.importorskip("torch")
    for lib in (tl, torch):
        a = lib.ones(2, requires_grad=True)
        with pytest.raises(ValueError, match=r"one of \('all', 'any'\) but got x"):
            lib.autograd.graph.register_multi_grad_hook((a,), print, mode="x")
        with pytest.raises(AssertionError, match="Expected gradient function to be set"):
            lib.autograd.graph.register_multi_grad_hook((a, lib.ones(2)), print)


@pytest.mark.parity
def test_node_isinstance_parity():
    torch = pytest.importorskip("torch")
    for lib in (tl, torch):
        x = lib.ones(2, requires_grad=True)
        y = _square_op(lib).apply(x)
        for t in (x * 2, (x * 2).sum(), y):
            assert isinstance(t.grad_fn, lib.autograd.graph.Node)
        assert not isinstance(x, lib.autograd.graph.Node)
        assert not isinstance(None, lib.autograd.graph.Node)
        assert y.grad_fn.name() == "SquareBackward"


@pytest.mark.parity
def test_get_gradient_edge_parity():
    torch = pytest.importorskip("torch")
    for lib in (tl, torch):
        g = lib.autograd.graph
        h = lib.ones(2, requires_grad=True) * 2
        edge = g.get_gradient_edge(h)
        assert isinstance(edge, g.GradientEdge) and edge.node is h.grad_fn
        assert edge.output_nr == 0 and edge.ownership_token is None
        assert g.GradientEdge._fields == ("node", "output_nr", "ownership_token")
        with pytest.raises(RuntimeError, match="does not require gradients"):
            g.get_gradient_edge(lib.ones(2))


def test_get_gradient_edge_of_a_leaf_is_refused():
    with pytest.raises(NotImplementedError, match="a leaf has no node in tensorlib"):
        graph.get_gradient_edge(tl.ones(2, requires_grad=True))


@pytest.mark.parity
def test_increment_version_parity():
    torch = pytest.importorskip("torch")
    for lib in (tl, torch):
        g = lib.autograd.graph
        t = lib.ones(2)
        g.increment_version(t)
        assert t._version == 1
        g.increment_version([t, t])
        assert t._version == 3
        w = lib.ones(2, requires_grad=True)
        out = (w * w).sum()
        g.increment_version(w)
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            out.backward()


@pytest.mark.parity
def test_signatures_match_torch():
    torch = pytest.importorskip("torch")
    import inspect

    for name in ("saved_tensors_hooks", "save_on_cpu"):
        ours = getattr(graph, name).__init__
        theirs = getattr(torch.autograd.graph, name).__init__
        assert list(inspect.signature(ours).parameters) == list(
            inspect.signature(theirs).parameters
        )
    for name in ("disable_saved_tensors_hooks", "register_multi_grad_hook",
                 "get_gradient_edge", "increment_version"):
        ours = inspect.signature(getattr(graph, name)).parameters
        theirs = inspect.signature(getattr(torch.autograd.graph, name)).parameters
        assert [(p.name, p.kind, p.default) for p in ours.values()] == [
            (p.name, p.kind, p.default) for p in theirs.values()
        ]
    assert issubclass(graph.save_on_cpu, graph.saved_tensors_hooks)
