"""Chapter 2, section 33.3 (and 13, 17, 18): the recorded backward (``backward_graph``, run by
``create_graph=True``) of softmax, log_softmax and softmin, cumsum and flip, cross_entropy with
every option, nll_loss and binary_cross_entropy_with_logits.

Gradgradchecks in float64 (the recorded first derivative differentiated again, in the inputs and
in the upstream gradient, against central differences of the first-order gradient), parity with
PyTorch 2.13's double backward (every case, a MAML step, Hessians of cross_entropy in the logits,
a third derivative), and the first-order pass unchanged (it never calls ``backward_graph``)."""

from __future__ import annotations

import numpy as np
import pytest
from _gradgrad import central as _central
from _gradgrad import check_gradgrad, first_order
from _gradgrad import probe as _probe
from _gradgrad import upstream as _upstream

import tensorlib as tl
from tensorlib.engine.reductions import Cumsum
from tensorlib.engine.shape_ops import Flip
from tensorlib.engine.softmax_ops import LogSoftmax, Softmax
from tensorlib.nn.functional import loss as loss_module

RNG = np.random.default_rng(20)
X = RNG.standard_normal((5, 4))
X3 = RNG.standard_normal((3, 4, 2))
X4 = RNG.standard_normal((2, 3, 2, 2))
X1 = RNG.standard_normal(4)
T = np.array([0, 3, -100, 1, 2])
T3 = np.array([[0, 1], [3, -100], [2, 2]])
T4 = np.array([[[0, 2], [1, -100]], [[2, 2], [0, 1]]])
W = np.array([1.0, 2.0, 0.5, 1.5])
W3 = np.array([0.5, 1.0, 2.0])
PROBS = np.abs(RNG.standard_normal((5, 4)))
PROBS /= PROBS.sum(1, keepdims=True)
PROBS3 = np.abs(RNG.standard_normal((3, 4, 2)))
PROBS3 /= PROBS3.sum(1, keepdims=True)
TARGET01 = np.abs(np.sin(RNG.standard_normal((5, 4))))
POS = np.array([0.5, 1.0, 2.0, 3.0])


def _ce(**options):
    """cross_entropy of the logits (input 0) against constant targets, with ``options``."""
    target = options.pop("target", T)
    return lambda L, a: L.nn.functional.cross_entropy(a, L.tensor(target), **{
        k: (L.tensor(v) if isinstance(v, np.ndarray) else v) for k, v in options.items()
    })


def _nll(**options):
    target = options.pop("target", T)
    return lambda L, a: L.nn.functional.nll_loss(a, L.tensor(target), **{
        k: (L.tensor(v) if isinstance(v, np.ndarray) else v) for k, v in options.items()
    })


def _bce(**options):
    return lambda L, a, t: L.nn.functional.binary_cross_entropy_with_logits(a, t, **{
        k: (L.tensor(v) if isinstance(v, np.ndarray) else v) for k, v in options.items()
    })


# name -> (op on (library, *inputs), input arrays, indices of the inputs that require grad)
CASES = {
    "softmax-last": (lambda L, a: L.nn.functional.softmax(a, 1), [X], (0,)),
    "softmax-dim0": (lambda L, a: L.nn.functional.softmax(a, 0) * a, [X], (0,)),
    "softmax-middle": (lambda L, a: L.softmax(a, 1) ** 2, [X3], (0,)),
    "softmax-large": (lambda L, a: L.nn.functional.softmax(40 * a, -1), [X], (0,)),  # shifted
    "softmax-dtype": (lambda L, a: L.softmax(a, 1, dtype=L.float64) * a, [X], (0,)),
    "softmax-0d": (lambda L, a: L.nn.functional.softmax(a, 0) * a, [np.array(0.7)], (0,)),
    "softmax-method": (lambda L, a: a.softmax(-1).log(), [X3], (0,)),
    "softmin": (lambda L, a: L.nn.functional.softmin(a, 1), [X], (0,)),
    "log_softmax": (lambda L, a: L.nn.functional.log_softmax(a, 1), [X], (0,)),
    "log_softmax-dim0": (lambda L, a: L.log_softmax(a, 0) * a, [X3], (0,)),
    "log_softmax-0d": (lambda L, a: L.nn.functional.log_softmax(a, 0) * a, [np.array(0.7)], (0,)),
    "cumsum": (lambda L, a: a.cumsum(1) ** 2, [X], (0,)),
    "cumsum-dim0": (lambda L, a: a.cumsum(0) * a, [X3], (0,)),
    "cumsum-last": (lambda L, a: L.cumsum(a.exp(), -1), [X3], (0,)),
    "flip": (lambda L, a: a.flip(0, 2) * a, [X3], (0,)),
    "flip-1d": (lambda L, a: (a * a).flip(0), [X1], (0,)),
    "nll-mean": (lambda L, a: _nll()(L, a.log_softmax(1)), [X], (0,)),
    "nll-weight": (lambda L, a: _nll(weight=W)(L, a * a), [X], (0,)),
    "nll-sum": (lambda L, a: _nll(reduction="sum")(L, a.log_softmax(1)), [X], (0,)),
    "nll-none-3d": (lambda L, a: _nll(target=T3, reduction="none")(L, a * a), [X3], (0,)),
    "nll-4d-weight": (lambda L, a: _nll(target=T4, weight=W3)(L, a.log_softmax(1)), [X4], (0,)),
    "nll-1d": (lambda L, a: _nll(target=np.array(2))(L, a.log_softmax(0)), [X1], (0,)),
    "bce-mean": (_bce(), [X, TARGET01], (0,)),
    "bce-sum-weight": (_bce(weight=W, reduction="sum"), [X, TARGET01], (0,)),
    "bce-pos_weight": (_bce(pos_weight=POS), [3 * X, TARGET01], (0,)),
    "bce-none-both": (_bce(weight=W, pos_weight=POS, reduction="none"), [X, TARGET01], (0, 1)),
    "bce-target": (_bce(pos_weight=POS, reduction="sum"), [X, TARGET01], (1,)),
}
for _reduction in ("mean", "sum", "none"):
    CASES |= {
        f"ce-{_reduction}": (_ce(reduction=_reduction), [X], (0,)),
        f"ce-weight-{_reduction}": (_ce(weight=W, reduction=_reduction), [X], (0,)),
        f"ce-smoothing-{_reduction}": (
            _ce(weight=W, label_smoothing=0.2, reduction=_reduction), [X], (0,)),
        f"ce-ignore-{_reduction}": (
            _ce(target=np.array([1, 3, 7, 1, 2]), ignore_index=7, reduction=_reduction),
            [X], (0,)),
        f"ce-probs-{_reduction}": (_ce(target=PROBS, reduction=_reduction), [X], (0,)),
        f"ce-probs-options-{_reduction}": (
            _ce(target=PROBS, weight=W, label_smoothing=0.3, reduction=_reduction), [X], (0,)),
        f"ce-3d-{_reduction}": (
            _ce(target=T3, weight=W, label_smoothing=0.1, reduction=_reduction), [X3], (0,)),
        f"ce-3d-probs-{_reduction}": (_ce(target=PROBS3, reduction=_reduction), [X3], (0,)),
        f"ce-4d-{_reduction}": (_ce(target=T4, weight=W3, reduction=_reduction), [X4], (0,)),
        f"ce-1d-{_reduction}": (
            _ce(target=np.array(2), label_smoothing=0.1, reduction=_reduction), [X1], (0,)),
    }
CASES["ce-of-a-product"] = (lambda L, a: _ce(weight=W)(L, a * a.sum(0)), [X], (0,))


def _first_order(name, arrays, u):
    """The gradients by the first-order pass (arrays), with ``u`` as the output's gradient."""
    return first_order(CASES[name], arrays, u)


@pytest.mark.parametrize("name", list(CASES))
def test_gradgradcheck(name):
    """d/dz <g(x, u), v> for z = each input and the upstream gradient u, where g is recorded
    (create_graph=True), against central differences of the first-order gradient."""
    check_gradgrad(CASES[name], first_rtol=1e-12, first_atol=1e-14)


def _second_derivatives(lib, name):
    """The recorded first derivatives and the gradients of ``sum(probe * first)`` in every input
    that requires grad: the double backward, in ``lib``."""
    op, arrays, wrt = CASES[name]
    ins = [lib.tensor(a, requires_grad=k in wrt) for k, a in enumerate(arrays)]
    xs = [ins[k] for k in wrt]
    out = op(lib, *ins)
    u = lib.tensor(_upstream(tuple(out.shape)))
    grads = lib.autograd.grad(out, xs, grad_outputs=u, create_graph=True)
    total = sum((g * lib.tensor(_probe(tuple(g.shape)))).sum() for g in grads)
    seconds = (lib.autograd.grad(total, xs, allow_unused=True) if total.requires_grad
               else [None] * len(xs))
    return [g.detach().numpy() for g in grads] + [
        np.zeros(x.shape) if s is None else s.numpy() for s, x in zip(seconds, xs, strict=True)
    ]


@pytest.mark.parity
@pytest.mark.parametrize("name", list(CASES))
def test_double_backward_matches_pytorch(name):
    torch = pytest.importorskip("torch")
    ours, theirs = _second_derivatives(tl, name), _second_derivatives(torch, name)
    for a, b in zip(ours, theirs, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-13)


def _maml_gradients(lib, second_order=True):
    """One MAML step on a 2-layer MLP classifier: an inner SGD step on the support set with the
    gradient recorded, then the query loss's gradient in the starting weights."""
    rng = np.random.default_rng(3)
    support_x, query_x = rng.standard_normal((6, 3)), rng.standard_normal((8, 3))
    support_y, query_y = rng.integers(0, 4, 6), rng.integers(0, 4, 8)
    start = [rng.standard_normal((5, 3)), rng.standard_normal(5) * 0.1,
             rng.standard_normal((4, 5)), rng.standard_normal(4) * 0.1]
    params = [lib.tensor(p, requires_grad=True) for p in start]

    def mlp(x, w1, b1, w2, b2):
        return (x @ w1.T + b1).tanh() @ w2.T + b2

    inner = lib.nn.functional.cross_entropy(mlp(lib.tensor(support_x), *params),
                                            lib.tensor(support_y), label_smoothing=0.1)
    grads = lib.autograd.grad(inner, params, create_graph=second_order)
    adapted = [p - 0.4 * g for p, g in zip(params, grads, strict=True)]
    outer = lib.nn.functional.cross_entropy(mlp(lib.tensor(query_x), *adapted),
                                            lib.tensor(query_y))
    outer.backward()
    return outer.item(), [p.grad.numpy() for p in params]


@pytest.mark.parity
def test_a_maml_step_matches_pytorch():
    torch = pytest.importorskip("torch")
    for second_order in (True, False):
        loss, grads = _maml_gradients(tl, second_order)
        t_loss, t_grads = _maml_gradients(torch, second_order)
        assert loss == pytest.approx(t_loss, rel=1e-12)
        for ours, theirs in zip(grads, t_grads, strict=True):
            np.testing.assert_allclose(ours, theirs, rtol=1e-10, atol=1e-13)


def test_a_maml_step_matches_central_differences():
    _, grads = _maml_gradients(tl)
    rng = np.random.default_rng(3)
    support_x, query_x = rng.standard_normal((6, 3)), rng.standard_normal((8, 3))
    support_y, query_y = rng.integers(0, 4, 6), rng.integers(0, 4, 8)
    start = [rng.standard_normal((5, 3)), rng.standard_normal(5) * 0.1,
             rng.standard_normal((4, 5)), rng.standard_normal(4) * 0.1]
    functional = tl.nn.functional

    def outer(params):
        params = [tl.tensor(p, requires_grad=True) for p in params]
        def mlp(x, w1, b1, w2, b2):
            return (x @ w1.T + b1).tanh() @ w2.T + b2
        inner = functional.cross_entropy(mlp(tl.tensor(support_x), *params),
                                         tl.tensor(support_y), label_smoothing=0.1)
        steps = tl.autograd.grad(inner, params)
        adapted = [p.detach() - 0.4 * g for p, g in zip(params, steps, strict=True)]
        return functional.cross_entropy(mlp(tl.tensor(query_x), *adapted),
                                        tl.tensor(query_y)).item()

    for k, got in enumerate(grads):
        def at(point, k=k):
            moved = [p.copy() for p in start]
            moved[k] = point
            return outer(moved)

        np.testing.assert_allclose(got, _central(at, start[k]), rtol=1e-6, atol=1e-8)


HESSIAN_CASES = {
    "plain": (X, lambda L, z: L.nn.functional.cross_entropy(z, L.tensor(T))),
    "options": (X, lambda L, z: L.nn.functional.cross_entropy(
        z, L.tensor(T), weight=L.tensor(W), label_smoothing=0.2, reduction="sum")),
    "probs": (X, lambda L, z: L.nn.functional.cross_entropy(z, L.tensor(PROBS))),
    "3d": (X3, lambda L, z: L.nn.functional.cross_entropy(z, L.tensor(T3), weight=L.tensor(W))),
    "1d": (X1, lambda L, z: L.nn.functional.cross_entropy(z, L.tensor(np.array(1)))),
    "log_softmax": (X, lambda L, z: (L.nn.functional.log_softmax(z, 1) * L.tensor(PROBS)).sum()),
    "softmax": (X3, lambda L, z: (L.softmax(z, 1) ** 3).sum()),
    "bce": (X, lambda L, z: L.nn.functional.binary_cross_entropy_with_logits(
        z, L.tensor(TARGET01), pos_weight=L.tensor(POS))),
}


@pytest.mark.parity
@pytest.mark.filterwarnings("ignore:`torch.jit.script` is deprecated:DeprecationWarning")
@pytest.mark.parametrize("name", list(HESSIAN_CASES))
def test_hessians_in_the_logits_match_pytorch(name):
    torch = pytest.importorskip("torch")
    point, f = HESSIAN_CASES[name]
    theirs = torch.func.hessian(lambda z: f(torch, z))(torch.tensor(point)).numpy()
    ours = tl.autograd.functional.hessian(lambda z: f(tl, z), tl.tensor(point)).numpy()
    np.testing.assert_allclose(ours, theirs, rtol=1e-10, atol=1e-13)
    nested = tl.func.hessian(lambda z: f(tl, z))(tl.tensor(point)).numpy()
    np.testing.assert_allclose(nested, theirs, rtol=1e-10, atol=1e-13)


def test_the_hessian_of_cross_entropy_is_the_softmax_jacobian():
    hessian = tl.autograd.functional.hessian(
        lambda z: tl.nn.functional.cross_entropy(z, tl.tensor(T)), tl.tensor(X)).numpy()
    p = np.exp(X) / np.exp(X).sum(1, keepdims=True)
    kept = T != -100
    expected = np.zeros((5, 4, 5, 4))
    for i in np.flatnonzero(kept):
        expected[i, :, i, :] = (np.diag(p[i]) - np.outer(p[i], p[i])) / kept.sum()
    np.testing.assert_allclose(hessian, expected, atol=1e-14)


@pytest.mark.parity
def test_third_derivatives_match_pytorch():
    torch = pytest.importorskip("torch")
    results = []
    for lib in (tl, torch):
        x = lib.tensor(X, requires_grad=True)
        loss = lib.nn.functional.cross_entropy(x, lib.tensor(T), weight=lib.tensor(W),
                                               label_smoothing=0.1)
        (g,) = lib.autograd.grad(loss, x, create_graph=True)
        (h,) = lib.autograd.grad((g * g).sum(), x, create_graph=True)
        (t,) = lib.autograd.grad((h * lib.tensor(_probe(X.shape))).sum() + x.cumsum(1).softmax(
            0).log_softmax(1).sum(), x)
        results.append(t.numpy())
    np.testing.assert_allclose(results[0], results[1], rtol=1e-10, atol=1e-13)


@pytest.mark.parity
def test_edge_cases_of_ignored_targets_match_pytorch():
    """Every target ignored (the mean is 0/0): gradient and second derivative 0, as PyTorch;
    a weight of 0 on the kept targets: NaN there, as PyTorch."""
    torch = pytest.importorskip("torch")
    for target, weight in (([-100] * 5, None), ([0, -100, 1, 0, 1], [0.0, 0.0, 1.0, 1.0])):
        results = []
        for lib in (tl, torch):
            x = lib.tensor(X, requires_grad=True)
            w = None if weight is None else lib.tensor(np.array(weight))
            loss = lib.nn.functional.cross_entropy(x, lib.tensor(np.array(target)), weight=w)
            (g,) = lib.autograd.grad(loss, x, create_graph=True)
            (h,) = lib.autograd.grad((g * lib.tensor(_probe(X.shape))).sum(), x)
            results.append((g.detach().numpy(), h.numpy()))
        for ours, theirs in zip(results[0], results[1], strict=True):
            np.testing.assert_allclose(ours, theirs, rtol=1e-10, atol=1e-13)


NEW_OPS = [Softmax, LogSoftmax, Cumsum, Flip, loss_module._CrossEntropy, loss_module._NLLLoss,
           loss_module._BinaryCrossEntropyWithLogits]


def test_the_new_ops_are_listed_as_differentiable():
    listed = tl.engine.higher_order.differentiable_ops()
    for op in NEW_OPS:
        assert op.__name__.lstrip("_") in listed


@pytest.mark.parametrize("name", ["softmax-last", "log_softmax", "cumsum", "flip", "ce-mean",
                                  "ce-ignore-none", "ce-4d-sum", "nll-weight", "bce-none-both"])
def test_the_first_order_pass_never_calls_backward_graph(name, monkeypatch):
    op, arrays, wrt = CASES[name]

    def refuse(self, grad):
        raise AssertionError(f"{type(self).__name__}.backward_graph ran in a first-order pass")

    for cls in NEW_OPS:
        monkeypatch.setattr(cls, "backward_graph", refuse)
    ins = [tl.tensor(a, requires_grad=k in wrt) for k, a in enumerate(arrays)]
    out = op(tl, *ins)
    u = _upstream(tuple(out.shape))
    out.backward(tl.tensor(u), retain_graph=True)
    first = [ins[k].grad.numpy().copy() for k in wrt]
    assert all(ins[k].grad.grad_fn is None for k in wrt)
    with pytest.raises(AssertionError, match="backward_graph ran"):
        tl.autograd.grad(out, [ins[k] for k in wrt], grad_outputs=tl.tensor(u), create_graph=True)
    for k in wrt:
        ins[k].grad = None
    out.backward(tl.tensor(u))  # the same bits again
    for k, expected in zip(wrt, first, strict=True):
        assert np.array_equal(ins[k].grad.numpy(), expected)


ONE_NODE = {  # one op applied to the leaf x: the output's node is the op's
    "softmax": lambda F, x: F.softmax(x, 1),
    "log_softmax": lambda F, x: F.log_softmax(x, 0),
    "cumsum": lambda F, x: x.cumsum(1),
    "flip": lambda F, x: x.flip(0, 1),
    "cross_entropy": lambda F, x: F.cross_entropy(x, tl.tensor(T), weight=tl.tensor(W),
                                                  label_smoothing=0.1),
    "cross_entropy-probs": lambda F, x: F.cross_entropy(x, tl.tensor(PROBS), reduction="none"),
    "nll_loss": lambda F, x: F.nll_loss(x, tl.tensor(T), reduction="sum"),
    "bce": lambda F, x: F.binary_cross_entropy_with_logits(x, tl.tensor(TARGET01),
                                                           pos_weight=tl.tensor(POS)),
}


@pytest.mark.parametrize("name", list(ONE_NODE))
def test_the_array_backward_is_the_first_order_pass(name):
    """A plain backward gives, bit for bit, the node's array ``backward``; a create_graph pass
    through the same graph gives the same values (to rounding) and leaves the next plain pass's
    bits as they were."""
    x = tl.tensor(X, requires_grad=True)
    out = ONE_NODE[name](tl.nn.functional, x)
    u = _upstream(tuple(out.shape))
    direct = out.grad_fn.backward(u.copy())[0]
    (g,) = tl.autograd.grad(out, x, grad_outputs=tl.tensor(u), retain_graph=True)
    assert np.array_equal(g.numpy(), direct)
    (recorded,) = tl.autograd.grad(out, x, grad_outputs=tl.tensor(u), create_graph=True)
    np.testing.assert_allclose(recorded.detach().numpy(), direct, rtol=1e-13, atol=1e-16)
    (again,) = tl.autograd.grad(out, x, grad_outputs=tl.tensor(u))
    assert np.array_equal(again.numpy(), direct)


def test_float32_stays_float32():
    x = tl.tensor(X.astype(np.float32), requires_grad=True)
    loss = tl.nn.functional.cross_entropy(x, tl.tensor(T), label_smoothing=0.1)
    (g,) = tl.autograd.grad(loss, x, create_graph=True)
    (h,) = tl.autograd.grad((g * g).sum(), x)
    assert g.dtype == tl.float32 and h.dtype == tl.float32
    x64 = tl.tensor(X, requires_grad=True)
    loss64 = tl.nn.functional.cross_entropy(x64, tl.tensor(T), label_smoothing=0.1)
    (g64,) = tl.autograd.grad(loss64, x64, create_graph=True)
    (h64,) = tl.autograd.grad((g64 * g64).sum(), x64)
    np.testing.assert_allclose(h.numpy(), h64.numpy(), rtol=1e-4, atol=1e-6)


def test_logits_changed_in_place_are_refused_only_where_the_recorded_backward_reads_them():
    x = tl.tensor(X, requires_grad=True)
    logits = x * 1.0
    loss = tl.nn.functional.cross_entropy(logits, tl.tensor(T))
    logits.add_(1.0)
    with pytest.raises(RuntimeError, match="modified by an inplace operation.*CrossEntropy"):
        tl.autograd.grad(loss, x, create_graph=True)
    (g,) = tl.autograd.grad(loss, x)  # the first-order backward reads only what it saved
    p = np.exp(X) / np.exp(X).sum(1, keepdims=True)
    onehot = np.eye(4)[np.where(T == -100, 0, T)] * (T != -100)[:, None]
    np.testing.assert_allclose(g.numpy(), (p * (T != -100)[:, None] - onehot) / 4, atol=1e-15)
    log_probs = x.log_softmax(1) * 1.0
    nll = tl.nn.functional.nll_loss(log_probs, tl.tensor(T))
    summed = x.cumsum(1)
    log_probs.add_(1.0)  # nll_loss's and cumsum's gradients read no values: no refusal
    summed.mul_(2.0)
    tl.autograd.grad(nll + summed.sum(), x, create_graph=True)
