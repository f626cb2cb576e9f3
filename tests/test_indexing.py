"""Indexing with a uint8 tensor is a mask, with PyTorch's deprecation warning, and has a
gradient."""

from __future__ import annotations

import re
import warnings

import numpy as np
import pytest
from _probe import assert_matches_pytorch

import tensorlib as tl


def test_a_uint8_index_is_a_mask():
    x = tl.tensor([1.0, 2.0, 3.0], requires_grad=True)
    with pytest.warns(UserWarning, match="uint8 is deprecated"):
        picked = x[tl.tensor(np.array([1, 0, 1], np.uint8))]
    assert picked.tolist() == [1.0, 3.0]
    picked.sum().backward()
    assert x.grad.tolist() == [1.0, 0.0, 1.0]
    rows = tl.tensor(np.arange(6.0).reshape(2, 3))
    with pytest.warns(UserWarning, match="use a dtype bool"):
        assert rows[tl.tensor(np.array([0, 1], np.uint8)), 1:].tolist() == [[4.0, 5.0]]


PROBE = {
    "uint8 mask index": lambda lib: lib.tensor([1.0, 2.0, 3.0])[
        lib.tensor(np.array([1, 0, 1], np.uint8))
    ],
}


@pytest.mark.parity
@pytest.mark.parametrize("case", list(PROBE))
def test_matches_pytorch(case):
    assert_matches_pytorch(case, PROBE[case])


# masked_fill / index_fill with a value tensor that requires grad: its gradient is the upstream one
# summed over the filled positions, as in PyTorch (it was treated as a constant)
def test_masked_fill_value_that_requires_grad_gets_its_gradient():
    value = tl.tensor(2.0, requires_grad=True)
    out = tl.zeros(3).masked_fill(tl.tensor([True, False, True]), value)
    (out * tl.tensor([1.0, 2.0, 3.0])).sum().backward()
    assert out.tolist() == [2.0, 0.0, 2.0] and value.grad.item() == 4.0
    x = tl.ones(3, requires_grad=True)
    value.grad = None
    (x.masked_fill(tl.tensor([True, False, True]), value) * 2).sum().backward()
    assert value.grad.item() == 4.0 and x.grad.tolist() == [0.0, 2.0, 0.0]
    rng = np.random.default_rng(0)
    base = tl.tensor(rng.normal(size=(3, 4)), requires_grad=True)
    v = tl.tensor(np.array(0.7), requires_grad=True)
    mask = tl.tensor(rng.random((3, 4)) < 0.5)
    assert tl.autograd.gradcheck(lambda a, w: a.masked_fill(mask, w), (base, v))
    assert tl.autograd.gradgradcheck(lambda a, w: a.masked_fill(mask, w) * a, (base, v))


def test_masked_fill_broadcasts_the_input_to_a_larger_mask():
    x = tl.tensor(np.arange(5.0), requires_grad=True)
    out = x.masked_fill(tl.tensor(np.eye(5, dtype=bool)), -1.0)
    assert out.shape == (5, 5) and np.diag(out.detach().numpy()).tolist() == [-1.0] * 5
    out.sum().backward()
    assert x.grad.tolist() == [4.0] * 5
    with pytest.raises(TypeError, match="bool mask"):
        x.masked_fill(tl.ones(5, 5), 1.0)


def test_index_fill_value_that_requires_grad_gets_its_gradient():
    value = tl.tensor(2.0, dtype=tl.float64, requires_grad=True)
    tl.zeros(3, 4).index_fill(1, tl.tensor([0, 2]), value).sum().backward()
    assert value.grad.item() == 6.0
    base = tl.tensor(np.arange(12.0).reshape(3, 4), requires_grad=True)
    assert tl.autograd.gradcheck(lambda a, w: a.index_fill(1, tl.tensor([0, 2]), w), (base, value))


@pytest.mark.parity
@pytest.mark.parametrize("case", ["masked_fill", "masked_fill broadcast", "index_fill",
                                  "masked_fill_"])
def test_fills_with_a_value_that_requires_grad_match_pytorch(case):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(3)
    a, m, w = rng.normal(size=(4, 5)), rng.random((4, 5)) < 0.4, rng.normal(size=(4, 5))
    results = []
    for lib in (tl, torch):
        x = lib.tensor(a[0] if case == "masked_fill broadcast" else a, requires_grad=True)
        value = lib.tensor(0.25, dtype=lib.float64, requires_grad=True)
        mask = lib.tensor(m)
        if case == "index_fill":
            out = x.index_fill(1, lib.tensor([0, 3]), value)
        elif case == "masked_fill_":
            out = x.clone().masked_fill_(mask, value)
        else:
            out = x.masked_fill(mask, value)
        (out * lib.tensor(w)).sum().backward()
        results.append((out.detach().numpy(), x.grad.numpy(), value.grad.numpy()))
    for ours, theirs in zip(*results, strict=True):
        np.testing.assert_allclose(ours, theirs, rtol=1e-12, atol=1e-12)


# PyTorch's 0-d forms of the index ops (run as on shape (1,)), negative take_along_dim indices,
# masked_scatter broadcasting, repeat_interleave(output_size=), searchsorted/bucketize(out_int32=)
ZERO_DIM = {
    "gather (1,)": lambda lib, x: lib.gather(x, 0, lib.tensor([0])),
    "gather ()": lambda lib, x: lib.gather(x, 0, lib.tensor(0)),
    "index_select": lambda lib, x: lib.index_select(x, 0, lib.tensor([0])),
    "index_add": lambda lib, x: lib.index_add(x, 0, lib.tensor([0]), x * 2, alpha=-1),
    "index_copy": lambda lib, x: lib.index_copy(x, 0, lib.tensor([0]), x * 3),
    "index_reduce": lambda lib, x: lib.index_reduce(x, 0, lib.tensor([0]), x * 3, "prod"),
    "scatter": lambda lib, x: lib.scatter(x, 0, lib.tensor(0), x * 2),
    "scatter value": lambda lib, x: lib.scatter(x, 0, lib.tensor(0), 2.5),
    "scatter_add": lambda lib, x: lib.scatter_add(x, 0, lib.tensor(0), x * 2),
    "empty gather index": lambda lib, x: lib.gather(x.reshape(1).expand(5) * 1.0, 0,
                                                     lib.zeros(2, 0, dtype=lib.int64)),
    "take_along_dim -1, -5": lambda lib, x: lib.take_along_dim(
        x * lib.arange(10.0, dtype=lib.float64).reshape(2, 5), lib.tensor([[-1, -5]]), 1),
    "masked_scatter broadcast": lambda lib, x: lib.masked_scatter(
        x * lib.ones(5, dtype=lib.float64), lib.tensor(np.eye(5, dtype=bool)),
        x * lib.arange(25.0, dtype=lib.float64).reshape(5, 5)),
}


@pytest.mark.parity
@pytest.mark.parametrize("case", list(ZERO_DIM))
def test_zero_dim_and_broadcast_index_ops_match_pytorch(case):
    torch = pytest.importorskip("torch")
    results = []
    for lib in (tl, torch):
        x = lib.tensor(3.0, dtype=lib.float64, requires_grad=True)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # index_reduce is in beta in PyTorch
            out = ZERO_DIM[case](lib, x)
        out.sum().backward()
        results.append((out.detach().numpy(), x.grad.numpy()))
    for ours, theirs in zip(*results, strict=True):
        assert ours.shape == theirs.shape
        np.testing.assert_allclose(ours, theirs, rtol=1e-12)


def test_zero_dim_index_ops_values():
    x = tl.tensor(3.0, dtype=tl.float64)
    assert tl.gather(x, 0, tl.tensor([0])).shape == (1,)
    assert tl.index_select(x, 0, tl.tensor([0])).shape == ()
    assert tl.index_add(x, 0, tl.tensor([0]), tl.tensor(2.0, dtype=tl.float64)).item() == 5.0
    assert tl.scatter(x, 0, tl.tensor(0), 2.5).item() == 2.5
    with pytest.raises(IndexError, match="Index to scalar can have only 1 value"):
        tl.index_select(x, 0, tl.tensor([0, 0]))
    grid = tl.tensor(np.arange(10.0).reshape(2, 5))
    assert tl.take_along_dim(grid, tl.tensor([[-1, -5]]), 1).tolist() == [[4.0, 0.0], [9.0, 5.0]]
    assert tl.masked_scatter(tl.zeros(5), tl.tensor(np.eye(5, dtype=bool)),
                             tl.ones(25)).shape == (5, 5)


def test_repeat_interleave_output_size_and_out_int32():
    ones = tl.tensor([1, 2])
    assert tl.repeat_interleave(ones, tl.tensor([2, 1]), 0, output_size=3).tolist() == [1, 1, 2]
    assert ones.repeat_interleave(2, output_size=4).tolist() == [1, 1, 2, 2]
    with pytest.raises(RuntimeError, match="allocated size does not match required size"):
        tl.repeat_interleave(ones, tl.tensor([2, 1]), 0, output_size=4)
    found = tl.searchsorted(tl.tensor([1, 3, 5]), tl.tensor([2, 6]), out_int32=True)
    assert found.dtype == tl.int32 and found.tolist() == [1, 3]
    bucket = tl.bucketize(tl.tensor([2, 6]), tl.tensor([1, 3, 5]), out_int32=True, right=True)
    assert bucket.dtype == tl.int32 and bucket.tolist() == [1, 3]
    unsorted = tl.tensor([5, 1, 3])
    assert tl.searchsorted(unsorted, tl.tensor([2, 6]), sorter=tl.tensor([1, 2, 0])).tolist() == [
        1, 3]


# searchsorted's sorter checked as PyTorch checks it; the 0-d index ops as PyTorch runs them
@pytest.mark.parity
def test_searchsorted_sorter_errors_match_pytorch():
    torch = pytest.importorskip("torch")
    sequence, values = [[3.0, 1.0, 2.0]], [[1.5]]
    for sorter, dtype in (([[1, 2, 0]], "int32"), ([[1, 2]], "int64"), ([[1, 2, 3]], "int64"),
                          ([[1, 2, -1]], "int64"), ([1, 2, 0], "int64")):
        with pytest.raises(RuntimeError) as theirs:
            torch.searchsorted(torch.tensor(sequence), torch.tensor(values),
                               sorter=torch.tensor(sorter, dtype=getattr(torch, dtype)))
        with pytest.raises(RuntimeError, match=re.escape(str(theirs.value))):
            tl.searchsorted(tl.tensor(sequence), tl.tensor(values),
                            sorter=tl.tensor(sorter, dtype=getattr(tl, dtype)))
    ours = tl.searchsorted(tl.tensor(sequence), tl.tensor(values), sorter=tl.tensor([[1, 2, 0]]))
    assert ours.tolist() == [[1]]


@pytest.mark.parity
def test_zero_d_index_ops_match_pytorch():
    torch = pytest.importorskip("torch")
    works = [
        lambda lib: lib.scatter_reduce(lib.tensor(3.0), 0, lib.tensor(0), lib.tensor(2.0), "sum"),
        lambda lib: lib.scatter_reduce(lib.tensor(3.0), 0, lib.tensor(0), lib.tensor(2.0), "amax",
                                       include_self=False),
        lambda lib: lib.scatter_reduce(lib.tensor(3.0), 0, lib.tensor([0]), lib.tensor([2.0]),
                                       "prod"),
        lambda lib: lib.index_add(lib.tensor(3.0), 0, lib.tensor([0]), lib.tensor(2.0)),
        lambda lib: lib.index_reduce(lib.tensor(3.0), 0, lib.tensor([0]), lib.tensor(2.0), "prod"),
        lambda lib: lib.take_along_dim(lib.tensor(3.0), lib.tensor(0)),
    ]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torch's index_reduce is in beta
        for call in works:
            ours, theirs = call(tl), call(torch)
            assert tuple(ours.shape) == tuple(theirs.shape) and ours.tolist() == theirs.tolist()
        fails = [
            (RuntimeError, lambda lib: lib.index_add(lib.tensor(3.0), 0, lib.tensor([0]),
                                                     lib.tensor([2.0, 5.0]))),
            (RuntimeError, lambda lib: lib.index_add(lib.tensor(3.0), 0, lib.tensor([0, 0]),
                                                     lib.tensor([2.0, 5.0]))),
            (RuntimeError, lambda lib: lib.index_reduce(lib.tensor(3.0), 0, lib.tensor([0]),
                                                        lib.tensor([2.0]), "prod")),
            (IndexError, lambda lib: lib.index_add(lib.tensor(3.0), 0, lib.tensor([0, 0]),
                                                   lib.tensor(2.0))),
            (IndexError, lambda lib: lib.take_along_dim(lib.tensor(3.0), lib.tensor(0), 0)),
            (IndexError, lambda lib: lib.take_along_dim(lib.tensor(3.0), lib.tensor(0), -1)),
        ]
        for error, call in fails:
            with pytest.raises(error) as theirs:
                call(torch)
            with pytest.raises(error, match=re.escape(str(theirs.value))):
                call(tl)


def test_zero_d_scatter_reduce_gradcheck():
    x = tl.tensor(3.0, dtype=tl.float64, requires_grad=True)
    src = tl.tensor(2.0, dtype=tl.float64, requires_grad=True)
    assert tl.autograd.gradcheck(
        lambda a, b: tl.scatter_reduce(a, 0, tl.tensor(0), b, "prod"), (x, src))
