"""The rounding, logarithm, predicate, logical and index functions added for PyTorch programs
(chapter 2, section 16): values, dtypes and gradients against PyTorch's, and float64 gradchecks."""

from __future__ import annotations

import numpy as np
import pytest

import tensorlib as tl

SPECIAL = np.array([-2.5, -1.5, -0.5, -0.0, 0.0, 0.4, 0.5, 1.5, 2.5, 3.7, np.inf, -np.inf, np.nan])
POSITIVE = np.array([1e-8, 0.3, 1.0, 2.0, 8.0, 1000.0])
MATRIX = np.array([[0.0, 1.5, -2.0], [3.0, 0.0, 0.0], [-1.0, 2.0, 5.0]])

UNARY = {  # name -> inputs
    "floor": SPECIAL, "ceil": SPECIAL, "trunc": SPECIAL, "round": SPECIAL, "sign": SPECIAL,
    "isnan": SPECIAL, "isinf": SPECIAL, "isfinite": SPECIAL, "signbit": SPECIAL,
    "logical_not": SPECIAL, "expm1": np.concatenate([SPECIAL, [1e-10, 50.0]]),
    "log2": np.concatenate([POSITIVE, [0.0, -1.0]]), "log10": np.concatenate([POSITIVE, [0.0]]),
    "reciprocal": np.array([-2.0, 0.5, 4.0, 0.0]),
}


def torch_or_skip():
    return pytest.importorskip("torch")


@pytest.mark.parity
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary_functions_match_pytorch(name, dtype):
    torch = torch_or_skip()
    values = UNARY[name].astype(dtype)
    ours = getattr(tl, name)(tl.tensor(values))
    theirs = getattr(torch, name)(torch.from_numpy(values))
    assert ours.dtype == theirs.numpy().dtype
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-6, equal_nan=True)
    numbers = ~np.isnan(theirs.numpy())  # (the sign bit of a NaN means nothing)
    assert np.array_equal(np.signbit(ours.numpy())[numbers], np.signbit(theirs.numpy())[numbers])
    method = getattr(tl.tensor(values), name)()
    np.testing.assert_array_equal(method.numpy(), ours.numpy())


@pytest.mark.parity
@pytest.mark.parametrize("name", ["floor", "ceil", "trunc", "round", "sign", "reciprocal"])
def test_integer_inputs_match_pytorch(name):
    torch = torch_or_skip()
    values = np.array([-3, 0, 2, 7])
    ours, theirs = getattr(tl, name)(tl.tensor(values)), getattr(torch, name)(torch.tensor(values))
    assert ours.dtype == theirs.numpy().dtype and ours.tolist() == theirs.tolist()


@pytest.mark.parity
def test_round_with_decimals_matches_pytorch():
    torch = torch_or_skip()
    values = np.array([1.2345, -2.5555, 0.125, 1234.5678])
    for decimals in (1, 2, -1):
        ours = tl.round(tl.tensor(values), decimals=decimals).numpy()
        np.testing.assert_allclose(
            ours, torch.round(torch.from_numpy(values), decimals=decimals).numpy(), rtol=1e-12
        )


@pytest.mark.parity
@pytest.mark.parametrize("name", ["expm1", "log2", "log10", "floor", "round", "sign", "reciprocal"])
def test_gradients_match_pytorch(name):
    torch = torch_or_skip()
    values = np.array([0.3, 1.7, 2.2, 5.0])
    grads = []
    for lib in (tl, torch):
        x = lib.tensor(values, requires_grad=True)
        (getattr(lib, name)(x) * lib.tensor([1.0, -2.0, 3.0, 0.5])).sum().backward()
        grads.append(x.grad.numpy())
    np.testing.assert_allclose(grads[0], grads[1], rtol=1e-12)


@pytest.mark.parametrize("name", ["expm1", "log2", "log10"])
def test_gradcheck(name):
    x = tl.tensor([0.3, 1.7, 2.2], dtype=tl.float64, requires_grad=True)
    assert tl.autograd.gradcheck(getattr(tl, name), (x,))


@pytest.mark.parity
@pytest.mark.parametrize("dim, keepdim", [(1, False), (0, True), ((0, 1), False), (-1, True)])
def test_logsumexp_and_its_gradient_match_pytorch(dim, keepdim):
    torch = torch_or_skip()
    values = np.array([[1.0, 2.0, 3.0], [1000.0, 1000.0, -np.inf], [-5.0, 0.0, 5.0]])
    results = []
    for lib in (tl, torch):
        x = lib.tensor(values, requires_grad=True)
        y = lib.logsumexp(x, dim, keepdim=keepdim)
        (y * y.detach()).sum().backward()
        results.append((y.detach().numpy(), x.grad.numpy()))
    np.testing.assert_allclose(results[0][0], results[1][0], rtol=1e-12)
    np.testing.assert_allclose(results[0][1], results[1][1], rtol=1e-12)


def test_logsumexp_of_a_row_of_minus_infinity_and_gradcheck():
    assert tl.logsumexp(tl.tensor([[-np.inf, -np.inf]]), 1).tolist() == [-np.inf]
    assert tl.tensor([1e4, 1e4]).logsumexp(0).item() == pytest.approx(1e4 + np.log(2))
    x = tl.tensor(np.random.default_rng(0).standard_normal((3, 4)), requires_grad=True)
    assert tl.autograd.gradcheck(lambda t: tl.logsumexp(t, dim=1), (x,))


@pytest.mark.parity
def test_logical_isclose_count_nonzero_nonzero_argsort_match_pytorch():
    torch = torch_or_skip()
    a, b = MATRIX, MATRIX.T.copy()
    for name in ("logical_and", "logical_or", "logical_xor"):
        ours = getattr(tl, name)(tl.tensor(a), tl.tensor(b)).numpy()
        theirs = getattr(torch, name)(torch.from_numpy(a), torch.from_numpy(b)).numpy()
        assert ours.dtype == np.bool_ and np.array_equal(ours, theirs)
    close = tl.isclose(tl.tensor(a), tl.tensor(a + 1e-9)).numpy()
    assert np.array_equal(close, torch.isclose(torch.from_numpy(a), torch.from_numpy(a + 1e-9)))
    for dim in (None, 0, 1, (0, 1)):
        ours = tl.count_nonzero(tl.tensor(a), dim=dim)
        theirs = torch.count_nonzero(torch.from_numpy(a), dim=dim)
        assert ours.dtype == np.int64 and ours.tolist() == theirs.tolist()
    assert tl.nonzero(tl.tensor(a)).tolist() == torch.nonzero(torch.from_numpy(a)).tolist()
    ours_tuple = tl.tensor(a).nonzero(as_tuple=True)
    theirs_tuple = torch.from_numpy(a).nonzero(as_tuple=True)
    assert [t.tolist() for t in ours_tuple] == [t.tolist() for t in theirs_tuple]
    assert [t.tolist() for t in tl.nonzero(tl.tensor(5), as_tuple=True)] == [[0]]
    for descending in (False, True):
        ours = tl.argsort(tl.tensor(a), dim=1, descending=descending)
        theirs = torch.argsort(torch.from_numpy(a), dim=1, descending=descending, stable=True)
        assert ours.dtype == np.int64 and ours.tolist() == theirs.tolist()
