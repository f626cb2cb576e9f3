"""Chapter 2, section 24.1 (*More ops with a recorded backward*, the third batch): second-order
gradients (``create_graph=True``) of the scatters and writes (``scatter``, ``scatter_add``,
``index_add``, ``index_copy``, ``scatter_reduce``, ``slice_scatter`` and the other ``WriteInto``
ops), ``Tensor.unfold``, ``as_strided``, ``logcumsumexp``, ``lgamma``, ``digamma``, ``polygamma``,
``erfinv``, ``sinc``, ``special.entr`` and the linear algebra (``det``, ``slogdet``, ``inv``,
``solve``, ``solve_triangular``, ``cholesky``, ``pinv``, ``eigh``, ``eigvalsh``, ``svd``, ``qr``,
``matrix_exp``): against PyTorch's double backward, and gradgradchecks in float64."""

from __future__ import annotations

import numpy as np
import pytest
from _gradgrad import check_gradgrad

import tensorlib as tl
import tensorlib.nn.functional as F
from tensorlib.engine.function import Function
from tensorlib.engine.higher_order import has_graph_backward

# name -> (op on (library, functional module, *inputs), input shapes, positive inputs)
OPS = {
    # scatters and writes, windows, special functions
    "scatter": (lambda L, G, a, s: a.scatter(1, L.tensor([[0, 2], [1, 0], [3, 1]]), s * s) ** 2,
                [(3, 4), (3, 2)], False),
    "scatter_add": (lambda L, G, a, s: (a * a).scatter_add(0, L.tensor([[0, 1, 0, 2],
                                                                         [0, 0, 2, 2]]), s.sin()),
                    [(3, 4), (2, 4)], False),
    "index_add-copy": (lambda L, G, a, s: a.index_add(0, L.tensor([2, 0, 2]), s * s, alpha=0.5)
                       * a.index_copy(1, L.tensor([3, 1]), s[:, :2].exp()).sin(),
                       [(3, 4), (3, 4)], False),
    "scatter_reduce-sum": (lambda L, G, a, s: a.scatter_reduce(
        1, L.tensor([[0, 2, 0], [1, 1, 3]]), s * s, "sum") ** 2, [(2, 4), (2, 3)], False),
    "scatter_reduce-mean": (lambda L, G, a, s: a.scatter_reduce(
        0, L.tensor([[0, 1], [0, 0], [2, 1]]), s.exp(), "mean", include_self=False).sin(),
        [(3, 2), (3, 2)], False),
    "scatter_reduce-amax": (lambda L, G, a, s: a.scatter_reduce(
        1, L.tensor([[0, 2, 0], [1, 1, 3]]), s, "amax") ** 3, [(2, 4), (2, 3)], False),
    "scatter_reduce-amin": (lambda L, G, a, s: a.scatter_reduce(
        1, L.tensor([[0, 2, 0], [1, 1, 3]]), s, "amin", include_self=False) ** 3,
        [(2, 4), (2, 3)], False),
    "scatter_reduce-prod": (lambda L, G, a, s: a.scatter_reduce(
        1, L.tensor([[0, 2, 0], [1, 1, 3]]), s, "prod") * a, [(2, 4), (2, 3)], False),
    "slice-select-scatter": (lambda L, G, a, s: L.slice_scatter(a, s * s, 1, 0, 4, 2).sin()
                             * L.select_scatter(a, s[:, 0], 1, 3) ** 2, [(3, 4), (3, 2)], False),
    "diagonal-scatter-embed": (lambda L, G, a, s: L.diagonal_scatter(a * a, s.exp(), 1) ** 2
                               + (L.diag_embed(s) @ a.mT[:2]).sum(), [(2, 3), (2,)], False),
    "index_put": (lambda L, G, a, s: L.index_put(a, (L.tensor([0, 2, 0]),), s * s,
                                                 accumulate=True) ** 2
                  * L.index_put(a, (L.tensor([1]), L.tensor([2])), s[0, :1].sin()),
                  [(3, 4), (3, 4)], False),
    "unfold": (lambda L, G, a: a.unfold(1, 3, 2) ** 2 * a.unfold(0, 2, 1).sum(), [(3, 7)], False),
    "as_strided": (lambda L, G, a: (a * a).as_strided((3, 3), (1, 2)).sin()
                   * a.as_strided((2, 2), (2, 1), 1).sum(), [(3, 4)], False),
    "logcumsumexp": (lambda L, G, a: L.logcumsumexp(a * a, 1) * a, [(3, 4)], False),
    "lgamma-digamma": (lambda L, G, a: a.lgamma() * a.digamma(), [(5,)], True),
    "polygamma": (lambda L, G, a: L.polygamma(2, a) * L.special.polygamma(1, a), [(5,)], True),
    "erfinv": (lambda L, G, a: (a.tanh() * 0.9).erfinv() * a, [(5,)], False),
    "sinc": (lambda L, G, a: L.sinc(a * 2) * a, [(5,)], False),
    "entr": (lambda L, G, a: L.special.entr(a) * a, [(5,)], True),
    "det": (lambda L, G, a: L.linalg.det(a)[:, None, None] * a, [(2, 3, 3)], False),
    "slogdet-logdet": (lambda L, G, a: L.linalg.slogdet(a).logabsdet * a
                       + L.logdet(a @ a.mT + L.eye(3, dtype=L.float64)), [(3, 3)], False),
    "inv": (lambda L, G, a: L.linalg.inv(a + 3 * L.eye(3, dtype=L.float64)) ** 2, [(2, 3, 3)],
            False),
    "solve": (lambda L, G, a, b: L.linalg.solve(a + 3 * L.eye(3, dtype=L.float64), b) ** 2,
              [(2, 3, 3), (3, 2)], False),
    "solve-vector-right": (lambda L, G, a, b: L.linalg.solve(a + 3 * L.eye(3, dtype=L.float64),
                                                             b, left=False).sin(),
                           [(3, 3), (2, 3)], False),
    "cholesky": (lambda L, G, a: L.linalg.cholesky(a @ a.mT + L.eye(3, dtype=L.float64)).sin(),
                 [(2, 3, 3)], False),
    "solve_triangular": (lambda L, G, a, b: L.linalg.solve_triangular(
        a.tril() + 3 * L.eye(3, dtype=L.float64), b, upper=False) ** 2
        + L.linalg.solve_triangular(a.triu() + 3 * L.eye(3, dtype=L.float64), b, upper=True,
                                    unitriangular=True), [(3, 3), (3, 2)], False),
    "pinv": (lambda L, G, a: L.linalg.pinv(a) ** 2, [(4, 3)], False),
    "eigh": (lambda L, G, a: (lambda w, v: w.sin() * (v ** 2).sum(0))(
        *L.linalg.eigh(a + a.mT)), [(3, 3)], False),
    "eigvalsh": (lambda L, G, a: L.linalg.eigvalsh(a + a.mT) ** 3, [(2, 3, 3)], False),
    "matrix_exp": (lambda L, G, a: L.linalg.matrix_exp(a * 0.5) * a, [(2, 3, 3)], False),
    "svd": (lambda L, G, a: (lambda u, s, vh: (u[:, :2] ** 2).sum(0) * s[:2] + (vh ** 4).sum())(
        *L.linalg.svd(a, full_matrices=False)), [(4, 3)], False),
    "svd-wide-values": (lambda L, G, a: (lambda u, s, vh: s.sin() * (vh[:, 0] ** 2))(
        *L.linalg.svd(a, full_matrices=False)), [(2, 4)], False),
    "svd-values-only": (lambda L, G, a: L.linalg.svd(a)[1] ** 3, [(2, 3, 4)], False),
    "qr": (lambda L, G, a: (lambda q, r: (q ** 3).sum(0) + r.sin().sum(1))(*L.linalg.qr(a)),
           [(4, 3)], False),
    "qr-wide": (lambda L, G, a: (lambda q, r: (q ** 3).sum() + r.sin())(*L.linalg.qr(a)),
                [(2, 3)], False),
}

# our digamma and polygamma are series of their own: equal to PyTorch's to about 1e-9
LOOSER = {"lgamma-digamma": 1e-8, "polygamma": 1e-8}


def _arrays(name, seed):
    rng = np.random.default_rng(seed)
    _, shapes, positive = OPS[name]
    return [np.abs(rng.standard_normal(s)) + 0.5 if positive else rng.standard_normal(s)
            for s in shapes]


def _second_derivatives(lib, functional, op, arrays):
    """The first derivatives with ``create_graph=True`` (L = sum(u * op(inputs))), and each
    input's gradient of sum(w * dL/dx): the double backward."""
    inputs = [lib.tensor(a, requires_grad=True) for a in arrays]
    out = op(lib, functional, *inputs)
    u = lib.tensor(np.cos(np.arange(out.numel()) + 1.0).reshape(tuple(out.shape)))
    grads = lib.autograd.grad(out, inputs, grad_outputs=u, create_graph=True)
    total = sum((g * lib.tensor(np.sin(np.arange(g.numel()) + 2.0).reshape(tuple(g.shape)))).sum()
                for g in grads)
    seconds = lib.autograd.grad(total, inputs, allow_unused=True)
    return [g.detach().numpy() for g in grads], [
        np.zeros(a.shape) if s is None else s.numpy() for s, a in zip(seconds, arrays, strict=True)
    ]


@pytest.mark.parity
@pytest.mark.parametrize("name", list(OPS))
def test_second_derivatives_match_pytorch(name):
    torch = pytest.importorskip("torch")
    arrays = _arrays(name, 0)
    rtol = LOOSER.get(name, 1e-10)
    ours = _second_derivatives(tl, F, OPS[name][0], arrays)
    theirs = _second_derivatives(torch, torch.nn.functional, OPS[name][0], arrays)
    for mine, torchs in zip(ours[0] + ours[1], theirs[0] + theirs[1], strict=True):
        np.testing.assert_allclose(mine, torchs, rtol=rtol, atol=1e-12)


@pytest.mark.parametrize("name", list(OPS))
def test_gradgradcheck(name):
    op = OPS[name][0]
    arrays = _arrays(name, 1)
    case = (lambda lib, *xs: op(lib, F, *xs), arrays, tuple(range(len(arrays))))
    check_gradgrad(case, first_rtol=1e-12, first_atol=1e-14)  # the first-order values too
    inputs = [tl.tensor(a, requires_grad=True) for a in arrays]
    assert tl.autograd.gradgradcheck(lambda *xs: op(tl, F, *xs), inputs)


def test_scatter_with_src_larger_than_index():
    # PyTorch's double backward refuses this shape (its gradient of src has index's shape)
    a, s = np.cos(np.arange(12.0)).reshape(3, 4), np.sin(np.arange(9.0)).reshape(3, 3)
    index = tl.tensor([[0, 2], [1, 0], [3, 1]])
    for op in (lambda L, x, y: x.scatter(1, index, y * y) ** 2,
               lambda L, x, y: (x * x).scatter_add(1, index, y.sin()),
               lambda L, x, y: x.scatter_reduce(1, index, y.exp(), "mean") ** 2):
        check_gradgrad((op, [a, s], (0, 1)), first_rtol=1e-12, first_atol=1e-14)


def test_third_order_through_matrix_exp_and_unfold_matches_pytorch():
    torch = pytest.importorskip("torch")
    a0 = np.sin(np.arange(9.0)).reshape(3, 3) * 0.5
    results = []
    for lib in (tl, torch):
        a = lib.tensor(a0, requires_grad=True)
        f = (lib.linalg.matrix_exp(a) ** 2).sum() + (a.reshape(9).unfold(0, 4, 2) ** 4).sum()
        (g,) = lib.autograd.grad(f, a, create_graph=True)
        (h,) = lib.autograd.grad((g * g).sum(), a, create_graph=True)
        (t,) = lib.autograd.grad(h.sin().sum(), a)
        results.append([g.detach().numpy(), h.detach().numpy(), t.numpy()])
    for ours, theirs in zip(*results, strict=True):
        np.testing.assert_allclose(ours, theirs, rtol=1e-9, atol=1e-12)


@pytest.mark.parity
def test_sinc_at_zero_has_a_zero_second_derivative_where_pytorchs_is_nan():
    # the slope is set to 0 at x = 0 after dividing by 1 there: a constant, so its derivative is
    # 0; PyTorch divides by 0 first and its double backward is NaN there
    torch = pytest.importorskip("torch")
    x0 = np.array([0.0, 0.5, -1.0])
    results = []
    for lib in (tl, torch):
        x = lib.tensor(x0, requires_grad=True)
        (g,) = lib.autograd.grad((lib.sinc(x) * x).sum(), x, create_graph=True)
        results.append((g.detach().numpy(), lib.autograd.grad(g.sum(), x)[0].numpy()))
    np.testing.assert_allclose(results[0][0], results[1][0], rtol=1e-12, atol=1e-15)
    assert np.isnan(results[1][1][0]) and results[0][1][0] == 0.0
    np.testing.assert_allclose(results[0][1][1:], results[1][1][1:], rtol=1e-10, atol=1e-12)


@pytest.mark.parity
def test_logcumsumexp_with_zeros_in_the_upstream_gradient_matches_pytorch():
    # log|u_i| is -inf where u_i = 0: the derivative in u_i is NaN there, in both libraries;
    # the derivative in x, and in the nonzero u_i, is finite
    torch = pytest.importorskip("torch")
    x0, u0 = np.arange(6.0).reshape(2, 3) / 3, np.array([[1.0, 0.0, -1.0], [0.0, 0.0, 2.0]])
    results = []
    for lib in (tl, torch):
        x, u = lib.tensor(x0, requires_grad=True), lib.tensor(u0, requires_grad=True)
        (g,) = lib.autograd.grad(lib.logcumsumexp(x, 1), x, grad_outputs=u, create_graph=True)
        second = lib.autograd.grad((g * x).sum(), [x, u])
        results.append([g.detach().numpy()] + [s.numpy() for s in second])
    for ours, theirs in zip(*results, strict=True):
        np.testing.assert_allclose(ours, theirs, rtol=1e-10, atol=1e-12)
    assert np.isfinite(results[0][1]).all() and np.isnan(results[0][2][u0 == 0]).all()


def test_what_the_recorded_backwards_refuse():
    x = tl.tensor([[1.0, 2.0], [2.0, 4.0]], requires_grad=True)  # singular
    with pytest.raises(NotImplementedError, match=r"linalg.det: .* the matrix is singular"):
        tl.autograd.grad(tl.linalg.det(x), x, create_graph=True)
    a = tl.tensor([[1.0, 2.0, 0.5]], requires_grad=True)
    s = tl.tensor([[0.0, 3.0]], requires_grad=True)
    out = a.scatter_reduce(1, tl.tensor([[0, 2]]), s, "prod")
    with pytest.raises(NotImplementedError, match=r"reduce='prod'.*a 0 in input or src"):
        tl.autograd.grad(out.sum(), [a, s], create_graph=True)
    q = tl.tensor(np.ones((3, 2)), requires_grad=True)
    with pytest.raises(RuntimeError, match="mode='r'"):
        tl.autograd.grad(tl.linalg.qr(q, mode="r").R.sum(), q, create_graph=True)


def test_the_ops_still_without_a_recorded_backward():
    # svdvals' module comes before svd's, whose U and V its recorded backward would need
    refusing = set()
    stack = list(Function.__subclasses__())
    while stack:
        op = stack.pop()
        stack.extend(op.__subclasses__())
        defines = any("backward" in vars(k) for k in op.__mro__[:-1])
        chapter_2 = op.__module__.startswith(("tensorlib.engine", "tensorlib.linalg"))
        if chapter_2 and defines and not has_graph_backward(op):
            refusing.add(op.__name__)
    assert refusing == {"SvdVals", "_Join"}  # _Join: the engine's own node for several roots
