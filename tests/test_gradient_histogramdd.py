"""Chapter 2, section 20.2: ``gradient`` (beside ``trapezoid``) and ``histogramdd`` (the
D-dimensional ``histogram``): values against PyTorch 2.13 and numpy for every spacing
form (a number, a list of numbers, a list of coordinate tensors), ``dim``, both edge orders,
float32/float64/integers; ``gradient``'s float64 gradcheck (it is linear in the input) and
PyTorch's errors; ``histogramdd``'s named tuple, bins as a count, counts or edges, ``range``,
``weight``, ``density`` and its errors."""

from __future__ import annotations

import numpy as np
import pytest

import tensorlib as tl

SURFACE = np.random.default_rng(0).normal(size=(5, 7))
ROWS = np.cumsum(np.random.default_rng(1).uniform(0.1, 1.0, 5))
COLUMNS = np.cumsum(np.random.default_rng(2).uniform(0.1, 1.0, 7))
SPACINGS = [
    {}, {"spacing": 2.0}, {"spacing": [0.5, 3.0]}, {"dim": 1}, {"dim": [1]}, {"dim": -1},
    {"spacing": 2.0, "dim": 1}, {"spacing": (2.0,), "dim": (0,)}, {"spacing": "coordinates"},
    {"spacing": "coordinates", "dim": 1}, {"spacing": "scalar tensor"},
]


def _arguments(library, kwargs, dtype):
    out = dict(kwargs)
    if out.get("spacing") == "coordinates":
        both = [library.tensor(ROWS.astype(dtype)), library.tensor(COLUMNS.astype(dtype))]
        out["spacing"] = both if "dim" not in out else both[1:]
    elif out.get("spacing") == "scalar tensor":
        out["spacing"] = library.tensor(1.5)
    return out


@pytest.mark.parity
@pytest.mark.parametrize("kwargs", SPACINGS)
@pytest.mark.parametrize("edge_order", [1, 2])
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_gradient_matches_pytorch(kwargs, edge_order, dtype):
    torch = pytest.importorskip("torch")
    data = SURFACE.astype(dtype)
    ours = tl.gradient(tl.tensor(data), edge_order=edge_order, **_arguments(tl, kwargs, dtype))
    theirs = torch.gradient(torch.tensor(data), edge_order=edge_order,
                            **_arguments(torch, kwargs, dtype))
    assert isinstance(ours, tuple) and len(ours) == len(theirs)
    for a, b in zip(ours, theirs, strict=True):
        assert a.dtype == getattr(tl, dtype) and a.shape == tuple(b.shape)
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-12 if dtype == "float64"
                                   else 2e-5, atol=1e-12 if dtype == "float64" else 2e-5)


@pytest.mark.parity
def test_gradient_integers_zero_dim_and_shapes():
    torch = pytest.importorskip("torch")
    ours = tl.gradient(tl.tensor([1, 4, 9, 16]))
    theirs = torch.gradient(torch.tensor([1, 4, 9, 16]))
    assert ours[0].dtype == tl.float32 and theirs[0].dtype == torch.float32
    np.testing.assert_allclose(ours[0].numpy(), theirs[0].numpy())
    assert tl.gradient(tl.tensor(1.0)) == () == torch.gradient(torch.tensor(1.0))
    cube = np.random.default_rng(3).normal(size=(3, 4, 5))
    for a, b in zip(tl.gradient(tl.tensor(cube), dim=[0, 2], spacing=[1.0, 0.25]),
                    np.gradient(cube, 1.0, 0.25, axis=(0, 2)), strict=True):
        np.testing.assert_allclose(a.numpy(), b, rtol=1e-13)


def test_gradient_is_exact_for_quadratics_and_differentiable():
    x = np.cumsum(np.random.default_rng(4).uniform(0.05, 0.3, 30))
    (slope,) = tl.gradient(tl.tensor(2 * x**2 - 3 * x), spacing=[tl.tensor(x)], edge_order=2)
    np.testing.assert_allclose(slope.numpy(), 4 * x - 3, rtol=1e-11)
    a = tl.tensor(np.random.default_rng(5).normal(size=(4, 5)), requires_grad=True)

    def f(t):
        rows, columns = tl.gradient(t, spacing=[tl.tensor(x[:4]), tl.tensor(x[:5])],
                                    edge_order=2)
        return rows * columns + tl.gradient(t, dim=0, spacing=0.7)[0]

    assert tl.autograd.gradcheck(f, (a,))
    assert tl.autograd.gradgradcheck(f, (a,))


def test_gradient_errors_as_pytorch():
    t = tl.tensor(np.ones((3, 4)))
    with pytest.raises(RuntimeError, match="only supports edge_order=1 and edge_order=2"):
        tl.gradient(t, edge_order=3)
    with pytest.raises(RuntimeError, match=r"'self.dim\(\) = 2', since dim argument was not "
                                           "given, but got a list of length 3"):
        tl.gradient(t, spacing=[1.0, 2.0, 3.0])
    with pytest.raises(RuntimeError, match="spacing argument of length 2 and a dim argument of "
                                           "length 1"):
        tl.gradient(t, spacing=[1.0, 2.0], dim=1)
    with pytest.raises(RuntimeError, match="at least edge_order\\+1"):
        tl.gradient(tl.tensor([1.0, 2.0]), edge_order=2)
    with pytest.raises(RuntimeError, match="to have one dimension, but got an element with 2"):
        tl.gradient(tl.tensor([1.0, 2.0, 4.0]), spacing=[tl.tensor([[0.0, 1.0, 2.0]])])
    with pytest.raises(IndexError):
        tl.gradient(t, dim=2)


@pytest.mark.parity
@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("kwargs", [
    {"bins": 4}, {"bins": [2, 3, 4]}, {"bins": [2, 3, 4], "range": [-1, 1, -2, 2, 0, 1]},
    {"bins": 3, "density": True}, {"bins": 3, "weight": True}, {"bins": "edges"},
])
def test_histogramdd_matches_pytorch(kwargs, dtype):
    torch = pytest.importorskip("torch")
    points = np.random.default_rng(6).normal(size=(300, 3)).astype(dtype)
    weights = np.random.default_rng(7).uniform(size=300).astype(dtype)
    edges = [np.array([-3.0, 0.0, 3.0]), np.array([-1.0, 1.0]), np.array([-5.0, 0.0, 1.0, 5.0])]

    def arguments(library):
        out = dict(kwargs)
        if out.get("weight"):
            out["weight"] = library.tensor(weights)
        if out.get("bins") == "edges":
            out["bins"] = [library.tensor(e.astype(dtype)) for e in edges]
        if "range" in out:
            out["range"] = [float(v) for v in out["range"]]
        return out

    ours = tl.histogramdd(tl.tensor(points), **arguments(tl))
    theirs = torch.histogramdd(torch.tensor(points), **arguments(torch))
    assert ours._fields == ("hist", "bin_edges") and isinstance(ours.bin_edges, tuple)
    assert ours.hist.dtype == getattr(tl, dtype) and ours.hist.shape == tuple(theirs.hist.shape)
    np.testing.assert_allclose(ours.hist.numpy(), theirs.hist.numpy(), rtol=1e-5, atol=1e-7)
    for a, b in zip(ours.bin_edges, theirs.bin_edges, strict=True):
        # float32 edges: PyTorch spaces them in float32, numpy in float64 rounded once
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-6, atol=1e-6)


@pytest.mark.parity
def test_histogramdd_edges_and_errors_as_pytorch():
    torch = pytest.importorskip("torch")
    # one value: the range widens by 1/2 each way; a (4, 2, 2) input is 8 points in 2 dims
    for data in (np.array([[1.0, 1.0]]), np.ones((4, 2, 2))):
        ours, theirs = tl.histogramdd(tl.tensor(data), bins=2), torch.histogramdd(
            torch.tensor(data), bins=2)
        np.testing.assert_array_equal(ours.hist.numpy(), theirs.hist.numpy())
        np.testing.assert_array_equal(ours.bin_edges[0].numpy(), theirs.bin_edges[0].numpy())
    with pytest.raises(NotImplementedError, match="\"histogramdd\" not implemented for 'Long'"):
        tl.histogramdd(tl.tensor([[1, 2]]), bins=2)
    with pytest.raises(RuntimeError, match="size of bins must be equal to the innermost"):
        tl.histogramdd(tl.tensor([[1.0, 2.0]]), bins=[2])
    with pytest.raises(RuntimeError, match="should have at least 2 dimensions"):
        tl.histogramdd(tl.tensor([1.0, 2.0]), bins=2)
    with pytest.raises(RuntimeError, match="range should have 4 elements, but got 2"):
        tl.histogramdd(tl.tensor([[1.0, 2.0]]), bins=2, range=[0.0, 1.0])
    assert tl.histogramdd.__doc__ and tl.gradient.__doc__


@pytest.mark.parity
def test_histogram_is_a_named_tuple_as_pytorch():
    torch = pytest.importorskip("torch")
    data = np.random.default_rng(8).normal(size=50)
    ours, theirs = tl.histogram(tl.tensor(data), 6), torch.histogram(torch.tensor(data), 6)
    assert ours._fields == ("hist", "bin_edges") == tuple(
        f for f in ("hist", "bin_edges") if hasattr(theirs, f))
    np.testing.assert_array_equal(ours.hist.numpy(), theirs.hist.numpy())
    np.testing.assert_allclose(ours.bin_edges.numpy(), theirs.bin_edges.numpy(), rtol=1e-15)
    hist, edges = tl.tensor(data).histogram(6)  # still unpacks as a pair
    assert hist.shape == (6,) and edges.shape == (7,)


@pytest.mark.parity
def test_gradient_takes_spacing_none_as_the_default_step():
    torch = pytest.importorskip("torch")
    values = np.array([1.0, 4.0, 9.0, 16.0, 25.0])
    ours = tl.gradient(tl.tensor(values), spacing=None)
    theirs = torch.gradient(torch.tensor(values), spacing=None)
    assert [t.tolist() for t in ours] == [t.tolist() for t in theirs]


@pytest.mark.parity
def test_gradient_refuses_a_repeated_dim():
    torch = pytest.importorskip("torch")
    for dims in ([0, 0], [0, -2], (1, -1)):
        with pytest.raises(RuntimeError, match="appears multiple times in the list of dims"):
            torch.gradient(torch.tensor(SURFACE), dim=dims)
        with pytest.raises(RuntimeError, match="appears multiple times in the list of dims"):
            tl.gradient(tl.tensor(SURFACE), dim=dims)
