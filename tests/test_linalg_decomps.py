"""tensorlib.linalg's decompositions (chapter 2, section 20.4, ``engine.linalg_decomps``): ``svd``
(and ``torch.svd``), ``pinv`` (and ``torch.pinverse``, ``Tensor.pinverse``), ``qr``,
``eigvalsh``, ``matrix_rank``, ``matrix_power``, ``solve_triangular``, ``vecdot`` and ``lstsq``:
values and gradients against PyTorch's (float64 and float32, batched), float64 gradchecks, the
definitions they satisfy, and the errors PyTorch raises.

Singular vectors have arbitrary signs (numpy's LAPACK and PyTorch's may differ), so the cases read
them through sign-free products (``U @ U.mT``, ``u_i v_i^T``, ``U diag(S) Vh``).
"""

from __future__ import annotations

import numpy as np
import pytest
from _probe import assert_values_and_gradients_match_pytorch, normal_arrays

import tensorlib as tl


def _sym(x):
    return (x + x.transpose(-2, -1)) * 0.5


def _projector(u):
    return u @ u.transpose(-2, -1)


def _usvh(r):
    return (r[0] * r[1].unsqueeze(-2)) @ r[2]


def _shift(lib, a):
    """``a`` plus 3 on the diagonal: a well-conditioned triangle for solve_triangular."""
    return a + 3 * lib.eye(a.shape[-1], dtype=a.dtype)


# (name, function of (library, *tensors), input shapes)
CASES = [
    ("pinv wide", lambda lib, a: lib.linalg.pinv(a), [(3, 5)]),
    ("pinv tall batched", lambda lib, a: lib.linalg.pinv(a), [(2, 5, 3)]),
    ("pinv square", lambda lib, a: lib.linalg.pinv(a), [(4, 4)]),
    ("pinv two batch dims", lambda lib, a: lib.linalg.pinv(a), [(2, 3, 4, 2)]),
    ("pinv hermitian", lambda lib, a: lib.linalg.pinv(_sym(a), hermitian=True), [(2, 4, 4)]),
    ("pinv rank 2 of 4", lambda lib, a, b: lib.linalg.pinv(a @ b), [(5, 2), (2, 4)]),
    ("pinv atol", lambda lib, a: lib.linalg.pinv(a, atol=0.5), [(4, 3)]),
    ("pinv rtol", lambda lib, a: lib.linalg.pinv(a, rtol=0.3), [(2, 4, 3)]),
    ("pinverse", lambda lib, a: lib.pinverse(a), [(4, 3)]),
    ("Tensor.pinverse", lambda lib, a: a.pinverse(rcond=1e-10), [(2, 3, 4)]),
    ("svd S", lambda lib, a: lib.linalg.svd(a).S, [(2, 4, 3)]),
    ("svd USVh reduced", lambda lib, a: _usvh(lib.linalg.svd(a, full_matrices=False)),
     [(2, 4, 3)]),
    ("svd U projector tall", lambda lib, a: _projector(lib.linalg.svd(a, False).U), [(5, 3)]),
    ("svd V projector wide", lambda lib, a: _projector(lib.linalg.svd(a, False).Vh.mT),
     [(2, 3, 5)]),
    ("svd full U tall", lambda lib, a: _projector(lib.linalg.svd(a).U[..., :3]), [(2, 5, 3)]),
    ("svd full V wide", lambda lib, a: _projector(lib.linalg.svd(a).Vh.mT[..., :3]), [(3, 5)]),
    ("svd u1 v1^T", lambda lib, a: (lambda r: r.U[..., :, :1] @ r.Vh[..., :1, :])(
        lib.linalg.svd(a)), [(4, 4)]),
    ("torch.svd", lambda lib, a: (lambda r: (r.U * r.S.unsqueeze(-2)) @ r.V.mT)(lib.svd(a)),
     [(4, 3)]),
    ("Tensor.svd some=False", lambda lib, a: _projector(a.svd(some=False).V[..., :3]),
     [(3, 5)]),
    ("qr tall", lambda lib, a: (lambda r: r.Q.sum() * r.R.sum())(lib.linalg.qr(a)), [(5, 3)]),
    ("qr tall Q and R", lambda lib, a: (lambda r: lib.cat([r.Q, r.R], -2))(lib.linalg.qr(a)),
     [(2, 5, 3)]),
    ("qr square", lambda lib, a: (lambda r: r.Q * r.R.sum(-1, keepdim=True).mT)(
        lib.linalg.qr(a)), [(2, 4, 4)]),
    ("qr wide", lambda lib, a: (lambda r: r.Q.sum() + (r.R * r.R).sum() + r.R * r.Q[..., :1, :1])(
        lib.linalg.qr(a)), [(2, 3, 5)]),
    ("qr wide complete", lambda lib, a: (lambda r: r.Q.sum() * r.R)(
        lib.linalg.qr(a, mode="complete")), [(3, 5)]),
    ("qr square complete", lambda lib, a: (lambda r: r.Q @ r.R.exp())(
        lib.linalg.qr(a, mode="complete")), [(3, 3)]),
    ("eigvalsh", lambda lib, a: lib.linalg.eigvalsh(_sym(a)), [(2, 4, 4)]),
    ("eigvalsh UPLO=U", lambda lib, a: lib.linalg.eigvalsh(_sym(a), UPLO="U"), [(4, 4)]),
    ("matrix_power 5", lambda lib, a: lib.linalg.matrix_power(a, 5), [(2, 3, 3)]),
    ("matrix_power 1", lambda lib, a: lib.linalg.matrix_power(a, 1), [(3, 3)]),
    ("matrix_power -3", lambda lib, a: lib.linalg.matrix_power(_shift(lib, a), -3), [(3, 3)]),
    ("matrix_power 0", lambda lib, a: lib.linalg.matrix_power(a, 0) * a, [(2, 3, 3)]),
    ("torch.matrix_power", lambda lib, a: lib.matrix_power(a, 2), [(3, 3)]),
    ("Tensor.matrix_power", lambda lib, a: a.matrix_power(3), [(2, 2, 2)]),
    ("solve_triangular upper", lambda lib, a, b: lib.linalg.solve_triangular(
        _shift(lib, a), b, upper=True), [(4, 4), (4, 2)]),
    ("solve_triangular lower broadcast", lambda lib, a, b: lib.linalg.solve_triangular(
        _shift(lib, a), b, upper=False), [(2, 1, 4, 4), (3, 4, 2)]),
    ("solve_triangular unit, XA = B", lambda lib, a, b: lib.linalg.solve_triangular(
        a, b, upper=False, left=False, unitriangular=True), [(4, 4), (2, 3, 4)]),
    ("solve_triangular upper unit", lambda lib, a, b: lib.linalg.solve_triangular(
        a, b, upper=True, unitriangular=True), [(2, 3, 3), (2, 3, 1)]),
    ("vecdot", lambda lib, x, y: lib.linalg.vecdot(x, y), [(3, 4), (4,)]),
    ("vecdot dim 0 broadcast", lambda lib, x, y: lib.linalg.vecdot(x, y, dim=0),
     [(3, 4), (3, 1)]),
    ("lstsq", lambda lib, a, b: lib.linalg.lstsq(a, b).solution, [(5, 3), (5, 2)]),
    ("lstsq batch of vectors", lambda lib, a, b: lib.linalg.lstsq(a, b).solution,
     [(2, 5, 3), (2, 5)]),
    ("lstsq wide", lambda lib, a, b: lib.linalg.lstsq(a, b).solution, [(3, 5), (3, 2)]),
    ("lstsq gelsd residuals", lambda lib, a, b: lib.linalg.lstsq(a, b, driver="gelsd").residuals,
     [(2, 5, 3), (2, 5, 2)]),
    ("lstsq gels residuals of a vector",
     lambda lib, a, b: lib.linalg.lstsq(a, b, driver="gels").residuals, [(5, 3), (5,)]),
]
IDS = [c[0] for c in CASES]


@pytest.mark.parity
@pytest.mark.parametrize("name, fn, shapes", CASES, ids=IDS)
def test_values_and_gradients_match_pytorch_float64(name, fn, shapes):
    assert_values_and_gradients_match_pytorch(
        fn, shapes, len(name), "float64", (1e-10, 1e-11, 1e-9, 1e-10)
    )


@pytest.mark.parity
@pytest.mark.parametrize("name, fn, shapes", CASES[::3], ids=IDS[::3])
def test_values_and_gradients_match_pytorch_float32(name, fn, shapes):
    assert_values_and_gradients_match_pytorch(
        fn, shapes, len(name), "float32", (2e-4, 2e-4, 2e-3, 2e-3)
    )


GRADCHECKS = [c for c in CASES if c[0] not in ("pinv atol", "pinv rtol", "matrix_power 0")]


@pytest.mark.parametrize("name, fn, shapes", GRADCHECKS, ids=[c[0] for c in GRADCHECKS])
def test_gradcheck_float64(name, fn, shapes):
    operands = tuple(tl.tensor(a, requires_grad=True) for a in normal_arrays(shapes, 7))
    assert tl.autograd.gradcheck(lambda *t: fn(tl, *t), operands)


@pytest.mark.parity
@pytest.mark.parametrize("driver", [None, "gels", "gelsy", "gelsd", "gelss"])
@pytest.mark.parametrize("shapes", [[(5, 3), (5, 2)], [(3, 5), (3, 2)], [(2, 5, 3), (2, 5)]])
def test_lstsq_fills_what_pytorchs_driver_fills(driver, shapes):
    torch = pytest.importorskip("torch")
    a, b = normal_arrays(shapes, 3)
    ours = tl.linalg.lstsq(tl.tensor(a), tl.tensor(b), driver=driver)
    theirs = torch.linalg.lstsq(torch.tensor(a), torch.tensor(b), driver=driver)
    for mine, reference in zip(ours, theirs, strict=True):
        assert mine.shape == tuple(reference.shape) and mine.dtype == reference.numpy().dtype
        np.testing.assert_allclose(mine.numpy(), reference.numpy(), rtol=1e-10, atol=1e-12)


@pytest.mark.parity
@pytest.mark.parametrize("hermitian", [False, True])
@pytest.mark.parametrize("tolerances", [{}, {"atol": 0.5}, {"rtol": 0.2}, {"atol": 0.0},
                                        {"atol": 10.0, "rtol": 0.0}])
def test_matrix_rank_and_pinv_cutoffs_match_pytorch(hermitian, tolerances):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(4)
    a = rng.standard_normal((3, 4, 2)) @ rng.standard_normal((3, 2, 4))  # rank 2 of 4
    a = a + np.diag([0.0, 0.0, 0.3, 0.0])  # rank 3: a fourth singular value near 1e-16
    a = a + np.swapaxes(a, -1, -2) if hermitian else a
    ours = tl.linalg.matrix_rank(tl.tensor(a), hermitian=hermitian, **tolerances)
    theirs = torch.linalg.matrix_rank(torch.tensor(a), hermitian=hermitian, **tolerances)
    assert ours.dtype == tl.int64 and ours.tolist() == theirs.tolist()
    np.testing.assert_allclose(
        tl.linalg.pinv(tl.tensor(a), hermitian=hermitian, **tolerances).numpy(),
        torch.linalg.pinv(torch.tensor(a), hermitian=hermitian, **tolerances).numpy(),
        rtol=1e-8, atol=1e-10,
    )


def test_pinv_satisfies_the_penrose_equations_and_is_inv_when_invertible():
    rng = np.random.default_rng(0)
    A = tl.tensor(rng.standard_normal((2, 6, 3)) @ rng.standard_normal((2, 3, 5)))  # rank 3
    X = tl.linalg.pinv(A)
    a, x = A.numpy(), X.numpy()
    np.testing.assert_allclose(a @ x @ a, a, atol=1e-10)
    np.testing.assert_allclose(x @ a @ x, x, atol=1e-10)
    np.testing.assert_allclose(a @ x, np.swapaxes(a @ x, -1, -2), atol=1e-10)
    np.testing.assert_allclose(x @ a, np.swapaxes(x @ a, -1, -2), atol=1e-10)
    assert tl.linalg.matrix_rank(A).tolist() == [3, 3]
    square = tl.tensor(rng.standard_normal((4, 4)))
    np.testing.assert_allclose(tl.linalg.pinv(square).numpy(), tl.linalg.inv(square).numpy(),
                               rtol=1e-10, atol=1e-12)
    assert tl.linalg.pinv(tl.zeros(2, 0, 3)).shape == (2, 3, 0)


def test_the_factors_rebuild_the_matrix():
    rng = np.random.default_rng(1)
    for shape in [(4, 3), (3, 4), (2, 3, 3)]:
        A = tl.tensor(rng.standard_normal(shape))
        U, S, Vh = tl.linalg.svd(A)
        k = min(shape[-2:])
        np.testing.assert_allclose(((U[..., :k] * S.unsqueeze(-2)) @ Vh[..., :k, :]).numpy(),
                                   A.numpy(), atol=1e-12)
        np.testing.assert_allclose((U.mT @ U).numpy(), np.broadcast_to(np.eye(shape[-2]),
                                   U.shape), atol=1e-12)
        for mode in ("reduced", "complete"):
            Q, R = tl.linalg.qr(A, mode=mode)
            np.testing.assert_allclose((Q @ R).numpy(), A.numpy(), atol=1e-12)
            np.testing.assert_allclose(R.numpy(), np.triu(R.numpy()), atol=0)
        Q, R = tl.linalg.qr(A, mode="r")
        assert Q.shape == (0,) and R.shape == tl.linalg.qr(A).R.shape
    U, S, V = tl.svd(tl.tensor(rng.standard_normal((4, 3))), compute_uv=False)
    assert U.shape == (4, 4) and V.shape == (3, 3) and not U.numpy().any()


def test_solve_triangular_substitutes_and_gives_infinities_at_a_zero_pivot():
    rng = np.random.default_rng(2)
    a = np.triu(rng.standard_normal((4, 4))) + 4 * np.eye(4)
    b = rng.standard_normal((4, 3))
    x = tl.linalg.solve_triangular(tl.tensor(a + np.tril(np.ones((4, 4)), -1)), tl.tensor(b),
                                   upper=True)  # the lower triangle is not read
    np.testing.assert_allclose(x.numpy(), np.linalg.solve(a, b), rtol=1e-12)
    out = tl.linalg.solve_triangular(tl.zeros(2, 2), tl.ones(2, 1), upper=True)
    assert np.isnan(out[0, 0].item()) and out[1, 0].item() == np.inf  # as PyTorch


def test_matrix_power_is_repeated_products():
    rng = np.random.default_rng(3)
    a = rng.standard_normal((2, 3, 3))
    for n in (0, 1, 2, 7, -1, -4):
        expected = np.linalg.matrix_power(a, n)
        np.testing.assert_allclose(tl.linalg.matrix_power(tl.tensor(a), n).numpy(), expected,
                                   rtol=1e-9, atol=1e-10)
    assert tl.linalg.matrix_power(tl.tensor([[1, 2], [3, 4]]), 2).tolist() == [[7, 10], [15, 22]]


def test_eigvalsh_has_a_gradient_at_repeated_eigenvalues():
    A = tl.eye(3, dtype=tl.float64, requires_grad=True)
    tl.linalg.eigvalsh(A).sum().backward()  # d trace(A) / dA = I
    np.testing.assert_allclose(A.grad.numpy(), np.eye(3), atol=1e-12)


def test_qr_and_svd_backward_raise_where_pytorch_raises():
    A = tl.tensor(np.random.default_rng(5).standard_normal((5, 3)), requires_grad=True)
    with pytest.raises(RuntimeError, match="not computed when mode='r'"):
        tl.linalg.qr(A, mode="r").R.sum().backward()
    with pytest.raises(RuntimeError, match="not differentiable when mode='complete' and nrows"):
        tl.linalg.qr(A, mode="complete").Q.sum().backward()


@pytest.mark.parametrize("call, error, message", [
    (lambda: tl.linalg.pinv(tl.tensor([[1, 2], [3, 4]])), RuntimeError,
     r"linalg.pinv\(Long\{\[2, 2\]\}\): expected a tensor with 2 or more dimensions of float"),
    (lambda: tl.linalg.pinv(tl.ones(3)), RuntimeError, r"pinv\(Float\{\[3\]\}\)"),
    (lambda: tl.pinverse([[1.0]]), RuntimeError, "linalg.pinv.list."),
    (lambda: tl.linalg.svd(tl.ones(3)), RuntimeError, "at least 2 dimensions"),
    (lambda: tl.linalg.svd(tl.ones(2, 2, dtype=tl.int64)), RuntimeError, "Got Long"),
    (lambda: tl.linalg.svd(tl.ones(2, 2), driver="gesvd"), RuntimeError, "only supported on CUDA"),
    (lambda: tl.linalg.qr(tl.ones(2, 2), mode="full"), RuntimeError,
     "unrecognized mode 'full' but expected one of 'reduced'"),
    (lambda: tl.linalg.qr(tl.ones(2)), RuntimeError, "at least 2 dimensions"),
    (lambda: tl.linalg.eigvalsh(tl.ones(2, 3)), RuntimeError,
     "square matrices, but they are 2 by 3"),
    (lambda: tl.linalg.eigvalsh(tl.ones(2, 2), UPLO="X"), RuntimeError, "but got X"),
    (lambda: tl.linalg.matrix_rank(tl.ones(3)), RuntimeError, "at least 2 dimensions"),
    (lambda: tl.linalg.matrix_rank(tl.ones(2, 2, dtype=tl.int64)), RuntimeError, "Got Long"),
    (lambda: tl.linalg.matrix_power(tl.ones(2, 2), 1.5), TypeError, "must be int, not float"),
    (lambda: tl.linalg.matrix_power(tl.ones(2, 3), 2), RuntimeError, "but they are 2 by 3"),
    (lambda: tl.linalg.matrix_power(tl.tensor([[1, 2], [3, 4]]), -1), RuntimeError,
     "Got Long"),
    (lambda: tl.linalg.solve_triangular(tl.eye(3), tl.ones(3), upper=True), RuntimeError,
     "tensor B must have at least 2 dimensions"),
    (lambda: tl.linalg.solve_triangular(tl.eye(3), tl.ones(4, 2), upper=True), RuntimeError,
     r"equation AX = B \(3x3 and 4x2\)"),
    (lambda: tl.linalg.solve_triangular(tl.eye(3), tl.ones(4, 2), upper=True, left=False),
     RuntimeError, r"equation XA = B \(3x3 and 4x2\)"),
    (lambda: tl.linalg.solve_triangular(tl.eye(3), tl.ones(3, 2, dtype=tl.float64), upper=True),
     RuntimeError, "A of type Float and B of type Double"),
    (lambda: tl.linalg.vecdot(tl.ones(3), tl.ones(3, dtype=tl.float64)), RuntimeError,
     "x of type Float and y of type Double"),
    (lambda: tl.linalg.vecdot(tl.tensor([1, 2]), tl.tensor([1, 2])), RuntimeError, "Got Long"),
    (lambda: tl.linalg.lstsq(tl.ones(5, 3), tl.ones(4, 2)), RuntimeError,
     r"input.size\(-2\) should match other.size\(-2\)"),
    (lambda: tl.linalg.lstsq(tl.ones(5, 3), tl.ones(5, 2), driver="foo"), RuntimeError,
     "should be one of"),
    (lambda: tl.linalg.lstsq(tl.ones(5, 3), tl.ones(5, 2, dtype=tl.float64)), RuntimeError,
     "input's dtype Float and other's dtype Double"),
])
def test_errors_name_what_came(call, error, message):
    with pytest.raises(error, match=message):
        call()
