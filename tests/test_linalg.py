"""tensorlib.linalg (chapter 2, section 20.4): values and gradients against PyTorch's (float64 and
float32, batched and broadcast), float64 gradchecks of every Function, the determinant's gradient
at singular matrices, the norms' gradients at 0, and the errors PyTorch raises."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from _probe import assert_values_and_gradients_match_pytorch, normal_arrays

import tensorlib as tl


def _spd(lib, x):
    """A symmetric positive-definite matrix made from ``x`` (gradients flow through both
    triangles, so a check of the symmetric gradient is fair)."""
    n = x.shape[-1]
    return x @ x.transpose(-2, -1) + n * lib.eye(n, dtype=x.dtype)


def _sym(x):
    return (x + x.transpose(-2, -1)) * 0.5


# (name, function of (library, *tensors), input shapes)
CASES = [
    ("det", lambda lib, a: lib.linalg.det(a), [(3, 3)]),
    ("det batched", lambda lib, a: lib.linalg.det(a), [(2, 4, 4)]),
    ("det 1x1", lambda lib, a: lib.linalg.det(a), [(1, 1)]),
    ("top-level det", lambda lib, a: lib.det(a), [(3, 3)]),
    ("slogdet", lambda lib, a: lib.linalg.slogdet(a).logabsdet, [(2, 3, 3)]),
    ("slogdet sign", lambda lib, a: lib.linalg.slogdet(a).sign * lib.linalg.det(a), [(2, 3, 3)]),
    ("logdet", lambda lib, a: lib.logdet(_spd(lib, a)), [(2, 3, 3)]),
    ("inv", lambda lib, a: lib.linalg.inv(a), [(2, 3, 3)]),
    ("inverse", lambda lib, a: lib.inverse(a), [(4, 4)]),
    ("solve matrix", lambda lib, a, b: lib.linalg.solve(a, b), [(3, 3), (3, 2)]),
    ("solve vector", lambda lib, a, b: lib.linalg.solve(a, b), [(3, 3), (3,)]),
    ("solve batch of vectors", lambda lib, a, b: lib.linalg.solve(a, b), [(2, 3, 3), (2, 3)]),
    ("solve broadcast", lambda lib, a, b: lib.linalg.solve(a, b), [(2, 1, 3, 3), (4, 3, 2)]),
    ("solve broadcast A", lambda lib, a, b: lib.linalg.solve(a, b), [(3, 3), (2, 3, 2)]),
    ("solve left=False", lambda lib, a, b: lib.linalg.solve(a, b, left=False),
     [(2, 3, 3), (2, 4, 3)]),
    ("cholesky", lambda lib, a: lib.linalg.cholesky(_spd(lib, a)), [(2, 4, 4)]),
    ("cholesky upper", lambda lib, a: lib.linalg.cholesky(_spd(lib, a), upper=True), [(3, 3)]),
    ("eigh values", lambda lib, a: lib.linalg.eigh(_sym(a)).eigenvalues, [(2, 4, 4)]),
    ("eigh vectors squared",
     lambda lib, a: lib.linalg.eigh(_sym(a)).eigenvectors ** 2, [(2, 3, 3)]),
    ("eigh UPLO=U", lambda lib, a: lib.linalg.eigh(_sym(a), UPLO="U").eigenvalues, [(3, 3)]),
    ("svdvals", lambda lib, a: lib.linalg.svdvals(a), [(2, 3, 5)]),
    ("vector_norm", lambda lib, x: lib.linalg.vector_norm(x), [(3, 4)]),
    ("vector_norm dim keepdim", lambda lib, x: lib.linalg.vector_norm(x, dim=1, keepdim=True),
     [(3, 4, 2)]),
    ("vector_norm ord 1", lambda lib, x: lib.linalg.vector_norm(x, 1, dim=(0, 2)), [(3, 4, 2)]),
    ("vector_norm ord 3", lambda lib, x: lib.linalg.vector_norm(x, 3, dim=-1), [(3, 4)]),
    ("vector_norm ord 1.5", lambda lib, x: lib.linalg.vector_norm(x, 1.5, dim=-1), [(3, 4)]),
    ("vector_norm ord 0.5", lambda lib, x: lib.linalg.vector_norm(x, 0.5, dim=0), [(3, 4)]),
    ("vector_norm ord -1", lambda lib, x: lib.linalg.vector_norm(x, -1, dim=0), [(3, 4)]),
    ("vector_norm ord inf", lambda lib, x: lib.linalg.vector_norm(x, math.inf, dim=0), [(3, 4)]),
    ("vector_norm ord -inf", lambda lib, x: lib.linalg.vector_norm(x, -math.inf), [(3, 4)]),
    ("vector_norm ord 0", lambda lib, x: lib.linalg.vector_norm(x, 0) * x.sum(), [(3, 4)]),
    ("matrix_norm fro", lambda lib, a: lib.linalg.matrix_norm(a), [(2, 3, 4)]),
    ("matrix_norm nuc", lambda lib, a: lib.linalg.matrix_norm(a, "nuc"), [(2, 3, 4)]),
    ("matrix_norm 2", lambda lib, a: lib.linalg.matrix_norm(a, 2), [(2, 3, 4)]),
    ("matrix_norm -2", lambda lib, a: lib.linalg.matrix_norm(a, -2, keepdim=True), [(2, 3, 4)]),
    ("matrix_norm 1", lambda lib, a: lib.linalg.matrix_norm(a, 1), [(2, 3, 4)]),
    ("matrix_norm -1", lambda lib, a: lib.linalg.matrix_norm(a, -1), [(2, 3, 4)]),
    ("matrix_norm inf", lambda lib, a: lib.linalg.matrix_norm(a, math.inf), [(2, 3, 4)]),
    ("matrix_norm -inf dims", lambda lib, a: lib.linalg.matrix_norm(a, -math.inf, dim=(2, 0),
                                                                   keepdim=True), [(2, 3, 4)]),
    ("matrix_norm nuc dims", lambda lib, a: lib.linalg.matrix_norm(a, "nuc", dim=(0, 2)),
     [(3, 2, 4)]),
    ("norm default", lambda lib, a: lib.linalg.norm(a), [(2, 3, 4)]),
    ("norm ord matrix", lambda lib, a: lib.linalg.norm(a, 1), [(3, 4)]),
    ("norm ord vector", lambda lib, a: lib.linalg.norm(a, 3), [(4,)]),
    ("norm nuc", lambda lib, a: lib.linalg.norm(a, "nuc"), [(3, 4)]),
    ("norm dim 1", lambda lib, a: lib.linalg.norm(a, 1, dim=1), [(2, 3, 4)]),
    ("norm dim 2", lambda lib, a: lib.linalg.norm(a, math.inf, dim=(0, 1)), [(2, 3, 4)]),
    ("norm None dim 2", lambda lib, a: lib.linalg.norm(a, dim=(0, 1)), [(2, 3, 4)]),
    ("cross", lambda lib, a, b: lib.linalg.cross(a, b), [(4, 3), (4, 3)]),
    ("cross broadcast", lambda lib, a, b: lib.linalg.cross(a, b), [(2, 1, 3), (1, 4, 3)]),
    ("cross dim 0", lambda lib, a, b: lib.linalg.cross(a, b, dim=0), [(3, 2), (3, 2)]),
    ("torch.cross with dim", lambda lib, a, b: lib.cross(a, b, dim=1), [(2, 3), (2, 3)]),
    ("multi_dot 2", lambda lib, a, b: lib.linalg.multi_dot([a, b]), [(2, 3), (3, 4)]),
    ("multi_dot 4", lambda lib, a, b, c, d: lib.linalg.multi_dot([a, b, c, d]),
     [(10, 2), (2, 8), (8, 3), (3, 6)]),
    ("multi_dot vectors", lambda lib, a, b, c: lib.linalg.multi_dot([a, b, c]),
     [(3,), (3, 5), (5,)]),
    ("multi_dot first vector", lambda lib, a, b: lib.linalg.multi_dot([a, b]), [(3,), (3, 2)]),
]
IDS = [c[0] for c in CASES]


@pytest.mark.parity
@pytest.mark.parametrize("name, fn, shapes", CASES, ids=IDS)
def test_values_and_gradients_match_pytorch_float64(name, fn, shapes):
    assert_values_and_gradients_match_pytorch(
        fn, shapes, len(name), "float64", (1e-10, 1e-12, 1e-9, 1e-11)
    )


@pytest.mark.parity
@pytest.mark.parametrize("name, fn, shapes", CASES, ids=IDS)
def test_values_and_gradients_match_pytorch_float32(name, fn, shapes):
    assert_values_and_gradients_match_pytorch(
        fn, shapes, len(name), "float32", (2e-4, 2e-5, 2e-3, 2e-4)
    )


GRADCHECKS = [c for c in CASES if c[0] not in ("vector_norm ord 0",)]


@pytest.mark.parametrize("name, fn, shapes", GRADCHECKS, ids=[c[0] for c in GRADCHECKS])
def test_gradcheck_float64(name, fn, shapes):
    operands = tuple(tl.tensor(a, requires_grad=True) for a in normal_arrays(shapes, 7))
    assert tl.autograd.gradcheck(lambda *t: fn(tl, *t), operands)


def test_det_matches_the_permutation_definition_and_solve_matches_the_inverse():
    a = np.random.default_rng(0).standard_normal((3, 3))
    leibniz = sum(
        np.prod([a[i, p[i]] for i in range(3)]) * sign
        for p, sign in [((0, 1, 2), 1), ((1, 2, 0), 1), ((2, 0, 1), 1),
                        ((0, 2, 1), -1), ((2, 1, 0), -1), ((1, 0, 2), -1)]
    )
    A = tl.tensor(a)
    assert abs(tl.linalg.det(A).item() - leibniz) < 1e-12
    np.testing.assert_allclose((A @ tl.linalg.inv(A)).numpy(), np.eye(3), atol=1e-12)
    B = tl.tensor(np.arange(6.0).reshape(3, 2))
    np.testing.assert_allclose(tl.linalg.solve(A, B).numpy(), (tl.linalg.inv(A) @ B).numpy(),
                               rtol=1e-10, atol=1e-12)


def _cofactor_adjugate_t(a):
    """adj(A)^T by cofactors: C_ij = (-1)^(i+j) det(A without row i and column j)."""
    n = a.shape[0]
    return np.array([[(-1) ** (i + j) * np.linalg.det(np.delete(np.delete(a, i, 0), j, 1))
                      for j in range(n)] for i in range(n)])


@pytest.mark.parametrize("rank", [0, 1, 2, 3])
def test_det_gradient_at_singular_matrices_is_the_cofactor_matrix(rank):
    rng = np.random.default_rng(rank)
    a = rng.standard_normal((4, rank)) @ rng.standard_normal((rank, 4))  # rank < 4: det 0
    A = tl.tensor(a, requires_grad=True)
    d = tl.linalg.det(A)
    d.backward()
    assert abs(d.item()) < 1e-12
    np.testing.assert_allclose(A.grad.numpy(), _cofactor_adjugate_t(a), atol=1e-10)
    if rank == 3:  # rank n - 1: the gradient is not zero
        assert np.abs(A.grad.numpy()).max() > 1e-3


def test_det_gradient_at_a_singular_diagonal_matrix():
    # d det(diag(1, 2, e)) / de = 1 * 2. PyTorch 2.13 returns 0 here (its LU finds the zero pivot
    # and its fallback loses the cofactor); the cofactor formula gives 2, and so does tensorlib
    A = tl.tensor(np.diag([1.0, 2.0, 0.0]), requires_grad=True)
    tl.linalg.det(A).backward()
    np.testing.assert_allclose(A.grad.numpy(), np.diag([0.0, 0.0, 2.0]), atol=1e-15)


@pytest.mark.parity
def test_det_gradient_at_singular_matrices_matches_pytorch():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(5)
    singular = np.stack([rng.standard_normal((3, r)) @ rng.standard_normal((r, 3))
                         for r in (1, 2)] + [np.zeros((3, 3))])
    grads = []
    for lib in (tl, torch):
        A = lib.tensor(singular, requires_grad=True)
        lib.linalg.det(A).sum().backward()
        grads.append(A.grad.numpy())
    np.testing.assert_allclose(grads[0], grads[1], atol=1e-10)
    # an exactly singular matrix of small integers: whether PyTorch's LU meets an exact zero pivot
    # (and then returns 0, as for the diagonal one above) depends on its BLAS (0 with MKL on an
    # AMD EPYC, the cofactors on an Intel Xeon), so it is compared with the definition
    exact = np.array([[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [1.0, 0.0, 1.0]])
    A = tl.tensor(exact, requires_grad=True)
    tl.linalg.det(A).backward()
    np.testing.assert_allclose(A.grad.numpy(), _cofactor_adjugate_t(exact), atol=1e-10)
    assert np.abs(A.grad.numpy()).max() > 1  # rank n - 1: not zero


NORMS_AT_ZERO = [
    ("vector 2", lambda lib, x: lib.linalg.vector_norm(x)),
    ("vector 1", lambda lib, x: lib.linalg.vector_norm(x, 1)),
    ("vector 3", lambda lib, x: lib.linalg.vector_norm(x, 3)),
    ("vector 1.5", lambda lib, x: lib.linalg.vector_norm(x, 1.5)),
    ("vector 0.5", lambda lib, x: lib.linalg.vector_norm(x, 0.5)),
    ("vector inf", lambda lib, x: lib.linalg.vector_norm(x, math.inf)),
    ("vector -inf", lambda lib, x: lib.linalg.vector_norm(x, -math.inf)),
    ("vector 0", lambda lib, x: lib.linalg.vector_norm(x, 0)),
    ("fro", lambda lib, x: lib.linalg.matrix_norm(x)),
    ("norm", lambda lib, x: lib.linalg.norm(x)),
    ("matrix 1", lambda lib, x: lib.linalg.matrix_norm(x, 1)),
    ("matrix inf", lambda lib, x: lib.linalg.matrix_norm(x, math.inf)),
]


@pytest.mark.parametrize("name, fn", NORMS_AT_ZERO, ids=[c[0] for c in NORMS_AT_ZERO])
def test_norm_gradients_at_zero_are_finite(name, fn):
    x = tl.zeros(2, 3, dtype=tl.float64, requires_grad=True)
    fn(tl, x).backward()
    assert fn(tl, x).item() == 0.0 and np.isfinite(x.grad.numpy()).all()


@pytest.mark.parity
@pytest.mark.parametrize("name, fn", NORMS_AT_ZERO, ids=[c[0] for c in NORMS_AT_ZERO])
def test_norm_gradients_at_zero_match_pytorch(name, fn):
    torch = pytest.importorskip("torch")
    point = np.array([[0.0, 0.0, 0.0], [0.0, 0.0, 0.0]])
    grads = []
    for lib in (tl, torch):
        x = lib.tensor(point, requires_grad=True)
        fn(lib, x).backward()
        # torch leaves .grad None for ord=0 (a zero gradient it does not materialize)
        grads.append(np.zeros_like(point) if x.grad is None else x.grad.numpy())
    np.testing.assert_array_equal(grads[0], grads[1])


@pytest.mark.parity
def test_norm_gradient_with_some_zero_entries_matches_pytorch():
    torch = pytest.importorskip("torch")
    point = np.array([[0.0, 2.0, -1.0], [0.0, 0.0, 0.0]])
    for ord in (2, 1, 3, 1.5, 0.5, -1, math.inf, -math.inf):
        grads = []
        for lib in (tl, torch):
            x = lib.tensor(point, requires_grad=True)
            lib.linalg.vector_norm(x, ord, dim=1).sum().backward()
            grads.append(x.grad.numpy())
        np.testing.assert_allclose(grads[0], grads[1], rtol=1e-12, err_msg=f"ord={ord}")


def test_slogdet_logdet_and_their_named_fields():
    A = tl.tensor([[0.0, 2.0], [1.0, 0.0]])  # det -2
    sign, logabsdet = tl.linalg.slogdet(A)
    assert tl.linalg.slogdet(A).sign.item() == -1.0 == sign.item()
    assert abs(logabsdet.item() - math.log(2.0)) < 1e-6
    assert math.isnan(tl.logdet(A).item())
    assert tl.logdet(tl.zeros(2, 2)).item() == -math.inf
    assert tl.linalg.slogdet(tl.zeros(2, 2)).sign.item() == 0.0


def test_empty_matrices():
    assert tl.linalg.det(tl.zeros(0, 0)).item() == 1.0
    assert tl.linalg.det(tl.zeros(2, 0, 0)).tolist() == [1.0, 1.0]
    assert tl.linalg.inv(tl.zeros(0, 0)).shape == (0, 0)


def test_dtype_rules():
    x32 = tl.ones(2, 3)
    assert tl.linalg.vector_norm(x32, dtype=tl.float64).dtype == tl.float64
    assert tl.linalg.matrix_norm(x32, "nuc").dtype == tl.float32
    assert tl.linalg.det(tl.eye(3, dtype=tl.float64)).dtype == tl.float64


def test_torch_cross_without_dim_warns_and_takes_the_first_dim_of_size_3():
    a, b = tl.tensor(np.eye(3)[[0, 1]].T.copy()), tl.tensor(np.eye(3)[[1, 2]].T.copy())
    with pytest.warns(UserWarning, match="without specifying the dim arg is deprecated"):
        out = tl.cross(a, b)  # (3, 2): dim 0
    assert out.tolist() == [[0.0, 1.0], [0.0, 0.0], [1.0, 0.0]]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert a.cross(b, dim=0).tolist() == out.tolist()
    with pytest.warns(UserWarning), pytest.raises(RuntimeError, match="no dimension of size 3"):
        tl.cross(tl.ones(2, 4), tl.ones(2, 4))


def test_tensor_methods():
    a = tl.tensor([[2.0, 1.0], [1.0, 3.0]])
    assert abs(a.det().item() - 5.0) < 1e-6
    assert abs(a.logdet().item() - math.log(5.0)) < 1e-6
    assert a.slogdet().sign.item() == 1.0
    np.testing.assert_allclose((a @ a.inverse()).numpy(), np.eye(2), atol=1e-6)
    v = tl.tensor([1.0, 0.0, 0.0])
    assert v.cross(tl.tensor([0.0, 1.0, 0.0]), dim=0).tolist() == [0.0, 0.0, 1.0]


def test_linalg_error_is_a_runtime_error():
    assert issubclass(tl.linalg.LinAlgError, RuntimeError)
    with pytest.raises(tl.linalg.LinAlgError, match="singular"):
        tl.linalg.inv(tl.ones(3, 3))
    with pytest.raises(RuntimeError, match=r"\(Batch element 1\)"):
        tl.linalg.solve(tl.stack([tl.eye(2), tl.zeros(2, 2)]), tl.ones(2, 2, 1))
    with pytest.raises(tl.linalg.LinAlgError, match="leading minor of order 2"):
        tl.linalg.cholesky(tl.tensor([[4.0, 0.0], [0.0, -1.0]]))


# (call, the exception both libraries raise, a part of tensorlib's message)
ERRORS = [
    (lambda lib: lib.linalg.det(lib.ones(3)), RuntimeError, "at least 2 dimensions"),
    (lambda lib: lib.linalg.det(lib.ones(2, 3)), RuntimeError, "2 by 3 matrices"),
    (lambda lib: lib.linalg.inv(lib.ones(3, 3, dtype=lib.int64)), RuntimeError, "Got Long"),
    (lambda lib: lib.linalg.inv(lib.ones(3, 3)), RuntimeError, "singular"),
    (lambda lib: lib.linalg.inv(lib.zeros(2, 3, 3)), RuntimeError, "Batch element 0"),
    (lambda lib: lib.inverse(lib.ones(3, 3)), RuntimeError, "singular"),
    (lambda lib: lib.linalg.solve(lib.ones(3, 3), lib.ones(3)), RuntimeError, "singular"),
    (lambda lib: lib.linalg.solve(lib.eye(3), lib.ones(4)), RuntimeError, "3x3 and 4x1"),
    (lambda lib: lib.linalg.solve(lib.eye(3), lib.ones(2, 2)), RuntimeError, "AX = B"),
    (lambda lib: lib.linalg.solve(lib.eye(3), lib.ones(3), left=False), RuntimeError, "XA = B"),
    (lambda lib: lib.linalg.solve(lib.eye(3), lib.ones(3, dtype=lib.float64)), RuntimeError,
     "same dtype"),
    (lambda lib: lib.linalg.solve(lib.ones(2, 3, 3), lib.ones(4, 3, 2)), RuntimeError, "broadcast"),
    (lambda lib: lib.linalg.cholesky(-lib.eye(3)), RuntimeError, "positive-definite"),
    (lambda lib: lib.linalg.cholesky(lib.ones(2, 3)), RuntimeError, "square"),
    (lambda lib: lib.linalg.vector_norm(lib.ones(3, dtype=lib.int64)), RuntimeError, "Long"),
    (lambda lib: lib.norm(lib.ones(3, dtype=lib.int64)), RuntimeError, "floating point.*Long"),
    (lambda lib: lib.ones(3, dtype=lib.int32).norm(p=1), RuntimeError, "floating point.*Int"),
    (lambda lib: lib.norm(lib.ones(3, dtype=lib.bool), 3), RuntimeError, "floating point.*Bool"),
    (lambda lib: lib.linalg.vector_norm(lib.ones(3, dtype=lib.float64), dtype=lib.float32),
     RuntimeError, "narrowing"),
    (lambda lib: lib.linalg.vector_norm(lib.ones(3), "fro"), TypeError, "Number"),
    (lambda lib: lib.linalg.vector_norm(lib.ones(0, 3), math.inf), RuntimeError, "empty"),
    (lambda lib: lib.linalg.matrix_norm(lib.ones(3)), RuntimeError, "at least 2 dimensions"),
    (lambda lib: lib.linalg.matrix_norm(lib.ones(3, 3), 3), RuntimeError, "Order 3"),
    (lambda lib: lib.linalg.matrix_norm(lib.ones(3, 3), "abc"), RuntimeError, "not supported"),
    (lambda lib: lib.linalg.matrix_norm(lib.ones(3, 3), dim=(0, 0)), RuntimeError, "different"),
    (lambda lib: lib.linalg.norm(lib.ones(2, 3, 3), 2), RuntimeError, "1D or 2D. Got 3D"),
    (lambda lib: lib.linalg.norm(lib.ones(3), "fro"), RuntimeError, "at least 2 dimensions"),
    (lambda lib: lib.linalg.norm(lib.ones(3, 3), dim=(0, 1, 2)), RuntimeError, "length 1 or 2"),
    (lambda lib: lib.linalg.norm(lib.ones(2, 3, 3), "nuc", dim=1), RuntimeError, "2-tuple"),
    (lambda lib: lib.linalg.cross(lib.ones(2, 2), lib.ones(2, 2)), RuntimeError, "length 3"),
    (lambda lib: lib.linalg.cross(lib.ones(2, 3), lib.ones(4, 1, 3)), RuntimeError,
     "same number of dimensions"),
    (lambda lib: lib.linalg.cross(lib.ones(3), lib.ones(3, dtype=lib.float64)), RuntimeError,
     "dtype"),
    (lambda lib: lib.linalg.multi_dot([lib.ones(3)]), RuntimeError, "at least 2 tensors"),
    (lambda lib: lib.linalg.multi_dot([lib.ones(2, 3, 3), lib.ones(3, 3)]), RuntimeError,
     "first tensor must be 1D or 2D"),
    (lambda lib: lib.linalg.multi_dot([lib.ones(2, 3), lib.ones(3), lib.ones(2)]), RuntimeError,
     "tensor 1 must be 2D"),
    (lambda lib: lib.linalg.multi_dot([lib.ones(2, 3), lib.ones(4, 3)]), RuntimeError,
     "cannot be multiplied"),
    (lambda lib: lib.linalg.multi_dot([lib.ones(2, 3), lib.ones(3, 3, dtype=lib.float64)]),
     RuntimeError, "same dtype"),
    (lambda lib: lib.linalg.eigh(lib.eye(3), UPLO="X"), RuntimeError, "UPLO"),
]


@pytest.mark.parametrize("call, error, message", ERRORS, ids=range(len(ERRORS)))
def test_errors_name_the_problem(call, error, message):
    with pytest.raises(error, match=message):
        call(tl)


@pytest.mark.parity
@pytest.mark.parametrize("call, error, message", ERRORS, ids=range(len(ERRORS)))
def test_pytorch_raises_the_same_errors(call, error, message):
    torch = pytest.importorskip("torch")
    with pytest.raises(error):
        call(torch)


@pytest.mark.parity
def test_singular_inputs_raise_linalg_error_in_both():
    torch = pytest.importorskip("torch")
    calls = (lambda lib: lib.linalg.inv(lib.zeros(2, 2)),
             lambda lib: lib.linalg.solve(lib.zeros(2, 2), lib.ones(2)),
             lambda lib: lib.linalg.cholesky(-lib.eye(2)))
    for lib in (tl, torch):
        for call in calls:
            with pytest.raises(lib.linalg.LinAlgError):
                call(lib)
